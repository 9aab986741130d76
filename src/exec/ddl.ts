// DDL: CREATE TABLE / SOURCE / SINK / MATERIALIZED VIEW, DROP and SHOW. Each statement is checked
// whole before it is journaled, and journaled before it changes the catalog, the table stores or the
// view graph, so a refused statement leaves nothing behind and a replayed one does the same again.
import { bindWindowClose } from '../planner/bind-window-close.ts';
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import type { EngineJournal } from '../common/journal.ts';
import { lowerToDataflow } from '../ivm/lower.ts';
import type { Statement } from '../parser/ast.ts';
import { bindSelect } from '../planner/bind-select.ts';
import { BINDING_RULES } from '../planner/journaled-binding.ts';
import { withSqlFunctions } from '../planner/sql-functions.ts';
import type { Catalog, SinkDef, TableDef, ViewDef } from '../planner/catalog.ts';
import type { LogicalPlan } from '../planner/logical-plan.ts';
import { closesInsertOnly, planInsertOnly } from '../planner/plan-insert-only.ts';
import { planKey } from '../planner/plan-key.ts';
import { kindLabel } from '../planner/catalog.ts';
import { sinkOptions, sourceOptions } from '../planner/connector-options.ts';
import type { StatementResult } from './api.ts';
import type { ConnectorCheck } from './engine-types.ts';
import { createFunction, dropFunction, showFunctions, type FunctionDdlContext } from './ddl-functions.ts';
import { sourceErrorsDef, tableShape } from './table-definition.ts';
import { TableStore } from './table-store.ts';
import type { ViewGraph } from './view-graph.ts';

/** What DDL changes: the catalog and, with it, the table stores and the view graph. */
export interface SchemaState {
  readonly catalog: Catalog;
  readonly tables: Map<string, TableStore>;
  readonly views: ViewGraph;
}

export interface DdlContext {
  journal(): EngineJournal | null;
  epoch(): number;
  /** The logical clock of the latest epoch (µs). */
  clock(): number;
  /** Before a view with a temporal filter is built: a tick epoch when the clock source moved on. */
  beforeTemporalView(): void;
  /** Whether new state starts tracking its changes (incremental checkpoints are on). */
  stateTracking(): boolean;
  /** The limits of the script being run. */
  limits(): SqlLimits;
  /** Rows a new view's first build may make its joins build (Infinity in replay: accepted once). */
  maxBackfillRows(): number;
  connectorCheck(): ConnectorCheck | null;
  /** An object left the catalog (its subscribers are told why). */
  removed(name: string, reason: string): void;
}

export class DdlStatements {
  constructor(
    private readonly state: SchemaState,
    private readonly deps: DdlContext,
  ) {}

  /** Runs the connector hook on a CREATE SOURCE/SINK's brokers; throws at the `brokers` option. */
  private checkConnector(
    stmt: Extract<Statement, { kind: 'createSource' | 'createSink' }>,
    connector: { readonly brokers: readonly string[]; readonly groupId?: string },
  ): void {
    const refused = this.deps.connectorCheck()?.(connector) ?? null;
    if (refused === null) return;
    const option = stmt.connector.options.find((o) => o.name === refused.option);
    throw refused.error.at(option?.valuePos ?? stmt.connector.pos);
  }

