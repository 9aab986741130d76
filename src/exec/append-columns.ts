// An insert-only keyless table's rows, kept column by column in chunks: no per-row object survives
// an epoch, and a large batch prepared column by column becomes a chunk as it is (its arrays are
// adopted, not copied). Small batches and single rows go to an open tail chunk. Rows only ever
// append, so the first `length` rows seen at any moment never change: a capture is the chunk list
// as it is, read back later while the table grows.
import type { Value } from '../common/types.ts';
import type { RowCapture } from '../ivm/row-capture.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { lazyEntries } from '../ivm/lazy-entries.ts';

/** A batch this large is adopted as a chunk of its own; smaller ones are copied into the tail. */
const ADOPT_ROWS = 1024;
/** The open tail chunk is closed at this many rows. */
const TAIL_ROWS = 8192;

interface Chunk {
  readonly columns: readonly (readonly Value[])[];
  /** Row number of the chunk's first row. */
  readonly start: number;
}

export class AppendColumns {
  private readonly chunks: Chunk[] = [];
  /** The open chunk's columns (the last entry of `chunks`), or null. */
  private tail: Value[][] | null = null;
  length = 0;

  constructor(private readonly width: number) {}

  private openTail(): Value[][] {
    if (this.tail !== null && (this.tail[0] as Value[]).length < TAIL_ROWS) return this.tail;
    const tail: Value[][] = Array.from({ length: this.width }, () => []);
    this.chunks.push({ columns: tail, start: this.length });
    this.tail = tail;
    return tail;
  }

  push(row: readonly Value[]): void {
    const tail = this.openTail();
    for (let c = 0; c < this.width; c++) (tail[c] as Value[]).push(row[c] as Value);
    this.length++;
  }

  /**
   * Appends rows given column by column (every column as long as the first). A large batch's
   * arrays become the table's own: the caller must not change them afterwards.
   */
  pushColumns(added: readonly (readonly Value[])[]): void {
    const n = (added[0] as readonly Value[]).length;
    if (n >= ADOPT_ROWS) {
      this.chunks.push({ columns: added, start: this.length });
      this.tail = null;
      this.length += n;
      return;
    }
    for (let i = 0; i < n; i++) {
      const tail = this.openTail();
      for (let c = 0; c < this.width; c++)
        (tail[c] as Value[]).push((added[c] as readonly Value[])[i] as Value);
      this.length++;
    }
  }

  /** The first `length` rows as they are now (they never change: chunks only grow at the end). */
  capture(): CapturedChunks {
    return new CapturedChunks(this.chunks.slice(), this.length, this.width);
  }

  /**
   * Checkpoint entries `a<i>` → row for rows [from, length) as they are now, built only when read:
   * an array whose elements are made on access. A sliced checkpoint write then pays for a million
   * rows across its slices instead of in the one synchronous call that takes every state's delta
   * (which stalled the server for about 250 ms at 1.1M rows). Those rows never change, so reading
   * them later, while epochs go on, reads the rows of the checkpoint's epoch.
   */
  entriesFrom(from: number): readonly (readonly [string, unknown])[] {
    const capture = this.capture();
    return lazyEntries(Math.max(0, capture.length - from), (i) => [`a${from + i}`, capture.row(from + i)]);
  }

  *rows(): Generator<readonly Value[]> {
    for (const chunk of this.chunks) {
      const n = (chunk.columns[0] as readonly Value[]).length;
      for (let i = 0; i < n; i++) yield rowAt(chunk.columns, i, this.width);
    }
  }
}

function rowAt(columns: readonly (readonly Value[])[], i: number, width: number): Value[] {
  const row = new Array<Value>(width);
  for (let c = 0; c < width; c++) row[c] = (columns[c] as readonly Value[])[i] as Value;
  return row;
}

/** Rows [0, length) of chunked columns, read in slices. */
export class CapturedChunks implements RowCapture {
  constructor(
    private readonly chunks: readonly Chunk[],
    readonly length: number,
    private readonly width: number,
  ) {}

  /** The chunk holding row `at` (chunks are in row order). */
  private chunkIndex(at: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.chunks[mid] as Chunk).start <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Row `at` (below `length`). */
  row(at: number): Value[] {
    const chunk = this.chunks[this.chunkIndex(at)] as Chunk;
    return rowAt(chunk.columns, at - chunk.start, this.width);
  }

  slice(from: number, to: number): ZBatch {
    const end = Math.min(to, this.length);
    const rows: Value[][] = [];
    if (from < end) {
      let k = this.chunkIndex(from);
      for (let i = from; i < end;) {
        const chunk = this.chunks[k] as Chunk;
        const n = (chunk.columns[0] as readonly Value[]).length;
        for (let j = i - chunk.start; j < n && i < end; j++, i++)
          rows.push(rowAt(chunk.columns, j, this.width));
        k++;
      }
    }
    return { rows, weights: new Array<number>(rows.length).fill(1), consolidated: false };
  }
}
