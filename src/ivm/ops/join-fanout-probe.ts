// What a delta would make a join build, read from the other side as it holds now, before the epoch
// runs and changing nothing: the count behind the engine's EPOCH_TOO_LARGE for a write
// (src/exec/view-join-fanout.ts). A bound that reads no row first, then one probe per delta row.
import type { Value } from '../../common/types.ts';
import type { JoinKey, KeyFn } from '../join-key.ts';
import { NO_SLOT } from '../group-index.ts';
import type { JoinSideRows } from '../join-table-side.ts';

/** Probes `probeRows` made (a count of work, for tests: proportional to the write). */
export const joinProbeWork = { probes: 0 };

/**
 * The most rows `held` holds under one key, bounded with no probe: every key it holds has a row, so
 * no key holds more than its rows less its other keys (one key, for a join with none).
 */
export function rowsUnderOneKey(held: JoinSideRows): number {
  const size = held.size;
  return size === 0 ? 0 : Math.min(size, Math.max(1, size - held.keyCount + 1));
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
