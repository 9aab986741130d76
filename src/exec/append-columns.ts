// An insert-only keyless table's rows, kept column by column in chunks: no per-row object survives
// an epoch, and a large batch given column by column is copied into a chunk of its own, sized to
// it, in the typed forms below. Small batches and single rows go to an open tail chunk, whose columns are
// Float64Arrays while every value written to them is a number (INT, BIGINT in the safe range,
// DOUBLE: a Float64Array holds each exactly, -0 and NaN included): their values then live outside
// the JS heap, where the young generation's collector neither copies nor promotes them. As JS
// arrays, the tail's columns grew by pushes, each growth a fresh backing store in the young
// generation that every scavenge copied while the chunk filled (at batch 100 about a third of the
// scavenges of the canonical pipeline). A tail column starts as an Int32Array while its values are
// int32 (not -0): half the fresh off-heap bytes of a Float64Array, and every tail is fresh memory
// whose pages the kernel faults in and zeroes (the tail's allocation was ≈ 14% of a batch-100
// canonical profile). A column starts narrower still, as a Uint8Array while its values are in
// 0..255 (a quantity, a flag, a small code: a quarter of an Int32Array's pages). A column that
// receives a larger int32 turns into an Int32Array, another number into a Float64Array, and any
// other value into an array of values, for the rest of its chunk; the next tail starts each column
// in the form the last one ended in. Rows only ever append, so the first `length` rows seen at any
// moment never change: a capture is the chunk list as it is, read back later while the table grows.
import type { Value } from '../common/types.ts';
import type { RowCapture } from '../ivm/row-capture.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { lazyEntries } from '../ivm/lazy-entries.ts';

/** A batch this large is copied into a chunk of its own; smaller ones into the tail. */
const OWN_CHUNK_ROWS = 1024;
/** The open tail chunk is closed at this many rows. */
const TAIL_ROWS = 8192;
/** A small table's first tail holds this many rows in its typed columns (doubled as it fills). */
const TAIL_START = 64;

/** A chunk's column: numbers in a typed array (its first `count` cells), or values. */
type StoredColumn = Value[] | Float64Array | Int32Array | Uint8Array;

/**
 * The typed forms a tail column starts in (it moves from Uint8Array to Int32Array to Float64Array to
 * values).
 */
const INT32 = 0;
const FLOAT64 = 1;
const UINT8 = 2;

/** Moves the tail's column `c` (its first `count` cells) into the wider `wide`, then writes `v`. */
function widen(
  tail: Chunk,
  c: number,
  col: Uint8Array | Int32Array,
  wide: Int32Array | Float64Array,
  v: number,
): void {
  const i = tail.count;
  wide.set(col.subarray(0, i));
  wide[i] = v;
  tail.columns[c] = wide;
}

/** An empty typed column of `capacity` cells in `form`. */
function typedColumn(form: number, capacity: number): Uint8Array | Int32Array | Float64Array {
  if (form === UINT8) return new Uint8Array(capacity);
  return form === INT32 ? new Int32Array(capacity) : new Float64Array(capacity);
}

function formOf(col: Uint8Array | Int32Array | Float64Array): number {
  return col instanceof Float64Array ? FLOAT64 : col instanceof Uint8Array ? UINT8 : INT32;
}

/** An integer in 0..255 (not -0): a Uint8Array gives it back as it is. */
function isUint8(v: number): boolean {
  return (v & 255) === v && (v !== 0 || 1 / v > 0);
}

/** An int32 an Int32Array gives back as it is: -0 is not one (its cell would read 0). */
function isInt32(v: number): boolean {
  return (v | 0) === v && (v !== 0 || 1 / v > 0);
}

interface Chunk {
  /** Replaced in place while the chunk is the tail (a typed column grown, or turned into values). */
  readonly columns: StoredColumn[];
  /** Row number of the chunk's first row. */
  readonly start: number;
  /** Rows in the chunk (a typed column may have room for more). */
  count: number;
  /** Rows the chunk's typed columns have room for (all alike). */
  capacity: number;
}

export class AppendColumns {
  private readonly chunks: Chunk[] = [];
  /** The open chunk (the last entry of `chunks`), or null. */
  private tail: Chunk | null = null;
  length = 0;
  /** The form each column of the last tail ended in (the next tail's columns start in it). */
  private readonly forms: number[];
  /** Runs of a column copied as known integers (pushColumns' `ints`), for tests. */
  intRuns = 0;

  constructor(private readonly width: number) {
    this.forms = new Array<number>(width).fill(UINT8);
  }

