// An ordered index over a view's arrangement: its rows sorted by the view's order columns (the key,
// else all columns), in sorted chunks of a few hundred rows. A read seeks by position or by key in
// O(n/B + log B) and then walks; a change costs O(log n + B). Snapshots are copy-on-write: `freeze`
// shares every chunk with the live index, which copies a chunk before it changes one a snapshot may
// still read, so a snapshot stays at its epoch, with no copy of the rows, while the live index moves on.
// A counted index (a view without a unique key) holds equal rows of other texts (1.5, 1.50) as
// distinct rows: it is sorted, and a row found, by compareExact, a refinement of SQL order, so a
// seek by value (a filter) still finds the first of the equal rows.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { compareExact, compareValues } from '../common/values.ts';
import { compareKeyOf, IndexView, orderValues, type Chunk, type KeyCompare } from './ordered-index-view.ts';
import { SlicedSort } from './sliced-sort.ts';

export { IndexCursor, IndexView, orderValues, type Chunk, type KeyCompare } from './ordered-index-view.ts';

/** Rows per chunk when built; a chunk splits beyond twice this, and merges when much smaller. */
const CHUNK_ROWS = 512;
const SPLIT_ROWS = 2 * CHUNK_ROWS;
const MERGE_ROWS = CHUNK_ROWS / 4;
/** Approximate bytes a chunk slot costs (a reference, and its count). */
const SLOT_BYTES = 16;

/** The live index of one arrangement. */
export class OrderedIndex extends IndexView {
  readonly compareKey: KeyCompare;
  readonly compareRow: KeyCompare;
  private chunks: Chunk[] = [];
  private total = 0;
  /** The generation new chunks get; bumped by every freeze. */
  private gen = 1;
  /** Chunks of this generation or older may be shared with a live snapshot (-1: none). */
  private frozenGen = -1;
  private liveSnapshots = 0;
  private lastFrozen: FrozenIndex | null = null;
  private changedSinceFreeze = true;
  /** Bytes that live snapshots keep alive beyond the live index (copied chunks, rows they still hold). */
  retainedBytes = 0;

  constructor(
    readonly order: readonly number[],
    /** Rows carry multiplicities (a view without a unique key). */
    readonly counted: boolean,
    private readonly rowBytes: number,
  ) {
    super();
    this.compareKey = compareKeyOf(order);
    this.compareRow = counted ? compareKeyOf(order, true) : this.compareKey;
  }

  get size(): number {
    return this.total;
  }

  protected chunkList(): readonly Chunk[] {
    return this.chunks;
  }

