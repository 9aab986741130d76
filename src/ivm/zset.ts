// Z-sets: rows with signed integer weights, the one currency between operators. A batch is two
// parallel arrays (no per-row wrapper objects); `consolidated` says each row occurs at most once
// and no weight is zero, which stateful operators and outputs rely on or establish.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues } from '../common/values.ts';

export interface ZBatch {
  readonly rows: (readonly Value[])[];
  readonly weights: number[];
  readonly consolidated: boolean;
  /**
   * Optionally the same rows column by column (`cols[c][i] === rows[i][c]`), from an operator that
   * has them at hand: a consumer may read these instead of dereferencing each row object.
   */
  readonly cols?: readonly (readonly Value[])[];
}

/**
 * A batch built column by column (a Reduce's changes, consolidated; an insert-only table batch, not
 * necessarily): its row objects are made only when someone reads `rows` (a subscriber's changelog,
 * an ordered index, an operator that is not column-aware), so a view over a view, or a Reduce over
 * a table, takes its input without one heap row per change. Read `weights.length` for its size.
 */
export class ColumnBatch implements ZBatch {
  private built: Value[][] | null = null;

  /**
   * `cols` and `weights` are fields, not getters (the hot loops read them), and writable only for
   * `expire`: nobody else assigns them.
   */
  constructor(
    public cols: readonly Value[][],
    public weights: number[],
    readonly consolidated = true,
  ) {}

  /**
   * The batch's arrays are about to be reused by their producer (a Reduce lends its change columns
   * for the length of an epoch, reduce-changes.ts): from here on its columns and weights throw when
   * read, so a holder that kept the batch past its epoch fails loudly instead of reading another
   * step's changes. Rows built before stay readable (they are arrays of their own).
   */
  expire(): void {
    this.cols = EXPIRED as unknown as Value[][];
    this.weights = EXPIRED as unknown as number[];
  }

  get rows(): Value[][] {
    if (this.built !== null) return this.built;
    const n = this.weights.length;
    const width = this.cols.length;
    const rows = new Array<Value[]>(n);
    for (let i = 0; i < n; i++) {
      const row = new Array<Value>(width);
      for (let c = 0; c < width; c++) row[c] = (this.cols[c] as Value[])[i] as Value;
      rows[i] = row;
    }
    this.built = rows;
    return rows;
  }
}

/** What an expired batch's columns and weights are: any read of them is an internal error. */
const EXPIRED: object = new Proxy([], {
  get(): never {
    throw new SluiceError('INTERNAL_ERROR', 'a change batch was read after its producer reused it');
  },
});

export function emptyBatch(): ZBatch {
  return { rows: [], weights: [], consolidated: true };
}

export function isEmpty(batch: ZBatch | null | undefined): boolean {
  return batch === null || batch === undefined || batch.weights.length === 0;
}

/**
 * Sums the weights of identical rows and drops rows whose weight nets to zero (keeps first-seen
 * order). Identical, not SQL-equal: -[1.50] and +[1.5] are a change of text, not nothing.
 */
export function consolidate(batch: ZBatch): ZBatch {
  if (batch.consolidated || batch.weights.length === 0) return batch;
  if (batch.weights.length === 1) {
    return batch.weights[0] === 0
      ? emptyBatch()
      : { rows: batch.rows, weights: batch.weights, consolidated: true };
  }
  const index = new Map<string, number>();
  const rows: (readonly Value[])[] = [];
  const weights: number[] = [];
  for (let i = 0; i < batch.rows.length; i++) {
    const row = batch.rows[i] as readonly Value[];
    const key = encodeExactValues(row);
    const at = index.get(key);
    if (at === undefined) {
      index.set(key, rows.length);
      rows.push(row);
      weights.push(batch.weights[i] as number);
    } else {
      weights[at] = (weights[at] as number) + (batch.weights[i] as number);
    }
  }
  const outRows: (readonly Value[])[] = [];
  const outWeights: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (weights[i] !== 0) {
      outRows.push(rows[i] as readonly Value[]);
      outWeights.push(weights[i] as number);
    }
  }
  return { rows: outRows, weights: outWeights, consolidated: true };
}

export function concatBatches(batches: readonly ZBatch[]): ZBatch {
  if (batches.length === 1) return batches[0] as ZBatch;
  const rows: (readonly Value[])[] = [];
  const weights: number[] = [];
  for (const b of batches) {
    for (let i = 0; i < b.rows.length; i++) {
      rows.push(b.rows[i] as readonly Value[]);
      weights.push(b.weights[i] as number);
    }
  }
  return { rows, weights, consolidated: false };
}
