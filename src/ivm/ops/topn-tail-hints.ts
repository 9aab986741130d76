// Where a Top-N's rows sit in their partitions' unordered tails, by the input's unique key: a delete
// of a row ranked past the top reads its slot here instead of scanning the tail's images (the scan
// was 40% of the operator's delete time on the bench: about 90 images, a cache miss every eight).
// A hint is only a hint: every use checks that the slot holds the row, and a missing or stale one
// (the row moved where no hint was written, or left the tail) falls back to the scan. So the hints
// need no upkeep when rows leave the tail or the partition, and correctness never depends on them.
import type { Value } from '../../common/types.ts';

/** Ids from this bound on get no hint (the table never exceeds 16 MiB). */
const MAX_IDS = 1 << 22;
/** A table of this length is allowed however few rows were noted. */
const START_IDS = 4096;
/** Cells allowed per row held, beyond START_IDS: sparse ids get no table, and scan. */
const SLACK = 8;

/**
 * Unique key (one INT column, non-negative, dense: ids of a serial column) → 1 + the row's index in
 * its partition's `rows`, in one Int32Array indexed by the id: one cell per id, 0 for none.
 */
export class TailHints {
  private table = new Int32Array(0);
  /** Distinct rows the operator holds (its state keeps this up to date), for the density rule. */
  held = 0;

  constructor(private readonly column: number) {}

  /** Notes that `row` is now at `index` of its partition's rows, in the unordered tail. */
  note(row: readonly Value[], index: number): void {
    const id = row[this.column];
    if (typeof id !== 'number' || (id | 0) !== id || id < 0) return;
    if (id >= this.table.length && !this.grow(id)) return;
    this.table[id] = index + 1;
  }

  /** The index last noted for `row`'s id, or -1 (the caller checks the row is there). */
  find(row: readonly Value[]): number {
    const id = row[this.column];
    if (typeof id !== 'number' || (id | 0) !== id || id < 0 || id >= this.table.length) return -1;
    return (this.table[id] as number) - 1;
  }

  /** Approximate bytes (the table lies outside the heap, as external memory). */
  bytes(): number {
    return this.table.byteLength;
  }

  /** Grows the table to cover `id` if it stays dense; false: `id` gets no hint. */
  private grow(id: number): boolean {
    if (id >= MAX_IDS) return false;
    let length = Math.max(this.table.length, 1024);
    while (length <= id) length *= 2;
    if (length > START_IDS && length > SLACK * this.held) return false;
    const table = new Int32Array(length);
    table.set(this.table);
    this.table = table;
    return true;
  }
}
