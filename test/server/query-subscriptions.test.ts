// Subscriptions to a query (SUBSCRIBE) and to a table, served by temporary views: the fold of the
// stream equals the same SELECT run ad hoc after every batch; clients of one query share one view;
// the view goes once it has had no subscriber for the linger time (and not while it has one); a
// client resumes across a restart; errors point into the query; names of temporary views are
// reserved.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import {
  FoldedView,
  type TestServer,
  WsClient,
  canonicalRow,
  request,
  serverFixture,
  sql,
  sqlOk,
  waitUntil,
} from './helpers.ts';

const { server, dir: dataDir } = serverFixture();

const QUERY = 'SELECT g, COUNT(*) AS n, SUM(v) AS total FROM t GROUP BY g';

function subscribeUrl(s: TestServer, text: string, extra = ''): string {
  return `${s.wsBase}/v1/subscribe?sql=${encodeURIComponent(text)}${extra}`;
}

async function temporaryViews(s: TestServer): Promise<string[]> {
  const r = await request(s.base, 'GET', '/v1/views');
  return (r.body.views as { name: string }[]).map((v) => v.name).filter((n) => n.startsWith('sluice_sub_'));
}

function folded(client: WsClient, upTo = Infinity): string[] {
  const fold = new FoldedView();
  for (const m of client.messages) if ((m.epoch ?? 0) <= upTo) fold.apply(m);
  return fold.sorted();
}

