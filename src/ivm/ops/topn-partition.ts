// One partition of a Top-N, sorted and columnar: its distinct rows in ORDER BY order (peers by the
// whole row), the first sort key's numeric image in an array of doubles, multiplicities only once a
// row has two copies. A binary search compares doubles in one array instead of reading a row a step.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { FarRows, topNWork, type RowCompare } from './topn-far-rows.ts';
import type { KeyImage } from './topn-key-image.ts';
import { cutPartitionFrom, fillPartition, settleTail } from './topn-partition-bulk.ts';

export type { RowCompare };

/** A partition's `boundary` when no index is unaffected by a change (a small integer, not Infinity). */
export const NO_BOUNDARY = 0x3fffffff;

/** The most rows `spill` moves to a partition's unordered tail. */
const TAIL_ROWS = 128;
/**
 * The most rows the unordered tail holds: past it, rows go to the partition's far rows (sorted, in
 * chunks), so a scan of the tail (a delete there, a refill) visits at most this many images.
 */
export const TAIL_LIMIT = 512;
/** A sorted part longer than the kept rows by more than this moves its end to the far rows at once. */
const FAR_ROWS = 2 * TAIL_LIMIT;

/**
 * A partition's rows: `rows[0, sorted)` sorted by `compare` (a total order of distinct rows), each
 * with its multiplicity, then `rows[sorted, length)` an unordered tail of rows after all of them, one
 * copy each. `keys[i]` is the image of `rows[i]`, or `keys` is null once a row had no image: then
 * every search compares rows, and there is no tail. The sorted rows and the tail share one array of
 * rows and one of images (the tail is where the direct path of TopNOp.singleChange puts what ranks
 * well past the top, so that most changes need neither a search nor a shift): fewer objects per
 * partition, so a change to a cold partition misses the cache fewer times, and moving the last
 * sorted row to the tail is a change of `sorted` alone. The images are a plain array of doubles
 * (unboxed, on the heap), not a Float64Array: a typed array's store lies outside the heap (its growth
 * is external memory, which triggers collections) and costs an ArrayBuffer per partition; measured,
 * the typed array was slower here.
 */
export class SortedPartition {
  readonly rows: (readonly Value[])[] = [];
  keys: number[] | null;
  /** Multiplicities of the sorted rows, parallel to them; null while every row is there once. */
  counts: number[] | null = null;
  /** Rows of `rows` that are sorted (the rest are the tail). */
  sorted = 0;
  /** Rows with more than one copy (at 0, `counts` is dropped; topn-partition-bulk.ts recounts it). */
  multi = 0;
  /**
   * Rows after the sorted ones that did not fit the unordered tail (TAIL_LIMIT), one copy each,
   * sorted in chunks; null until a partition first grows that long. With `rows[sorted, length)` they
   * make the partition's tail: two sets of rows after every sorted row, in no order between them.
   */
  far: FarRows | null = null;
  /**
   * The first index from which a change cannot alter the kept range (NO_BOUNDARY: none; -1: unknown).
   * Small integers only: V8 keeps a field that ever held a double (Infinity) in a box of its own, one
   * more cold line per change, where a small integer sits in the object.
   */
  boundary = -1;
  /** The epoch that last grouped changes here, and this epoch's first and last change (TopNOp.step). */
  stamp = 0;
  head = -1;
  tail = -1;
  /**
   * The image of the last sorted row (null: no images, or no rows), kept beside the other fields: most
   * changes of a long partition go to the tail, decided by this alone, without reading `keys`. Null
   * rather than NaN so that V8 keeps the field tagged: an integer image (the common ORDER BY of an
   * integer column) then sits in the object itself, where a double-only field keeps every value in a
   * box of its own, one more cold line on every tail test (another image is a fresh box, as before).
   */
  private lastKey: number | null = null;

  constructor(withImages: boolean) {
    this.keys = withImages ? [] : null;
  }

  /** Distinct rows, sorted, in the tail and far. */
  get length(): number {
    const far = this.far;
    return far === null ? this.rows.length : this.rows.length + far.size;
  }

