// kafka-e2e.ts's server side: a Sluice server as a child process, the pipeline's SQL, catching up
// on the topic (timed, with the server's CPU and /metrics) and checking the views exactly.
import { join } from 'node:path';
import {
  fmt,
  hrMs,
  LATENCY_SELLER_BASE,
  round2,
  sleep,
  TOPIC,
  type Expected,
  type Flags,
} from './kafka-e2e-args.ts';
import { processCpuSeconds, spawnServer, type ServerChild } from './server-child.ts';

export interface Server extends Omit<ServerChild, 'port'> {
  base: string;
  port: number;
}

export const ownRoot = new URL('..', import.meta.url).pathname;

/** A server of the checkout at `root` (this one by default; `--ab` names another). */
export async function startServer(
  profileDir: string | null,
  root: string = ownRoot,
  nodeFlags: readonly string[] = [],
): Promise<Server> {
  const prof = profileDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir];
  const server = spawnServer({
    cli: join(root, 'src/cli.ts'),
    nodeArgs: [...nodeFlags, ...prof],
    logLevel: 'warn',
    tempPrefix: 'sluice-kafka-e2e-',
  });
  const port = await server.port;
  return { ...server, base: `http://127.0.0.1:${port}`, port };
}

export async function sql(s: Server, text: string): Promise<unknown> {
  const r = await fetch(`${s.base}/v1/sql`, {
    method: 'POST',
    body: JSON.stringify({ sql: text }),
    headers: { 'content-type': 'application/json' },
  });
  const body = await r.text();
  if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${body}`);
  return JSON.parse(body) as unknown;
}

export function pipelineSql(brokers: string, f: Flags, maxBatchMs: number | null): string {
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
export interface ServerMetrics {
  checkpoints: number;
  checkpoint_s: number;
  checkpoint_bytes: number;
}

export async function serverMetrics(s: Server): Promise<ServerMetrics> {
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

export function metricsDelta(a: ServerMetrics, b: ServerMetrics): ServerMetrics {
  return {
    checkpoints: b.checkpoints - a.checkpoints,
    checkpoint_s: round2(b.checkpoint_s - a.checkpoint_s),
    checkpoint_bytes: b.checkpoint_bytes - a.checkpoint_bytes,
  };
}

export interface SourceJson {
  state: string;
  error: unknown;
  recordsIn: number;
  batches: number;
  partitions: { partition: number; next: number; high: number | null }[];
}

export async function sourceStatus(s: Server): Promise<SourceJson> {
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

export function caughtUp(st: SourceJson, ends: ReadonlyMap<number, number>): boolean {
  for (const [p, end] of ends) {
    const part = st.partitions.find((x) => x.partition === p);
    if (part === undefined || part.next < end) return false;
  }
  return true;
}

/** Records still to read before every partition's `next` reaches its end offset. */
export function remainingOf(st: SourceJson, ends: ReadonlyMap<number, number>): number {
  let n = 0;
  for (const [p, end] of ends)
    n += Math.max(0, end - (st.partitions.find((x) => x.partition === p)?.next ?? 0));
  return n;
}

export interface CatchUp {
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

export async function catchUp(
  s: Server,
  brokers: string,
  f: Flags,
  maxBatchMs: number | null,
  ends: ReadonlyMap<number, number>,
): Promise<CatchUp> {
  const m0 = await serverMetrics(s);
  const cpu0 = processCpuSeconds(s.child.pid);
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
  const cpu = processCpuSeconds(s.child.pid) - cpu0;
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

export interface ViewRows<R> {
  epoch: number;
  total: number;
  rows: R[];
}

/** Every row of a view, page by page (a page holds at most 10,000 rows). */
export async function viewRows<R>(s: Server, view: string): Promise<ViewRows<R>> {
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
export async function verify(s: Server, exp: Expected): Promise<string> {
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

/** The second server also read the first latency phase's orders (one new seller each, amount 1 + id % 100). */
export async function verifyWithLatency(s: Server, exp: Expected, sellersEnd: number): Promise<string> {
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
