// Recovery benchmark with the real server process: ingest R rows (batches of 1,000, 4 concurrent
// clients) into orders → seller_totals (100,000 sellers) → a histogram over it, then
//   (a) incremental checkpoint cost at 100,000 groups with 1% of them dirty (ms and bytes, from the
//       server's sluice_checkpoint_duration_seconds / sluice_checkpoint_written_bytes_total),
//   (b) recovery time after kill -9 versus rows ingested: checkpoints at default settings, every
//       second, and off (`--checkpoint-interval-ms 0`, full journal replay) side by side — time from
//       spawn to /readyz ok and the server's own sluice_recovery_seconds,
//   (c) ingest throughput with checkpointing every second vs off (events/s over the same workload),
//   (d) mode `last`: no checkpoint while ingesting, then a clean stop (SIGTERM: one full checkpoint
//       at the last epoch; its time is `stop ms`) and a restart that loads it with nothing to replay —
//       against `off`, the same data replayed from the whole journal; and the CPU time of
//       CheckpointStore.read() alone on the file each mode left (`read cpu`, best of 3).
//
//   node --import tsx bench/recovery.ts [--rows 100000,300000,1000000] [--modes default,1s,off,last]
//                                       [--dirty-rounds 5] [--root <checkout>] [--keep <dir>]
// `--root` runs another checkout's server and CheckpointStore (before/after figures).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { parseArgs } from 'node:util';
import { processCpuSeconds } from './server-child.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    modes: { type: 'string', default: 'default,1s,off' },
    'dirty-rounds': { type: 'string', default: '5' },
    root: { type: 'string' },
    keep: { type: 'string' },
  },
});
const ROOT = values.root === undefined ? new URL('..', import.meta.url).pathname : resolve(values.root);
const ROWS = String(values.rows)
  .split(',')
  .map((x) => Number(x));
