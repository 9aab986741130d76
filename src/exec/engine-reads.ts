// Reads of an engine's current state: views and tables for paged and whole reads, row errors,
// operator statistics, and the catalog as the API lists it. Every read is at the engine's current
// epoch; a view holding row errors is refused (VIEW_ERROR) rather than read half-right.
import { SluiceError } from '../common/errors.ts';
import type { Row, Value } from '../common/types.ts';
import type { ColumnMeta, TableDef, ViewDef } from '../planner/catalog.ts';
import { columnInfos, isAppendOnly, kindLabel, tableColumnInfos } from '../planner/catalog.ts';
import type { SinkInfo, SourceInfo, ViewReader, ViewRowError, ViewSnapshot } from './api.ts';
import type { CheckpointedState } from './engine-checkpoints.ts';
import type { RowTyping } from '../common/row-typing.ts';
import type { TableInfo, ViewInfo } from './engine-types.ts';
import { watermarkInfo } from './watermark-statements.ts';
import { compileInsertValuesNormalizer } from './row-normalizer.ts';
import { instantMicros } from '../common/time/instant-micros.ts';
import type { TableStore } from './table-store.ts';
import type { NodeStats, ViewRuntime } from './view-runtime.ts';
import { bigintAsText } from '../common/values.ts';

export class EngineReads {
  constructor(
    private readonly state: CheckpointedState,
    private readonly epoch: () => number,
  ) {}

  viewRuntime(name: string): ViewRuntime {
    const v = this.state.views.get(name);
    if (v === undefined) {
      const other = this.state.catalog.get(name);
      if (other !== undefined)
        throw new SluiceError(
          'WRONG_OBJECT_KIND',
          `"${name}" is a ${kindLabel(other)}, not a materialized view`,
        );
      throw new SluiceError('UNKNOWN_VIEW', `materialized view "${name}" does not exist`);
    }
    return v;
  }

  assertNoErrors(name: string): void {
    const def = this.state.catalog.get(name);
    if (def === undefined || def.kind !== 'view') return;
    for (const upstream of def.dependsOn) this.assertNoErrors(upstream);
    const runtime = this.state.views.get(name) as ViewRuntime;
    const errors = runtime.currentErrors();
    const first = errors[0];
    if (first !== undefined) {
      throw new SluiceError(
        'VIEW_ERROR',
        `materialized view "${name}" holds ${errors.length} row error${errors.length === 1 ? '' : 's'}; first: ${first.message}`,
        {
          detail: `caused by row ${JSON.stringify(first.row, bigintAsText)} (epoch ${first.epoch})`,
          hint: 'fix or delete the offending input rows; the view recovers when they are retracted',
        },
      );
    }
  }

  /**
   * The view for a paged or streamed read, without copying it: see ViewReader. Builds the view's
   * ordered index on first use, until `deadline` (performance.now() ms) per call. Refuses a view
   * holding row errors (VIEW_ERROR), as viewSnapshot does.
   */
  viewReader(name: string, deadline: number): ViewReader {
    const runtime = this.viewRuntime(name);
    this.assertNoErrors(name);
    const def = this.state.catalog.get(name) as ViewDef;
    const key = def.key === null || def.key.length === 0 ? null : def.key;
    return {
      epoch: this.epoch(),
      columns: columnInfos(def.columns),
      key: def.key === null ? null : def.key.map((k) => (def.columns[k] as ColumnMeta).name),
      order: key ?? def.columns.map((_, i) => i),
      index: runtime.output.orderedIndex(deadline),
      toRow: (values) => toRow(values, def.columns),
    };
  }

  /** The whole view, copied (library use and tests; the server reads through viewReader). */
  viewSnapshot(name: string): ViewSnapshot {
    const runtime = this.viewRuntime(name);
    this.assertNoErrors(name);
    const def = this.state.catalog.get(name) as ViewDef;
    const rows: Row[] = [];
    for (const [row, n] of runtime.output.entries()) {
      const r = toRow(row, def.columns);
      for (let i = 0; i < n; i++) rows.push(r);
    }
    return {
      epoch: this.epoch(),
      columns: columnInfos(def.columns),
      key: def.key === null ? null : def.key.map((k) => (def.columns[k] as ColumnMeta).name),
      rows,
    };
  }

  viewErrors(name: string): ViewRowError[] {
    return this.viewRuntime(name).currentErrors();
  }

