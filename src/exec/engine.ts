// The engine: catalog, table stores and running views, driven one epoch at a time (engine-epochs.ts:
// the state and the epoch path, which this class extends with the SQL statements, EXPLAIN and
// ad-hoc SELECT, watermark reads, checkpoints and the reads of views and tables). Everything here is
// synchronous.
import { REPLAY_SQL_LIMITS, resolveSqlLimits, type SqlLimits } from '../common/limits.ts';
import { bindingAsJournaled } from '../planner/journaled-binding.ts';
import { asReplayedJsonbInput } from '../common/json/jsonb.ts';
import { MAX_BACKFILL_ROWS } from './backfill-bound.ts';
import type { SelectStmt } from '../parser/ast.ts';
import type { DataflowPlan } from '../ivm/dataflow-plan.ts';
import { printDataflow } from '../ivm/dataflow-print.ts';
import { partitionNotes } from './workers/partition-notes.ts';
import type { Row } from '../common/types.ts';
import type {
  ScriptResult,
  StatementResult,
  ViewListener,
  ViewReader,
  ViewRowError,
  ViewSnapshot,
} from './api.ts';
import type { ClosingView } from './watermark-statements.ts';
import { EngineWatermarks } from './engine-watermarks.ts';
import { tableForWrite } from './engine-writes.ts';
import { formatMicros } from '../common/time/instant-micros.ts';
import type { SharedArrangementInfo } from './shared-arrangements.ts';

export { sourceErrorsDef } from './table-definition.ts';
import type { ResultLimits } from './result-size.ts';
import type { SelectJob } from './select-job.ts';
import { DmlStatements } from './dml.ts';
import { DdlStatements } from './ddl.ts';
import { EngineReads } from './engine-reads.ts';
import { checkSingleSelect, runScript, type ScriptHost } from './engine-scripts.ts';
import { prepareSelect } from './engine-queries.ts';
import { executeStatement, type StatementHost } from './engine-statements.ts';
import { buildDeferredRows, loadCheckpoint, takeCheckpoint } from './engine-checkpoints.ts';
import { EngineEpochs } from './engine-epochs.ts';
import type { NodeStats } from './view-runtime.ts';

export type { EngineJournal } from './api.ts';

export type {
  ApplyOptions,
  ConnectorCheck,
  EngineCheckpoint,
  EngineOptions,
  ExecuteOptions,
  ObjectCheckpoint,
  ScriptRun,
  StoredCheckpoint,
  TableInfo,
  ViewInfo,
} from './engine-types.ts';
import type {
  ConnectorCheck,
  EngineCheckpoint,
  EngineOptions,
  ExecuteOptions,
  ScriptRun,
  StoredCheckpoint,
  ViewInfo,
} from './engine-types.ts';
import type { RowTyping } from '../common/row-typing.ts';

export class Engine extends EngineEpochs {
  /** INSERT/UPDATE/DELETE; it counts the table rows UPDATE and DELETE examine (ScriptRun counts its own). */
  private readonly dml = new DmlStatements({
    tableForWrite: (name, pos) => tableForWrite(this.state, name, pos),
    applyChanges: (table, changes, options) => this.applyChanges(table, changes, options),
    currentEpoch: () => this.currentEpoch,
    resultLimits: () => this.selectLimits,
  });
  private readonly reads = new EngineReads(this.state, () => this.currentEpoch);
  private readonly ddl = new DdlStatements(this.state, {
    journal: () => this.journal,
    epoch: () => this.currentEpoch,
    clock: () => this.epochClock.current,
    // A view that reads the clock is built at the clock's current time: a tick epoch first.
    beforeTemporalView: () => this.tick({ force: true }),
    stateTracking: () => this.stateTracking,
    limits: () => this.callLimits,
    // A journaled CREATE was accepted when it was written: its replay is not judged again.
    maxBackfillRows: () => (this.callLimits === REPLAY_SQL_LIMITS ? Infinity : this.maxBackfillRows),
    connectorCheck: () => this.connectorCheck,
    removed: (name, reason) => this.deliveries.close(name, reason),
  });
  /** Watermark reads: tables', a view's inputs', window-close progress. */
  private readonly watermarks = new EngineWatermarks(this.state);
  private connectorCheck: ConnectorCheck | null = null;
  private stateTracking = false;
  /** EngineOptions.maxBackfillRows. */
  private readonly maxBackfillRows: number;
  /** What one script may ask of the SQL front end. */
  readonly limits: SqlLimits;
  /** The limits of the script being run (the engine's, or the call's own). */
  private callLimits: SqlLimits;
  /** What the statements reach of the engine (engine-statements.ts). */
  private readonly statementHost: StatementHost = {
    catalog: this.catalogState,
    tables: this.tables,
    ddl: this.ddl,
    dml: this.dml,
    clock: () => this.epochClock,
    journal: () => this.journal,
    currentEpoch: () => this.currentEpoch,
    callLimits: () => this.callLimits,
    workers: () => this.views.workers,
    closingViews: () => this.closingViews(),
    tick: () => this.tick(),
    prepareSelect: (query) => this.prepareSelect(query),
  };
  /** What a script (engine-scripts.ts) runs its statements with. */
  private readonly scriptHost: ScriptHost = {
    setCallLimits: (limits) => {
      this.callLimits = limits ?? this.limits;
    },
    prepareSelect: (query) => this.prepareSelect(query),
    executeStatement: (stmt) =>
      this.callLimits === REPLAY_SQL_LIMITS
        ? asReplayedJsonbInput(() => executeStatement(this.statementHost, stmt))
        : executeStatement(this.statementHost, stmt),
    checkInsertTarget: (stmt) => void this.dml.insertTarget(stmt),
    insertSelected: (stmt, selected) => this.dml.insert(stmt, selected),
    statementQuery: (stmt) => this.dml.statementQuery(stmt),
    writeQueried: (stmt, queried) =>
      stmt.kind === 'update' ? this.dml.update(stmt, queried) : this.dml.delete(stmt, queried),
    dmlRowsExamined: () => this.dml.rowsExamined,
  };

