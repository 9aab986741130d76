// The join arrangements alone, as join.ts's agg bids phase drives them: every bid folded into the
// bids-by-auction arrangement (the shared one), then each bid probing the auctions-by-id arrangement
// and emitting its amount and the auction's kept category by column. No table store, no Reduce, no
// epoch: what is left is the arrangements' own work, whose cost grows with state (cache misses), so
// full size and quarter size differ more here than in join.ts.
//   node --expose-gc --import tsx bench/join-arrangement.ts [--auctions 100000] [--bids 1000000]
//     [--runs 4] [--tree ../sluice-base]      (--tree: the worktree whose arrangement is measured)
// Prints one JSON line: fold and probe CPU ms per run, and bids per CPU second of the best run after
// the first (the first warms the JIT).
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Value } from '../src/common/types.ts';
import { auctionRow, bidRow, cpuMs, seededInts } from './arrangement-rows.ts';

type ArrangementModule = typeof import('../src/ivm/join-arrangement.ts');

const { values } = parseArgs({
  options: {
    auctions: { type: 'string', default: '100000' },
    bids: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '4' },
    tree: { type: 'string', default: '.' },
  },
});
const auctionCount = Number(values.auctions);
const bidCount = Number(values.bids);
const runs = Number(values.runs);
const BATCH = 10_000;
const tree = resolve(values.tree);
const { JoinArrangement, NO_ROW } = (await import(
  `${tree}/src/ivm/join-arrangement.ts`
)) as ArrangementModule;

const int = seededInts();
const auctions: Value[][] = [];
for (let id = 1; id <= auctionCount; id++) auctions.push(auctionRow(id, int));
const bids: Value[][] = [];
for (let id = 1; id <= bidCount; id++) bids.push(bidRow(id, auctionCount, int));

function run(): { foldMs: number; probeMs: number; emitted: number } {
  const byAuction = new JoinArrangement('bids', 'S', String);
  const byId = new JoinArrangement('auctions', 'R', String);
  byAuction.keepColumns([3]);
  const [category] = byId.keepColumns([2]) as number[];
  for (const a of auctions) byId.add(a[0] as number, a, 1, 0);
  let foldMs = 0;
  let probeMs = 0;
  let emitted = 0;
  for (let start = 0; start < bidCount; start += BATCH) {
    const end = Math.min(bidCount, start + BATCH);
    const folding = process.cpuUsage();
    for (let i = start; i < end; i++) {
      const bid = bids[i] as Value[];
      byAuction.add(bid[1] as number, bid, 1, 0);
    }
    foldMs += cpuMs(folding);
    const probing = process.cpuUsage();
    const amounts: Value[] = [];
    const names: Value[] = [];
    const weights: number[] = [];
    const kept = byId.keptColumns[category as number] as readonly Value[];
    for (let i = start; i < end; i++) {
      const bid = bids[i] as Value[];
      const slot = byId.slotOf(bid[1] as number);
      if (slot < 0) continue;
      for (let id = byId.head(slot); id !== NO_ROW; id = byId.next(id)) {
        amounts.push(bid[3] as Value);
        names.push(kept[id] as Value);
        weights.push(byId.count(id));
      }
    }
    probeMs += cpuMs(probing);
    emitted += weights.length;
  }
  return { foldMs, probeMs, emitted };
}

const results: { foldMs: number; probeMs: number; emitted: number }[] = [];
for (let r = 0; r < runs; r++) {
  globalThis.gc?.();
  results.push(run());
}
const later = results.length > 1 ? results.slice(1) : results;
const best = Math.min(...later.map((r) => r.foldMs + r.probeMs));
console.log(
  JSON.stringify({
    bench: 'join-arrangement',
    tree,
    auctions: auctionCount,
    bids: bidCount,
    fold_ms: results.map((r) => Math.round(r.foldMs)),
    probe_ms: results.map((r) => Math.round(r.probeMs)),
    emitted: (results[0] as { emitted: number }).emitted,
    bids_per_cpu_s: Math.round(bidCount / (best / 1000)),
    loadavg: (await import('node:os')).loadavg().map((l) => Math.round(l * 10) / 10),
  }),
);
