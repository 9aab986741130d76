// Entries keyed by a whole row, found by a hash of its values (hashRow) and compared in full
// (sameRow: the identity of their exact encodings), so no row is encoded to a string to be found.
// Open addressing with linear probing over typed arrays, slots by Fibonacci hashing; entries kept in
// arrival order by position. Used by the counted arrangement (counted-arrangement.ts, entries live
// across epochs, removed with backward shifts) and by consolidate (zset.ts, one batch, then reset).
import type { Value } from '../common/types.ts';
import { sameRow } from './arrangement.ts';

export class RowHashTable<E> {
  /** The entries by position, in arrival order; null where one was removed (until a compaction). */
  entries: (E | null)[] = [];
  /** hashRow of the row of `entries[p]`. */
  private hashes = new Int32Array(16);
  /** The largest table asked for; `table` is its first part in use. */
  private room = new Int32Array(64).fill(-1);
  /** A position in `entries` per slot, or -1 (free). */
  private table = this.room;
  /** 32 − log2(table size): the product's high bits are the slot. */
  private shift = 26;
  /** Entries held (not removed). */
  size = 0;

  /** `rowOf`: the row an entry stands for. */
  constructor(private readonly rowOf: (entry: E) => readonly Value[]) {}

  private home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  /** The slot holding `row` (of hash `hash`), or the complement of the free slot it would take. */
  find(row: readonly Value[], hash: number): number {
    const table = this.table;
    const mask = table.length - 1;
    for (let slot = this.home(hash); ; slot = (slot + 1) & mask) {
      const p = table[slot] as number;
      if (p === -1) return ~slot;
      if (this.hashes[p] === hash && sameRow(this.rowOf(this.entries[p] as E), row)) return slot;
    }
  }

  /** The position of the entry at a slot `find` returned (not complemented). */
  positionAt(slot: number): number {
    return this.table[slot] as number;
  }

  /** The entry at a slot `find` returned (not complemented). */
  at(slot: number): E {
    return this.entries[this.table[slot] as number] as E;
  }

  /** Adds `entry` (of hash `hash`) in the free slot `find` gave (as its complement); its position. */
  insert(freeSlot: number, entry: E, hash: number): number {
    const p = this.entries.length;
    if (p === this.hashes.length) {
      const grown = new Int32Array(p * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.entries.push(entry);
    this.hashes[p] = hash;
    this.table[~freeSlot] = p;
    this.size++;
    if (this.size * 2 > this.table.length) this.rebuild(this.table.length * 2);
    return p;
  }

  /**
   * Removes the entry at `slot`, moving later entries of its probe run back so every entry stays
   * reachable; positions change when the holes outnumber the entries (a compaction).
   */
  removeAt(slot: number): void {
    const table = this.table;
    const mask = table.length - 1;
    this.entries[table[slot] as number] = null;
    this.size--;
    let hole = slot;
    for (let at = (slot + 1) & mask; ; at = (at + 1) & mask) {
      const p = table[at] as number;
      if (p === -1) break;
      const home = this.home(this.hashes[p] as number);
      // the entry at `at` may move to `hole` when its home is not in the run (hole, at]
      if (hole <= at ? home <= hole || home > at : home <= hole && home > at) {
        table[hole] = p;
        hole = at;
      }
    }
    table[hole] = -1;
    if (this.entries.length > 64 && this.entries.length > this.size * 2) this.rebuild(table.length);
  }

  /** Empties the table, sized for `n` entries at most half full. */
  reset(n: number): void {
    let size = 64;
    while (size < n * 2) size *= 2;
    this.cleared(size);
    if (this.hashes.length < n) this.hashes = new Int32Array(size >>> 1);
    this.entries = [];
    this.size = 0;
  }

  /** A table of `size` slots, all free, in the room (grown if short: a batch's table is reused). */
  private cleared(size: number): Int32Array {
    if (this.room.length < size) this.room = new Int32Array(size);
    this.room.fill(-1, 0, size);
    this.table = this.room.length === size ? this.room : this.room.subarray(0, size);
    this.shift = 32 - Math.log2(size);
    return this.table;
  }

  /** Drops the holes from `entries` (arrival order kept) and re-slots every entry in a table of `size`. */
  private rebuild(size: number): void {
    let n = 0;
    for (let p = 0; p < this.entries.length; p++) {
      const e = this.entries[p] as E | null;
      if (e === null) continue;
      this.entries[n] = e;
      this.hashes[n] = this.hashes[p] as number;
      n++;
    }
    this.entries.length = n;
    const table = this.cleared(size);
    const mask = size - 1;
    for (let p = 0; p < n; p++) {
      let slot = this.home(this.hashes[p] as number);
      while (table[slot] !== -1) slot = (slot + 1) & mask;
      table[slot] = p;
    }
  }
}
