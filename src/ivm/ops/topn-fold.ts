// The writes of a Top-N's general path (topn-op.ts changePartition): one partition's changes of an
// epoch folded into its SortedPartition, one by one (a search and a shift each) when few, or by
// counting, sorting the new rows and merging once when many. Each distinct row that comes or goes
// is noted for the checkpoint (topn-rows.ts). Plain functions of the partition and a `Fold` (what
// they read of the operator), so the operator's file keeps its dispatch and its direct path.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { ZBatch } from '../zset.ts';
import type { KeyImage } from './topn-key-image.ts';
import type { RowCompare, SortedPartition } from './topn-partition.ts';
import type { PartitionKey, TopNRows } from './topn-rows.ts';
import type { TailPlaces } from './topn-tail-places.ts';

/** Changes to one partition up to this many rows go in by binary search; more by sort and merge. */
const SPLICE_LIMIT = 16;

/** What folding a partition's changes reads of its Top-N operator. */
export interface Fold {
  readonly state: TopNRows;
  readonly compare: RowCompare;
  readonly image: KeyImage;
  /** Whether rows have images at all (an ORDER BY); a merged partition is given them again. */
  readonly imaged: boolean;
  /** A keyed input's notes of where its rows sit in a tail (TopNOp.tailAt), or null. */
  readonly tailAt: TailPlaces | null;
  readonly keyColumn: number;
}

/** A row's image; a row without one turns the partition's images off first. */
export function imageIn(fold: Fold, part: SortedPartition, row: readonly Value[]): number {
  const image = fold.image(row);
  if (image !== image && part.keys !== null) part.dropImages(fold.compare);
  return image;
}

/** Drops a retracted row's note (it may sit elsewhere, or not be noted at all). */
export function forgetTail(fold: Fold, row: readonly Value[]): void {
  if (fold.tailAt !== null) fold.tailAt.delete(row[fold.keyColumn] as Value);
}

/**
 * Folds the partition's changes (the chain from `head`) into it. Few changes go in one by one (a
 * search and a shift each); many (a partition's first load, a bulk delete) change the counts of a
 * copy, collect the new rows, and merge once: one loop either way, only the writes differ.
 */
export function applyChanges(
  fold: Fold,
  key: PartitionKey,
  part: SortedPartition,
  batch: ZBatch,
  head: number,
  next: Int32Array,
): void {
  const compare = fold.compare;
  const state = fold.state;
  let changes = 0;
  for (let i = head; i !== -1 && changes <= SPLICE_LIMIT; i = next[i] as number) changes++;
  let counts: number[] | null = null;
  if (changes > SPLICE_LIMIT) {
    counts = new Array<number>(part.length);
    for (let j = 0; j < part.length; j++) counts[j] = part.count(j);
  }
  const added: { row: readonly Value[]; count: number }[] = [];
  for (let i = head; i !== -1; i = next[i] as number) {
    const row = batch.rows[i] as readonly Value[];
    const w = batch.weights[i] as number;
    if (w < 0) forgetTail(fold, row);
    const image = imageIn(fold, part, row);
    const at = part.search(row, image, compare);
    if (part.holds(at, row, image, compare)) {
      const there = part.rows[at] as readonly Value[];
      let left: number;
      if (counts === null) left = part.addCopies(at, w);
      else {
        left = (counts[at] as number) + w;
        if (left < 0) throw new SluiceError('INTERNAL_ERROR', 'top-n saw a negative multiplicity');
        counts[at] = left;
      }
      state.changed(key, there, left === 0 ? -1 : 0);
      continue;
    }
    if (w < 0) throw new SluiceError('INTERNAL_ERROR', 'top-n saw a retraction of an absent row');
    if (counts !== null) added.push({ row, count: w });
    else {
      part.insertAt(at, row, image, w);
      state.changed(key, row, 1);
    }
  }
  if (counts !== null) merge(fold, key, part, counts, added);
  state.dropIfEmpty(key, part);
}

/** Refills the partition with its rows of nonzero `counts` and the `added` rows, in order. */
function merge(
  fold: Fold,
  key: PartitionKey,
  part: SortedPartition,
  counts: readonly number[],
  added: { row: readonly Value[]; count: number }[],
): void {
  const compare = fold.compare;
  added.sort((a, b) => compare(a.row, b.row));
  const mergedRows: (readonly Value[])[] = [];
  const mergedCounts: number[] = [];
  let j = 0;
  const take = (row: readonly Value[], count: number): void => {
    const last = mergedRows.length - 1;
    // A batch consolidated by another identity may hold one row twice: one entry.
    if (last >= 0 && compare(mergedRows[last] as readonly Value[], row) === 0)
      mergedCounts[last] = (mergedCounts[last] as number) + count;
    else {
      mergedRows.push(row);
      mergedCounts.push(count);
      fold.state.changed(key, row, 1);
    }
  };
  for (let k = 0; k < part.length; k++) {
    const row = part.rows[k] as readonly Value[];
    while (j < added.length && compare((added[j] as { row: readonly Value[] }).row, row) < 0) {
      const a = added[j++] as { row: readonly Value[]; count: number };
      take(a.row, a.count);
    }
    const c = counts[k] as number;
    if (c > 0) {
      mergedRows.push(row);
      mergedCounts.push(c);
    }
  }
  for (; j < added.length; j++) {
    const a = added[j] as { row: readonly Value[]; count: number };
    take(a.row, a.count);
  }
  part.fill(mergedRows, mergedCounts, fold.imaged ? fold.image : null);
}
