// Top-N per partition, and the ranking window functions: every input row is kept once, in its
// partition's SortedPartition (columnar: the rows in ORDER BY order, ties among peers broken by the
// whole row, the first key's image in an array of doubles; topn-partition.ts), checkpointed as one
// entry per distinct row (topn-rows.ts). For each partition an epoch touches, the rows ranked inside the
// kept range (from < rank ≤ to) before and after the epoch are compared and only the difference is
// emitted, so a row falling out of the top brings its successor in, in one epoch. The whole partition
// is kept, since any retraction inside the top must reveal the next row — unless the input is
// insert-only (src/planner/plan-insert-only.ts: it never retracts): then, after a touched partition's
// output is emitted, the rows that can never rank inside the kept range again are dropped (`trim`).
// This file holds the dispatch of an epoch's changes by partition and the direct single-row path;
// the general path's writes are topn-fold.ts, its walk of the kept range topn-ranked.ts.
import type { Value } from '../../common/types.ts';
import { compareByKeys, compareRows } from '../../common/top-n.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { Operator } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import { netKeptRows, refuseRetractions } from './topn-batch.ts';
import { keyImage, type KeyImage } from './topn-key-image.ts';
import { rowsMovedBy, type ChangeKnown } from './topn-moved.ts';
import { NO_BOUNDARY, type SortedPartition } from './topn-partition.ts';
import { applyChanges, forgetTail, imageIn, type Fold } from './topn-fold.ts';
import { emitDifference, keptEnd, rankedRange, type Ranked, type RankWalk } from './topn-ranked.ts';
import { TopNRows, type PartitionKey } from './topn-rows.ts';
import { TailPlaces } from './topn-tail-places.ts';

type TopNNode = Extract<DataflowNode, { kind: 'topn' }>;

/** The largest n of a Top-N whose single-row changes take the direct path (it checks n rows). */
const FAST_TOP_LIMIT = 64;

export class TopNOp implements Operator, Stateful {
  readonly stateId: string;
  private readonly state: TopNRows;
  private readonly compare: (a: readonly Value[], b: readonly Value[]) => number;
  private readonly peers: (a: readonly Value[], b: readonly Value[]) => number;
  private readonly image: KeyImage;
  private readonly to: number;
  /** Whether single-row changes may take the direct path (ROW_NUMBER ≤ n, n small, rank not shown). */
  private readonly direct: boolean;
  /** The input has a unique key: an inserted row is never already held. */
  private readonly distinctRows: boolean;
  /** Rows whose rank was computed so far (tests count the work an epoch does with it). */
  rowsRanked = 0;
  /** Partition changes that took the direct single-row path (`singleChange`; tests count them). */
  singleChanges = 0;
  /** Of those, the changes to a partition's unordered tail (tests count them). */
  tailChanges = 0;
  /** Scans of a partition's tail for a row (tests count them). */
  tailSearches = 0;
  /** Of the tail changes, the inserts `appendTails` took before the rest of their epoch (tests count them). */
  tailAppendsAhead = 0;
  /** Written by each walk of a kept range (`ranked`): its rows and where changes stop mattering. */
  private readonly walk: RankWalk = { rows: 0, unaffectedFrom: Infinity };
  /** What the general path's writes read of this operator (topn-fold.ts). */
  private readonly fold: Fold;
  /**
   * The direct path keeps this many rows of a partition sorted; the rest go to its tail. n + 2: an
   * insert ranked past it is an append, and a delete inside the top takes the next row from the
   * tail (one scan, for every row it takes) only every second time.
   */
  private readonly tailFrom: number;
  /** Epochs stepped: the stamp that groups an epoch's changes by partition. */
  private epochs = 0;
  /** The input never retracts and the kept range ends: rows past it are dropped (`trim`). */
  private readonly trims: boolean;
  /** A keyed input's rows past the top go straight to their partition's tail (`appendTails`). */
  private readonly appendsTails: boolean;
  /** Rows `trim` dropped so far (tests count them). */
  rowsTrimmed = 0;
  /** Inserts ranked past a full top of an insert-only input, never stored (tests count them). */
  rowsPassedOver = 0;
  /** An epoch's partitions in the order first touched and their keys (`step`; the first `count`). */
  private readonly touched: SortedPartition[] = [];
  private readonly touchedKeys: PartitionKey[] = [];
  /** Each change's next change of its partition in the epoch (`step`; -1: none). */
  private nextChange = new Int32Array(0);
  /** Times `nextChange` was allocated: once per larger batch, not per epoch (tests count them). */
  scratchAllocations = 0;
  /**
   * A keyed input's key (one column) → the index its row was appended at in its partition's
   * unordered tail, so a tail delete takes its row there instead of scanning the tail's images. A
   * hint: a row moved since (a swap, a refill, a sort) is not found there, and the scan runs. A
   * retraction removes its key's entry, so it holds at most the rows held. Null: not kept.
   */
  private readonly tailAt: TailPlaces | null;
  private readonly keyColumn: number;
  /** Tail deletes that found their row where it was appended (tests count them). */
  tailHits = 0;

