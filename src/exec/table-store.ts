// A table's write path. `prepare` checks a whole request and resolves it to exact row changes without
// touching state (so a rejected request has no effect); `apply` then commits the resolved changes.
// An insert row that omits a column gets the column's DEFAULT (NULL without one), before NOT NULL
// is checked; each UNIQUE constraint's index is maintained by `apply`. The rows themselves, their
// reads and checkpoint are table-rows.ts.
// Beside it: the prepared batch (table-batch.ts), resolving a request's rows (table-resolve.ts) and
// column value facts (table-values.ts).
import { SluiceError } from '../common/errors.ts';
import type { CountedArrangement } from '../ivm/counted-arrangement.ts';
import type { AppendColumns } from './append-columns.ts';
import { LentInsertColumns } from './table-lent-columns.ts';
import type { ZBatch } from '../ivm/zset.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { Value } from '../common/types.ts';
import type { TableChanges } from './api.ts';
import {
  type InsertColumnsNormalizer,
  type InsertNormalizer,
  compileInsertColumnsNormalizer,
  keyDeleteKey,
  type KeyDeleteKey,
  compileInsertNormalizer,
  normalizeRowGeneral,
} from './row-normalizer.ts';
import { TableWatermark } from './table-watermark.ts';
import { applyKeyed } from './table-keyed-rows.ts';
import {
  COLUMNAR_MIN_ROWS,
  NO_ROWS,
  type KeyedFacts,
  type PreparedBatch,
  columnarBatch,
  columnsOf,
} from './table-batch.ts';
import {
  type KeyedResolution,
  type ResolveScratch,
  resolveKeyed,
  resolveKeylessDeletes,
  resolveScratch,
} from './table-resolve.ts';
import { TableRows } from './table-rows.ts';

export { type PreparedBatch, insertCount } from './table-batch.ts';
export { hasInexactColumns } from './table-values.ts';

/** A request's absent list of rows. */
const NO_INPUT: readonly unknown[] = [];

export class TableStore extends TableRows {
  /** A keyed table's scratch tables of the keys a request names (made on its first request). */
  private requestKeys: ResolveScratch | null = null;
  /** The arrays an append-only table's columnar batches are lent (table-lent-columns.ts). */
  private readonly lentInserts: LentInsertColumns;
  private readonly columnIndex: Map<string, number>;
  /**
   * Per column, the value an insert row that omits it gets; null when no column has a DEFAULT. The
   * entries of `clockDefaults` are set to each batch's epoch clock before its rows are read.
   */
  private readonly insertDefaults: Value[] | null;
  private readonly clockDefaults: readonly {
    readonly index: number;
    readonly at: (micros: number) => Value;
  }[];
  /** The clock `insertDefaults` holds the clock defaults at (NaN: none yet). */
  private defaultsClock = NaN;
  /** The generated fast path of `normalizeRow` for inserts (null: take the general path). */
  private readonly fastInsert: InsertNormalizer;
  /** The same, appending to columns: insert-only batches into an append-only table. */
  private readonly fastInsertColumns: InsertColumnsNormalizer;
  /**
   * By column: an integer column without a DEFAULT, whose values in a batch of `fastInsertColumns`
   * are integer numbers, not -0, or NULL (its test; a DEFAULT, set by the clock or not, is not
   * tested there).
   */
  private readonly intColumns: readonly boolean[];
  /** The key of a delete naming only the primary key, fast (NOT_KEY_ONLY: take the general path). */
  readonly keyDeleteKey: KeyDeleteKey;
  /** The table's watermark and late rows, when it declares one (checkpointed as a part of its own). */
  readonly watermark: TableWatermark | null;
  /**
   * The epoch of the last batch applied to the table (0: none since the process started). An
   * UPDATE … FROM of a keyless table that read it at an earlier epoch knows by it whether the copy
   * counts it read still hold (src/exec/dml-from-rows.ts).
   */
  changedAt = 0;

  constructor(def: TableDef) {
    super(def);
    this.watermark =
      def.watermark === undefined
        ? null
        : new TableWatermark(def.name, def.watermark, def.source?.idleTimeoutMicros ?? null);
    this.columnIndex = new Map(def.columns.map((c, i) => [c.name, i]));
    this.lentInserts = new LentInsertColumns(def.columns.length);
    this.insertDefaults = def.defaults === undefined ? null : def.defaults.map((d) => d?.value ?? null);
    this.clockDefaults = (def.defaults ?? []).flatMap((d, index) =>
      d?.atClock === undefined ? [] : [{ index, at: d.atClock }],
    );
    this.fastInsert = compileInsertNormalizer(def.columns, this.insertDefaults);
    this.fastInsertColumns = compileInsertColumnsNormalizer(def.columns, this.insertDefaults);
    this.intColumns = def.columns.map(
      (c, i) => c.type.kind === 'int' && (def.defaults?.[i] ?? null) === null,
    );
    this.keyDeleteKey = keyDeleteKey(def.columns, def.primaryKey, (row) => this.keyOf(row));
  }

