// The pairs of two deltas of one step under equal join keys: what a join whose sides are both at the
// epoch's new state (join-op.ts) emitted twice, once from each delta's probe, and takes back once.
import type { Value } from '../../common/types.ts';
import type { JoinKey, KeyFn } from '../join-key.ts';
import type { ZBatch } from '../zset.ts';

/** Calls `visit(row, other, w)` for each row of `delta` and row of `other` under one key, w the product of their weights. */
export function forEachDeltaPair(
  delta: ZBatch,
  keyOf: KeyFn,
  other: ZBatch,
  keyOfOther: KeyFn,
  visit: (row: readonly Value[], otherRow: readonly Value[], w: number) => void,
): void {
  const byKey = new Map<JoinKey, number[]>();
  for (let j = 0; j < other.rows.length; j++) {
    const key = keyOfOther(other.rows[j] as readonly Value[]);
    if (key === null) continue;
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [j]);
    else list.push(j);
  }
  for (let i = 0; i < delta.rows.length; i++) {
    const row = delta.rows[i] as readonly Value[];
    const key = keyOf(row);
    if (key === null) continue;
    const list = byKey.get(key);
    if (list === undefined) continue;
    const w = delta.weights[i] as number;
    for (const j of list) visit(row, other.rows[j] as readonly Value[], w * (other.weights[j] as number));
  }
}
