// What a Top-N with ranks or ties (RANK, DENSE_RANK, or a shown rank) may re-emit in a write's
// epoch, known before the epoch runs and without changing anything: the count that lets the engine
// refuse a write whose one row above a long tie group at the cut would push the whole group out of
// the kept range, or pull it back in (src/exec/view-join-fanout.ts, EPOCH_TOO_LARGE).
//
// Each changed row (one copy, inserted or deleted) moves any later row's rank by at most one: a copy
// before it for ROW_NUMBER and RANK, a peer group for DENSE_RANK; an insert only up, a delete only
// down. So with i rows that may be inserts and d that may be deletes in a partition, a row crosses the
// end `to` of the kept range (from < rank ≤ to) only if its rank is in (to − i, to + d], likewise for
// `from`; with the rank shown, only kept rows and those within (from − i, to + d] can change theirs. Rows before the first changed row's place keep their rank, and so do its peers for RANK and
// DENSE_RANK (a rank is that of the peer group's first row). The walk goes by peer groups, each
// group's end found by binary search: O((to + d) · log n) comparisons, not the tie group's length.
import type { RankKind } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import type { KeyImage } from './topn-key-image.ts';
import type { RowCompare, SortedPartition } from './topn-partition.ts';
import type { PartitionKey, TopNRows } from './topn-rows.ts';

/** The kept range of a Top-N: ranks `from` < rank ≤ `to` (Infinity: no end), rank shown or not. */
export interface KeptRange {
  readonly kind: RankKind;
  readonly emitRank: boolean;
  readonly from: number;
  readonly to: number;
}

/** What the count knows of a write's rows at a Top-N's input. */
export interface ChangeKnown {
  /** Their ORDER BY columns are known (else every row may be after a change). */
  readonly place: boolean;
  /** All their columns are known (so whether one is held can be looked up). */
  readonly whole: boolean;
  /** Whether a row is known to be an insertion (else it may be a delete, or an insert). */
  readonly inserted: (row: readonly Value[]) => boolean;
  /** Whether a row is known to be a deletion of one copy the input holds (a write's delete). */
  readonly deleted: (row: readonly Value[]) => boolean;
}

/** A Top-N's state and order, read by `rowsMovedBy`. */
export interface TopNView {
  readonly state: TopNRows;
  readonly range: KeptRange;
  readonly image: KeyImage;
  readonly compare: RowCompare;
  readonly peers: RowCompare;
  /** The input never holds a row twice: a held row that changes is a delete. */
  readonly distinctRows: boolean;
}

/**
 * Output records the held rows may make when `changed` rows go into or out of their partitions
 * (`heldRowsMoved` per partition the rows reach; a new partition holds none). A row known to be an
 * insertion is one, and one known to be a deletion one; another is a delete if held (and, rows not
 * distinct, maybe an insert of one more copy), else an insert (a row not held cannot be retracted);
 * not looked up, both.
 */
export function rowsMovedBy(
  changed: readonly (readonly Value[])[],
  known: ChangeKnown,
  op: TopNView,
): number {
  const byPartition = new Map<PartitionKey, (readonly Value[])[]>();
  for (const row of changed) {
    const key = op.state.partitionOf(row);
    const rows = byPartition.get(key);
    if (rows === undefined) byPartition.set(key, [row]);
    else rows.push(row);
  }
  let moved = 0;
  for (const [key, rows] of byPartition) {
    const part = op.state.partitions.get(key);
    if (part === undefined) continue;
    let inserts = 0;
    let deletes = 0;
    for (const row of rows) {
      const image = op.image(row);
      if (known.inserted(row)) inserts++;
      else if (known.deleted(row)) deletes++;
      else if (!known.whole || image !== image) {
        inserts++;
        deletes++;
      } else if (part.find(row, image, op.compare) !== null) {
        deletes++;
        if (!op.distinctRows) inserts++;
      } else inserts++;
    }
    moved += heldRowsMoved(part, rows, op.range, op.peers, known.place, inserts, deletes);
  }
  return moved;
}

/**
 * Output records the held rows of `part` may make when `changed` rows (one copy each, with their
 * ORDER BY columns known when `placeKnown`) go into or out of it: a record per row that may cross an
 * end of the kept range, two (retraction, insertion) per row whose shown rank may change. The
 * changed rows themselves are not counted. `peers` compares rows by their ORDER BY keys alone.
 */
