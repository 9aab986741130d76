// The Reduce's first pass, interpreted: each input row's filter, group key and aggregate arguments,
// through the compiled expressions of the fused Map stage (or the plain columns of an unfused input).
// A generated kernel (reduce-kernel.ts) replaces it for the Reduces it covers; this one runs the
// others (ORDER BY arguments, unfused inputs) and the operator tests' direct constructions.
import type { Value } from '../../common/types.ts';
import type { AggregateSpec, ColumnSpec } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { RowFn, ScalarExpr } from '../../common/scalar-expr.ts';
import { columnsOf, compileScalar } from '../../common/scalar-expr.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import type { ZBatch } from '../zset.ts';
import { NO_SLOT } from '../group-index.ts';
import { orderedArgument } from './ordered-aggregate.ts';
import type { StepRows } from './reduce-lookup.ts';
import type { AggColumn } from './aggregates.ts';

/** A Map stage fused into the Reduce: evaluated per input row without building projected rows. */
export interface FusedMap {
  readonly filter: ScalarExpr | null;
  readonly project: readonly ScalarExpr[];
  readonly inputColumns: readonly ColumnSpec[];
}

/** Pass 1 of a Reduce step: per input row, its group id and key and its aggregate arguments. */
export interface RowPass {
  /** The columns the input rows have (for reporting a failing row). */
  readonly inputColumns: readonly ColumnSpec[];
  /** Per aggregate, whether it takes an argument (COUNT(*) does not). */
  readonly hasArg: readonly boolean[];
  /**
   * Fills `rows` for the input's first `rows.n` rows: rowSlots[i] is NO_SLOT for a row filtered out
   * or failed (reported to `errors`), else 0 with rowIds[i], rowKeys[i] and the arguments at
   * rowArgs[i × aggregates ..] set.
   */
  evaluate(input: ZBatch, rows: StepRows, rowArgs: Value[], errors: RowErrorSink): void;
  /**
   * Pass 3: folds each kept row (its slot and touch index from the lookup pass) and its arguments
   * into its group's partial in `pd` (the partials, `pstride` doubles per touch index).
   */
  accumulate(rows: StepRows, rowArgs: readonly Value[], pd: Float64Array): void;
}

export class InterpretedRowPass implements RowPass {
  readonly inputColumns: readonly ColumnSpec[];
  readonly hasArg: readonly boolean[];
  private readonly keyCount: number;
  private readonly keyFns: RowFn[];
  private readonly argFns: (RowFn | null)[];
  private readonly filter: RowFn | null;
  /** The row a column-wise input batch is read through (its width grows to the widest batch). */
  private readonly inRow: Value[] = [];
  /**
   * The input columns the filter, keys and arguments read, ascending: only they are copied into
   * `inRow` (the canonical pipeline's Reduces read two of three and one of two).
   */
  private readonly usedColumns: Int32Array;

  constructor(
    keyCount: number,
    aggregates: readonly AggregateSpec[],
    inputColumns: readonly ColumnSpec[],
    fused: FusedMap | null,
    private readonly columns: readonly AggColumn[],
    private readonly pstride: number,
  ) {
    this.keyCount = keyCount;
    if (fused === null) {
      this.filter = null;
      this.inputColumns = inputColumns;
      const col =
        (i: number): RowFn =>
        (row) =>
          row[i] as Value;
      this.keyFns = Array.from({ length: keyCount }, (_, i) => col(i));
      this.argFns = aggregates.map((a) => argFn(a, col));
      const used = new Set<number>(Array.from({ length: keyCount }, (_, i) => i));
      for (const a of aggregates) {
        if (a.argColumn !== null) used.add(a.argColumn);
        for (const o of a.orderBy ?? []) used.add(o.index);
      }
      this.usedColumns = Int32Array.from([...used].sort((x, y) => x - y));
    } else {
      this.filter = fused.filter === null ? null : compileScalar(fused.filter);
      this.inputColumns = fused.inputColumns;
      const fns = fused.project.map(compileScalar);
      const used = new Set<number>();
      if (fused.filter !== null) columnsOf(fused.filter, used);
      for (const e of fused.project) columnsOf(e, used);
      this.usedColumns = Int32Array.from([...used].sort((x, y) => x - y));
      this.keyFns = fns.slice(0, keyCount);
      this.argFns = aggregates.map((a) => argFn(a, (i) => fns[i] as RowFn));
    }
    this.hasArg = this.argFns.map((f) => f !== null);
  }

