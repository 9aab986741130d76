// Rows held column by column, as a checkpoint's column blocks decode (storage/column-block.ts): a
// table's million rows load as a few typed arrays instead of a million row arrays, and a keyed
// table can take them as they are and build its rows and key index only when first used.

/** One column of a block: numbers in a typed array (with a null bitmap), or the values as they are. */
export type RowColumn =
  | { readonly kind: 'f64'; readonly data: Float64Array; readonly nulls: Uint8Array | null }
  | { readonly kind: 'values'; readonly data: readonly unknown[] };

/** Rows [0, n) of one block, column by column (every column holds n values). */
export interface ColumnBlockRows {
  readonly n: number;
  readonly columns: readonly RowColumn[];
}

/**
 * A state's rows in order, block after block. Iterating builds each row as a fresh array (the
 * consumer may keep it); `length` and `width` need no row.
 */
export class ColumnRows implements Iterable<unknown[]> {
  readonly length: number;

  constructor(
    readonly blocks: readonly ColumnBlockRows[],
    readonly width: number,
  ) {
    let n = 0;
    for (const b of blocks) n += b.n;
    this.length = n;
  }

  /** Calls `each` with every row in order, built once. */
  forEachRow(each: (row: unknown[]) => void): void {
    this.forEachRowBetween(0, this.length, each);
  }

  /** Calls `each` with rows [from, to) in order, each built once. */
  forEachRowBetween(from: number, to: number, each: (row: unknown[]) => void): void {
    let start = 0;
    for (const block of this.blocks) {
      const end = start + block.n;
      if (end > from && start < to) {
        for (let i = Math.max(from, start) - start; i < Math.min(to, end) - start; i++)
          each(rowAt(block.columns, this.width, i));
      }
      start = end;
      if (start >= to) break;
    }
  }

  *[Symbol.iterator](): Iterator<unknown[]> {
    for (const block of this.blocks) {
      for (let i = 0; i < block.n; i++) yield rowAt(block.columns, this.width, i);
    }
  }

  /** Whether a value of one of these columns passes `test` (nulls are not tested). */
  someValue(columns: readonly number[], test: (v: unknown) => boolean): boolean {
    for (const block of this.blocks) {
      for (const c of columns) {
        const col = block.columns[c] as RowColumn;
        for (let i = 0; i < block.n; i++) {
          const v = columnValue(col, i);
          if (v !== null && test(v)) return true;
        }
      }
    }
    return false;
  }
}

/** Row `i` of a block, as a fresh array. */
function rowAt(cols: readonly RowColumn[], width: number, i: number): unknown[] {
  const row = new Array<unknown>(width);
  for (let c = 0; c < width; c++) row[c] = columnValue(cols[c] as RowColumn, i);
  return row;
}

function columnValue(col: RowColumn, i: number): unknown {
  if (col.kind === 'values') return col.data[i];
  if (col.nulls !== null && ((col.nulls[i >> 3] as number) & (1 << (i & 7))) !== 0) return null;
  return col.data[i];
}
