// Subscribers cannot inflate the server's memory (issue item 4). Before: a never-reading snapshot
// subscriber held a whole copy of the view (~20 MB at 200,000 rows) and 300 of them took the server
// past its heap limit; 500 lagging live subscribers took it from 470 MB to 2.75 GB. Now snapshots
// stream from one shared frozen index, every queued byte counts against one budget, and past it the
// subscriber holding the most is closed with SLOW_CONSUMER. Asserted from the server's own account
// (its peak never passes the budget), its RSS (bounded far above normal, far below the old figures),
// and that a subscriber that reads keeps getting every epoch. Caps on subscriber counts refuse with
// TOO_MANY_SUBSCRIBERS (HTTP 503 + Retry-After, or an error message and close 4503).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  type ChildServer,
  type Message,
  WsClient,
  removeDir,
  request,
  spawnServer,
  sqlOk,
  startServer,
  tempDir,
  waitUntil,
} from './helpers.ts';

const ROWS = 200_000;
const BUDGET = 32 * 1024 * 1024;
/** About ten times the server's RSS with this view and no subscribers; the old code passed 4 GB. */
const RSS_BOUND = 1536 * 1024 * 1024;

let server: ChildServer;
let dir: string;

before(async () => {
  dir = tempDir();
  server = await spawnServer(dir, [
    '--checkpoint-interval-ms',
    '0',
    '--subscriber-memory',
    String(BUDGET),
    '--heartbeat-ms',
    '60000',
  ]);
  await sqlOk(
    server.base,
    `CREATE TABLE t (id BIGINT NOT NULL, g INTEGER NOT NULL, s TEXT NOT NULL, PRIMARY KEY (id));
     CREATE MATERIALIZED VIEW v AS SELECT id, g, s FROM t;
     CREATE TABLE u (id BIGINT NOT NULL, pad TEXT NOT NULL, PRIMARY KEY (id));
     CREATE MATERIALIZED VIEW uv AS SELECT id, pad FROM u`,
  );
  for (let i = 0; i < ROWS; i += 20_000) {
    const rows = Array.from({ length: 20_000 }, (_, j) => ({
      id: i + j,
      g: (i + j) % 100,
      s: `row ${i + j} ${'x'.repeat(40)}`,
    }));
    const r = await request(server.base, 'POST', '/v1/tables/t/rows', rows);
    assert.equal(r.status, 200, r.text);
  }
});

after(async () => {
  server.child.kill('SIGKILL');
  await server.exited;
  removeDir(dir);
});

