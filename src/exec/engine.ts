// The engine: catalog, table stores and running views, driven one epoch at a time. Each batch —
// from the ingest API or an INSERT/UPDATE/DELETE — is validated whole, journaled, applied to its
// table, then pushed through every dependent view in creation order (views over views see the same
// epoch), and only then are subscribers told. Everything here is synchronous.
import { SluiceError } from '../common/errors.ts';
import { resolveSqlLimits, type SqlLimits } from '../common/limits.ts';
import type { SelectStmt } from '../parser/ast.ts';
import { printDataflow, type DataflowPlan } from '../ivm/dataflow-plan.ts';
import { partitionNotes } from './workers/partition-notes.ts';
import { EpochDeltas } from './epoch-deltas.ts';
import { Catalog } from '../planner/catalog.ts';
import type { Row } from '../common/types.ts';
import type {
  EngineJournal,
  ScriptResult,
  SourcePositions,
  StatementResult,
  TableChanges,
  ViewListener,
  ViewReader,
  ViewRowError,
  ViewSnapshot,
} from './api.ts';
import type { PreparedBatch } from './table-store.ts';
import { TableStore, insertCount } from './table-store.ts';
import { TableStores } from './table-stores.ts';
import type { NodeStats } from './view-runtime.ts';
import { ViewGraph, type GraphView } from './view-graph.ts';
import { ManualClock, REAL_CLOCK } from './logical-clock.ts';
import { EpochClock, type TickOptions } from './engine-clock.ts';
import type { ClosingView } from './watermark-statements.ts';
import { EngineWatermarks } from './engine-watermarks.ts';
import { batchStore, refuseAppendOnly, tableForWrite, withoutMissingDeletes } from './engine-writes.ts';
import { formatMicros } from '../common/time/instant-micros.ts';
import type { SharedArrangementInfo } from './shared-arrangements.ts';

export { sourceErrorsDef } from './table-definition.ts';
import type { ResultLimits } from './result-size.ts';
import type { SelectJob } from './select-job.ts';
import { DmlStatements } from './dml.ts';
import { DdlStatements, type SchemaState } from './ddl.ts';
import { EngineReads } from './engine-reads.ts';
import { EpochDeliveries } from './engine-deliveries.ts';
import { checkSingleSelect, runScript, type ScriptHost } from './engine-scripts.ts';
import { prepareSelect } from './engine-queries.ts';
import { executeStatement, type StatementHost } from './engine-statements.ts';
import {
  buildDeferredRows,
  loadCheckpoint,
  takeCheckpoint,
  type CheckpointedState,
} from './engine-checkpoints.ts';

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
  ApplyOptions,
  ConnectorCheck,
  EngineCheckpoint,
  EngineOptions,
  ExecuteOptions,
  ScriptRun,
  StoredCheckpoint,
  ViewInfo,
} from './engine-types.ts';
import type { RowTyping } from '../common/row-typing.ts';