  evaluate(input: ZBatch, rows: StepRows, rowArgs: Value[], errors: RowErrorSink): void {
    const keyCount = this.keyCount;
    const keyFns = this.keyFns;
    const argFns = this.argFns;
    const filter = this.filter;
    const nAggs = argFns.length;
    const n = rows.n;
    const { rowSlots, rowIds, rowKeys } = rows;
    // A batch with its columns (from a Reduce upstream) is read column-wise through one scratch row:
    // its row objects (old output rows among them) are not dereferenced unless a row fails.
    const inCols = input.cols;
    const inRow = this.inRow;
    const used = this.usedColumns;
    const nUsed = used.length;
    // The scratch row's width is that of the batch (its other cells are never read).
    const width =
      inCols === undefined ? (n === 0 ? 0 : (input.rows[0] as readonly Value[]).length) : inCols.length;
    while (inRow.length < width) inRow.push(null);
    for (let i = 0; i < n; i++) {
      // Every row is read through the one scratch row, whichever form the batch has: the generated
      // key and argument functions then see a single array shape (a table's batch is columns when
      // large and rows when small, and mixing them made their loads polymorphic).
      if (inCols === undefined) {
        const r = input.rows[i] as readonly Value[];
        for (let u = 0; u < nUsed; u++) {
          const c = used[u] as number;
          inRow[c] = r[c] as Value;
        }
      } else
        for (let u = 0; u < nUsed; u++) {
          const c = used[u] as number;
          inRow[c] = (inCols[c] as readonly Value[])[i] as Value;
        }
      const row: readonly Value[] = inRow;
      rowSlots[i] = NO_SLOT;
      let key: Value[] | null = null;
      let single: Value = null;
      let id: Value;
      try {
        if (filter !== null && filter(row) !== true) continue;
        if (keyCount === 0) {
          id = '';
        } else if (keyCount === 1) {
          single = (keyFns[0] as RowFn)(row);
          id = singleKey(single);
        } else {
          key = new Array<Value>(keyCount);
          for (let k = 0; k < keyCount; k++) key[k] = (keyFns[k] as RowFn)(row);
          id = encodeValues(key);
        }
        for (let a = 0; a < nAggs; a++) {
          const f = argFns[a];
          rowArgs[i * nAggs + a] = f === null || f === undefined ? null : f(row);
        }
      } catch (error) {
        errors.report(
          error,
          input.rows[i] as readonly Value[],
          this.inputColumns,
          input.weights[i] as number,
        );
        continue;
      }
      rowIds[i] = id;
      rowKeys[i] = key ?? single;
      rowSlots[i] = 0;
    }
  }

  accumulate(rows: StepRows, rowArgs: readonly Value[], pd: Float64Array): void {
    const { n, rowSlots, rowTouches, weights } = rows;
    const columns = this.columns;
    const hasArg = this.hasArg;
    const nAggs = columns.length;
    const pstride = this.pstride;
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot === NO_SLOT) continue;
      const p = rowTouches[i] as number;
      const weight = weights[i] as number;
      pd[p * pstride] = (pd[p * pstride] as number) + weight;
      for (let a = 0; a < nAggs; a++) {
        if (hasArg[a] === true)
          (columns[a] as AggColumn).accumulate(slot, rowArgs[i * nAggs + a] as Value, weight, p);
      }
    }
  }
}

/** How the Reduce reads an aggregate's argument: its column, or for ORDER BY the value with its keys. */
function argFn(a: AggregateSpec, column: (i: number) => RowFn): RowFn | null {
  if (a.argColumn === null) return null;
  if (a.orderBy === undefined) return column(a.argColumn);
  return orderedArgument(
    column(a.argColumn),
    a.orderBy.map((o) => column(o.index)),
  );
}
