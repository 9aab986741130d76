// Interleaved A/B of the TopN operator alone (no table, no Map, no Output): this tree's TopNOp and
// another checkout's in one process, fed bench/topn.ts's rows as the table hands them (row arrays
// [id, auction, bidder, amount], a keyed input), fresh operators per round, the side that goes first
// alternating by round. Prints µs of CPU per change per side and phase, and the medians.
//   node --expose-gc --import tsx bench/topn-op-ab.ts --base ../sluice-base [--bids 1000000]
//        [--batch 1000] [--rounds 4]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { T, type Value } from '../src/common/types.ts';
import type { DataflowNode } from '../src/ivm/dataflow-plan.ts';
import type { ZBatch } from '../src/ivm/zset.ts';
import { sfc32 } from './workload.ts';
import { flag } from './ab-checkouts.ts';

interface Op {
  step(inputs: readonly ZBatch[]): ZBatch;
}
type OpClass = new (node: Extract<DataflowNode, { kind: 'topn' }>) => Op;

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('topn-op-ab: --base <checkout> is required');
const bids = Number(flag('bids', '1000000'));
const batch = Number(flag('batch', '1000'));
const rounds = Number(flag('rounds', '4'));
const auctions = bids / 100;
const deletes = bids / 10;

const load = async (path: string): Promise<OpClass> =>
  ((await import(pathToFileURL(path).href)) as { TopNOp: OpClass }).TopNOp;
const Base = await load(resolve(baseDir, 'src/ivm/ops/topn-op.ts'));
const Mine = await load(new URL('../src/ivm/ops/topn-op.ts', import.meta.url).pathname);

const node: Extract<DataflowNode, { kind: 'topn' }> = {
  id: 1,
  kind: 'topn',
  inputs: [0],
  partitionBy: [1],
  orderBy: [
    { index: 3, desc: true, nullsFirst: true },
    { index: 0, desc: false, nullsFirst: false },
  ],
  rank: 'row_number',
  emitRank: false,
  from: 0,
  to: 10,
  columns: [
    { name: 'id', type: T.int32 },
    { name: 'auction', type: T.int32 },
    { name: 'bidder', type: T.int32 },
    { name: 'amount', type: T.int32 },
  ],
  stateId: 'v/topn1',
  distinctRows: true,
};

// bench/topn.ts's draws: the bids, then a seeded permutation's prefix of their ids deleted.
const rnd = sfc32(20261202);
const rows: Value[][] = [];
for (let i = 0; i < bids; i++)
  rows.push([
    i + 1,
    1 + Math.floor(rnd() * auctions),
    Math.floor(rnd() * 50_000),
    1 + Math.floor(rnd() * 1_000_000),
  ]);
const ids = rows.map((r) => r[0] as number);
for (let i = 0; i < deletes; i++) {
  const j = i + Math.floor(rnd() * (ids.length - i));
  [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
}
const removed = ids.slice(0, deletes).map((id) => rows[id - 1] as Value[]);
const batches = (list: Value[][], w: number): ZBatch[] => {
  const out: ZBatch[] = [];
  for (let i = 0; i < list.length; i += batch) {
    const slice = list.slice(i, i + batch);
    out.push({ rows: slice, weights: slice.map(() => w), consolidated: true });
  }
  return out;
};
const inserts = batches(rows, 1);
const deleted = batches(removed, -1);

const cpuPer = (op: Op, list: readonly ZBatch[], changes: number): number => {
  const start = process.cpuUsage();
  for (const b of list) op.step([b]);
  const used = process.cpuUsage(start);
  return Number(((used.user + used.system) / changes).toFixed(3));
};
const results = {
  base: { insert: [] as number[], delete: [] as number[] },
  mine: { insert: [] as number[], delete: [] as number[] },
};
for (let r = 0; r < rounds; r++) {
  for (const side of r % 2 === 0 ? (['base', 'mine'] as const) : (['mine', 'base'] as const)) {
    const op = new (side === 'base' ? Base : Mine)(node);
    results[side].insert.push(cpuPer(op, inserts, bids));
    results[side].delete.push(cpuPer(op, deleted, deletes));
    (globalThis as { gc?: () => void }).gc?.();
  }
}
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
console.log(JSON.stringify(results));
console.log(
  JSON.stringify({
    bench: 'topn-op-ab',
    base_insert_us: median(results.base.insert),
    insert_us: median(results.mine.insert),
    base_delete_us: median(results.base.delete),
    delete_us: median(results.mine.delete),
  }),
);