  /** Converts a JSON row object into a typed row array, or throws naming the table and column. */
  normalizeRow(input: unknown, what: 'insert' | 'delete', index: number): Value[] {
    if (what === 'insert') {
      const row = this.fastInsert(input);
      if (row !== null) return row;
    }
    return this.normalizeRowGeneral(input, what, index);
  }

  /** `normalizeRow` without the generated fast path: the reference it must agree with. */
  normalizeRowGeneral(input: unknown, what: 'insert' | 'delete', index: number): Value[] {
    return normalizeRowGeneral(this.def, this.columnIndex, this.insertDefaults, input, what, index);
  }

  /** Computes the clock defaults (`DEFAULT now()`) at the batch's epoch clock. */
  private setDefaultsClock(clock: number | undefined): void {
    if (clock === undefined) {
      throw new SluiceError(
        'INTERNAL_ERROR',
        `a batch for table "${this.def.name}" must carry its epoch's clock`,
      );
    }
    if (clock === this.defaultsClock) return;
    const defaults = this.insertDefaults as Value[];
    for (const { index, at } of this.clockDefaults) defaults[index] = at(clock);
    this.defaultsClock = clock;
  }

  /** Validates a request as a whole and resolves it to exact row changes; changes nothing. */
  prepare(
    changes: TableChanges,
    clock?: number,
    /** Rows to insert already typed by `normalizeRow` (a source's decoder), in place of `changes.insert`. */
    typed?: readonly (readonly Value[])[],
    /** Two inserts of one key refuse the batch rather than the later replacing the earlier. */
    refuseRepeatedKeys = false,
    /**
     * Rows to delete as this table stores them (an UPDATE's or DELETE's, read from it), in place of
     * `changes.delete`: each still checked against the stored rows, not normalised again.
     */
    typedDeletes?: readonly (readonly Value[])[],
  ): PreparedBatch {
    if (this.clockDefaults.length > 0 && (changes.insert?.length ?? 0) > 0) this.setDefaultsClock(clock);
    // A request without one of the lists reads a shared empty one (not a new [] per call).
    const deleteRows: readonly unknown[] = typedDeletes ?? changes.delete ?? NO_INPUT;
    const typedDeleteRows = typedDeletes !== undefined;
    const insertRows: readonly unknown[] = typed ?? changes.insert ?? NO_INPUT;
    if (
      this.appendOnly !== null &&
      deleteRows.length === 0 &&
      insertRows.length >= COLUMNAR_MIN_ROWS &&
      this.uniqueIndexes.length === 0
    ) {
      const columnar =
        typed !== undefined
          ? columnarBatch(this.def.name, columnsOf(typed, this.def.columns.length), typed.length)
          : this.prepareColumns(insertRows);
      if (columnar !== null) return columnar;
    }
    if (
      insertRows.length === 1 &&
      deleteRows.length === 0 &&
      this.byKey === null &&
      this.uniqueIndexes.length === 0
    ) {
      // One row into a keyless table (an epoch per event): arrays of exactly one row, no scratch.
      const row = typed !== undefined ? (typed[0] as Value[]) : this.normalizeRow(insertRows[0], 'insert', 0);
      return { table: this.def.name, deletes: NO_ROWS, inserts: [row], accepted: 1 };
    }
    const normalizeInsert =
      typed !== undefined
        ? (input: unknown): Value[] => input as Value[]
        : (input: unknown, i: number): Value[] => this.normalizeRow(input, 'insert', i);
    const deletes: (readonly Value[])[] = [];
    const inserts: (readonly Value[])[] = [];
    const accepted = deleteRows.length + insertRows.length;
    if (this.byKey !== null) {
      this.requestKeys ??= resolveScratch();
      // Its lists are replaced by ones of their size (table-resolve.ts).
      const out: KeyedResolution = { deletes, inserts, deleteKeys: [] };
      const putsBack = resolveKeyed(
        this,
        this.byKey,
        deleteRows,
        insertRows,
        normalizeInsert,
        out,
        this.requestKeys,
        refuseRepeatedKeys,
        typedDeleteRows,
      );
      for (const index of this.uniqueIndexes) index.check(this.def.name, out.deletes, out.inserts);
      const keyed: KeyedFacts = { deleteKeys: out.deleteKeys, putsBack };
      return { table: this.def.name, deletes: out.deletes, inserts: out.inserts, accepted, keyed };
    }
    if (deleteRows.length > 0)
      resolveKeylessDeletes(this, this.ensureMultiset(), deleteRows, deletes, typedDeleteRows);
    for (let i = 0; i < insertRows.length; i++) inserts.push(normalizeInsert(insertRows[i], i));
    for (const index of this.uniqueIndexes) index.check(this.def.name, deletes, inserts);
    return { table: this.def.name, deletes, inserts, accepted };
  }

