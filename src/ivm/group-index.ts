// A Reduce's group index: group id → slot. Ids that are int32 numbers (the common GROUP BY of an INT
// column, or of a small computed bucket) live in typed arrays: small non-negative ones while they are
// dense (ids 0..n of a serial column) in a direct table indexed by the id itself, the others in an
// open-addressing table over one Int32Array, key and slot side by side, so a lookup is one cache
// line instead of a Map's bucket plus entry; every other id (text, bigint encodings, doubles,
// composite-key strings) lives in a Map. An int id below the direct table's length is always in it
// (growing the table moves the hashed ids it now covers), so each id has exactly one place. Keys
// compare like a Map's (SameValueZero): -0 is 0.
import type { Value } from '../common/types.ts';

/** Slot meaning "absent" (slots are non-negative). */
export const NO_SLOT = -1;

const EMPTY = 0;

/**
 * Work done growing direct tables, over all indexes (tests count it): `growthTries` calls that
 * looked for a length to grow to, `movedToDirect` hashed ids moved into a grown table.
 */
export const groupIndexWork = { growthTries: 0, movedToDirect: 0 };

export class GroupIndex {
  /** [key, slot + 1] pairs; slot + 1 === 0 marks an empty cell. */
  private table = new Int32Array(2 * 16);
  private mask = 15;
  private intCount = 0;
  /** slot + 1 by id for ids in [0, direct.length); 0 is absent. */
  private direct = new Int32Array(0);
  private directCount = 0;
  private readonly other = new Map<Value, number>();
  /** Ids the index is known to be about to hold (`reserve`): the direct table may be sized for them. */
  private expected = 0;

  get size(): number {
    return this.intCount + this.directCount + this.other.size;
  }

  /** The slot of `id`, or NO_SLOT. */
  get(id: Value): number {
    if (typeof id === 'number' && (id | 0) === id) {
      if (id >= 0 && id < this.direct.length) return (this.direct[id] as number) - 1;
      const t = this.table;
      const mask = this.mask;
      let i = hash(id) & mask;
      for (;;) {
        const s = t[2 * i + 1] as number;
        if (s === EMPTY) return NO_SLOT;
        if (t[2 * i] === id) return s - 1;
        i = (i + 1) & mask;
      }
    }
    const s = this.other.get(id);
    return s === undefined ? NO_SLOT : s;
  }

