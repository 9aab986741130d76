// The library's public surface: what the server, connectors and tests call. The engine is
// synchronous inside an epoch; every method here returns only once its epoch is fully applied, so a
// read always reflects a whole number of epochs.
import type { SluiceError } from '../common/errors.ts';
import type { OrderedIndex } from '../ivm/ordered-index.ts';
import type { KafkaSinkOptions, KafkaSourceOptions } from '../planner/connector-options.ts';
import type { ColumnInfo, Row, Value } from '../common/types.ts';
import type { ViewChangeSet } from '../common/changes.ts';

// The change, positions and journal types are plain data shared with storage and sinks, which must
// not import the runtime: they live in src/common and are re-exported here as part of the API.
export type {
  Change,
  ChangeOp,
  ErrorChange,
  SourcePositions,
  ViewChangeSet,
  ViewRowError,
} from '../common/changes.ts';
export type { EngineJournal, JournalBatch } from '../common/journal.ts';

export type {
  KafkaSinkFormat,
  KafkaSinkOptions,
  KafkaSourceFormat,
  KafkaSourceOptions,
  KafkaStart,
} from '../planner/connector-options.ts';

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
  /** A view's: the logical clock of `epoch` (a timestamptz text). */
  readonly clock?: string;
  /** A view's: the watermarks after `epoch` of the watermarked tables and sources it reads. */
  readonly watermarks?: Readonly<Record<string, string | null>>;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  /** Positions of the columns the rows are ordered by. */
  readonly order: readonly number[];
  readonly index: OrderedIndex | null;
  toRow(values: readonly Value[]): Row;
}

export type ViewListener = (changes: ViewChangeSet) => void;

/** A source in `engine.catalog().sources`: a relation views read like a table, fed by Kafka. */
export interface SourceInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  /** The primary key (the Kafka message key for `upsert` / `debezium`), or null. */
  readonly primaryKey: readonly string[] | null;
  readonly sql: string;
  readonly rowCount: number;
  /** Approximate heap bytes of its rows (an estimate from a sample of them). */
  readonly stateBytes: number;
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
