// GET /v1/views/{name}/rows?asOf=e: the view's state at epoch e, rebuilt from its current state and
// the stored changelog after e. The proof is a real WebSocket subscriber: its fold of the changelog up
// to every epoch e equals the asOf=e read (every page, with a small limit so cursors are crossed), for
// a keyed aggregate, a keyless multiset view and a view with 64-bit integers beyond 2^53 — and again
// after the server restarts from its data directory. Too old (before the retention or the view) is
// 410 AS_OF_TOO_OLD, the future 400, and more changed rows than --max-scan-rows 400 SCAN_TOO_LARGE.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FoldedView,
  type Message,
  type TestServer,
  WsClient,
  removeDir,
  request,
  sortedRows,
  sqlOk,
  startServer,
  tempDir,
} from './helpers.ts';

const VIEWS = ['totals', 'pairs', 'wide'] as const;

/** Every row of a view at `asOf`, page by page; every page must say it is of that epoch. */
async function rowsAsOf(base: string, view: string, asOf: number): Promise<string[]> {
  const rows: Record<string, unknown>[] = [];
  let next: string | null = null;
  let pages = 0;
  do {
    const cursor: string = next === null ? '' : `&after=${encodeURIComponent(next)}`;
    const r = await request(base, 'GET', `/v1/views/${view}/rows?asOf=${asOf}&limit=3${cursor}`);
    assert.equal(r.status, 200, `${view} asOf ${asOf}: ${r.text}`);
    assert.equal(r.body.epoch, asOf);
    rows.push(...(r.body.rows as Record<string, unknown>[]));
    next = r.body.next as string | null;
    pages += 1;
    assert.ok(pages < 500);
  } while (next !== null);
  return sortedRows(rows);
}

/** A deterministic workload: inserts, key replacements and deletes over 12 orders. */
function batch(i: number): unknown {
  const id = (k: number): number => (i * 7 + k) % 12;
  const row = (k: number) => ({
    id: id(k),
    seller: (i + k) % 4,
    amount: ((i * 13 + k * 5) % 9) - 2,
    big: k % 2 === 0 ? String(2n ** 60n + BigInt(i)) : i,
  });
  if (i % 3 === 2) return { delete: [{ id: id(0) }], insert: [row(1)] };
  return [row(0), row(1), row(2)];
}

