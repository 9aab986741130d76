// Z-sets: rows with signed integer weights, the one currency between operators. A batch is two
// parallel arrays (no per-row wrapper objects); `consolidated` says each row occurs at most once
// and no weight is zero, which stateful operators and outputs rely on or establish.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { hashRow } from './arrangement.ts';
import { RowHashTable } from './row-hash-table.ts';

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

/** A relation's (row, multiplicity) entries as one Z-set batch, consolidated when the caller says so. */
export function batchOfEntries(
  entries: Iterable<readonly [readonly Value[], number]>,
  consolidated: boolean,
): ZBatch {
  const rows: (readonly Value[])[] = [];
  const weights: number[] = [];
  for (const [row, n] of entries) {
    rows.push(row);
    weights.push(n);
  }
  return { rows, weights, consolidated };
}

export function isEmpty(batch: ZBatch | null | undefined): boolean {
  return batch === null || batch === undefined || batch.weights.length === 0;
}

/**
 * Sums the weights of identical rows and drops rows whose weight nets to zero (keeps first-seen
 * order). Identical, not SQL-equal: -[1.50] and +[1.5] are a change of text, not nothing. Rows are
 * found by hash and compared in full (row-hash-table.ts): no row is encoded to a string, which was
 * most of a keyless view's consolidation (a string built and hashed per row).
 */
export function consolidate(batch: ZBatch): ZBatch {
  if (batch.consolidated || batch.weights.length === 0) return batch;
  const n = batch.weights.length;
  if (n === 1) {
    return batch.weights[0] === 0
      ? emptyBatch()
      : { rows: batch.rows, weights: batch.weights, consolidated: true };
  }
  const input = batch.rows;
  const seen = distinctRows;
  seen.reset(n);
  const weights: number[] = [];
  let merged = false;
  for (let i = 0; i < n; i++) {
    const row = input[i] as readonly Value[];
    const hash = hashRow(row);
    const slot = seen.find(row, hash);
    if (slot < 0) weights[seen.insert(slot, row, hash)] = batch.weights[i] as number;
    else {
      const at = seen.positionAt(slot);
      weights[at] = (weights[at] as number) + (batch.weights[i] as number);
      merged = true;
    }
  }
  const rows = seen.entries as (readonly Value[])[];
  // the scratch lets go of the batch's rows
  seen.entries = [];
  if (!merged && !weights.includes(0)) return { rows, weights, consolidated: true };
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

/** consolidate's scratch, reused by every call (it never re-enters). */
const distinctRows = new RowHashTable<readonly Value[]>((row) => row);

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