  private openTail(): Chunk {
    const open = this.tail;
    if (open !== null && open.count < TAIL_ROWS) {
      if (open.count === open.capacity) this.growTail(open);
      return open;
    }
    // A table that has filled a tail already will likely fill this one: its room at once, rather
    // than seven doublings (a fresh ArrayBuffer each, ≈ 3% of a batch-100 run's profile).
    const tail = this.newChunk(this.length >= TAIL_ROWS ? TAIL_ROWS : TAIL_START);
    this.chunks.push(tail);
    this.tail = tail;
    return tail;
  }

  /**
   * An empty chunk of `capacity` rows at the table's end, each column in the form the last chunk's
   * ended in (the open tail's forms noted first).
   */
  private newChunk(capacity: number): Chunk {
    if (this.tail !== null) this.noteForms(this.tail);
    const columns: StoredColumn[] = [];
    for (let c = 0; c < this.width; c++) columns.push(typedColumn(this.forms[c] as number, capacity));
    return { columns, start: this.length, count: 0, capacity };
  }

  /** Records the forms a closing tail's columns ended in. */
  private noteForms(tail: Chunk): void {
    for (let c = 0; c < this.width; c++) {
      const col = tail.columns[c] as StoredColumn;
      // A column that met a non-number (a NULL, a text) starts typed again: most such columns are
      // numbers with a few NULLs, and a column of texts turns into values at its first row.
      this.forms[c] = Array.isArray(col) ? INT32 : formOf(col);
    }
  }

  /** Doubles the room of the tail's typed columns. */
  private growTail(tail: Chunk): void {
    tail.capacity = Math.min(2 * tail.capacity, TAIL_ROWS);
    const columns = tail.columns;
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c] as StoredColumn;
      if (Array.isArray(col)) continue;
      const grown = typedColumn(formOf(col), tail.capacity);
      grown.set(col);
      columns[c] = grown;
    }
  }

  /** Writes the tail's next row's value of column `c` (the row is counted by the caller). */
  private put(tail: Chunk, c: number, v: Value): void {
    const col = tail.columns[c] as StoredColumn;
    const i = tail.count;
    if (col instanceof Int32Array) {
      if (typeof v === 'number') {
        if (isInt32(v)) {
          col[i] = v;
          return;
        }
        // Another number: this column of the chunk keeps doubles from here on.
        widen(tail, c, col, new Float64Array(tail.capacity), v);
        return;
      }
    } else if (col instanceof Uint8Array) {
      if (typeof v === 'number') {
        if (isUint8(v)) {
          col[i] = v;
          return;
        }
        // A larger number: this column of the chunk keeps int32s, or doubles, from here on.
        widen(tail, c, col, isInt32(v) ? new Int32Array(tail.capacity) : new Float64Array(tail.capacity), v);
        return;
      }
    } else if (col instanceof Float64Array) {
      if (typeof v === 'number') {
        col[i] = v;
        return;
      }
    } else {
      col.push(v);
      return;
    }
    // Not a number: this column of the chunk keeps values from here on (pushed: a packed array).
    const values: Value[] = [];
    for (let r = 0; r < i; r++) values.push(col[r] as number);
    values.push(v);
    tail.columns[c] = values;
  }

  push(row: readonly Value[]): void {
    const tail = this.openTail();
    for (let c = 0; c < this.width; c++) this.put(tail, c, row[c] as Value);
    tail.count++;
    this.length++;
  }

  /**
   * Appends rows given column by column (every column as long as the first), copied: the caller
   * may write the arrays again once this returns. `ints[c]` true: the caller has checked that every
   * value of column c is an integer number, not -0, or NULL (the table's generated normaliser does
   * for an integer column): into an Int32Array or a Uint8Array such a column's values are tested by
   * their range alone, without the test of their type and of -0 a value of any kind needs.
   */
  pushColumns(added: readonly (readonly Value[])[], ints: readonly boolean[] | null = null): void {
    const n = (added[0] as readonly Value[]).length;
    if (n >= OWN_CHUNK_ROWS) {
      // A chunk of its own, its typed columns exactly the batch's size, filled one column at a
      // time. Adopted as they came (three 10,000-element JS arrays a batch of the canonical
      // pipeline), the batch's arrays lived on in the young generation until promoted: every
      // scavenge copied them, every full collection marked them.
      const chunk = this.newChunk(n);
      for (let c = 0; c < this.width; c++)
        this.putRun(chunk, c, added[c] as readonly Value[], 0, n, ints !== null && ints[c] === true);
      chunk.count = n;
      this.noteForms(chunk);
      this.chunks.push(chunk);
      this.tail = null;
      this.length += n;
      return;
    }
    // Column by column, a run of rows at a time (as many as the open tail takes).
    for (let i = 0; i < n;) {
      const tail = this.openTail();
      const run = Math.min(n - i, TAIL_ROWS - tail.count);
      while (tail.capacity < tail.count + run) this.growTail(tail);
      for (let c = 0; c < this.width; c++)
        this.putRun(tail, c, added[c] as readonly Value[], i, run, ints !== null && ints[c] === true);
      tail.count += run;
      this.length += run;
      i += run;
    }
  }

  /**
   * Writes `run` values of `from` from `i` on into the tail's column `c`, after its rows; `ints`:
   * they are integers or NULLs, not -0 (see pushColumns).
   */
  private putRun(
    tail: Chunk,
    c: number,
    from: readonly Value[],
    i: number,
    run: number,
    ints: boolean,
  ): void {
    const col = tail.columns[c] as StoredColumn;
    const at = tail.count;
    if (Array.isArray(col)) {
      for (let k = 0; k < run; k++) col.push(from[i + k] as Value);
      return;
    }
    if (ints) this.intRuns++;
    // One function per typed form, so that each one's stores see one kind of array.
    let done: number;
    if (col instanceof Int32Array)
      done = ints ? copyIntsToInt32(col, at, from, i, run) : copyInt32(col, at, from, i, run);
    else if (col instanceof Uint8Array)
      done = ints ? copyIntsToUint8(col, at, from, i, run) : copyUint8(col, at, from, i, run);
    else done = copyFloat64(col, at, from, i, run);
    // The rest through `put`, which widens the column at the value that did not fit.
    if (done < run) this.putRest(tail, c, from, i, run, done);
  }

  /** Writes values [k, run) of a run one by one, each through `put`. */
  private putRest(tail: Chunk, c: number, from: readonly Value[], i: number, run: number, k: number): void {
    const at = tail.count;
    tail.count = at + k;
    for (let j = k; j < run; j++, tail.count++) this.put(tail, c, from[i + j] as Value);
    tail.count = at;
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
      for (let i = 0; i < chunk.count; i++) yield rowAt(chunk.columns, i, this.width);
    }
  }

  /** How many of the chunks' columns hold JS values rather than numbers in a typed array. */
  valueColumns(): number {
    let n = 0;
    for (const chunk of this.chunks) for (const col of chunk.columns) if (Array.isArray(col)) n++;
    return n;
  }

  /** Bytes of the chunks' typed columns (their whole room, filled or not). */
  typedBytes(): number {
    let n = 0;
    for (const chunk of this.chunks)
      for (const col of chunk.columns)
        if (!Array.isArray(col)) n += (col as Float64Array | Int32Array | Uint8Array).byteLength;
    return n;
  }
}