  /** Fills an empty index from rows already in order (each distinct, with its multiplicity). */
  load(rows: readonly (readonly Value[])[], counts: readonly number[] | null): void {
    this.chunks = [];
    this.total = 0;
    for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
      const slice = rows.slice(i, i + CHUNK_ROWS);
      const c = counts === null ? null : counts.slice(i, i + CHUNK_ROWS);
      const total = c === null ? slice.length : c.reduce((s, n) => s + n, 0);
      this.chunks.push({ rows: slice, counts: c, total, gen: this.gen });
      this.total += total;
    }
    this.changedSinceFreeze = true;
  }

  /** Applies an arrangement's consolidated delta: retractions first, so -old/+new of a key works. */
  apply(rows: readonly (readonly Value[])[], weights: readonly number[]): void {
    for (let i = 0; i < rows.length; i++) {
      const w = weights[i] as number;
      if (w < 0) this.remove(rows[i] as readonly Value[], -w);
    }
    for (let i = 0; i < rows.length; i++) {
      const w = weights[i] as number;
      if (w > 0) this.insert(rows[i] as readonly Value[], w);
    }
  }

  insert(row: readonly Value[], n: number): void {
    this.touch();
    const key = orderValues(row, this.order);
    const width = key.length;
    if (this.chunks.length === 0) {
      this.chunks.push({ rows: [row], counts: this.counted ? [n] : null, total: n, gen: this.gen });
      this.total += n;
      return;
    }
    const cursor = this.locate(key);
    const c = Math.min(cursor.chunkIndex, this.chunks.length - 1);
    const chunk = this.writable(c);
    const at = cursor.chunkIndex > c ? chunk.rows.length : cursor.rowIndex;
    const existing = chunk.rows[at];
    if (existing !== undefined && this.compareRow(existing, key, width) === 0) {
      if (chunk.counts === null)
        throw new SluiceError('INTERNAL_ERROR', 'ordered index: two rows for one key');
      chunk.counts[at] = (chunk.counts[at] as number) + n;
    } else {
      chunk.rows.splice(at, 0, row);
      chunk.counts?.splice(at, 0, n);
    }
    chunk.total += n;
    this.total += n;
    if (chunk.rows.length > SPLIT_ROWS) this.split(c);
  }

  remove(row: readonly Value[], n: number): void {
    this.touch();
    const key = orderValues(row, this.order);
    const cursor = this.locate(key);
    const c = cursor.chunkIndex;
    const found = this.chunks[c]?.rows[cursor.rowIndex];
    if (found === undefined || this.compareRow(found, key, key.length) !== 0) {
      throw new SluiceError('INTERNAL_ERROR', 'ordered index: retraction of an absent row');
    }
    const chunk = this.writable(c);
    const at = cursor.rowIndex;
    const count = chunk.counts === null ? 1 : (chunk.counts[at] as number);
    if (count < n) throw new SluiceError('INTERNAL_ERROR', 'ordered index: negative multiplicity');
    if (this.liveSnapshots > 0) this.retainedBytes += this.rowBytes;
    if (count === n) {
      chunk.rows.splice(at, 1);
      chunk.counts?.splice(at, 1);
    } else (chunk.counts as number[])[at] = count - n;
    chunk.total -= n;
    this.total -= n;
    if (chunk.rows.length === 0) this.chunks.splice(c, 1);
    else if (chunk.rows.length < MERGE_ROWS) this.mergeSmall(c);
  }

  /**
   * A snapshot of the current contents, sharing every chunk (O(n/B)); until `release`, a chunk is
   * copied before it changes. Freezing twice with no change in between returns the same snapshot.
   */
  freeze(): FrozenIndex {
    const last = this.lastFrozen;
    if (last !== null && !this.changedSinceFreeze && last.acquire()) return last;
    const frozen = new FrozenIndex(this, this.chunks.slice(), this.total, () => this.released());
    this.frozenGen = this.gen;
    this.gen += 1;
    this.liveSnapshots += 1;
    this.retainedBytes += this.chunks.length * 8;
    this.lastFrozen = frozen;
    this.changedSinceFreeze = false;
    return frozen;
  }

  /**
   * A private, writable copy that shares every chunk (O(n/B)) and copies a chunk before it changes
   * one: what a read of an earlier epoch applies its undo delta to. Valid only while this index does
   * not change (the read is one synchronous block); this index is never touched by it.
   */
  fork(): OrderedIndex {
    return this.forkOf(this.chunks, this.total);
  }

  /** A fork over chunks of this index or of a snapshot of it (FrozenIndex.fork). */
  forkOf(chunks: readonly Chunk[], total: number): OrderedIndex {
    const copy = new OrderedIndex(this.order, this.counted, this.rowBytes);
    copy.chunks = chunks.slice();
    copy.total = total;
    // Every shared chunk is of this generation or older: the fork copies it before a change.
    copy.frozenGen = this.gen;
    copy.gen = this.gen + 1;
    return copy;
  }

  /** Snapshots currently held. */
  get snapshots(): number {
    return this.liveSnapshots;
  }

  private released(): void {
    this.liveSnapshots -= 1;
    if (this.liveSnapshots > 0) return;
    // Nothing shares a chunk any more: change them in place again.
    this.frozenGen = -1;
    this.retainedBytes = 0;
    this.lastFrozen = null;
  }

  private touch(): void {
    this.changedSinceFreeze = true;
  }

  /** The chunk at `c`, copied first if a snapshot may share it. */
  private writable(c: number): Chunk {
    const chunk = this.chunks[c] as Chunk;
    if (chunk.gen > this.frozenGen) return chunk;
    const copy: Chunk = {
      rows: chunk.rows.slice(),
      counts: chunk.counts === null ? null : chunk.counts.slice(),
      total: chunk.total,
      gen: this.gen,
    };
    this.chunks[c] = copy;
    this.retainedBytes += chunk.rows.length * SLOT_BYTES;
    return copy;
  }

  /** Where `key` is or would go: the first chunk whose last row is ≥ key, and the row in it. */
  private locate(key: readonly Value[]): { chunkIndex: number; rowIndex: number } {
    const chunks = this.chunks;
    const width = key.length;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const rows = (chunks[mid] as Chunk).rows;
      if (this.compareRow(rows[rows.length - 1] as readonly Value[], key, width) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunkIndex: lo, rowIndex: 0 };
    const rows = (chunks[lo] as Chunk).rows;
    let a = 0;
    let b = rows.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.compareRow(rows[mid] as readonly Value[], key, width) < 0) a = mid + 1;
      else b = mid;
    }
    return { chunkIndex: lo, rowIndex: a };
  }

  private split(c: number): void {
    const chunk = this.chunks[c] as Chunk;
    const half = chunk.rows.length >>> 1;
    const make = (from: number, to: number): Chunk => {
      const counts = chunk.counts === null ? null : chunk.counts.slice(from, to);
      return {
        rows: chunk.rows.slice(from, to),
        counts,
        total: counts === null ? to - from : counts.reduce((s, n) => s + n, 0),
        gen: this.gen,
      };
    };
    this.chunks.splice(c, 1, make(0, half), make(half, chunk.rows.length));
  }

  /** Merges a small chunk into a neighbour when the two fit one chunk. */
  private mergeSmall(c: number): void {
    const chunk = this.chunks[c] as Chunk;
    const next = this.chunks[c + 1];
    const prev = this.chunks[c - 1];
    const [first, at] =
      next !== undefined && next.rows.length + chunk.rows.length <= CHUNK_ROWS
        ? [chunk, c]
        : prev !== undefined && prev.rows.length + chunk.rows.length <= CHUNK_ROWS
          ? [prev, c - 1]
          : [null, -1];
    if (first === null) return;
    const second = this.chunks[at + 1] as Chunk;
    const merged: Chunk = {
      rows: first.rows.concat(second.rows),
      counts: first.counts === null ? null : first.counts.concat(second.counts as number[]),
      total: first.total + second.total,
      gen: this.gen,
    };
    this.chunks.splice(at, 2, merged);
  }
}

