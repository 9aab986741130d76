// The held left rows of a semi- or anti-join (`[NOT] EXISTS`, `[NOT] IN`) that a change of its
// subquery side may flip, counted before the epoch runs: what lets the engine refuse, with
// EPOCH_TOO_LARGE, a small write into a subquery's table that would retract or put back a large part
// of the view (one NULL into a `NOT IN` subquery retracts every outer row). A key is counted when
// the write could move its match count across zero: when it has none before the epoch, or at most
// as many as the written rows under it that are not known insertions (a deletion, or a row whose
// sign the count lost on its way, such as a join's). Each written row weighs one, as a table
// write's rows do.
import type { Value } from '../../common/types.ts';
import type { JoinKey, KeyFn } from '../join-key.ts';

/** Keys and groups the count has looked up, over the process (tests: the count is the write's size). */
export const semiJoinFlipWork = { lookups: 0 };

/** What the count reads of a SemiJoinOp, all as it is before the epoch. */
export interface SemiJoinFlipState {
  readonly notIn: boolean;
  readonly correlated: number;
  /** NOT IN: the right row's column holding the subquery's value. */
  readonly valueColumn: number;
  readonly rightKey: KeyFn;
  readonly rightGroup: KeyFn;
  /** A probe key's match count. */
  matches(key: JoinKey): number;
  /** NOT IN: a correlation group's right rows and its NULL values. */
  groupCounts(group: JoinKey): readonly [number, number];
  /** Distinct left rows held under a probe key. */
  leftRowsUnder(key: JoinKey): number;
  /** NOT IN: distinct left rows of a group whose value is NULL. */
  nullRowsOf(group: JoinKey): number;
  /** Distinct left rows held under every probe key. */
  readonly leftRows: number;
  /** NOT IN: the probe keys of a group's left rows. */
  keysOf(group: JoinKey): Iterable<JoinKey>;
  /** Appends the left rows held under a probe key to `out`, a copy per count. */
  listUnder(key: JoinKey, out: (readonly Value[])[]): void;
}

/**
 * The flipped left rows themselves, listed for a join after the semi-join to probe by key (the
 * exact pass, view-join-fanout.ts): filled up to `limit` rows; `rows` null past it, or where the
 * count flips rows it does not name (NOT IN's NULL-valued rows or a group's every row).
 */
export interface FlipList {
  rows: (readonly Value[])[] | null;
  readonly limit: number;
}

function listKey(state: SemiJoinFlipState, key: JoinKey, list: FlipList | null): void {
  if (list === null || list.rows === null) return;
  state.listUnder(key, list.rows);
  if (list.rows.length > list.limit) list.rows = null;
}

/**
 * Per key, the written rows under it that are not known insertions (each may take a match away); a
 * key that fails or is NULL meets no left row (as `step` has it).
 */
function tally(
  rows: readonly (readonly Value[])[],
  keyOf: KeyFn,
  inserted: (row: readonly Value[]) => boolean,
): Map<JoinKey, number> {
  const counts = new Map<JoinKey, number>();
  for (const row of rows) {
    let key: JoinKey | null;
    try {
      key = keyOf(row);
    } catch {
      continue;
    }
    if (key !== null) counts.set(key, (counts.get(key) ?? 0) + (inserted(row) ? 0 : 1));
  }
  return counts;
}

/** Whether a count of `before` can reach or leave zero by `takeable` rows taken away or any added. */
function mayCross(before: number, takeable: number): boolean {
  return before === 0 || before <= takeable;
}

/**
 * Left rows the right delta `rows` may flip. EXISTS, NOT EXISTS, IN: per key whose match count the
 * write can bring to or from zero, its held rows. NOT IN: a group that holds a NULL the write cannot
 * take away flips nothing (its every row is UNKNOWN or FALSE before and after); a group whose NULL
 * count can cross zero re-evaluates all its rows (a NULL arriving makes every `x NOT IN` of the
 * group UNKNOWN); a group whose row count alone can cross zero flips its NULL-valued rows (empty
 * set: true; else UNKNOWN); then each other written key as above.
 */
export function semiJoinFlipRows(
  state: SemiJoinFlipState,
  rows: readonly (readonly Value[])[],
  inserted: (row: readonly Value[]) => boolean,
  list: FlipList | null = null,
): number {
  let flips = 0;
  const done = new Set<JoinKey>();
  if (state.notIn) {
    // NOT IN flips rows by group and by NULL value as well as by key: they are counted, not named.
    if (list !== null) list.rows = null;
    const groups = new Map<JoinKey, { rows: number; nulls: number; anyNull: boolean }>();
    const valued: { readonly row: readonly Value[]; readonly group: JoinKey }[] = [];
    for (const row of rows) {
      let group: JoinKey | null;
      try {
        group = state.rightGroup(row);
      } catch {
        continue;
      }
      if (group === null) continue;
      let touched = groups.get(group);
      if (touched === undefined) groups.set(group, (touched = { rows: 0, nulls: 0, anyNull: false }));
      const takeable = inserted(row) ? 0 : 1;
      touched.rows += takeable;
      if (row[state.valueColumn] === null) {
        touched.nulls += takeable;
        touched.anyNull = true;
      } else valued.push({ row, group });
    }
    // Groups that hold a NULL before and after: each of their left rows is UNKNOWN (or FALSE) both
    // times, whatever else the write brings, and flips nothing.
    const nullHeld = new Set<JoinKey>();
    for (const [group, touched] of groups) {
      semiJoinFlipWork.lookups++;
      const [rowsBefore, nullsBefore] = state.groupCounts(group);
      const nullsMayCross = touched.anyNull && mayCross(nullsBefore, touched.nulls);
      if (nullsBefore > 0 && !nullsMayCross) {
        nullHeld.add(group);
        continue;
      }
      if (nullsMayCross || mayCross(rowsBefore, touched.rows)) flips += state.nullRowsOf(group);
      if (!nullsMayCross) continue;
      if (state.correlated === 0) return flips + state.leftRows;
      for (const key of state.keysOf(group)) {
        done.add(key);
        flips += state.leftRowsUnder(key);
      }
    }
    rows = valued.filter((v) => !nullHeld.has(v.group)).map((v) => v.row);
  }
  for (const [key, takeable] of tally(rows, state.rightKey, inserted)) {
    semiJoinFlipWork.lookups++;
    if (done.has(key) || !mayCross(state.matches(key), takeable)) continue;
    flips += state.leftRowsUnder(key);
    listKey(state, key, list);
  }
  return flips;
}
