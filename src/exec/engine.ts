// The engine: catalog, table stores and running views, driven one epoch at a time. Each batch —
// from the ingest API or an INSERT/UPDATE/DELETE — is validated whole, journaled, applied to its
// table, then pushed through every dependent view in creation order (views over views see the same
// epoch), and only then are subscribers told. Everything here is synchronous.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import { resolveSqlLimits, type SqlLimits } from '../common/limits.ts';
import type { StateDelta } from '../ivm/state.ts';
import type { SelectStmt, Statement } from '../parser/ast.ts';
import { parseStatements, parseStepwise } from '../parser/parse.ts';
import { printDataflow, type DataflowPlan } from '../ivm/dataflow-plan.ts';
import { lowerToDataflow } from '../ivm/lower.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { bindSelect } from '../planner/bind-select.ts';
import type { ColumnMeta, SinkDef, TableColumnInfo, TableDef, ViewDef } from '../planner/catalog.ts';
import { Catalog, columnInfos, kindLabel, tableColumnInfos } from '../planner/catalog.ts';
import { sinkOptions, sourceOptions } from '../planner/connector-options.ts';
import { printLogicalPlan } from '../planner/logical-plan.ts';
import type { ColumnInfo, Row, Value } from '../common/types.ts';
import { typeName } from '../common/types.ts';
import type {
  Change,
  EngineJournal,
  ScriptResult,
  SinkInfo,
  SourceInfo,
  SourcePositions,
  StatementResult,
  TableChanges,
  ViewChangeSet,
  ViewListener,
  ViewReader,
  ViewRowError,
  ViewSnapshot,
} from './api.ts';
import type { PreparedBatch } from './table-store.ts';
import { TableStore } from './table-store.ts';
import type { NodeStats } from './view-runtime.ts';
import type { ViewRuntime } from './view-runtime.ts';
import { ViewGraph } from './view-graph.ts';
import type { SharedArrangementInfo } from './shared-arrangements.ts';
import { asSluiceError, sourceErrorsDef, tableShape } from './table-definition.ts';

export { sourceErrorsDef } from './table-definition.ts';
import type { RowCapture } from '../ivm/row-capture.ts';
import { CapturedArray } from '../ivm/row-capture.ts';
import type { ResultLimits } from './result-size.ts';
import { SelectJob } from './select-job.ts';
import { DmlStatements } from './dml.ts';

export type { EngineJournal } from './api.ts';

/**
 * Connector hook (set by the server): judges a new source's or sink's `brokers` when its CREATE is
 * executed — the error to raise (it is given the option's position), or null to allow. Installed
 * after recovery, so a replayed CREATE is never judged again.
 */
export type ConnectorCheck = (brokers: readonly string[]) => SluiceError | null;

export interface TableInfo {
  readonly name: string;
  /** With `default` on a column that has a DEFAULT (the expression as written). */
  readonly columns: readonly TableColumnInfo[];
  readonly primaryKey: readonly string[] | null;
  /** UNIQUE constraints besides the primary key, name and columns; absent when there are none. */
  readonly unique?: readonly { readonly name: string; readonly columns: readonly string[] }[];
  readonly sql: string;
  readonly rowCount: number;
  readonly dependents: readonly string[];
}

export interface ViewInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  readonly sql: string;
  readonly rowCount: number;
  readonly stateBytes: number;
  readonly dependsOn: readonly string[];
  readonly dependents: readonly string[];
  readonly errorCount: number;
  readonly fingerprint: string;
}

export interface ApplyOptions {
  /**
   * Replay of a table batch: the epoch's positions as recorded; the journal is not called.
   * With `fromSource`: the connector's positions for this batch (required), recorded as the
   * epoch's positions and handed to the journal (when one is set) in `JournalBatch.positions`.
   */
  readonly positions?: SourcePositions;
  /**
   * Set by a source's connector (and by replay of a source batch): a source's rows can only be
   * changed this way; without it, a write to a source is refused (WRONG_OBJECT_KIND).
   */
  readonly fromSource?: boolean;
  /**
   * With `fromSource`, on a source with a primary key: a delete of a key the source does not hold
   * is dropped instead of rejecting the batch (an upsert tombstone for a key never seen). Deletes
   * are checked against the rows before the batch, so a connector folds a batch to the last
   * message per key first (deletes apply before inserts).
   */
  readonly ignoreMissingDeletes?: boolean;
}

/** One object's state in a checkpoint: the parts that changed since the last checkpoint. */
export interface ObjectCheckpoint {
  readonly name: string;
  readonly kind: 'table' | 'view';
  /** Plan fingerprint (views) or schema fingerprint (tables): state is only reloaded into a match. */
  readonly fingerprint: string;
  readonly parts: readonly { readonly stateId: string; readonly delta: StateDelta }[];
}

export interface EngineCheckpoint {
  readonly epoch: number;
  readonly positions: SourcePositions;
  readonly objects: readonly ObjectCheckpoint[];
}

