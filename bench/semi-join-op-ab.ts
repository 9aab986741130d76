// Interleaved A/B of the SemiJoin operator alone (no tables, no Map, no Output): this tree's
// SemiJoinOp and another checkout's in one process, fed bench/join.ts's semi view's rows as its
// inputs receive them (subquery rows [auction id], left rows [bid id, auction, bidder, amount]; per
// batch the auctions' changes as one step, then the bids' as another, as the engine runs each
// table's changes as an epoch), each side a whole phase in turn, which one first alternating by
// phase and round, after full collections (the inputs and both operators share one heap). Each
// round builds fresh operators; every batch's output is checked equal on both sides (its weight
// sum and a weighted sum of bid ids). Prints CPU µs per change per side and phase, and base ÷ this tree.
// With --output each side's changes also go into its checkout's keyed view Output (key: the bid id),
// as in the engine, so what the operator's batch promises (consolidated or not) is paid for there.
//   node --expose-gc --import tsx bench/semi-join-op-ab.ts --base ../sluice-base [--auctions 100000]
//        [--bids 1000000] [--batch 100] [--rounds 4] [--output]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadavg } from 'node:os';
import { T, type Value } from '../src/common/types.ts';
import type { ColumnSpec, DataflowNode } from '../src/ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../src/ivm/operator.ts';
import type { ZBatch } from '../src/ivm/zset.ts';
import { roundPhases, type Change } from './join-workload.ts';
import { flag } from './ab-checkouts.ts';

interface Op {
  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch;
}
interface Output {
  step(inputs: readonly ZBatch[]): ZBatch;
}
type OutputClass = new (
  nodeId: number,
  stateId: string,
  key: readonly number[] | null,
  width: number,
) => Output;
type SemiJoinNode = Extract<DataflowNode, { kind: 'semijoin' }>;
type OpClass = new (node: SemiJoinNode, leftColumns: readonly ColumnSpec[]) => Op;

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('semi-join-op-ab: --base <checkout> is required');
const auctions = Number(flag('auctions', '100000'));
const bids = Number(flag('bids', '1000000'));
const batch = Number(flag('batch', '100'));
const rounds = Number(flag('rounds', '4'));
const withOutput = process.argv.includes('--output');

const load = async (path: string): Promise<OpClass> =>
  ((await import(pathToFileURL(path).href)) as { SemiJoinOp: OpClass }).SemiJoinOp;
const Base = await load(resolve(baseDir, 'src/ivm/ops/semi-join-op.ts'));
const Mine = await load(new URL('../src/ivm/ops/semi-join-op.ts', import.meta.url).pathname);
const loadOutput = async (path: string): Promise<OutputClass> =>
  ((await import(pathToFileURL(path).href)) as { OutputOp: OutputClass }).OutputOp;
const BaseOutput = await loadOutput(resolve(baseDir, 'src/ivm/ops/output-op.ts'));
const MineOutput = await loadOutput(new URL('../src/ivm/ops/output-op.ts', import.meta.url).pathname);

const COLUMNS: ColumnSpec[] = [
  { name: 'bid', type: T.int64 },
  { name: 'auction', type: T.int64 },
  { name: 'bidder', type: T.int32 },
  { name: 'amount', type: T.int32 },
];
/** `… FROM bids b WHERE b.auction IN (SELECT a.id FROM auctions a)`, as lowering builds it. */
const NODE: SemiJoinNode = {
  id: 3,
  kind: 'semijoin',
  inputs: [0, 1],
  mode: 'in',
  leftKey: [{ kind: 'col', index: 1, name: 'auction', type: T.int64 }],
  correlated: 0,
  columns: COLUMNS,
  stateId: 'v/semijoin3',
};
const FAIL: RowErrorSink = {
  report: (error) => {
    throw error;
  },
};
const EMPTY: ZBatch = { rows: [], weights: [], consolidated: true };

/** One batch as the operator's two steps see it: the auctions' delta, then the bids'. */
type Steps = [right: ZBatch, left: ZBatch];