  /** One page of a view's row errors (in the order they appeared) and how many it holds, at one epoch. */
  viewErrorsRange(
    name: string,
    from: number,
    to: number,
  ): { epoch: number; total: number; errors: ViewRowError[] } {
    const runtime = this.viewRuntime(name);
    return { epoch: this.epoch(), total: runtime.errorCount(), errors: runtime.errorsRange(from, to) };
  }

  /**
   * A table's (or source's) rows for a paged read, like viewReader: ordered by the primary key, else
   * all columns, from an ordered index built on first use until `deadline` per call.
   */
  tableReader(name: string, deadline: number): ViewReader {
    const store = this.state.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    const def = store.def;
    return {
      epoch: this.epoch(),
      columns: columnInfos(def.columns),
      key: def.primaryKey === null ? null : def.primaryKey.map((k) => (def.columns[k] as ColumnMeta).name),
      order: store.readOrder,
      index: store.orderedIndex(deadline),
      toRow: (values) => store.toRow(values),
    };
  }

  viewNodeStats(name: string): NodeStats[] {
    return this.viewRuntime(name).nodeStats();
  }

  /**
   * Rows [from, to) of a table in its storage order (at once for an insert-only keyless table, such
   * as a source's errors relation; by walking for others): a bounded read, no copy of the table.
   */
  tableRowsRange(name: string, from: number, to: number): Row[] {
    const store = this.state.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    return store.rowsRange(from, to).map((row) => store.toRow(row));
  }

  /** The whole table, copied (library use and tests; the server reads bounded ranges). */
  tableRows(name: string): Row[] {
    const store = this.state.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    const out: Row[] = [];
    for (const [row, n] of store.entries()) for (let i = 0; i < n; i++) out.push(store.toRow(row));
    return out;
  }

  private tableInfo(t: TableDef): TableInfo {
    const watermark = watermarkInfo(t, this.state.tables.get(t.name) as TableStore);
    return {
      name: t.name,
      columns: tableColumnInfos(t),
      primaryKey: t.primaryKey === null ? null : t.primaryKey.map((k) => (t.columns[k] as ColumnMeta).name),
      ...(t.unique !== undefined
        ? {
            unique: t.unique.map((u) => ({
              name: u.name,
              columns: u.columns.map((k) => (t.columns[k] as ColumnMeta).name),
            })),
          }
        : {}),
      ...(watermark !== null ? { watermark } : {}),
      ...(isAppendOnly(t) ? { appendOnly: true as const } : {}),
      sql: t.sql,
      rowCount: (this.state.tables.get(t.name) as TableStore).rowCount(),
      stateBytes: (this.state.tables.get(t.name) as TableStore).stateBytes(),
      dependents: this.state.catalog.dependents(t.name).map((d) => d.name),
    };
  }

