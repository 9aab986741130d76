// End-to-end server benchmark: the Double 11 views in a server child process (durable data dir),
// HTTP ingest of JSON batches of 1,000 rows, one WebSocket subscriber on total_histogram.
// Prints one JSON line per figure: sustained events/s (until the subscriber got the last epoch) and
// ingest-to-delivery latency p50/p99 at 1,000 events/s (batches of 10 rows every 10 ms). The
// throughput line also carries the ingest requests per durable commit (group commit, from /metrics)
// and the server's CPU seconds with events per server CPU second (see docs/server.md, Benchmark).
import { closeSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import WebSocket from 'ws';
import { processCpuSeconds, processMemoryMb, spawnServer } from './server-child.ts';
import { threadStats } from './thread-cpu.ts';

const THROUGHPUT_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
// A fixed amount of work instead (BENCH_BATCHES batches, however long they take): on a shared
// machine two versions then do the same work into a table of the same size, and their server CPU
// seconds compare directly.
const FIXED_BATCHES = process.env.BENCH_BATCHES === undefined ? null : Number(process.env.BENCH_BATCHES);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
// Rows per throughput request (default 1,000). BENCH_BATCH_ROWS=1 measures what a request costs the
// server besides its rows (HTTP, routing, the epoch, the group commit): server CPU µs per request is
// then 1e6 / events_per_server_cpu_s.
const BATCH_ROWS = Number(process.env.BENCH_BATCH_ROWS ?? 1000);
if (!Number.isSafeInteger(BATCH_ROWS) || BATCH_ROWS < 1)
  throw new Error(`BENCH_BATCH_ROWS must be a positive integer, not ${process.env.BENCH_BATCH_ROWS}`);
const SELLERS = 10_000;

const DOUBLE_11 = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)`;

// BENCH_SERVER_CLI runs another checkout's server with this load generator (paired A/B runs).
const cli = process.env.BENCH_SERVER_CLI ?? new URL('../src/cli.ts', import.meta.url).pathname;
const envArgs = (name: string): string[] => (process.env[name] ?? '').split(' ').filter((a) => a !== '');
// Node's flags for the server, e.g. "--single-threaded-gc --max-semi-space-size=32" (V8's young
// generation), or "--trace-gc" to have the throughput line count the collections (server_gc).
const serverNodeArgs = envArgs('BENCH_SERVER_NODE_ARGS');
const traceGc = serverNodeArgs.includes('--trace-gc');
const server = spawnServer({
  cli,
  nodeArgs: serverNodeArgs,
  // info: the server logs each checkpoint it writes (its busy time, snapshot time, longest slice).
  logLevel: 'info',
  // More server flags for an experiment, e.g. BENCH_SERVER_ARGS="--checkpoint-interval-ms 0".
  serverArgs: ['--heartbeat-ms', '1000', ...envArgs('BENCH_SERVER_ARGS')],
  tempPrefix: 'sluice-bench-',
});
const { child, dataDir, exited } = server;
// CPU seconds the server process has used (user + system, from /proc; NaN where there is none). The
// machine is shared with the load generator (and often with other work), so events per server CPU
// second is the steadier figure next to the wall-clock rate.
function serverCpuSeconds(): number {
  return processCpuSeconds(child.pid);
}
// The server's CPU seconds per thread name (/proc/<pid>/task/*: `node` is the main thread, `libuv-worker`
// the thread pool, `V8 Worker`/`V8 DefaultWorke` V8's GC and compiler helpers, the checkpoint writer
// thread a `node` thread too, told apart by its id being the main thread's or not).
function serverThreadCpu(): Map<string, number> {
  const byName = new Map<string, number>();
  for (const t of threadStats(child.pid as number) ?? []) {
    const name = t.tid === child.pid ? 'main' : t.name.replace(/[0-9]+$/, '');
    byName.set(name, (byName.get(name) ?? 0) + t.ticks / 100);
  }
  return byName;
}
/**
 * The server's main thread as the scheduler saw it (Linux): ms it waited, runnable, for a core
 * (/proc/<pid>/task/<pid>/schedstat's run delay) and the times it was taken off one
 * (nonvoluntary_ctxt_switches); null where /proc lacks them. Counted over the latency phase, they
 * tell an event loop that was busy from one that was ready but had no core.
 */
function serverMainSched(): { waitMs: number; preempted: number } | null {
  try {
    const task = `/proc/${child.pid}/task/${child.pid}`;
    const waitNs = Number(readFileSync(`${task}/schedstat`, 'utf8').split(' ')[1]);
    const m = /nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`${task}/status`, 'utf8'));
    return m === null || !Number.isFinite(waitNs) ? null : { waitMs: waitNs / 1e6, preempted: Number(m[1]) };
  } catch {
    return null;
  }
}
/**
 * The journal's WAL restarts so far: its header's checkpoint sequence number (bytes 12–15, big-endian),
 * which SQLite bumps each time a writer starts the WAL over after a WAL checkpoint copied all of it —
 * so, between two readings, about how many WAL checkpoints ran (in the server, inside a group's
 * COMMIT: SQLite's autocheckpoint); null where the file is missing.
 */
function walRestarts(): number | null {
  try {
    const fd = openSync(join(dataDir, 'sluice.db-wal'), 'r');
    try {
      const header = Buffer.alloc(16);
      return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
function threadCpuDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of after) {
    const d = s - (before.get(name) ?? 0);
    if (d > 0) out[name] = Number(d.toFixed(2));
  }
  return out;
}
// BENCH_SERVER_STDOUT=1 shows the server's stdout (e.g. with BENCH_SERVER_NODE_ARGS=--trace-gc).
if (process.env.BENCH_SERVER_STDOUT === '1') child.stdout.pipe(process.stderr);

/** A checkpoint the server logged: when it started (Date.now() clock) and what it cost. */
interface CheckpointLog {
  readonly startedAt: number;
  readonly full: boolean;
  readonly entries: number;
  readonly upserts: number;
  readonly ms: number;
  readonly busyMs: number;
  readonly takeMs?: number;
  readonly longestSliceMs?: number;
  /** Slices of a write off the thread, and the most entries one handled (work, not time). */
  readonly slices?: number;
  readonly maxSliceEntries?: number;
  /** Slices that first waited for the ingest requests in flight to be answered. */
  readonly ingestWaits?: number;
  /** The most slices one ingest request waited behind for its answer during the write. */
  readonly slicesBeforeAnswer?: number;
}
const checkpointLogs: CheckpointLog[] = [];
/**
 * The server's collections while counting (the throughput phase), from `--trace-gc` lines on its
 * stdout (`BENCH_SERVER_NODE_ARGS=--trace-gc`): how many scavenges and full collections ran and the
 * main thread's pause ms each kind summed (the first of V8's "pause / external" figures), so a
 * young-generation setting can be judged by the work it saves, not only by a noisy rate.
 */
const gcCount = { on: false, scavenges: 0, scavengeMs: 0, fulls: 0, fullMs: 0 };
const GC_LINE =
  /: (Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact|Minor Mark-Sweep)\b[^,]*, ([\d.]+) \/ /;
let stdoutRest = '';
child.stdout.on('data', (d: Buffer) => {
  const lines = (stdoutRest + d.toString()).split('\n');
  stdoutRest = lines.pop() ?? '';
  for (const line of lines) {
    const gc = gcCount.on ? GC_LINE.exec(line) : null;
    if (gc !== null) {
      const young = gc[1] === 'Scavenge' || gc[1]!.startsWith('Minor');
      if (young) {
        gcCount.scavenges++;
        gcCount.scavengeMs += Number(gc[2]);
      } else {
        gcCount.fulls++;
        gcCount.fullMs += Number(gc[2]);
      }
      continue;
    }
    if (!line.includes('"checkpoint written"')) continue;
    const c = JSON.parse(line) as Omit<CheckpointLog, 'startedAt'> & { time: number };
    checkpointLogs.push({ ...c, startedAt: c.time - c.ms });
  }
});
// A socket error nobody awaits (seen under heavy load: ECONNRESET on a reused connection) ends this
// process without running the `finally` below: the server must not outlive it nor its data stay.
process.once('uncaughtException', (err) => {
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  console.error(err);
  process.exit(1);
});

async function main(): Promise<void> {
  let nextId = 1;
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const body = (rows: number): string => {
    let s = '[';
    for (let i = 0; i < rows; i++) {
      s += `${i === 0 ? '' : ','}{"order_id":${nextId++},"seller_id":${rand(SELLERS)},"amount":${1 + rand(100)}}`;
    }
    return `${s}]`;
  };
  // Bodies are made before the clock starts, so the load generator (sharing this 2-core machine)
  // spends its time sending, not building JSON. They are made before the first request: building them
  // can take longer than the server's keep-alive timeout, and a connection it closed while idle
  // would fail the next request that reuses it.
  // As UTF-8 bytes: a string body built by `+=` is a rope that fetch measures (`Buffer.byteLength`)
  // and encodes again per request, which cost the load generator ~0.6 ms of CPU per 1,000-row request.
  const pool = Array.from({ length: Number(process.env.BENCH_POOL ?? 2500) }, () =>
    Buffer.from(body(BATCH_ROWS)),
  );
  const port = await server.port;
  const base = `http://127.0.0.1:${port}`;
  const setup = await fetch(`${base}/v1/sql`, {
    method: 'POST',
    body: JSON.stringify({ sql: DOUBLE_11 }),
    headers: { 'content-type': 'application/json' },
  });
  if (setup.status !== 200) throw new Error(await setup.text());

  // One subscriber on the histogram: record when each epoch's message arrives.
  const arrivals = new Map<number, number>();
  let lastEpochSeen = 0;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/views/total_histogram/subscribe?snapshot=false`);
  ws.on('message', (data) => {
    const now = performance.now();
    const text = String(data);
    const m = /"type":"(\w+)","epoch":(\d+)/.exec(text) ?? /"epoch":(\d+)/.exec(text);
    if (text.startsWith('{"type":"changes"') || text.startsWith('{"type":"progress"')) {
      const epoch = Number(/"epoch":(\d+)/.exec(text)?.[1]);
      if (text.startsWith('{"type":"changes"')) arrivals.set(epoch, now);
      if (epoch > lastEpochSeen) lastEpochSeen = epoch;
    } else if (m === null && !shuttingDown) throw new Error(`unexpected message ${text.slice(0, 200)}`);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });

  // Ingest goes through node:http on kept-alive connections rather than fetch: fetch's web streams
  // and Request objects cost the load generator, which shares the server's two cores, about twice
  // the CPU per request. The answer is checked the same way (status 200 and an epoch).
  // No socket limit, as with fetch: a request sent while every connection is busy (the latency run
  // after a stall) opens another instead of queueing in the load generator.
  const agent = new Agent({ keepAlive: true });
  const ingestUrl = new URL(`${base}/v1/tables/orders/rows`);
  const post = (text: string | Uint8Array): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const body = typeof text === 'string' ? Buffer.from(text) : text;
      const req = httpRequest(
        ingestUrl,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.byteLength },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            try {
              const json = JSON.parse(Buffer.concat(chunks).toString()) as {
                epoch?: number;
                error?: unknown;
              };
              if (res.statusCode !== 200 || json.epoch === undefined)
                throw new Error(`ingest failed: ${JSON.stringify(json)}`);
              resolve(json.epoch);
            } catch (err) {
              reject(err as Error);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  // Ingest requests per durable commit (group commit) so far, from /metrics.
  const groupCommitStats = async (): Promise<number> => {
    const text = await (await fetch(`${base}/metrics`)).text();
    // Series carry labels since tenants (`name{tenant="default"} 12`).
    const value = (name: string): number =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return Number(
      (value('sluice_ingest_committed_requests_total') / value('sluice_ingest_commits_total')).toFixed(2),
    );
  };

  // Warm-up (JIT, allocation) before measuring.
  for (let i = 0; i < 20; i++) await post(body(BATCH_ROWS));

  // ---- throughput ----
  let batches = 0;
  let maxEpoch = 0;
  const cpuBefore = serverCpuSeconds();
  const threadsBefore = serverThreadCpu();
  const clientBefore = process.cpuUsage();
  const throughputSchedBefore = serverMainSched();
  gcCount.on = true;
  const started = performance.now();
  const deadline = started + THROUGHPUT_SECONDS * 1000;
  let claimed = 0;
  const more = (): boolean =>
    FIXED_BATCHES === null ? performance.now() < deadline : claimed++ < FIXED_BATCHES;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (more()) {
        const epoch = await post(pool.pop() ?? body(BATCH_ROWS));
        batches++;
        if (epoch > maxEpoch) maxEpoch = epoch;
      }
    }),
  );
  // Sustained means delivered: wait until the subscriber has seen the last epoch (or a progress past it).
  const allSent = performance.now();
  while (lastEpochSeen < maxEpoch && performance.now() - allSent < 30_000) {
    await new Promise((r) => setTimeout(r, 1));
  }
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = serverCpuSeconds() - cpuBefore;
  const threadCpu = threadCpuDelta(threadsBefore, serverThreadCpu());
  // Lines already written reach this process a little later: wait for them before the count stops.
  await new Promise((r) => setTimeout(r, 50));
  gcCount.on = false;
  const rssMb = processMemoryMb(child.pid);
  const throughputSchedAfter = serverMainSched();
  // The main thread's time neither on a core nor waiting for one: it slept with nothing to do (the
  // WAL sync in flight, the load generator's next request). Unlike the CPU seconds, this share says
  // whether the thread sets the pace; other work on the machine still shows in it through the load
  // generator, which waits for a core too.
  const mainRunqueueMs =
    throughputSchedBefore === null || throughputSchedAfter === null
      ? null
      : throughputSchedAfter.waitMs - throughputSchedBefore.waitMs;
  const mainSleptMs =
    mainRunqueueMs === null || threadCpu.main === undefined
      ? null
      : Math.max(0, Math.round(elapsed * 1000 - threadCpu.main * 1000 - mainRunqueueMs));
  // The load generator shares the two cores: its CPU is what the server could not have.
  const clientUsage = process.cpuUsage(clientBefore);
  const clientCpu = (clientUsage.user + clientUsage.system) / 1e6;
  const commits = await groupCommitStats();
  console.log(
    JSON.stringify({
      bench: 'server-e2e',
      metric: 'throughput',
      events_per_s: Math.round((batches * BATCH_ROWS) / elapsed),
      batches,
      batch_rows: BATCH_ROWS,
      concurrency: CONCURRENCY,
      seconds: Number(elapsed.toFixed(2)),
      delivered_through_epoch: lastEpochSeen,
      requests_per_commit: commits,
      server_cpu_s: Number(serverCpu.toFixed(2)),
      events_per_server_cpu_s: Math.round((batches * BATCH_ROWS) / serverCpu),
      server_thread_cpu_s: threadCpu,
      // The server's CPU per request of BATCH_ROWS rows, all its threads (what a V8 flag moves).
      server_cpu_us_per_batch: Math.round((serverCpu * 1e6) / batches),
      server_rss_mb: rssMb?.rss ?? null,
      server_peak_rss_mb: rssMb?.hwm ?? null,
      // Only with --trace-gc among BENCH_SERVER_NODE_ARGS (see gcCount).
      server_gc: !traceGc
        ? null
        : {
            scavenges: gcCount.scavenges,
            scavenge_pause_ms: Math.round(gcCount.scavengeMs),
            full: gcCount.fulls,
            full_pause_ms: Math.round(gcCount.fullMs),
          },
      client_cpu_s: Number(clientCpu.toFixed(2)),
      main_runqueue_wait_ms: mainRunqueueMs === null ? null : Math.round(mainRunqueueMs),
      // Per batch: what a change of the commit pipeline moves (see mainSleptMs).
      main_slept_us_per_batch: mainSleptMs === null ? null : Math.round((mainSleptMs * 1000) / batches),
    }),
  );

  // ---- latency at 1,000 events/s: 10 rows every 10 ms ----
  const latencyStarted = Date.now();
  const sendTimes = new Map<number, number>();
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  // The same instant on the monotonic clock (µs), which a server's .cpuprofile timestamps also use:
  // `bench/cpuprofile-stalls.ts --t0` places the slowest samples in the server's profile.
  const t0MonotonicUs = process.hrtime.bigint() / 1000n;
  const schedBefore = serverMainSched();
  const walRestartsBefore = walRestarts();
  for (let i = 0; i < LATENCY_SECONDS * 100; i++) {
    const due = t0 + i * 10;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const text = body(10);
    const sent = performance.now();
    pending.push(post(text).then((epoch) => void sendTimes.set(epoch, sent)));
  }
  await Promise.all(pending);
  const schedAfter = serverMainSched();
  const walRestartsAfter = walRestarts();
  const lastLatencyEpoch = Math.max(...sendTimes.keys());
  const until = performance.now() + 10_000;
  while (lastEpochSeen < lastLatencyEpoch && performance.now() < until)
    await new Promise((r) => setTimeout(r, 1));
  const latencies: number[] = [];
  // When the slowest samples were sent (seconds into the run): periodic stalls show as a pattern.
  const slow: { at: number; ms: number }[] = [];
  for (const [epoch, sent] of sendTimes) {
    const arrived = arrivals.get(epoch);
    if (arrived === undefined) continue;
    latencies.push(arrived - sent);
    slow.push({ at: (sent - t0) / 1000, ms: arrived - sent });
  }
  slow.sort((a, b) => b.ms - a.ms);
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number =>
    Number(
      (latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN).toFixed(2),
    );
  console.log(
    JSON.stringify({
      bench: 'server-e2e',
      metric: 'latency',
      events_per_s: 1000,
      batch_rows: 10,
      samples: latencies.length,
      p50_ms: pct(50),
      p99_ms: pct(99),
      max_ms: Number((latencies[latencies.length - 1] ?? NaN).toFixed(2)),
      slowest: slow.slice(0, 12).map((x) => `${x.at.toFixed(2)}s:${x.ms.toFixed(0)}ms`),
      t0_monotonic_us: Number(t0MonotonicUs),
      // The server's main thread while the requests were sent: ms runnable without a core, preemptions.
      main_runqueue_wait_ms:
        schedBefore === null || schedAfter === null
          ? null
          : Math.round(schedAfter.waitMs - schedBefore.waitMs),
      wal_restarts:
        walRestartsBefore === null || walRestartsAfter === null ? null : walRestartsAfter - walRestartsBefore,
      main_preempted:
        schedBefore === null || schedAfter === null ? null : schedAfter.preempted - schedBefore.preempted,
    }),
  );
  // The checkpoints written so far: the server-thread time each cost (busy), of which taking the
  // state (take) and the longest slice between two epochs; `at` is seconds into the latency run;
  // the slices and the most entries one handled count the work whatever the machine's load.
  const r = (x: number | undefined): number | null => (x === undefined ? null : Number(x.toFixed(1)));
  console.log(
    JSON.stringify({
      bench: 'server-e2e',
      metric: 'checkpoints',
      checkpoints: checkpointLogs.map((c) => ({
        at_s: Number(((c.startedAt - latencyStarted) / 1000).toFixed(2)),
        full: c.full,
        entries: c.full ? c.entries : c.upserts,
        ms: r(c.ms),
        busy_ms: r(c.busyMs),
        take_ms: r(c.takeMs),
        longest_slice_ms: r(c.longestSliceMs),
        slices: c.slices ?? null,
        max_slice_entries: c.maxSliceEntries ?? null,
        ingest_waits: c.ingestWaits ?? null,
        slices_before_answer: c.slicesBeforeAnswer ?? null,
      })),
    }),
  );
  ws.close();
}

// Set before the server is stopped: its goodbye to the subscriber is not a failure of the run.
let shuttingDown = false;
try {
  await main();
} finally {
  shuttingDown = true;
  child.kill('SIGTERM');
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
}