async function metric(name: string, labels = ''): Promise<number> {
  const text = (await request(server.base, 'GET', '/metrics')).text;
  // Every series of a tenant carries its label last (process metrics have none).
  const esc = (x: string): string => x.replace(/[{}()]/g, (c) => `\\${c}`);
  const escaped =
    labels === ''
      ? `${name}(?:\\{tenant="default"\\})?`
      : `${esc(name + labels.slice(0, -1))}(?:,tenant="default")?\\}`;
  const m = new RegExp(`^${escaped} (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'm').exec(text);
  assert.ok(m !== null, `/metrics has no ${name}${labels}`);
  return Number(m[1]);
}

const budget = (kind: string): Promise<number> =>
  metric('sluice_subscriber_memory_bytes', `{kind="${kind}"}`);

/** Samples the account and RSS for `ms`: the most of each seen. */
async function sample(ms: number): Promise<{ used: number; rss: number }> {
  let used = 0;
  let rss = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    used = Math.max(used, await budget('used'));
    rss = Math.max(rss, await metric('process_resident_memory_bytes'));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { used, rss };
}

test('300 never-reading snapshot subscribers of a 200,000-row view stay within the budget', async () => {
  const clients: WsClient[] = [];
  try {
    for (let i = 0; i < 300; i++) {
      const c = new WsClient(`${server.wsBase}/v1/views/v/subscribe?snapshot=true`, { paused: true });
      clients.push(c);
      await c.open();
    }
    await waitUntil(
      async () => (await metric('sluice_subscribers_total_connected')) === 300,
      120_000,
      '300 subscribers',
    );
    const { used, rss } = await sample(8000);
    const peak = await budget('peak');
    assert.equal(await budget('limit'), BUDGET);
    assert.ok(peak <= BUDGET, `the account peaked at ${peak} bytes, past the budget of ${BUDGET}`);
    assert.ok(used > BUDGET / 2, `the streams filled the budget (at most ${used} bytes accounted)`);
    assert.ok(rss < RSS_BOUND, `RSS reached ${Math.round(rss / 1e6)} MB with 300 snapshot subscribers`);
    // The server still answers, and a reader still gets a whole snapshot.
    assert.equal((await request(server.base, 'GET', '/healthz')).status, 200);
    const reader = new WsClient(`${server.wsBase}/v1/views/uv/subscribe?snapshot=true`);
    clients.push(reader);
    await reader.waitFor((m) => m.type === 'snapshot_end', 120_000, 'a snapshot for a reader');
  } finally {
    for (const c of clients) c.close();
  }
  await waitUntil(
    async () => (await metric('sluice_subscribers_total_connected')) === 0,
    120_000,
    'the subscribers to be gone',
  );
  await waitUntil(async () => (await budget('used')) === 0, 120_000, 'their memory to be released');
});

test('lagging live subscribers: past the budget the biggest holders are closed, readers keep every epoch', async () => {
  const lagging: WsClient[] = [];
  const reader = new WsClient(`${server.wsBase}/v1/views/uv/subscribe?snapshot=false`);
  try {
    await reader.open();
    await reader.waitFor((m) => m.type === 'subscribed');
    for (let i = 0; i < 200; i++) {
      const c = new WsClient(`${server.wsBase}/v1/views/uv/subscribe?snapshot=false`, { paused: true });
      lagging.push(c);
      await c.open();
    }
    await waitUntil(
      async () => (await metric('sluice_subscribers_total_connected')) === 201,
      120_000,
      '201 subscribers',
    );
    const slowBefore = await metric('sluice_slow_consumer_disconnects_total', '{view="uv"}').catch(() => 0);
    // 40 epochs of ~250 KB each: every lagging subscriber would queue ~10 MB, 2 GB in all.
    let last = 0;
    for (let e = 0; e < 40; e++) {
      const rows = Array.from({ length: 1000 }, (_, j) => ({ id: e * 1000 + j, pad: 'p'.repeat(200) }));
      const r = await request(server.base, 'POST', '/v1/tables/u/rows', rows);
      assert.equal(r.status, 200, r.text);
      last = r.body.epoch as number;
    }
    await reader.waitEpoch(last, 60_000);
    const epochs = reader.of('changes').map((m: Message) => m.epoch as number);
    assert.equal(epochs.length, 40, 'the reader got every epoch');
    assert.deepEqual(
      epochs,
      [...epochs].sort((a, b) => a - b),
    );
    assert.equal(reader.closeCode, null, 'the reader was not closed');
    const peak = await budget('peak');
    assert.ok(peak <= BUDGET, `the account peaked at ${peak} bytes, past the budget of ${BUDGET}`);
    const slow = (await metric('sluice_slow_consumer_disconnects_total', '{view="uv"}')) - slowBefore;
    assert.ok(slow > 0, 'lagging subscribers were closed as slow consumers');
    const rss = await metric('process_resident_memory_bytes');
    assert.ok(rss < RSS_BOUND, `RSS ${Math.round(rss / 1e6)} MB with 200 lagging subscribers`);
  } finally {
    reader.close();
    for (const c of lagging) c.close();
  }
  await waitUntil(
    async () => (await metric('sluice_subscribers_total_connected')) === 0,
    120_000,
    'the subscribers to be gone',
  );
});

test('subscriber caps: beyond them TOO_MANY_SUBSCRIBERS (NDJSON 503 with Retry-After, WebSocket 4503)', async () => {
  const s = await startServer({ maxSubscribers: 3, maxSubscribersPerView: 2 });
  const clients: WsClient[] = [];
  try {
    await sqlOk(
      s.base,
      'CREATE TABLE a (x INTEGER); CREATE MATERIALIZED VIEW va AS SELECT x FROM a; CREATE MATERIALIZED VIEW vb AS SELECT x FROM a',
    );
    for (const v of ['va', 'va', 'vb']) {
      const c = new WsClient(`${s.wsBase}/v1/views/${v}/subscribe?snapshot=false`);
      clients.push(c);
      await c.waitFor((m) => m.type === 'subscribed');
    }
    const third = new WsClient(`${s.wsBase}/v1/views/va/subscribe?snapshot=false`);
    clients.push(third);
    assert.equal(await third.waitClosed(), 4503);
    const refusal = third.of('error')[0];
    assert.equal(refusal?.code, 'TOO_MANY_SUBSCRIBERS');
    assert.match(String(refusal?.message), /view "va" has 2 subscribers/);
    const http = await fetch(`${s.base}/v1/views/vb/changes?snapshot=false`);
    assert.equal(http.status, 503);
    assert.equal(http.headers.get('retry-after'), '5');
    assert.equal(((await http.json()) as { error: { code: string } }).error.code, 'TOO_MANY_SUBSCRIBERS');
    // A place freed is a place taken.
    (clients[2] as WsClient).close();
    await waitUntil(async () => (await request(s.base, 'GET', '/v1/views/vb')).body.subscribers === 0);
    const again = new WsClient(`${s.wsBase}/v1/views/vb/subscribe?snapshot=false`);
    clients.push(again);
    await again.waitFor((m) => m.type === 'subscribed');
  } finally {
    for (const c of clients) c.close();
    await s.close();
  }
});

test('process metrics carry the standard names Node.js dashboards query', async () => {
  const text = (await request(server.base, 'GET', '/metrics')).text;
  for (const name of [
    'process_resident_memory_bytes',
    'process_cpu_seconds_total',
    'nodejs_heap_size_used_bytes',
  ]) {
    assert.match(text, new RegExp(`^${name} `, 'm'), `/metrics has ${name}`);
  }
  assert.doesNotMatch(text, /^sluice_process_/m);
});
