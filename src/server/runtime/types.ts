// The runtime's options and hooks, and the reports it gives: recovery, checkpoints, skipped records.
import type { SluiceError } from '../../common/errors.ts';
import type { CheckpointWriteStats } from '../../storage/checkpoint-store.ts';
import type { Retention } from '../../storage/changelog-store.ts';
import type { SubscriberLimits } from '../../sink/subscriber.ts';
import type { SubscriberBudget } from '../../sink/subscriber-budget.ts';
import type { Engine } from '../../index.ts';
import type { ResultLimits } from '../../exec/result-size.ts';
import type { ReadLimits } from '../view-rows.ts';
import type { IdempotencyLimits } from '../idempotency-window.ts';

export interface RuntimeLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RuntimeOptions {
  /** Data directory (holds sluice.db); null keeps everything in memory (not durable). */
  readonly dataDir: string | null;
  readonly retention: Retention;
  readonly limits: SubscriberLimits;
  /** A live subscriber idle this long gets a `progress` message. */
  readonly heartbeatMs: number;
  /** Rows per `snapshot` message. */
  readonly snapshotChunkRows: number;
  /** How often retention is applied to stored changelogs. */
  readonly pruneIntervalMs: number;
  readonly createEngine: () => Engine;
  /** How often the clock ticks for views with temporal filters (0: never; default DEFAULTS.clockTickMs). */
  readonly clockTickMs?: number;
  readonly logger: RuntimeLogger;
  /** When checkpoints are taken; null: never (recovery then replays the whole journal). */
  readonly checkpoint: CheckpointPolicy | null;
  /**
   * How long table batches the durable checkpoint covers stay in the journal (default
   * DEFAULTS.journalRetention); absent or `ms: null`: kept forever.
   */
  readonly journalRetention?: JournalRetentionPolicy;
  /** `PRAGMA quick_check` the data file before recovery (default true). */
  readonly verifyOnOpen?: boolean;
  /**
   * The hosts sources and sinks may connect to (`--connector-hosts`); absent or null: loopback and
   * the broker hosts of the connectors recovered at start.
   */
  readonly connectorHosts?: readonly string[] | null;
  /** Longest wait for a broker while a connector connects (default 15 s). */
  readonly connectorConnectTimeoutMs?: number;
  /** Page sizes and the scan bound of REST view reads (default DEFAULTS.reads). */
  readonly reads?: ReadLimits;
  /** The largest result of an ad-hoc SELECT (default DEFAULTS.selectLimits). */
  readonly selectLimits?: ResultLimits;
  /** Most rows one UPDATE or DELETE may change (default DEFAULTS.maxDmlRows). */
  readonly maxDmlRows?: number;
  /** Bytes all subscribers together may have queued, open snapshots included (when no budget is given). */
  readonly subscriberMemory?: number;
  /** The server's subscriber memory budget, shared with the other tenants' runtimes. */
  readonly subscriberBudget?: SubscriberBudget;
  /** Most subscribers at once: in all, and per view. */
  readonly maxSubscribers?: number;
  readonly maxSubscribersPerView?: number;
  /** How long, how many and how many bytes of ingest idempotency keys are remembered (default DEFAULTS.idempotency). */
  readonly idempotency?: IdempotencyLimits;
}

/** A checkpoint is taken once either bound is reached (and something changed), and at shutdown. */
export interface CheckpointPolicy {
  readonly intervalMs: number;
  readonly epochs: number;
  /**
   * With journal retention on, the writer thread makes a checkpoint durable (syncs the file) when the
   * last durable one is older than this (default DURABLE_CHECKPOINT_INTERVAL_MS, checkpoints.ts).
   */
  readonly durableIntervalMs?: number;
  /** A checkpoint is written in slices of about this many ms, with epochs running between them. */
  readonly sliceMs?: number;
}

/** Journal retention (journal-retention.ts in src/storage): deletes in slices between requests. */
export interface JournalRetentionPolicy {
  /** Table batches older than this and covered by the checkpoint are deleted; null: kept forever. */
  readonly ms: number | null;
  /** Most batches one slice deletes (one transaction, one turn of the event loop). */
  readonly sliceRows: number;
}

/** How the last start recovered its state (logs, metrics, tests). */
export interface RecoveryReport {
  /** The checkpoint restored, or null when the whole journal was replayed. */
  readonly checkpointEpoch: number | null;
  readonly checkpointOffset: number | null;
  /** Journal entries replayed after the checkpoint (all of them without one). */
  readonly replayedEntries: number;
  /** Views rebuilt from their inputs because their plan changed since the checkpoint. */
  readonly rebuiltViews: readonly string[];
  /** Why a stored checkpoint was not used, when one was found but could not be. */
  readonly fallbackReason: string | null;
  readonly ms: number;
}

/** A record a source skipped (on_error = 'skip'), as listed over REST. */
export interface SkippedRecordRow {
  /** Its position in the source's errors relation, from 1. */
  readonly id: number;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly reason: string;
  readonly raw: string | null;
}

export interface CheckpointStatus {
  readonly enabled: boolean;
  readonly epoch: number | null;
  readonly journalOffset: number | null;
  /**
   * The journal offset of the last checkpoint known to survive a power loss (synced), null: none
   * since the start; journal retention deletes only up to it.
   */
  readonly durableJournalOffset: number | null;
  readonly written: number;
  readonly failures: number;
  readonly lastError: string | null;
  readonly last: CheckpointWriteStats | null;
  /**
   * Set when checkpoints are written on the main thread because the writer thread kept dying
   * (checkpoints.ts, MAX_WRITER_THREAD_DEATHS): why; null while the thread writes them.
   */
  readonly writerFallback: string | null;
}

export interface RuntimeHooks {
  batchApplied?(table: string, rows: number, seconds: number): void;
  /**
   * Thread time a write took (an ingest batch's epoch through every view, a slice of a SQL script, a
   * Kafka source batch), in microseconds: its CPU time unless the machine took the core away meanwhile.
   */
  epochCpu?(micros: number): void;
  /** Rows written other than by ingest requests (those come through batchApplied): SQL DML, Kafka sources. */
  rowsWritten?(rows: number): void;
  viewChanges?(view: string, rows: number): void;
  /** A group of ingest requests committed together (one fsync). */
  groupCommitted?(requests: number): void;
  subscriberFailed?(view: string, code: string): void;
  /** Rows a REST page or an ad-hoc SELECT examined. */
  rowsExamined?(kind: 'page' | 'select' | 'dml', rows: number): void;
  checkpointWritten?(stats: CheckpointWriteStats): void;
  /** Journal retention deleted this many table batches in one slice. */
  journalTrimmed?(batches: number): void;
  checkpointFailed?(error: SluiceError): void;
  /**
   * The tenant's ingest rates for its Kafka sources (../rate-limits.ts): 0 when a batch of `rows`
   * rows and `bytes` bytes may be applied now (it is counted), else the ms the source waits first.
   */
  sourcePace?(rows: number, bytes: number): number;
  /** The largest source batch under those rates (null: no bound). */
  sourceBatchBound?(): { readonly rows: number | null; readonly bytes: number | null };
  /** True while the tenant's state is at or above its state quota: its Kafka sources pause reading. */
  sourceStateFull?(): boolean;
}

export interface SubscribeParams {
  readonly snapshot: boolean;
  readonly resumeFrom: number | undefined;
  /** Split `changes` messages and snapshot chunks past this many bytes into parts (opt-in). */
  readonly maxMessageBytes?: number | undefined;
}
