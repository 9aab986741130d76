// Which rows of a write's exact epoch count are insertions (view-join-fanout.ts walks them down the
// views): a semi-join's count (src/ivm/ops/semi-join-flips.ts) needs to tell a subquery key that
// gains a row from one that may lose its last, and the walk's rows carry no sign. A GROUP BY's row
// for a group the write only inserts into is one too, and its old row's retraction is paired with
// it: the group stays, so the pair moves no key's match count (a second row into a subquery's group).
import type { Value } from '../common/types.ts';

/**
 * The written rows of the exact pass under way that are insertions, and the rows made from them by
 * Map stages and expansions: what lets a semi-join's count tell a subquery key that gains a row from
 * one that may lose its last (semi-join-flips.ts). Any other row may be a deletion. Set for one pass
 * only (countingInsertions), so no mark outlives it on a row object the table goes on holding.
 */
let insertions: Set<readonly Value[]> | null = null;

/**
 * A GROUP BY's old row and its new one, for a group that gains rows and loses none in the write (so
 * it exists after the epoch): one token per group, `retraction` telling the old row. A pair that
 * reaches a semi-join's subquery side whole retracts and inserts the same key: the retraction takes
 * no match away (pairedRetractionsDropped). Set for the same pass as `insertions`.
 */
let pairs: Map<readonly Value[], { readonly token: object; readonly retraction: boolean }> | null = null;

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
  pairs = new Map();
  try {
    return count();
  } finally {
    insertions = null;
    pairs = null;
  }
}

/** Whether an exact pass marks its insertions (else every row may be a deletion). */
export function markingInsertions(): boolean {
  return insertions !== null;
}

export function isInsertion(row: readonly Value[]): boolean {
  return insertions !== null && insertions.has(row);
}

/**
 * `out`, made from `row` by a Map stage or an expansion, is an insertion when `row` is; it keeps
 * `row`'s pairing only where `pairs` (a Map whose filter reads known columns alone drops both rows
 * of a pair or neither, their known columns being equal; an expansion's rows differ).
 */
export function carryInsertion(row: readonly Value[], out: readonly Value[], keepPair: boolean): void {
  if (insertions !== null && insertions.has(row)) insertions.add(out);
  const pair = keepPair ? pairs?.get(row) : undefined;
  if (pair !== undefined) pairs?.set(out, pair);
}

/** Whether `row` is one of a GROUP BY's pair (a Map whose filter may drop one alone copies it). */
export function isPaired(row: readonly Value[]): boolean {
  return pairs !== null && pairs.has(row);
}

/**
 * A GROUP BY's rows for one group: `out` its new row, an insertion (the group's old row goes by
 * `retraction`); `stays` when every input row of the group is an insertion, so the group exists
 * after the epoch and the two rows are paired.
 */
export function groupRows(retraction: readonly Value[], out: readonly Value[], stays: boolean): void {
  if (insertions === null || pairs === null) return;
  insertions.add(out);
  if (!stays) return;
  const token = {};
  pairs.set(retraction, { token, retraction: true });
  pairs.set(out, { token, retraction: false });
}

/**
 * `rows` without the retractions whose group's new row is among them too: the group stays, so the
 * retraction and the insertion (still there, an insertion) change no key's match count.
 */
export function pairedRetractionsDropped(rows: readonly (readonly Value[])[]): readonly (readonly Value[])[] {
  if (pairs === null || pairs.size === 0) return rows;
  const inserted = new Set<object>();
  for (const row of rows) {
    const pair = pairs.get(row);
    if (pair !== undefined && !pair.retraction) inserted.add(pair.token);
  }
  if (inserted.size === 0) return rows;
  return rows.filter((row) => {
    const pair = pairs?.get(row);
    return pair === undefined || !pair.retraction || !inserted.has(pair.token);
  });
}