  /** Rows in the tail (unordered and far). */
  get tailLength(): number {
    return this.length - this.sorted;
  }

  /** Copies of sorted row `i`. */
  count(i: number): number {
    return this.counts === null ? 1 : (this.counts[i] as number);
  }

  /** Whether the first `n` rows are single copies (so a row's rank is its index). */
  singleCopiesUpTo(n: number): boolean {
    const counts = this.counts;
    if (counts === null) return true;
    const end = Math.min(n, counts.length);
    for (let i = 0; i < end; i++) if (counts[i] !== 1) return false;
    return true;
  }

  /** Stops using images (a row without one arrived): searches compare rows from now on. */
  dropImages(compare: RowCompare): void {
    this.settle(compare);
    this.keys = null;
    this.lastKey = null;
  }

  /** Sorts the tail (it sorts after every sorted row) into place: the partition is sorted in full again. */
  settle(compare: RowCompare): void {
    settleTail(this, compare);
  }

  /** Whether `row` (of image `image`) sorts after the sorted row at `at`: by images first. */
  sortsAfter(at: number, row: readonly Value[], image: number, compare: RowCompare): boolean {
    const keys = this.keys;
    if (keys !== null) {
      const there = keys[at] as number;
      if (image !== there) return image > there;
    }
    return compare(row, this.rows[at] as readonly Value[]) > 0;
  }

  /**
   * Whether `row` sorts after every sorted row (with images, and sorted rows not empty): where it
   * would go in the tail, or is in it. `sortsAfter` of the last sorted row, its image read from a
   * field (`lastKey`) rather than the images array.
   */
  afterSorted(row: readonly Value[], image: number, compare: RowCompare): boolean {
    const last = this.lastKey;
    if (last === null) return false;
    if (image !== last) return image > last;
    return compare(row, this.rows[this.sorted - 1] as readonly Value[]) > 0;
  }

  /** Notes the last sorted row's image after the sorted rows changed at their end. */
  syncLast(): void {
    const keys = this.keys;
    const n = this.sorted;
    this.lastKey = keys === null || n === 0 ? null : (keys[n - 1] as number);
  }

  /** Adds a row to the tail (one copy, after every sorted row): its unordered index, or -1 (far). */
  pushTail(row: readonly Value[], image: number, compare: RowCompare): number {
    const at = this.rows.length;
    if (at - this.sorted < TAIL_LIMIT) {
      this.rows.push(row);
      (this.keys as number[]).push(image);
      return at;
    }
    (this.far ??= new FarRows()).insert(row, image, compare);
    return -1;
  }

  /** Removes `row` from the unordered tail if it sits at `at`; returns the row held, or null. */
  takeTailAt(at: number, row: readonly Value[], image: number, compare: RowCompare): readonly Value[] | null {
    const keys = this.keys;
    if (at < this.sorted || keys === null || at >= keys.length || keys[at] !== image) return null;
    const there = this.rows[at] as readonly Value[];
    if (there !== row && compare(there, row) !== 0) return null;
    this.removeTail(at);
    return there;
  }

  /** Whether the tail holds `row`. */
  tailHolds(row: readonly Value[], image: number, compare: RowCompare): boolean {
    if (this.tailIndex(row, image, compare) >= 0) return true;
    return this.far !== null && this.far.find(row, image, compare) !== null;
  }

  /** Removes `row` from the tail (unordered or far); returns the row held, or null (not there). */
  takeTail(row: readonly Value[], image: number, compare: RowCompare): readonly Value[] | null {
    const i = this.tailIndex(row, image, compare);
    if (i >= 0) {
      const there = this.rows[i] as readonly Value[];
      this.removeTail(i);
      return there;
    }
    return this.far === null ? null : this.far.remove(row, image, compare);
  }