/** What a checkpoint store hands back on recovery: every stored entry value per state id. */
export interface StoredCheckpoint {
  readonly epoch: number;
  readonly positions: SourcePositions;
  readonly objects: ReadonlyMap<
    string,
    { readonly fingerprint: string; readonly parts: ReadonlyMap<string, readonly unknown[]> }
  >;
}

export interface EngineOptions {
  /** Limits on SQL text (src/common/limits.ts); each one left out keeps its default. */
  readonly limits?: Partial<SqlLimits>;
}

export interface ExecuteOptions {
  /**
   * Limits for this call instead of the engine's: REPLAY_SQL_LIMITS (src/common/limits.ts) when re-running
   * journaled statements, which were accepted under the limits of their day.
   */
  readonly limits?: SqlLimits;
  /**
   * Names starting with this are the caller's own (the server's query subscriptions): a statement
   * of the script that creates an object so named is refused with RESERVED_NAME.
   */
  readonly reservedPrefix?: string;
}

/** A script being run in steps (`Engine.runScript`). */
export interface ScriptRun {
  /**
   * Runs until `deadline` (performance.now() ms; Infinity: to the end) passes, at least one step;
   * the script's result once it has ended (after its last statement or its first error), else null.
   */
  step(deadline: number): ScriptResult | null;
  /** Ends it early: the statements run so far keep their effect, the result carries `error`. */
  stop(error: SluiceError): ScriptResult;
  /** Input rows its SELECT statements have read so far. */
  rowsRead: number;
  /** Table rows its UPDATE and DELETE statements have examined so far (by key or by scan). */
  dmlRowsRead: number;
}

interface Subscription {
  readonly listener: ViewListener;
  readonly onClose: ((reason: string) => void) | undefined;
}

export class Engine {
  private readonly catalogState = new Catalog();
  /** INSERT/UPDATE/DELETE; it counts the table rows UPDATE and DELETE examine (ScriptRun counts its own). */
  private readonly dml = new DmlStatements({
    tableForWrite: (name, pos) => this.tableForWrite(name, pos),
    applyChanges: (table, changes) => this.applyChanges(table, changes),
    currentEpoch: () => this.currentEpoch,
  });
  private readonly tables = new Map<string, TableStore>();
  /** Every view's dataflow, in one graph fed by the tables. */
  private readonly views = new ViewGraph((name) => this.tables.get(name)?.contents() ?? null);
  private readonly subscribers = new Map<string, Set<Subscription>>();
  private journal: EngineJournal | null = null;
  private connectorCheck: ConnectorCheck | null = null;
  private stateTracking = false;
  private currentEpoch = 0;
  private lastPositions: SourcePositions = {};
  /** What one script may ask of the SQL front end. */
  readonly limits: SqlLimits;
  /** The limits of the script being run (the engine's, or the call's own). */
  private callLimits: SqlLimits;

  constructor(options: EngineOptions = {}) {
    this.limits = resolveSqlLimits(options.limits);
    this.callLimits = this.limits;
  }
  /** Bounds of an ad-hoc SELECT's result (the server sets them; unlimited by default). */
  selectLimits: ResultLimits = { maxRows: Infinity, maxBytes: Infinity };

  get epoch(): number {
    return this.currentEpoch;
  }

  get positions(): SourcePositions {
    return this.lastPositions;
  }

  setJournal(journal: EngineJournal | null): void {
    this.journal = journal;
  }

  setConnectorCheck(check: ConnectorCheck | null): void {
    this.connectorCheck = check;
  }

  /** Runs the connector hook on a CREATE SOURCE/SINK's brokers; throws at the `brokers` option. */
  private checkConnector(
    stmt: Extract<Statement, { kind: 'createSource' | 'createSink' }>,
    brokers: readonly string[],
  ): void {
    const error = this.connectorCheck?.(brokers) ?? null;
    if (error === null) return;
    throw error.at(stmt.connector.options.find((o) => o.name === 'brokers')?.valuePos ?? stmt.connector.pos);
  }

  // ---- statements -------------------------------------------------------------------------

  /** Runs `;`-separated statements; throws at the first failing one (earlier ones took effect). */
  execute(sql: string, options: ExecuteOptions = {}): StatementResult[] {
    const r = this.executeScript(sql, options);
    if (r.error !== undefined) throw r.error;
    return [...r.results];
  }

  executeScript(sql: string, options: ExecuteOptions = {}): ScriptResult {
    return this.runScript(sql, options).step(Infinity) as ScriptResult;
  }

  /**
   * Checks that `text` is one SELECT statement and nothing else (a trailing `;` aside), as a caller
   * must before putting it inside a statement of its own; throws the parse error, or
   * INVALID_REQUEST naming what else the text holds. Binding is left to the statement it goes into.
   */
  checkSingleSelect(text: string): void {
    const statements = parseStatements(text, this.limits);
    const first = statements[0];
    if (statements.length === 1 && first?.kind === 'select') return;
    throw new SluiceError(
      'INVALID_REQUEST',
      statements.length === 0
        ? 'the query is empty: expected one SELECT statement'
        : statements.length > 1
          ? `expected one SELECT statement, not ${statements.length} statements`
          : 'expected a SELECT statement: a subscription takes a query, not other statements',
      first !== undefined && first.kind !== 'select' && 'pos' in first ? { position: first.pos } : {},
    );
  }

