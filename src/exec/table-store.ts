// A table's current rows and the validation of ingest batches against them. `prepare` checks a whole
// request and resolves it to exact row changes without touching state (so a rejected request has no
// effect); `apply` then commits the resolved changes. Keyless tables are multisets; until the first
// delete they are kept as a plain append list (no per-row key encoding on the insert-only path),
// then as a counted arrangement; keyed tables are a unique-key arrangement (table-keyed-rows.ts).
// An insert row that omits a column gets the column's DEFAULT (NULL without one), before NOT NULL
// is checked. Each UNIQUE constraint keeps an index (unique-index.ts) maintained by `apply`; it is
// not checkpointed but rebuilt from the rows by `loadState` (one pass, like loading the rows).
// Beside it: the prepared batch (table-batch.ts), resolving a request's rows (table-resolve.ts) and
// column value facts (table-values.ts).
import { SluiceError } from '../common/errors.ts';
import { encodeValues, singleKey } from '../common/values.ts';
import type { StateDelta, Stateful } from '../ivm/state.ts';
import { rowBytes } from '../ivm/arrangement.ts';
import { CountedArrangement } from '../ivm/counted-arrangement.ts';
import type { UniqueArrangement } from '../ivm/unique-arrangement.ts';
import type { SlotRowMap } from '../ivm/slot-row-map.ts';
import { CapturedArray, type RowCapture } from '../ivm/row-capture.ts';
import { AppendColumns } from './append-columns.ts';
import { LentInsertColumns } from './table-lent-columns.ts';
import { ColumnRows } from '../common/column-rows.ts';
import type { ZBatch } from '../ivm/zset.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { Row, Value } from '../common/types.ts';
import type { TableChanges } from './api.ts';
import { UniqueIndex } from './unique-index.ts';
import {
  type InsertColumnsNormalizer,
  type InsertNormalizer,
  compileInsertColumnsNormalizer,
  keyDeleteKey,
  type KeyDeleteKey,
  compileInsertNormalizer,
  normalizeRowGeneral,
} from './row-normalizer.ts';
import { ReadIndex } from './read-index.ts';
import { TableWatermark } from './table-watermark.ts';
import type { OrderedIndex } from '../ivm/ordered-index.ts';
import { KeyedRows, applyKeyed } from './table-keyed-rows.ts';
import {
  COLUMNAR_MIN_ROWS,
  NO_ROWS,
  type KeyedFacts,
  type PreparedBatch,
  columnarBatch,
  columnsOf,
} from './table-batch.ts';
import { numericColumns, upgradeNumerics } from './table-values.ts';
import { type ResolveScratch, resolveKeyed, resolveKeylessDeletes, resolveScratch } from './table-resolve.ts';

export { type PreparedBatch, insertCount } from './table-batch.ts';
export { hasInexactColumns } from './table-values.ts';

/** A request's absent list of rows. */
const NO_INPUT: readonly unknown[] = [];

export class TableStore implements Stateful {
  readonly stateId: string;
  private tracking = false;
  /** The append list was written to a checkpoint (its later rows are the next delta). */
  private exported = false;
  /** Loaded numerics that were doubles (upgradeNumerics): the next checkpoint delta is full. */
  private upgraded = false;
  private appendExported = 0;
  /** A keyed table's scratch tables of the keys a request names (made on its first request). */
  private requestKeys: ResolveScratch | null = null;
  /** A keyed table's rows by key, with rows a checkpoint load deferred (table-keyed-rows.ts). */
  private readonly keyed: KeyedRows | null;
  /**
   * Insert-only keyless tables keep their rows column-wise: no per-row object survives the epoch,
   * which keeps garbage collection cheap on the ingest path. Rows are rebuilt only when read whole.
   */
  private appendOnly: AppendColumns | null;
  /** The arrays an append-only table's columnar batches are lent (table-lent-columns.ts). */
  private readonly lentInserts: LentInsertColumns;
  private multiset: CountedArrangement | null;
  private readonly columnIndex: Map<string, number>;
  readonly columnNames: readonly string[];
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
  private readonly uniqueIndexes: readonly UniqueIndex[];
  /** The ordered index REST pages read; exists once the table is read that way (read-index.ts). */
  private readonly readIndex: ReadIndex;
  /** Positions of the columns the rows are ordered by for reads: the primary key, else all. */
  readonly readOrder: readonly number[];
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

