// A table's current rows and how they are read and checkpointed: keyless tables are multisets, kept
// as a plain append list until the first delete (no per-row key encoding on the insert-only path),
// then as a counted arrangement; keyed tables are a unique-key arrangement (table-keyed-rows.ts).
// Each UNIQUE constraint's index (unique-index.ts) is not checkpointed but rebuilt from the rows by
// `loadState` (one pass, like loading the rows). TableStore (table-store.ts) extends it with the
// write path: a request validated whole by `prepare`, then committed by `apply`.
import { encodeValues, singleKey } from '../common/values.ts';
import type { StateDelta, Stateful } from '../ivm/state.ts';
import { rowBytes } from '../ivm/arrangement.ts';
import { CountedArrangement } from '../ivm/counted-arrangement.ts';
import type { UniqueArrangement } from '../ivm/unique-arrangement.ts';
import type { SlotRowMap } from '../ivm/slot-row-map.ts';
import { CapturedArray, type RowCapture } from '../ivm/row-capture.ts';
import { AppendColumns } from './append-columns.ts';
import { ColumnRows } from '../common/column-rows.ts';
import { type ZBatch, batchOfEntries } from '../ivm/zset.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { Row, Value } from '../common/types.ts';
import { UniqueIndex } from './unique-index.ts';
import { ReadIndex } from './read-index.ts';
import type { OrderedIndex } from '../ivm/ordered-index.ts';
import { KeyedRows } from './table-keyed-rows.ts';
import { numericColumns, upgradeNumerics } from './table-values.ts';

export abstract class TableRows implements Stateful {
  readonly stateId: string;
  private tracking = false;
  /** The append list was written to a checkpoint (its later rows are the next delta). */
  private exported = false;
  /** Loaded numerics that were doubles (upgradeNumerics): the next checkpoint delta is full. */
  private upgraded = false;
  private appendExported = 0;
  /** A keyed table's rows by key, with rows a checkpoint load deferred (table-keyed-rows.ts). */
  private readonly keyed: KeyedRows | null;
  /**
   * Insert-only keyless tables keep their rows column-wise: no per-row object survives the epoch,
   * which keeps garbage collection cheap on the ingest path. Rows are rebuilt only when read whole.
   */
  protected appendOnly: AppendColumns | null;
  protected multiset: CountedArrangement | null;
  readonly columnNames: readonly string[];
  protected readonly uniqueIndexes: readonly UniqueIndex[];
  /** The ordered index REST pages read; exists once the table is read that way (read-index.ts). */
  protected readonly readIndex: ReadIndex;
  /** Positions of the columns the rows are ordered by for reads: the primary key, else all. */
  readonly readOrder: readonly number[];

  constructor(readonly def: TableDef) {
    this.stateId = `table:${def.name}`;
    this.columnNames = def.columns.map((c) => c.name);
    this.keyed = def.primaryKey === null ? null : new KeyedRows((row) => this.keyOf(row));
    this.appendOnly = def.primaryKey === null ? new AppendColumns(def.columns.length) : null;
    this.multiset = null;
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

  protected ensureMultiset(): CountedArrangement {
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

  /** The keyed rows, built first if a load deferred them. */
  protected get byKey(): UniqueArrangement | null {
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
    return batchOfEntries(this.entries(), this.byKey !== null);
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

  /** How many copies of `row`, exactly as stored, a table without a primary key holds. */
  copiesOf(row: readonly Value[]): number {
    return this.ensureMultiset().count(row);
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