async function adHoc(s: TestServer, text: string): Promise<string[]> {
  const r = await sqlOk(s.base, text);
  const rows = (r.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
  return rows.map(canonicalRow).sort();
}

test('a query subscription folds to the same SELECT run ad hoc, batch after batch', async () => {
  const s = await server();
  await sqlOk(s.base, 'CREATE TABLE t (k INTEGER PRIMARY KEY, g TEXT, v INTEGER)');
  const rnd = mulberry32(4242);
  const client = new WsClient(subscribeUrl(s, `SUBSCRIBE (${QUERY})`));
  await client.open();
  await waitUntil(() => client.of('snapshot_end').length === 1, 20_000, 'the snapshot');
  const live = new Set<number>();
  for (let batch = 0; batch < 40; batch++) {
    const insert: Record<string, unknown>[] = [];
    const del: Record<string, unknown>[] = [];
    const touched = new Set<number>();
    for (let i = 0, n = 1 + Math.floor(rnd() * 8); i < n; i++) {
      const k = Math.floor(rnd() * 30);
      if (touched.has(k)) continue;
      touched.add(k);
      if (live.has(k) && rnd() < 0.4) {
        del.push({ k });
        live.delete(k);
      } else {
        insert.push({ k, g: rnd() < 0.1 ? null : `g${Math.floor(rnd() * 4)}`, v: Math.floor(rnd() * 100) });
        live.add(k);
      }
    }
    const r = await request(s.base, 'POST', '/v1/tables/t/rows', { insert, delete: del });
    assert.equal(r.status, 200, r.text);
    const epoch = r.body.epoch as number;
    await waitUntil(
      () => client.messages.some((m) => (m.epoch ?? 0) >= epoch && m.type !== 'subscribed'),
      20_000,
      `epoch ${epoch} on the stream`,
    );
    assert.deepEqual(folded(client, epoch), await adHoc(s, QUERY), `after batch ${batch} (epoch ${epoch})`);
  }
  client.socket.close();
});

test('clients of one query share one temporary view; it goes after the linger time, not before', async () => {
  const s = await server({ querySubscriptions: { lingerMs: 300 } });
  await sqlOk(
    s.base,
    "CREATE TABLE t (k INTEGER PRIMARY KEY, g TEXT, v INTEGER); INSERT INTO t VALUES (1, 'a', 5)",
  );
  const a = new WsClient(subscribeUrl(s, QUERY));
  const b = new WsClient(subscribeUrl(s, `  SUBSCRIBE ( ${QUERY} );`));
  await Promise.all([a.open(), b.open()]);
  await waitUntil(() => a.of('snapshot_end').length + b.of('snapshot_end').length === 2, 20_000, 'snapshots');
  const view = a.of('subscribed')[0]?.view as string;
  assert.match(view, /^sluice_sub_[0-9a-f]{20}$/);
  assert.equal(b.of('subscribed')[0]?.view, view, 'the same query is the same view');
  assert.deepEqual(await temporaryViews(s), [view]);
  // Held while a subscriber remains, well past the linger time.
  a.socket.close();
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(await temporaryViews(s), [view], 'kept while b subscribes');
  b.socket.close();
  await waitUntil(async () => (await temporaryViews(s)).length === 0, 20_000, 'the view to be dropped');
  // A new subscription creates it again, from the current rows.
  const c = new WsClient(subscribeUrl(s, QUERY));
  await c.open();
  await waitUntil(() => c.of('snapshot_end').length === 1, 20_000, 'the snapshot');
  assert.deepEqual(folded(c), [canonicalRow({ g: 'a', n: 1, total: 5 })]);
  c.socket.close();
});

test('a table subscription streams the table; a query subscription resumes across a restart', async () => {
  const dir = dataDir();
  let s = await server({ dataDir: dir, querySubscriptions: { lingerMs: 60_000 } });
  await sqlOk(
    s.base,
    "CREATE TABLE t (k INTEGER PRIMARY KEY, g TEXT, v INTEGER); INSERT INTO t VALUES (1, 'a', 5)",
  );
  const table = new WsClient(`${s.wsBase}/v1/tables/t/subscribe`);
  const query = new WsClient(subscribeUrl(s, QUERY));
  await Promise.all([table.open(), query.open()]);
  await waitUntil(
    () => table.of('snapshot_end').length + query.of('snapshot_end').length === 2,
    20_000,
    'snapshots',
  );
  const r = await request(s.base, 'POST', '/v1/tables/t/rows', [{ k: 1, g: 'a', v: 7 }]);
  const updated = r.body.epoch as number;
  await waitUntil(
    () => table.of('changes').length === 1 && query.of('changes').length === 1,
    20_000,
    'changes',
  );
  assert.deepEqual(
    (table.of('changes')[0]?.changes as { op: string }[]).map((c) => c.op),
    ['-U', '+U'],
    'a keyed table streams its updates as -U/+U',
  );
  assert.deepEqual(folded(table), [canonicalRow({ k: 1, g: 'a', v: 7 })]);
  table.socket.close();
  query.socket.close();
  await s.close();

  s = await server({ dataDir: dir, querySubscriptions: { lingerMs: 60_000 } });
  await request(s.base, 'POST', '/v1/tables/t/rows', [{ k: 2, g: 'b', v: 1 }]);
  const resumed = new WsClient(subscribeUrl(s, QUERY, `&resumeFrom=${updated}`));
  await resumed.open();
  await waitUntil(() => resumed.of('changes').length === 1, 20_000, 'the change after the resume point');
  assert.equal(resumed.of('snapshot').length, 0);
  const all = new FoldedView();
  for (const m of [...query.messages, ...resumed.messages]) all.apply(m);
  assert.deepEqual(
    all.sorted(),
    await adHoc(s, QUERY),
    'the stream before and after the restart folds to the query',
  );
  resumed.socket.close();
});

test('a query that does not parse or bind is refused with its position, and nothing is created', async () => {
  const s = await server({ querySubscriptions: { maxViews: 2 } });
  await sqlOk(s.base, 'CREATE TABLE t (k INTEGER PRIMARY KEY, g TEXT, v INTEGER)');
  const refused = async (
    text: string,
  ): Promise<{ code: string; position?: unknown; close: number | null }> => {
    const c = new WsClient(subscribeUrl(s, text));
    await c.open();
    await waitUntil(() => c.closeCode !== null, 20_000, 'the close');
    const error = c.of('error')[0] as unknown as { code: string; position?: unknown };
    return { code: error.code, position: error.position, close: c.closeCode };
  };
  assert.deepEqual(await refused('SUBSCRIBE (SELECT g, nope FROM t)'), {
    code: 'UNKNOWN_COLUMN',
    position: { line: 1, column: 22 },
    close: 4400,
  });
  assert.deepEqual(await refused('SELECT g,\n  FROM t'), {
    code: 'SYNTAX_ERROR',
    position: { line: 2, column: 3 },
    close: 4400,
  });
  assert.equal((await refused('SELECT 1 AS a FROM t; DROP TABLE t')).code, 'INVALID_REQUEST');
  assert.equal((await refused('DROP TABLE t')).code, 'INVALID_REQUEST');
  assert.equal((await sqlOk(s.base, 'SELECT COUNT(*) AS n FROM t')).status, 200, 'the table is still there');
  assert.deepEqual(await temporaryViews(s), []);

  const ndjson = await request(s.base, 'GET', `/v1/changes?sql=${encodeURIComponent('SELECT nope FROM t')}`);
  assert.equal(ndjson.status, 400);
  assert.equal(ndjson.body.error?.code, 'UNKNOWN_COLUMN');
  assert.equal((await request(s.base, 'GET', '/v1/changes')).body.error?.code, 'INVALID_REQUEST');
  assert.equal((await request(s.base, 'GET', '/v1/tables/missing/changes')).status, 404);
  assert.equal(
    (await request(s.base, 'GET', '/v1/changes?sql=SELECT%201%20AS%20a%20FROM%20t&x=1')).status,
    400,
  );

  // The server's most temporary views: the next distinct query is refused (503), an existing one is not.
  const keep = [
    new WsClient(subscribeUrl(s, 'SELECT k FROM t')),
    new WsClient(subscribeUrl(s, 'SELECT g FROM t')),
  ];
  await Promise.all(keep.map((c) => c.open()));
  await waitUntil(() => keep.every((c) => c.of('snapshot_end').length === 1), 20_000, 'snapshots');
  assert.equal((await refused('SELECT v FROM t')).code, 'TOO_MANY_SUBSCRIBERS');
  const again = new WsClient(subscribeUrl(s, 'SELECT k FROM t'));
  await again.open();
  await waitUntil(() => again.of('snapshot_end').length === 1, 20_000, 'a shared view is not refused');
  for (const c of [...keep, again]) c.socket.close();
});

test('SUBSCRIBE in a script and names of temporary views are refused with a code', async () => {
  const s = await server();
  await sqlOk(s.base, 'CREATE TABLE t (k INTEGER PRIMARY KEY)');
  const sub = await sql(s.base, 'SELECT 1 AS a FROM t;\nSUBSCRIBE (SELECT k FROM t)');
  assert.equal(sub.status, 400);
  assert.equal(sub.body.error?.code, 'NOT_SUPPORTED');
  assert.deepEqual(sub.body.error?.position, { line: 2, column: 1 });
  const reserved = await sql(s.base, 'CREATE MATERIALIZED VIEW sluice_sub_0123 AS SELECT k FROM t');
  assert.equal(reserved.status, 400);
  assert.equal(reserved.body.error?.code, 'RESERVED_NAME');
  assert.equal(
    (await sql(s.base, 'CREATE TABLE sluice_sub_t (k INTEGER)')).body.error?.code,
    'RESERVED_NAME',
  );
  assert.deepEqual(await temporaryViews(s), []);
});
