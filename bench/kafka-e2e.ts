// End-to-end Kafka benchmark: a real broker (tools/kafka), N JSON orders pre-produced to a topic, the
// Sluice server as a child process reading them through CREATE SOURCE ... FROM KAFKA into the Double 11
// views (seller_totals, total_histogram). Measures, in one run:
//   - catch-up throughput: CREATE SOURCE → every partition's `next` at the topic's end offsets
//     (events/s, server CPU seconds, events per server CPU second), then checks the views exactly;
//   - the peer: raw kafkajs consumption of the same topic with the source's consumer settings
//     (eachBatch, JSON.parse of every value, read-committed) → msgs/s, and the Sluice/raw ratio;
//   - latency: produce → WebSocket delivery on seller_totals, per order, at a moderate rate, once
//     with the default max_batch_ms (100) and once with max_batch_ms 10 (a second server, which also
//     gives a second catch-up figure);
//   - with --cpu-profile DIR: the first server's CPU profile, summarised over the catch-up window.
// Prints a human table and one `RESULT {json}` line. See bench/README.md.
//
//   node --import tsx bench/kafka-e2e.ts                      # 2,000,000 orders, 4 partitions
//   node --import tsx bench/kafka-e2e.ts --orders 200000 --latency-seconds 5 --cpu-profile /tmp/kprof
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import WebSocket from 'ws';
import { KAFKA_VERSION, startBroker, type Broker } from '../tools/kafka/broker.mjs';
import { generateRows, type Dist, type Order } from './workload.ts';

interface Flags {
  orders: number;
  partitions: number;
  maxBatchRows: number;
  dist: Dist;
  sellers: number;
  pk: boolean;
  produceBatch: number;
  latencyRate: number;
  latencySeconds: number;
  cpuProfile: string | null;
  rawRounds: number;
  /** Another checkout's root: its server catches up alternately with this one's (paired A/B, no latency). */
  ab: string | null;
  abRounds: number;
  /** Extra node flags for this checkout's servers in an A/B run (e.g. `--max-semi-space-size=64`). */
  aNodeFlags: string[];
  /** An A/B run's `max_batch_ms` for A's and B's sources (null: the default). */
  abMaxBatchMs: [number | null, number | null];
  /** An A/B run's `max_batch_rows` for A's and B's sources (null: `--max-batch-rows`). */
  abMaxBatchRows: [number | null, number | null];
}

/** `A,B` → A's and B's value (`default` or empty: null). */
function pairOf(v: string): [number | null, number | null] {
  const [x, y] = v.split(',').map((t) => (t === '' || t === 'default' ? null : Number(t)));
  return [x ?? null, y ?? null];
}

function parseFlags(argv: string[]): Flags {
  const f: Flags = {
    orders: 2_000_000,
    partitions: 4,
    maxBatchRows: 10_000,
    dist: 'uniform',
    sellers: 100_000,
    pk: true,
    produceBatch: 5_000,
    latencyRate: 1_000,
    latencySeconds: 20,
    cpuProfile: null,
    rawRounds: 2,
    ab: null,
    abRounds: 2,
    aNodeFlags: [],
    abMaxBatchMs: [null, null],
    abMaxBatchRows: [null, null],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    const num = (): number => Number((v ?? '').replace(/_/g, ''));
    if (a === '--orders' && v) f.orders = num();
    else if (a === '--partitions' && v) f.partitions = num();
    else if (a === '--max-batch-rows' && v) f.maxBatchRows = num();
    else if (a === '--dist' && (v === 'uniform' || v === 'zipf')) f.dist = v;
    else if (a === '--sellers' && v) f.sellers = num();
    else if (a === '--pk' && (v === 'on' || v === 'off')) f.pk = v === 'on';
    else if (a === '--produce-batch' && v) f.produceBatch = num();
    else if (a === '--latency-rate' && v) f.latencyRate = num();
    else if (a === '--latency-seconds' && v) f.latencySeconds = num();
    else if (a === '--cpu-profile' && v) f.cpuProfile = v;
    else if (a === '--raw-rounds' && v) f.rawRounds = num();
    else if (a === '--ab' && v) f.ab = v;
    else if (a === '--ab-rounds' && v) f.abRounds = num();
    else if (a === '--a-node-flags' && v) f.aNodeFlags = v.split(' ').filter((x) => x !== '');
    else if (a === '--ab-max-batch-ms' && v) f.abMaxBatchMs = pairOf(v);
    else if (a === '--ab-max-batch-rows' && v) f.abMaxBatchRows = pairOf(v);
    else
      throw new Error(
        `unknown flag ${a} (--orders N, --partitions N, --max-batch-rows N, --dist uniform|zipf, --sellers N, ` +
          `--pk on|off, --produce-batch N, --latency-rate N, --latency-seconds N, --cpu-profile DIR, --raw-rounds N, --ab DIR, --ab-rounds N, --a-node-flags "FLAGS", --ab-max-batch-ms A,B, --ab-max-batch-rows A,B)`,
      );
    i++;
  }
  return f;
}

