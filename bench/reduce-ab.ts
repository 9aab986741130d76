// The Reduce above the join bench's join (GROUP BY a.category, COUNT(*), SUM(b.amount)) of two
// trees, interleaved in one process: both trees' ReduceOp (generated kernel, as lowering builds it)
// step through the same batches of joined (category, amount) columns, as the join hands them over,
// alternating which goes first, and each one's CPU time is summed. The Reduce's state is 100 groups,
// so unlike the whole bench (bench/join-ab.ts, two engines' heaps in one) no collection of large
// state lands on either side: this resolves a change of a few percent of the Reduce.
//   node --expose-gc --import tsx bench/reduce-ab.ts [--base ../sluice-base] [--batch 100]
//     [--rows 1000000] [--runs 4]
// Prints one JSON line per run: each side's CPU ms and base ÷ this tree (above 1: this tree
// faster), then the ratio over all runs. Both sides must emit the same changes.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next). `--base .` loads this
// tree's modules once, shared by both sides: an A/A needs a second copy of the tree.
// First, so that a process without it runs itself again with it before anything else.
import './ab-checkouts.ts';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { T, type Value } from '../src/common/types.ts';
import type { DataflowNode } from '../src/ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../src/ivm/operator.ts';
import type { ZBatch } from '../src/ivm/zset.ts';

type ReduceModule = typeof import('../src/ivm/ops/reduce-op.ts');
type ZSetModule = typeof import('../src/ivm/zset.ts');

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '../sluice-base' },
    batch: { type: 'string', default: '100' },
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '4' },
  },
});
const batch = Number(values.batch);
const rowCount = Number(values.rows);
const runs = Number(values.runs);

interface Tree {
  ReduceOp: ReduceModule['ReduceOp'];
  ColumnBatch: ZSetModule['ColumnBatch'];
}
const load = async (tree: string): Promise<Tree> => ({
  ReduceOp: ((await import(`${tree}/src/ivm/ops/reduce-op.ts`)) as ReduceModule).ReduceOp,
  ColumnBatch: ((await import(`${tree}/src/ivm/zset.ts`)) as ZSetModule).ColumnBatch,
});
const trees = [await load(resolve(values.base)), await load(resolve(import.meta.dirname, '..'))];

const node: Extract<DataflowNode, { kind: 'reduce' }> = {
  id: 3,
  kind: 'reduce',
  inputs: [2],
  fused: null,
  keyCount: 1,
  aggregates: [
    {
      fn: 'count_star',
      distinct: false,
      argColumn: null,
      argType: null,
      outputType: T.int64,
      strategy: 'invertible',
    },
    {
      fn: 'sum',
      distinct: false,
      argColumn: 1,
      argType: T.int32,
      outputType: T.int64,
      strategy: 'invertible',
    },
  ],
  columns: [
    { name: 'category', type: T.text },
    { name: 'bids', type: T.int64 },
    { name: 'total', type: T.int64 },
  ],
  stateId: 'v/reduce3',
  kernel: 'generated',
};
const inputColumns = [
  { name: 'category', type: T.text },
  { name: 'amount', type: T.int32 },
];

let seed = 20111111;
function random(): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
}
// As join-workload.ts: 100 categories, amounts 1..100; a tenth of the rows retract an earlier one.
const categories = Array.from({ length: 100 }, (_, i) => `category-${i}`);
const steps: { categories: Value[]; amounts: Value[]; weights: number[] }[] = [];
const live: [Value, Value][] = [];
for (let start = 0; start < rowCount; start += batch) {
  const step = { categories: [] as Value[], amounts: [] as Value[], weights: [] as number[] };
  for (let i = start; i < Math.min(rowCount, start + batch); i++) {
    let row: [Value, Value];
    let w = 1;
    if (live.length > 100 && random() < 0.1) {
      row = live.splice(Math.floor(random() * live.length), 1)[0] as [Value, Value];
      w = -1;
    } else {
      row = [categories[Math.floor(random() * 100)] as string, 1 + Math.floor(random() * 100)];
      live.push(row);
    }
    step.categories.push(row[0]);
    step.amounts.push(row[1]);
    step.weights.push(w);
  }
  steps.push(step);
}

const errors: RowErrorSink = {
  report(error): void {
    throw error;
  },
};
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** An order-dependent digest of a step's changes. */
function digest(out: ZBatch): number {
  let h = out.weights.length;
  const rows = out.rows;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as readonly Value[];
    h = (Math.imul(h, 31) + (out.weights[i] as number) * ((r[1] as number) + 7 * (r[2] as number))) | 0;
  }
  return h;
}

const total = [0, 0];
for (let run = 0; run < runs; run++) {
  (globalThis as { gc?: () => void }).gc?.();
  const ops = trees.map((t) => new t.ReduceOp(node, inputColumns, null));
  const us = [0, 0];
  steps.forEach((step, k) => {
    const digests = [0, 0];
    // The order flips every step and every run (see join-ab.ts).
    for (const s of (k + run) % 2 === 0 ? [0, 1] : [1, 0]) {
      const { ColumnBatch } = trees[s] as Tree;
      const input = new ColumnBatch([step.categories, step.amounts], step.weights);
      const t = cpu();
      const out = (ops[s] as InstanceType<ReduceModule['ReduceOp']>).step([input], errors);
      const weights = out.weights.length;
      us[s] = (us[s] as number) + cpu() - t;
      // Read after the clock: building row objects from the columns is the reader's cost.
      digests[s] = weights + digest(out);
    }
    if (digests[0] !== digests[1]) throw new Error(`reduce-ab: the trees' changes differ at step ${k}`);
  });
  total[0] = (total[0] as number) + (us[0] as number);
  total[1] = (total[1] as number) + (us[1] as number);
  console.log(
    JSON.stringify({
      bench: 'reduce-ab',
      run,
      batch,
      base_ms: Math.round((us[0] as number) / 1000),
      this_ms: Math.round((us[1] as number) / 1000),
      base_over_this: Number(((us[0] as number) / (us[1] as number)).toFixed(3)),
      loadavg: (await import('node:os')).loadavg().map((l) => Math.round(l * 10) / 10),
    }),
  );
}
console.log(
  JSON.stringify({
    bench: 'reduce-ab',
    runs,
    batch,
    base_over_this: Number(((total[0] as number) / (total[1] as number)).toFixed(3)),
  }),
);