  constructor(private readonly node: TopNNode) {
    this.stateId = node.stateId;
    this.compare = compareRows(node.orderBy);
    this.peers = compareByKeys(node.orderBy);
    this.image = keyImage(node.orderBy);
    this.state = new TopNRows(node.partitionBy, this.compare, this.image, node.orderBy.length > 0);
    this.to = node.to ?? Infinity;
    this.tailFrom = Math.max(8, this.to + 2);
    this.distinctRows = node.distinctRows === true;
    this.direct =
      node.rank === 'row_number' && !node.emitRank && node.from === 0 && this.to <= FAST_TOP_LIMIT;
    this.trims = node.insertOnly === true && this.to !== Infinity;
    this.appendsTails = this.direct && this.distinctRows && !this.trims;
    this.keyColumn = node.keyColumn ?? -1;
    this.tailAt = this.appendsTails && this.keyColumn >= 0 ? new TailPlaces() : null;
    this.fold = {
      state: this.state,
      compare: this.compare,
      image: this.image,
      imaged: node.orderBy.length > 0,
      tailAt: this.tailAt,
      keyColumn: this.keyColumn,
    };
  }

  /** Distinct rows held, over all partitions (tests count them). */
  get rowsHeld(): number {
    return this.state.size;
  }

  get nodeId(): number {
    return this.node.id;
  }

  /**
   * The output records `changed` rows (at the input, one copy each) may make of the rows held, before
   * the epoch runs; nothing changes (topn-moved.ts, `rowsMovedBy`).
   */
  heldRowsMovedBy(changed: readonly (readonly Value[])[], known: ChangeKnown): number {
    const { rank: kind, emitRank, from } = this.node;
    const range = { kind, emitRank, from, to: this.to };
    return rowsMovedBy(changed, known, {
      state: this.state,
      range,
      image: this.image,
      compare: this.compare,
      peers: this.peers,
      distinctRows: this.distinctRows,
    });
  }

  trackChanges(on: boolean): void {
    this.state.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.state.takeDelta(full);
  }

