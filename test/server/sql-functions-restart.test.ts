// SQL functions across a kill -9 of the real server: the journal replays CREATE FUNCTION before the
// views that inline it, so after the restart the functions are listed, the views hold the same rows,
// go on changing with new batches, and still block DROP FUNCTION without CASCADE.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ChildServer,
  allViewRows,
  removeDir,
  request,
  sortedRows,
  spawnServer,
  sql,
  sqlOk,
  tempDir,
} from './helpers.ts';

const SCHEMA = `CREATE TABLE orders (id integer PRIMARY KEY, price numeric(10,2), qty integer);
CREATE FUNCTION line_total(p numeric, q integer) RETURNS numeric LANGUAGE SQL IMMUTABLE AS $$ SELECT p * q $$;
CREATE FUNCTION doubled(x numeric) RETURNS numeric RETURN line_total(x, 2);
CREATE MATERIALIZED VIEW totals AS SELECT id, line_total(price, qty) AS total, doubled(price) AS d FROM orders`;

function results(body: Record<string, unknown>): { rows: Record<string, unknown>[] }[] {
  return body['results'] as { rows: Record<string, unknown>[] }[];
}

test(
  'functions and the views inlining them survive a kill -9 and restart',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    let server: ChildServer | undefined;
    try {
      server = await spawnServer(dir);
      await sqlOk(server.base, SCHEMA);
      const rows = [
        { id: 1, price: '2.50', qty: 3 },
        { id: 2, price: '4.00', qty: 6 },
      ];
      const ingest = await request(server.base, 'POST', '/v1/tables/orders/rows', rows);
      assert.equal(ingest.status, 200, ingest.text);
      const before = sortedRows(await allViewRows(server.base, 'totals'));
      assert.equal(before.length, 2);
      server.child.kill('SIGKILL');
      await server.exited;

      server = await spawnServer(dir);
      const shown = await sqlOk(server.base, 'SHOW FUNCTIONS');
      assert.deepEqual(
        results(shown.body)[0]?.rows.map((r) => r['name']),
        ['line_total', 'doubled'],
      );
      assert.deepEqual(sortedRows(await allViewRows(server.base, 'totals')), before);

      // The replayed view is maintained with the inlined bodies, as before the restart.
      const more = await request(server.base, 'POST', '/v1/tables/orders/rows', [
        { id: 3, price: '1.25', qty: 4 },
      ]);
      assert.equal(more.status, 200, more.text);
      const after = await allViewRows(server.base, 'totals');
      const three = after.find((r) => r['id'] === 3);
      assert.deepEqual(three, { id: 3, total: '5.00', d: '2.50' });

      const blocked = await sql(server.base, 'DROP FUNCTION line_total');
      assert.equal(blocked.status, 400, blocked.text);
      assert.equal((blocked.body['error'] as Record<string, unknown>)['code'], 'DEPENDENT_OBJECTS');
      await sqlOk(server.base, 'DROP FUNCTION line_total CASCADE');
      const left = await sqlOk(server.base, 'SHOW FUNCTIONS; SHOW VIEWS');
      assert.deepEqual(results(left.body)[0]?.rows, []);
      assert.deepEqual(results(left.body)[1]?.rows, []);
    } finally {
      server?.child.kill('SIGKILL');
      await server?.exited;
      removeDir(dir);
    }
  },
);
