// Bounded reads and subscriber memory with the real server process (issue items 8, 1 and 4):
//   reads     — a table of N rows (default 1,000,000) and a view over it: each REST page shape and
//               ad-hoc SELECT shape, with its wall time, answer size and the slowest /healthz answer
//               a second client got meanwhile;
//   snapshots — S never-reading snapshot subscribers (default 200 and 300) of a 200,000-row view:
//               the server's RSS before, its peak (VmHWM) while they are connected, and after they left;
//   lagging   — L never-reading live subscribers (default 500) and one that reads, while E epochs
//               (default 200) of ~250 KB each arrive: RSS before/peak, and whether the reader got
//               every epoch;
//   shared    — S reading snapshot subscribers opened at once (not run by default): wall time to the
//               last snapshot_end and the server's CPU time meanwhile.
// Works against any checkout (`--root DIR`, default this one), so the same run measures before and
// after a change. Each measurement prints one JSON line {"bench":"reads-memory",...}.
//
//   node --import tsx bench/reads-memory.ts [--parts reads,snapshots,lagging,shared] [--rows 1000000]
//        [--snapshot-rows 200000] [--subs 200,300] [--lagging 500] [--lag-epochs 200]
//        [--hold-seconds 20] [--root DIR]
//        [--label NAME]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { processMemoryMb } from './server-child.ts';

const { values } = parseArgs({
  options: {
    parts: { type: 'string', default: 'reads,snapshots,lagging' },
    rows: { type: 'string', default: '1000000' },
    'snapshot-rows': { type: 'string', default: '200000' },
    subs: { type: 'string', default: '200,300' },
    lagging: { type: 'string', default: '500' },
    'lag-epochs': { type: 'string', default: '200' },
    'hold-seconds': { type: 'string', default: '20' },
    root: { type: 'string', default: new URL('..', import.meta.url).pathname },
    label: { type: 'string' },
  },
});
const PARTS = String(values.parts).split(',');
const ROWS = Number(values.rows);
const SNAPSHOT_ROWS = Number(values['snapshot-rows']);
const SUBS = String(values.subs)
  .split(',')
  .map((x) => Number(x));
const LAGGING = Number(values.lagging);
const LAG_EPOCHS = Number(values['lag-epochs']);
const HOLD_MS = Number(values['hold-seconds']) * 1000;
const ROOT = resolve(String(values.root));
const CLI = join(ROOT, 'src/cli.ts');
/** What is measured: `--label`, else the checkout's commit (with "+" when it has changes). */
const LABEL =
  values.label ??
  (() => {
    try {
      const git = (...args: string[]): string =>
        execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' });
      return `${git('rev-parse', '--short', 'HEAD').trim()}${git('status', '--porcelain', '--untracked-files=no').trim() === '' ? '' : '+'}`;
    } catch {
      return ROOT;
    }
  })();

interface Server {
  readonly base: string;
  readonly ws: string;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  dead: boolean;
  stop(): Promise<void>;
}

