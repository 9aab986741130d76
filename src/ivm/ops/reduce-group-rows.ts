// A Reduce group's output row: the row it last emitted, kept as an object only where the group's
// record (reduce-record.ts) does not hold all of it. A group whose key and aggregate values are all
// numbers is its record alone (flags IN_RECORD), and its row is rebuilt when asked; any other group
// keeps a copy of its row in `outs`.
import type { Value } from '../../common/types.ts';
import type { GroupRecords } from './aggregates.ts';
import { F_FLAGS, F_KEY, F_OUT, HAS_OUT, IN_RECORD, KEY_IN_RECORD, OUT_IN_RECORD } from './reduce-record.ts';

export class GroupRows {
  /** Per slot: the group's row where the record does not hold it, else null. */
  private readonly outs: (Value[] | null)[] = [];

  constructor(
    private readonly records: GroupRecords,
    private readonly keyCount: number,
    private readonly nAggs: number,
  ) {}

  /** Forgets the slot's row object (a group allocated or released). */
  clear(slot: number): void {
    this.outs[slot] = null;
  }

  /**
   * Sets the group's output row. Its aggregate values are mirrored into the record when they are all
   * numbers; a row the record holds entirely (numeric key and values) is not kept as an object, so
   * the state of such a group is its record alone, and `row` rebuilds the row when asked.
   */
  set(slot: number, row: readonly Value[] | null): void {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const before = data[at + F_FLAGS] as number;
    let flags = before & KEY_IN_RECORD;
    if (row !== null) {
      flags |= HAS_OUT;
      const keyCount = this.keyCount;
      let numeric = true;
      for (let a = 0; a < this.nAggs; a++) {
        const v = row[keyCount + a];
        if (typeof v !== 'number') {
          numeric = false;
          break;
        }
        data[at + F_OUT + a] = v;
      }
      if (numeric) flags |= OUT_IN_RECORD;
    }
    data[at + F_FLAGS] = flags;
    // `row` may be the scratch row: a kept row is a copy. `outs[slot]` is non-null exactly while the
    // group has a row its record does not hold, so a record-held group never touches `outs` (a
    // random access into an array as long as the group count, one more cache miss per change).
    if (row !== null && (flags & IN_RECORD) !== IN_RECORD) this.outs[slot] = row.slice();
    else if ((before & HAS_OUT) !== 0 && (before & IN_RECORD) !== IN_RECORD) this.outs[slot] = null;
  }

  /** The group's current output row, or null (rebuilt from the record when it holds all of it). */
  row(slot: number): Value[] | null {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const flags = data[at + F_FLAGS] as number;
    if ((flags & HAS_OUT) === 0) return null;
    if ((flags & IN_RECORD) !== IN_RECORD) return this.outs[slot] as Value[];
    const nAggs = this.nAggs;
    const row = new Array<Value>(1 + nAggs);
    row[0] = data[at + F_KEY] as number;
    for (let a = 0; a < nAggs; a++) row[1 + a] = data[at + F_OUT + a] as number;
    return row;
  }

  /**
   * The merge's old row of a group with `flags`: its row object, or null where it has none or the
   * record holds all of it (the change's -old is then read from the record).
   */
  old(slot: number, flags: number): Value[] | null {
    return (flags & HAS_OUT) !== 0 && (flags & IN_RECORD) !== IN_RECORD ? (this.outs[slot] as Value[]) : null;
  }

  /** Values in the slot's row object (0: none), for state sizes. */
  objectWidth(slot: number): number {
    return this.outs[slot]?.length ?? 0;
  }
}