  /**
   * A script to run in steps, so a long one need not hold the caller's thread: parsed whole first
   * (a script that does not parse runs nothing), then statement by statement, a SELECT in slices of
   * its input. Between steps the engine may apply other batches and statements; each statement sees
   * the catalog and data as they are when it runs (a SELECT: when it starts).
   */
  runScript(sql: string, options: ExecuteOptions = {}): ScriptRun {
    const limits = options.limits ?? this.limits;
    const results: StatementResult[] = [];
    const parsing = parseStepwise(sql, limits);
    let statements: Statement[] | null = null;
    let next = 0;
    let select: SelectJob | null = null;
    let ended: ScriptResult | null = null;
    const run: ScriptRun = {
      rowsRead: 0,
      dmlRowsRead: 0,
      step: (deadline) => {
        if (ended !== null) return ended;
        this.callLimits = limits;
        try {
          do {
            if (statements === null) {
              const parsed = parsing.next();
              if (parsed.done === true) statements = parsed.value;
            } else if (select !== null) {
              const before = select.rowsRead;
              const ready = select.work(deadline);
              run.rowsRead += select.rowsRead - before;
              if (ready) {
                results.push(select.result());
                select = null;
              }
            } else {
              const stmt = statements[next++];
              if (stmt === undefined) return (ended = { results });
              if (stmt.kind === 'select') select = this.prepareSelect(stmt.query);
              else {
                if (options.reservedPrefix !== undefined) refuseReserved(stmt, options.reservedPrefix);
                const before = this.dml.rowsExamined;
                try {
                  results.push(this.executeStatement(stmt));
                } finally {
                  run.dmlRowsRead += this.dml.rowsExamined - before;
                }
              }
            }
          } while (performance.now() < deadline);
          return null;
        } catch (error) {
          return (ended = { results, error: asSluiceError(error) });
        } finally {
          this.callLimits = this.limits;
        }
      },
      stop: (error) => (ended ??= { results, error }),
    };
    return run;
  }

  private executeStatement(stmt: Statement): StatementResult {
    switch (stmt.kind) {
      case 'createTable':
        return this.createTable(stmt);
      case 'createView':
        return this.createView(stmt);
      case 'createSource':
        return this.createSource(stmt);
      case 'createSink':
        return this.createSink(stmt);
      case 'drop':
        return this.drop(stmt);
      case 'show':
        return this.show(stmt.objectKind);
      case 'explain':
        return this.explain(stmt.query, stmt.dataflow);
      case 'insert':
        return this.dml.insert(stmt);
      case 'update':
        return this.dml.update(stmt);
      case 'delete':
        return this.dml.delete(stmt);
      case 'select':
        return this.selectStatement(stmt.query);
    }
  }