  /**
   * A source's row validation, for its connector to judge each record on its own (a record that
   * fails is a poison record, not a rejected batch): the reason a row does not fit, or null.
   */
  sourceRowCheck(source: string): (row: Record<string, unknown>) => string | null {
    const store = this.state.tables.get(source);
    if (store === undefined || store.def.source === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `source "${source}" does not exist`);
    }
    return (row) => {
      try {
        store.normalizeRow(row, 'insert', 0);
        return null;
      } catch (error) {
        if (error instanceof SluiceError) return error.message;
        throw error;
      }
    };
  }

  /**
   * A keyed source's primary key as its store keys it, for its connector: keys spelled differently
   * that the source's typing reads as one ("01" and 1 for a bigint) get one identity, so a batch
   * keeps the last operation per key; a key that does not fit its columns throws SluiceError, so a
   * delete naming one is a poison record rather than a batch the engine refuses.
   */
  sourceKeyIdentity(source: string): (key: Record<string, unknown>) => unknown {
    const store = this.state.tables.get(source);
    if (store === undefined || store.def.source === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `source "${source}" does not exist`);
    }
    if (store.def.primaryKey === null) {
      throw new SluiceError('INTERNAL_ERROR', `source "${source}" has no primary key`);
    }
    return (key) => store.keyOf(store.normalizeRow(key, 'delete', 0));
  }

  /**
   * A source with a WATERMARK: a decoded row's event time in µs (its watermark column, as the
   * source stores it; null when NULL or invalid), for its per-partition watermarks. Null otherwise.
   */
  sourceEventTime(source: string): ((row: Record<string, unknown>) => number | null) | null {
    const store = this.state.tables.get(source);
    const wm = store?.def.watermark;
    if (store === undefined || store.def.source === undefined || wm === undefined) return null;
    return (row) => {
      try {
        const v = store.normalizeRow(row, 'insert', 0)[wm.column];
        return typeof v === 'string' ? instantMicros(v) : null;
      } catch (error) {
        if (error instanceof SluiceError) return null;
        throw error;
      }
    };
  }

  /**
   * A source's rows typed by its connector, handed back as `typedInserts` so that each row is
   * validated once. Null when a row's values depend on its batch (a DEFAULT now() column takes the
   * epoch's clock, known only when the batch is applied): the connector then hands rows as objects.
   */
  sourceRowTyping(source: string): RowTyping | null {
    const store = this.state.tables.get(source);
    if (store === undefined || store.def.source === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `source "${source}" does not exist`);
    }
    if ((store.def.defaults ?? []).some((d) => d?.atClock !== undefined)) return null;
    const wm = store.def.watermark;
    const def = store.def;
    return {
      typed: (row) => store.normalizeRow(row, 'insert', 0),
      // The same checks as `typed`'s fast path (the table's column order, its insert defaults).
      typedValues: compileInsertValuesNormalizer(
        def.columns,
        def.defaults === undefined ? null : def.defaults.map((d) => d?.value ?? null),
      ),
      valueColumns: def.columns.map((c) => c.name),
      eventTime:
        wm === undefined
          ? null
          : (row) => {
              const v = row[wm.column];
              return typeof v === 'string' ? instantMicros(v) : null;
            },
    };
  }

  /** Tables, sources, views and sinks, in creation order within each kind. */
  catalog(): { tables: TableInfo[]; views: ViewInfo[]; sources: SourceInfo[]; sinks: SinkInfo[] } {
    const c = this.state.catalog;
    return {
      tables: c.tables().map((t) => this.tableInfo(t)),
      sources: c.sources().map((t) => ({ ...this.tableInfo(t), options: t.source as SourceInfo['options'] })),
      sinks: c.sinks().map((k) => ({ name: k.name, view: k.view, sql: k.sql, options: k.options })),
      views: c.views().map((v) => this.viewInfoOf(v)),
    };
  }

  /** One view's catalog entry; undefined when there is no such view. */
  viewInfo(name: string): ViewInfo | undefined {
    const def = this.state.catalog.get(name);
    return def?.kind === 'view' ? this.viewInfoOf(def) : undefined;
  }

  private viewInfoOf(v: ViewDef): ViewInfo {
    const runtime = this.state.views.get(v.name) as ViewRuntime;
    return {
      name: v.name,
      columns: columnInfos(v.columns),
      key: v.key === null ? null : v.key.map((k) => (v.columns[k] as ColumnMeta).name),
      sql: v.sql,
      rowCount: runtime.output.size(),
      stateBytes: runtime.stateBytes(),
      dependsOn: v.dependsOn,
      dependents: this.state.catalog.dependents(v.name).map((d) => d.name),
      errorCount: runtime.errorCount(),
      fingerprint: runtime.plan.fingerprint,
    };
  }

  /**
   * The definitions of every view, source and sink (name and SQL), in creation order: what a
   * watcher of the catalog compares after DDL, without building every view's full entry.
   */
  catalogDefinitions(): {
    views: { name: string; sql: string }[];
    sources: { name: string; sql: string }[];
    sinks: { name: string; sql: string }[];
    /** Tables and sources, without a source's errors relation (its source's statement creates it). */
    relations: { name: string; sql: string }[];
    functions: { name: string; sql: string }[];
  } {
    const c = this.state.catalog;
    const pick = (o: { name: string; sql: string }) => ({ name: o.name, sql: o.sql });
    return {
      views: c.views().map(pick),
      sources: c.sources().map(pick),
      sinks: c.sinks().map(pick),
      relations: c
        .storedRelations()
        .filter((t) => t.errorsOf === undefined)
        .map(pick),
      functions: c.functions().map(pick),
    };
  }
}

export function toRow(values: readonly Value[], columns: readonly ColumnMeta[]): Row {
  const out: Row = {};
  for (let i = 0; i < columns.length; i++) out[(columns[i] as ColumnMeta).name] = values[i] as Value;
  return out;
}