  /**
   * The index of `row` in the unordered tail (≥ `sorted`), or -1 (a scan of at most TAIL_LIMIT
   * images; rows read only where one is equal).
   */
  tailIndex(row: readonly Value[], image: number, compare: RowCompare): number {
    const keys = this.keys;
    if (keys === null) return -1;
    topNWork.visited += keys.length - this.sorted;
    for (let i = this.sorted; i < keys.length; i++) {
      if (keys[i] !== image) continue;
      const there = this.rows[i] as readonly Value[];
      if (there === row || compare(there, row) === 0) return i;
    }
    return -1;
  }

  /** Removes the tail's row at index `i` (the last row takes its place). */
  removeTail(i: number): void {
    const rows = this.rows;
    const keys = this.keys as number[];
    const last = rows.length - 1;
    rows[i] = rows[last] as readonly Value[];
    keys[i] = keys[last] as number;
    rows.pop();
    keys.pop();
  }

  /**
   * Moves the last sorted rows to the tail while there are more than `cap` (stopping at a row with
   * copies): to the unordered tail while it has fewer than TAIL_ROWS (nothing moves: the boundary
   * does), then to the far rows, so the sorted part stays short however long the partition.
   */
  spill(cap: number, compare: RowCompare): void {
    const counts = this.counts;
    // A partition sorted in full (settled, loaded) and long: its single copies past `cap` go to the
    // far rows at once (O(n), as the settle or load was), so that no later change shifts them.
    if (this.sorted === this.rows.length && this.sorted > cap + FAR_ROWS && (this.far?.size ?? 0) === 0) {
      let from = this.sorted;
      while (from > cap && (counts === null || counts[from - 1] === 1)) from--;
      if (this.sorted - from > FAR_ROWS) {
        const keys = this.keys as number[];
        (this.far ??= new FarRows()).load(this.rows, keys, from, this.sorted);
        this.rows.length = from;
        keys.length = from;
        if (counts !== null) counts.length = from;
        this.sorted = from;
      }
    }
    const rows = this.rows;
    while (this.sorted > cap && (counts === null || counts[this.sorted - 1] === 1)) {
      const at = this.sorted - 1;
      this.sorted = at;
      counts?.pop();
      if (rows.length - at <= TAIL_ROWS) continue;
      // The unordered tail is long already: the row goes to the far rows (else the sorted part would
      // grow with every insert ranked inside it, and every change shift it).
      const keys = this.keys as number[];
      const row = rows[at] as readonly Value[];
      const key = keys[at] as number;
      this.removeTail(at);
      (this.far ??= new FarRows()).insert(row, key, compare);
    }
    this.syncLast();
  }

  /** Moves the tail's first rows, in order, to the end of the sorted rows until there are `cap`. */
  refill(cap: number, compare: RowCompare): void {
    const rows = this.rows;
    const keys = this.keys as number[];
    const far = this.far;
    const wanted = Math.min(cap, this.length) - this.sorted;
    // The unordered tail's first rows found in one scan, however many are wanted (five for a Top-3).
    const picks = wanted > 0 ? this.firstOfTail(wanted, compare) : [];
    let p = 0;
    for (let taken = 0; taken < wanted; taken++) {
      const from = this.sorted;
      const best = p < picks.length ? (picks[p] as number) : -1;
      let fromFar = false;
      if (far !== null && far.size > 0) {
        const fk = far.firstKey();
        const bk = best < 0 ? Infinity : (keys[best] as number);
        fromFar =
          best < 0 || fk < bk || (fk === bk && compare(far.firstRow(), rows[best] as readonly Value[]) < 0);
      }
      if (far !== null && fromFar) {
        // The far rows' first comes next: the unordered tail's first row moves to the end.
        const fk = far.firstKey();
        const fr = far.firstRow();
        far.shift();
        const end = rows.length;
        if (from < end) {
          rows.push(rows[from] as readonly Value[]);
          keys.push(keys[from] as number);
          rows[from] = fr;
          keys[from] = fk;
          repoint(picks, p, from, end);
        } else {
          rows.push(fr);
          keys.push(fk);
        }
      } else {
        const row = rows[best] as readonly Value[];
        const key = keys[best] as number;
        rows[best] = rows[from] as readonly Value[];
        keys[best] = keys[from] as number;
        rows[from] = row;
        keys[from] = key;
        repoint(picks, ++p, from, best);
      }
      this.sorted++;
      this.counts?.push(1);
    }
    this.syncLast();
  }

