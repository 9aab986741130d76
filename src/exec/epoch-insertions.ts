// Which rows of a write's exact epoch count are insertions and which deletions (view-join-fanout.ts
// walks them down the views): a semi-join's count (src/ivm/ops/semi-join-flips.ts) needs to tell a
// subquery key that gains a row from one that may lose its last, a ranked Top-N's count
// (src/ivm/ops/topn-moved.ts) a held row deleted from one that may be a copy more inserted, and the
// walk's rows carry no sign. A GROUP BY's new row is an insertion and its old row a deletion; for a
// group that stays (the write only inserts into it, or deletes fewer of its rows than it holds) the
// two are paired: the pair moves no key's match count (a row into or out of a subquery's group).
import type { Value } from '../common/types.ts';

/**
 * The written rows of the exact pass under way that are insertions, and the rows made from them by
 * Map stages and expansions: what lets a semi-join's count tell a subquery key that gains a row from
 * one that may lose its last (semi-join-flips.ts). Any other row may be a deletion. Set for one pass
 * only (countingInsertions), so no mark outlives it on a row object the table goes on holding.
 */
let insertions: Set<readonly Value[]> | null = null;

/**
 * The written rows of the pass that are deletions (of a row the table holds: a write's deletes are
 * resolved against it), the rows made from them by Map stages and expansions, and a GROUP BY's old
 * rows: each, if it reaches a node at all, takes a row away there. Set for the same pass.
 */
let deletions: Set<readonly Value[]> | null = null;

/**
 * A GROUP BY's old row and its new one, for a group that gains rows and loses none in the write (so
 * it exists after the epoch): one token per group, `retraction` telling the old row. A pair that
 * reaches a semi-join's subquery side whole retracts and inserts the same key: the retraction takes
 * no match away (pairedRetractionsDropped). Set for the same pass as `insertions`.
 */
let pairs: Map<readonly Value[], { readonly token: object; readonly retraction: boolean }> | null = null;

/** Runs `count` (an exact pass over `written`) with its insertions and deletions marked. */
export function countingInsertions<R>(
  written: {
    readonly deletes: readonly (readonly Value[])[];
    readonly inserts: readonly (readonly Value[])[];
  },
  count: () => R,
): R {
  const marks = new Set(written.inserts);
  const taken = new Set<readonly Value[]>();
  // A row object written both ways is known to be neither.
  for (const row of written.deletes) {
    if (marks.has(row)) marks.delete(row);
    else taken.add(row);
  }
  for (const row of written.inserts) taken.delete(row);
  insertions = marks;
  deletions = taken;
  pairs = new Map();
  try {
    return count();
  } finally {
    insertions = null;
    deletions = null;
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

export function isDeletion(row: readonly Value[]): boolean {
  return deletions !== null && deletions.has(row);
}

/**
 * `out`, made from `row` by a Map stage or an expansion, is an insertion (a deletion) when `row` is
 * (each such stage maps a row's sign to its outputs'); it keeps
 * `row`'s pairing only where `pairs` (a Map whose filter reads known columns alone drops both rows
 * of a pair or neither, their known columns being equal; an expansion's rows differ).
 */
export function carryInsertion(row: readonly Value[], out: readonly Value[], keepPair: boolean): void {
  if (insertions !== null && insertions.has(row)) insertions.add(out);
  if (deletions !== null && deletions.has(row)) deletions.add(out);
  const pair = keepPair ? pairs?.get(row) : undefined;
  if (pair !== undefined) pairs?.set(out, pair);
}

/**
 * The sign of `row` in the pass: 1 a known insertion, -1 a known deletion (of a held row), 0 not
 * known (no pass marks signs, the row is marked both ways or neither, or it is one of a pair).
 */
export function signOf(row: readonly Value[]): -1 | 0 | 1 {
  if (insertions === null || deletions === null || pairs?.has(row) === true) return 0;
  const inserted = insertions.has(row);
  if (inserted === deletions.has(row)) return 0;
  return inserted ? 1 : -1;
}

/** Marks `row`, made by the count, an insertion (`sign` 1) or a deletion (-1) for the pass. */
export function markSign(row: readonly Value[], sign: -1 | 1): void {
  (sign === 1 ? insertions : deletions)?.add(row);
}

/** Whether `row` is one of a GROUP BY's pair (a Map whose filter may drop one alone copies it). */
export function isPaired(row: readonly Value[]): boolean {
  return pairs !== null && pairs.has(row);
}

/**
 * A GROUP BY's rows for one group: `out` its new row, an insertion, and `retraction` its old row, a
 * deletion; `stays` when the group exists after the epoch (reduceDelta), so the two are paired.
 */
export function groupRows(retraction: readonly Value[], out: readonly Value[], stays: boolean): void {
  if (insertions === null || deletions === null || pairs === null) return;
  insertions.add(out);
  deletions.add(retraction);
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

/**
 * The rows of `rows` that are not a paired retraction whose group's new row is among them too: one
 * group's rows, or one value's copies at a DISTINCT, as their signs count (the pair is an insertion
 * or nothing).
 */
function unpaired(rows: readonly (readonly Value[])[]): readonly (readonly Value[])[] {
  return pairs === null || !rows.some((row) => pairs?.has(row) === true)
    ? rows
    : pairedRetractionsDropped(rows);
}

/**
 * Per group of a GROUP BY's input rows (one group's, pairs dropped: `unpaired`): the rows that may
 * take one of the group's rows away (not known insertions), whether each of them is a known
 * deletion (of a held row: the group then loses exactly that many), and the known insertions. Null
 * while no pass marks signs.
 */
export function groupTakes(
  rows: readonly (readonly Value[])[],
): { taken: number; known: boolean; inserted: number } | null {
  if (insertions === null) return null;
  let taken = 0;
  let known = true;
  let inserted = 0;
  for (const row of unpaired(rows)) {
    if (insertions.has(row)) {
      inserted++;
      continue;
    }
    taken++;
    if (deletions?.has(row) !== true) known = false;
  }
  return { taken, known, inserted };
}

/**
 * The row a DISTINCT emits at most for `copies`, rows of one value (and of its marks: the first's
 * if it is alone). It is an insertion when every copy is one, a pair counting as its insertion (the
 * DISTINCT then gains the value or nothing), a deletion when every copy is one, and a group's old
 * row retracted only if held (`retractedOnlyIfHeld`) when every copy is (`marked`, set on it).
 */
export function distinctCopy(
  copies: readonly (readonly Value[])[],
  retractedIfHeld: (row: readonly Value[]) => boolean,
): { readonly row: readonly Value[]; readonly retractedIfHeld: boolean } {
  const first = copies[0] as readonly Value[];
  if (copies.length === 1) return { row: first, retractedIfHeld: retractedIfHeld(first) };
  const signed = unpaired(copies);
  const row = [...first];
  if (insertions !== null && signed.every((r) => insertions?.has(r) === true)) insertions.add(row);
  if (deletions !== null && signed.every((r) => deletions?.has(r) === true)) deletions.add(row);
  return { row, retractedIfHeld: copies.every(retractedIfHeld) };
}
