// Join views through the whole server, unchanged: created over HTTP, fed by REST ingest, read by
// pages, subscribed over WebSocket (a PK–FK join keeps the order id as its key, so an update of the
// one side reaches subscribers as -U/+U pairs), resumed after a restart from the same data
// directory, and joined ad hoc by POST /v1/sql at one epoch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FoldedView,
  type TestServer,
  WsClient,
  removeDir,
  request,
  sortedRows,
  sqlOk,
  startServer,
  tempDir,
} from './helpers.ts';

const DDL = `CREATE TABLE customers (cid INTEGER PRIMARY KEY, region TEXT NOT NULL);
CREATE TABLE orders (id BIGINT PRIMARY KEY, cid INTEGER, amount INTEGER NOT NULL);
CREATE MATERIALIZED VIEW cust_orders AS SELECT o.id, o.amount, c.region FROM orders o JOIN customers c ON o.cid = c.cid;
CREATE MATERIALIZED VIEW region_revenue AS SELECT c.region, COUNT(o.id) AS orders, SUM(o.amount) AS revenue FROM customers c LEFT JOIN orders o ON o.cid = c.cid GROUP BY c.region`;

async function ingest(server: TestServer, table: string, body: unknown): Promise<number> {
  const r = await request(server.base, 'POST', `/v1/tables/${table}/rows?wait=true`, body);
  assert.equal(r.status, 200, r.text);
  return r.body['epoch'] as number;
}

async function rows(server: TestServer, view: string): Promise<string[]> {
  const r = await request(server.base, 'GET', `/v1/views/${view}/rows?limit=1000`);
  assert.equal(r.status, 200, r.text);
  return sortedRows(r.body['rows'] as Record<string, unknown>[]);
}

test('join views over HTTP and WebSocket, across a restart', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  let server = await startServer({ dataDir: dir });
  const clients: WsClient[] = [];
  try {
    await sqlOk(server.base, DDL);
    const info = await request(server.base, 'GET', '/v1/views/cust_orders');
    assert.deepEqual(info.body['key'], ['id'], 'a PK–FK join is keyed by the many side');

    await ingest(server, 'customers', [
      { cid: 1, region: 'north' },
      { cid: 2, region: 'south' },
      { cid: 3, region: 'east' },
    ]);
    await ingest(server, 'orders', [
      { id: 10, cid: 1, amount: 5 },
      { id: 11, cid: 1, amount: 7 },
      { id: 12, cid: 2, amount: 9 },
      { id: 13, cid: null, amount: 1 },
    ]);
    assert.deepEqual(
      await rows(server, 'cust_orders'),
      sortedRows([
        { id: 10, amount: 5, region: 'north' },
        { id: 11, amount: 7, region: 'north' },
        { id: 12, amount: 9, region: 'south' },
      ]),
    );
    assert.deepEqual(
      await rows(server, 'region_revenue'),
      sortedRows([
        { region: 'north', orders: 2, revenue: 12 },
        { region: 'south', orders: 1, revenue: 9 },
        { region: 'east', orders: 0, revenue: null },
      ]),
    );

    const ws = new WsClient(`${server.wsBase}/v1/views/cust_orders/subscribe`);
    clients.push(ws);
    const folded = new FoldedView();
    await ws.waitFor((m) => m.type === 'snapshot_end');
    // Customer 1 moves region: both of its orders change in place, keyed by the order id.
    const moved = await ingest(server, 'customers', [{ cid: 1, region: 'west' }]);
    const change = await ws.waitFor((m) => m.type === 'changes' && m.epoch === moved);
    const ops = (change['changes'] as { op: string; row: { id: number; region: string } }[])
      .map((c) => `${c.op} ${c.row.id} ${c.row.region}`)
      .sort();
    assert.deepEqual(ops, ['+U 10 west', '+U 11 west', '-U 10 north', '-U 11 north']);
    const lastEpoch = await ingest(server, 'orders', {
      delete: [{ id: 12 }],
      insert: [{ id: 14, cid: 3, amount: 2 }],
    });
    await ws.waitEpoch(lastEpoch);
    for (const m of ws.messages) folded.apply(m);
    assert.deepEqual(folded.sorted(), await rows(server, 'cust_orders'));

    // Restart from the same directory: the join views' state and the changelog resume.
    const before = {
      joined: await rows(server, 'cust_orders'),
      revenue: await rows(server, 'region_revenue'),
    };
    ws.close();
    await server.close();
    server = await startServer({ dataDir: dir });
    assert.deepEqual(await rows(server, 'cust_orders'), before.joined);
    assert.deepEqual(await rows(server, 'region_revenue'), before.revenue);
    // Each view's join probes an arrangement kept once per relation and key (restored with it),
    // reported apart from the views' own state, or (a side joined on its primary key) its table's rows.
    const metrics = (await request(server.base, 'GET', '/metrics')).text;
    assert.match(
      metrics,
      /^sluice_shared_arrangement_rows\{arrangement="orders\(1\)",tenant="default"\} 3$/m,
      'orders 10, 11, 14',
    );
    // Joined on their primary key, the customers are read from their table: arranged by nobody.
    assert.doesNotMatch(metrics, /^sluice_shared_arrangement_rows\{arrangement="customers/m);
    assert.match(
      metrics,
      /^sluice_shared_arrangement_users\{arrangement="orders\(1\)",tenant="default"\} 1$/m,
    );
    const resumed = new WsClient(`${server.wsBase}/v1/views/cust_orders/subscribe?resumeFrom=${moved - 1}`);
    clients.push(resumed);
    await resumed.waitEpoch(lastEpoch);
    const replayed = resumed.messages.find((m) => m.type === 'changes' && m.epoch === moved);
    assert.deepEqual(replayed?.['changes'], change['changes'], 'the stored changelog of the join view');

    // Ad hoc: the same join at one epoch, with ORDER BY.
    const adhoc = await sqlOk(
      server.base,
      'SELECT o.id, c.region FROM orders o LEFT JOIN customers c USING (cid) ORDER BY o.id',
    );
    const result = (adhoc.body['results'] as { rows: unknown[] }[])[0];
    assert.deepEqual(result?.rows, [
      { id: 10, region: 'west' },
      { id: 11, region: 'west' },
      { id: 13, region: null },
      { id: 14, region: 'east' },
    ]);
  } finally {
    for (const c of clients) c.close();
    await server.close();
    removeDir(dir);
  }
});
