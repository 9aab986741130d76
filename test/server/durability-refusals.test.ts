// The durability attack's writes that must be refused are refused for every size of the large table
// a run may load: a stop-60 CI run sent a fixed 40,000 rows to b through the cross join xj, which
// passes the epoch bound only while big holds 50 or more rows under g < 3 — the bounded run loads
// 9,000 rows (27 of them), so the write was accepted and the run failed. The write is now sized from
// the model; here a real server refuses it at each load and accepts the same write one row smaller.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ALL_VIEWS,
  Model,
  bigRows,
  crossJoinBlowup,
  post,
  tableB,
  tableBig,
} from '../support/durability-workload.ts';
import { request, sqlOk, startServer } from './helpers.ts';

const XJ = ALL_VIEWS.find((v) => v.name === 'xj');

for (const loaded of [9000, 20_000]) {
  test(`a write through xj past the epoch bound is refused with ${loaded} rows in big, and changes nothing`, async () => {
    assert.ok(XJ !== undefined, 'the attack still has xj');
    const server = await startServer();
    try {
      const model = new Model();
      const big = tableBig();
      const b = tableB();
      model.tables.set('big', big).set('b', b);
      await sqlOk(server.base, `${big.ddl}; ${b.ddl}; CREATE MATERIALIZED VIEW xj AS ${XJ.select}`);
      model.views.add('xj');
      for (let from = 0; from < loaded; from += 5000) {
        const rows = bigRows(from, Math.min(5000, loaded - from));
        assert.equal((await post(server.base, '/v1/tables/big/rows', rows)).status, 200);
        for (const row of rows) big.rows.set(String(row['id']), row);
      }
      const before = await request(server.base, 'GET', '/v1/views/xj/rows');

      const step = crossJoinBlowup(model);
      assert.ok(step !== null, 'a refused write is possible');
      const answer = await step.send(server.base);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.text, /"code":"EPOCH_TOO_LARGE"/);
      assert.deepEqual((await request(server.base, 'GET', '/v1/views/xj/rows')).body, before.body);

      // One row fewer builds no more than the bound: the write is as small as a refused one can be.
      const rows = Number(/\+(\d+)/.exec(step.what)?.[1]);
      const insert = Array.from({ length: rows - 1 }, (_, i) => ({ g: i % 5, w: i % 6 }));
      assert.equal((await post(server.base, '/v1/tables/b/rows', { insert })).status, 200);
    } finally {
      await server.close();
    }
  });
}

test('no refused write through xj while too few rows of big pair with it', () => {
  const model = new Model();
  const big = tableBig();
  model.tables.set('big', big).set('b', tableB());
  model.views.add('xj');
  assert.equal(crossJoinBlowup(model), null, 'big empty');
  for (const row of bigRows(0, 300)) big.rows.set(String(row['id']), row);
  assert.equal(crossJoinBlowup(model), null, '300 rows of big: 0 or 1 under g < 3');
  model.views.delete('xj');
  for (const row of bigRows(300, 9000)) big.rows.set(String(row['id']), row);
  assert.equal(crossJoinBlowup(model), null, 'no xj');
});