const MODES = String(values.modes).split(',');
const DIRTY_ROUNDS = Number(values['dirty-rounds']);
const SELLERS = 100_000;
const BATCH = 1_000;
const CONCURRENCY = 4;
const MODE_ARGS: Record<string, string[]> = {
  default: [],
  '1s': ['--checkpoint-interval-ms', '1000'],
  off: ['--checkpoint-interval-ms', '0'],
  // No checkpoint while ingesting (interval 0 would turn off the clean stop's one too).
  last: ['--checkpoint-interval-ms', '86400000', '--checkpoint-epochs', '100000000'],
};
const DDL = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount DOUBLE PRECISION NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 100)`;
const CLI = join(ROOT, 'src/cli.ts');

let seed = 20111111;
function rnd(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

interface Server {
  readonly base: string;
  readonly pid: number;
  readonly exited: Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

async function startServer(
  dir: string,
  args: string[],
): Promise<{ server: Server; readyMs: number; readyCpuMs: number; log: () => string }> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'start', '--port', '0', '--data-dir', dir, '--log-level', 'warn', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: '', SLUICE_DATA_DIR: '' } },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let dead = false;
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      dead = true;
      r();
    }),
  );
  let base = '';
  for (;;) {
    if (dead) throw new Error(`server exited:\n${out}`);
    const m = /listening on (http:\/\/[^ ]+)/.exec(out);
    if (m !== null) {
      base = m[1] as string;
      break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  for (;;) {
    const r = await fetch(`${base}/readyz`).catch(() => null);
    if (r !== null && r.status === 200) break;
    await new Promise((res) => setTimeout(res, 2));
  }
  return {
    server: { base, pid: child.pid as number, exited, kill: (s) => child.kill(s) },
    readyMs: performance.now() - t0,
    readyCpuMs: processCpuSeconds(child.pid as number) * 1000,
    log: () => out,
  };
}

async function post(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function metrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const i = line.lastIndexOf(' ');
    // The default tenant's series under their bare names.
    out.set(line.slice(0, i).replace('{tenant="default"}', ''), Number(line.slice(i + 1)));
  }
  return out;
}

async function ingest(base: string, rows: number): Promise<{ seconds: number; eventsPerSec: number }> {
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const start = next;
      if (start >= rows) return;
      next += BATCH;
      const batch = [];
      for (let i = start; i < Math.min(rows, start + BATCH); i++)
        batch.push({ order_id: i, seller_id: i % SELLERS, amount: Math.round(rnd() * 10000) / 100 });
      await post(base, '/v1/tables/orders/rows', batch);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, eventsPerSec: rows / seconds };
}

/** Incremental checkpoints with 1% of the seller groups dirty each (the 1 s checkpoint mode). */
async function checkpointCost(base: string, rows: number): Promise<Record<string, number>[]> {
  const out: Record<string, number>[] = [];
  let id = rows + 1;
  for (let round = 0; round < DIRTY_ROUNDS; round++) {
    const before = await metrics(base);
    const batch = [];
    const first = Math.floor(rnd() * SELLERS);
    for (let i = 0; i < SELLERS / 100; i++)
      batch.push({ order_id: id++, seller_id: (first + i * 97) % SELLERS, amount: 1.5 });
    await post(base, '/v1/tables/orders/rows', batch);
    const count0 = before.get('sluice_checkpoint_duration_seconds_count') ?? 0;
    let after = before;
    for (let i = 0; i < 400; i++) {
      await new Promise((r) => setTimeout(r, 25));
      after = await metrics(base);
      if ((after.get('sluice_checkpoint_duration_seconds_count') ?? 0) > count0) break;
    }
    out.push({
      checkpoints: (after.get('sluice_checkpoint_duration_seconds_count') ?? 0) - count0,
      ms:
        ((after.get('sluice_checkpoint_duration_seconds_sum') ?? 0) -
          (before.get('sluice_checkpoint_duration_seconds_sum') ?? 0)) *
        1000,
      bytes:
        (after.get('sluice_checkpoint_written_bytes_total') ?? 0) -
        (before.get('sluice_checkpoint_written_bytes_total') ?? 0),
    });
  }
  return out;
}

interface ModeResult {
  rows: number;
  mode: string;
  ingestSeconds: number;
  eventsPerSec: number;
  serverCpuSeconds: number;
  checkpointsBeforeKill: number;
  checkpointEpoch: number;
  epochAtKill: number;
  recoveryReadyMs: number;
  recoverySecondsServer: number;
  /** CPU ms of the server's recovery (its log line's `cpuMs`; all threads): steadier than wall time. */
  recoveryCpuMs: number;
  /**
   * Server CPU from spawn to ready, the restart's minus the first (empty) start's: recovery's CPU
   * with the module loading both pay taken out (any checkout; /proc, 10 ms ticks).
   */
  readyCpuDeltaMs: number;
  replayedEntries: number;
  firstStartReadyMs: number;
  /** Mode `last`: SIGTERM to exit, the clean stop's full checkpoint included. */
  stopMs?: number;
  /** CPU ms of CheckpointStore.read() on the file the run left (best of 3); null when none. */
  readCpuMs: number | null;
  checkpointRows: number | null;
  incremental?: Record<string, number>[];
}

/** CPU time of reading (and verifying) the stored checkpoint, with the checkout's own store. */
async function readCpuMs(dir: string): Promise<{ ms: number | null; rows: number | null }> {
  const mod = (await import(join(ROOT, 'src/storage/checkpoint-store.ts'))) as {
    CheckpointStore: new (db: Database.Database) => { read(): unknown; info(): { entries: number } | null };
  };
  const db = new Database(join(dir, 'checkpoint.db'));
  try {
    const store = new mod.CheckpointStore(db);
    if (store.info() === null) return { ms: null, rows: null };
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const c0 = process.cpuUsage();
      if (store.read() === null) return { ms: null, rows: null };
      const c = process.cpuUsage(c0);
      best = Math.min(best, (c.user + c.system) / 1000);
    }
    return { ms: best, rows: store.info()?.entries ?? null };
  } finally {
    db.close();
  }
}

async function runMode(rows: number, mode: string): Promise<ModeResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-recovery-'));
  const args = MODE_ARGS[mode] ?? [];
  try {
    const { server, readyMs: firstStartReadyMs, readyCpuMs: firstCpu } = await startServer(dir, args);
    await post(server.base, '/v1/sql', { sql: DDL });
    const cpu0 = processCpuSeconds(server.pid);
    const { seconds, eventsPerSec } = await ingest(server.base, rows);
    const serverCpuSeconds = processCpuSeconds(server.pid) - cpu0;
    const incremental = mode === '1s' ? await checkpointCost(server.base, rows) : undefined;
    const m = await metrics(server.base);
    const ready = (await (await fetch(`${server.base}/readyz`)).json()) as { epoch: number };
    let stopMs: number | undefined;
    if (mode === 'last') {
      const t0 = performance.now();
      server.kill('SIGTERM');
      await server.exited;
      stopMs = performance.now() - t0;
    } else {
      server.kill('SIGKILL');
      await server.exited;
    }
    // At info level the recovery's log line carries its CPU time (an older checkout's may not).
    const {
      server: again,
      readyMs,
      readyCpuMs,
      log,
    } = await startServer(dir, [...args, '--log-level', 'info']);
    const m2 = await metrics(again.base);
    again.kill('SIGKILL');
    await again.exited;
    const read = await readCpuMs(dir);
    let checkpoints = 0;
    for (const [k, v] of m) if (k.startsWith('sluice_checkpoints_total')) checkpoints += v;
    return {
      rows,
      mode,
      ingestSeconds: seconds,
      eventsPerSec,
      serverCpuSeconds,
      checkpointsBeforeKill: checkpoints,
      checkpointEpoch: m.get('sluice_checkpoint_epoch') ?? -1,
      epochAtKill: ready.epoch,
      recoveryReadyMs: readyMs,
      recoverySecondsServer: m2.get('sluice_recovery_seconds') ?? NaN,
      recoveryCpuMs: Number(/"cpuMs":(\d+)/.exec(log())?.[1] ?? NaN),
      readyCpuDeltaMs: readyCpuMs - firstCpu,
      replayedEntries: m2.get('sluice_recovery_replayed_entries') ?? NaN,
      firstStartReadyMs,
      ...(stopMs !== undefined ? { stopMs } : {}),
      readCpuMs: read.ms,
      checkpointRows: read.rows,
      ...(incremental !== undefined ? { incremental } : {}),
    };
  } finally {
    // `--keep <dir>`: the data directory as the restart left it, to profile a start on it.
    if (values.keep !== undefined) cpSync(dir, join(values.keep, `${rows}-${mode}`), { recursive: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
const results: ModeResult[] = [];
for (const rows of ROWS) {
  for (const mode of MODES) {
    const r = await runMode(rows, mode);
    results.push(r);
    console.error(`done: ${rows} rows, mode ${mode}`);
  }
}
const loadAfter = readFileSync('/proc/loadavg', 'utf8').trim();
console.log(`RESULT ${JSON.stringify({ loadavgBefore: loadBefore, loadavgAfter: loadAfter, results })}`);
console.log(`root: ${ROOT}`);
console.log(`loadavg before: ${loadBefore}; after: ${loadAfter}`);
const pad = (s: string | number, n: number): string => String(s).padStart(n);
console.log(
  `${pad('rows', 9)} ${pad('mode', 8)} ${pad('events/s', 10)} ${pad('srv cpu s', 9)} ${pad('ckpts', 6)} ${pad('ckpt ep', 8)} ${pad('epoch', 6)} ${pad('ready ms', 9)} ${pad('recov s', 8)} ${pad('recov cpu', 9)} ${pad('ready cpu', 9)} ${pad('replayed', 9)} ${pad('stop ms', 8)} ${pad('read cpu', 9)} ${pad('ck rows', 8)}`,
);
for (const r of results) {
  console.log(
    `${pad(r.rows, 9)} ${pad(r.mode, 8)} ${pad(Math.round(r.eventsPerSec), 10)} ${pad(r.serverCpuSeconds.toFixed(1), 9)} ${pad(r.checkpointsBeforeKill, 6)} ${pad(r.checkpointEpoch, 8)} ${pad(r.epochAtKill, 6)} ${pad(Math.round(r.recoveryReadyMs), 9)} ${pad(r.recoverySecondsServer.toFixed(3), 8)} ${pad(r.recoveryCpuMs, 9)} ${pad(Math.round(r.readyCpuDeltaMs), 9)} ${pad(r.replayedEntries, 9)} ${pad(r.stopMs === undefined ? '-' : Math.round(r.stopMs), 8)} ${pad(r.readCpuMs === null ? '-' : Math.round(r.readCpuMs), 9)} ${pad(r.checkpointRows ?? '-', 8)}`,
  );
}
for (const r of results) {
  if (r.incremental === undefined) continue;
  const inc = r.incremental.filter((x) => (x.checkpoints ?? 0) > 0);
  const ms = inc.map((x) => ((x.ms ?? 0) / (x.checkpoints ?? 1)).toFixed(1)).join(', ');
  const bytes = inc.map((x) => Math.round((x.bytes ?? 0) / (x.checkpoints ?? 1))).join(', ');
  console.log(
    `checkpoint with 1% of ${SELLERS} groups dirty (${r.rows} rows): ms per checkpoint [${ms}], bytes [${bytes}]`,
  );
}
