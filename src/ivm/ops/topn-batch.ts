// Checks and rewrites of a Top-N's batches that need no partition: its input refused when an
// insert-only Top-N sees a retraction, and one partition's output netted (topn-op.ts).
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { ZBatch } from '../zset.ts';

/** An insert-only Top-N dropped rows a retraction could need: one reaching it is a broken invariant. */
export function refuseRetractions(batch: ZBatch): void {
  const weights = batch.weights;
  for (let i = 0; i < weights.length; i++) {
    if ((weights[i] as number) < 0) {
      throw new SluiceError(
        'INTERNAL_ERROR',
        'an insert-only top-n received a retraction: its input was derived insert-only, wrongly',
      );
    }
  }
}

/**
 * Nets the weights of one partition's output from `start` on and drops those that cancel. Every
 * row emitted for a partition is its kept row object (never a copy: the direct path does not append
 * ranks), so one row is one reference, and rows of other partitions never meet.
 */
export function netKeptRows(rows: (readonly Value[])[], weights: number[], start: number): void {
  const end = rows.length;
  if (end - start <= 32) {
    for (let i = start; i < end; i++) {
      if (weights[i] === 0) continue;
      const row = rows[i];
      for (let j = i + 1; j < end; j++) {
        if (rows[j] !== row || weights[j] === 0) continue;
        weights[i] = (weights[i] as number) + (weights[j] as number);
        weights[j] = 0;
      }
    }
  } else {
    const first = new Map<readonly Value[], number>();
    for (let i = start; i < end; i++) {
      const row = rows[i] as readonly Value[];
      const at = first.get(row);
      if (at === undefined) first.set(row, i);
      else {
        weights[at] = (weights[at] as number) + (weights[i] as number);
        weights[i] = 0;
      }
    }
  }
  let out = start;
  for (let i = start; i < end; i++) {
    const w = weights[i] as number;
    if (w === 0) continue;
    rows[out] = rows[i] as readonly Value[];
    weights[out++] = w;
  }
  rows.length = out;
  weights.length = out;
}
