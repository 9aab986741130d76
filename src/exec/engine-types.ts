// The engine's option, info and checkpoint types: what the server, the checkpoint store and tests
// exchange with an Engine, kept apart from the class so reading one does not mean reading the other.
import type { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import type { ColumnInfo, Value } from '../common/types.ts';
import type { StateDelta } from '../ivm/state.ts';
import type { TableColumnInfo } from '../planner/catalog.ts';
import type { ScriptResult, SourcePositions } from './api.ts';
import type { InsertsAhead } from './engine-writes.ts';
import type { ClockSource } from './logical-clock.ts';
import type { WatermarkInfo } from './watermark-statements.ts';

/**
 * Connector hook (set by the server): judges a new source's or sink's `brokers` when its CREATE is
 * executed — the error to raise (it is given the option's position), or null to allow. Installed
 * after recovery, so a replayed CREATE is never judged again.
 */
/**
 * The server's check of a CREATE SOURCE/SINK it is asked for (not of one replayed: that was allowed
 * when it ran): the error and the option it is about, or null.
 */
export type ConnectorCheck = (connector: {
  readonly brokers: readonly string[];
  readonly groupId?: string;
}) => { readonly error: SluiceError; readonly option: 'brokers' | 'group_id' } | null;

export interface TableInfo {
  readonly name: string;
  /** With `default` on a column that has a DEFAULT (the expression as written). */
  readonly columns: readonly TableColumnInfo[];
  readonly primaryKey: readonly string[] | null;
  /** UNIQUE constraints besides the primary key, name and columns; absent when there are none. */
  readonly unique?: readonly { readonly name: string; readonly columns: readonly string[] }[];
  /** Its watermark and late-row count, when it declares one (table-watermark.ts). */
  readonly watermark?: WatermarkInfo;
  /** Set when it takes inserts only (CREATE TABLE ... APPEND ONLY; catalog.ts `isAppendOnly`). */
  readonly appendOnly?: true;
  readonly sql: string;
  readonly rowCount: number;
  /** Approximate heap bytes of its rows (an estimate from a sample of them). */
  readonly stateBytes: number;
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
  /**
   * With `fromSource`: rows to insert that the source's `sourceRowTyping` already validated and
   * typed (the decoder judged each record with it), in place of `changes.insert`: not validated again.
   */
  readonly typedInserts?: readonly (readonly Value[])[];
  /**
   * An UPDATE's or DELETE's rows (dml.ts), in place of `changes`: the rows to delete as the table
   * stores them (read from it in the same synchronous block) and the rows to insert, each already
   * normalised once by `TableStore.normalizeRow`. Resolved against the table as `changes` would
   * be, without turning each row into an object and normalising it again.
   */
  readonly statementRows?: {
    readonly deletes: readonly (readonly Value[])[];
    readonly inserts: readonly (readonly Value[])[];
  };
  /**
   * The journal text of the request's inserts, written ahead (Engine.insertsAhead): used when it is
   * still theirs (InsertsAhead.textFor), else the journal writes them as usual.
   */
  readonly insertsAhead?: InsertsAhead;
  /**
   * Replay: the epoch's logical clock as journaled (µs). Without it the epoch reads the engine's
   * clock source; either way an epoch's clock is never below the one before.
   */
  readonly clock?: number;
  /**
   * Two inserts of one primary key refuse the whole write (`UNIQUE_VIOLATION`), as PostgreSQL refuses
   * one INSERT statement repeating a key; without it a request's later row of a key replaces the earlier.
   */
  readonly refuseRepeatedKeys?: boolean;
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
  /** The logical clock of `epoch` (µs). */
  readonly clock: number;
  readonly objects: readonly ObjectCheckpoint[];
}

/** What a checkpoint store hands back on recovery: every stored entry value per state id. */
export interface StoredCheckpoint {
  readonly epoch: number;
  readonly positions: SourcePositions;
  /** The logical clock of `epoch` (µs); absent in a checkpoint from before the clock existed. */
  readonly clock?: number;
  readonly objects: ReadonlyMap<
    string,
    // A state's entries: a list, or for a table's rows stored column-wise a ColumnRows
    // (common/column-rows.ts) the table keeps as columns until first used.
    { readonly fingerprint: string; readonly parts: ReadonlyMap<string, Iterable<unknown>> }
  >;
}

export interface EngineOptions {
  /** Limits on SQL text (src/common/limits.ts); each one left out keeps its default. */
  readonly limits?: Partial<SqlLimits>;
  /** Where epochs read their logical clock (src/exec/logical-clock.ts); the real clock by default. */
  readonly clock?: ClockSource;
  /**
   * Worker threads for the Reduces that can run in hash partitions (src/exec/workers/): 1 (the
   * default) runs everything on the calling thread; 2..64 partitions those Reduces' groups over that
   * many threads. Results, changelogs and checkpoints are the same for every value.
   */
  readonly workers?: number;
  /**
   * Most rows the views' joins (keyless ones, and keyed ones through the rows under each written
   * key: view-join-fanout.ts) may build in the epoch of one table write, counted before it runs (a write beyond is refused with EPOCH_TOO_LARGE and changes
   * nothing); MAX_EPOCH_JOIN_ROWS by default, Infinity for none. Replay and sources are not refused.
   */
  readonly maxEpochJoinRows?: number;
  /**
   * Most rows a new view's joins may build in its first build over the current rows (CREATE
   * MATERIALIZED VIEW, a query subscription's view) beyond three per row its inputs hold: keyless joins
   * counted before, every join while it runs; beyond, the CREATE is refused with VIEW_TOO_LARGE
   * before it is journaled.
   * MAX_BACKFILL_ROWS by default, Infinity for none. Journal replay and rebuilt views are not refused.
   */
  readonly maxBackfillRows?: number;
}

export interface ExecuteOptions {
  /**
   * Limits for this call instead of the engine's: REPLAY_SQL_LIMITS (src/common/limits.ts) when re-running
   * journaled statements, which were accepted under the limits of their day.
   */
  readonly limits?: SqlLimits;
  /**
   * With REPLAY_SQL_LIMITS: the binding rules the journal recorded for the statement (absent: from
   * before they were recorded, bound under the older rules; src/planner/journaled-binding.ts).
   */
  readonly rules?: number | undefined;
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
