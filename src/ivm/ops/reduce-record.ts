// The layout of a Reduce group's record (its stride of the Reduce's Float64Array): the fields after
// the row count, the flags saying what the record holds, and how a group's new values compare with
// the ones it last emitted. Shared by the Reduce (reduce-op.ts) and its passes.
import type { Value } from '../../common/types.ts';
import { identicalValues } from '../../common/values.ts';
import type { GroupRecords } from './aggregate-column.ts';
import { grownF64 } from '../typed-growth.ts';

/** `keys[slot]` of a group whose (single, numeric) key is held in its record. */
export const RECORD_KEY: readonly Value[] = Object.freeze([]);

/**
 * Record fields after the count: a single numeric key, flags, emitted values. (A group's touch mark
 * is not in its record but in the Reduce's `touches`, by slot: see reduce-lookup.ts.)
 */
export const F_KEY = 1;
export const F_FLAGS = 2;
export const F_OUT = 3;
/** Flags: the key is at F_KEY; the output row's aggregate values are at F_OUT.. */
export const KEY_IN_RECORD = 1;
export const OUT_IN_RECORD = 2;
export const IN_RECORD = KEY_IN_RECORD | OUT_IN_RECORD;
/** The group has an output row (in `outs`, or rebuilt from the record when IN_RECORD). */
export const HAS_OUT = 4;
/**
 * The group's key is a float zero (0 or -0) whose sign follows its rows (zero-sign.ts): merged by
 * the interpreted merge, which may change the key it shows, and checkpointed with its -0 count.
 * The highest flag: the generated merge tests `flags >= SIGNED_ZERO`.
 */
export const SIGNED_ZERO = 8;

/** Whether the group's new aggregate values equal those mirrored in its record. */
export function sameAsRecord(
  data: Float64Array,
  from: number,
  b: readonly Value[],
  keyCount: number,
): boolean {
  for (let i = b.length - 1; i >= keyCount; i--) {
    const x = data[from + i - keyCount] as number;
    const y = b[i] as Value;
    // identical, not equal: a MIN of -0 after 0 must show (so must 1.5 after 1.50, in sameAggregates)
    if (!identicalValues(x, y)) return false;
  }
  return true;
}

/** Whether a group's new row equals its old one; the key columns are equal by construction. */
export function sameAggregates(a: readonly Value[], b: readonly Value[], keyCount: number): boolean {
  for (let i = a.length - 1; i >= keyCount; i--) {
    const x = a[i] as Value;
    const y = b[i] as Value;
    if (!identicalValues(x, y)) return false;
  }
  return true;
}

/** Grows the records (doubling) to hold `slot`'s. */
export function fitRecord(r: GroupRecords, slot: number): void {
  if ((slot + 1) * r.stride > r.data.length) r.data = grownF64(r.data, (slot + 1) * r.stride);
}
