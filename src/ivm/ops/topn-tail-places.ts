// Where a keyed input's rows were appended to their partitions' unordered tails, by key: a tail
// delete reads its row's index here and takes it there (TopNOp.takeTail) instead of scanning the
// tail's images. Only a hint: a row moved since (the tail's last row swapped into a hole, a refill,
// a sort) is not where its note says, and the caller, checking the row at that index, scans. Keys
// that are small non-negative ints (a serial id) index a typed array directly; others go in a Map.
import type { Value } from '../../common/types.ts';

/** Cells of the direct table allowed per row held, beyond DIRECT_START (as a GroupIndex's rule). */
const DIRECT_SLACK = 4;
const DIRECT_START = 1024;
/** The largest direct table (2^26 cells: 256 MB would be too much; keys past it go in the Map). */
const MAX_DIRECT = 1 << 26;

export class TailPlaces {
  /** index + 1 by key, for int keys below its length (0: none). */
  private direct = new Int32Array(0);
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
        this.direct[key] = at + 1;
        return;
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
    return 4 * this.direct.length + 40 * this.other.size;
  }

  /** Grows the direct table to cover `key` if that stays within DIRECT_SLACK cells per row held. */
  private grow(key: number, held: number): void {
    let len = Math.max(this.direct.length, DIRECT_START);
    while (len <= key) len *= 2;
    if (len > MAX_DIRECT || (len > DIRECT_START && len > DIRECT_SLACK * (held + 1))) return;
    const next = new Int32Array(len);
    next.set(this.direct);
    this.direct = next;
  }
}
