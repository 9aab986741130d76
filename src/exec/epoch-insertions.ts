// Which rows of a write's exact epoch count are insertions (view-join-fanout.ts walks them down the
// views): a semi-join's count (src/ivm/ops/semi-join-flips.ts) needs to tell a subquery key that
// gains a row from one that may lose its last, and the walk's rows carry no sign.
import type { Value } from '../common/types.ts';

/**
 * The written rows of the exact pass under way that are insertions, and the rows made from them by
 * Map stages and expansions: what lets a semi-join's count tell a subquery key that gains a row from
 * one that may lose its last (semi-join-flips.ts). Any other row may be a deletion. Set for one pass
 * only (countingInsertions), so no mark outlives it on a row object the table goes on holding.
 */
let insertions: Set<readonly Value[]> | null = null;

/** Runs `count` (an exact pass over `written`) with its insertions marked. */
export function countingInsertions<R>(
  written: {
    readonly deletes: readonly (readonly Value[])[];
    readonly inserts: readonly (readonly Value[])[];
  },
  count: () => R,
): R {
  const marks = new Set(written.inserts);
  // A row object written both ways is not known to be an insertion.
  for (const row of written.deletes) marks.delete(row);
  insertions = marks;
  try {
    return count();
  } finally {
    insertions = null;
  }
}

export function isInsertion(row: readonly Value[]): boolean {
  return insertions !== null && insertions.has(row);
}

/** `out`, made from `row` by a Map stage or an expansion, is an insertion when `row` is. */
export function carryInsertion(row: readonly Value[], out: readonly Value[]): void {
  if (insertions !== null && insertions.has(row)) insertions.add(out);
}
