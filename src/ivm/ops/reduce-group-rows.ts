// A Reduce group's output row: the row it last emitted, kept as an object only where the group's
// record (reduce-record.ts) and its key do not hold all of it. A group whose aggregate values are all
// numbers has them in its record (OUT_IN_RECORD), and its row is rebuilt when asked from them and
// its key — the record's number (KEY_IN_RECORD), or the key array the Reduce keeps per group where
// the key's values always print alike (no key texts: that array is then what the group shows). Any
// other group keeps a copy of its row in `outs`: a text key with a SUM used to copy its row on every
// change (an allocation per change that the record and the key array already held).
import type { Value } from '../../common/types.ts';
import type { GroupRecords } from './aggregates.ts';
import {
  F_FLAGS,
  F_KEY,
  F_OUT,
  HAS_OUT,
  IN_RECORD,
  KEY_IN_RECORD,
  OUT_IN_RECORD,
  SIGNED_ZERO,
} from './reduce-record.ts';

export class GroupRows {
  /** Per slot: the group's row where the record does not hold it, else null (or a hole, never set). */
  private readonly outs: (Value[] | null)[] = [];

  /** Rows copied into `outs` (a count of work, for tests). */
  copies = 0;

  /**
   * `keys`: the Reduce's key array by slot (RECORD_KEY where the record holds it); `keysShown`:
   * whether that array is the key the group's row shows (false while groups keep key texts).
   */
  constructor(
    private readonly records: GroupRecords,
    private readonly keys: readonly (readonly Value[] | undefined)[],
    private readonly keysShown: boolean,
    private readonly keyCount: number,
    private readonly nAggs: number,
  ) {}

  /** Whether a group with `flags` has its row in its record and key, with no object. */
  private held(flags: number): boolean {
    return (flags & OUT_IN_RECORD) !== 0 && (this.keysShown || (flags & KEY_IN_RECORD) !== 0);
  }

  /**
   * Forgets the slot's row object (a group allocated or released). A slot past the array's end has
   * none: a new group's slot is not written (`outs` grew by one per group, a store past the end and
   * a backing-store copy at each growth, for groups whose record holds their row and never use it).
   */
  clear(slot: number): void {
    if (slot < this.outs.length) this.outs[slot] = null;
  }

  /**
   * Sets the group's output row. Its aggregate values are mirrored into the record when they are all
   * numbers; a row the record and key hold entirely is not kept as an object, so the state of such a
   * group is its record (and key) alone, and `row` rebuilds the row when asked.
   */
  set(slot: number, row: readonly Value[] | null): void {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const before = data[at + F_FLAGS] as number;
    let flags = before & (KEY_IN_RECORD | SIGNED_ZERO);
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
    if (row !== null && !this.held(flags)) {
      this.outs[slot] = row.slice();
      this.copies++;
    } else if ((before & HAS_OUT) !== 0 && !this.held(before)) this.outs[slot] = null;
  }

  /** The group's current output row, or null (rebuilt from the record when it holds all of it). */
  row(slot: number): Value[] | null {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const flags = data[at + F_FLAGS] as number;
    if ((flags & HAS_OUT) === 0) return null;
    if (!this.held(flags)) return this.outs[slot] as Value[];
    const nAggs = this.nAggs;
    const keyCount = this.keyCount;
    const row = new Array<Value>(keyCount + nAggs);
    if ((flags & KEY_IN_RECORD) !== 0) row[0] = data[at + F_KEY] as number;
    else {
      const key = this.keys[slot] as readonly Value[];
      for (let k = 0; k < keyCount; k++) row[k] = key[k] as Value;
    }
    for (let a = 0; a < nAggs; a++) row[keyCount + a] = data[at + F_OUT + a] as number;
    return row;
  }

  /**
   * The merge's old row of a group with `flags`, as far as the merge reads it: null where the group
   * has none or the record holds all of it; where the record holds its values but not its key, the
   * key array (the row's first values: the change's -old reads the rest from the record); else its
   * row object.
   */
  old(slot: number, flags: number): readonly Value[] | null {
    if ((flags & HAS_OUT) === 0 || (flags & IN_RECORD) === IN_RECORD) return null;
    return this.held(flags) ? (this.keys[slot] as readonly Value[]) : (this.outs[slot] as Value[]);
  }

  /** Values in the slot's row object (0: none), for state sizes. */
  objectWidth(slot: number): number {
    return this.outs[slot]?.length ?? 0;
  }
}
