// The join's staged by-column probe (src/ivm/ops/join-staged-probe.ts) of two trees, interleaved in
// one process: both probe the same auctions-by-id arrangement with the same batches of 10,000 bids
// (`--side auctions`: the bids-by-auction arrangement with batches of 10,000 auctions, about ten bids
// under each), alternating which goes first, and each one's CPU time is summed. On this shared, loaded machine two
// processes' CPU figures move ±30% (cache and scheduler), which hides a change to one stage of the
// pipeline; interleaved in one process, both sides see the same caches and the same neighbours.
//   node --expose-gc --import tsx bench/join-probe-ab.ts [--base ../sluice-base] [--auctions 100000]
//     [--bids 1000000] [--runs 6] [--side bids|auctions] [--batch 10000]
// `--own-arrangements`: each tree probes an arrangement its own JoinArrangement built (the same rows
// added in the same order), so a change of the arrangement's layout is measured too; by default both
// probe this tree's one arrangement, and only the probe's code differs.
// Prints one JSON line per run: each side's CPU ms and base ÷ this tree (above 1: this tree faster).
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next). `--base .` loads this
// tree's modules once, shared by both sides: an A/A needs a second copy of the tree.
// First, so that a process without it runs itself again with it before anything else.
import './ab-checkouts.ts';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Value } from '../src/common/types.ts';
import { auctionRow, bidRow, cpuMs, seededInts } from './arrangement-rows.ts';
import { JoinArrangement } from '../src/ivm/join-arrangement.ts';
import { pairKeptColumns, type PairKeptColumns } from '../src/ivm/ops/join-rows.ts';
import { StagedProbe } from '../src/ivm/ops/join-staged-probe.ts';

type ProbeModule = typeof import('../src/ivm/ops/join-staged-probe.ts');
type ArrangementModule = typeof import('../src/ivm/join-arrangement.ts');

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '../sluice-base' },
    auctions: { type: 'string', default: '100000' },
    bids: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '6' },
    side: { type: 'string', default: 'bids' },
    batch: { type: 'string', default: '10000' },
    'own-arrangements': { type: 'boolean', default: false },
  },
});
const auctionCount = Number(values.auctions);
const bidCount = Number(values.bids);
const BATCH = Number(values.batch);
const base = resolve(values.base);
const { StagedProbe: BaseProbe } = (await import(`${base}/src/ivm/ops/join-staged-probe.ts`)) as ProbeModule;
const { JoinArrangement: BaseArrangement } = values['own-arrangements']
  ? ((await import(`${base}/src/ivm/join-arrangement.ts`)) as ArrangementModule)
  : { JoinArrangement };

const int = seededInts();
const auctions: Value[][] = [];
for (let id = 1; id <= auctionCount; id++) auctions.push(auctionRow(id, int));
const bids: Value[][] = [];
for (let id = 1; id <= bidCount; id++) bids.push(bidRow(id, auctionCount, int));
// As the agg view's join: bids (4 columns) on the left, emitting a.category (column 4 + 2) and b.amount.
const pick = Int32Array.from([6, 3]);
let deltaRows: Value[][];
let keyOf: (row: readonly Value[]) => number;
/** An arrangement of the probed side built by `Arrangement`, and how a probe appends its kept cells. */
function build(Arrangement: typeof JoinArrangement): { arranged: JoinArrangement; append: PairKeptColumns } {
  let arranged: JoinArrangement;
  let append: PairKeptColumns | null;
  if (values.side === 'auctions') {
    // The auctions side's probe (an auction deleted or inserted in the mutations phase): every
    // auction probes the bids-by-auction arrangement, a chain of about ten bids under each key.
    arranged = new Arrangement('bids', 'S', String);
    for (const bid of bids) arranged.add(bid[1] as number, bid, 1, 0);
    append = pairKeptColumns(pick, 4, false, (c) => arranged.keepColumns(c));
  } else {
    arranged = new Arrangement('auctions', 'R', String);
    for (const auction of auctions) arranged.add(auction[0] as number, auction, 1, 0);
    append = pairKeptColumns(pick, 4, true, (c) => arranged.keepColumns(c));
  }
  if (append === null) throw new Error('the emitted columns are not kept');
  return { arranged, append };
}
if (values.side === 'auctions') {
  deltaRows = auctions;
  keyOf = (row) => row[0] as number;
} else {
  deltaRows = bids;
  keyOf = (row) => row[1] as number;
}
const ours = build(JoinArrangement);
const built = [values['own-arrangements'] ? build(BaseArrangement) : ours, ours];
const failKey = (): void => {
  throw new Error('no key fails here');
};

type Probe = Pick<StagedProbe, 'probe' | 'keys'>;
const sides: readonly Probe[] = [new BaseProbe(), new StagedProbe()];
for (let run = 0; run < Number(values.runs); run++) {
  const ms = [0, 0];
  const emitted = [0, 0];
  for (let start = 0, k = 0; start < deltaRows.length; start += BATCH, k++) {
    const delta = {
      rows: deltaRows.slice(start, start + BATCH),
      weights: new Array<number>(BATCH).fill(1),
      consolidated: true,
    };
    const out: string[] = [];
    for (const s of k % 2 === 0 ? [0, 1] : [1, 0]) {
      const cols: Value[][] = [[], []];
      const weights: number[] = [];
      const probe = sides[s] as Probe;
      const since = process.cpuUsage();
      const { arranged, append } = built[s] as { arranged: JoinArrangement; append: PairKeptColumns };
      probe.probe(delta, keyOf, arranged, append, cols, weights, failKey);
      ms[s] = (ms[s] as number) + cpuMs(since);
      emitted[s] = (emitted[s] as number) + weights.length;
      probe.keys.length = 0;
      // The first run checks that both emit the same rows in the same order.
      if (run === 0) out[s] = JSON.stringify([cols, weights]);
    }
    if (out[0] !== out[1]) throw new Error(`the trees emitted different rows for the batch at ${start}`);
  }
  if (emitted[0] !== emitted[1]) throw new Error(`the trees emitted ${emitted[0]} and ${emitted[1]} rows`);
  console.log(
    JSON.stringify({
      bench: 'join-probe-ab',
      run,
      base_ms: Math.round(ms[0] as number),
      this_ms: Math.round(ms[1] as number),
      base_over_this: Math.round(((ms[0] as number) / (ms[1] as number)) * 100) / 100,
      emitted: emitted[1],
      loadavg: (await import('node:os')).loadavg().map((l) => Math.round(l * 10) / 10),
    }),
  );
}