  loadState(values: Iterable<unknown>): void {
    this.state.load(values);
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = inputs[0];
    if (input === undefined || input.rows.length === 0) return { rows: [], weights: [], consolidated: true };
    // Consolidated (each row once): a kept row then never leaves and comes back in one epoch.
    const batch = input.consolidated ? input : consolidate(input);
    if (this.node.insertOnly === true) refuseRetractions(batch);
    // The changes grouped by partition, partitions in the order they first occur, without a Map or
    // an array per partition: each partition (created if new) notes its first and last change of
    // this epoch, and each change the next one of its partition (-1: none).
    const n = batch.rows.length;
    const stamp = ++this.epochs;
    // Scratch kept by the operator, written by index and never truncated: a length set to 0 would
    // drop the arrays' stores, and they would grow again every epoch.
    const touched = this.touched;
    const touchedKeys = this.touchedKeys;
    let count = 0;
    if (this.nextChange.length < n) {
      this.nextChange = new Int32Array(Math.max(n, 2 * this.nextChange.length));
      this.scratchAllocations++;
    }
    const next = this.nextChange;
    next.fill(-1, 0, n);
    for (let i = 0; i < n; i++) {
      const key = this.state.partitionOf(batch.rows[i] as readonly Value[]);
      const part = this.state.partition(key);
      if (part.stamp !== stamp) {
        part.stamp = stamp;
        part.head = i;
        touched[count] = part;
        touchedKeys[count++] = key;
      } else next[part.tail] = i;
      part.tail = i;
    }
    if (this.appendsTails) this.appendTails(count, batch);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (let s = 0; s < count; s++) {
      const part = touched[s] as SortedPartition;
      const key = touchedKeys[s] as PartitionKey;
      const start = rows.length;
      let at = part.head;
      let passes = 0;
      if (this.direct) {
        // One change after another while each takes the direct path; the rest (if any) together.
        while (at !== -1 && this.singleChange(key, part, batch, at, rows, weights)) {
          at = next[at] as number;
          passes++;
        }
      }
      if (at !== -1) {
        this.changePartition(key, part, batch, at, next, rows, weights);
        passes++;
      }
      // Two passes over one partition may emit one kept row twice (+1, then -1 when pushed out
      // again): netted here, so the batch leaves consolidated and no consumer encodes its rows.
      if (passes > 1 && rows.length - start > 2) netKeptRows(rows, weights, start);
      if (this.trims) this.trim(key, part);
      this.state.dropIfEmpty(key, part);
    }
    return { rows, weights, consolidated: true };
  }

  stateSize(): number {
    return this.state.stateBytes() + (this.tailAt === null ? 0 : this.tailAt.bytes());
  }

  /** The general path: a partition's changes applied, the kept range ranked before and after, diffed. */
  private changePartition(
    key: PartitionKey,
    part: SortedPartition,
    batch: ZBatch,
    head: number,
    next: Int32Array,
    rows: (readonly Value[])[],
    weights: number[],
  ): void {
    part.settle(this.compare);
    // Changes that all sort after the kept range leave it as it is: no walk, no output. The
    // partition's boundary stays valid across such changes (none lands before it).
    let before: Ranked[] | null = null;
    let limit = part.boundary === NO_BOUNDARY ? Infinity : part.boundary;
    if (limit < 0) {
      before = this.ranked(part);
      limit = this.walk.unaffectedFrom;
    }
    let unaffected = limit !== Infinity;
    for (let i = head; unaffected && i !== -1; i = next[i] as number) {
      const row = batch.rows[i] as readonly Value[];
      if (part.search(row, imageIn(this.fold, part, row), this.compare) < limit) unaffected = false;
    }
    if (!unaffected) before ??= this.ranked(part);
    applyChanges(this.fold, key, part, batch, head, next);
    if (unaffected) {
      part.boundary = limit;
      return;
    }
    emitDifference(before as Ranked[], this.ranked(part), this.node.emitRank, rows, weights);
    part.boundary = this.walk.unaffectedFrom === Infinity ? NO_BOUNDARY : this.walk.unaffectedFrom;
  }