  createTable(stmt: Extract<Statement, { kind: 'createTable' }>): StatementResult {
    if (this.state.catalog.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE TABLE', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const def: TableDef = { kind: 'table', name: stmt.name, ...tableShape(stmt), sql: stmt.text };
    this.journalDdl(stmt.text);
    this.addStoredRelation(def);
    return { statement: 'CREATE TABLE', object: def.name };
  }

  private addStoredRelation(def: TableDef): void {
    this.state.catalog.add(def);
    const store = new TableStore(def);
    store.trackChanges(this.deps.stateTracking());
    this.state.tables.set(def.name, store);
  }

  /** A source is a table whose rows only its connector writes (see `applyChanges`' `fromSource`). */
  createSource(stmt: Extract<Statement, { kind: 'createSource' }>): StatementResult {
    if (this.state.catalog.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE SOURCE', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const shape = tableShape(stmt);
    const source = sourceOptions(
      stmt.connector,
      stmt.name,
      shape.primaryKey !== null,
      shape.watermark !== undefined,
    );
    this.checkConnector(stmt, source);
    const def: TableDef = { kind: 'table', name: stmt.name, ...shape, sql: stmt.text, source };
    const errors = source.onError === 'skip' ? sourceErrorsDef(stmt.name) : null;
    if (errors !== null && this.state.catalog.has(errors.name)) {
      throw new SluiceError(
        'DUPLICATE_OBJECT',
        `relation "${errors.name}" already exists; a source with on_error 'skip' records skipped messages in it`,
        { position: stmt.pos, hint: `rename the source or drop "${errors.name}"` },
      );
    }
    this.journalDdl(stmt.text);
    this.addStoredRelation(def);
    if (errors !== null) this.addStoredRelation(errors);
    return { statement: 'CREATE SOURCE', object: def.name };
  }

  /** A sink is catalog metadata over one view; its connector subscribes to the view. */
  createSink(stmt: Extract<Statement, { kind: 'createSink' }>): StatementResult {
    if (this.state.catalog.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE SINK', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const view = this.state.catalog.get(stmt.from);
    if (view === undefined) {
      throw new SluiceError('UNKNOWN_VIEW', `materialized view "${stmt.from}" does not exist`, {
        position: stmt.fromPos,
      });
    }
    if (view.kind !== 'view') {
      throw new SluiceError(
        'WRONG_OBJECT_KIND',
        `"${stmt.from}" is a ${kindLabel(view)}, not a materialized view`,
        {
          position: stmt.fromPos,
          hint: 'a sink writes a materialized view; create one over it (SELECT * FROM ...) and sink that',
        },
      );
    }
    const options = sinkOptions(stmt.connector, view.name, view.key !== null);
    this.checkConnector(stmt, options);
    const def: SinkDef = { kind: 'sink', name: stmt.name, view: view.name, options, sql: stmt.text };
    this.journalDdl(stmt.text);
    this.state.catalog.add(def);
    return { statement: 'CREATE SINK', object: def.name };
  }

  createView(stmt: Extract<Statement, { kind: 'createView' }>): StatementResult {
    if (this.state.catalog.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE MATERIALIZED VIEW', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const { result: bound, used: functions } = withSqlFunctions(this.state.catalog, () =>
      bindSelect(stmt.query, this.state.catalog, {
        forView: true,
        maxSelectItems: this.deps.limits().maxSelectItems,
        maxFromRelations: this.deps.limits().maxFromRelations,
        viewName: stmt.name,
        ...(stmt.columnNames !== undefined ? { columnNames: stmt.columnNames } : {}),
      }),
    );
    const close =
      stmt.emitOnWindowClose === undefined
        ? null
        : bindWindowClose(bound.plan, this.state.catalog, stmt.emitOnWindowClose, stmt.allowedLateness);
    const insertOnly = new Map<LogicalPlan, boolean>();
    const insertOnlyOf = (p: LogicalPlan): boolean => planInsertOnly(p, this.state.catalog, insertOnly);
    const def: ViewDef = {
      kind: 'view',
      name: stmt.name,
      columns: bound.columns,
      key: bound.key,
      sql: stmt.text,
      query: stmt.query,
      plan: bound.plan,
      dependsOn: bound.dependsOn,
      ...(functions.length > 0 ? { functions } : {}),
      ...(insertOnlyOf(bound.plan) || (close !== null && closesInsertOnly(bound.plan))
        ? { insertOnly: true as const }
        : {}),
    };
    const keys = new Map<LogicalPlan, readonly number[] | null>();
    const dataflow = lowerToDataflow(
      def.name,
      bound.plan,
      bound.key,
      close,
      (p) => planKey(p, this.state.catalog, keys),
      insertOnlyOf,
    );
    if (dataflow.nodes.some((n) => n.kind === 'temporalFilter')) this.deps.beforeTemporalView();
    // Bounded before the CREATE is journaled: a refused view leaves nothing to replay.
    const runtime = this.state.views.build(
      dataflow,
      this.deps.epoch(),
      this.deps.clock(),
      this.deps.maxBackfillRows(),
    );
    try {
      this.journalDdl(stmt.text);
    } catch (error) {
      // Not journaled, so not created: nothing of it may stay (shared arrangements, worker state).
      this.state.views.discard(runtime);
      throw error;
    }
    this.state.catalog.add(def);
    for (const part of runtime.statefulParts()) part.trackChanges(this.deps.stateTracking());
    this.state.views.add(def.name, runtime);
    return { statement: 'CREATE MATERIALIZED VIEW', object: def.name };
  }

  /** Journals a DDL statement with the binding rules it was accepted under, which its replay binds by. */
  private journalDdl(sql: string): void {
    this.deps.journal()?.appendDdl({ epoch: this.deps.epoch(), sql, rules: BINDING_RULES });
  }

  private functionContext(): FunctionDdlContext {
    return {
      catalog: this.state.catalog,
      journal: (sql) => this.journalDdl(sql),
      removeObject: (name, reason) => this.removeObject(name, reason),
    };
  }

  createFunction(stmt: Extract<Statement, { kind: 'createFunction' }>): StatementResult {
    return createFunction(stmt, this.functionContext());
  }

  drop(stmt: Extract<Statement, { kind: 'drop' }>): StatementResult {
    if (stmt.objectKind === 'function') return dropFunction(stmt, this.functionContext());
    const kind = objectKindLabels[stmt.objectKind];
    const label = `DROP ${kind.toUpperCase()}`;
    const object = this.state.catalog.get(stmt.name);
    if (object === undefined) {
      if (stmt.ifExists) return { statement: label, object: stmt.name };
      const code =
        stmt.objectKind === 'table'
          ? 'UNKNOWN_TABLE'
          : stmt.objectKind === 'view'
            ? 'UNKNOWN_VIEW'
            : 'UNKNOWN_OBJECT';
      throw new SluiceError(code, `${kind} "${stmt.name}" does not exist`, { position: stmt.pos });
    }
    const actual = kindLabel(object);
    if (object.kind === 'table' && object.errorsOf !== undefined) {
      throw new SluiceError(
        'WRONG_OBJECT_KIND',
        `"${stmt.name}" is the errors relation of source "${object.errorsOf}"; it is dropped with the source`,
        { position: stmt.pos, hint: `DROP SOURCE ${object.errorsOf}` },
      );
    }
    if (actual !== kind) {
      throw new SluiceError('WRONG_OBJECT_KIND', `"${stmt.name}" is not a ${kind}`, {
        position: stmt.pos,
        hint: `use DROP ${actual.toUpperCase()} to remove it`,
      });
    }
    // A source's errors relation goes with it, and so must whatever reads it.
    const companion =
      object.kind === 'table' && object.source?.onError === 'skip' ? sourceErrorsDef(object.name).name : null;
    const names =
      companion !== null && this.state.catalog.has(companion) ? [stmt.name, companion] : [stmt.name];
    const dependents = uniqueByName(names.flatMap((n) => this.state.catalog.transitiveDependents(n)));
    const sinks = uniqueByName(names.flatMap((n) => this.state.catalog.dependentSinks(n)));
    if ((dependents.length > 0 || sinks.length > 0) && !stmt.cascade) {
      throw new SluiceError(
        'DEPENDENT_OBJECTS',
        `cannot drop ${kind} "${stmt.name}" because other objects depend on it`,
        {
          position: stmt.pos,
          detail: [
            ...dependents.map(
              (d) => `materialized view "${d.name}" depends on "${d.dependsOn.join('", "')}"`,
            ),
            ...sinks.map((d) => `sink "${d.name}" depends on "${d.view}"`),
          ].join('\n'),
          hint: 'use DROP ... CASCADE to drop the dependent objects too',
        },
      );
    }
    this.journalDdl(stmt.text);
    for (const d of sinks) this.removeObject(d.name, `dropped by CASCADE from "${stmt.name}"`);
    for (const d of [...dependents].reverse())
      this.removeObject(d.name, `dropped by CASCADE from "${stmt.name}"`);
    for (const n of names.slice(1)) this.removeObject(n, `dropped with source "${stmt.name}"`);
    this.removeObject(stmt.name, 'dropped');
    return { statement: label, object: stmt.name };
  }

  private removeObject(name: string, reason: string): void {
    this.state.catalog.remove(name);
    this.state.tables.delete(name);
    this.state.views.remove(name);
    this.deps.removed(name, reason);
  }

  show(kind: 'tables' | 'views' | 'sources' | 'sinks' | 'functions'): StatementResult {
    const name = { name: 'name', type: 'text', nullable: false } as const;
    const definition = { name: 'definition', type: 'text', nullable: false } as const;
    switch (kind) {
      case 'functions':
        return showFunctions(this.state.catalog);
      case 'tables':
        return {
          statement: 'SHOW TABLES',
          columns: [name],
          rows: this.state.catalog.tables().map((t) => ({ name: t.name })),
        };
      case 'views':
        return {
          statement: 'SHOW VIEWS',
          columns: [name, definition],
          rows: this.state.catalog.views().map((v) => ({ name: v.name, definition: v.sql })),
        };
      case 'sources':
        return {
          statement: 'SHOW SOURCES',
          columns: [name, definition],
          rows: this.state.catalog.sources().map((t) => ({ name: t.name, definition: t.sql })),
        };
      case 'sinks':
        return {
          statement: 'SHOW SINKS',
          columns: [name, { name: 'view', type: 'text', nullable: false }, definition],
          rows: this.state.catalog.sinks().map((k) => ({ name: k.name, view: k.view, definition: k.sql })),
        };
    }
  }
}

const objectKindLabels = {
  table: 'table',
  view: 'materialized view',
  source: 'source',
  sink: 'sink',
} as const;

function duplicateObject(name: string, position: { line: number; column: number }): SluiceError {
  return new SluiceError('DUPLICATE_OBJECT', `relation "${name}" already exists`, { position });
}

function uniqueByName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(i.name) && seen.add(i.name) !== undefined);
}
