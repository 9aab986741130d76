// A table's prepared ingest batch: the exact row changes `TableStore.prepare` resolved a request to,
// and the column-by-column form of a large insert-only batch into a keyless append-only table.
import type { Value } from '../common/types.ts';

export interface PreparedBatch {
  readonly table: string;
  /** Full rows removed (one copy each), including rows replaced by an insert on their key. */
  readonly deletes: readonly (readonly Value[])[];
  /** Rows inserted (built from `insertColumns` on first read when the batch has them). */
  readonly inserts: readonly (readonly Value[])[];
  /**
   * The inserts column by column, for an insert-only batch into a keyless append-only table: they
   * are appended to the table and handed to the views as columns, with no row array per insert.
   */
  readonly insertColumns?: readonly Value[][];
  /**
   * `insertColumns` were written by the table's generated normaliser: every value of an integer
   * column without a DEFAULT is an integer number, not -0, or NULL (the table copies those columns
   * with a lighter test of each value).
   */
  readonly insertColumnsTyped?: boolean;
  /** Rows the request listed (its size as the API reports it). */
  readonly accepted: number;
  /** What resolving a keyed table's request found out, so `apply` need not find it again. */
  readonly keyed?: KeyedFacts;
}

/**
 * Facts of a keyed table's resolved batch that depend on its rows alone (not on the table), so they
 * stay true whatever happens between `prepare` and `apply`: each deleted row's primary key (`apply`
 * then never reads a deleted row, a cache miss per delete on a large table; an inserted row was just
 * built, so its key is read again for less than keeping it costs) and whether an insert puts back
 * exactly the row deleted under its key (the batch is then not consolidated).
 */
export interface KeyedFacts {
  /** The key of `deletes[i]`. */
  readonly deleteKeys: readonly Value[];
  /** Whether some insert is identical to the row deleted under its key; null: not known. */
  readonly putsBack: boolean | null;
}

/**
 * Insert-only batches from this size on go column by column. Below it the row path is cheaper: at
 * batch size 1 the columns, the batch object and the column batch cost more than the one row array
 * they save (the canonical bench at batch 1 lost a quarter of its events per CPU-second).
 */
export const COLUMNAR_MIN_ROWS = 64;

/** The rows of a batch that has none of a kind (shared: a prepared batch is never changed). */
export const NO_ROWS: readonly (readonly Value[])[] = [];

/** How many rows a prepared batch inserts, without building rows from its columns. */
export function insertCount(batch: {
  readonly inserts: readonly (readonly Value[])[];
  readonly insertColumns?: readonly Value[][];
}): number {
  const cols = batch.insertColumns;
  return cols !== undefined ? (cols[0] as Value[]).length : batch.inserts.length;
}

/**
 * An insert-only batch prepared column by column; its rows are built only if someone asks. A class
 * (its getter on the prototype): an object literal with a getter is built by the runtime, not
 * inline, and was 2.6% of the canonical pipeline's profile at batch size 100.
 */
class ColumnarBatch implements PreparedBatch {
  readonly deletes = NO_ROWS;
  private built: Value[][] | null = null;

  constructor(
    readonly table: string,
    readonly insertColumns: Value[][],
    readonly accepted: number,
    readonly insertColumnsTyped: boolean,
  ) {}

  get inserts(): Value[][] {
    this.built ??= rowsOf(this.insertColumns);
    return this.built;
  }
}

/** `typed`: the columns come from the table's generated normaliser (see `insertColumnsTyped`). */
export function columnarBatch(
  table: string,
  columns: Value[][],
  accepted: number,
  typed = false,
): PreparedBatch {
  return new ColumnarBatch(table, columns, accepted, typed);
}

/** Rows as columns (rows of `width` values). */
export function columnsOf(rows: readonly (readonly Value[])[], width: number): Value[][] {
  const columns: Value[][] = [];
  for (let c = 0; c < width; c++) {
    const column: Value[] = [];
    for (const row of rows) column.push(row[c] as Value);
    columns.push(column);
  }
  return columns;
}

function rowsOf(columns: readonly (readonly Value[])[]): Value[][] {
  const n = (columns[0] as readonly Value[]).length;
  const rows = new Array<Value[]>(n);
  for (let i = 0; i < n; i++) {
    const row = new Array<Value>(columns.length);
    for (let c = 0; c < columns.length; c++) row[c] = (columns[c] as readonly Value[])[i] as Value;
    rows[i] = row;
  }
  return rows;
}
