// A SortedPartition's whole-partition operations, apart from its per-change ones (topn-partition.ts):
// sorting its tail into place (the general path, a checkpoint's delta), replacing its contents (a
// merge, a restart) and cutting its end (an insert-only Top-N's trim). Each is O(partition), none
// runs on the direct path of a single change.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { topNWork, type FarRows, type RowCompare } from './topn-far-rows.ts';
import type { KeyImage } from './topn-key-image.ts';

/**
 * The fields of a SortedPartition (topn-partition.ts) these operations rewrite, named here so that
 * this file does not import the class that calls it.
 */
interface SortedPartition {
  readonly rows: (readonly Value[])[];
  keys: number[] | null;
  counts: number[] | null;
  sorted: number;
  multi: number;
  far: FarRows | null;
  boundary: number;
  syncLast(): void;
}

/** Sorts the tail (it sorts after every sorted row) into place: the partition is sorted in full again. */
export function settleTail(part: SortedPartition, compare: RowCompare): void {
  const rows = part.rows;
  const from = part.sorted;
  const n = rows.length;
  const far = part.far;
  if (from === n && (far === null || far.size === 0)) return;
  const keys = part.keys as number[];
  const tail = rows.slice(from);
  const tk = keys.slice(from);
  const order = tail.map((_, i) => i);
  order.sort((a, b) => {
    const ka = tk[a] as number;
    const kb = tk[b] as number;
    return ka < kb ? -1 : ka > kb ? 1 : compare(tail[a] as readonly Value[], tail[b] as readonly Value[]);
  });
  topNWork.visited += tail.length;
  rows.length = from;
  keys.length = from;
  if (far === null || far.size === 0) {
    for (let i = 0; i < order.length; i++) {
      const j = order[i] as number;
      rows.push(tail[j] as readonly Value[]);
      keys.push(tk[j] as number);
    }
  } else {
    // The far rows are sorted already: merged with the sorted tail.
    const farRows: (readonly Value[])[] = [];
    const farKeys: number[] = [];
    far.drainInto(farRows, farKeys);
    let i = 0;
    let f = 0;
    while (i < order.length || f < farRows.length) {
      const j = order[i] as number;
      const takeFar =
        i === order.length ||
        (f < farRows.length &&
          ((farKeys[f] as number) < (tk[j] as number) ||
            (farKeys[f] === tk[j] &&
              compare(farRows[f] as readonly Value[], tail[j] as readonly Value[]) < 0)));
      if (takeFar) {
        rows.push(farRows[f] as readonly Value[]);
        keys.push(farKeys[f++] as number);
      } else {
        rows.push(tail[j] as readonly Value[]);
        keys.push(tk[j] as number);
        i++;
      }
    }
    part.far = null;
  }
  if (part.counts !== null) while (part.counts.length < rows.length) part.counts.push(1);
  part.sorted = rows.length;
  part.syncLast();
}

/**
 * Replaces the partition's contents with rows already sorted (distinct) and their multiplicities, and
 * their images (`image` NaN for a row: no images).
 */
export function fillPartition(
  part: SortedPartition,
  rows: readonly (readonly Value[])[],
  counts: readonly number[],
  image: KeyImage | null,
): void {
  const n = rows.length;
  part.rows.length = 0;
  part.far = null;
  for (let i = 0; i < n; i++) part.rows.push(rows[i] as readonly Value[]);
  part.sorted = n;
  part.multi = 0;
  for (const c of counts) if (c !== 1) part.multi++;
  part.counts = part.multi === 0 ? null : counts.slice();
  part.keys = null;
  if (image !== null) {
    const keys: number[] = [];
    let all = true;
    for (let i = 0; i < n && all; i++) {
      const f = image(rows[i] as readonly Value[]);
      if (f !== f) all = false;
      else keys.push(f);
    }
    if (all) part.keys = keys;
  }
  part.syncLast();
}

/**
 * Drops the sorted rows from index `from` (≤ `sorted`) on, and the whole tail (unordered and far,
 * which sort after every sorted row), passing each row dropped to `dropped`: what an insert-only
 * Top-N does with rows that can never rank inside its kept range again. Counts, images and the last
 * image follow; the boundary is unknown again.
 */
export function cutPartitionFrom(
  part: SortedPartition,
  from: number,
  dropped: (row: readonly Value[]) => void,
): void {
  const rows = part.rows;
  if (from > part.sorted) throw new SluiceError('INTERNAL_ERROR', 'top-n cut inside its unordered tail');
  for (let i = from; i < rows.length; i++) dropped(rows[i] as readonly Value[]);
  const far = part.far;
  if (far !== null && far.size > 0) {
    const farRows: (readonly Value[])[] = [];
    far.drainInto(farRows, []);
    for (const row of farRows) dropped(row);
  }
  part.far = null;
  rows.length = from;
  if (part.keys !== null) part.keys.length = from;
  if (part.counts !== null) {
    part.counts.length = from;
    part.multi = 0;
    for (const c of part.counts) if (c !== 1) part.multi++;
    if (part.multi === 0) part.counts = null;
  }
  part.sorted = from;
  part.boundary = -1;
  part.syncLast();
}