const TOPIC = 'orders';
/** Issue 12's target: events/s end to end (and ≥ 80% of raw kafkajs on the same topic). */
const TARGET = 300_000;
/** Latency-phase orders use seller ids from here up, one new seller per order, so each is identifiable. */
const LATENCY_SELLER_BASE = 1_000_000_000;
const LATENCY_ORDER_BASE = 2_000_000_000;
const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const fmt = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const round2 = (x: number): number => Number(x.toFixed(2));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function kjs(brokers: string, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [brokers], logLevel: logLevel.NOTHING });
}

// ---- data ----------------------------------------------------------------------------------------

interface Expected {
  orders: number;
  amountSum: number;
  orderIdSum: number;
  totals: Map<number, number>;
  histogram: Map<number, number>;
}

function expectedOf(rows: readonly Order[]): Expected {
  const totals = new Map<number, number>();
  let amountSum = 0;
  let orderIdSum = 0;
  for (const r of rows) {
    totals.set(r.seller_id, (totals.get(r.seller_id) ?? 0) + r.amount);
    amountSum += r.amount;
    orderIdSum += r.order_id;
  }
  const histogram = new Map<number, number>();
  for (const t of totals.values()) {
    const b = Math.floor(t / 10);
    histogram.set(b, (histogram.get(b) ?? 0) + 1);
  }
  return { orders: rows.length, amountSum, orderIdSum, totals, histogram };
}

async function produceAll(
  brokers: string,
  rows: readonly Order[],
  f: Flags,
): Promise<{ msgs_per_s: number; seconds: number }> {
  const producer = kjs(brokers, 'bench-produce').producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const t0 = hrMs();
  // A few batches in flight at once (acks=-1 each); partition = order_id mod partitions (no key).
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const start = next;
      next = Math.min(rows.length, start + f.produceBatch);
      const byPartition: { partition: number; value: string }[] = [];
      for (let i = start; i < next; i++) {
        const o = rows[i] as Order;
        byPartition.push({ partition: o.order_id % f.partitions, value: JSON.stringify(o) });
      }
      await producer.send({ topic: TOPIC, acks: -1, messages: byPartition });
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  const ms = hrMs() - t0;
  await producer.disconnect();
  return { msgs_per_s: Math.round(rows.length / (ms / 1000)), seconds: round2(ms / 1000) };
}

async function endOffsets(brokers: string): Promise<Map<number, number>> {
  const admin = kjs(brokers, 'bench-admin').admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
}

// ---- the peer: raw kafkajs -----------------------------------------------------------------------

interface RawResult {
  msgs_per_s: number;
  steady_msgs_per_s: number;
  seconds: number;
  join_ms: number;
  cpu_s: number;
  msgs_per_cpu_s: number;
}

