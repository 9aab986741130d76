// Where a keyed input's rows were appended to their partitions' unordered tails, by key: a tail
// delete reads its row's index here and takes it there (TopNOp.takeTail) instead of scanning the
// tail's images. Only a hint: a row moved since (the tail's last row swapped into a hole, a refill,
// a sort) is not where its note says, and the caller, checking the row at that index, scans. Keys
// that are small non-negative ints (a serial id) index a typed array directly; others go in a Map.
// The direct table's cells are 16 bits: a note is an index into one partition's rows, below 2^16 on
// the direct path (the sorted rows are spilled to n + 2, the unordered tail holds at most TAIL_LIMIT);
// a larger one (a long partition sorted in full, not spilled yet) is noted in the Map. Half the bytes
// of 32-bit cells: over a million ids the table is 2 MB of state, not 4, and the random read of a
// tail delete lands in a table half the size.
import type { Value } from '../../common/types.ts';

/** Cells of the direct table allowed per row held, beyond DIRECT_START (as a GroupIndex's rule). */
const DIRECT_SLACK = 4;
const DIRECT_START = 1024;
/** The largest direct table (2^26 cells: 128 MB would be too much; keys past it go in the Map). */
const MAX_DIRECT = 1 << 26;
/** The largest index + 1 a direct cell holds. */
const MAX_CELL = 0xffff;

export class TailPlaces {
  /** index + 1 by key, for int keys below its length (0: none here; the Map may note it). */
  private direct = new Uint16Array(0);
  private readonly other = new Map<Value, number>();

  /** The index noted for `key`, or -1. */
  get(key: Value): number {
    if (typeof key === 'number' && key >= 0 && key < this.direct.length && (key | 0) === key) {
      const at = (this.direct[key] as number) - 1;
      if (at >= 0 || this.other.size === 0) return at;
    }
    if (this.other.size === 0) return -1;
    const at = this.other.get(key);
    return at === undefined ? -1 : at;
  }

  /** Notes `key` at `at` (replacing any note), `held` the rows held: the direct table's allowance. */
  set(key: Value, at: number, held: number): void {
    if (typeof key === 'number' && key >= 0 && (key | 0) === key) {
      if (key >= this.direct.length) this.grow(key, held);
      if (key < this.direct.length) {
        if (at < MAX_CELL) {
          this.direct[key] = at + 1;
          return;
        }
        // Too large for a cell: none here, so that `get` reads the Map's note.
        this.direct[key] = 0;
      }
    }
    this.other.set(key, at);
  }

  /** Drops `key`'s note, if any. */
  delete(key: Value): void {
    if (typeof key === 'number' && key >= 0 && key < this.direct.length && (key | 0) === key)
      this.direct[key] = 0;
    if (this.other.size !== 0) this.other.delete(key);
  }

  /** Approximate bytes held (the Map's entries at about 40 bytes each). */
  bytes(): number {
    return 2 * this.direct.length + 40 * this.other.size;
  }

  /** Grows the direct table to cover `key` if that stays within DIRECT_SLACK cells per row held. */
  private grow(key: number, held: number): void {
    let len = Math.max(this.direct.length, DIRECT_START);
    while (len <= key) len *= 2;
    if (len > MAX_DIRECT || (len > DIRECT_START && len > DIRECT_SLACK * (held + 1))) return;
    const next = new Uint16Array(len);
    next.set(this.direct);
    this.direct = next;
  }
}