  constructor(options: EngineOptions = {}) {
    super(options);
    this.limits = resolveSqlLimits(options.limits);
    this.maxBackfillRows = options.maxBackfillRows ?? MAX_BACKFILL_ROWS;
    this.callLimits = this.limits;
  }

  /** Bounds of an ad-hoc SELECT's result (the server sets them; unlimited by default). */
  selectLimits: ResultLimits = { maxRows: Infinity, maxBytes: Infinity };

  /** Most rows one UPDATE or DELETE may change (the server sets it; unlimited by default). */
  get maxDmlRows(): number {
    return this.dml.maxRows;
  }
  set maxDmlRows(rows: number) {
    this.dml.maxRows = rows;
  }

  setConnectorCheck(check: ConnectorCheck | null): void {
    this.connectorCheck = check;
  }

  // ---- statements -------------------------------------------------------------------------

  /** Runs `;`-separated statements; throws at the first failing one (earlier ones took effect). */
  execute(sql: string, options: ExecuteOptions = {}): StatementResult[] {
    const r = this.executeScript(sql, options);
    if (r.error !== undefined) throw r.error;
    return [...r.results];
  }

  executeScript(sql: string, options: ExecuteOptions = {}): ScriptResult {
    const run = (): ScriptResult => this.runScript(sql, options).step(Infinity) as ScriptResult;
    // A journaled statement (replayed under REPLAY_SQL_LIMITS) binds as the release that accepted it.
    return options.limits === REPLAY_SQL_LIMITS ? bindingAsJournaled(run, options.rules) : run();
  }

  /**
   * Checks that `text` is one SELECT statement and nothing else (a trailing `;` aside), as a caller
   * must before putting it inside a statement of its own; throws the parse error, or
   * INVALID_REQUEST naming what else the text holds. Binding is left to the statement it goes into.
   */
  checkSingleSelect(text: string): void {
    checkSingleSelect(text, this.limits);
  }

  /**
   * A script to run in steps, so a long one need not hold the caller's thread: parsed whole first
   * (a script that does not parse runs nothing), then statement by statement, a SELECT in slices of
   * its input. Between steps the engine may apply other batches and statements; each statement sees
   * the catalog and data as they are when it runs (a SELECT: when it starts).
   */
  runScript(sql: string, options: ExecuteOptions = {}): ScriptRun {
    return runScript(this.scriptHost, sql, options, this.limits);
  }

  /** True for a relation only a connector writes: a source, or a source's errors relation. */
  writtenByConnector(name: string): boolean {
    const def = this.tables.get(name)?.def;
    return def !== undefined && (def.source !== undefined || def.errorsOf !== undefined);
  }

  /** EXPLAIN DATAFLOW of an existing view. */
  explainView(name: string): string {
    const plan = this.reads.viewRuntime(name).plan;
    return [printDataflow(plan), ...partitionNotes(plan, this.views.workers)].join('\n');
  }

  /** Approximate heap bytes the tables' rows hold (TableStore.stateBytes), for tenant quotas. */
  tableStateBytes(): number {
    let bytes = 0;
    for (const t of this.tables.values()) bytes += t.stateBytes();
    return bytes;
  }

  /** EMIT ON WINDOW CLOSE views: how far their windows closed and the changes to closed ones not applied. */
  closingViews(): ClosingView[] {
    return this.watermarks.closingViews();
  }

  /** Per table or source with a watermark, the inserted rows it dropped as late (for metrics). */
  lateRows(): { table: string; lateRows: number }[] {
    return this.watermarks.lateRows();
  }

  /** The arrangements joins of several views share (one per relation and key), with their users and size. */
  sharedArrangements(): SharedArrangementInfo[] {
    return this.views.shared.list();
  }

  /** The DataflowPlan an existing view runs (plain JSON: nodes with their inputs, as lowered). */
  viewPlan(name: string): DataflowPlan {
    return this.reads.viewRuntime(name).plan;
  }

