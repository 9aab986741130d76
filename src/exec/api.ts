// The library's public surface: what the server, connectors and tests call. The engine is
// synchronous inside an epoch; every method here returns only once its epoch is fully applied, so a
// read always reflects a whole number of epochs.
import type { SluiceError } from '../common/errors.ts';
import type { OrderedIndex } from '../ivm/ordered-index.ts';
import type { KafkaSinkOptions, KafkaSourceOptions } from '../planner/connector-options.ts';
import type { ColumnInfo, Row, Value } from '../common/types.ts';

export type {
  KafkaSinkFormat,
  KafkaSinkOptions,
  KafkaSourceFormat,
  KafkaSourceOptions,
  KafkaStart,
} from '../planner/connector-options.ts';

export type ChangeOp = '+I' | '-D' | '-U' | '+U';

export interface Change {
  readonly op: ChangeOp;
  readonly row: Row;
  /** Multiplicity when a row of a view without a unique key changes by k ≠ 1. */
  readonly n?: number;
}

/** Where an epoch's input came from: per source name, the positions it covers. */
export type SourcePositions = Record<string, unknown>;

/** A row-level runtime error held by a view (division by zero, failed cast, overflow). */
export interface ViewRowError {
  readonly code: string;
  readonly message: string;
  /** The input row (of the view's direct input) that caused it, or the group key for aggregates. */
  readonly row: Row;
  /** The epoch in which the error first appeared. */
  readonly epoch: number;
  /** How many input rows currently cause this error. */
  readonly count: number;
}

export interface ErrorChange {
  readonly op: '+E' | '-E';
  readonly error: ViewRowError;
}

/** Everything that changed in one view in one epoch, consolidated. */
export interface ViewChangeSet {
  readonly view: string;
  readonly epoch: number;
  readonly positions: SourcePositions;
  readonly changes: readonly Change[];
  /** Row errors appearing (+E) or retracted (-E) in this epoch; absent when none. */
  readonly errors?: readonly ErrorChange[];
}

export interface TableChanges {
  readonly insert?: readonly Row[];
  /** Full rows (one copy removed each), or only the primary key for a table that has one. */
  readonly delete?: readonly Row[];
}

export interface StatementResult {
  /** e.g. "CREATE MATERIALIZED VIEW", "INSERT", "SELECT". */
  readonly statement: string;
  readonly object?: string;
  readonly columns?: readonly ColumnInfo[];
  readonly rows?: readonly Row[];
  /** Rows affected by INSERT/UPDATE/DELETE. */
  readonly rowCount?: number;
  /** The epoch the statement produced (writes) or was read at (SELECT). */
  readonly epoch?: number;
  /** EXPLAIN text. */
  readonly plan?: string;
}

export interface ScriptResult {
  readonly results: readonly StatementResult[];
  /** The error that stopped the script; statements before it took effect, it and later ones did not. */
  readonly error?: SluiceError;
}

export interface ViewSnapshot {
  readonly epoch: number;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  readonly rows: readonly Row[];
}

/**
 * A view at the current epoch, for reads that must not copy it: its rows in order (the key, else all
 * columns) as an ordered index kept up to date by every epoch. `index` is null while the index is
 * still being built (the first read of a large view): ask again after yielding to the event loop.
 */
export interface ViewReader {
  readonly epoch: number;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  /** Positions of the columns the rows are ordered by. */
  readonly order: readonly number[];
  readonly index: OrderedIndex | null;
  toRow(values: readonly Value[]): Row;
}

export type ViewListener = (changes: ViewChangeSet) => void;

/** One resolved batch as the journal receives it: rows as value arrays in `columns` order. */
export interface JournalBatch {
  readonly epoch: number;
  readonly table: string;
  /** The table's column names, the order of every row's values. */
  readonly columns: readonly string[];
  readonly inserts: readonly (readonly Value[])[];
  readonly deletes: readonly (readonly Value[])[];
  /**
   * Present only for a source batch (`applyChanges(source, ..., { fromSource: true, positions })`):
   * the connector's positions, which are the epoch's positions. The journal must store them and
   * hand them back on replay as `{ fromSource: true, positions }`; its return value is then unused.
   */
  readonly positions?: SourcePositions;
}

/** A source in `engine.catalog().sources`: a relation views read like a table, fed by Kafka. */
export interface SourceInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  /** The primary key (the Kafka message key for `upsert` / `debezium`), or null. */
  readonly primaryKey: readonly string[] | null;
  readonly sql: string;
  readonly rowCount: number;
  /** Views reading it directly. */
  readonly dependents: readonly string[];
  readonly options: KafkaSourceOptions;
}

/** A sink in `engine.catalog().sinks`: writes `view`'s changelog to Kafka. */
export interface SinkInfo {
  readonly name: string;
  readonly view: string;
  readonly sql: string;
  readonly options: KafkaSinkOptions;
}

/**
 * Durability hooks (the server's log). Called after validation and before a change takes effect;
 * throwing cancels the change. Batches carry fully resolved row changes (PK-only deletes and PK
 * replacements resolved to full rows), so replaying them through
 * `applyChanges(table, { delete: deletes, insert: inserts }, { positions })` reproduces the epoch.
 */
export interface EngineJournal {
  /** Returns a table batch's positions (ignored for a source batch, which carries its own). */
  appendBatch(entry: JournalBatch): SourcePositions;
  appendDdl(entry: { epoch: number; sql: string }): void;
}