  /**
   * An insert-only batch whose rows all take the generated path, column by column; null when one
   * does not (the general path then finds and names the problem, or builds the rows).
   */
  private prepareColumns(insertRows: readonly unknown[]): PreparedBatch | null {
    // Written into the lent scratch columns (already grown to a past batch's size), which the table
    // copies from (append-columns.ts) and the views read within the epoch. Grown from empty by the
    // normalizer instead, each column was reallocated at every growth; sliced out of the scratch
    // for the table to adopt (batches of 1,024 rows or more), they were young arrays that every scavenge
    // copied until promoted.
    const columns = this.lentInserts.scratch();
    if (!this.fastInsertColumns(insertRows, columns)) return null;
    return columnarBatch(this.def.name, columns, insertRows.length, true);
  }

  /**
   * Commits resolved changes (deletes first). Also the replay path: rows are already validated.
   * Late inserts are dropped here, after the journal has the batch, so replay drops the same ones.
   */
  apply(
    given: {
      readonly deletes: readonly (readonly Value[])[];
      readonly inserts: readonly (readonly Value[])[];
      readonly insertColumns?: readonly Value[][];
      /** `insertColumns` come from the generated normaliser (PreparedBatch.insertColumnsTyped). */
      readonly insertColumnsTyped?: boolean;
      /** Keys and facts `prepare` found (read only while the batch is the one it resolved). */
      readonly keyed?: KeyedFacts;
    },
    /** A source epoch: its connector's positions (the partitions' event times) and its clock. */
    source?: { readonly positions: unknown; readonly clock: number },
  ): ZBatch {
    const batch =
      this.watermark === null
        ? given
        : this.watermark.admit(
            given,
            this.byKey === null ? null : (row) => this.keyOf(row),
            source?.positions,
            source?.clock,
          );
    const columns = batch.insertColumns;
    if (columns !== undefined && this.appendOnly !== null && batch.deletes.length === 0) {
      // Typed by the generated normaliser when the watermark passed the batch as it was.
      const typed = batch === given && given.insertColumnsTyped === true;
      return this.applyColumns(columns, typed ? this.intColumns : null);
    }
    if (batch.inserts.length === 1 && batch.deletes.length === 0 && this.appendOnly !== null) {
      if (this.uniqueIndexes.length === 0) return this.applyOne(batch.inserts);
    }
    for (const index of this.uniqueIndexes) {
      for (const row of batch.deletes) index.remove(row);
      for (const row of batch.inserts) index.add(row);
    }
    if (this.byKey !== null) {
      // The keys `prepare` found, when the batch is still its own (a watermark may drop late rows).
      const change = applyKeyed(this, this.byKey, batch, batch === given ? given.keyed : undefined);
      this.readIndex.apply(change.rows, change.weights);
      return change;
    }
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    if (batch.deletes.length > 0) {
      const ms = this.ensureMultiset();
      for (const row of batch.deletes) {
        if (ms.count(row) === 0)
          throw new SluiceError(
            'STATE_ERROR',
            `replayed delete of an absent row in table "${this.def.name}"`,
          );
        ms.add(row, -1);
        rows.push(row);
        weights.push(-1);
      }
    }
    if (this.appendOnly !== null) {
      for (const row of batch.inserts) {
        this.appendOnly.push(row);
        rows.push(row);
        weights.push(1);
      }
    } else {
      const ms = this.multiset as CountedArrangement;
      for (const row of batch.inserts) {
        ms.add(row, 1);
        rows.push(row);
        weights.push(1);
      }
    }
    this.readIndex.apply(rows, weights);
    return { rows, weights, consolidated: false };
  }

  /**
   * Appends one row to an insert-only keyless table: the epoch of a single event. Its change reads
   * the batch's own one-row list (nobody changes a batch's rows) and a weights array of exactly one
   * element (pushing onto an empty array allocates room for 16).
   */
  private applyOne(inserts: readonly (readonly Value[])[]): ZBatch {
    (this.appendOnly as AppendColumns).push(inserts[0] as readonly Value[]);
    const rows = inserts as (readonly Value[])[];
    const weights = [1];
    this.readIndex.apply(rows, weights);
    return { rows, weights, consolidated: false };
  }

  /**
   * Appends an insert-only batch given column by column; the views read it as columns too.
   * `ints`: the columns known to hold integers or NULLs alone (see AppendColumns.pushColumns).
   */
  private applyColumns(columns: readonly Value[][], ints: readonly boolean[] | null): ZBatch {
    const n = (columns[0] as Value[]).length;
    (this.appendOnly as AppendColumns).pushColumns(columns, ints);
    // Lent until the next batch (its weights a shared column of ones): the views read it this epoch.
    const out = this.lentInserts.lend(columns, n);
    // Only a table someone reads by pages has an index to keep (it needs rows).
    if (this.readIndex.active) this.readIndex.apply(out.rows, out.weights);
    return out;
  }
}