/** The batches of a phase, with row arrays of their own (the two sides share none). */
function stepsOf(changes: readonly Change[]): Steps[] {
  const out: Steps[] = [];
  for (let at = 0; at < changes.length; at += batch) {
    const right: ZBatch = { rows: [], weights: [], consolidated: false };
    const left: ZBatch = { rows: [], weights: [], consolidated: false };
    for (const c of changes.slice(at, at + batch)) {
      const into = c.table === 'auctions' ? right : left;
      for (const [r, w] of [
        [c.old, -1],
        [c.row, 1],
      ] as const) {
        if (r === null) continue;
        const row: Value[] =
          c.table === 'auctions' ? [r.id] : [r.id, (r as { auction: number }).auction, ...bidTail(r)];
        (into.rows as Value[][]).push(row);
        (into.weights as number[]).push(w);
      }
    }
    out.push([consolidated(right), consolidated(left)]);
  }
  return out;
}
/** The batch marked consolidated when no row is in it twice, as a keyed table and the Map mark it. */
function consolidated(b: ZBatch): ZBatch {
  const seen = new Set(b.rows.map((r) => r.join(',')));
  return { ...b, consolidated: seen.size === b.rows.length };
}
function bidTail(r: object): Value[] {
  const b = r as { bidder: number; amount: number };
  return [b.bidder, b.amount];
}

/** Weight sum and weighted sum of first columns: what both sides must agree on per step. */
function digest(out: ZBatch): number {
  let d = 0;
  for (let i = 0; i < out.rows.length; i++) {
    const w = out.weights[i] as number;
    d += w * 1_000_003 + w * ((out.rows[i] as Value[])[0] as number);
  }
  return d;
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => {});
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const results: Record<string, { base: number[]; mine: number[]; ratio: number[] }> = {};

console.log(
  `semi-join-op-ab: ${auctions} auctions, ${bids} bids, batch ${batch}, ${rounds} rounds, base ${baseDir}` +
    (withOutput ? ', with the view Output' : ''),
);
for (let r = 0; r <= rounds; r++) {
  const phases = roundPhases(r, auctions, bids);
  const base = new Base(NODE, COLUMNS);
  const mine = new Mine(NODE, COLUMNS);
  const outputs = new Map<Op, Output | null>([
    [base, withOutput ? new BaseOutput(4, 'v', [0], COLUMNS.length) : null],
    [mine, withOutput ? new MineOutput(4, 'v', [0], COLUMNS.length) : null],
  ]);
  for (const [p, phase] of phases.entries()) {
    // Both sides' inputs built first and settled in the old generation, so no step pays for
    // promoting them; then each side runs the whole phase, which one first alternating.
    const forBase = stepsOf(phase.changes);
    const forMine = stepsOf(phase.changes);
    const digests: number[] = [];
    const run = (op: Op, steps: readonly Steps[], check: boolean): number => {
      const output = outputs.get(op) ?? null;
      const stepped = (out: ZBatch): number => {
        // The Output's delta: the operator's changes consolidated (it throws on a broken promise).
        return digest(output === null ? out : output.step([out]));
      };
      gc();
      gc();
      const t = cpu();
      for (let i = 0; i < steps.length; i++) {
        const [right, left] = steps[i] as Steps;
        const d = stepped(op.step([EMPTY, right], FAIL)) + stepped(op.step([left, EMPTY], FAIL));
        if (!check) digests.push(d);
        else if (digests[i] !== d)
          throw new Error(`semi-join-op-ab: outputs differ at batch ${i} of ${phase.name}`);
      }
      return cpu() - t;
    };
    const baseFirst = (r + p) % 2 === 0;
    const tb = baseFirst ? run(base, forBase, false) : 0;
    const tm = run(mine, forMine, baseFirst);
    const tb2 = baseFirst ? tb : run(base, forBase, true);
    if (r === 0) continue;
    const n = phase.changes.length;
    const entry = (results[phase.name] ??= { base: [], mine: [], ratio: [] });
    entry.base.push(Number((tb2 / n).toFixed(3)));
    entry.mine.push(Number((tm / n).toFixed(3)));
    entry.ratio.push(Number((tb2 / tm).toFixed(3)));
  }
}
for (const [phase, { base, mine, ratio }] of Object.entries(results))
  console.log(
    JSON.stringify({
      bench: 'semi-join-op-ab',
      batch,
      output: withOutput,
      phase,
      base_us: base,
      us: mine,
      ratio,
      base_us_median: median(base),
      us_median: median(mine),
      ratio_median: median(ratio),
      loadavg: loadavg()[0],
    }),
  );
