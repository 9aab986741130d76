// Interleaved A/B of the TopN operator alone (no table, no Map, no Output): this tree's TopNOp and
// another checkout's in one process, fed bench/topn.ts's rows as the table hands them (row arrays
// [id, auction, bidder, amount], a keyed input, its key column noted as lowering notes it), 100 bids
// per auction (--per-auction). Both operators live side by side and take the same batch one after
// the other (which goes first alternates with the batch and the round), so both see the same load;
// CPU time is summed per side and phase. Prints µs of CPU per change per side and phase for every
// round, and the ratio base ÷ this over the rounds after the first (the first warms the compiler).
//   node --expose-gc --import tsx bench/topn-op-ab.ts --base ../sluice-base [--bids 1000000]
//        [--batch 1000] [--rounds 4] [--to 10] [--deletes random|top] [--per-auction 100] [--mine DIR]
// --deletes random: a tenth of the bids, a seeded permutation's prefix (bench/topn.ts's deletes, most
// of them past the top); top: each auction's best bid, again and again (the winner withdrawn: every
// delete brings the next row into the top). --mine DIR swaps in another checkout for this tree: a
// second copy of the base (not the same path, whose module would be shared) shows the noise.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next). `--base .` loads this
// tree's modules once, shared by both sides: an A/A needs a second copy of the tree.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadavg } from 'node:os';
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
const to = Number(flag('to', '10'));
const deleteKind = flag('deletes', 'random');
if (deleteKind !== 'random' && deleteKind !== 'top') throw new Error('topn-op-ab: --deletes random|top');
const perAuction = Number(flag('per-auction', '100'));
const auctions = Math.round(bids / perAuction);

const load = async (dir: string): Promise<OpClass> =>
  ((await import(pathToFileURL(resolve(dir, 'src/ivm/ops/topn-op.ts')).href)) as { TopNOp: OpClass }).TopNOp;
const Base = await load(baseDir);
const Mine = await load(flag('mine', new URL('..', import.meta.url).pathname));

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
  to,
  columns: [
    { name: 'id', type: T.int32 },
    { name: 'auction', type: T.int32 },
    { name: 'bidder', type: T.int32 },
    { name: 'amount', type: T.int32 },
  ],
  stateId: 'v/topn1',
  distinctRows: true,
  // The input's key (id), as lowering sets it for a keyed table: without it the operator keeps no
  // tail notes, and this driver would time a delete path the view no longer takes.
  keyColumn: 0,
};

const byRank = (a: Value[], b: Value[]): number =>
  (b[3] as number) - (a[3] as number) || (a[0] as number) - (b[0] as number);

/** bench/topn.ts's draws, fresh row arrays per call (each side holds its own). */
function workload(): { inserts: ZBatch[]; deletes: ZBatch[]; deleted: number } {
  const rnd = sfc32(20261202);
  const rows: Value[][] = [];
  for (let i = 0; i < bids; i++)
    rows.push([
      i + 1,
      1 + Math.floor(rnd() * auctions),
      Math.floor(rnd() * 50_000),
      1 + Math.floor(rnd() * 1_000_000),
    ]);
  const batches = (list: Value[][], w: number): ZBatch[] => {
    const out: ZBatch[] = [];
    for (let i = 0; i < list.length; i += batch) {
      const slice = list.slice(i, i + batch);
      out.push({ rows: slice, weights: slice.map(() => w), consolidated: true });
    }
    return out;
  };
  let removed: Value[][] = [];
  if (deleteKind === 'random') {
    const ids = rows.map((r) => r[0] as number);
    const count = bids / 10;
    for (let i = 0; i < count; i++) {
      const j = i + Math.floor(rnd() * (ids.length - i));
      [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
    }
    removed = ids.slice(0, count).map((id) => rows[id - 1] as Value[]);
  } else {
    // Round k deletes every auction's k-th best bid: its best at that moment.
    const per: Value[][][] = Array.from({ length: auctions }, () => []);
    for (const r of rows) (per[(r[1] as number) - 1] as Value[][]).push(r);
    for (const list of per) list.sort(byRank);
    for (let k = 0; k < perAuction / 2; k++)
      for (const list of per) if (k < list.length) removed.push(list[k] as Value[]);
  }
  return { inserts: batches(rows, 1), deletes: batches(removed, -1), deleted: removed.length };
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const totals = { base: { insert: 0, delete: 0 }, mine: { insert: 0, delete: 0 } };
console.log(
  `topn-op-ab: ${bids} bids, ${auctions} auctions, top ${to}, ${deleteKind} deletes, batch ${batch}, base ${baseDir}`,
);
for (let r = 0; r < rounds; r++) {
  const forBase = workload();
  const forMine = workload();
  const base = new Base(node);
  const mine = new Mine(node);
  const used = { base: { insert: 0, delete: 0 }, mine: { insert: 0, delete: 0 } };
  for (const phase of ['insert', 'delete'] as const) {
    const baseBatches = phase === 'insert' ? forBase.inserts : forBase.deletes;
    const mineBatches = phase === 'insert' ? forMine.inserts : forMine.deletes;
    baseBatches.forEach((b, i) => {
      const m = mineBatches[i] as ZBatch;
      for (const side of (i + r) % 2 === 0 ? (['base', 'mine'] as const) : (['mine', 'base'] as const)) {
        const t = cpu();
        (side === 'base' ? base : mine).step([side === 'base' ? b : m]);
        used[side][phase] += cpu() - t;
      }
    });
  }
  const per = (us: number, n: number): number => Number((us / n).toFixed(3));
  console.log(
    JSON.stringify({
      round: r + 1,
      base_insert_us: per(used.base.insert, bids),
      insert_us: per(used.mine.insert, bids),
      base_delete_us: per(used.base.delete, forBase.deleted),
      delete_us: per(used.mine.delete, forMine.deleted),
      loadavg: Number(loadavg()[0]?.toFixed(2)),
    }),
  );
  if (r > 0 || rounds === 1)
    for (const side of ['base', 'mine'] as const)
      for (const phase of ['insert', 'delete'] as const) totals[side][phase] += used[side][phase];
  (globalThis as { gc?: () => void }).gc?.();
}
console.log(
  JSON.stringify({
    bench: 'topn-op-ab',
    to,
    deletes: deleteKind,
    insert_ratio: Number((totals.base.insert / totals.mine.insert).toFixed(3)),
    delete_ratio: Number((totals.base.delete / totals.mine.delete).toFixed(3)),
  }),
);
