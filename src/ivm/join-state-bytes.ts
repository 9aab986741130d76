// What a JoinArrangement (join-arrangement.ts) estimates its state at, for the state metrics: bytes
// per key and per arranged row, from how the arrangement lays them out.
import type { Value } from '../common/types.ts';
import type { JoinKey } from './join-key.ts';

/**
 * Estimated heap bytes of one key: its slot in the index, its record in `slots` and its key cell,
 * and the key itself when a string. An estimate for metrics, like `rowBytes` in arrangement.ts.
 */
export function keyBytes(key: JoinKey): number {
  return 32 + (typeof key === 'string' ? key.length : 0);
}

/**
 * One arranged row: its cells in the per-row arrays (~36 B) and its entry in the first-column index
 * (~8 B), plus the row array itself (~32 B + 8 B a slot; values other than small integers boxed at
 * ~16 B more). The row array is shared with the batch that brought it, so this over-counts a
 * little. Kept columns add 8 B each; rows found by the lookup table, TABLE_ROW_BYTES more.
 */
export function rowBytes(row: readonly Value[]): number {
  let boxed = 0;
  // Boxed: not an int in (-2^30, 2^30). `(v | 0) === v` is the integer test within int32 (NaN, the
  // infinities and fractions fail it; -0 passes, as Number.isInteger has it): every row a fold
  // adds is measured, and Number.isInteger with Math.abs cost a few % of a batch-100 fold.
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (typeof v !== 'number' || (v | 0) !== v || v >= 2 ** 30 || v <= -(2 ** 30)) boxed += 16;
  }
  return 76 + 8 * row.length + boxed;
}

/**
 * What a row found by the lookup table holds beyond `rowBytes`: its cell in the table (~16 B at half
 * load), its `mixed` cell and its match sum, less the first-column index entry it no longer has.
 */
export const TABLE_ROW_BYTES = 20;
