// The rows of a relation captured at one moment, read back in slices: what an ad-hoc SELECT runs over
// while epochs go on. Capturing copies references only (rows are never changed in place); the
// multiplicities, which are, are copied.
import type { Value } from '../common/types.ts';
import type { ZBatch } from './zset.ts';

export interface RowCapture {
  /** Distinct entries captured (each a row with its multiplicity). */
  readonly length: number;
  /** Entries [from, to) as a consolidated-or-not batch with positive weights. */
  slice(from: number, to: number): ZBatch;
}

/** Rows (and their multiplicities, or 1 each) in arrays. */
export class CapturedArray implements RowCapture {
  constructor(
    private readonly rows: readonly (readonly Value[])[],
    private readonly weights: readonly number[] | null,
    private readonly consolidated: boolean,
  ) {}

  get length(): number {
    return this.rows.length;
  }

  slice(from: number, to: number): ZBatch {
    const rows = this.rows.slice(from, to);
    const weights =
      this.weights === null ? new Array<number>(rows.length).fill(1) : this.weights.slice(from, to);
    return { rows, weights, consolidated: this.consolidated };
  }
}