  /**
   * The common case of a Top-N (ROW_NUMBER ≤ n, the rank not shown): one new row, or one row
   * deleted, in a partition whose first n + 1 rows are single copies, so a row's rank is its index.
   * An insert ranked inside the top n pushes out the n-th row; a delete inside it brings in the
   * (n+1)-th. Rows past the first n + 2 (at least 8) go to the partition's unordered tail: such a change is an
   * append or a swap with the last, found by a scan of the tail's images. Otherwise one binary search
   * over the partition's images and one shift. Nothing ranked or diffed, nothing allocated. False:
   * not this case (nothing changed), the general path runs.
   */
  private singleChange(
    key: PartitionKey,
    part: SortedPartition,
    batch: ZBatch,
    index: number,
    rows: (readonly Value[])[],
    weights: number[],
  ): boolean {
    const to = this.to;
    const w = batch.weights[index] as number;
    if (w !== 1 && w !== -1) return false;
    const row = batch.rows[index] as readonly Value[];
    const image = imageIn(this.fold, part, row);
    const compare = this.compare;
    // An insert-only input whose partition holds its top n already: a row after the n-th is
    // numbered past n now and forever (inserts only push rows down), so the trim would drop it at
    // once — nothing is stored, nothing emitted. With copies the n-th row ends the top n or later.
    if (this.trims && w === 1 && part.sorted >= to && part.sortsAfter(to - 1, row, image, compare)) {
      this.rowsPassedOver++;
      return true;
    }
    if (!part.singleCopiesUpTo(to + 1)) return false;
    const cap = this.tailFrom;
    if (
      part.keys !== null &&
      part.sorted > to &&
      (part.sorted < part.length || part.sorted >= cap) &&
      part.afterSorted(row, image, compare)
    ) {
      // After more than n sorted rows: ranked past the top before and after, nothing to emit. A
      // row of a keyed input is never there twice: its insert is an append, nothing searched.
      if (w === 1) {
        if (!this.distinctRows && this.tailHolds(part, row, image)) return false;
        this.noteTail(row, part.pushTail(row, image, compare));
        this.state.changed(key, row, 1);
      } else {
        const there = this.takeTail(part, row, image);
        if (there === null) return false;
        this.state.changed(key, there, -1);
      }
      this.singleChanges++;
      this.tailChanges++;
      part.boundary = -1;
      return true;
    }
    if (w === -1) forgetTail(this.fold, row);
    const at = part.search(row, image, compare);
    const present = part.holds(at, row, image, compare);
    const rowsOf = part.rows;
    if (w === 1) {
      if (present) return false;
      if (at < to) {
        rows.push(row);
        weights.push(1);
        if (part.sorted >= to) {
          rows.push(rowsOf[to - 1] as readonly Value[]);
          weights.push(-1);
        }
      }
      part.insertAt(at, row, image, 1);
      this.state.changed(key, row, 1);
    } else {
      if (!present || part.count(at) !== 1) return false;
      const there = rowsOf[at] as readonly Value[];
      // With a tail, the sorted rows are more than n: the (n+1)-th is among them.
      if (at < to) {
        rows.push(there);
        weights.push(-1);
        if (part.sorted > to) {
          rows.push(rowsOf[to] as readonly Value[]);
          weights.push(1);
        }
      }
      part.removeAt(at);
      this.state.changed(key, there, -1);
      if (part.sorted <= to && part.sorted < part.length) part.refill(cap, compare);
    }
    // A partition sorted in full (loaded, or changed by the general path) moves its rows past the
    // first n + 2 to the tail once.
    if (part.keys !== null) part.spill(cap, compare);
    this.rowsRanked += Math.min(at, to);
    this.singleChanges++;
    part.boundary = -1;
    return true;
  }