test('a subscriber folded up to epoch e equals ?asOf=e, also after a restart', async () => {
  const dir = tempDir();
  let server: TestServer | null = await startServer({ dataDir: dir });
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE orders (id INT PRIMARY KEY, seller INT NOT NULL, amount INT NOT NULL, big BIGINT);
       CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller;
       CREATE MATERIALIZED VIEW pairs AS SELECT seller, amount FROM orders;
       CREATE MATERIALIZED VIEW wide AS SELECT id, big, amount * 1.5 AS f FROM orders`,
    );
    const clients = VIEWS.map(
      (v) => new WsClient(`${server?.wsBase ?? ''}/v1/views/${v}/subscribe?snapshot=true`),
    );
    await Promise.all(clients.map((c) => c.open()));
    await Promise.all(clients.map((c) => c.waitFor((m) => m.type === 'snapshot_end')));
    let last = 0;
    for (let i = 0; i < 24; i++) {
      const r = await request(server.base, 'POST', '/v1/tables/orders/rows', batch(i));
      assert.equal(r.status, 200, r.text);
      last = r.body.epoch as number;
    }
    await Promise.all(clients.map((c) => c.waitEpoch(last)));
    for (const c of clients) c.close();

    // The fold of each subscriber after every epoch it saw (the snapshot was at epoch 0).
    const folds = new Map<string, Map<number, string[]>>();
    VIEWS.forEach((view, i) => {
      const fold = new FoldedView();
      const byEpoch = new Map<number, string[]>();
      const messages = (clients[i] as WsClient).messages;
      let epoch = 0;
      const record = (upTo: number): void => {
        for (; epoch < upTo; epoch++) byEpoch.set(epoch, fold.sorted());
      };
      for (const m of messages as Message[]) {
        if (m.type === 'changes') {
          record(m.epoch as number);
          fold.apply(m);
        } else if (m.type === 'snapshot') fold.apply(m);
      }
      record(last + 1);
      folds.set(view, byEpoch);
    });
    // Some epoch changed every view, and some view state differs between epochs.
    assert.notDeepEqual(folds.get('totals')?.get(3), folds.get('totals')?.get(last));

    const compareAll = async (base: string): Promise<void> => {
      for (const view of VIEWS) {
        for (let e = 0; e <= last; e++) {
          assert.deepEqual(await rowsAsOf(base, view, e), folds.get(view)?.get(e), `${view} at epoch ${e}`);
        }
      }
    };
    await compareAll(server.base);

    await server.close();
    server = await startServer({ dataDir: dir });
    await compareAll(server.base);

    // The epoch after the last is the future: 400, as resumeFrom is.
    const future = await request(server.base, 'GET', `/v1/views/totals/rows?asOf=${last + 1}`);
    assert.equal(future.status, 400);
    assert.equal(future.body.error?.code, 'INVALID_REQUEST');
    const bad = await request(server.base, 'GET', '/v1/views/totals/rows?asOf=yesterday');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.code, 'INVALID_REQUEST');
    const unknown = await request(server.base, 'GET', '/v1/views/nope/rows?asOf=1');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error?.code, 'UNKNOWN_VIEW');

    // A view created later has no state before its creation.
    await sqlOk(server.base, 'CREATE MATERIALIZED VIEW late AS SELECT seller FROM orders');
    const before = await request(server.base, 'GET', `/v1/views/late/rows?asOf=${last - 1}`);
    assert.equal(before.status, 410);
    assert.equal(before.body.error?.code, 'AS_OF_TOO_OLD');
    assert.match(before.body.error?.message ?? '', /created at epoch/);
    assert.equal((await request(server.base, 'GET', `/v1/views/late/rows?asOf=${last}`)).status, 200);
  } finally {
    await server?.close();
    removeDir(dir);
  }
});

test('asOf is bounded: older than the retention is AS_OF_TOO_OLD, more changes than the scan budget SCAN_TOO_LARGE', async () => {
  const server = await startServer({
    retention: { epochs: 5, ms: null },
    pruneIntervalMs: 20,
    reads: { scanRows: 40 },
  });
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL);
       CREATE MATERIALIZED VIEW m AS SELECT id, v FROM t`,
    );
    let last = 0;
    for (let i = 0; i < 12; i++) {
      const rows = Array.from({ length: 5 }, (_, k) => ({ id: k, v: i }));
      last = (await request(server.base, 'POST', '/v1/tables/t/rows', rows)).body.epoch as number;
    }
    // Retention keeps the changes of the last 5 epochs; the pruner runs every 20 ms.
    let old = await request(server.base, 'GET', '/v1/views/m/rows?asOf=2');
    for (let tries = 0; old.status !== 410 && tries < 200; tries++) {
      await new Promise((r) => setTimeout(r, 20));
      old = await request(server.base, 'GET', '/v1/views/m/rows?asOf=2');
    }
    assert.equal(old.status, 410, old.text);
    assert.equal(old.body.error?.code, 'AS_OF_TOO_OLD');
    assert.match(old.body.error?.message ?? '', /retained after epoch/);

    // Each epoch changes 5 rows (10 changes: -U and +U): 2 epochs back is 20 change rows, 5 is 50.
    const within = await request(server.base, 'GET', `/v1/views/m/rows?asOf=${last - 2}`);
    assert.equal(within.status, 200, within.text);
    assert.deepEqual(
      (within.body.rows as { v: number }[]).map((r) => r.v),
      [9, 9, 9, 9, 9],
    );
    const tooMany = await request(server.base, 'GET', `/v1/views/m/rows?asOf=${last - 5}`);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(tooMany.body.error?.code, 'SCAN_TOO_LARGE');
    // The current state is unchanged by the reads at earlier epochs.
    const now = await request(server.base, 'GET', '/v1/views/m/rows');
    assert.equal(now.body.epoch, last);
    assert.deepEqual(
      (now.body.rows as { v: number }[]).map((r) => r.v),
      [11, 11, 11, 11, 11],
    );
  } finally {
    await server.close();
  }
});