/** A snapshot of an index at one moment: immutable, shared by every reader of that moment. */
export class FrozenIndex extends IndexView {
  readonly order: readonly number[];
  protected readonly compareKey: KeyCompare;
  protected readonly compareRow: KeyCompare;
  private refs = 1;

  constructor(
    /** The live index this is a snapshot of. */
    readonly source: OrderedIndex,
    private readonly chunks: readonly Chunk[],
    readonly size: number,
    private readonly onRelease: () => void,
  ) {
    super();
    this.order = source.order;
    this.compareKey = source.compareKey;
    this.compareRow = source.compareRow;
  }

  protected chunkList(): readonly Chunk[] {
    return this.chunks;
  }

  /** Bytes the snapshots of this index keep alive (shared by all of them). */
  retainedBytes(): number {
    return this.source.retainedBytes;
  }

  /**
   * A private, writable copy of this snapshot, sharing its chunks (see OrderedIndex.fork); valid for as
   * long as this snapshot is held, across turns of the event loop.
   */
  fork(): OrderedIndex {
    return this.source.forkOf(this.chunks, this.size);
  }

  /** One more holder; false once released by all (then freeze again). */
  acquire(): boolean {
    if (this.refs === 0) return false;
    this.refs += 1;
    return true;
  }

  release(): void {
    if (this.refs === 0) return;
    this.refs -= 1;
    if (this.refs === 0) this.onRelease();
  }
}

/**
 * Builds an index from rows captured at one moment, in slices: runs of a few thousand rows are
 * sorted, then merged pairwise, each `work` call stopping at its deadline, so building the index of a
 * million-row view never holds the caller for long. Changes made meanwhile are the caller's to queue.
 */
export class IndexBuild {
  private readonly sort: SlicedSort<readonly Value[]> | SlicedSort<CountedRow>;
  readonly index: OrderedIndex;

  /** `counts`: the multiplicity of each row, for a view without a unique key (else null). */
  constructor(
    order: readonly number[],
    rowBytes: number,
    rows: (readonly Value[])[],
    counts: readonly number[] | null,
  ) {
    this.index = new OrderedIndex(order, counts !== null, rowBytes);
    const cmp = compareRowsOf(order, counts !== null);
    if (counts === null) this.sort = new SlicedSort(rows, cmp);
    else {
      const items = rows.map((row, r): CountedRow => ({ row, count: counts[r] as number }));
      this.sort = new SlicedSort(items, (a, b) => cmp(a.row, b.row));
    }
  }

  private filled = false;

  get done(): boolean {
    return this.filled;
  }

  /** Sorts until `deadline` (performance.now() ms) or the end; true once the index is filled. */
  work(deadline: number): boolean {
    if (this.filled) return true;
    if (!this.sort.work(deadline)) return false;
    this.filled = true;
    if (this.index.counted) {
      // Equal rows (a keyless table's repeated rows) are adjacent once sorted: one entry each.
      const items = (this.sort as SlicedSort<CountedRow>).result();
      const rows: (readonly Value[])[] = [];
      const counts: number[] = [];
      const cmp = compareRowsOf(this.index.order, true);
      for (const e of items) {
        const last = rows.length - 1;
        if (last >= 0 && cmp(rows[last] as readonly Value[], e.row) === 0)
          counts[last] = (counts[last] as number) + e.count;
        else {
          rows.push(e.row);
          counts.push(e.count);
        }
      }
      this.index.load(rows, counts);
    } else this.index.load((this.sort as SlicedSort<readonly Value[]>).result(), null);
    return true;
  }
}

interface CountedRow {
  readonly row: readonly Value[];
  readonly count: number;
}

function compareRowsOf(
  order: readonly number[],
  exact: boolean,
): (a: readonly Value[], b: readonly Value[]) => number {
  const n = order.length;
  const compare = exact ? compareExact : compareValues;
  return (a, b) => {
    for (let i = 0; i < n; i++) {
      const col = order[i] as number;
      const c = compare(a[col] as Value, b[col] as Value);
      if (c !== 0) return c;
    }
    return 0;
  };
}