  /**
   * The direct path's commonest change, first and alone: an insert of a keyed input ranked after a
   * partition's full sorted rows joins its tail and emits nothing (`singleChange`'s tail branch, the
   * same test and the same writes). A partition's leading such inserts are taken here, in a short
   * loop over the epoch's partitions (the first `count` of `touched`), so that the cache misses of
   * consecutive partitions overlap; its `head` then names its first change left for `singleChange`
   * (-1: none).
   */
  private appendTails(count: number, batch: ZBatch): void {
    const touched = this.touched;
    const touchedKeys = this.touchedKeys;
    const next = this.nextChange;
    const cap = this.tailFrom;
    const compare = this.compare;
    const image = this.image;
    for (let s = 0; s < count; s++) {
      const part = touched[s] as SortedPartition;
      if (part.keys === null || part.counts !== null || part.sorted < cap) continue;
      let at = part.head;
      while (at !== -1 && batch.weights[at] === 1) {
        const row = batch.rows[at] as readonly Value[];
        const f = image(row);
        // A NaN image (none) is after nothing: singleChange takes it and turns the images off.
        if (!part.afterSorted(row, f, compare)) break;
        this.noteTail(row, part.pushTail(row, f, compare));
        this.state.changed(touchedKeys[s] as PartitionKey, row, 1);
        this.singleChanges++;
        this.tailChanges++;
        this.tailAppendsAhead++;
        part.boundary = -1;
        at = next[at] as number;
      }
      part.head = at;
    }
  }

  /** Notes where a keyed row was appended to its partition's unordered tail (`at` -1: far, not noted). */
  private noteTail(row: readonly Value[], at: number): void {
    const index = this.tailAt;
    if (index === null || at < 0) return;
    index.set(row[this.keyColumn] as Value, at, this.state.size);
  }

  /** Removes `row` from the partition's tail: where it was appended if it is still there, else by a scan. */
  private takeTail(part: SortedPartition, row: readonly Value[], image: number): readonly Value[] | null {
    const index = this.tailAt;
    if (index !== null) {
      const id = row[this.keyColumn] as Value;
      const at = index.get(id);
      if (at >= 0) {
        index.delete(id);
        const there = part.takeTailAt(at, row, image, this.compare);
        if (there !== null) {
          this.tailHits++;
          return there;
        }
      }
    }
    this.tailSearches++;
    return part.takeTail(row, image, this.compare);
  }

  /** Whether the partition's tail holds `row`, counted. */
  private tailHolds(part: SortedPartition, row: readonly Value[], image: number): boolean {
    this.tailSearches++;
    return part.tailHolds(row, image, this.compare);
  }

  /** The rows ranked inside the kept range (topn-ranked.ts `rankedRange`), counted. */
  private ranked(part: SortedPartition): Ranked[] {
    const { rank: kind, emitRank, from } = this.node;
    const out = rankedRange(part, kind, emitRank, from, this.to, this.peers, this.walk);
    this.rowsRanked += this.walk.rows;
    return out;
  }

  /**
   * Drops the rows of a partition that can never again rank inside the kept range, the input being
   * insert-only. An insert only ever adds a row: every row after it moves one copy further back
   * (ROW_NUMBER), its RANK grows by the insert's copies or stays, its DENSE_RANK grows by one or
   * stays; no change makes a rank smaller. So a row ranked past `to` now is ranked past it for good,
   * and so is any row inserted later that sorts after it (or is a copy of it): it has at least as many
   * rows before it. For ROW_NUMBER that is every row from the first whose copies all lie past copy
   * position `to`; for RANK and DENSE_RANK every row from the first whose rank exceeds `to` (its peers
   * share that rank, so the last kept row's peers stay). The rows before OFFSET rank before `to` and
   * stay: they still push the kept rows back. Each row dropped leaves the checkpoint too.
   */
  private trim(key: PartitionKey, part: SortedPartition): void {
    let cut = keptEnd(part, this.node.rank, this.to, this.peers);
    if (cut < 0) {
      if (part.tailLength === 0) return; // every row may still rank inside the range
      part.settle(this.compare);
      cut = keptEnd(part, this.node.rank, this.to, this.peers);
      if (cut < 0) return;
    }
    if (cut >= part.length) return;
    part.cutFrom(cut, (row) => {
      this.state.changed(key, row, -1);
      this.rowsTrimmed++;
    });
  }
}