async function rawConsume(brokers: string, exp: Expected): Promise<RawResult> {
  // The source's consumer settings (src/source/kafka/kafkajs-client.ts): read-committed, 100 ms max
  // wait, one partition at a time; offsets never committed.
  const consumer = kjs(brokers, 'bench-raw').consumer({
    groupId: `bench-raw-${Date.now()}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  let count = 0;
  let amountSum = 0;
  let orderIdSum = 0;
  const cpu0 = process.cpuUsage();
  const t0 = hrMs();
  let first = 0;
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const end = await new Promise<number>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch }) => {
          if (first === 0) first = hrMs();
          for (const m of batch.messages) {
            const o = JSON.parse(m.value?.toString() ?? 'null') as Order;
            // Round 2 also finds the latency phases' orders (order ids from 2e9 up): not counted.
            if (o.order_id >= LATENCY_ORDER_BASE) continue;
            count++;
            amountSum += o.amount;
            orderIdSum += o.order_id;
          }
          if (count >= exp.orders) resolve(hrMs());
        },
      })
      .catch(reject);
  });
  const cpu = process.cpuUsage(cpu0);
  await consumer.disconnect();
  if (count !== exp.orders || amountSum !== exp.amountSum || orderIdSum !== exp.orderIdSum)
    throw new Error(`raw consumer checksum ${count}/${amountSum}/${orderIdSum} differs`);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return {
    msgs_per_s: Math.round(exp.orders / ((end - t0) / 1000)),
    steady_msgs_per_s: Math.round(exp.orders / ((end - first) / 1000)),
    seconds: round2((end - t0) / 1000),
    join_ms: Math.round(first - t0),
    cpu_s: round2(cpuS),
    msgs_per_cpu_s: Math.round(exp.orders / cpuS),
  };
}

/**
 * A throw-away consumer group that joins and reads one fetch, before anything is timed: a fresh
 * broker's first group join (and this process's first kafkajs consumer) took 0.76–1.37 s against
 * 0.12–0.36 s later, which the raw peer's first round alone paid, so its msg/s read 20–30% low.
 */
async function warmUp(brokers: string): Promise<number> {
  const consumer = kjs(brokers, 'bench-warm').consumer({
    groupId: `bench-warm-${Date.now()}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  const t0 = hrMs();
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async () => resolve(),
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return Math.round(hrMs() - t0);
}

// ---- the server ----------------------------------------------------------------------------------

interface Server {
  child: ChildProcessByStdio<null, Readable, null>;
  base: string;
  port: number;
  dataDir: string;
  exited: Promise<void>;
  /** The end of what the server wrote to stdout (its log). */
  output: () => string;
}

const ownRoot = new URL('..', import.meta.url).pathname;

/** A server of the checkout at `root` (this one by default; `--ab` names another). */
async function startServer(
  profileDir: string | null,
  root: string = ownRoot,
  nodeFlags: readonly string[] = [],
): Promise<Server> {
  const cli = join(root, 'src/cli.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-kafka-e2e-'));
  const prof = profileDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      ...prof,
      '--import',
      'tsx',
      cli,
      'start',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // An exit the bench did not ask for (a crash) is otherwise only a connection reset: say why.
      if (!child.killed)
        console.error(`server ${child.pid} exited (code ${code}, signal ${signal}): ${out.slice(-4000)}`);
      resolve();
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) resolve(Number(m[1]));
      if (out.length > 100_000) out = out.slice(-10_000);
    });
    child.once('exit', () => reject(new Error(`server exited: ${out}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, port, dataDir, exited, output: () => out.slice(-4000) };
}

async function stopServer(s: Server): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** CPU seconds (user + system) of the server process, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function sql(s: Server, text: string): Promise<unknown> {
  const r = await fetch(`${s.base}/v1/sql`, {
    method: 'POST',
    body: JSON.stringify({ sql: text }),
    headers: { 'content-type': 'application/json' },
  });
  const body = await r.text();
  if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${body}`);
  return JSON.parse(body) as unknown;
}

function pipelineSql(brokers: string, f: Flags, maxBatchMs: number | null): string {
  const options = [
    `brokers '${brokers}'`,
    `topic '${TOPIC}'`,
    `format 'json'`,
    `max_batch_rows ${f.maxBatchRows}`,
    ...(maxBatchMs === null ? [] : [`max_batch_ms ${maxBatchMs}`]),
  ].join(', ');
  const cols = `order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL${f.pk ? ', PRIMARY KEY (order_id)' : ''}`;
  // The seed's two views (src/console/shared/demo-sql.ts), over a source instead of a table.
  return `CREATE SOURCE orders (${cols}) FROM KAFKA (${options});
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);`;
}

/** Counters from /metrics summed over labels: checkpoints written, their time and bytes. */
interface ServerMetrics {
  checkpoints: number;
  checkpoint_s: number;
  checkpoint_bytes: number;
}

async function serverMetrics(s: Server): Promise<ServerMetrics> {
  const text = await (await fetch(`${s.base}/metrics`)).text();
  const sum = (name: string): number => {
    let total = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm')))
      total += Number(m[1]);
    return total;
  };
  return {
    checkpoints: sum('sluice_checkpoints_total'),
    checkpoint_s: sum('sluice_checkpoint_duration_seconds_sum'),
    checkpoint_bytes: sum('sluice_checkpoint_written_bytes_total'),
  };
}

function metricsDelta(a: ServerMetrics, b: ServerMetrics): ServerMetrics {
  return {
    checkpoints: b.checkpoints - a.checkpoints,
    checkpoint_s: round2(b.checkpoint_s - a.checkpoint_s),
    checkpoint_bytes: b.checkpoint_bytes - a.checkpoint_bytes,
  };
}

interface SourceJson {
  state: string;
  error: unknown;
  recordsIn: number;
  batches: number;
  partitions: { partition: number; next: number; high: number | null }[];
}

async function sourceStatus(s: Server): Promise<SourceJson> {
  try {
    const r = await fetch(`${s.base}/v1/sources/orders`);
    return (await r.json()) as SourceJson;
  } catch (error) {
    // A reset connection is usually the server gone: wait for its exit and show its last log lines.
    await Promise.race([s.exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    const code = s.child.exitCode ?? s.child.signalCode ?? 'still running';
    throw new Error(`status of server ${s.child.pid} failed (exit: ${code}); its log ends: ${s.output()}`, {
      cause: error,
    });
  }
}

function caughtUp(st: SourceJson, ends: ReadonlyMap<number, number>): boolean {
  for (const [p, end] of ends) {
    const part = st.partitions.find((x) => x.partition === p);
    if (part === undefined || part.next < end) return false;
  }
  return true;
}

/** Records still to read before every partition's `next` reaches its end offset. */
function remainingOf(st: SourceJson, ends: ReadonlyMap<number, number>): number {
  let n = 0;
  for (const [p, end] of ends)
    n += Math.max(0, end - (st.partitions.find((x) => x.partition === p)?.next ?? 0));
  return n;
}

interface CatchUp {
  events_per_s: number;
  steady_events_per_s: number;
  seconds: number;
  first_batch_ms: number;
  server_cpu_s: number;
  events_per_server_cpu_s: number;
  batches: number;
  rows_per_batch: number;
  /** From /metrics over the window: checkpoints written, their time and bytes. */
  metrics: ServerMetrics;
  /** process.hrtime (ns) at the window's ends, to cut the server's CPU profile to it. */
  window_ns: [bigint, bigint];
}

async function catchUp(
  s: Server,
  brokers: string,
  f: Flags,
  maxBatchMs: number | null,
  ends: ReadonlyMap<number, number>,
): Promise<CatchUp> {
  const m0 = await serverMetrics(s);
  const cpu0 = cpuSeconds(s.child.pid);
  const w0 = process.hrtime.bigint();
  const t0 = hrMs();
  await sql(s, pipelineSql(brokers, f, maxBatchMs));
  let first = 0;
  let st = await sourceStatus(s);
  const deadline = t0 + 30 * 60_000;
  while (!caughtUp(st, ends)) {
    if (st.state === 'failed') throw new Error(`source failed: ${JSON.stringify(st.error)}`);
    if (hrMs() > deadline) throw new Error(`not caught up after 30 min: ${JSON.stringify(st)}`);
    // Every 10 ms up to the first batch and near the end, less often while much is left: a server that
    // answers requests between its batches spends some of its thread on each poll, the raw peer none.
    // remaining / 2,000 ms is under the time left at any rate below 2,000,000 events/s.
    await sleep(first === 0 ? 10 : Math.min(100, Math.max(10, remainingOf(st, ends) / 2000)));
    st = await sourceStatus(s);
    if (first === 0 && st.recordsIn > 0) first = hrMs();
  }
  const t1 = hrMs();
  const w1 = process.hrtime.bigint();
  const cpu = cpuSeconds(s.child.pid) - cpu0;
  const metrics = metricsDelta(m0, await serverMetrics(s));
  const n = [...ends.values()].reduce((a, b) => a + b, 0);
  return {
    events_per_s: Math.round(n / ((t1 - t0) / 1000)),
    steady_events_per_s: Math.round(n / ((t1 - (first || t0)) / 1000)),
    seconds: round2((t1 - t0) / 1000),
    first_batch_ms: Math.round((first || t1) - t0),
    server_cpu_s: round2(cpu),
    events_per_server_cpu_s: Math.round(n / cpu),
    batches: st.batches,
    rows_per_batch: Math.round(st.recordsIn / Math.max(1, st.batches)),
    metrics,
    window_ns: [w0, w1],
  };
}

interface ViewRows<R> {
  epoch: number;
  total: number;
  rows: R[];
}

/** Every row of a view, page by page (a page holds at most 10,000 rows). */
async function viewRows<R>(s: Server, view: string): Promise<ViewRows<R>> {
  let all: ViewRows<R> | null = null;
  let after: string | null = null;
  do {
    const q: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const r = await fetch(`${s.base}/v1/views/${view}/rows?limit=10000${q}`);
    if (r.status !== 200) throw new Error(`rows of ${view}: ${r.status} ${await r.text()}`);
    const page = (await r.json()) as ViewRows<R> & { next: string | null };
    if (all === null) all = { epoch: page.epoch, total: page.total, rows: page.rows };
    else if (page.epoch !== all.epoch) throw new Error(`rows of ${view}: epoch moved while paging`);
    else all.rows.push(...page.rows);
    after = page.next;
  } while (after !== null);
  return all;
}

/** Checks both views against the expected values; returns a short account (throws on a difference). */
async function verify(s: Server, exp: Expected): Promise<string> {
  const st = await sourceStatus(s);
  if (st.recordsIn !== exp.orders)
    throw new Error(`source read ${st.recordsIn} records, expected ${exp.orders}`);
  const totals = await viewRows<{ seller_id: number; total: number | string }>(s, 'seller_totals');
  if (totals.total !== exp.totals.size)
    throw new Error(`seller_totals has ${totals.total} rows, expected ${exp.totals.size}`);
  let sum = 0;
  for (const r of totals.rows) {
    const t = Number(r.total);
    sum += t;
    if (exp.totals.get(r.seller_id) !== t)
      throw new Error(`seller ${r.seller_id}: total ${t}, expected ${exp.totals.get(r.seller_id)}`);
  }
  if (sum !== exp.amountSum) throw new Error(`Σ total ${sum}, expected ${exp.amountSum}`);
  const hist = await viewRows<{ bucket: number; sellers: number | string }>(s, 'total_histogram');
  const got = new Map(hist.rows.map((r) => [Number(r.bucket), Number(r.sellers)]));
  const expEntries = [...exp.histogram.entries()].sort((a, b) => a[0] - b[0]);
  const gotEntries = [...got.entries()].sort((a, b) => a[0] - b[0]);
  if (JSON.stringify(expEntries) !== JSON.stringify(gotEntries))
    throw new Error(`total_histogram differs: ${JSON.stringify(gotEntries).slice(0, 300)}`);
  const sellersInHist = gotEntries.reduce((a, [, n]) => a + n, 0);
  if (sellersInHist !== exp.totals.size) throw new Error(`histogram counts ${sellersInHist} sellers`);
  return `ok: ${fmt(st.recordsIn)} records, ${fmt(totals.total)} sellers, Σ total ${fmt(sum)}, ${gotEntries.length} histogram buckets (Σ ${fmt(sellersInHist)} sellers)`;
}

// ---- latency -------------------------------------------------------------------------------------

interface Latency {
  max_batch_ms: number;
  rate: number;
  seconds: number;
  produced: number;
  delivered: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
  produce_ack_p50_ms: number;
  produce_ack_p99_ms: number;
  /** Orders produced in the phase's second half only (later than any stall right after catch-up). */
  late_half_p50_ms: number;
  late_half_p99_ms: number;
  /** When the slowest order was produced, seconds into the phase. */
  max_at_s: number;
  over_1s: number;
  server_cpu_s: number;
  metrics: ServerMetrics;
}

async function latency(
  s: Server,
  producer: Producer,
  f: Flags,
  maxBatchMs: number,
  firstSeller: number,
): Promise<Latency> {
  const sent = new Map<number, number>();
  /** Produce request → broker ack, per batch (part of produce → delivery). */
  const acks: number[] = [];
  const arrived = new Map<number, number>();
  const ws = new WebSocket(`ws://127.0.0.1:${s.port}/v1/views/seller_totals/subscribe?snapshot=false`);
  ws.on('message', (data) => {
    const now = hrMs();
    const text = String(data);
    if (!text.startsWith('{"type":"changes"')) return;
    const m = JSON.parse(text) as { changes: { op: string; row: { seller_id: number } }[] };
    for (const c of m.changes) {
      const id = c.row.seller_id;
      if (id >= LATENCY_SELLER_BASE && (c.op === '+I' || c.op === '+U') && !arrived.has(id))
        arrived.set(id, now);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  // Ticks of 10 ms, rate/100 orders per tick, one small batch per tick (acks=-1, not awaited in line).
  const perTick = Math.max(1, Math.round(f.latencyRate / 100));
  const ticks = Math.round(f.latencySeconds * 100);
  const m0 = await serverMetrics(s);
  const cpu0 = cpuSeconds(s.child.pid);
  const pending: Promise<unknown>[] = [];
  let seller = firstSeller;
  let orderId = LATENCY_ORDER_BASE + firstSeller - LATENCY_SELLER_BASE;
  const t0 = hrMs();
  for (let i = 0; i < ticks; i++) {
    const wait = t0 + i * 10 - hrMs();
    if (wait > 0) await sleep(wait);
    const messages: { partition: number; value: string }[] = [];
    const now = hrMs();
    for (let k = 0; k < perTick; k++) {
      const id = seller++;
      sent.set(id, now);
      messages.push({
        partition: id % f.partitions,
        value: JSON.stringify({ order_id: orderId++, seller_id: id, amount: 1 + (id % 100) }),
      });
    }
    pending.push(producer.send({ topic: TOPIC, acks: -1, messages }).then(() => acks.push(hrMs() - now)));
  }
  await Promise.all(pending);
  const until = hrMs() + 10_000;
  while (arrived.size < sent.size && hrMs() < until) await sleep(5);
  const cpu = cpuSeconds(s.child.pid) - cpu0;
  const metrics = metricsDelta(m0, await serverMetrics(s));
  ws.close();
  const lat: number[] = [];
  const late: number[] = [];
  const half = t0 + (ticks * 10) / 2;
  let maxLat = -1;
  let maxAt = NaN;
  for (const [id, t] of sent) {
    const a = arrived.get(id);
    if (a === undefined) continue;
    lat.push(a - t);
    if (t >= half) late.push(a - t);
    if (a - t > maxLat) {
      maxLat = a - t;
      maxAt = (t - t0) / 1000;
    }
  }
  late.sort((a, b) => a - b);
  lat.sort((a, b) => a - b);
  acks.sort((a, b) => a - b);
  const pctOf = (xs: number[], p: number): number =>
    round2(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN);
  const pct = (p: number): number => pctOf(lat, p);
  return {
    max_batch_ms: maxBatchMs,
    rate: perTick * 100,
    seconds: f.latencySeconds,
    produced: sent.size,
    delivered: lat.length,
    p50_ms: pct(50),
    p95_ms: pct(95),
    p99_ms: pct(99),
    max_ms: round2(lat[lat.length - 1] ?? NaN),
    mean_ms: round2(lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length)),
    produce_ack_p50_ms: pctOf(acks, 50),
    produce_ack_p99_ms: pctOf(acks, 99),
    late_half_p50_ms: pctOf(late, 50),
    late_half_p99_ms: pctOf(late, 99),
    max_at_s: round2(maxAt),
    over_1s: lat.filter((x) => x > 1000).length,
    server_cpu_s: round2(cpu),
    metrics,
  };
}

// ---- CPU profile summary -------------------------------------------------------------------------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

interface ProfileSummary {
  file: string;
  window: 'catch-up' | 'whole process';
  sampled_ms: number;
  top: { fn: string; self_ms: number; pct: number }[];
  categories: { category: string; self_ms: number; pct: number }[];
}

function category(fn: string, url: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('node_modules/kafkajs/')) return 'kafkajs (fetch, decode, protocol)';
  if (url.includes('/src/storage/checkpoint-store')) return 'checkpoint writes (state → SQLite)';
  if (url.includes('/src/storage/table-log')) return 'journal (source batches → SQLite)';
  if (url.includes('/src/storage/changelog')) return 'changelog (encode + store)';
  if (url.includes('node_modules/better-sqlite3/') || url.includes('/src/server/store'))
    return 'SQLite (better-sqlite3 JS, store)';
  // The files that moved out of src/source and src/ivm keep their categories, so results stay
  // comparable with the earlier ones in bench/README.md.
  if (url.includes('/src/source/') || /\/src\/(common\/json-codec|storage\/)/.test(url))
    return 'source: Kafka runner, decoder, JSON';
  if (
    url.includes('/src/exec/') ||
    url.includes('/src/ivm/') ||
    url.includes('/src/planner/') ||
    /\/src\/common\/(values|cast|scalar-expr)\./.test(url)
  )
    return 'engine (apply, validate, views)';
  if (url.includes('/src/server/')) return 'server (runtime, journal, changelog, ws)';
  if (url.includes('node_modules/')) return `other deps (${/node_modules\/([^/]+)/.exec(url)?.[1] ?? '?'})`;
  if (url.startsWith('node:')) return 'node core';
  if (url === '') return `builtins (${fn || 'anonymous'})`;
  return 'other';
}

function summariseProfile(file: string, window: [bigint, bigint] | null, top: number): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  // V8 profile timestamps are CLOCK_MONOTONIC µs, like process.hrtime: cut to the catch-up window.
  const from = window === null ? -Infinity : Number(window[0] / 1000n);
  const to = window === null ? Infinity : Number(window[1] / 1000n);
  const self = new Map<number, number>();
  let t = prof.startTime;
  let inWindow = 0;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t < from || t > to) continue;
    inWindow++;
    const id = samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0));
  }
  if (window !== null && inWindow < samples.length * 0.05) return summariseProfile(file, null, top);
  const byFn = new Map<string, number>();
  const byCat = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id) as ProfileNode;
    const url = n.callFrame.url.replace(/^file:\/\//, '');
    const short = url.includes('/node_modules/')
      ? url.replace(/^.*?\/node_modules\//, '')
      : url.replace(/^.*\/(src|bench)\//, '$1/');
    const name = `${n.callFrame.functionName || '(anonymous)'} ${short}`.trim();
    byFn.set(name, (byFn.get(name) ?? 0) + us);
    const cat = category(n.callFrame.functionName, url);
    byCat.set(cat, (byCat.get(cat) ?? 0) + us);
    total += us;
  }
  const rows = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    file,
    window: window === null ? 'whole process' : 'catch-up',
    sampled_ms: Math.round(total / 1000),
    top: rows(byFn)
      .slice(0, top)
      .map(([fn, us]) => ({ fn, self_ms: Math.round(us / 1000), pct: round2((us / total) * 100) })),
    categories: rows(byCat).map(([c, us]) => ({
      category: c,
      self_ms: Math.round(us / 1000),
      pct: round2((us / total) * 100),
    })),
  };
}

