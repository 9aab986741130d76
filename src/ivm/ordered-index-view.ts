// Read access to an ordered index, shared by the live index and its frozen snapshots: the sorted
// chunks, a cursor over them, and seeks by position or by key (see ordered-index.ts for the index).
import type { Value } from '../common/types.ts';
import { compareExact, compareValues } from '../common/values.ts';

/** Compares the first `width` order columns of `row` with the values `key` (`key[i]` ↔ order column i). */
export type KeyCompare = (row: readonly Value[], key: readonly Value[], width: number) => number;

export interface Chunk {
  readonly rows: (readonly Value[])[];
  /** Multiplicities, for a view without a unique key; null: every row once. */
  readonly counts: number[] | null;
  /** Rows counted with their multiplicity. */
  total: number;
  /** The index generation that made this chunk: a frozen snapshot may share chunks of ≤ its generation. */
  readonly gen: number;
}

export function compareKeyOf(order: readonly number[], exact = false): KeyCompare {
  const compare = exact ? compareExact : compareValues;
  return (row, key, width) => {
    for (let i = 0; i < width; i++) {
      const c = compare(row[order[i] as number] as Value, key[i] as Value);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** The order-column values of a row (what a cursor records). */
export function orderValues(row: readonly Value[], order: readonly number[]): Value[] {
  return order.map((i) => row[i] as Value);
}

/**
 * A position in an index: a row and how many of its copies are already behind the position. Valid
 * only while the index it came from does not change (a read is one synchronous block, or reads a
 * frozen snapshot).
 */
export class IndexCursor {
  constructor(
    private readonly chunks: readonly Chunk[],
    private chunk: number,
    private at: number,
    /** Copies of the current row already passed (always 0 for a view with a unique key). */
    public dup: number,
  ) {
    this.settle();
  }

  get done(): boolean {
    return this.chunk >= this.chunks.length;
  }

  /** The current row; only when not done. */
  get row(): readonly Value[] {
    return (this.chunks[this.chunk] as Chunk).rows[this.at] as readonly Value[];
  }

  /** The current row's multiplicity. */
  get count(): number {
    return (this.chunks[this.chunk] as Chunk).counts?.[this.at] ?? 1;
  }

  /** Moves to the next distinct row. */
  nextRow(): void {
    this.at += 1;
    this.dup = 0;
    this.settle();
  }

  /** Copies of rows before this position (its offset in the index). */
  offset(): number {
    let n = 0;
    for (let c = 0; c < this.chunk && c < this.chunks.length; c++) n += (this.chunks[c] as Chunk).total;
    const chunk = this.chunks[this.chunk];
    if (chunk === undefined) return n;
    if (chunk.counts === null) return n + this.at;
    for (let i = 0; i < this.at; i++) n += chunk.counts[i] as number;
    return n + this.dup;
  }

  private settle(): void {
    while (this.chunk < this.chunks.length && this.at >= (this.chunks[this.chunk] as Chunk).rows.length) {
      this.chunk += 1;
      this.at = 0;
    }
  }
}

/** Read access shared by the live index and its frozen snapshots. */
export abstract class IndexView {
  abstract readonly order: readonly number[];
  /** SQL order: a seek by value (a filter) finds every row of that value. */
  protected abstract readonly compareKey: KeyCompare;
  /** The order the rows are kept in and a row is found by (compareExact when counted). */
  protected abstract readonly compareRow: KeyCompare;
  protected abstract chunkList(): readonly Chunk[];
  /** Rows, counted with their multiplicity. */
  abstract readonly size: number;

  /** Compares a row's first `key.length` order columns with `key`. */
  compareTo(row: readonly Value[], key: readonly Value[]): number {
    return this.compareKey(row, key, key.length);
  }

  /** The position `offset` copies from the start. */
  cursorAt(offset: number): IndexCursor {
    const chunks = this.chunkList();
    let left = Math.max(0, offset);
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c] as Chunk;
      if (left >= chunk.total) {
        left -= chunk.total;
        continue;
      }
      if (chunk.counts === null) return new IndexCursor(chunks, c, left, 0);
      for (let i = 0; i < chunk.rows.length; i++) {
        const n = chunk.counts[i] as number;
        if (left < n) return new IndexCursor(chunks, c, i, left);
        left -= n;
      }
    }
    return new IndexCursor(chunks, chunks.length, 0, 0);
  }

  /**
   * The first position whose row's first `key.length` order columns are ≥ `key` (`strict`: > key).
   */
  seek(key: readonly Value[], strict = false, cmp: KeyCompare = this.compareKey): IndexCursor {
    const chunks = this.chunkList();
    const width = key.length;
    const before = (row: readonly Value[]): boolean => {
      const c = cmp(row, key, width);
      return strict ? c <= 0 : c < 0;
    };
    // The first chunk whose last row is not before the key.
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const rows = (chunks[mid] as Chunk).rows;
      if (before(rows[rows.length - 1] as readonly Value[])) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return new IndexCursor(chunks, lo, 0, 0);
    const rows = (chunks[lo] as Chunk).rows;
    let a = 0;
    let b = rows.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (before(rows[mid] as readonly Value[])) a = mid + 1;
      else b = mid;
    }
    return new IndexCursor(chunks, lo, a, 0);
  }

  /**
   * The position just after `dup` copies of the row whose order columns are `key` (a page that
   * ended inside a row's copies continues with the next copy); after every copy when it is gone.
   */
  cursorAfter(key: readonly Value[], dup: number): IndexCursor {
    const cursor = this.seek(key, false, this.compareRow);
    if (!cursor.done && this.compareRow(cursor.row, key, key.length) === 0) {
      if (dup < cursor.count) cursor.dup = Math.max(0, dup);
      else cursor.nextRow();
    }
    return cursor;
  }

  /** Copies whose first `key.length` order columns equal `key` (a range count, O(n/B + B)). */
  countPrefix(key: readonly Value[]): number {
    return this.seek(key, true).offset() - this.seek(key).offset();
  }

  /** Every distinct row with its multiplicity, in order (tests, small views). */
  *entries(): Generator<readonly [readonly Value[], number]> {
    for (const chunk of this.chunkList()) {
      for (let i = 0; i < chunk.rows.length; i++)
        yield [chunk.rows[i] as readonly Value[], chunk.counts?.[i] ?? 1];
    }
  }
}