  /**
   * A plain SELECT bound and its inputs captured at the current epoch, to be evaluated by the caller
   * in slices (`job.work(deadline)`) while later epochs apply; bounded by `selectLimits`.
   */
  prepareSelect(query: SelectStmt): SelectJob {
    return prepareSelect(
      this.state,
      this.reads,
      query,
      this.callLimits,
      this.currentEpoch,
      this.selectLimits,
    );
  }

  /**
   * The current watermark of every table or source with a WATERMARK, by name, as reads show it
   * (what the server records per epoch, so a past epoch's reads carry that epoch's watermarks).
   */
  tableWatermarks(): Record<string, string | null> {
    return this.watermarks.tableWatermarks();
  }

  /**
   * The current watermark of each table or source with a WATERMARK that view `name` reads (directly
   * or through views); null when it reads none. What its changelog messages and reads carry.
   */
  viewWatermarks(name: string): Record<string, string | null> | null {
    return this.watermarks.viewWatermarks(name);
  }

  // ---- checkpoints --------------------------------------------------------------------------

  /** Starts remembering which state entries change, so checkpoints can be incremental. */
  setStateTracking(on: boolean): void {
    this.stateTracking = on;
    for (const t of this.tables.values()) t.trackChanges(on);
    for (const v of this.views.runtimes()) for (const part of v.statefulParts()) part.trackChanges(on);
    this.views.shared.trackChanges(on);
  }

  /**
   * The state that changed since the last call (all of it with `full`), at the current epoch: one
   * entry list per state id. The caller stores it atomically with the epoch and positions.
   */
  takeCheckpoint(full = false): EngineCheckpoint {
    return takeCheckpoint(
      this.state,
      this.currentEpoch,
      this.epochPositions(),
      this.epochClock.current,
      full,
    );
  }

  /**
   * Loads a checkpoint into an engine whose catalog was rebuilt (by replaying DDL) to the
   * checkpoint's; returns the views rebuilt from their inputs instead of restored.
   */
  loadCheckpoint(checkpoint: StoredCheckpoint): { rebuilt: string[] } {
    // An older checkpoint has no clock: its views hold no temporal filter, and the next epoch reads the source.
    const clock = checkpoint.clock ?? 0;
    const result = loadCheckpoint(this.state, checkpoint, this.stateTracking, clock);
    this.currentEpoch = checkpoint.epoch;
    this.lastPositions = checkpoint.positions;
    this.epochClock.current = clock;
    return result;
  }

  /**
   * Builds up to `maxRows` of the table rows a checkpoint load left as columns (they are built on
   * first use otherwise); true when none is left. The server calls it in slices while idle.
   */
  buildDeferredRows(maxRows: number): boolean {
    return buildDeferredRows(this.state.tables, maxRows);
  }

  // ---- reads (src/exec/engine-reads.ts) ----------------------------------------------------

  viewReader(name: string, deadline: number): ViewReader {
    const reader = this.reads.viewReader(name, deadline);
    const watermarks = this.viewWatermarks(name);
    return {
      ...reader,
      clock: formatMicros(this.epochClock.current),
      ...(watermarks !== null ? { watermarks } : {}),
    };
  }
  viewSnapshot(name: string): ViewSnapshot {
    return this.reads.viewSnapshot(name);
  }
  viewErrors(name: string): ViewRowError[] {
    return this.reads.viewErrors(name);
  }
  viewErrorsRange(name: string, from: number, to: number): ReturnType<EngineReads['viewErrorsRange']> {
    return this.reads.viewErrorsRange(name, from, to);
  }
  tableReader(name: string, deadline: number): ViewReader {
    return this.reads.tableReader(name, deadline);
  }
  viewNodeStats(name: string): NodeStats[] {
    return this.reads.viewNodeStats(name);
  }
  tableRowsRange(name: string, from: number, to: number): Row[] {
    return this.reads.tableRowsRange(name, from, to);
  }
  tableRows(name: string): Row[] {
    return this.reads.tableRows(name);
  }
  sourceRowCheck(source: string): (row: Record<string, unknown>) => string | null {
    return this.reads.sourceRowCheck(source);
  }
  sourceKeyIdentity(source: string): (key: Record<string, unknown>) => unknown {
    return this.reads.sourceKeyIdentity(source);
  }
  sourceEventTime(source: string): ((row: Record<string, unknown>) => number | null) | null {
    return this.reads.sourceEventTime(source);
  }
  sourceRowTyping(source: string): RowTyping | null {
    return this.reads.sourceRowTyping(source);
  }
  catalog(): ReturnType<EngineReads['catalog']> {
    return this.reads.catalog();
  }

  /** How many SQL functions the catalog holds (they count against a tenant's object quota). */
  functionCount(): number {
    return this.catalogState.functions().length;
  }
  viewInfo(name: string): ViewInfo | undefined {
    return this.reads.viewInfo(name);
  }
  catalogDefinitions(): ReturnType<EngineReads['catalogDefinitions']> {
    return this.reads.catalogDefinitions();
  }
  /** Listens to a view's per-epoch changes; `onClose` is told if the view is dropped. */
  subscribe(view: string, listener: ViewListener, onClose?: (reason: string) => void): () => void {
    this.reads.viewRuntime(view);
    return this.deliveries.subscribe(view, listener, onClose);
  }
}
