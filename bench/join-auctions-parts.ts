// The join bench's auctions phase (100,000 auctions into the keyed table the agg view joins, the bids
// side empty), with parts of the view's per-epoch work taken out one at a time, in one process: what
// each part costs there, by difference. join-auctions-floor.ts splits the phase into the table's
// insert and the view; this splits the view. The parts (each replaces one method for its runs only,
// restored after; results are not checked and may be wrong while a part is out):
//   table    no view (the table's insert alone: the floor)
//   view     the agg view as it is
//   -count   the write's row-free join count answers 0 (ViewGraph.joinRowsCeiling, before the epoch)
//   -join    the join's step returns an empty batch (JoinOp.step)
//   -reduce  the Reduce's step over an empty input returns an empty batch (it has GROUP BY keys)
//   -all     the three together
//   node --expose-gc --import tsx bench/join-auctions-parts.ts [--batch 100] [--rounds 15] [--parts table,view,-count,-join,-reduce,-all]
// (a list that starts with a dash is given as --parts=-count,view)
// Each round runs every part once on a fresh engine (the order reversed every other round), after the
// forced collection has settled (gc-settle.ts); CPU time of the inserts only, and the young-generation
// collections (scavenges) inside them: a count that does not depend on the machine's speed, where the
// garbage an epoch leaves shows. Prints one JSON line per round and the medians over every round after
// the first (which warms the JIT), with the load, and each part's CPU over all its runs split between the
// main thread and the others (V8's background compiles of the fresh engine's code land there).
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { Engine } from '../src/exec/engine.ts';
import { ViewGraph } from '../src/exec/view-graph.ts';
import { JoinOp } from '../src/ivm/ops/join-op.ts';
import { ReduceOp } from '../src/ivm/ops/reduce-op.ts';
import type { RowErrorSink } from '../src/ivm/operator.ts';
import { type ZBatch, emptyBatch } from '../src/ivm/zset.ts';
import { VARIANT_SQL } from './join-workload.ts';
import { cpuMs } from './arrangement-rows.ts';
import { collectAndSettle } from './gc-settle.ts';
import { AUCTION_TABLES_SQL, auctionBatches } from './join-auctions-input.ts';
import { cpuSplit, threadTicks } from './thread-cpu.ts';

const { values } = parseArgs({
  options: {
    auctions: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '15' },
    parts: { type: 'string', default: 'table,view,-count,-join,-reduce,-all' },
  },
});
const auctionCount = Number(values.auctions);
const BATCH = Number(values.batch);
const rounds = Number(values.rounds);
const PARTS = ['table', 'view', '-count', '-join', '-reduce', '-all'] as const;
type Part = (typeof PARTS)[number];
const parts = values.parts.split(',') as Part[];
for (const p of parts) if (!PARTS.includes(p)) throw new Error(`unknown part "${p}" (${PARTS.join(', ')})`);

const EMPTY: ZBatch = emptyBatch();
const original = {
  count: ViewGraph.prototype.joinRowsCeiling,
  join: JoinOp.prototype.step,
  reduce: ReduceOp.prototype.step,
};
/**
 * A Reduce with GROUP BY keys (`keyCount`: key columns) emits nothing for an empty input: only a global
 * aggregate's first step emits with none. So this part leaves the agg view's results as they are.
 */
function reduceSkippingEmpty(this: ReduceOp, inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
  return (inputs[0] as ZBatch).weights.length === 0 && this.keyCount > 0
    ? EMPTY
    : original.reduce.call(this, inputs, errors);
}

function takeOut(part: Part): void {
  const all = part === '-all';
  ViewGraph.prototype.joinRowsCeiling = all || part === '-count' ? () => 0 : original.count;
  JoinOp.prototype.step = all || part === '-join' ? () => EMPTY : original.join;
  ReduceOp.prototype.step = all || part === '-reduce' ? reduceSkippingEmpty : original.reduce;
}

/** Young-generation collections (scavenges) by start time: counted inside each run's timed window. */
const scavenges: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)
      scavenges.push(e.startTime);
}).observe({ entryTypes: ['gc'] });

/**
 * By part, CPU ms over every timed run on the main thread and on the others (V8's background compiler
 * and GC helpers), from /proc's 10 ms ticks: too coarse for one run, summed over the rounds.
 */
const threads = new Map<Part, { main: number; other: number }>();

/** One fresh engine's insert of every auction with `part` taken out: its CPU ms and scavenges. */
async function run(part: Part): Promise<{ ms: number; scavenges: number }> {
  takeOut(part);
  const engine = new Engine();
  engine.execute(AUCTION_TABLES_SQL);
  if (part !== 'table') engine.execute(`CREATE MATERIALIZED VIEW v AS ${VARIANT_SQL.agg}`);
  const input = auctionBatches(auctionCount, BATCH);
  const gc = globalThis.gc;
  if (gc !== undefined) await collectAndSettle(gc);
  const ticks = threadTicks();
  const since = process.cpuUsage();
  const start = performance.now();
  for (const b of input) engine.applyChanges('auctions', b);
  const ms = cpuMs(since);
  const end = performance.now();
  const split = cpuSplit(ticks, threadTicks());
  if (split !== null) {
    const sum = threads.get(part) ?? { main: 0, other: 0 };
    sum.main += split.main_ms;
    sum.other += split.busiest_other_ms + split.rest_ms;
    threads.set(part, sum);
  }
  engine.close();
  takeOut('view');
  // The observer hears of a collection after it: wait for the last ones.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const inside = scavenges.filter((t) => t >= start && t <= end).length;
  scavenges.length = 0;
  return { ms, scavenges: inside };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const times = new Map<Part, number[]>(parts.map((p) => [p, []]));
const minors = new Map<Part, number[]>(parts.map((p) => [p, []]));
for (let round = 0; round < rounds; round++) {
  const ms = new Map<Part, { ms: number; scavenges: number }>();
  for (const part of round % 2 === 0 ? parts : [...parts].reverse()) ms.set(part, await run(part));
  if (round > 0)
    for (const [part, t] of ms) {
      times.get(part)?.push(t.ms);
      minors.get(part)?.push(t.scavenges);
    }
  const line: Record<string, unknown> = { bench: 'join-auctions-parts', round, batch: BATCH };
  for (const part of parts) {
    const t = ms.get(part) as { ms: number; scavenges: number };
    line[`${part}_ms`] = round1(t.ms);
    line[`${part}_scavenges`] = t.scavenges;
  }
  line.loadavg = loadavg().map(round1);
  console.log(JSON.stringify(line));
}
const summary: Record<string, unknown> = {
  bench: 'join-auctions-parts',
  batch: BATCH,
  auctions: auctionCount,
};
for (const part of parts) {
  summary[`median_${part}_ms`] = round1(median(times.get(part) as number[]));
  summary[`median_${part}_scavenges`] = median(minors.get(part) as number[]);
  const split = threads.get(part);
  if (split !== undefined) {
    summary[`${part}_main_thread_ms_all_runs`] = split.main;
    summary[`${part}_other_threads_ms_all_runs`] = split.other;
  }
}
summary.loadavg = loadavg().map(round1);
console.log(JSON.stringify(summary));