/** Copies `run` values of `from` from `i` on to `to` from `at` on while they are int32s; how many. */
function copyInt32(to: Int32Array, at: number, from: readonly Value[], i: number, run: number): number {
  for (let k = 0; k < run; k++) {
    const v = from[i + k];
    if (typeof v !== 'number' || !isInt32(v)) return k;
    to[at + k] = v;
  }
  return run;
}

/**
 * Copies `run` integers or NULLs (no -0) of `from` from `i` on to `to` from `at` on while they are
 * int32s; how many. `(v | 0) === v` alone tells them (NULL gives 0), with no test of the type or of -0.
 */
function copyIntsToInt32(to: Int32Array, at: number, from: readonly Value[], i: number, run: number): number {
  for (let k = 0; k < run; k++) {
    const v = from[i + k] as number;
    if ((v | 0) !== v) return k;
    to[at + k] = v;
  }
  return run;
}

/** The same while they are in 0..255. */
function copyIntsToUint8(to: Uint8Array, at: number, from: readonly Value[], i: number, run: number): number {
  for (let k = 0; k < run; k++) {
    const v = from[i + k] as number;
    if ((v & 255) !== v) return k;
    to[at + k] = v;
  }
  return run;
}

/** Copies `run` values of `from` from `i` on to `to` from `at` on while they are in 0..255; how many. */
function copyUint8(to: Uint8Array, at: number, from: readonly Value[], i: number, run: number): number {
  for (let k = 0; k < run; k++) {
    const v = from[i + k];
    if (typeof v !== 'number' || !isUint8(v)) return k;
    to[at + k] = v;
  }
  return run;
}

/** Copies `run` values of `from` from `i` on to `to` from `at` on while they are numbers; how many. */
function copyFloat64(to: Float64Array, at: number, from: readonly Value[], i: number, run: number): number {
  for (let k = 0; k < run; k++) {
    const v = from[i + k];
    if (typeof v !== 'number') return k;
    to[at + k] = v;
  }
  return run;
}

function rowAt(columns: readonly StoredColumn[], i: number, width: number): Value[] {
  const row = new Array<Value>(width);
  for (let c = 0; c < width; c++) row[c] = (columns[c] as StoredColumn)[i] as Value;
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
        const n = chunk.count;
        for (let j = i - chunk.start; j < n && i < end; j++, i++)
          rows.push(rowAt(chunk.columns, j, this.width));
        k++;
      }
    }
    return { rows, weights: new Array<number>(rows.length).fill(1), consolidated: false };
  }
}