  /**
   * Reads the direct cells of the first `n` ids that fall in the direct table, and returns their
   * sum (for the caller to keep, so the reads are not dropped): a batch's lookups that follow then
   * find their cells in cache, their misses having been in flight together in this tight loop.
   */
  readAhead(ids: readonly Value[], n: number): number {
    const direct = this.direct;
    const len = direct.length;
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      const k = (id as number) | 0;
      if (k === id && k >= 0 && k < len) sink += direct[k] as number;
    }
    return sink;
  }

  has(id: Value): boolean {
    return this.get(id) !== NO_SLOT;
  }

  /** Adds `id` (which must be absent) at `slot`. */
  set(id: Value, slot: number): void {
    if (typeof id === 'number' && (id | 0) === id) {
      // An id past every table the ids held (or expected) allow is hashed without looking for a
      // length: a table covering it would be longer than DIRECT_START and than DIRECT_SLACK per id.
      if (id >= this.direct.length && isDenseId(id, this.held(), DIRECT_SLACK)) this.growDirect(id);
      if (id >= 0 && id < this.direct.length) {
        this.direct[id] = slot + 1;
        this.directCount++;
        return;
      }
      if (2 * (this.intCount + 1) > this.mask + 1) this.grow();
      this.insert(id | 0, slot);
      this.intCount++;
      return;
    }
    this.other.set(id, slot);
  }

  delete(id: Value): void {
    if (!(typeof id === 'number' && (id | 0) === id)) {
      this.other.delete(id);
      return;
    }
    if (id >= 0 && id < this.direct.length) {
      if (this.direct[id] !== EMPTY) {
        this.direct[id] = EMPTY;
        this.directCount--;
      }
      return;
    }
    this.removeHashed(id);
  }

  /** Removes an int id from the hashed table, if there. */
  private removeHashed(id: number): void {
    const t = this.table;
    const mask = this.mask;
    let i = hash(id) & mask;
    for (;;) {
      if (t[2 * i + 1] === EMPTY) return;
      if (t[2 * i] === id) break;
      i = (i + 1) & mask;
    }
    this.intCount--;
    // Backward-shift deletion: no tombstones, so lookups stay short under churn.
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const s = t[2 * j + 1] as number;
      if (s === EMPTY) break;
      const home = hash(t[2 * j] as number) & mask;
      // Move j into the hole unless its home lies cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        t[2 * hole] = t[2 * j] as number;
        t[2 * hole + 1] = s;
        hole = j;
      }
    }
    t[2 * hole] = 0;
    t[2 * hole + 1] = EMPTY;
  }

  /**
   * Notes that `count` ids are about to be set (a rebuild of a known size): the direct table may
   * grow as for that many from the first, instead of growing step by step as ids arrive and moving
   * the hashed ids it then covers (ids set in ascending order, sparse, would all be hashed first).
   */
  reserve(count: number): void {
    this.expected = count;
  }

  /** The ids held, or expected if more, that the direct table's length is allowed by. */
  private held(): number {
    const count = this.intCount + this.directCount;
    return count > this.expected ? count : this.expected;
  }

  clear(): void {
    this.expected = 0;
    this.table = new Int32Array(2 * 16);
    this.mask = 15;
    this.intCount = 0;
    this.direct = new Int32Array(0);
    this.directCount = 0;
    this.other.clear();
  }

  /**
   * Grows the direct table to cover `id` if it stays dense: at most DIRECT_SLACK cells per int id
   * held (plus a start allowance), so a few large ids never cost a large table. Hashed ids the grown
   * table covers move into it.
   */
  private growDirect(id: number): void {
    groupIndexWork.growthTries++;
    let len = Math.max(this.direct.length, 1024);
    while (len <= id) len *= 2;
    if (len > DIRECT_START && len > DIRECT_SLACK * (this.held() + 1)) return;
    const direct = new Int32Array(len);
    direct.set(this.direct);
    const from = this.direct.length;
    this.direct = direct;
    if (this.intCount === 0) return;
    const t = this.table;
    const moved: number[] = [];
    for (let i = 0; i < t.length; i += 2) {
      const k = t[i] as number;
      if (t[i + 1] !== EMPTY && k >= from && k < len) moved.push(k, (t[i + 1] as number) - 1);
    }
    for (let m = 0; m < moved.length; m += 2) {
      const k = moved[m] as number;
      this.removeHashed(k);
      groupIndexWork.movedToDirect++;
      direct[k] = (moved[m + 1] as number) + 1;
      this.directCount++;
    }
  }

  private insert(key: number, slot: number): void {
    const t = this.table;
    const mask = this.mask;
    let i = hash(key) & mask;
    while (t[2 * i + 1] !== EMPTY) i = (i + 1) & mask;
    t[2 * i] = key;
    t[2 * i + 1] = slot + 1;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    this.mask = old.length - 1;
    for (let i = 0; i < old.length; i += 2) {
      const s = old[i + 1] as number;
      if (s !== EMPTY) this.insert(old[i] as number, s - 1);
    }
  }
}

/** Ids from this bound on are always hashed; the direct table never exceeds it (16 MiB). */
const MAX_DIRECT = 1 << 22;
/** A direct table of this length is allowed however few ids it holds. */
const DIRECT_START = 1024;
/** Cells of the direct table allowed per int id held, beyond DIRECT_START. */
const DIRECT_SLACK = 4;

/**
 * Whether the int `id` may index a table by id while `held` ids are held: non-negative, below
 * MAX_DIRECT, and below DIRECT_START or `slack` cells per id held (a few large ids never cost a
 * long table). The direct table's rule (slack DIRECT_SLACK) and a join arrangement's keys as slots.
 */
export function isDenseId(id: number, held: number, slack: number): boolean {
  return id >= 0 && id < MAX_DIRECT && (id < DIRECT_START || id < slack * (held + 1));
}

function hash(key: number): number {
  const h = Math.imul(key, 0x9e3779b1);
  return h ^ (h >>> 15);
}