  constructor(readonly def: TableDef) {
    this.watermark =
      def.watermark === undefined
        ? null
        : new TableWatermark(def.name, def.watermark, def.source?.idleTimeoutMicros ?? null);
    this.stateId = `table:${def.name}`;
    this.columnIndex = new Map(def.columns.map((c, i) => [c.name, i]));
    this.columnNames = def.columns.map((c) => c.name);
    this.keyed = def.primaryKey === null ? null : new KeyedRows((row) => this.keyOf(row));
    this.appendOnly = def.primaryKey === null ? new AppendColumns(def.columns.length) : null;
    this.multiset = null;
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
    this.uniqueIndexes = (def.unique ?? []).map((u) => new UniqueIndex(u, this.columnNames));
    this.readOrder =
      def.primaryKey !== null && def.primaryKey.length > 0 ? def.primaryKey : def.columns.map((_, i) => i);
    this.readIndex = new ReadIndex(this.readOrder, def.primaryKey === null, def.columns.length, () =>
      this.capture(),
    );
  }

  /** The rows ordered for paged reads, or null while the index is still being built (read-index.ts). */
  orderedIndex(deadline: number): OrderedIndex | null {
    return this.readIndex.get(deadline);
  }

  keyOf(row: readonly Value[]): Value {
    const pk = this.def.primaryKey as readonly number[];
    return pk.length === 1 ? singleKey(row[pk[0] as number] as Value) : encodeValues(row, pk);
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

  private ensureMultiset(): CountedArrangement {
    if (this.multiset === null) {
      const ms = this.newMultiset();
      for (const row of this.appendOnly?.rows() ?? []) ms.add(row, 1);
      ms.trackChanges(this.tracking);
      this.multiset = ms;
      this.appendOnly = null;
    }
    return this.multiset;
  }

  private newMultiset(): CountedArrangement {
    // Grouped by value when equal values may print differently: a delete naming 1.5 finds a 1.50.
    // Rows grouped by value only once a delete names a text no row holds (equalRows builds it then).
    return new CountedArrangement(`table "${this.def.name}"`);
  }

  /** Validates a request as a whole and resolves it to exact row changes; changes nothing. */
  prepare(
    changes: TableChanges,
    clock?: number,
    /** Rows to insert already typed by `normalizeRow` (a source's decoder), in place of `changes.insert`. */
    typed?: readonly (readonly Value[])[],
  ): PreparedBatch {
    if (this.clockDefaults.length > 0 && (changes.insert?.length ?? 0) > 0) this.setDefaultsClock(clock);
    // A request without one of the lists reads a shared empty one (not a new [] per call).
    const deleteRows = changes.delete ?? NO_INPUT;
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
      const out = { deletes, inserts, deleteKeys: [] };
      const putsBack = resolveKeyed(
        this,
        this.byKey,
        deleteRows,
        insertRows,
        normalizeInsert,
        out,
        this.requestKeys,
      );
      for (const index of this.uniqueIndexes) index.check(this.def.name, deletes, inserts);
      const keyed: KeyedFacts = { deleteKeys: out.deleteKeys, putsBack };
      return { table: this.def.name, deletes, inserts, accepted, keyed };
    }
    if (deleteRows.length > 0) resolveKeylessDeletes(this, this.ensureMultiset(), deleteRows, deletes);
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

  /** The keyed rows, built first if a load deferred them. */
  private get byKey(): UniqueArrangement | null {
    return this.keyed === null ? null : this.keyed.rows;
  }

  /** Builds the rows and key index a checkpoint load deferred (done once, on first use). */
  buildDeferred(): void {
    this.keyed?.buildDeferred();
  }

  /**
   * Builds up to `maxRows` more of the deferred rows (the server does this while idle after a
   * restart, so the first request does not pay for all of them); true when none is left.
   */
  buildDeferredSlice(maxRows: number): boolean {
    return this.keyed === null || this.keyed.buildDeferredSlice(maxRows);
  }

  /** Whether loaded rows wait to be built (tests and the server's idle build). */
  get hasDeferredRows(): boolean {
    return this.keyed?.hasDeferred ?? false;
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    // The flag only: contents a load deferred stay deferred.
    this.keyed?.trackChanges(on);
    this.multiset?.trackChanges(on);
  }

  takeStateDelta(fullAsked: boolean): StateDelta {
    // State loaded from the double era is rewritten whole once: its entry ids (keys) have changed.
    const full = fullAsked || this.upgraded;
    this.upgraded = false;
    // Unchanged since a deferred load: the store holds exactly these rows, nothing to write.
    if (this.hasDeferredRows && !full) return { replaceAll: false, upserts: [], deletes: [] };
    if (this.byKey !== null) return this.byKey.takeDelta(full);
    // Once the append list became a multiset, that arrangement's first delta replaces everything.
    if (this.multiset !== null) return this.multiset.takeDelta(full);
    const append = this.appendOnly as AppendColumns;
    const replaceAll = full || !this.exported;
    this.exported = true;
    const from = replaceAll ? 0 : this.appendExported;
    // Built as the checkpoint writer reads them (append-columns.ts), not all at once here.
    const upserts = append.entriesFrom(from);
    this.appendExported = append.length;
    return { replaceAll, upserts, deletes: [] };
  }

  loadState(values: Iterable<unknown>): void {
    this.readIndex.drop();
    this.loadRows(values);
    if (this.uniqueIndexes.length === 0) return;
    for (const index of this.uniqueIndexes) index.clear();
    for (const [row, n] of this.entries())
      for (const index of this.uniqueIndexes) for (let i = 0; i < n; i++) index.add(row);
  }

  private loadRows(values: Iterable<unknown>): void {
    this.exported = true;
    if (values instanceof ColumnRows && !this.needsUpgrade(values)) {
      if (this.keyed !== null) {
        // The rows are built on first use (table-keyed-rows.ts).
        this.keyed.loadDeferred(values);
        this.upgraded = false;
        return;
      }
      this.multiset = null;
      this.upgraded = false;
      const append = new AppendColumns(this.def.columns.length);
      values.forEachRow((row) => append.push(row as Value[]));
      this.appendOnly = append;
      this.appendExported = append.length;
      return;
    }
    // The checkpoint hands over a list already (read, not kept): no copy of a million rows.
    const list: unknown[] = Array.isArray(values) ? values : [...values];
    this.upgraded = upgradeNumerics(list, this.def.columns);
    if (this.keyed !== null) {
      this.keyed.load(list);
      return;
    }
    if (list.some((v) => !Array.isArray(v))) {
      this.appendOnly = null;
      this.multiset = this.newMultiset();
      this.multiset.load(list);
      this.multiset.trackChanges(this.tracking);
      return;
    }
    this.multiset = null;
    this.appendOnly = new AppendColumns(this.def.columns.length);
    for (const v of list) this.appendOnly.push(v as Value[]);
    this.appendExported = this.appendOnly.length;
  }

  /** Whether column-wise loaded rows hold double-era numerics (loaded as rows, then upgraded). */
  private needsUpgrade(rows: ColumnRows): boolean {
    const numeric = numericColumns(this.def.columns);
    return (
      numeric.length > 0 && rows.someValue(numeric, (v) => typeof v === 'number' || typeof v === 'bigint')
    );
  }

  /** Current rows with multiplicities. */
  *entries(): Generator<readonly [readonly Value[], number]> {
    if (this.byKey !== null) for (const row of this.byKey.values()) yield [row, 1];
    else if (this.appendOnly !== null) for (const row of this.appendOnly.rows()) yield [row, 1];
    else for (const e of (this.multiset as CountedArrangement).entries()) yield [e.row, e.count];
  }

  /** The current rows, captured for reading in slices while later batches apply (references only). */
  capture(): RowCapture {
    if (this.byKey !== null) return new CapturedArray(Array.from(this.byKey.values()), null, true);
    if (this.appendOnly !== null) return this.appendOnly.capture();
    const rows: (readonly Value[])[] = [];
    const counts: number[] = [];
    for (const e of (this.multiset as CountedArrangement).entries()) {
      rows.push(e.row);
      counts.push(e.count);
    }
    return new CapturedArray(rows, counts, true);
  }

  /** Rows [from, to) of an insert-only keyless table, at once; of any other table, by walking. */
  rowsRange(from: number, to: number): (readonly Value[])[] {
    if (this.appendOnly !== null) return this.appendOnly.capture().slice(from, to).rows;
    const out: (readonly Value[])[] = [];
    let i = 0;
    for (const [row, n] of this.entries()) {
      for (let k = 0; k < n && i < to; k++, i++) if (i >= from) out.push(row);
      if (i >= to) break;
    }
    return out;
  }

  contents(): ZBatch {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [row, n] of this.entries()) {
      rows.push(row);
      weights.push(n);
    }
    return { rows, weights, consolidated: this.byKey !== null };
  }

