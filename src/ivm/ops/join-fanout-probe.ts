// What a delta would make a join build, read from the other side as it holds now, before the epoch
// runs and changing nothing: the count behind the engine's EPOCH_TOO_LARGE for a write
// (src/exec/view-join-fanout.ts). A bound that reads no row first, then one probe per delta row.
import type { Value } from '../../common/types.ts';
import type { JoinKey, KeyFn } from '../join-key.ts';
import { NO_SLOT } from '../group-index.ts';
import type { JoinSideRows } from '../join-table-side.ts';
import { NO_ROW } from '../join-arrangement-rows.ts';

/** Probes `probeRows` made (a count of work, for tests: proportional to the write). */
export const joinProbeWork = { probes: 0 };

/**
 * The most rows `held` holds under one key, bounded with no probe: every key it holds has a row, so
 * no key holds more than its rows less its other keys (one key, for a join with none); nor more
 * than the most one key has ever held (its high-water mark), far tighter for rows spread over many
 * keys (a bid side of many auctions: the busiest auction's bids, not all bids less one per auction).
 */
export function rowsUnderOneKey(held: JoinSideRows): number {
  const size = held.size;
  return size === 0 ? 0 : Math.min(size, Math.max(1, size - held.keyCount + 1), held.mostRowsUnderOneKey);
}

/**
 * Rows a delta of `rows` (keyed by `keyOf`) would make a join build against `theirs`: for each row,
 * the rows `theirs` holds under its key, evaluated as the join does (a NULL key matches none; a key
 * that fails is the row's error, not a pair), plus, for an outer join, one padded row where nothing
 * matches (`padMine`) and the other side's padded rows it retracts or puts back (`padTheirs`). One
 * key and at most one probe per row. Each row's key is put in `keys` (null: none) when it is given.
 */
export function probeRows(
  theirs: JoinSideRows,
  keyOf: KeyFn,
  pad: { readonly mine: boolean; readonly theirs: boolean },
  rows: readonly (readonly Value[])[],
  keys: (JoinKey | null)[] | null,
): number {
  let built = 0;
  for (let i = 0; i < rows.length; i++) {
    let key: JoinKey | null;
    try {
      key = keyOf(rows[i] as readonly Value[]);
    } catch {
      key = null;
    }
    if (keys !== null) keys.push(key);
    if (key === null) {
      if (pad.mine) built++;
      continue;
    }
    joinProbeWork.probes++;
    const slot = theirs.slotOf(key);
    const matched = slot === NO_SLOT ? 0 : theirs.rowsAt(slot);
    built += matched === 0 ? (pad.mine ? 1 : 0) : pad.theirs ? 2 * matched : matched;
  }
  return built;
}

/**
 * The rows a delta of `rows` on side `side` would make a join build against `theirs`, as the
 * joined layout (left columns, then right), for a count further down the graph that needs their
 * values (a join over this join's output): each row with every row `theirs` holds under its key,
 * a padded row where nothing matches (`pad.mine`), and the other side's padded rows it retracts or
 * puts back (`pad.theirs`); the residual is not applied (a bound: it only removes rows). Null when
 * they would be more than `limit` (the caller then bounds the next join by counts alone). A row
 * `theirs` holds with fewer columns than the side's (a shared side keeping some) is left out of
 * `complete`: its values are then not all known.
 */
export function joinedRows(
  theirs: JoinSideRows,
  keyOf: KeyFn,
  pad: { readonly mine: boolean; readonly theirs: boolean },
  side: 0 | 1,
  widths: readonly [number, number],
  rows: readonly (readonly Value[])[],
  limit: number,
): { readonly rows: (readonly Value[])[]; readonly complete: boolean } | null {
  const otherWidth = widths[side === 0 ? 1 : 0];
  const mineWidth = widths[side];
  const out: (readonly Value[])[] = [];
  let complete = true;
  const joined = (mine: readonly Value[] | null, other: readonly Value[] | null): Value[] => {
    const row = new Array<Value>(mineWidth + otherWidth).fill(null);
    const mineAt = side === 0 ? 0 : otherWidth;
    const otherAt = side === 0 ? mineWidth : 0;
    if (mine !== null) for (let i = 0; i < mineWidth; i++) row[mineAt + i] = mine[i] ?? null;
    if (other !== null) {
      if (other.length !== otherWidth) complete = false;
      for (let i = 0; i < otherWidth; i++) row[otherAt + i] = other[i] ?? null;
    }
    return row;
  };
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as readonly Value[];
    let key: JoinKey | null;
    try {
      key = keyOf(row);
    } catch {
      key = null;
    }
    const slot = key === null ? NO_SLOT : theirs.slotOf(key);
    let matched = 0;
    if (slot !== NO_SLOT) {
      for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
        const other = theirs.row(id) as readonly Value[];
        out.push(joined(row, other));
        if (pad.theirs) out.push(joined(null, other));
        matched++;
        if (out.length > limit) return null;
      }
    }
    if (matched === 0 && pad.mine) out.push(joined(row, null));
    if (out.length > limit) return null;
  }
  return { rows: out, complete };
}

/**
 * Whether `mine` holds a row under the key of `row` (as `keyOf` computes it; a NULL key or one that
 * fails holds none): whether a row with that key can be retracted from this side. One probe.
 */
export function holdsKeyOf(mine: JoinSideRows, keyOf: KeyFn, row: readonly Value[]): boolean {
  let key: JoinKey | null;
  try {
    key = keyOf(row);
  } catch {
    return false;
  }
  if (key === null) return false;
  joinProbeWork.probes++;
  const slot = mine.slotOf(key);
  return slot !== NO_SLOT && mine.rowsAt(slot) > 0;
}
