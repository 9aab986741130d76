// The engine's state and its epoch path: the catalog, the table stores and the graph of running
// views, and each epoch — a table batch validated whole, journaled, applied to its table, then
// pushed through every dependent view in creation order, or a clock tick — after which
// subscribers are told. Engine (engine.ts) extends it with statements, reads and checkpoints.
// Everything here is synchronous.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { EpochDeltas } from './epoch-deltas.ts';
import { Catalog } from '../planner/catalog.ts';
import type { EngineJournal, SourcePositions, TableChanges } from './api.ts';
import type { PreparedBatch } from './table-store.ts';
import { TableStore, insertCount } from './table-store.ts';
import { TableStores } from './table-stores.ts';
import { ViewGraph, type GraphView } from './view-graph.ts';
import { ManualClock, REAL_CLOCK } from './logical-clock.ts';
import { EpochClock, type TickOptions } from './engine-clock.ts';
import {
  batchStore,
  insertsAhead,
  refuseAppendOnly,
  withoutMissingDeletes,
  type InsertsAhead,
} from './engine-writes.ts';
import type { SchemaState } from './ddl.ts';
import { EpochDeliveries } from './engine-deliveries.ts';
import type { CheckpointedState } from './engine-checkpoints.ts';
import type { ApplyOptions, EngineOptions } from './engine-types.ts';

/**
 * Default of `EngineOptions.maxEpochJoinRows`. One epoch of a million join pairs (keyless) measured
 * ≈ 0.8 GB peak RSS and ≈ 1.3 s of the server's loop; ten million passed 3 GB and held the loop
 * for more than 25 s (bench/README.md, "Keyless joins: one write's epoch"). Two million keeps one
 * write's epoch near 1.5 GB and a few seconds.
 */
export const MAX_EPOCH_JOIN_ROWS = 2_000_000;

export abstract class EngineEpochs {
  protected readonly catalogState = new Catalog();
  protected readonly tables = new TableStores(() => this.clockReadersChanged());
  /** The running epoch's deltas by relation (empty between epochs). */
  private readonly deltas = new EpochDeltas();
  /** Every view's dataflow, in one graph fed by the tables. */
  protected readonly views = new ViewGraph(
    (name) => this.tables.get(name)?.contents() ?? null,
    (name) => this.tables.get(name)?.watermark?.value ?? null,
    () => this.clockReadersChanged(),
    (name) => this.tables.get(name)?.keyedSlots() ?? null,
  );
  /** What checkpoints and reads see of the engine. */
  protected readonly state: CheckpointedState & SchemaState = {
    catalog: this.catalogState,
    tables: this.tables,
    views: this.views,
  };
  /** Subscribers and epoch listeners, and the queue that tells them of each epoch in order. */
  protected readonly deliveries = new EpochDeliveries(this.catalogState, () => this.epochPositions());
  protected journal: EngineJournal | null = null;
  /** Whether an epoch not from a source reads the clock (epochReadsClock; null: recompute). */
  private clockReaders: boolean | null = null;
  private clockReaderChecks = 0;
  protected currentEpoch = 0;
  /**
   * The latest epoch's positions; null when they are a plain table write's, `{ [table]: { epoch } }`,
   * which is built only if someone reads them (most single-row epochs have no reader).
   */
  protected lastPositions: SourcePositions | null = {};
  /** The table the latest epoch wrote (what null `lastPositions` stand for). */
  private lastTable = '';
  /** Each epoch's logical clock, and when a clock tick is due (engine-clock.ts). */
  protected readonly epochClock: EpochClock;

  /** EngineOptions.maxEpochJoinRows. */
  private readonly maxEpochJoinRows: number;

  constructor(options: EngineOptions) {
    this.epochClock = new EpochClock(options.clock ?? REAL_CLOCK, this.state);
    this.maxEpochJoinRows = options.maxEpochJoinRows ?? MAX_EPOCH_JOIN_ROWS;
    if (options.workers !== undefined) this.views.setWorkers(options.workers);
  }

  /** Ends the engine's worker threads (the `workers` option); the engine is not used after. */
  close(): void {
    this.views.close();
  }

  get epoch(): number {
    return this.currentEpoch;
  }

  get positions(): SourcePositions {
    return this.epochPositions();
  }

