// The sign a Reduce's zero group shows, for a Reduce grouping by one float column. 0 and -0 are
// equal, so they are one group, but they print differently (`0`, `-0`), and the group must show a
// value one of its current rows holds, the same whatever order rows came and left in: `-0` while
// any row holds `-0`, else `0` (the first in the exact order, as DISTINCT and the set operations
// choose, and as the ad-hoc SELECT, which runs the same Reduce, shows). Only the zero group can hold
// values of two texts (NaN is one value), so instead of keeping every group's key texts (which cost
// float-keyed grouping ≈ 2×: the generated merge and the record-held key gone) the Reduce counts the
// rows holding -0, for that one group, and flags its record (SIGNED_ZERO) while it may show -0.
import type { Value } from '../../common/types.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import { NO_SLOT } from '../group-index.ts';
import type { GroupRecords } from './aggregate-column.ts';
import { F_FLAGS, F_KEY, SIGNED_ZERO } from './reduce-record.ts';

/** Whether a Reduce over these key columns counts its zero group's -0 rows. */
export function zeroSignNeeded(keyColumns: readonly ColumnSpec[]): boolean {
  return keyColumns.length === 1 && (keyColumns[0] as ColumnSpec).type.kind === 'float';
}

export class ZeroSign {
  /** Rows of the zero group holding -0 (may pass through 0, or below, within a batch). */
  negatives = 0;

  constructor(private readonly records: GroupRecords) {}

  /** Counts a row of key `key` and weight `weight` in the group in `slot` (only -0 counts). */
  countOne(slot: number, key: Value, weight: number): void {
    if (key === 0 && Object.is(key, -0)) this.countNegative(slot, weight);
  }

  /** Counts the step's rows that found a group (a slot other than NO_SLOT). */
  countRows(
    keys: readonly (Value | Value[])[],
    weights: readonly number[],
    slots: Int32Array,
    n: number,
  ): void {
    for (let i = 0; i < n; i++) {
      const key = keys[i];
      if (key === 0 && Object.is(key, -0) && slots[i] !== NO_SLOT)
        this.countNegative(slots[i] as number, weights[i] as number);
    }
  }

  /**
   * A -0 row: from now on the group is merged by the interpreted merge, which shows its sign (a zero
   * group that never held -0 stays on the generated merge: the canonical histogram's bucket 0).
   */
  private countNegative(slot: number, weight: number): void {
    this.negatives += weight;
    const at = slot * this.records.stride + F_FLAGS;
    const data = this.records.data;
    data[at] = (data[at] as number) | SIGNED_ZERO;
  }

  /** The key the zero group shows. */
  key(): number {
    return this.negatives > 0 ? -0 : 0;
  }

  /**
   * After the group's merge: with no -0 row left and 0 shown, it goes back to the generated merge.
   * `at` is the group's record.
   */
  settle(at: number): void {
    const data = this.records.data;
    if (this.negatives === 0 && !Object.is(data[at + F_KEY], -0))
      data[at + F_FLAGS] = (data[at + F_FLAGS] as number) & ~SIGNED_ZERO;
  }

  /** The zero group is gone (no rows), or replaced by a checkpoint's. */
  reset(negatives = 0): void {
    this.negatives = negatives;
  }
}