test('asOf and sorted reads work on a snapshot: batches arriving meanwhile change nothing they return', async () => {
  const server = await startServer();
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL);
       CREATE MATERIALIZED VIEW m AS SELECT id, v FROM t`,
    );
    const N = 20_000;
    for (let i = 0; i < N; i += 5000) {
      const rows = Array.from({ length: 5000 }, (_, k) => ({ id: i + k, v: i + k }));
      assert.equal((await request(server.base, 'POST', '/v1/tables/t/rows', rows)).status, 200);
    }
    const at = (await request(server.base, 'GET', '/v1/views/m/rows?limit=0')).body.epoch as number;
    // 8,000 rows change after `at` (16,000 change rows to undo); more batches arrive during the reads.
    for (let i = 0; i < 8000; i += 4000) {
      const rows = Array.from({ length: 4000 }, (_, k) => ({ id: (i + k) * 2, v: -1 }));
      assert.equal((await request(server.base, 'POST', '/v1/tables/t/rows', rows)).status, 200);
    }
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const rows = Array.from({ length: 200 }, (_, k) => ({ id: (i * 200 + k) % N, v: -2 - i }));
        assert.equal((await request(server.base, 'POST', '/v1/tables/t/rows', rows)).status, 200);
      }
    })();
    try {
      // At `at`, v = id for every row: the first page in descending v order is the 10 largest ids.
      const desc = await request(server.base, 'GET', `/v1/views/m/rows?asOf=${at}&order=v.desc&limit=10`);
      assert.equal(desc.status, 200, desc.text);
      assert.equal(desc.body.epoch, at);
      assert.deepEqual(
        (desc.body.rows as { id: number; v: number }[]).map((r) => [r.id, r.v]),
        Array.from({ length: 10 }, (_, k) => [N - 1 - k, N - 1 - k]),
      );
      assert.equal(desc.body.total, N);
      const filtered = await request(server.base, 'GET', `/v1/views/m/rows?asOf=${at}&v=lt.0`);
      assert.deepEqual(filtered.body.rows, []);
      // A sorted read of the current state is of one epoch: every row it returns is of that epoch.
      const now = await request(server.base, 'GET', '/v1/tables/t/rows?order=v.asc&limit=5');
      assert.equal(now.status, 200, now.text);
      assert.equal(now.body.total, N);
      const v = (now.body.rows as { v: number }[]).map((r) => r.v);
      assert.deepEqual(
        v,
        [...v].sort((a, b) => a - b),
      );
    } finally {
      writing = false;
      await writer;
    }
  } finally {
    await server.close();
  }
});

test('asOf shows the text a row had then: an update from 1.50 to 1.5 is undone to 1.50', async () => {
  const server = await startServer();
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE n (id INT PRIMARY KEY, x NUMERIC);
       CREATE MATERIALIZED VIEW nv AS SELECT id, x FROM n;
       CREATE MATERIALIZED VIEW nx AS SELECT x FROM n`,
    );
    const first = await request(server.base, 'POST', '/v1/tables/n/rows', [
      { id: 1, x: '1.50' },
      { id: 2, x: '2.0' },
    ]);
    await request(server.base, 'POST', '/v1/tables/n/rows', [
      { id: 1, x: '1.5' },
      { id: 2, x: '2' },
    ]);
    const at = first.body.epoch as number;
    for (const view of ['nv', 'nx']) {
      const then = await request(server.base, 'GET', `/v1/views/${view}/rows?asOf=${at}`);
      assert.equal(then.status, 200, then.text);
      assert.deepEqual((then.body.rows as { x: string }[]).map((r) => r.x).sort(), ['1.50', '2.0'], view);
      const now = await request(server.base, 'GET', `/v1/views/${view}/rows`);
      assert.deepEqual((now.body.rows as { x: string }[]).map((r) => r.x).sort(), ['1.5', '2'], view);
    }
  } finally {
    await server.close();
  }
});