  /** The latest epoch's positions, built now when they are a plain table write's. */
  protected epochPositions(): SourcePositions {
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
    const statementRows = options?.statementRows;
    if (
      statementRows !== undefined &&
      (fromSource || changes.insert !== undefined || changes.delete !== undefined)
    ) {
      throw new SluiceError('INTERNAL_ERROR', `a statement's rows replace a request's rows, not join them`);
    }
    const prepared = store.prepare(
      fromSource && options?.ignoreMissingDeletes === true ? withoutMissingDeletes(store, changes) : changes,
      clock ?? undefined,
      typedInserts ?? statementRows?.inserts,
      options?.refuseRepeatedKeys === true,
      statementRows?.deletes,
    );
    if (prepared.deletes.length > 0) refuseAppendOnly(store.def, changes, prepared.deletes);
    if (prepared.deletes.length === 0 && insertCount(prepared) === 0) {
      return { accepted: prepared.accepted, epoch: this.currentEpoch };
    }
    // A write (not replay, whose batches were accepted when written, nor a source's batch) that its
    // views' joins would multiply past the bound is refused before the journal or any state
    // changes: one small write must not build an epoch that holds the loop and fills memory.
    if (!fromSource && options?.positions === undefined) this.refuseJoinBlowup(table, prepared);
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
      const insertsText = options?.insertsAhead?.textFor(store, insertCount(prepared)) ?? undefined;
      const columns = store.columnNames;
      // The clock is read after the rows, as always: a journaled epoch always reads it.
      positions = this.journal.appendBatch(
        insertsText === undefined
          ? {
              epoch,
              table,
              columns,
              inserts: prepared.inserts,
              deletes: prepared.deletes,
              clock: clock ?? this.epochClock.next(),
            }
          : {
              epoch,
              table,
              columns,
              // A columnar batch builds its rows when `inserts` is read: with the text written
              // ahead, the journal reads them only if the payload needs its tagged encoder.
              get inserts() {
                return prepared.inserts;
              },
              insertsText,
              deletes: prepared.deletes,
              clock: clock ?? this.epochClock.next(),
            },
      );
    }
    this.runEpoch(store, prepared, epoch, positions, clock);
    return { accepted: prepared.accepted, epoch };
  }

  /**
   * Rows a source's batch would make its views' joins, window functions, Top-Ns and subqueries build in
   * one epoch, and the view building the most, when that passes `maxEpochJoinRows`; null when it
   * fits (most batches end at the row-free ceiling) or the batch is one its epoch would refuse
   * anyway. A source's batch cannot be refused: its connector cuts one that passes the bound into
   * epochs that fit (kafka-source.ts), keeping a batch's records only while
   * `sourceEpochMayPassBound` (the row-free ceiling of a full batch) says one could. Both read and
   * change no state.
   */
  sourceEpochMayPassBound(source: string, rows: number): boolean {
    return this.views.joinRowsCeiling(source, rows) > this.maxEpochJoinRows;
  }

  sourceEpochOverBound(
    source: string,
    changes: TableChanges,
    typedInserts?: readonly (readonly Value[])[],
  ): { readonly rows: number; readonly view: string } | null {
    const store = this.state.tables.get(source);
    if (store === undefined) return null;
    // The rows the prepared batch can hold at most (a keyed upsert of a held key is a delete and an
    // insert): the row-free ceiling first, so most batches are not prepared here as well.
    const inserts = typedInserts?.length ?? changes.insert?.length ?? 0;
    const most = (changes.delete?.length ?? 0) + inserts * (store.def.primaryKey === null ? 1 : 2);
    if (most === 0 || this.views.joinRowsCeiling(source, most) <= this.maxEpochJoinRows) return null;
    let prepared: PreparedBatch;
    try {
      prepared = store.prepare(withoutMissingDeletes(store, changes), undefined, typedInserts);
    } catch {
      return null;
    }
    return this.joinRowsOverBound(source, prepared);
  }

  /**
   * The rows the views' joins, window functions, Top-Ns and subqueries would build in `prepared`'s epoch and
   * the view building the most, when past `maxEpochJoinRows`; null within it. First a bound that
   * reads no row (counts down each view, each join's rows as the most the other side holds under one
   * key): most writes end there. Past it, the written rows go down the views and each join probes
   * the other side per row or group changed, a cost the size of the write (view-join-fanout.ts).
   */
  private joinRowsOverBound(
    table: string,
    prepared: PreparedBatch,
  ): { readonly rows: number; readonly view: string } | null {
    const rows = prepared.deletes.length + insertCount(prepared);
    if (this.views.joinRowsCeiling(table, rows) <= this.maxEpochJoinRows) return null;
    const built = this.views.joinRowsBuilt(table, prepared);
    return built.rows <= this.maxEpochJoinRows ? null : built;
  }

  /**
   * Throws EPOCH_TOO_LARGE when the views' joins would build more than the bound in this write's
   * epoch, wherever they sit (behind a GROUP BY, another join, in a view over a view).
   */
  private refuseJoinBlowup(table: string, prepared: PreparedBatch): void {
    const built = this.joinRowsOverBound(table, prepared);
    if (built === null) return;
    const rows = prepared.deletes.length + insertCount(prepared);
    throw new SluiceError(
      'EPOCH_TOO_LARGE',
      `this write of ${rows} rows to "${table}" would make the joins, window functions, Top-Ns and subqueries of its views build ${built.rows} rows in one epoch, more than ${this.maxEpochJoinRows} (most in view "${built.view}")`,
      {
        hint: 'write fewer rows per request; a join on a key that few values repeat, or with no equality between its sides, pairs each written row with many rows of the other side; a row near the head of a long window partition renumbers the rest of it; a row above a large tie group at the cut of a ranked Top-N pushes the whole group out; a row into an IN/NOT IN/EXISTS subquery re-emits every outer row it flips (one NULL flips every row of a NOT IN)',
      },
    );
  }

  /**
   * A job that writes the journal text of a large insert-only request ahead of its epoch, a step at a
   * time (InsertsAhead), to pass to applyChanges as `insertsAhead`; null when the request is not
   * one for it. Reads and changes nothing of the engine's state.
   */
  insertsAhead(table: string, changes: TableChanges): InsertsAhead | null {
    return insertsAhead(this.state, this.journal, table, changes);
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
      store.changedAt = epoch;
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
}
