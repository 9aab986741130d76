// What a Kafka source (kafka-source.ts) is given and hands out: its config and start positions, the
// batches it delivers with their exact per-partition offset ranges, the pacer it asks, its status.
import type { Value } from '../../common/types.ts';
import type { DecodeSpec } from './record-decoder.ts';

export type KafkaStartSpec =
  'earliest' | 'latest' | readonly { readonly partition: number; readonly offset: number }[];

export interface KafkaSourceConfig {
  readonly name: string;
  readonly topic: string;
  readonly maxBatchRows: number;
  readonly maxBatchMs: number;
  readonly onError: 'fail' | 'skip';
  readonly start: KafkaStartSpec;
  readonly decode: DecodeSpec;
  /** Bytes of a skipped record's value kept in the errors relation. */
  readonly rawLimit?: number;
  /** Longest wait for the broker while connecting before an error and a retry (default 15 s). */
  readonly connectTimeoutMs?: number;
  /** The bootstrap brokers, for messages. */
  readonly brokers?: readonly string[];
  /**
   * A source with a WATERMARK: a row's event time in µs (null: none). Each batch's positions then
   * carry every partition's largest event time read (`maxTime`), from which the engine derives the
   * per-partition watermarks — journaled with the positions, so replay derives the same ones.
   */
  readonly eventTime?: ((row: Record<string, unknown>) => number | null) | null;
  /**
   * Rows a batch's epoch would make the views' joins, window functions, Top-Ns and subqueries build, and
   * the view building the most, when that passes the engine's bound (null: the batch fits). A
   * batch past it is cut into per-partition prefixes that fit, each its own epoch.
   */
  readonly epochOverBound?: (batch: SourceBatch) => { readonly rows: number; readonly view: string } | null;
  /**
   * Whether an epoch writing `rows` rows could pass the engine's bound, from counts alone (no row
   * read): false for a source no view joins, windows or probes. Only then are a batch's records kept
   * for a cut.
   */
  readonly epochMayPassBound?: (rows: number) => boolean;
}

/** One partition's part of a batch: the offset range [from, next) it covers. */
export interface PartitionRange {
  readonly from: number;
  readonly next: number;
  /**
   * Sources with a WATERMARK only: the largest event time (µs) of the records read in this range,
   * null when none had one.
   */
  readonly maxTime?: number | null;
}

/** An epoch's positions for one source: each partition's offset range [from, next). */
export interface KafkaPositions {
  readonly topic: string;
  readonly partitions: Readonly<Record<string, PartitionRange>>;
}

export interface SkippedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly reason: string;
  readonly raw: string | null;
}

/** Paces a source's batches (the tenant's ingest rates, src/server/rate-limits.ts). */
export interface SourcePacer {
  /** 0: a batch of `rows` rows and `bytes` bytes may be delivered now (and is counted); else the ms to wait. */
  wait(rows: number, bytes: number): number;
  /** The largest batch to cut (rows, record bytes), so a wait is about a second at most; null: no bound. */
  bound(): { readonly rows: number | null; readonly bytes: number | null };
  /**
   * True while the tenant's state is at or above its state quota: the batch is held (reading paused,
   * the position kept) and asked again every STATE_QUOTA_POLL_MS until this turns false.
   */
  stateFull(): boolean;
}

export interface SourceBatch {
  /** Rows to insert; for a keyed source each replaces the row with its key. */
  readonly upserts: Record<string, unknown>[];
  /**
   * A `json` source with row typing (`decode.typing`): its rows to insert, already validated and
   * typed (`upserts` is then empty), in record order — for a keyed source the last row of a key wins.
   */
  readonly typedUpserts?: readonly (readonly Value[])[];
  /** Primary keys to delete (a key that is not there is not an error: Kafka repeats tombstones). */
  readonly deletes: Record<string, unknown>[];
  readonly positions: KafkaPositions;
  readonly skipped: readonly SkippedRecord[];
  readonly records: number;
}

/** `stalled`: running, but the broker has answered no fetch for a while (it may be hung). */
export type SourceState = 'starting' | 'running' | 'stalled' | 'retrying' | 'failed' | 'stopped';

export interface SourceError {
  readonly message: string;
  readonly topic: string;
  readonly partition?: number;
  readonly offset?: number;
  readonly reason?: string;
  readonly at: string;
}

export interface PartitionStatus {
  readonly partition: number;
  /** The next offset to apply (everything before it is in the source's state). */
  readonly next: number;
  /** The log end offset last seen. */
  readonly high: number | null;
  readonly lag: number | null;
}

export interface SourceStatus {
  readonly state: SourceState;
  readonly error: SourceError | null;
  readonly partitions: readonly PartitionStatus[];
  readonly recordsIn: number;
  readonly batches: number;
  readonly skipped: number;
  readonly recordsPerSecond: number;
  readonly retries: number;
  /** Times a batch waited for the tenant's ingest rate (reading paused meanwhile). */
  readonly rateWaits: number;
  /** Reading is paused now because the tenant's state is at or above its state quota. */
  readonly pausedAtStateQuota: boolean;
  /** Times reading paused so (each pause counted once, however long). */
  readonly stateQuotaPauses: number;
  /** Batches cut into several epochs because one epoch would have passed the engine's bound. */
  readonly splitBatches: number;
  /**
   * Records applied alone in an epoch past the engine's bound: one record cannot be cut, and a
   * source's data is never dropped for its cost.
   */
  readonly oversizedRecords: number;
  /** Milliseconds since the broker last answered a fetch (null before the first). */
  readonly lastFetchAgoMs: number | null;
}