  /** The indices of the unordered tail's first `k` rows (or all of them), in order: one scan. */
  private firstOfTail(k: number, compare: RowCompare): number[] {
    const rows = this.rows;
    const keys = this.keys as number[];
    const picks: number[] = [];
    let last = Infinity; // the last pick's image once there are k: a larger one is passed at once
    topNWork.visited += rows.length - this.sorted;
    for (let i = this.sorted; i < rows.length; i++) {
      const key = keys[i] as number;
      if (key > last) continue;
      let at = picks.length;
      if (at === k) {
        if (!tailBefore(rows, keys, i, picks[k - 1] as number, compare)) continue;
        at--;
      } else picks.push(i);
      while (at > 0 && tailBefore(rows, keys, i, picks[at - 1] as number, compare)) {
        picks[at] = picks[at - 1] as number;
        at--;
      }
      picks[at] = i;
      if (picks.length === k) last = keys[picks[k - 1] as number] as number;
    }
    return picks;
  }

  /**
   * The first index of the sorted rows whose row is not before `row` (`image`: its image, ignored
   * without images). Doubles decide unless images tie; only rows of `row`'s image are compared in full.
   */
  search(row: readonly Value[], image: number, compare: RowCompare): number {
    const rows = this.rows;
    const n = this.sorted;
    const keys = this.keys;
    if (keys === null) return searchRows(rows, 0, n, row, compare);
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((keys[mid] as number) < image) lo = mid + 1;
      else hi = mid;
    }
    if (lo === n || keys[lo] !== image) return lo;
    // Rows of the same image from `lo`: find where they end, then compare rows among them only.
    let end = n;
    let a = lo + 1;
    while (a < end) {
      const mid = (a + end) >>> 1;
      if ((keys[mid] as number) <= image) a = mid + 1;
      else end = mid;
    }
    return searchRows(rows, lo, end, row, compare);
  }

  /**
   * The held row equal to `row` and its copies, wherever it is (sorted, unordered tail, far), or null;
   * nothing moves (a checkpoint's delta reads rows this way without settling a long tail).
   */
  find(
    row: readonly Value[],
    image: number,
    compare: RowCompare,
  ): { row: readonly Value[]; count: number } | null {
    const at = this.search(row, image, compare);
    if (this.holds(at, row, image, compare))
      return { row: this.rows[at] as readonly Value[], count: this.count(at) };
    const i = this.tailIndex(row, image, compare);
    if (i >= 0) return { row: this.rows[i] as readonly Value[], count: 1 };
    const there = this.far === null ? null : this.far.find(row, image, compare);
    return there === null ? null : { row: there, count: 1 };
  }

  /**
   * Whether sorted row `at` is `row` (`at`: a search's result, the row if it is there). A row of
   * another image is another row: the row itself is read only when the images tie.
   */
  holds(at: number, row: readonly Value[], image: number, compare: RowCompare): boolean {
    if (at >= this.sorted) return false;
    const keys = this.keys;
    // Images first: an insert below every row of its image reads no row at all.
    if (keys !== null && keys[at] !== image) return false;
    const there = this.rows[at] as readonly Value[];
    return there === row || compare(there, row) === 0;
  }

  /** Inserts `count` copies of a new distinct row at sorted index `at` (where `search` put it). */
  insertAt(at: number, row: readonly Value[], image: number, count: number): void {
    const rows = this.rows;
    const n = this.sorted;
    const keys = this.keys;
    // The tail's first row moves to the end to make room; shifted by hand, since splice allocates
    // the array of what it removed, on every call.
    if (keys !== null) {
      keys.push(n < keys.length ? (keys[n] as number) : image);
      for (let j = n; j > at; j--) keys[j] = keys[j - 1] as number;
      keys[at] = image;
    }
    topNWork.visited += n - at;
    rows.push(n < rows.length ? (rows[n] as readonly Value[]) : row);
    for (let j = n; j > at; j--) rows[j] = rows[j - 1] as readonly Value[];
    rows[at] = row;
    this.sorted = n + 1;
    if (this.counts !== null) this.counts.splice(at, 0, count);
    else if (count !== 1) {
      this.counts = new Array<number>(n + 1).fill(1);
      this.counts[at] = count;
    }
    if (count !== 1) this.multi++;
    if (at === n) this.syncLast();
  }

  /** Removes the sorted row at `at` (all its copies). */
  removeAt(at: number): void {
    const rows = this.rows;
    const n = this.sorted;
    const last = rows.length - 1;
    const keys = this.keys;
    // The sorted rows after `at` shift down; the tail's last row fills the slot they leave.
    if (keys !== null) {
      for (let j = at + 1; j < n; j++) keys[j - 1] = keys[j] as number;
      if (last >= n) keys[n - 1] = keys[last] as number;
      keys.pop();
    }
    topNWork.visited += n - at;
    for (let j = at + 1; j < n; j++) rows[j - 1] = rows[j] as readonly Value[];
    if (last >= n) rows[n - 1] = rows[last] as readonly Value[];
    rows.pop();
    this.sorted = n - 1;
    if (this.counts !== null) {
      const [c] = this.counts.splice(at, 1);
      if (c !== 1) this.dropMulti();
    }
    if (at === n - 1) this.syncLast();
  }

  /** Adds `w` copies to the sorted row at `at`; returns its multiplicity, 0 when it left (removed here). */
  addCopies(at: number, w: number): number {
    const before = this.count(at);
    const after = before + w;
    if (after < 0) throw new SluiceError('INTERNAL_ERROR', 'top-n saw a negative multiplicity');
    if (after === 0) {
      this.removeAt(at);
      return 0;
    }
    if (after === before) return after;
    if (this.counts === null) this.counts = new Array<number>(this.sorted).fill(1);
    this.counts[at] = after;
    if (before === 1) this.multi++;
    else if (after === 1) this.dropMulti();
    return after;
  }

  /** Replaces the contents with rows already sorted (distinct), their multiplicities and images. */
  fill(rows: readonly (readonly Value[])[], counts: readonly number[], image: KeyImage | null): void {
    fillPartition(this, rows, counts, image);
  }

  /** Drops the sorted rows from `from` on and the whole tail, each passed to `dropped` (an insert-only trim). */
  cutFrom(from: number, dropped: (row: readonly Value[]) => void): void {
    cutPartitionFrom(this, from, dropped);
  }

  /** Approximate heap bytes of the structure, not of the rows (callers count those). */
  bytes(): number {
    return (
      160 +
      8 * this.rows.length +
      (this.keys === null ? 0 : 8 * this.keys.length) +
      (this.counts === null ? 0 : 8 * this.counts.length) +
      (this.far === null ? 0 : this.far.bytes())
    );
  }

  private dropMulti(): void {
    this.multi--;
    if (this.multi === 0) this.counts = null;
  }
}

/** The first index in [lo, hi) whose row is not before `row`. */
function searchRows(
  rows: readonly (readonly Value[])[],
  lo: number,
  hi: number,
  row: readonly Value[],
  compare: RowCompare,
): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const there = rows[mid] as readonly Value[];
    if (there !== row && compare(there, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Points the picks from `p` on that name index `was` (a row just moved) at `now`. */
function repoint(picks: number[], p: number, was: number, now: number): void {
  for (let q = p; q < picks.length; q++) if (picks[q] === was) picks[q] = now;
}

/** Whether row `i` of a partition's rows comes before row `j` (images, then the full compare). */
function tailBefore(
  rows: readonly (readonly Value[])[],
  keys: readonly number[],
  i: number,
  j: number,
  compare: RowCompare,
): boolean {
  const a = keys[i] as number;
  const b = keys[j] as number;
  return a < b || (a === b && compare(rows[i] as readonly Value[], rows[j] as readonly Value[]) < 0);
}