export function heldRowsMoved(
  part: SortedPartition,
  changed: readonly (readonly Value[])[],
  range: KeptRange,
  peers: RowCompare,
  placeKnown: boolean,
  inserts: number,
  deletes: number,
): number {
  const factor = range.emitRank ? 2 : 1;
  // An unordered tail (the ROW_NUMBER direct path only) is not walked: every row may move.
  if (part.tailLength > 0) return factor * part.length;
  const n = part.sorted;
  const rows = part.rows;
  const byPosition = range.kind === 'row_number';
  // Rows from `first` on may change rank: the earliest changed row's place (its peers included for
  // ROW_NUMBER, whose ties are broken by columns the count may not know; past them otherwise).
  let first = placeKnown ? n : 0;
  if (placeKnown) {
    for (const row of changed) first = Math.min(first, firstAfter(rows, n, row, peers, byPosition ? 0 : 1));
  }
  if (first >= n) return 0;
  const windows = rankWindows(range, inserts, deletes);
  const stop = (windows[windows.length - 1] as readonly [number, number])[1];
  if (stop === Infinity || (byPosition && part.counts === null)) {
    // Rows numbered by their index (ranks first + 1 … n), or a range with no end: every row from
    // `first` on may be re-ranked (an over-count only past an OFFSET), no walk. ROW_NUMBER numbers
    // each copy of a row (a keyless input's) on its own: each its record.
    if (stop !== Infinity) return factor * overlap(windows, first, n);
    return factor * (byPosition ? copiesFrom(part, first, n) : n - first);
  }
  let moved = 0;
  let position = 0; // copies before the group
  let dense = 0;
  for (let s = 0; s < n && (byPosition ? position : dense) < stop;) {
    if (byPosition) {
      // Each copy its own rank: row s's copies are ranked position + 1 … position + count.
      const copies = part.count(s);
      if (s >= first) moved += overlap(windows, position, position + copies);
      position += copies;
      s++;
      continue;
    }
    const e = groupEnd(rows, n, s, peers);
    dense++;
    const rank = range.kind === 'rank' ? position + 1 : dense;
    if (rank > stop) break;
    // One record per row of the group (its copies are one record's weight).
    if (e > first && overlap(windows, rank - 1, rank) > 0) moved += e - Math.max(s, first);
    for (let i = s; i < e; i++) position += part.count(i);
    s = e;
  }
  return factor * moved;
}

/**
 * The ranks (lo, hi] whose rows `i` inserts and `d` deletes may move across an end of the kept range
 * (or, the rank shown, whose shown rank they may change), in order, not overlapping.
 */
function rankWindows(range: KeptRange, i: number, d: number): readonly (readonly [number, number])[] {
  const { from, to } = range;
  if (range.emitRank) return [[from - i, to + d]];
  if (from <= 0) return [[to - i, to + d]];
  if (from + d >= to - i) return [[from - i, to + d]];
  return to === Infinity
    ? [[from - i, from + d]]
    : [
        [from - i, from + d],
        [to - i, to + d],
      ];
}

/** The copies of `part`'s rows `first` … n − 1 (one each while no row has two). */
function copiesFrom(part: SortedPartition, first: number, n: number): number {
  if (part.counts === null) return n - first;
  let copies = 0;
  for (let i = first; i < n; i++) copies += part.count(i);
  return copies;
}

/** How many of the ranks (a, b] fall in the windows. */
function overlap(windows: readonly (readonly [number, number])[], a: number, b: number): number {
  let count = 0;
  for (const [lo, hi] of windows) {
    const span = Math.min(hi, b) - Math.max(lo, a);
    if (span > 0) count += span;
  }
  return count;
}

/** The first index of `rows[0, n)` whose row sorts after `row` by `peers` by at least `past` (0: a peer). */
function firstAfter(
  rows: readonly (readonly Value[])[],
  n: number,
  row: readonly Value[],
  peers: RowCompare,
  past: 0 | 1,
): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const order = peers(rows[mid] as readonly Value[], row);
    if (past === 0 ? order < 0 : order <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The end (exclusive) of the peer group that starts at `s`. */
function groupEnd(rows: readonly (readonly Value[])[], n: number, s: number, peers: RowCompare): number {
  const head = rows[s] as readonly Value[];
  let lo = s + 1;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (peers(rows[mid] as readonly Value[], head) === 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