async function startServer(args: string[] = []): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-reads-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'start', '--port', '0', '--data-dir', dir, '--log-level', 'warn', ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const server = {
    base: '',
    ws: '',
    pid: child.pid ?? 0,
    exited,
    dead: false,
    stop: async () => {
      if (!server.dead) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  void exited.then(() => (server.dead = true));
  for (;;) {
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m !== null) {
      server.base = `http://127.0.0.1:${m[1]}`;
      server.ws = `ws://127.0.0.1:${m[1]}`;
      return server;
    }
    if (server.dead) throw new Error(`server exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function sqlOk(base: string, sql: string): Promise<void> {
  const r = await post(base, '/v1/sql', { sql });
  if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
}

async function ingest(base: string, table: string, rows: number, make: (i: number) => object): Promise<void> {
  for (let i = 0; i < rows; i += 20_000) {
    const batch = Array.from({ length: Math.min(20_000, rows - i) }, (_, j) => make(i + j));
    const r = await post(base, `/v1/tables/${table}/rows`, batch);
    if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
  }
}

/** VmRSS and VmHWM (peak RSS) of a process, in MB (0 where /proc lacks them). */
function memory(pid: number): { rss: number; hwm: number } {
  return processMemoryMb(pid) ?? { rss: 0, hwm: 0 };
}

function result(fields: Record<string, unknown>): void {
  console.log(JSON.stringify({ bench: 'reads-memory', version: LABEL, ...fields }));
}

/** CPU time (user + system) a process has used, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

// ---- reads ----------------------------------------------------------------------------------

async function reads(): Promise<void> {
  const server = await startServer(['--checkpoint-interval-ms', '0']);
  try {
    await sqlOk(
      server.base,
      'CREATE TABLE t (id BIGINT NOT NULL, g INTEGER NOT NULL, s TEXT NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW v AS SELECT id, g, s FROM t',
    );
    await ingest(server.base, 't', ROWS, (i) => ({ id: i, g: i % 100, s: `s${i}` }));
    const shapes: [string, string, unknown?][] = [
      ['rows (first read, no limit)', `/v1/views/v/rows`],
      ['rows limit=10', `/v1/views/v/rows?limit=10`],
      [`rows limit=10 offset=${ROWS - 10}`, `/v1/views/v/rows?limit=10&offset=${ROWS - 10}`],
      ['rows g=5 limit=10', `/v1/views/v/rows?g=5&limit=10`],
      ['rows id=<key>', `/v1/views/v/rows?id=${ROWS - 7}`],
      ['SELECT * FROM t LIMIT 10', '/v1/sql', { sql: 'SELECT * FROM t LIMIT 10' }],
      [
        'SELECT * FROM t ORDER BY s DESC LIMIT 10',
        '/v1/sql',
        { sql: 'SELECT * FROM t ORDER BY s DESC LIMIT 10' },
      ],
      ['SELECT g, COUNT(*) FROM t GROUP BY g', '/v1/sql', { sql: 'SELECT g, COUNT(*) FROM t GROUP BY g' }],
      ['SELECT * FROM v LIMIT 10', '/v1/sql', { sql: 'SELECT * FROM v LIMIT 10' }],
      ['SELECT * FROM t', '/v1/sql', { sql: 'SELECT * FROM t' }],
    ];
    for (const [shape, path, body] of shapes) {
      let done = false;
      let slowest = 0;
      const prober = (async () => {
        while (!done) {
          const t = performance.now();
          await (await fetch(`${server.base}/healthz`)).arrayBuffer();
          slowest = Math.max(slowest, performance.now() - t);
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      await new Promise((r) => setTimeout(r, 20));
      const t0 = performance.now();
      const r = body === undefined ? await fetch(server.base + path) : await post(server.base, path, body);
      const bytes = (await r.arrayBuffer()).byteLength;
      const ms = performance.now() - t0;
      done = true;
      await prober;
      result({
        part: 'reads',
        rows: ROWS,
        shape,
        status: r.status,
        ms: Math.round(ms * 10) / 10,
        bytes,
        healthz_max_ms: Math.round(slowest * 10) / 10,
      });
    }
  } finally {
    await server.stop();
  }
}

// ---- subscribers ----------------------------------------------------------------------------

function paused(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      // Never read: the server's buffers for this client fill up.
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      resolve(ws);
    });
    ws.once('error', reject);
  });
}

/** Samples the server's RSS every 250 ms for `ms` (or until it dies): the most seen, in MB. */
async function hold(server: Server, ms: number): Promise<number> {
  let most = 0;
  const end = Date.now() + ms;
  while (Date.now() < end && !server.dead) {
    try {
      most = Math.max(most, memory(server.pid).rss);
    } catch {
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return most;
}

/** The snapshot parts' view `v` over `t`, with `--snapshot-rows` rows. */
async function snapshotView(base: string): Promise<void> {
  await sqlOk(
    base,
    'CREATE TABLE t (id BIGINT NOT NULL, g INTEGER NOT NULL, s TEXT NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW v AS SELECT id, g, s FROM t',
  );
  await ingest(base, 't', SNAPSHOT_ROWS, (i) => ({ id: i, g: i % 100, s: `row ${i} ${'x'.repeat(40)}` }));
}

async function snapshots(subs: number): Promise<void> {
  const server = await startServer(['--checkpoint-interval-ms', '0']);
  const clients: WebSocket[] = [];
  try {
    await snapshotView(server.base);
    const before = memory(server.pid).rss;
    const t0 = Date.now();
    for (let i = 0; i < subs && !server.dead; i++) {
      clients.push(
        await paused(`${server.ws}/v1/views/v/subscribe?snapshot=true`).catch(() => null as never),
      );
    }
    const peak = await hold(server, HOLD_MS);
    let healthMs: number | null = null;
    if (!server.dead) {
      const t = performance.now();
      const r = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(30_000) }).catch(
        () => null,
      );
      healthMs = r?.ok === true ? Math.round(performance.now() - t) : null;
    }
    for (const c of clients) c?.terminate();
    await new Promise((r) => setTimeout(r, 10_000));
    const after = server.dead ? null : memory(server.pid);
    result({
      part: 'snapshots',
      view_rows: SNAPSHOT_ROWS,
      subscribers: subs,
      connected: clients.filter((c) => c !== null).length,
      hold_s: HOLD_MS / 1000,
      rss_before_mb: before,
      rss_peak_mb: after?.hwm ?? peak,
      rss_after_close_mb: after?.rss ?? null,
      healthz_ms_while_held: healthMs,
      server_died: server.dead,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
    });
  } finally {
    for (const c of clients) c?.terminate();
    await server.stop();
  }
}

async function lagging(subs: number): Promise<void> {
  const server = await startServer(['--checkpoint-interval-ms', '0']);
  const clients: WebSocket[] = [];
  try {
    await sqlOk(
      server.base,
      'CREATE TABLE u (id BIGINT NOT NULL, pad TEXT NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW uv AS SELECT id, pad FROM u',
    );
    const received: number[] = [];
    const reader = new WebSocket(`${server.ws}/v1/views/uv/subscribe?snapshot=false`);
    reader.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; epoch: number };
      if (m.type === 'changes') received.push(m.epoch);
    });
    await new Promise((r) => reader.once('open', r));
    for (let i = 0; i < subs; i++)
      clients.push(await paused(`${server.ws}/v1/views/uv/subscribe?snapshot=false`));
    const before = memory(server.pid).rss;
    const epochs = LAG_EPOCHS;
    let last = 0;
    const t0 = Date.now();
    for (let e = 0; e < epochs && !server.dead; e++) {
      const rows = Array.from({ length: 1000 }, (_, j) => ({ id: e * 1000 + j, pad: 'p'.repeat(200) }));
      const r = await post(server.base, '/v1/tables/u/rows', rows).catch(() => null);
      if (r?.ok === true) last = ((await r.json()) as { epoch: number }).epoch;
    }
    const deadline = Date.now() + 60_000;
    while (!server.dead && received.at(-1) !== last && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const mem = server.dead ? null : memory(server.pid);
    reader.terminate();
    result({
      part: 'lagging',
      lagging_subscribers: subs,
      epochs,
      epoch_bytes: 250_000,
      rss_before_mb: before,
      rss_peak_mb: mem?.hwm ?? null,
      reader_epochs: received.length,
      reader_in_order: received.every((e, i) => i === 0 || e > (received[i - 1] as number)),
      server_died: server.dead,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
    });
  } finally {
    for (const c of clients) c.terminate();
    await server.stop();
  }
}

// ---- shared: S reading snapshot subscribers opened at once -------------------------------------

/**
 * S subscribers that read, opened together on a `--snapshot-rows` view: the wall time until the
 * last got `snapshot_end`, and the server's CPU time meanwhile (the chunks' encoding is most of it).
 */
async function sharedSnapshots(subs: number): Promise<void> {
  const server = await startServer(['--checkpoint-interval-ms', '0']);
  const clients: WebSocket[] = [];
  try {
    await snapshotView(server.base);
    // The view's index is built by a first read, outside the measurement.
    await fetch(`${server.base}/v1/views/v/rows?limit=1`);
    const cpu0 = cpuMs(server.pid);
    const t0 = performance.now();
    let rows = 0;
    await Promise.all(
      Array.from(
        { length: subs },
        () =>
          new Promise<void>((done, fail) => {
            const ws = new WebSocket(`${server.ws}/v1/views/v/subscribe?snapshot=true`);
            clients.push(ws);
            ws.on('message', (data: Buffer) => {
              const m = JSON.parse(String(data)) as { type: string; rows?: unknown };
              if (m.type === 'snapshot_end') {
                rows += Number(m.rows);
                done();
              }
            });
            ws.on('error', fail);
          }),
      ),
    );
    result({
      part: 'shared',
      subscribers: subs,
      rows: SNAPSHOT_ROWS,
      rows_received: rows,
      wall_ms: Math.round(performance.now() - t0),
      server_cpu_ms: Math.round(cpuMs(server.pid) - cpu0),
    });
  } finally {
    for (const c of clients) c.terminate();
    await server.stop();
  }
}

if (PARTS.includes('reads')) await reads();
if (PARTS.includes('snapshots')) for (const s of SUBS) await snapshots(s);
if (PARTS.includes('lagging')) await lagging(LAGGING);
if (PARTS.includes('shared')) for (const s of SUBS) await sharedSnapshots(s);
process.exit(0);