  private createTable(stmt: Extract<Statement, { kind: 'createTable' }>): StatementResult {
    if (this.catalogState.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE TABLE', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const def: TableDef = { kind: 'table', name: stmt.name, ...tableShape(stmt), sql: stmt.text };
    this.journal?.appendDdl({ epoch: this.currentEpoch, sql: stmt.text });
    this.addStoredRelation(def);
    return { statement: 'CREATE TABLE', object: def.name };
  }

  private addStoredRelation(def: TableDef): void {
    this.catalogState.add(def);
    const store = new TableStore(def);
    store.trackChanges(this.stateTracking);
    this.tables.set(def.name, store);
  }

  /** A source is a table whose rows only its connector writes (see `applyChanges`' `fromSource`). */
  private createSource(stmt: Extract<Statement, { kind: 'createSource' }>): StatementResult {
    if (this.catalogState.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE SOURCE', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const shape = tableShape(stmt);
    const source = sourceOptions(stmt.connector, stmt.name, shape.primaryKey !== null);
    this.checkConnector(stmt, source.brokers);
    const def: TableDef = { kind: 'table', name: stmt.name, ...shape, sql: stmt.text, source };
    const errors = source.onError === 'skip' ? sourceErrorsDef(stmt.name) : null;
    if (errors !== null && this.catalogState.has(errors.name)) {
      throw new SluiceError(
        'DUPLICATE_OBJECT',
        `relation "${errors.name}" already exists; a source with on_error 'skip' records skipped messages in it`,
        { position: stmt.pos, hint: `rename the source or drop "${errors.name}"` },
      );
    }
    this.journal?.appendDdl({ epoch: this.currentEpoch, sql: stmt.text });
    this.addStoredRelation(def);
    if (errors !== null) this.addStoredRelation(errors);
    return { statement: 'CREATE SOURCE', object: def.name };
  }

  /** True for a relation only a connector writes: a source, or a source's errors relation. */
  writtenByConnector(name: string): boolean {
    const def = this.tables.get(name)?.def;
    return def !== undefined && (def.source !== undefined || def.errorsOf !== undefined);
  }

  /** A sink is catalog metadata over one view; its connector subscribes to the view. */
  private createSink(stmt: Extract<Statement, { kind: 'createSink' }>): StatementResult {
    if (this.catalogState.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE SINK', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const view = this.catalogState.get(stmt.from);
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
    this.checkConnector(stmt, options.brokers);
    const def: SinkDef = { kind: 'sink', name: stmt.name, view: view.name, options, sql: stmt.text };
    this.journal?.appendDdl({ epoch: this.currentEpoch, sql: stmt.text });
    this.catalogState.add(def);
    return { statement: 'CREATE SINK', object: def.name };
  }

  private createView(stmt: Extract<Statement, { kind: 'createView' }>): StatementResult {
    if (this.catalogState.has(stmt.name)) {
      if (stmt.ifNotExists) return { statement: 'CREATE MATERIALIZED VIEW', object: stmt.name };
      throw duplicateObject(stmt.name, stmt.pos);
    }
    const bound = bindSelect(stmt.query, this.catalogState, {
      forView: true,
      maxSelectItems: this.callLimits.maxSelectItems,
      maxFromRelations: this.callLimits.maxFromRelations,
      viewName: stmt.name,
      ...(stmt.columnNames !== undefined ? { columnNames: stmt.columnNames } : {}),
    });
    const def: ViewDef = {
      kind: 'view',
      name: stmt.name,
      columns: bound.columns,
      key: bound.key,
      sql: stmt.text,
      query: stmt.query,
      plan: bound.plan,
      dependsOn: bound.dependsOn,
    };
    const dataflow = lowerToDataflow(def.name, bound.plan, bound.key);
    const runtime = this.views.build(dataflow, this.currentEpoch);
    this.journal?.appendDdl({ epoch: this.currentEpoch, sql: stmt.text });
    this.catalogState.add(def);
    for (const part of runtime.statefulParts()) part.trackChanges(this.stateTracking);
    this.views.add(def.name, runtime);
    return { statement: 'CREATE MATERIALIZED VIEW', object: def.name };
  }

  private drop(stmt: Extract<Statement, { kind: 'drop' }>): StatementResult {
    const kind = objectKindLabels[stmt.objectKind];
    const label = `DROP ${kind.toUpperCase()}`;
    const object = this.catalogState.get(stmt.name);
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
      companion !== null && this.catalogState.has(companion) ? [stmt.name, companion] : [stmt.name];
    const dependents = uniqueByName(names.flatMap((n) => this.catalogState.transitiveDependents(n)));
    const sinks = uniqueByName(names.flatMap((n) => this.catalogState.dependentSinks(n)));
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
    this.journal?.appendDdl({ epoch: this.currentEpoch, sql: stmt.text });
    for (const d of sinks) this.removeObject(d.name, `dropped by CASCADE from "${stmt.name}"`);
    for (const d of [...dependents].reverse())
      this.removeObject(d.name, `dropped by CASCADE from "${stmt.name}"`);
    for (const n of names.slice(1)) this.removeObject(n, `dropped with source "${stmt.name}"`);
    this.removeObject(stmt.name, 'dropped');
    return { statement: label, object: stmt.name };
  }

  private removeObject(name: string, reason: string): void {
    this.catalogState.remove(name);
    this.tables.delete(name);
    this.views.remove(name);
    const subs = this.subscribers.get(name);
    this.subscribers.delete(name);
    for (const s of subs ?? []) s.onClose?.(`materialized view "${name}" was ${reason}`);
  }

  private show(kind: 'tables' | 'views' | 'sources' | 'sinks'): StatementResult {
    const name = { name: 'name', type: 'text', nullable: false } as const;
    const definition = { name: 'definition', type: 'text', nullable: false } as const;
    switch (kind) {
      case 'tables':
        return {
          statement: 'SHOW TABLES',
          columns: [name],
          rows: this.catalogState.tables().map((t) => ({ name: t.name })),
        };
      case 'views':
        return {
          statement: 'SHOW VIEWS',
          columns: [name, definition],
          rows: this.catalogState.views().map((v) => ({ name: v.name, definition: v.sql })),
        };
      case 'sources':
        return {
          statement: 'SHOW SOURCES',
          columns: [name, definition],
          rows: this.catalogState.sources().map((t) => ({ name: t.name, definition: t.sql })),
        };
      case 'sinks':
        return {
          statement: 'SHOW SINKS',
          columns: [name, { name: 'view', type: 'text', nullable: false }, definition],
          rows: this.catalogState.sinks().map((k) => ({ name: k.name, view: k.view, definition: k.sql })),
        };
    }
  }

  private explain(query: SelectStmt, dataflow: boolean): StatementResult {
    const bound = bindSelect(query, this.catalogState, {
      forView: false,
      maxSelectItems: this.callLimits.maxSelectItems,
      maxFromRelations: this.callLimits.maxFromRelations,
    });
    const plan = dataflow
      ? printDataflow(lowerToDataflow('query', bound.plan, bound.key))
      : printLogicalPlan(bound.plan);
    return {
      statement: dataflow ? 'EXPLAIN DATAFLOW' : 'EXPLAIN',
      plan,
      columns: [{ name: 'plan', type: 'text', nullable: false }],
      rows: plan.split('\n').map((line) => ({ plan: line })),
    };
  }

  /** EXPLAIN DATAFLOW of an existing view. */
  explainView(name: string): string {
    return printDataflow(this.viewRuntime(name).plan);
  }

  /** The DataflowPlan an existing view runs (plain JSON: nodes with their inputs, as lowered). */
  /** The arrangements joins of several views share (one per relation and key), with their users and size. */
  sharedArrangements(): SharedArrangementInfo[] {
    return this.views.shared.list();
  }

  viewPlan(name: string): DataflowPlan {
    return this.viewRuntime(name).plan;
  }

  private tableForWrite(name: string, pos: { line: number; column: number }): TableStore {
    const table = this.tables.get(name);
    if (table !== undefined) {
      if (table.def.source !== undefined) throw sourceWriteError(table.def).at(pos);
      return table;
    }
    const sink = this.catalogState.get(name);
    if (sink?.kind === 'sink') {
      throw new SluiceError('WRONG_OBJECT_KIND', `cannot change sink "${name}"`, {
        position: pos,
        hint: `a sink writes materialized view "${sink.view}" to Kafka; it holds no rows`,
      });
    }
    if (this.views.has(name)) {
      throw new SluiceError('WRONG_OBJECT_KIND', `cannot change materialized view "${name}"`, {
        position: pos,
        hint: 'write to the tables the view reads',
      });
    }
    throw new SluiceError('UNKNOWN_TABLE', `relation "${name}" does not exist`, { position: pos });
  }

  private selectStatement(query: SelectStmt): StatementResult {
    const job = this.prepareSelect(query);
    job.work(Infinity);
    return job.result();
  }

  /**
   * A plain SELECT bound and its inputs captured at the current epoch, to be evaluated by the caller
   * in slices (`job.work(deadline)`) while later epochs apply; bounded by `selectLimits`.
   */
  prepareSelect(query: SelectStmt): SelectJob {
    const bound = bindSelect(query, this.catalogState, {
      forView: false,
      maxSelectItems: this.callLimits.maxSelectItems,
      maxFromRelations: this.callLimits.maxFromRelations,
    });
    for (const source of bound.dependsOn) this.assertNoErrors(source);
    const plan = lowerToDataflow('query', bound.plan, null);
    const inputs = new Map<string, RowCapture>();
    for (const node of plan.nodes) {
      if (node.kind === 'input') inputs.set(node.source, this.captureOf(node.source));
      else if (node.kind === 'values') inputs.set('$values', new CapturedArray([[]], null, true));
    }
    return new SelectJob(bound, plan, inputs, this.currentEpoch, this.selectLimits);
  }

  private captureOf(name: string): RowCapture {
    const table = this.tables.get(name);
    if (table !== undefined) return table.capture();
    const view = this.views.get(name);
    if (view !== undefined) return view.output.capture();
    throw new SluiceError('UNKNOWN_TABLE', `relation "${name}" does not exist`);
  }

  // ---- batches ------------------------------------------------------------------------------

  /**
   * Applies one batch to a table as one epoch. The request is validated whole; on any invalid row
   * nothing is applied. An empty request creates no epoch.
   */
  applyChanges(
    table: string,
    changes: TableChanges,
    options: ApplyOptions = {},
  ): { accepted: number; epoch: number } {
    const store = this.tables.get(table);
    if (store === undefined) {
      if (this.views.has(table))
        throw new SluiceError('WRONG_OBJECT_KIND', `cannot write to materialized view "${table}"`);
      if (this.catalogState.get(table)?.kind === 'sink')
        throw new SluiceError('WRONG_OBJECT_KIND', `cannot write to sink "${table}"`);
      throw new SluiceError('UNKNOWN_TABLE', `table "${table}" does not exist`);
    }
    const fromSource = options.fromSource === true;
    if (store.def.source !== undefined && !fromSource) throw sourceWriteError(store.def);
    if (store.def.errorsOf !== undefined && !fromSource) {
      throw new SluiceError(
        'WRONG_OBJECT_KIND',
        `"${table}" is the errors relation of source "${store.def.errorsOf}"; only its connector writes it`,
      );
    }
    if (store.def.source === undefined && store.def.errorsOf === undefined && fromSource) {
      throw new SluiceError('WRONG_OBJECT_KIND', `"${table}" is a table, not a source`);
    }
    if (fromSource && options.positions === undefined) {
      throw new SluiceError('INTERNAL_ERROR', `a batch for source "${table}" must carry its positions`);
    }
    const prepared = store.prepare(
      fromSource && options.ignoreMissingDeletes === true ? withoutMissingDeletes(store, changes) : changes,
    );
    if (prepared.deletes.length === 0 && prepared.inserts.length === 0) {
      return { accepted: prepared.accepted, epoch: this.currentEpoch };
    }
    const epoch = this.currentEpoch + 1;
    let positions: SourcePositions;
    if (fromSource) {
      // The connector's positions are the epoch's, live and in replay alike; the journal records
      // them with the batch so that replay passes them back unchanged.
      positions = options.positions as SourcePositions;
      this.journal?.appendBatch({
        epoch,
        table,
        columns: store.columnNames,
        inserts: prepared.inserts,
        deletes: prepared.deletes,
        positions,
      });
    } else if (options.positions !== undefined) positions = options.positions;
    else if (this.journal !== null) {
      positions = this.journal.appendBatch({
        epoch,
        table,
        columns: store.columnNames,
        inserts: prepared.inserts,
        deletes: prepared.deletes,
      });
    } else positions = { [table]: { epoch } };
    this.runEpoch(store, prepared, epoch, positions);
    return { accepted: prepared.accepted, epoch };
  }

  private runEpoch(
    store: TableStore,
    prepared: PreparedBatch,
    epoch: number,
    positions: SourcePositions,
  ): void {
    this.currentEpoch = epoch;
    this.lastPositions = positions;
    const deltas = new Map<string, ZBatch>();
    deltas.set(store.def.name, store.apply(prepared));
    const stepped = this.views.runEpoch(deltas, epoch);
    // Subscribers hear about the epoch only once every view has it.
    for (const cs of stepped) {
      const errors = cs.runtime.takeErrorChanges();
      const subs = this.subscribers.get(cs.name);
      if (subs === undefined || subs.size === 0) continue;
      const columns = (this.catalogState.get(cs.name) as ViewDef).columns;
      const changes: Change[] = cs.runtime.output
        .lastChanges()
        .map((c) =>
          c.n === 1
            ? { op: c.op, row: toRow(c.row, columns) }
            : { op: c.op, row: toRow(c.row, columns), n: c.n },
        );
      if (changes.length === 0 && errors.length === 0) continue;
      const set: ViewChangeSet = {
        view: cs.name,
        epoch,
        positions,
        changes,
        ...(errors.length > 0 ? { errors } : {}),
      };
      for (const s of [...subs]) s.listener(set);
    }
  }

  // ---- checkpoints --------------------------------------------------------------------------

  /** Starts remembering which state entries change, so checkpoints can be incremental. */
  setStateTracking(on: boolean): void {
    this.stateTracking = on;
    for (const t of this.tables.values()) t.trackChanges(on);
    for (const v of this.views.runtimes()) for (const part of v.statefulParts()) part.trackChanges(on);
    this.views.shared.trackChanges(on);
  }

  private tableFingerprint(def: TableDef): string {
    const shape = def.columns.map((c) => `${c.name}:${typeName(c.type)}:${c.nullable}`).join(',');
    // For a source, what its rows mean: the topic they come from and how messages decode.
    const source =
      def.source !== undefined
        ? `|source=${def.source.connector}:${def.source.topic}:${def.source.format}`
        : '';
    // UNIQUE constraints only when there are some, so older tables keep their fingerprints.
    const unique =
      def.unique !== undefined ? `|unique=${def.unique.map((u) => u.columns.join(',')).join(';')}` : '';
    return createHash('sha256')
      .update(`${shape}|pk=${def.primaryKey?.join(',') ?? ''}${source}${unique}`)
      .digest('hex')
      .slice(0, 16);
  }

  /**
   * The state that changed since the last call (all of it with `full`), at the current epoch: one
   * entry list per state id. The caller stores it atomically with the epoch and positions.
   */
  takeCheckpoint(full = false): EngineCheckpoint {
    const objects: ObjectCheckpoint[] = [];
    for (const def of this.catalogState.storedRelations()) {
      const store = this.tables.get(def.name) as TableStore;
      objects.push({
        name: def.name,
        kind: 'table',
        fingerprint: this.tableFingerprint(def),
        parts: [
          { stateId: store.stateId, delta: store.takeStateDelta(full) },
          ...this.sharedParts(def.name, full),
        ],
      });
    }
    for (const def of this.catalogState.views()) {
      const runtime = this.views.get(def.name) as ViewRuntime;
      objects.push({
        name: def.name,
        kind: 'view',
        fingerprint: runtime.plan.fingerprint,
        parts: [
          ...runtime.statefulParts().map((p) => ({ stateId: p.stateId, delta: p.takeStateDelta(full) })),
          ...this.sharedParts(def.name, full),
        ],
      });
    }
    return { epoch: this.currentEpoch, positions: this.lastPositions, objects };
  }

  private sharedParts(relation: string, full: boolean): { stateId: string; delta: StateDelta }[] {
    return this.views.shared
      .parts(relation)
      .map((p) => ({ stateId: p.stateId, delta: p.takeStateDelta(full) }));
  }

  /**
   * Loads a checkpoint into an engine whose catalog was rebuilt (by replaying DDL) to the
   * checkpoint's. A view whose stored fingerprint differs from its plan (its definition or the
   * lowering changed) is rebuilt from its inputs instead of restored; returns those views.
   */
  loadCheckpoint(checkpoint: StoredCheckpoint): { rebuilt: string[] } {
    for (const def of this.catalogState.storedRelations()) {
      const stored = checkpoint.objects.get(def.name);
      const store = this.tables.get(def.name) as TableStore;
      if (stored === undefined || stored.fingerprint !== this.tableFingerprint(def)) {
        throw new SluiceError('STATE_ERROR', `checkpoint has no compatible state for table "${def.name}"`, {
          hint: 'the checkpoint does not belong to this catalog; recover from the log instead',
        });
      }
      store.loadState(stored.parts.get(store.stateId) ?? []);
    }
    const rebuilt: string[] = [];
    // Shared arrangements are stored with their relations; one the checkpoint lacks is refilled from
    // its relation's loaded rows (by a view rebuilt below that needs it first, else at the end).
    this.views.shared.load((relation, stateId) => checkpoint.objects.get(relation)?.parts.get(stateId));
    for (const def of this.catalogState.views()) {
      const runtime = this.views.get(def.name) as ViewRuntime;
      const stored = checkpoint.objects.get(def.name);
      const parts = runtime.statefulParts();
      if (
        stored !== undefined &&
        stored.fingerprint === runtime.plan.fingerprint &&
        parts.every((p) => stored.parts.has(p.stateId))
      ) {
        for (const p of parts) p.loadState(stored.parts.get(p.stateId) ?? []);
        continue;
      }
      const fresh = this.views.build(runtime.plan, checkpoint.epoch);
      for (const part of fresh.statefulParts()) part.trackChanges(this.stateTracking);
      this.views.replace(def.name, fresh);
      rebuilt.push(def.name);
    }
    this.views.shared.refillStale(checkpoint.epoch);
    this.currentEpoch = checkpoint.epoch;
    this.lastPositions = checkpoint.positions;
    return { rebuilt };
  }

  // ---- reads --------------------------------------------------------------------------------

  private viewRuntime(name: string): ViewRuntime {
    const v = this.views.get(name);
    if (v === undefined) {
      const other = this.catalogState.get(name);
      if (other !== undefined)
        throw new SluiceError(
          'WRONG_OBJECT_KIND',
          `"${name}" is a ${kindLabel(other)}, not a materialized view`,
        );
      throw new SluiceError('UNKNOWN_VIEW', `materialized view "${name}" does not exist`);
    }
    return v;
  }

  private assertNoErrors(name: string): void {
    const def = this.catalogState.get(name);
    if (def === undefined || def.kind !== 'view') return;
    for (const upstream of def.dependsOn) this.assertNoErrors(upstream);
    const runtime = this.views.get(name) as ViewRuntime;
    const errors = runtime.currentErrors();
    const first = errors[0];
    if (first !== undefined) {
      throw new SluiceError(
        'VIEW_ERROR',
        `materialized view "${name}" holds ${errors.length} row error${errors.length === 1 ? '' : 's'}; first: ${first.message}`,
        {
          detail: `caused by row ${JSON.stringify(first.row, jsonReplacer)} (epoch ${first.epoch})`,
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
    const def = this.catalogState.get(name) as ViewDef;
    const key = def.key === null || def.key.length === 0 ? null : def.key;
    return {
      epoch: this.currentEpoch,
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
    const def = this.catalogState.get(name) as ViewDef;
    const rows: Row[] = [];
    for (const [row, n] of runtime.output.entries()) {
      const r = toRow(row, def.columns);
      for (let i = 0; i < n; i++) rows.push(r);
    }
    return {
      epoch: this.currentEpoch,
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
    return { epoch: this.currentEpoch, total: runtime.errorCount(), errors: runtime.errorsRange(from, to) };
  }

  /**
   * A table's (or source's) rows for a paged read, like viewReader: ordered by the primary key, else
   * all columns, from an ordered index built on first use until `deadline` per call.
   */
  tableReader(name: string, deadline: number): ViewReader {
    const store = this.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    const def = store.def;
    return {
      epoch: this.currentEpoch,
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
    const store = this.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    return store.rowsRange(from, to).map((row) => store.toRow(row));
  }

  /** The whole table, copied (library use and tests; the server reads bounded ranges). */
  tableRows(name: string): Row[] {
    const store = this.tables.get(name);
    if (store === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    const out: Row[] = [];
    for (const [row, n] of store.entries()) for (let i = 0; i < n; i++) out.push(store.toRow(row));
    return out;
  }

  /** Listens to a view's per-epoch changes; `onClose` is told if the view is dropped. */
  subscribe(view: string, listener: ViewListener, onClose?: (reason: string) => void): () => void {
    this.viewRuntime(view);
    let subs = this.subscribers.get(view);
    if (subs === undefined) {
      subs = new Set();
      this.subscribers.set(view, subs);
    }
    const s: Subscription = { listener, onClose };
    subs.add(s);
    return () => {
      this.subscribers.get(view)?.delete(s);
    };
  }

  private tableInfo(t: TableDef): TableInfo {
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
      sql: t.sql,
      rowCount: (this.tables.get(t.name) as TableStore).rowCount(),
      dependents: this.catalogState.dependents(t.name).map((d) => d.name),
    };
  }

  /**
   * A source's row validation, for its connector to judge each record on its own (a record that
   * fails is a poison record, not a rejected batch): the reason a row does not fit, or null.
   */
  sourceRowCheck(source: string): (row: Record<string, unknown>) => string | null {
    const store = this.tables.get(source);
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

  /** Tables, sources, views and sinks, in creation order within each kind. */
  catalog(): { tables: TableInfo[]; views: ViewInfo[]; sources: SourceInfo[]; sinks: SinkInfo[] } {
    const c = this.catalogState;
    return {
      tables: c.tables().map((t) => this.tableInfo(t)),
      sources: c.sources().map((t) => ({ ...this.tableInfo(t), options: t.source as SourceInfo['options'] })),
      sinks: c.sinks().map((k) => ({ name: k.name, view: k.view, sql: k.sql, options: k.options })),
      views: c.views().map((v) => this.viewInfoOf(v)),
    };
  }

  /** One view's catalog entry; undefined when there is no such view. */
  viewInfo(name: string): ViewInfo | undefined {
    const def = this.catalogState.get(name);
    return def?.kind === 'view' ? this.viewInfoOf(def) : undefined;
  }

  private viewInfoOf(v: ViewDef): ViewInfo {
    const runtime = this.views.get(v.name) as ViewRuntime;
    return {
      name: v.name,
      columns: columnInfos(v.columns),
      key: v.key === null ? null : v.key.map((k) => (v.columns[k] as ColumnMeta).name),
      sql: v.sql,
      rowCount: runtime.output.size(),
      stateBytes: runtime.stateBytes(),
      dependsOn: v.dependsOn,
      dependents: this.catalogState.dependents(v.name).map((d) => d.name),
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
  } {
    const c = this.catalogState;
    const pick = (o: { name: string; sql: string }) => ({ name: o.name, sql: o.sql });
    return { views: c.views().map(pick), sources: c.sources().map(pick), sinks: c.sinks().map(pick) };
  }
}

const objectKindLabels = {
  table: 'table',
  view: 'materialized view',
  source: 'source',
  sink: 'sink',
} as const;

/** CREATE of an object whose name starts with `prefix`: RESERVED_NAME. */
function refuseReserved(stmt: Statement, prefix: string): void {
  if (
    stmt.kind !== 'createTable' &&
    stmt.kind !== 'createView' &&
    stmt.kind !== 'createSource' &&
    stmt.kind !== 'createSink'
  )
    return;
  if (!stmt.name.startsWith(prefix)) return;
  throw new SluiceError('RESERVED_NAME', `names starting with "${prefix}" are reserved`, {
    position: stmt.pos,
    detail: `"${stmt.name}" would look like one of the server's own views`,
    hint: 'choose another name',
  });
}

function duplicateObject(name: string, position: { line: number; column: number }): SluiceError {
  return new SluiceError('DUPLICATE_OBJECT', `relation "${name}" already exists`, { position });
}

/** `changes` without the deletes of keys `store` does not hold (a keyless store keeps them all). */
function withoutMissingDeletes(store: TableStore, changes: TableChanges): TableChanges {
  const deletes = changes.delete;
  if (deletes === undefined || store.def.primaryKey === null) return changes;
  const kept = deletes.filter((row, i) => store.hasKeyOf(store.normalizeRow(row, 'delete', i)));
  return kept.length === deletes.length ? changes : { ...changes, delete: kept };
}

function uniqueByName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(i.name) && seen.add(i.name) !== undefined);
}

/** A write to a source that does not come from its connector. */
function sourceWriteError(def: TableDef): SluiceError {
  return new SluiceError(
    'WRONG_OBJECT_KIND',
    `"${def.name}" is a source; its rows come from Kafka topic "${def.source?.topic ?? ''}"`,
    {
      hint: "only the source's connector writes its rows; to write rows yourself, create a table",
    },
  );
}

function toRow(values: readonly Value[], columns: readonly ColumnMeta[]): Row {
  const out: Row = {};
  for (let i = 0; i < columns.length; i++) out[(columns[i] as ColumnMeta).name] = values[i] as Value;
  return out;
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** PostgreSQL's assignment cast: a value of `from` stored into a column. */
