// The fold of the join bench's bids into the bids-by-auction arrangement (what the shared
// arrangement does each epoch of bench/join.ts's bids phase), of two trees, interleaved in one
// process: each run folds the same bids, in batches of 10,000, into a fresh arrangement of each tree
// in turn (keeping the amount column, as the agg view's join asks), which tree goes first
// alternating run by run; CPU time of the fold only (the adds, and `warm` where it runs). Fresh row arrays per batch, as a table's insert
// hands them over, not one array allocated up front. On this shared, loaded machine two processes' CPU figures
// move ±30%; interleaved, both sides see the same caches and neighbours.
//   node --expose-gc --import tsx bench/join-fold-ab.ts [--base ../sluice-base] [--auctions 100000]
//     [--bids 1000000] [--runs 10] [--batch 10000]
// A tree whose JoinArrangement has `warm` reads a batch's records ahead of its adds, as the shared
// fold does, when the batch is at most its WARM_MAX_ROWS (`--batch 100` compares that).
// Prints one JSON line per run (base ÷ this tree's CPU time: above 1, this tree faster) and the
// ratio of the sums over every run after the first (which warms the JIT).
// `--retract K` times instead the retraction of K of the folded rows (scattered, in the same
// batches), as the mutations phase's deletes and moves: a tree whose `warm` takes the batch's rows
// reads the retracted rows' cells ahead too (`--retract 100000 --batch 100`).
// `--side auctions` folds the auctions instead, into the join's own auctions-by-id arrangement (the
// key is the row's first column; the category column kept): the agg bench's auctions phase.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next). `--base .` loads this
// tree's modules once, shared by both sides: an A/A needs a second copy of the tree.
// First, so that a process without it runs itself again with it before anything else.
import './ab-checkouts.ts';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import type { Value } from '../src/common/types.ts';
import { auctionRow, bidRow, cpuMs, seededInts } from './arrangement-rows.ts';

type ArrangementModule = typeof import('../src/ivm/join-arrangement.ts');
/** `warm` as a tree that also reads a batch's retractions ahead would take it (others ignore the rows). */
type Warm = (
  keys: readonly number[],
  n: number,
  rows: readonly Value[][],
  weights: readonly number[],
) => void;

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '../sluice-base' },
    auctions: { type: 'string', default: '100000' },
    bids: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '10' },
    side: { type: 'string', default: 'bids' },
    batch: { type: 'string', default: '10000' },
    retract: { type: 'string', default: '0' },
  },
});
const auctionCount = Number(values.auctions);
const bidCount = Number(values.bids);
const runs = Number(values.runs);
const auctionSide = values.side === 'auctions';
const rowCount = auctionSide ? auctionCount : bidCount;
const keyAt = auctionSide ? 0 : 1;
const BATCH = Number(values.batch);
const retractCount = Math.min(Number(values.retract), rowCount);
const trees = [resolve(values.base), resolve('.')];
// Two module instances even for `--base .` (the A/A): a query string makes a second one.
const modules = [
  (await import(`${trees[0]}/src/ivm/join-arrangement.ts?side=base`)) as ArrangementModule,
  (await import(`${trees[1]}/src/ivm/join-arrangement.ts?side=this`)) as ArrangementModule,
];

/**
 * One tree's fold of every bid (or auction), batch by batch, fresh rows each batch; its CPU ms. With
 * `--retract K`, the time of retracting K of them afterwards instead (the fold untimed).
 */
function fold(m: ArrangementModule): { ms: number; size: number } {
  const int = seededInts(); // the same bids each time
  const a = new m.JoinArrangement('bids', 'S', String);
  a.keepColumns([auctionSide ? 2 : 3]);
  const weights = new Array<number>(BATCH).fill(1);
  const keys: number[] = [];
  const warmMaxRows = (m as { WARM_MAX_ROWS?: number }).WARM_MAX_ROWS ?? 0;
  // The rows folded, kept for the retractions: a delete hands over the very row object held.
  const all: Value[][] = [];
  let ms = 0;
  const apply = (rows: readonly Value[][], w: readonly number[], timed: boolean): void => {
    const since = process.cpuUsage();
    // As the shared fold does for a small batch: its keys' records read ahead (a tree without
    // `warm` adds straight away; a tree whose `warm` takes no rows ignores them).
    if (a.warm !== undefined && rows.length <= warmMaxRows) {
      for (let i = 0; i < rows.length; i++) keys[i] = (rows[i] as Value[])[keyAt] as number;
      keys.length = rows.length;
      (a.warm as Warm).call(a, keys, rows.length, rows, w);
    }
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Value[];
      a.add(row[keyAt] as number, row, w[i] as number, 0);
    }
    if (timed) ms += cpuMs(since);
  };
  for (let start = 0; start < rowCount; start += BATCH) {
    const rows: Value[][] = [];
    for (let id = start + 1; id <= Math.min(rowCount, start + BATCH); id++)
      rows.push(auctionSide ? auctionRow(id, int) : bidRow(id, auctionCount, int));
    if (retractCount > 0) for (const row of rows) all.push(row);
    apply(rows, weights, retractCount === 0);
  }
  // Retractions in a scattered order (a stride coprime with the row count), as the mutations
  // phase deletes and moves bids picked at random.
  const minus = new Array<number>(BATCH).fill(-1);
  for (let start = 0; start < retractCount; start += BATCH) {
    const rows: Value[][] = [];
    for (let j = start; j < Math.min(retractCount, start + BATCH); j++)
      rows.push(all[(j * 104_729) % rowCount] as Value[]);
    apply(rows, minus, true);
  }
  return { ms, size: a.size };
}

const sums = [0, 0];
for (let run = 0; run < runs; run++) {
  const ms = [0, 0];
  const sizes = [0, 0];
  // Which tree folds first alternates run by run; each starts from a collected heap.
  for (const s of run % 2 === 0 ? [0, 1] : [1, 0]) {
    globalThis.gc?.();
    const r = fold(modules[s] as ArrangementModule);
    ms[s] = r.ms;
    sizes[s] = r.size;
  }
  if (sizes[0] !== sizes[1]) throw new Error('the trees hold different rows');
  if (run > 0) for (const s of [0, 1]) sums[s] = (sums[s] as number) + (ms[s] as number);
  console.log(
    JSON.stringify({
      bench: 'join-fold-ab',
      run,
      base_ms: Math.round(ms[0] as number),
      this_ms: Math.round(ms[1] as number),
      base_over_this: Math.round(((ms[0] as number) / (ms[1] as number)) * 1000) / 1000,
      loadavg: loadavg().map((l) => Math.round(l * 10) / 10),
    }),
  );
}
console.log(
  JSON.stringify({
    bench: 'join-fold-ab',
    runs: runs - 1,
    base_over_this: Math.round(((sums[0] as number) / (sums[1] as number)) * 1000) / 1000,
  }),
);