export class Engine {
  private readonly catalogState = new Catalog();
  /** INSERT/UPDATE/DELETE; it counts the table rows UPDATE and DELETE examine (ScriptRun counts its own). */
  private readonly dml = new DmlStatements({
    tableForWrite: (name, pos) => tableForWrite(this.state, name, pos),
    applyChanges: (table, changes) => this.applyChanges(table, changes),
    currentEpoch: () => this.currentEpoch,
  });
  private readonly tables = new TableStores(() => this.clockReadersChanged());
  /** The running epoch's deltas by relation (empty between epochs). */
  private readonly deltas = new EpochDeltas();
  /** Every view's dataflow, in one graph fed by the tables. */
  private readonly views = new ViewGraph(
    (name) => this.tables.get(name)?.contents() ?? null,
    (name) => this.tables.get(name)?.watermark?.value ?? null,
    () => this.clockReadersChanged(),
    (name) => this.tables.get(name)?.keyedSlots() ?? null,
  );
  /** What checkpoints and reads see of the engine. */
  private readonly state: CheckpointedState & SchemaState = {
    catalog: this.catalogState,
    tables: this.tables,
    views: this.views,
  };
  private readonly reads = new EngineReads(this.state, () => this.currentEpoch);
  private readonly ddl = new DdlStatements(this.state, {
    journal: () => this.journal,
    epoch: () => this.currentEpoch,
    clock: () => this.epochClock.current,
    // A view that reads the clock is built at the clock's current time: a tick epoch first.
    beforeTemporalView: () => this.tick({ force: true }),
    stateTracking: () => this.stateTracking,
    limits: () => this.callLimits,
    connectorCheck: () => this.connectorCheck,
    removed: (name, reason) => this.deliveries.close(name, reason),
  });
  /** Subscribers and epoch listeners, and the queue that tells them of each epoch in order. */
  private readonly deliveries = new EpochDeliveries(this.catalogState, () => this.epochPositions());
  /** Watermark reads: tables', a view's inputs', window-close progress. */
  private readonly watermarks = new EngineWatermarks(this.state);
  private journal: EngineJournal | null = null;
  /** Whether an epoch not from a source reads the clock (epochReadsClock; null: recompute). */
  private clockReaders: boolean | null = null;
  private clockReaderChecks = 0;
  private connectorCheck: ConnectorCheck | null = null;
  private stateTracking = false;
  private currentEpoch = 0;
  /**
   * The latest epoch's positions; null when they are a plain table write's, `{ [table]: { epoch } }`,
   * which is built only if someone reads them (most single-row epochs have no reader).
   */
  private lastPositions: SourcePositions | null = {};
  /** The table the latest epoch wrote (what null `lastPositions` stand for). */
  private lastTable = '';
  /** Each epoch's logical clock, and when a clock tick is due (engine-clock.ts). */
  private readonly epochClock: EpochClock;
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
    executeStatement: (stmt) => executeStatement(this.statementHost, stmt),
    dmlRowsExamined: () => this.dml.rowsExamined,
  };

  constructor(options: EngineOptions = {}) {
    this.limits = resolveSqlLimits(options.limits);
    this.callLimits = this.limits;
    this.epochClock = new EpochClock(options.clock ?? REAL_CLOCK, this.state);
    if (options.workers !== undefined) this.views.setWorkers(options.workers);
  }

  /** Ends the engine's worker threads (the `workers` option); the engine is not used after. */
  close(): void {
    this.views.close();
  }
  /** Bounds of an ad-hoc SELECT's result (the server sets them; unlimited by default). */
  selectLimits: ResultLimits = { maxRows: Infinity, maxBytes: Infinity };

  get epoch(): number {
    return this.currentEpoch;
  }

  get positions(): SourcePositions {
    return this.epochPositions();
  }

  /** The latest epoch's positions, built now when they are a plain table write's. */
  private epochPositions(): SourcePositions {
    this.lastPositions ??= { [this.lastTable]: { epoch: this.currentEpoch } };
    return this.lastPositions;
  }

  /** The logical clock of the latest epoch (µs): what NOW() is in every view's temporal filters. */
  get clock(): number {
    return this.epochClock.current;
  }

  /**
   * Freezes the clock source (journal replay: epochs take their journaled clocks, and creating a
   * view with a temporal filter does not tick on its own, because the journal holds that tick).
   */
  setClockFrozen(on: boolean): void {
    this.epochClock.frozen = on;
  }

  /** Whether some view has a temporal filter (only then do clock ticks matter). */
  hasTemporalViews(): boolean {
    return this.views.hasTemporal();
  }

  /** Whether a tick now would be an epoch (the clock source has reached some temporal bound). */
  tickDue(): boolean {
    return this.epochClock.tickDue();
  }

  /**
   * The earliest clock value at which a view's temporal filter changes, or a source's watermark
   * rises because a partition goes idle (Infinity: none).
   */
  nextClockDue(): number {
    return this.epochClock.nextDue();
  }

  /**
   * A clock tick: when the clock source has reached a bound of some temporal filter, an epoch of
   * its own at the source's time, journaled (`appendTick`) and run through the views it changes;
   * otherwise nothing (a tick that changes no view is neither an epoch nor journaled). `clock`:
   * replay of a journaled tick (always an epoch); `force`: an epoch whenever the clock moved.
   */
  tick(options: TickOptions = {}): { readonly epoch: number; readonly ticked: boolean } {
    const clock = this.epochClock.tickClock(options);
    if (clock === null) return { epoch: this.currentEpoch, ticked: false };
    const epoch = this.currentEpoch + 1;
    this.journal?.appendTick({ epoch, clock });
    this.runEpoch(null, null, epoch, {}, clock);
    return { epoch, ticked: true };
  }

  /**
   * Replay of a journaled SET CLOCK that made no epoch (and recovery from a checkpoint, with the
   * last clock setting before it): a manual clock moves to `clock` if it is behind; no epoch.
   */
  restoreClockSetting(clock: number): void {
    this.epochClock.restoreSetting(clock);
  }

  setJournal(journal: EngineJournal | null): void {
    this.journal = journal;
    this.clockReadersChanged();
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
    return this.runScript(sql, options).step(Infinity) as ScriptResult;
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

  // ---- batches ------------------------------------------------------------------------------

  /**
   * Applies one batch to a table as one epoch. The request is validated whole; on any invalid row
   * nothing is applied. An empty request creates no epoch.
   */
  applyChanges(
    table: string,
    changes: TableChanges,
    options?: ApplyOptions,
  ): { accepted: number; epoch: number } {
    const store = batchStore(this.state, table, options);
    refuseAppendOnly(store.def, changes, null);
    // No default `{}` for `options`: an object per call when the caller passes none (every bench event).
    const fromSource = options?.fromSource === true;
    // The epoch's clock is read first (a DEFAULT now() column takes it), unless nothing reads it.
    const clock = options?.clock ?? (this.epochReadsClock(fromSource) ? this.epochClock.next() : null);
    const typedInserts = options?.typedInserts;
    if (typedInserts !== undefined && (!fromSource || (changes.insert?.length ?? 0) > 0)) {
      throw new SluiceError('INTERNAL_ERROR', `typed inserts come from a source's connector alone`);
    }
    const prepared = store.prepare(
      fromSource && options?.ignoreMissingDeletes === true ? withoutMissingDeletes(store, changes) : changes,
      clock ?? undefined,
      typedInserts,
    );
    if (prepared.deletes.length > 0) refuseAppendOnly(store.def, changes, prepared.deletes);
    if (prepared.deletes.length === 0 && insertCount(prepared) === 0) {
      return { accepted: prepared.accepted, epoch: this.currentEpoch };
    }
    const epoch = this.currentEpoch + 1;
    // null: the plain write's own positions, built only when read (epochPositions).
    let positions: SourcePositions | null = null;
    if (fromSource) {
      // The connector's positions are the epoch's, live and in replay alike; the journal records
      // them with the batch so that replay passes them back unchanged.
      positions = options?.positions as SourcePositions;
      this.journal?.appendBatch({
        epoch,
        table,
        columns: store.columnNames,
        inserts: prepared.inserts,
        deletes: prepared.deletes,
        positions,
        clock: clock ?? this.epochClock.next(), // read: a source's epoch always reads it
      });
    } else if (options?.positions !== undefined) positions = options.positions;
    else if (this.journal !== null) {
      positions = this.journal.appendBatch({
        epoch,
        table,
        columns: store.columnNames,
        inserts: prepared.inserts,
        deletes: prepared.deletes,
        clock: clock ?? this.epochClock.next(), // read: a journaled epoch always reads it
      });
    }
    this.runEpoch(store, prepared, epoch, positions, clock);
    return { accepted: prepared.accepted, epoch };
  }

  /**
   * Whether a table batch's epoch reads the clock: something in it depends on its value (a journal
   * records it, a source's watermark or a `DEFAULT now()` column or a temporal filter reads it), or
   * the clock is a manual one (read always: it moves only when set, and reading it costs nothing).
   * All but `fromSource` change only with DDL or the journal: one flag, recomputed after they did.
   */
  private epochReadsClock(fromSource: boolean): boolean {
    return fromSource || (this.clockReaders ?? this.recountClockReaders());
  }

  private recountClockReaders(): boolean {
    this.clockReaderChecks++;
    this.clockReaders =
      this.journal !== null ||
      this.epochClock.source instanceof ManualClock ||
      this.tables.readClock() ||
      this.views.hasTemporal();
    return this.clockReaders;
  }

  /** A table, a view or the journal changed: the next epoch recomputes whether it reads the clock. */
  private clockReadersChanged(): void {
    this.clockReaders = null;
  }

  /** How often the engine recomputed whether epochs read the clock (a count of work, for tests). */
  get clockChecks(): number {
    return this.clockReaderChecks;
  }

  /**
   * One epoch at `clock` (null: the epoch reads no clock, see epochReadsClock): a table batch
   * (`store` and `prepared`), or a clock tick (both null).
   */
  private runEpoch(
    store: TableStore | null,
    prepared: PreparedBatch | null,
    epoch: number,
    positions: SourcePositions | null,
    clock: number | null,
  ): void {
    this.currentEpoch = epoch;
    this.lastPositions = positions;
    if (store !== null) this.lastTable = store.def.name;
    const now = clock === null ? this.epochClock.advanceUnread() : this.epochClock.advance(clock);
    // The engine's one set of deltas, emptied before (an epoch that threw may have left some) and after
    // the views ran (before the listeners: one that writes runs a nested epoch, which fills it again).
    const deltas = this.deltas;
    deltas.clear();
    // Partitions idle by this epoch's clock stop holding their source's watermark back (before the
    // batch's late rows are judged, and in a tick, so windows close while no data arrives).
    const watermarked = this.tables.withWatermarks();
    for (let i = 0; i < watermarked.length; i++) watermarked[i]?.watermark?.startEpoch(now);
    let stepped: readonly GraphView[];
    if (store !== null && prepared !== null) {
      const source =
        store.def.source !== undefined
          ? { positions: (positions as SourcePositions)[store.def.name], clock: now }
          : undefined;
      // Handed to the graph, which puts it in `deltas` only for a view that reads it there.
      stepped = this.views.runEpoch(deltas, epoch, now, store.def.name, store.apply(prepared, source));
    } else stepped = this.views.runEpoch(deltas, epoch, now);
    deltas.clear();
    this.deliveries.epochRan(stepped, epoch);
  }

  /** Listens to every epoch, after its views ran and their listeners heard of it. */
  onEpoch(listener: (epoch: number) => void): () => void {
    return this.deliveries.onEpoch(listener);
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
