// The HTTP/WebSocket contract (API.md) against a real server on an ephemeral loopback port, with real
// fetch and ws clients: statements, catalog, ingest, view reads, subscriptions (snapshot, changes,
// progress, resume, NDJSON), errors and close codes, operations endpoints
// (the limits: api-limits.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  FoldedView,
  type Message,
  type TestServer,
  WsClient,
  removeDir,
  request,
  sortedRows,
  sql,
  sqlOk,
  startServer,
  tempDir,
  waitUntil,
} from './helpers.ts';

const DOUBLE_11 = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)`;

describe('the Sluice HTTP and WebSocket API', () => {
  let server: TestServer;
  let base: string;
  let dir: string;
  const clients: WsClient[] = [];
  const ws = (path: string): WsClient => {
    const c = new WsClient(server.wsBase + path);
    clients.push(c);
    return c;
  };
  const ingest = (table: string, body: unknown, query = '') =>
    request(base, 'POST', `/v1/tables/${table}/rows${query}`, body);

  before(async () => {
    dir = tempDir();
    server = await startServer({ dataDir: dir, heartbeatMs: 100, snapshotChunkRows: 2 });
    base = server.base;
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
    removeDir(dir);
  });

  test('POST /v1/sql runs statements in order and reports each', async () => {
    const r = await sqlOk(base, DOUBLE_11);
    const results = r.body.results as { statement: string; object?: string }[];
    assert.deepEqual(
      results.map((x) => [x.statement, x.object]),
      [
        ['CREATE TABLE', 'orders'],
        ['CREATE MATERIALIZED VIEW', 'seller_totals'],
        ['CREATE MATERIALIZED VIEW', 'total_histogram'],
      ],
    );
  });

  test('a failing script is a 400 with the code, a position, and the results before it', async () => {
    const r = await sql(
      base,
      'CREATE TABLE scratch (a INTEGER); SELECT nope FROM scratch; CREATE TABLE never (a INTEGER)',
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.error?.code, 'UNKNOWN_COLUMN');
    assert.deepEqual(r.body.error?.position, { line: 1, column: 42 });
    assert.equal((r.body.results as unknown[]).length, 1);
    const tables = await request(base, 'GET', '/v1/tables');
    const names = (tables.body.tables as { name: string }[]).map((t) => t.name);
    assert.ok(names.includes('scratch'), 'the statement before the error took effect');
    assert.ok(!names.includes('never'), 'statements after the error did not run');
    const syntax = await sql(base, 'SELEC 1');
    assert.equal(syntax.status, 400);
    assert.equal(syntax.body.error?.code, 'SYNTAX_ERROR');
    assert.ok(syntax.body.error !== undefined && typeof syntax.body.error.message === 'string');
  });

  test('catalog endpoints list tables, views, sources and sinks', async () => {
    const tables = await request(base, 'GET', '/v1/tables');
    const orders = (
      tables.body.tables as { name: string; key: string[]; columns: { name: string; type: string }[] }[]
    ).find((t) => t.name === 'orders');
    assert.deepEqual(orders?.key, ['order_id']);
    assert.deepEqual(
      orders?.columns.map((c) => [c.name, c.type]),
      [
        ['order_id', 'bigint'],
        ['seller_id', 'integer'],
        ['amount', 'integer'],
      ],
    );
    const one = await request(base, 'GET', '/v1/tables/orders');
    assert.equal(one.body.name, 'orders');
    assert.equal((await request(base, 'GET', '/v1/tables/nope')).body.error?.code, 'UNKNOWN_TABLE');
    const views = await request(base, 'GET', '/v1/views');
    assert.deepEqual(
      (views.body.views as { name: string }[]).map((v) => v.name),
      ['seller_totals', 'total_histogram'],
    );
    const v = await request(base, 'GET', '/v1/views/total_histogram');
    assert.equal(v.status, 200);
    assert.deepEqual(v.body.key, ['bucket']);
    assert.deepEqual(v.body.dependsOn, ['seller_totals']);
    assert.match(String(v.body.sql), /FLOOR\(total \/ 10\)/i);
    for (const field of ['epoch', 'rowCount', 'stateBytes'])
      assert.equal(typeof v.body[field], 'number', field);
    const missing = await request(base, 'GET', '/v1/views/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error?.code, 'UNKNOWN_VIEW');
    assert.deepEqual((await request(base, 'GET', '/v1/sources')).body, { sources: [] });
    assert.deepEqual((await request(base, 'GET', '/v1/sinks')).body, { sinks: [] });
  });

  test('ingest: the Double 11 retraction, epochs, positions and ?wait=true', async () => {
    const sub = ws('/v1/views/total_histogram/subscribe');
    await sub.waitFor((m) => m.type === 'snapshot_end');
    const start = sub.of('subscribed')[0] as Message;
    const e0 = start.epoch as number;
    const a = await ingest('orders', [{ order_id: 1, seller_id: 11, amount: 5 }]);
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, { accepted: 1, epoch: e0 + 1 });
    const b = await ingest('orders', { insert: [{ order_id: 2, seller_id: 11, amount: 16 }] }, '?wait=true');
    assert.deepEqual(b.body, { accepted: 1, epoch: e0 + 2 });
    // ?wait=true: the epoch is already visible in every view when the answer arrives
    const rows = await request(base, 'GET', '/v1/views/total_histogram/rows');
    assert.equal(rows.body.epoch, e0 + 2);
    assert.deepEqual(rows.body.rows, [{ bucket: 2, sellers: 1 }]);
    const c = await ingest('orders', [{ order_id: 3, seller_id: 11, amount: 65 }]);
    assert.equal(c.body.epoch, e0 + 3);
    await sub.waitEpoch(e0 + 3);
    const changes = sub.of('changes');
    assert.deepEqual(
      changes.map((m) => m.epoch),
      [e0 + 1, e0 + 2, e0 + 3],
    );
    // bucket 0 gains the seller, then loses it to bucket 2, which loses it to bucket 8
    const byEpoch = changes.map((m) =>
      (m.changes as { op: string; row: Record<string, unknown> }[])
        .map((x) => `${x.op} ${x.row.bucket}:${x.row.sellers}`)
        .sort(),
    );
    assert.deepEqual(byEpoch, [['+I 0:1'], ['+I 2:1', '-D 0:1'], ['+I 8:1', '-D 2:1']]);
    const positions = changes[2]?.positions as Record<string, { offset: number }>;
    assert.equal(
      typeof positions.orders?.offset,
      'number',
      'each epoch names the table log offset it covers',
    );
    assert.ok(
      (positions.orders?.offset ?? 0) >
        ((changes[1]?.positions as Record<string, { offset: number }>).orders?.offset ?? 0),
    );
  });

  test('keyed views send -U/+U pairs; delete by primary key; insert on an existing key replaces', async () => {
    const sub = ws('/v1/views/seller_totals/subscribe?snapshot=false');
    const hello = await sub.waitFor((m) => m.type === 'subscribed');
    assert.equal(hello.snapshot, false);
    const e = hello.epoch as number;
    await ingest('orders', [{ order_id: 4, seller_id: 11, amount: 4 }]);
    const upd = await sub.waitFor((m) => m.type === 'changes' && m.epoch === e + 1);
    assert.deepEqual(upd.changes, [
      { op: '-U', row: { seller_id: 11, total: 86 } },
      { op: '+U', row: { seller_id: 11, total: 90 } },
    ]);
    const del = await ingest('orders', { delete: [{ order_id: 4 }] });
    assert.equal(del.status, 200);
    const replaced = await ingest('orders', [{ order_id: 3, seller_id: 12, amount: 65 }]);
    assert.equal(replaced.status, 200);
    const totals = await request(base, 'GET', '/v1/views/seller_totals/rows');
    assert.deepEqual(totals.body.rows, [
      { seller_id: 11, total: 21 },
      { seller_id: 12, total: 65 },
    ]);
  });

  test('keyless views send +I/-D with n for multiplicities', async () => {
    await sqlOk(
      base,
      'CREATE TABLE events (kind TEXT NOT NULL); CREATE MATERIALIZED VIEW event_kinds AS SELECT kind FROM events',
    );
    const sub = ws('/v1/views/event_kinds/subscribe?snapshot=false');
    const e = (await sub.waitFor((m) => m.type === 'subscribed')).epoch as number;
    await ingest('events', [{ kind: 'a' }, { kind: 'a' }, { kind: 'a' }, { kind: 'b' }]);
    const m = await sub.waitFor((x) => x.type === 'changes' && x.epoch === e + 1);
    const changes = (m.changes as { op: string; row: { kind: string }; n?: number }[])
      .slice()
      .sort((x, y) => x.row.kind.localeCompare(y.row.kind));
    assert.deepEqual(changes, [
      { op: '+I', row: { kind: 'a' }, n: 3 },
      { op: '+I', row: { kind: 'b' } },
    ]);
    await ingest('events', { delete: [{ kind: 'a' }, { kind: 'a' }] });
    const d = await sub.waitFor((x) => x.type === 'changes' && x.epoch === e + 2);
    assert.deepEqual(d.changes, [{ op: '-D', row: { kind: 'a' }, n: 2 }]);
  });

  test('a rejected batch applies nothing and names the problem', async () => {
    const before = await request(base, 'GET', '/v1/views/seller_totals/rows');
    const cases: [unknown, number, string][] = [
      [
        [
          { order_id: 10, seller_id: 1, amount: 1 },
          { order_id: 11, seller_id: 'x', amount: 1 },
        ],
        400,
        'seller_id',
      ],
      [[{ order_id: 12, seller_id: 1, amount: 1, color: 'red' }], 400, 'color'],
      [[{ order_id: 13, seller_id: 1 }], 400, 'amount'],
      [{ delete: [{ order_id: 999_999 }] }, 400, ''],
      [{ insert: [{ order_id: 14, seller_id: 1, amount: { n: 1 } }] }, 400, ''],
      [{ upsert: [] }, 400, ''],
      ['rows', 400, ''],
    ];
    for (const [body, status, mention] of cases) {
      const r = await ingest('orders', body);
      assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.text}`);
      assert.equal(typeof r.body.error?.code, 'string');
      if (mention !== '') assert.match(r.body.error?.message ?? '', new RegExp(mention), r.text);
    }
    const unknown = await ingest('nope', [{ a: 1 }]);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error?.code, 'UNKNOWN_TABLE');
    const malformed = await request(base, 'POST', '/v1/tables/orders/rows', undefined, '[{"order_id": 1,');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error?.code, 'INVALID_JSON');
    const empty = await request(base, 'POST', '/v1/tables/orders/rows', undefined, '');
    assert.equal(empty.status, 400);
    const after = await request(base, 'GET', '/v1/views/seller_totals/rows');
    assert.deepEqual(after.body, before.body, 'no epoch, no change');
  });

  test('64-bit integers are exact in and out; beyond 2^53 they are strings', async () => {
    await sqlOk(
      base,
      'CREATE TABLE big (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW big_sum AS SELECT SUM(v) AS s, COUNT(*) AS n FROM big',
    );
    const r = await request(
      base,
      'POST',
      '/v1/tables/big/rows',
      undefined,
      '[{"id": 1, "v": 9007199254740993}, {"id": 2, "v": "4611686018427387904"}, {"id": 3, "v": -9223372036854775808}]',
    );
    assert.equal(r.status, 200, r.text);
    const rows = await request(base, 'GET', '/v1/views/big_sum/rows');
    assert.match(rows.text, /"s":"-4602678819172646911"/);
    const sel = await sqlOk(base, 'SELECT v FROM big WHERE id = 1');
    assert.match(sel.text, /"v":"9007199254740993"/);
    const overflow = await request(
      base,
      'POST',
      '/v1/tables/big/rows',
      undefined,
      '[{"id": 4, "v": 9223372036854775808}]',
    );
    assert.equal(overflow.status, 400);
    // a row read back (big values as strings) can be sent back as a full-row delete
    const back = await sqlOk(base, 'SELECT id, v FROM big WHERE id = 1');
    const del = await request(base, 'POST', '/v1/tables/big/rows', {
      delete: (back.body.results as { rows: unknown[] }[])[0]?.rows,
    });
    assert.equal(del.status, 200, del.text);
  });

  test('view rows: equality filters, limit/offset, stable order, errors', async () => {
    await sqlOk(
      base,
      'CREATE TABLE pts (id INTEGER NOT NULL, grp TEXT NOT NULL, ok BOOLEAN, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW pts_v AS SELECT id, grp, ok FROM pts',
    );
    const rows = Array.from({ length: 10 }, (_, i) => ({
      id: i,
      grp: i % 2 === 0 ? 'even' : 'odd',
      ok: i < 5,
    }));
    assert.equal((await ingest('pts', rows)).status, 200);
    const all = await request(base, 'GET', '/v1/views/pts_v/rows');
    assert.deepEqual(
      (all.body.rows as { id: number }[]).map((r) => r.id),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.equal(all.body.total, 10);
    const page = await request(base, 'GET', '/v1/views/pts_v/rows?grp=odd&limit=2&offset=1');
    assert.deepEqual(
      (page.body.rows as { id: number }[]).map((r) => r.id),
      [3, 5],
    );
    assert.equal(page.body.total, 5);
    const typed = await request(base, 'GET', '/v1/views/pts_v/rows?ok=true&id=3');
    assert.deepEqual(typed.body.rows, [{ id: 3, grp: 'odd', ok: true }]);
    const badColumn = await request(base, 'GET', '/v1/views/pts_v/rows?colour=red');
    assert.equal(badColumn.status, 400);
    assert.equal(badColumn.body.error?.code, 'UNKNOWN_COLUMN');
    const badValue = await request(base, 'GET', '/v1/views/pts_v/rows?id=abc');
    assert.equal(badValue.status, 400);
    assert.equal(badValue.body.error?.code, 'INVALID_VALUE');
    const badLimit = await request(base, 'GET', '/v1/views/pts_v/rows?limit=-1');
    assert.equal(badLimit.status, 400);
    assert.equal(badLimit.body.error?.code, 'INVALID_REQUEST');
    const unknown = await request(base, 'GET', '/v1/views/nope/rows');
    assert.equal(unknown.status, 404);
  });

  test('snapshot is chunked (more) and followed by snapshot_end; folding the stream gives the view', async () => {
    const sub = ws('/v1/views/pts_v/subscribe?snapshot=true');
    const end = await sub.waitFor((m) => m.type === 'snapshot_end');
    assert.equal(end.rows, 10);
    const chunks = sub.of('snapshot');
    assert.equal(chunks.length, 5, 'snapshotChunkRows = 2');
    assert.deepEqual(
      chunks.map((c) => c.more),
      [true, true, true, true, false],
    );
    assert.ok(chunks.every((c) => c.epoch === end.epoch));
    const first = sub.messages[0] as Message;
    assert.equal(first.type, 'subscribed');
    assert.equal(first.snapshot, true);
    assert.deepEqual(first.key, ['id']);
    assert.deepEqual(
      (first.columns as { name: string }[]).map((c) => c.name),
      ['id', 'grp', 'ok'],
    );
    const r = await ingest('pts', { insert: [{ id: 20, grp: 'x', ok: null }], delete: [{ id: 0 }] });
    await sub.waitEpoch(r.body.epoch as number);
    const folded = new FoldedView();
    for (const m of sub.messages) folded.apply(m);
    const rest = await request(base, 'GET', '/v1/views/pts_v/rows');
    assert.deepEqual(folded.sorted(), sortedRows(rest.body.rows as Record<string, unknown>[]));
  });

  test('progress messages mark time while the view is idle', async () => {
    const sub = ws('/v1/views/pts_v/subscribe?snapshot=false');
    const hello = await sub.waitFor((m) => m.type === 'subscribed');
    const progress = await sub.waitFor((m) => m.type === 'progress', 5000, 'a progress heartbeat');
    assert.ok((progress.epoch as number) >= (hello.epoch as number));
  });

  test('resumeFrom delivers exactly the epochs after it', async () => {
    const live = ws('/v1/views/seller_totals/subscribe?snapshot=false');
    const e = (await live.waitFor((m) => m.type === 'subscribed')).epoch as number;
    for (let i = 0; i < 5; i++) await ingest('orders', [{ order_id: 100 + i, seller_id: 30 + i, amount: 1 }]);
    await live.waitEpoch(e + 5);
    const resumed = ws(`/v1/views/seller_totals/subscribe?resumeFrom=${e + 2}`);
    const hello = await resumed.waitFor((m) => m.type === 'subscribed');
    assert.equal(hello.epoch, e + 2);
    assert.equal(hello.snapshot, false);
    await ingest('orders', [{ order_id: 200, seller_id: 40, amount: 1 }]);
    await resumed.waitEpoch(e + 6);
    assert.deepEqual(
      resumed.of('changes').map((m) => m.epoch),
      [e + 3, e + 4, e + 5, e + 6],
    );
    assert.deepEqual(
      resumed.of('changes').map((m) => m.changes),
      live
        .of('changes')
        .filter((m) => (m.epoch as number) > e + 2)
        .map((m) => m.changes),
      'the stored changelog and the live one are the same messages',
    );
  });

  test('errors before subscribing: unknown view 4404, bad parameters 4400, resume ahead of time', async () => {
    const unknown = ws('/v1/views/nope/subscribe');
    assert.equal(await unknown.waitClosed(), 4404);
    assert.equal(unknown.messages[0]?.type, 'error');
    assert.equal(unknown.messages[0]?.code, 'UNKNOWN_VIEW');
    for (const q of [
      'snapshot=maybe',
      'resumeFrom=abc',
      'resumeFrom=1&snapshot=true',
      'colour=red',
      'resumeFrom=999999999',
    ]) {
      const bad = ws(`/v1/views/pts_v/subscribe?${q}`);
      assert.equal(await bad.waitClosed(), 4400, q);
      assert.equal(bad.messages[0]?.code, 'INVALID_REQUEST', q);
    }
    const plain = await request(base, 'GET', '/v1/views/pts_v/subscribe');
    assert.equal(plain.status, 400, 'a plain GET on the WebSocket endpoint is refused');
  });

  test('dropping a view closes its subscribers with VIEW_DROPPED (4410)', async () => {
    await sqlOk(base, 'CREATE MATERIALIZED VIEW doomed AS SELECT grp, COUNT(*) AS n FROM pts GROUP BY grp');
    const sub = ws('/v1/views/doomed/subscribe');
    await sub.waitFor((m) => m.type === 'snapshot_end');
    await sqlOk(base, 'DROP MATERIALIZED VIEW doomed');
    assert.equal(await sub.waitClosed(), 4410);
    assert.equal(sub.of('error')[0]?.code, 'VIEW_DROPPED');
    // a new view of the same name starts a new changelog: resuming across the drop is refused
    await sqlOk(base, 'CREATE MATERIALIZED VIEW doomed AS SELECT grp, COUNT(*) AS n FROM pts GROUP BY grp');
    const e = (await request(base, 'GET', '/v1/views/doomed')).body.epoch as number;
    if (e > 0) {
      const old = ws(`/v1/views/doomed/subscribe?resumeFrom=${e - 1}`);
      assert.equal(await old.waitClosed(), 4409);
    }
  });

  test('NDJSON changes stream: same messages; errors before streaming are HTTP statuses', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/v1/views/seller_totals/changes?snapshot=true`, {
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const lines: Message[] = [];
    let buffered = '';
    const decoder = new TextDecoder();
    const pump = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffered += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          lines.push(JSON.parse(buffered.slice(0, nl)) as Message);
          buffered = buffered.slice(nl + 1);
        }
      }
    })().catch(() => undefined);
    await waitUntil(() => lines.some((l) => l.type === 'snapshot_end'), 10_000, 'snapshot_end');
    const r = await ingest('orders', [{ order_id: 300, seller_id: 50, amount: 7 }]);
    await waitUntil(
      () => lines.some((l) => l.type === 'changes' && l.epoch === r.body.epoch),
      10_000,
      'changes',
    );
    assert.deepEqual(lines[0]?.type, 'subscribed');
    controller.abort();
    await pump;
    const unknown = await request(base, 'GET', '/v1/views/nope/changes');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error?.code, 'UNKNOWN_VIEW');
    const bad = await request(base, 'GET', '/v1/views/seller_totals/changes?resumeFrom=-3');
    assert.equal(bad.status, 400);
  });

  test('operations: healthz, readyz, metrics, openapi, docs, index page', async () => {
    assert.deepEqual((await request(base, 'GET', '/healthz')).body, { status: 'ok' });
    const ready = await request(base, 'GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
    const metrics = await request(base, 'GET', '/metrics');
    assert.equal(metrics.status, 200);
    for (const name of [
      'sluice_epoch',
      'sluice_batch_duration_seconds_bucket',
      'sluice_rows_in_total{table="orders",tenant="default"}',
      'sluice_view_changes_out_total{view="seller_totals",tenant="default"}',
      'sluice_view_state_bytes{view="total_histogram",tenant="default"}',
      'sluice_subscribers{view=',
      'sluice_errors_total{code=',
    ]) {
      assert.ok(metrics.text.includes(name), `metrics include ${name}`);
    }
    // A checkpoint's cost, three ways: wall time, the server thread's share, its longest slice.
    const count = (text: string, name: string): number =>
      Number(new RegExp(`^${name}_count\\{tenant="default"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    const series = [
      'sluice_checkpoint_duration_seconds',
      'sluice_checkpoint_thread_busy_seconds',
      'sluice_checkpoint_longest_slice_seconds',
    ];
    const before = series.map((name) => count(metrics.text, name));
    assert.ok((await server.app.sluice.checkpointInSlices()) !== null, 'a sliced checkpoint');
    assert.ok(server.app.sluice.checkpoint() !== null, 'a checkpoint written at once');
    const after = (await request(base, 'GET', '/metrics')).text;
    series.forEach((name, i) => assert.equal(count(after, name), before[i]! + 2, `${name} counts both`));
    const openapi = await request(base, 'GET', '/openapi.json');
    const paths = Object.keys(openapi.body.paths as Record<string, unknown>);
    for (const p of [
      '/v1/sql',
      '/v1/tables',
      '/v1/tables/{name}/rows',
      '/v1/views',
      '/v1/views/{name}',
      '/v1/views/{name}/rows',
      '/v1/views/{name}/subscribe',
      '/v1/views/{name}/changes',
      '/v1/sources',
      '/v1/sinks',
      '/metrics',
      '/healthz',
      '/readyz',
      '/v1/subscribe',
      '/v1/changes',
      '/v1/tables/{name}/subscribe',
      '/v1/tables/{name}/changes',
    ]) {
      assert.ok(paths.includes(p), `openapi documents ${p}`);
    }
    // One error schema, referenced by every route's error answers; requests come with examples.
    type Doc = {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    const doc = openapi.body as unknown as Doc;
    assert.ok('SluiceError' in doc.components.schemas, 'the error body is a component');
    assert.match(
      JSON.stringify(doc.paths['/v1/views/{name}']?.['get']?.responses['404']),
      /components\/schemas\/SluiceError/,
    );
    for (const [path, method] of [
      ['/v1/sql', 'post'],
      ['/v1/tables/{name}/rows', 'post'],
    ] as const) {
      assert.match(
        JSON.stringify(doc.paths[path]?.[method]?.requestBody),
        /"examples":\{"example1"/,
        `${path} has examples`,
      );
    }
    const docs = await fetch(`${base}/docs`);
    assert.equal(docs.status, 200);
    const docsHtml = await docs.text();
    assert.match(docsHtml, /swagger/i);
    assert.match(docsHtml, /<title>Sluice API/);
    const index = await fetch(`${base}/`);
    assert.match(index.headers.get('content-type') ?? '', /text\/html/);
    const html = await index.text();
    assert.match(html, /href="\/docs"/);
    const notFound = await request(base, 'GET', '/v2/nothing');
    assert.equal(notFound.status, 404);
    assert.equal(notFound.body.error?.code, 'NOT_FOUND');
  });
});