// ---- main ----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const f = parseFlags(process.argv.slice(2));
  const load0 = loadavg();
  console.error(`loadavg before: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const rows = generateRows({
    dist: f.dist,
    sellers: f.sellers,
    events: f.orders,
    seed: 20111111,
    zipfS: 1.1,
  });
  const exp = expectedOf(rows);
  const broker: Broker = await startBroker({ log: (m) => console.error(`[kafka] ${m}`) });
  const servers: Server[] = [];
  let latencyProducer: Producer | null = null;
  const raw: RawResult[] = [];
  const catchUps: (CatchUp & { max_batch_ms: number | null; verified: string; tree: string | null })[] = [];
  const latencies: Latency[] = [];
  let profile = null as ProfileSummary | null;
  let profileError: string | undefined;
  let produce: { msgs_per_s: number; seconds: number };
  try {
    const admin = kjs(broker.brokers, 'bench-admin').admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: TOPIC, numPartitions: f.partitions }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    console.error(`producing ${fmt(f.orders)} orders (${f.dist}, ${fmt(f.sellers)} sellers), acks=-1 …`);
    produce = await produceAll(broker.brokers, rows, f);
    console.error(`  ${fmt(produce.msgs_per_s)} msg/s, ${produce.seconds} s`);
    const ends = await endOffsets(broker.brokers);
    const endSum = [...ends.values()].reduce((a, b) => a + b, 0);
    if (endSum !== f.orders) throw new Error(`topic holds ${endSum} records, expected ${f.orders}`);

    // Peer first (round 1), then Sluice, then the peer again (round 2): neither gets only a warm cache.
    const runRaw = async (): Promise<void> => {
      const r = await rawConsume(broker.brokers, exp);
      raw.push(r);
      console.error(
        `raw kafkajs: ${fmt(r.msgs_per_s)} msg/s (steady ${fmt(r.steady_msgs_per_s)}, join ${r.join_ms} ms, ${r.cpu_s} CPU-s)`,
      );
    };
    console.error(`warm-up consumer group: joined and read a fetch in ${await warmUp(broker.brokers)} ms`);
    await runRaw();

    latencyProducer = kjs(broker.brokers, 'bench-latency').producer({ allowAutoTopicCreation: false });
    await latencyProducer.connect();
    let nextSeller = LATENCY_SELLER_BASE;
    let profileDir: string | null = null;
    if (f.cpuProfile !== null) {
      mkdirSync(f.cpuProfile, { recursive: true });
      profileDir = mkdtempSync(join(f.cpuProfile, 'server-'));
    }
    const readProfile = (c: CatchUp): void => {
      if (profileDir === null) return;
      try {
        // One file per thread; the main thread's is the big one.
        const files = readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile'));
        const size = (x: string) => statSync(join(profileDir as string, x)).size;
        const file = files.sort((a, b) => size(b) - size(a))[0];
        if (file === undefined) throw new Error(`no .cpuprofile in ${profileDir}`);
        profile = summariseProfile(join(profileDir, file), c.window_ns, 15);
      } catch (error) {
        profileError = error instanceof Error ? error.message : String(error);
      }
    };
    // Paired A/B: this checkout's server and the other's catch up alternately on the same topic.
    const abRuns =
      f.ab === null ? [] : Array.from({ length: f.abRounds }, () => [ownRoot, f.ab as string]).flat();
    for (const [i, root] of abRuns.entries()) {
      const own = i % 2 === 0;
      const tree = own
        ? `A (this tree${f.aNodeFlags.length > 0 ? ` ${f.aNodeFlags.join(' ')}` : ''})`
        : `B (${root})`;
      const s = await startServer(i === 0 ? profileDir : null, root, own ? f.aNodeFlags : []);
      servers.push(s);
      const abMs = f.abMaxBatchMs[own ? 0 : 1];
      const abRows = f.abMaxBatchRows[own ? 0 : 1];
      const c = await catchUp(
        s,
        broker.brokers,
        abRows === null ? f : { ...f, maxBatchRows: abRows },
        abMs,
        ends,
      );
      const verified = await verify(s, exp);
      catchUps.push({ ...c, max_batch_ms: abMs, verified, tree });
      console.error(
        `sluice ${tree}: ${fmt(c.events_per_s)} events/s (steady ${fmt(c.steady_events_per_s)}), ` +
          `${c.seconds} s, ${c.server_cpu_s} server CPU-s, ${fmt(c.events_per_server_cpu_s)} ev/CPU-s${abMs === null ? '' : ` (max_batch_ms ${abMs})`}${abRows === null ? '' : ` (max_batch_rows ${abRows})`}; ${verified}; ` +
          `window ${Number(c.window_ns[0]) / 1e6}–${Number(c.window_ns[1]) / 1e6} ms, pid ${s.child.pid}; ` +
          `loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
      );
      await stopServer(s);
      servers.pop();
      if (i === 0) readProfile(c);
    }
    for (const maxBatchMs of f.ab === null ? ([null, 10] as const) : []) {
      const s = await startServer(maxBatchMs === null ? profileDir : null);
      servers.push(s);
      // Each server reads the whole topic: the 2nd also reads the latency orders the 1st produced.
      const endsNow = await endOffsets(broker.brokers);
      const c = await catchUp(s, broker.brokers, f, maxBatchMs, endsNow);
      const expNow = nextSeller === LATENCY_SELLER_BASE ? exp : null;
      const verified =
        expNow !== null ? await verify(s, expNow) : await verifyWithLatency(s, exp, nextSeller);
      catchUps.push({ ...c, max_batch_ms: maxBatchMs, verified, tree: null });
      console.error(
        `sluice (max_batch_ms ${maxBatchMs ?? 'default'}): ${fmt(c.events_per_s)} events/s (steady ${fmt(c.steady_events_per_s)}), ` +
          `${c.seconds} s, ${c.server_cpu_s} server CPU-s, ${fmt(c.events_per_server_cpu_s)} ev/CPU-s; ${verified}`,
      );
      const l = await latency(s, latencyProducer, f, maxBatchMs ?? 100, nextSeller);
      nextSeller += l.produced;
      latencies.push(l);
      console.error(
        `latency (max_batch_ms ${l.max_batch_ms}): p50 ${l.p50_ms} ms, p95 ${l.p95_ms}, p99 ${l.p99_ms}, max ${l.max_ms} (${l.delivered}/${l.produced})`,
      );
      await stopServer(s);
      servers.pop();
      if (maxBatchMs === null) readProfile(c);
    }
    if (f.rawRounds > 1) await runRaw();
  } finally {
    await latencyProducer?.disconnect().catch(() => undefined);
    for (const s of servers) await stopServer(s).catch(() => undefined);
    await broker.stop();
  }
  const load1 = loadavg();
  const loadText1 = readFileSync('/proc/loadavg', 'utf8').trim();
  const bestRaw = raw.reduce((a, b) => (b.msgs_per_s > a.msgs_per_s ? b : a));
  const first = catchUps[0] as CatchUp;
  const summary = {
    bench: 'kafka-e2e',
    kafka: KAFKA_VERSION,
    node: process.version,
    orders: f.orders,
    partitions: f.partitions,
    dist: f.dist,
    sellers: f.sellers,
    primary_key: f.pk,
    max_batch_rows: f.maxBatchRows,
    loadavg_before: load0.map(round2),
    loadavg_after: load1.map(round2),
    produce,
    sluice: catchUps.map(({ window_ns: _w, ...c }) => c),
    raw_kafkajs: raw,
    ratio_sluice_raw: round2(first.events_per_s / bestRaw.msgs_per_s),
    ratio_sluice_raw_cpu: round2(first.events_per_server_cpu_s / bestRaw.msgs_per_cpu_s),
    target_events_per_s: TARGET,
    latency: latencies,
    ...(profile !== null ? { profile } : {}),
    ...(profileError !== undefined ? { profile_error: profileError } : {}),
  };
  console.log('');
  console.log(
    `Kafka ${KAFKA_VERSION}, ${fmt(f.orders)} JSON orders (${f.dist} over ${fmt(f.sellers)} sellers), ${f.partitions} partitions, ` +
      `max_batch_rows ${f.maxBatchRows}, PK ${f.pk ? 'on' : 'off'}, node ${process.version}`,
  );
  console.log(`loadavg before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${loadText1}`);
  console.log(`produce (kafkajs, acks=-1, batches of ${f.produceBatch}): ${fmt(produce.msgs_per_s)} msg/s`);
  console.log('');
  console.log('consumer                        events/s   steady ev/s   seconds    CPU-s   ev/CPU-s');
  for (const c of catchUps) {
    console.log(
      `${(c.tree ?? `sluice (max_batch_ms ${c.max_batch_ms ?? 100})`).slice(0, 28).padEnd(28)} ${fmt(c.events_per_s).padStart(12)} ${fmt(c.steady_events_per_s).padStart(13)} ${String(c.seconds).padStart(9)} ${String(c.server_cpu_s).padStart(8)} ${fmt(c.events_per_server_cpu_s).padStart(10)}`,
    );
  }
  raw.forEach((r, i) =>
    console.log(
      `${`raw kafkajs (round ${i + 1})`.padEnd(28)} ${fmt(r.msgs_per_s).padStart(12)} ${fmt(r.steady_msgs_per_s).padStart(13)} ${String(r.seconds).padStart(9)} ${String(r.cpu_s).padStart(8)} ${fmt(r.msgs_per_cpu_s).padStart(10)}`,
    ),
  );
  for (const c of catchUps) {
    const m = c.metrics;
    console.log(
      `  sluice (max_batch_ms ${c.max_batch_ms ?? 100}) during catch-up: ${c.batches} batches; ` +
        `${m.checkpoints} checkpoints took ${m.checkpoint_s} s (${fmt(m.checkpoint_bytes / 1e6)} MB written)`,
    );
  }
  console.log(
    `sluice / raw (best): ${summary.ratio_sluice_raw}× wall, ${summary.ratio_sluice_raw_cpu}× per CPU-s; target ${fmt(TARGET)} events/s: ${first.events_per_s >= TARGET ? 'met' : 'missed'}`,
  );
  console.log('');
  console.log(
    'latency (produce → WebSocket, ms)   p50      p95      p99      max   delivered   produce ack p50/p99',
  );
  for (const l of latencies) {
    console.log(
      `max_batch_ms ${String(l.max_batch_ms).padEnd(4)} @ ${l.rate}/s`.padEnd(34) +
        `${String(l.p50_ms).padStart(7)}  ${String(l.p95_ms).padStart(7)}  ${String(l.p99_ms).padStart(7)}  ${String(l.max_ms).padStart(7)}   ${`${l.delivered}/${l.produced}`.padEnd(11)} ${l.produce_ack_p50_ms}/${l.produce_ack_p99_ms}`,
    );
  }
  console.log('latency, second half only       p50      p99   >1 s   slowest sent at   checkpoints in phase');
  for (const l of latencies) {
    console.log(
      `max_batch_ms ${String(l.max_batch_ms)}`.padEnd(30) +
        `${String(l.late_half_p50_ms).padStart(7)}  ${String(l.late_half_p99_ms).padStart(7)}  ${String(l.over_1s).padStart(5)}   ${`${l.max_at_s} s`.padStart(15)}   ${l.metrics.checkpoints} (${l.metrics.checkpoint_s} s)`,
    );
  }
  if (profile !== null) {
    console.log('');
    console.log(`CPU profile (${profile.window}, ${fmt(profile.sampled_ms)} ms sampled): ${profile.file}`);
    for (const c of profile.categories)
      console.log(`  ${c.pct.toFixed(1).padStart(5)}%  ${String(c.self_ms).padStart(6)} ms  ${c.category}`);
    console.log('  top functions by self time:');
    for (const t of profile.top)
      console.log(`  ${t.pct.toFixed(1).padStart(5)}%  ${String(t.self_ms).padStart(6)} ms  ${t.fn}`);
  }
  if (profileError !== undefined) console.log(`profile: ${profileError}`);
  console.log(`RESULT ${JSON.stringify(summary)}`);
}

/** The second server also read the first latency phase's orders (one new seller each, amount 1 + id % 100). */
async function verifyWithLatency(s: Server, exp: Expected, sellersEnd: number): Promise<string> {
  const totals = new Map(exp.totals);
  const histogram = new Map(exp.histogram);
  let amountSum = exp.amountSum;
  let orders = exp.orders;
  for (let id = LATENCY_SELLER_BASE; id < sellersEnd; id++) {
    const amount = 1 + (id % 100);
    totals.set(id, amount);
    amountSum += amount;
    orders++;
    const b = Math.floor(amount / 10);
    histogram.set(b, (histogram.get(b) ?? 0) + 1);
  }
  return verify(s, { orders, amountSum, orderIdSum: NaN, totals, histogram });
}

await main();
