// A join's delta in a write's epoch as rows, for a join further down the view to probe by key
// (view-join-fanout.ts counts what each join builds; these list what it emits): one changed side's
// rows joined with what the other side holds, or both sides' and the pairs of their deltas, and the
// pairs of two lists of keys.
import type { Value } from '../common/types.ts';
import type { DataflowNode } from '../ivm/dataflow-plan.ts';
import type { JoinKey } from '../ivm/join-key.ts';
import type { JoinOp } from '../ivm/ops/join-op.ts';
import {
  type EpochDelta,
  type KnownRows,
  LISTED_JOIN_ROWS,
  covered,
  throughMap,
} from './epoch-delta-rows.ts';

/**
 * An inner join's output as rows when both its sides changed: each side's rows with what the other
 * side holds (as `listed`), and the pairs of the two deltas with equal keys (`keys`, by row, as
 * probeRows put them). Its count past LISTED_JOIN_ROWS, or where a side's rows are counts.
 */
export function listedBoth(
  node: Extract<DataflowNode, { kind: 'join' }>,
  op: JoinOp,
  left: EpochDelta,
  right: EpochDelta,
  keys: readonly [readonly (JoinKey | null)[], readonly (JoinKey | null)[]],
  built: number,
): EpochDelta {
  if (typeof left === 'number' || typeof right === 'number' || built > LISTED_JOIN_ROWS) return built;
  const fromLeft = op.joinedRows(0, left.rows, LISTED_JOIN_ROWS);
  const fromRight = op.joinedRows(1, right.rows, LISTED_JOIN_ROWS);
  if (fromLeft === null || fromRight === null) return built;
  const rows: (readonly Value[])[] = [...fromLeft.rows, ...fromRight.rows];
  const [widthLeft, widthRight] = op.sideWidths();
  const [leftKeys, rightKeys] = keys;
  const rightUnder = new Map<JoinKey, number[]>();
  rightKeys.forEach((key, i) => {
    if (key === null) return;
    const at = rightUnder.get(key);
    if (at === undefined) rightUnder.set(key, [i]);
    else at.push(i);
  });
  leftKeys.forEach((key, i) => {
    if (key === null) return;
    const l = left.rows[i] as readonly Value[];
    for (const j of rightUnder.get(key) ?? []) {
      const r = right.rows[j] as readonly Value[];
      const row = new Array<Value>(widthLeft + widthRight).fill(null);
      for (let c = 0; c < widthLeft; c++) row[c] = l[c] ?? null;
      for (let c = 0; c < widthRight; c++) row[widthLeft + c] = r[c] ?? null;
      rows.push(row);
    }
  });
  // A column is known when both deltas know it and each held side was read whole.
  let known: boolean[] | null = null;
  const held = fromLeft.complete && fromRight.complete;
  if (left.known !== null || right.known !== null || !held) {
    const mine = (k: readonly boolean[] | null, width: number): boolean[] =>
      Array.from({ length: width }, (_, c) => held && (k === null || k[c] === true));
    known = [...mine(left.known, widthLeft), ...mine(right.known, widthRight)];
  }
  const out: KnownRows = { rows, known };
  return node.fused === null ? out : throughMap(out, node.fused.filter, node.fused.project);
}

/**
 * A join's output as rows, for a join further down to probe by key: when one side changed, was
 * probed, and builds few enough rows to list; otherwise its count.
 */
export function listed(
  node: Extract<DataflowNode, { kind: 'join' }>,
  op: JoinOp,
  left: EpochDelta,
  right: EpochDelta,
  built: number,
): EpochDelta {
  const side = left !== 0 ? 0 : 1;
  const delta = side === 0 ? left : right;
  if (typeof delta === 'number' || built > LISTED_JOIN_ROWS) return built;
  const keyExprs = side === 0 ? node.leftKey : node.rightKey;
  if (!keyExprs.every((e) => covered(e, delta.known))) return built;
  const joined = op.joinedRows(side, delta.rows, LISTED_JOIN_ROWS);
  if (joined === null) return built;
  // The joined layout: the changed side's known columns, the other side's all (when held whole).
  let known: boolean[] | null = null;
  if (delta.known !== null || !joined.complete) {
    const widths = op.sideWidths();
    const mine = delta.known ?? new Array<boolean>(widths[side]).fill(true);
    const theirs = new Array<boolean>(widths[side === 0 ? 1 : 0]).fill(joined.complete);
    known = side === 0 ? [...mine, ...theirs] : [...theirs, ...mine];
  }
  const rows: KnownRows = { rows: joined.rows, known };
  return node.fused === null ? rows : throughMap(rows, node.fused.filter, node.fused.project);
}

/** Pairs of rows, one from each list, with equal keys that are not NULL. */
export function pairsAmong(left: readonly (JoinKey | null)[], right: readonly (JoinKey | null)[]): number {
  const counts = new Map<JoinKey, number>();
  for (const key of right) if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  let pairs = 0;
  for (const key of left) if (key !== null) pairs += counts.get(key) ?? 0;
  return pairs;
}
