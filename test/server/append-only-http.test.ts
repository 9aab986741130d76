// An APPEND ONLY table over HTTP: its description says so, an ingest request with deletes (or an
// insert naming a stored key) is a 400 APPEND_ONLY_TABLE with nothing applied, and the SQL route
// refuses UPDATE/DELETE alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, sql, sqlOk, startServer } from './helpers.ts';

test('APPEND ONLY over HTTP: shown in the catalog, deletes refused with nothing applied', async () => {
  const server = await startServer();
  try {
    await sqlOk(
      server.base,
      'CREATE TABLE bids (id INT PRIMARY KEY, price INT) APPEND ONLY; CREATE TABLE plain (id INT PRIMARY KEY)',
    );
    const info = await request(server.base, 'GET', '/v1/tables/bids');
    assert.equal(info.body.appendOnly, true);
    const list = await request(server.base, 'GET', '/v1/tables');
    const tables = list.body.tables as { name: string; appendOnly: boolean }[];
    assert.deepEqual(
      tables.map((t) => [t.name, t.appendOnly]),
      [
        ['bids', true],
        ['plain', false],
      ],
    );
    const first = await request(server.base, 'POST', '/v1/tables/bids/rows', [{ id: 1, price: 5 }]);
    assert.equal(first.status, 200, first.text);
    const mixed = await request(server.base, 'POST', '/v1/tables/bids/rows', {
      insert: [{ id: 2, price: 6 }],
      delete: [{ id: 1 }],
    });
    assert.equal(mixed.status, 400, mixed.text);
    assert.equal(mixed.body.error?.code, 'APPEND_ONLY_TABLE');
    assert.equal(mixed.body.error?.message, 'cannot delete from append-only table "bids"');
    const replace = await request(server.base, 'POST', '/v1/tables/bids/rows', [{ id: 1, price: 9 }]);
    assert.equal(replace.status, 400, replace.text);
    assert.equal(replace.body.error?.code, 'APPEND_ONLY_TABLE');
    const update = await sql(server.base, 'UPDATE bids SET price = 0');
    assert.equal(update.status, 400);
    assert.equal(update.body.error?.code, 'APPEND_ONLY_TABLE');
    const probe = await request(server.base, 'POST', '/v1/tables/bids/rows', { insert: [] });
    assert.equal(probe.body.epoch, first.body.epoch, 'no refused request made an epoch');
    const q = await sqlOk(server.base, 'SELECT id, price FROM bids ORDER BY id');
    assert.deepEqual((q.body.results as { rows: unknown[] }[])[0]?.rows, [{ id: 1, price: 5 }]);
  } finally {
    await server.close();
  }
});
