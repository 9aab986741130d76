// The arrays an append-only table's insert-only batches travel in, kept between epochs and lent to
// each batch instead of allocated per batch. At batch size 100 the per-batch columns (three arrays
// grown by pushes: 17, 41, 77 and 131 slots, each a fresh backing store) and the weights array were
// about 90 of the 115 bytes allocated per event by the canonical pipeline. A batch's values are
// appended to the table by copy (append-columns.ts) and read by the views within the epoch, so the
// same arrays serve the next batch: the batch lent before expires first (zset.ts `expire`), so a
// holder that kept it past its epoch fails loudly instead of reading the next batch's rows. The
// weights of an insert-only batch are all +1: one array of ones, lent the same way, whatever the
// size of the batch (a large batch too: the table copies it into a chunk of its own).
import type { Value } from '../common/types.ts';
import { ColumnBatch } from '../ivm/zset.ts';

export class LentInsertColumns {
  /** Scratch columns the normalizer writes a batch's values into (each cut to the batch's length). */
  private readonly columns: Value[][];
  /** +1 per row of the last batch lent (cut or extended to each batch's length). */
  private readonly ones: number[] = [];
  /** The batch the arrays are lent to, until the next batch is prepared or applied. */
  private lent: ColumnBatch | null = null;

  constructor(width: number) {
    this.columns = [];
    for (let c = 0; c < width; c++) this.columns.push([]);
  }

  /**
   * The scratch columns, for the next batch's values (the caller writes rows [0, n) and cuts each
   * column to n). Whatever batch held them before expires here.
   */
  scratch(): Value[][] {
    this.reclaim();
    return this.columns;
  }

  /** Whether `columns` are the scratch columns (not a batch's own). */
  owns(columns: readonly Value[][]): boolean {
    return columns === this.columns;
  }

  /**
   * The views' change for an insert-only batch of `columns` (n rows): weights +1 from the array of
   * ones, lent with the columns until the next batch.
   */
  lend(columns: readonly Value[][], n: number): ColumnBatch {
    this.reclaim();
    const ones = this.ones;
    // Pushed when it grows, so packed like every other batch's weights (the operators' weight loads
    // stay monomorphic); cut in place when it shrinks.
    if (ones.length > n) ones.length = n;
    else while (ones.length < n) ones.push(1);
    const batch = new ColumnBatch(columns, ones, false);
    this.lent = batch;
    return batch;
  }

  /** The lent batch expires: its arrays are about to hold another batch. */
  private reclaim(): void {
    if (this.lent === null) return;
    this.lent.expire();
    this.lent = null;
  }
}
