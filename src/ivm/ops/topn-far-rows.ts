// The far rows of a large Top-N partition: rows ranked past its sorted part and its small unordered
// tail, held sorted in chunks so an insert, a delete or taking the first row costs O(log n + B).
import type { Value } from '../../common/types.ts';

/** The full order of a Top-N's rows (the ORDER BY, then the rest of the row). */
export type RowCompare = (a: readonly Value[], b: readonly Value[]) => number;

/** Rows a chunk gets when split or loaded; a chunk splits past twice this. */
const CHUNK_ROWS = 512;

interface FarChunk {
  rows: (readonly Value[])[];
  /** The rows' images (doubles), parallel to `rows`. */
  keys: number[];
}

/** Work counters (rows and images visited), read by tests to bound a change's cost. */
export const topNWork = { visited: 0 };

/**
 * Distinct rows, one copy each, in (image, compare) order. Only partitions with images use it (a row
 * without one settles the whole partition into its flat sorted arrays first).
 */
export class FarRows {
  private chunks: FarChunk[] = [];
  size = 0;

  /** Fills it with rows already in order (replacing what it held). */
  load(rows: readonly (readonly Value[])[], keys: readonly number[], from: number, to: number): void {
    this.chunks = [];
    for (let i = from; i < to; i += CHUNK_ROWS) {
      const end = Math.min(to, i + CHUNK_ROWS);
      this.chunks.push({ rows: rows.slice(i, end), keys: keys.slice(i, end) });
    }
    this.size = to - from;
    topNWork.visited += to - from;
  }

  /** Appends every row, in order, to `rows` and `keys`, and empties it. */
  drainInto(rows: (readonly Value[])[], keys: number[]): void {
    for (const c of this.chunks) {
      for (let i = 0; i < c.rows.length; i++) {
        rows.push(c.rows[i] as readonly Value[]);
        keys.push(c.keys[i] as number);
      }
    }
    topNWork.visited += this.size;
    this.chunks = [];
    this.size = 0;
  }

  /** The first row's image (Infinity: empty). */
  firstKey(): number {
    const c = this.chunks[0];
    return c === undefined ? Infinity : (c.keys[0] as number);
  }

  /** The first row (call only when not empty). */
  firstRow(): readonly Value[] {
    return (this.chunks[0] as FarChunk).rows[0] as readonly Value[];
  }

  /** Removes the first row (call only when not empty). */
  shift(): void {
    const c = this.chunks[0] as FarChunk;
    topNWork.visited += c.rows.length;
    c.rows.shift();
    c.keys.shift();
    this.size--;
    if (c.rows.length === 0) this.chunks.shift();
  }

  insert(row: readonly Value[], image: number, compare: RowCompare): void {
    if (this.chunks.length === 0) {
      this.chunks.push({ rows: [row], keys: [image] });
      this.size = 1;
      return;
    }
    const c = Math.min(this.chunkOf(row, image, compare), this.chunks.length - 1);
    const chunk = this.chunks[c] as FarChunk;
    const at = this.indexIn(chunk, row, image, compare);
    chunk.rows.splice(at, 0, row);
    chunk.keys.splice(at, 0, image);
    topNWork.visited += chunk.rows.length;
    this.size++;
    if (chunk.rows.length > 2 * CHUNK_ROWS) {
      const rest: FarChunk = {
        rows: chunk.rows.splice(CHUNK_ROWS),
        keys: chunk.keys.splice(CHUNK_ROWS),
      };
      this.chunks.splice(c + 1, 0, rest);
      topNWork.visited += this.chunks.length;
    }
  }

  /** The held row equal to `row`, or null. */
  find(row: readonly Value[], image: number, compare: RowCompare): readonly Value[] | null {
    const c = this.chunkOf(row, image, compare);
    const at = this.equalAt(c, row, image, compare);
    return at < 0 ? null : ((this.chunks[c] as FarChunk).rows[at] as readonly Value[]);
  }

  /** Removes the row equal to `row`; returns the row it held, or null (not there). */
  remove(row: readonly Value[], image: number, compare: RowCompare): readonly Value[] | null {
    const c = this.chunkOf(row, image, compare);
    const at = this.equalAt(c, row, image, compare);
    if (at < 0) return null;
    const chunk = this.chunks[c] as FarChunk;
    const there = chunk.rows[at] as readonly Value[];
    chunk.rows.splice(at, 1);
    chunk.keys.splice(at, 1);
    topNWork.visited += chunk.rows.length;
    this.size--;
    if (chunk.rows.length === 0) {
      this.chunks.splice(c, 1);
      topNWork.visited += this.chunks.length;
    }
    return there;
  }

  /** Where chunk `c` holds a row equal to `row` (of image `image`), or -1. */
  private equalAt(c: number, row: readonly Value[], image: number, compare: RowCompare): number {
    const chunk = this.chunks[c];
    if (chunk === undefined) return -1;
    const at = this.indexIn(chunk, row, image, compare);
    const there = chunk.rows[at];
    if (there === undefined || chunk.keys[at] !== image) return -1;
    return there === row || compare(there, row) === 0 ? at : -1;
  }

  /** Approximate heap bytes of the structure, not of the rows. */
  bytes(): number {
    return 48 + 48 * this.chunks.length + 16 * this.size;
  }

  /** The first chunk whose last row is not before `row` (chunks.length: none). */
  private chunkOf(row: readonly Value[], image: number, compare: RowCompare): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = chunks[mid] as FarChunk;
      const last = c.rows.length - 1;
      if (before(c.keys[last] as number, c.rows[last] as readonly Value[], image, row, compare)) lo = mid + 1;
      else hi = mid;
      topNWork.visited++;
    }
    return lo;
  }

  /** The first index of `chunk` whose row is not before `row`. */
  private indexIn(chunk: FarChunk, row: readonly Value[], image: number, compare: RowCompare): number {
    let lo = 0;
    let hi = chunk.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(chunk.keys[mid] as number, chunk.rows[mid] as readonly Value[], image, row, compare))
        lo = mid + 1;
      else hi = mid;
      topNWork.visited++;
    }
    return lo;
  }
}

/** Whether the row (ka, a) sorts before the row (kb, b): images first, the full compare on a tie. */
function before(
  ka: number,
  a: readonly Value[],
  kb: number,
  b: readonly Value[],
  compare: RowCompare,
): boolean {
  if (ka !== kb) return ka < kb;
  return a !== b && compare(a, b) < 0;
}