  /**
   * Approximate heap bytes of the rows (for tenant quotas and metering): the row count times the
   * average estimated size (see arrangement.ts `rowBytes`) of up to 32 rows, so it costs the same
   * however large the table is.
   */
  stateBytes(): number {
    const rows = this.rowCount();
    if (rows === 0) return 0;
    let sampled = 0;
    let bytes = 0;
    // Rows a load deferred are sampled without building the others.
    const sample = this.keyed?.deferredRows ?? entryRows(this.entries());
    for (const row of sample) {
      bytes += rowBytes(row as readonly Value[], 0);
      if (++sampled === 32) break;
    }
    return Math.round((bytes / sampled) * rows);
  }

  rowCount(): number {
    const deferred = this.keyed?.deferredRows ?? null;
    if (deferred !== null) return deferred.length;
    if (this.byKey !== null) return this.byKey.size;
    if (this.appendOnly !== null) return this.appendOnly.length;
    return (this.multiset as CountedArrangement).total;
  }

  /**
   * The stored row whose primary key is `key` (values in primary-key column order), if any; tables
   * with a primary key only.
   */
  rowWithKey(key: readonly Value[]): readonly Value[] | undefined {
    if (this.byKey === null) return undefined;
    const pk = this.def.primaryKey as readonly number[];
    const probe: Value[] = new Array<Value>(this.def.columns.length).fill(null);
    pk.forEach((column, i) => (probe[column] = key[i] as Value));
    return this.byKey.get(this.keyOf(probe));
  }

  /**
   * The keyed rows' slots (tables with a primary key only), for a join that reads this table's rows
   * by its primary key instead of arranging them again (join-table-side.ts).
   */
  keyedSlots(): SlotRowMap<Value> | null {
    return this.keyed === null ? null : this.keyed.slots;
  }

  /** Whether a row with this row's primary key is stored (tables with a primary key only). */
  hasKeyOf(row: readonly Value[]): boolean {
    return this.byKey !== null && this.byKey.has(this.keyOf(row));
  }

  toRow(values: readonly Value[]): Row {
    const out: Row = {};
    this.def.columns.forEach((c, i) => (out[c.name] = values[i] as Value));
    return out;
  }
}

function* entryRows(entries: Iterable<readonly [readonly Value[], number]>): Generator<readonly Value[]> {
  for (const [row] of entries) yield row;
}
