// The durable engine: wraps the in-memory Engine with the SQLite journal and changelog store, replays
// the journal on open, and fans each committed epoch out to subscribers. Nothing is acknowledged or
// published before the transaction holding it committed (fsync).
//
// Group commit: ingest requests are applied at once, each as its own epoch, into one open SQLite
// transaction; the transaction commits once the event loop has gone a turn without new ingest work
// (so requests that arrive together share one fsync), and only then are their answers resolved and
// their epochs published. Everything else — SQL scripts, reads, snapshots, subscriptions — first
// commits the open group (flush), so it only ever sees committed epochs.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../common/errors.ts';
import { REPLAY_SQL_LIMITS } from '../common/limits.ts';
import {
  CheckpointStore,
  type CheckpointWriteStats,
  type StoredCheckpointData,
} from '../storage/checkpoint-store.ts';
import { crashPoint } from './crash-points.ts';
import {
  ConnectorManager,
  connectorHostError,
  connectorHostsAfterRecovery,
  type SinkReport,
  type SourceReport,
} from './connectors.ts';
import type { SinkFeed, WireChange } from '../sink/kafka-sink.ts';
import type { SourceBatch } from '../source/kafka/kafka-source.ts';
import { SourceStore } from '../storage/source-store.ts';
import { HighWaterMark } from '../storage/high-water-mark.ts';
import type { ScriptResult, StatementResult, TableChanges, ViewChangeSet } from '../exec/api.ts';
import { ChangelogStore, type Retention } from '../storage/changelog-store.ts';
import {
  CloseCodes,
  Subscriber,
  ViewFeed,
  type SubscriberLimits,
  type SubscriberTransport,
} from '../sink/subscriber.ts';
import { SubscriberBudget } from '../sink/subscriber-budget.ts';
import {
  encodeChangesStored,
  encodeChangesWire,
  sameStoredChanges,
  storedToWire,
} from '../storage/changelog-codec.ts';
import { stringifyWire } from '../common/json-codec.ts';
import { SqliteStore } from '../storage/sqlite-store.ts';
import { TableLog, type LoggedEntry } from '../storage/table-log.ts';
import type { ColumnInfo, Row } from '../common/types.ts';
import type { Engine, ViewInfo } from '../index.ts';
import type { SinkInfo, ViewReader } from '../exec/api.ts';
import { columnOverheads, rowJsonBytes, type ResultLimits } from '../exec/result-size.ts';
import type { FrozenIndex, OrderedIndex } from '../ivm/ordered-index.ts';
import { DEFAULTS } from './defaults.ts';
import { readPage, type Page, type PageRequest, type ReadLimits } from './view-rows.ts';

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
  readonly logger: RuntimeLogger;
  /** When checkpoints are taken; null: never (recovery then replays the whole journal). */
  readonly checkpoint: CheckpointPolicy | null;
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
  /** Bytes all subscribers together may have queued, open snapshots included. */
  readonly subscriberMemory?: number;
  /** Most subscribers at once: in all, and per view. */
  readonly maxSubscribers?: number;
  readonly maxSubscribersPerView?: number;
}

/** A checkpoint is taken once either bound is reached (and something changed), and at shutdown. */
export interface CheckpointPolicy {
  readonly intervalMs: number;
  readonly epochs: number;
  /** A checkpoint is written in slices of about this many ms, with epochs running between them. */
  readonly sliceMs?: number;
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
  readonly written: number;
  readonly failures: number;
  readonly lastError: string | null;
  readonly last: CheckpointWriteStats | null;
}

export interface RuntimeHooks {
  batchApplied?(table: string, rows: number, seconds: number): void;
  viewChanges?(view: string, rows: number): void;
  /** A group of ingest requests committed together (one fsync). */
  groupCommitted?(requests: number): void;
  subscriberFailed?(view: string, code: string): void;
  /** Rows a REST page or an ad-hoc SELECT examined. */
  rowsExamined?(kind: 'page' | 'select' | 'dml', rows: number): void;
  checkpointWritten?(stats: CheckpointWriteStats): void;
  checkpointFailed?(error: SluiceError): void;
}

export interface SubscribeParams {
  readonly snapshot: boolean;
  readonly resumeFrom: number | undefined;
}

interface FeedEntry {
  readonly feed: ViewFeed;
  readonly sql: string;
  columns: readonly ColumnInfo[];
  key: readonly string[] | null;
  /** False for a historical incarnation met during replay: its changes are not stored. */
  readonly writable: boolean;
  readonly unsubscribe: () => void;
}

interface PendingChange {
  readonly feed: ViewFeed;
  readonly changes: ViewChangeSet;
}

const BACKLOG_PAGE = 256;

/** How long one slice of building a view's ordered index may hold the event loop. */
const READ_SLICE_MS = 8;
/** The same for one slice of a client's SQL script (statements, or a SELECT's input). */
const SCRIPT_SLICE_MS = 8;

/** The gap after a checkpoint is at least this many times its duration. */
const CHECKPOINT_PACING = 10;

/** Loop turns a group waits for more ingest requests before it commits (bounded added latency). */
const GROUP_MAX_HOPS = 4;
/** A group commits at once beyond this many requests (bounds the answers held back). */
const GROUP_MAX_REQUESTS = 64;

interface GroupWaiter {
  readonly resolve: (value: { accepted: number; epoch: number }) => void;
  readonly reject: (error: unknown) => void;
  readonly result: { accepted: number; epoch: number };
  readonly table: string;
  readonly rows: number;
  readonly started: number;
}

export class SluiceRuntime {
  /** Replaced only during recovery (a checkpoint that cannot be loaded falls back to a fresh one). */
  engine: Engine;
  readonly store: SqliteStore;
  readonly log: TableLog;
  readonly changelog: ChangelogStore;
  /** Replaced only at start, when the checkpoint file is found damaged (set aside, started anew). */
  checkpoints: CheckpointStore;
  /** Checkpoints live in a file of their own, so one can be written in slices between epochs. */
  checkpointFile: SqliteStore;
  readonly recovery: RecoveryReport;
  /** The last committed journal offset, outside the data file (null in memory). */
  private readonly highWater: HighWaterMark | null;
  readonly sourceStore: SourceStore;
  readonly connectors: ConnectorManager;
  /** Journal offset of the DDL that created each source and sink now in the catalog. */
  private readonly connectorIncarnations = new Map<string, { sql: string; incarnation: number }>();
  private connectorsChanged = false;
  hooks: RuntimeHooks = {};
  /** The last epoch whose transaction committed (and was published). */
  committedEpoch: number;
  /** Set when the store failed under us: the process must restart (and replay) to recover. */
  failure: SluiceError | null = null;
  private closing = false;
  private readonly feeds = new Map<string, FeedEntry>();
  private pending: PendingChange[] = [];
  private pendingDrops: ViewFeed[] = [];
  private ddlSinceSync = false;
  private replaying = false;
  private replayAt = 0;
  /** While the journal after a checkpoint is replayed: stored changelog entries matched, per view. */
  private replayCheck: Map<string, number> | null = null;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly starting = new Set<Subscriber>();
  /** Clients' scripts run one at a time: the last one queued settles this. */
  private scripts: Promise<void> = Promise.resolve();
  /** One memory budget for every subscriber's queued bytes and the snapshots they stream. */
  readonly subscriberBudget: SubscriberBudget;
  /** Subscribers (starting or live) per view, for the subscriber caps. */
  private readonly subscriberCounts = new Map<string, number>();
  private subscriberTotal = 0;
  /** Subscribers refused by the caps (metrics). */
  subscribersRefused = 0;
  /** Ordered indexes with snapshots being streamed, and how many streams hold each. */
  private readonly snapshotHolds = new Map<OrderedIndex, number>();
  /** Ingest requests applied in the open transaction, answered once it commits. */
  private group: GroupWaiter[] = [];
  private groupScheduled = false;
  private groupSeen = 0;
  private groupHops = 0;
  /** Tells a stale loop-turn callback (its group was committed early by a flush) to stop. */
  private groupGeneration = 0;
  /** Commits of ingest groups and the requests they carried (metrics, tests). */
  groupCommits = 0;
  groupedRequests = 0;
  // Checkpoint bookkeeping: what the stored checkpoint covers, and when the last attempt was.
  private checkpointEpoch = -1;
  private checkpointOffset = -1;
  private lastCheckpointAttempt = performance.now();
  private checkpointing = false;
  private checkpointsWritten = 0;
  private checkpointFailures = 0;
  private lastCheckpointError: string | null = null;
  private lastCheckpointStats: CheckpointWriteStats | null = null;

  constructor(private readonly options: RuntimeOptions) {
    this.subscriberBudget = new SubscriberBudget(options.subscriberMemory ?? DEFAULTS.subscriberMemory);
    this.subscriberBudget.retained = () => {
      let bytes = 0;
      for (const index of this.snapshotHolds.keys()) bytes += index.retainedBytes;
      return bytes;
    };
    this.store = new SqliteStore({
      dataDir: options.dataDir,
      ...(options.verifyOnOpen !== undefined ? { verifyOnOpen: options.verifyOnOpen } : {}),
    });
    // Closed again if the start fails after opening them.
    const opened: { close(): void }[] = [this.store];
    try {
      this.changelog = new ChangelogStore(this.store.db, this.store.checksummedFrom.changelog);
      this.log = new TableLog(this.store, {
        beforeAppend: () => {
          if (this.ddlSinceSync) this.syncCatalog();
        },
        afterDdl: () => {
          this.ddlSinceSync = true;
        },
      });
      this.sourceStore = new SourceStore(this.store.db);
      this.highWater = options.dataDir === null ? null : new HighWaterMark(options.dataDir);
      if (this.highWater !== null) opened.push(this.highWater);
      const checkpoints = this.openCheckpoints();
      this.checkpointFile = checkpoints.file;
      this.checkpoints = checkpoints.store;
      opened.push(this.checkpointFile);
      this.engine = options.createEngine();
      this.recovery = this.recover(checkpoints.damage);
      this.engine.selectLimits = options.selectLimits ?? DEFAULTS.selectLimits;
      this.committedEpoch = this.engine.epoch;
      this.highWater?.record(this.log.lastOffset, this.engine.epoch);
      this.engine.setJournal(this.log);
      // Judged from here on only: a replayed CREATE SOURCE/SINK was allowed when it ran.
      const hosts = connectorHostsAfterRecovery(options.connectorHosts ?? null, this.engine.catalog());
      this.engine.setConnectorCheck((brokers) => connectorHostError(hosts, brokers));
      this.connectors = new ConnectorManager(
        this.connectorHost(),
        options.logger,
        this.store.instanceId,
        hosts,
        options.connectorConnectTimeoutMs,
      );
    } catch (error) {
      for (const o of opened.reverse()) o.close();
      throw error;
    }
    this.pruneAll();
    this.syncConnectors();
    const heartbeat = setInterval(() => this.heartbeat(), Math.max(10, Math.floor(options.heartbeatMs / 2)));
    const prune = setInterval(() => this.pruneAll(), Math.max(10, options.pruneIntervalMs));
    // Streams waiting for room in the subscriber budget: members may have fallen behind since.
    const budget = setInterval(() => this.subscriberBudget.wake(), 250);
    heartbeat.unref();
    prune.unref();
    budget.unref();
    this.timers.push(heartbeat, prune, budget);
    if (options.checkpoint !== null) {
      // Also when no request arrives: an idle server's last writes reach a checkpoint in time.
      const tick = setInterval(
        () => this.maybeCheckpoint(),
        Math.max(10, Math.min(1000, options.checkpoint.intervalMs)),
      );
      tick.unref();
      this.timers.push(tick);
    }
  }

  get ready(): boolean {
    return !this.closing && this.failure === null;
  }

  // ---- writes -------------------------------------------------------------------------------

  executeScript(sql: string): ScriptResult {
    return this.write(() => this.engine.executeScript(sql));
  }

  /**
   * Runs a script for a client (POST /v1/sql) in slices of about SCRIPT_SLICE_MS: between them other
   * requests, ingest and epochs go on, so no script holds the server however long it is (600 views
   * in one request, a SELECT over millions of rows). Each slice commits what its statements did and
   * publishes their epochs. Scripts run one at a time, in the order they arrived.
   */
  executeSql(sql: string): Promise<ScriptResult> {
    const run = this.scripts.then(() => this.runSliced(sql));
    this.scripts = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async runSliced(sql: string): Promise<ScriptResult> {
    const run = this.engine.runScript(sql);
    try {
      for (;;) {
        const result = this.write(() => run.step(performance.now() + SCRIPT_SLICE_MS));
        if (result !== null) return result;
        await yieldToLoop();
        if (this.failure !== null) return run.stop(this.failure);
        if (this.closing) {
          return run.stop(
            new SluiceError('UNAVAILABLE', 'server is shutting down', {
              detail: 'the statements before this one were run; the rest were not',
            }),
          );
        }
      }
    } finally {
      if (run.rowsRead > 0) this.hooks.rowsExamined?.('select', run.rowsRead);
      if (run.dmlRowsRead > 0) this.hooks.rowsExamined?.('dml', run.dmlRowsRead);
    }
  }

  execute(sql: string): readonly StatementResult[] {
    return this.write(() => this.engine.execute(sql));
  }

  /** Synchronous ingest: applies and commits at once (commits any open group first). */
  ingest(table: string, changes: TableChanges): { accepted: number; epoch: number } {
    const started = performance.now();
    const result = this.write(() => this.engine.applyChanges(table, changes));
    const rows = (changes.insert?.length ?? 0) + (changes.delete?.length ?? 0);
    this.hooks.batchApplied?.(table, rows, (performance.now() - started) / 1000);
    return result;
  }

  /**
   * Group-committed ingest: the batch is validated and applied now, as its own epoch (a rejected
   * batch throws here and leaves no effect), into the open transaction; the promise resolves once
   * that transaction committed and the epoch was published. A commit failure rejects every request
   * of the group.
   */
  ingestGrouped(table: string, changes: TableChanges): Promise<{ accepted: number; epoch: number }> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new SluiceError('UNAVAILABLE', 'server is shutting down'));
    const started = performance.now();
    let result: { accepted: number; epoch: number };
    try {
      result = this.engine.applyChanges(table, changes);
    } catch (error) {
      try {
        this.settleFailedCall();
      } catch (e) {
        this.fail(e);
        this.rejectGroup(this.failure);
        return Promise.reject(this.failure);
      }
      // Whatever the failed call left in the transaction commits with the group, as before.
      if (this.store.inTransaction) this.scheduleGroup();
      return Promise.reject(error);
    }
    this.log.lastBatch = null;
    const rows = (changes.insert?.length ?? 0) + (changes.delete?.length ?? 0);
    const done = new Promise<{ accepted: number; epoch: number }>((resolve, reject) => {
      this.group.push({ resolve, reject, result, table, rows, started });
    });
    if (this.group.length >= GROUP_MAX_REQUESTS) this.flush();
    else this.scheduleGroup();
    return done;
  }

  private scheduleGroup(): void {
    if (this.groupScheduled) return;
    this.groupScheduled = true;
    // At least one full loop turn: requests that arrived while this one was applied join it.
    this.groupSeen = 0;
    this.groupHops = 0;
    const generation = ++this.groupGeneration;
    setImmediate(() => this.groupTick(generation));
  }

  /** One loop turn passed: wait another if new requests joined (up to a bound), else commit. */
  private groupTick(generation: number): void {
    if (!this.groupScheduled || generation !== this.groupGeneration) return;
    if (this.group.length > this.groupSeen && this.groupHops < GROUP_MAX_HOPS) {
      this.groupSeen = this.group.length;
      this.groupHops += 1;
      setImmediate(() => this.groupTick(generation));
      return;
    }
    this.flush();
  }

  /**
   * Commits the open ingest group (if any), publishes its epochs and resolves its answers. Called
   * before anything that reads state or writes outside the group, so they see committed epochs only.
   */
  flush(): void {
    this.groupScheduled = false;
    const group = this.group;
    if (group.length === 0 && this.pending.length === 0 && !this.store.inTransaction) return;
    if (this.failure !== null) {
      this.rejectGroup(this.failure);
      return;
    }
    this.group = [];
    try {
      if (this.ddlSinceSync) this.syncCatalog();
      if (this.store.inTransaction) crashPoint('before-commit');
      this.store.commit();
      this.highWater?.record(this.log.lastOffset, this.engine.epoch);
    } catch (e) {
      this.fail(e);
      for (const w of group) w.reject(this.failure);
      return;
    }
    crashPoint('after-commit');
    this.committedEpoch = this.engine.epoch;
    this.publish();
    if (group.length > 0) {
      this.groupCommits += 1;
      this.groupedRequests += group.length;
      this.hooks.groupCommitted?.(group.length);
    }
    const now = performance.now();
    for (const w of group) {
      // Batch time as before: from the request's apply to its durable commit and publication.
      this.hooks.batchApplied?.(w.table, w.rows, (now - w.started) / 1000);
      w.resolve(w.result);
    }
    this.maybeCheckpoint();
  }

  private rejectGroup(error: unknown): void {
    const group = this.group;
    this.group = [];
    this.groupScheduled = false;
    this.pending = [];
    for (const w of group) w.reject(error);
  }

  /** A batch logged but not applied (the engine failed after validation) is taken back. */
  private settleFailedCall(): void {
    const last = this.log.lastBatch;
    if (last !== null && last.epoch > this.engine.epoch) this.log.retractLastBatch();
    this.log.lastBatch = null;
  }

  /**
   * Runs one engine call inside one transaction: the journal entries it appends and the changelog
   * entries its epochs produce commit together, then the epochs are published to subscribers.
   */
  private write<T>(call: () => T): T {
    if (this.failure !== null) throw this.failure;
    if (this.closing) throw new SluiceError('UNAVAILABLE', 'server is shutting down');
    this.flush();
    if (this.failure !== null) throw this.failure;
    let result: T | undefined;
    let error: unknown;
    let threw = false;
    try {
      result = call();
    } catch (e) {
      threw = true;
      error = e;
    }
    try {
      this.settleFailedCall();
      if (this.ddlSinceSync) this.syncCatalog();
      if (this.store.inTransaction) crashPoint('before-commit');
      this.store.commit();
      this.highWater?.record(this.log.lastOffset, this.engine.epoch);
    } catch (e) {
      this.fail(e);
      throw this.failure;
    }
    crashPoint('after-commit');
    this.committedEpoch = this.engine.epoch;
    this.publish();
    this.syncConnectors();
    this.maybeCheckpoint();
    if (threw) throw error;
    return result as T;
  }

  private fail(error: unknown): void {
    this.failure = new SluiceError(
      'STATE_ERROR',
      'the data file could not be written; restart the server to recover',
      {
        detail: error instanceof Error ? error.message : String(error),
      },
    );
    this.options.logger.error({ err: error }, 'durable store failed; refusing further writes');
    // Epochs of the failed transaction are never published.
    this.pending = [];
    try {
      this.store.rollback();
    } catch {
      // the connection is unusable; the process must restart
    }
  }

  private publish(): void {
    const pending = this.pending;
    this.pending = [];
    // The wire message is written once per epoch and view, and only for a view someone listens to.
    for (const p of pending) {
      if (p.feed.subscribers.size > 0) {
        p.feed.publish(p.changes.epoch, encodeChangesWire(p.changes));
        crashPoint('while-publishing');
      }
    }
    if (pending.length > 0) this.connectors?.committed();
    const drops = this.pendingDrops;
    this.pendingDrops = [];
    for (const feed of drops) {
      feed.closeAll('VIEW_DROPPED', CloseCodes.viewDropped, `view "${feed.view}" was dropped`);
    }
  }

  // ---- catalog → feeds ----------------------------------------------------------------------

  /** Matches the feeds (one per view incarnation) to the engine's catalog. */
  private syncCatalog(): void {
    this.ddlSinceSync = false;
    // Runs after every DDL statement: only names and definitions are compared (a script of many
    // CREATEs would otherwise build every view's full entry once per statement).
    const catalog = this.engine.catalogDefinitions();
    const seen = new Set<string>();
    for (const view of catalog.views) {
      seen.add(view.name);
      const entry = this.feeds.get(view.name);
      if (entry !== undefined && entry.sql === view.sql) continue;
      if (entry !== undefined) this.endFeed(view.name, entry);
      const info = this.engine.viewInfo(view.name);
      if (info !== undefined) this.startFeed(info);
    }
    for (const [name, entry] of this.feeds) if (!seen.has(name)) this.endFeed(name, entry);
    this.trackConnectors(catalog);
  }

  /** Records the incarnation of each new source and sink; a dropped source's positions go. */
  private trackConnectors(catalog: ReturnType<Engine['catalogDefinitions']>): void {
    const live = new Map<string, string>();
    for (const s of catalog.sources) live.set(s.name, s.sql);
    for (const s of catalog.sinks) live.set(s.name, s.sql);
    for (const [name, known] of this.connectorIncarnations) {
      if (live.get(name) === known.sql) continue;
      this.connectorIncarnations.delete(name);
      this.sourceStore.drop(name, known.incarnation);
      this.connectorsChanged = true;
    }
    for (const [name, sql] of live) {
      if (this.connectorIncarnations.has(name)) continue;
      this.connectorIncarnations.set(name, { sql, incarnation: this.log.lastDdlOffset });
      this.connectorsChanged = true;
    }
  }

  /** Starts and stops connectors after the catalog changed (never during recovery). */
  private syncConnectors(): void {
    if (!this.connectorsChanged || this.replaying || this.closing || this.connectors === undefined) return;
    this.connectorsChanged = false;
    const catalog = this.engine.catalog();
    this.connectors.sync(
      catalog.sources,
      catalog.sinks,
      (name) => this.connectorIncarnations.get(name)?.incarnation ?? 0,
    );
  }

  // ---- connectors ----------------------------------------------------------------------------

  private connectorHost() {
    return {
      applySourceBatch: (source: string, incarnation: number, batch: SourceBatch) =>
        this.applySourceBatch(source, incarnation, batch),
      storedOffsets: (source: string, incarnation: number) => this.sourceStore.offsets(source, incarnation),
      rowCheck: (source: string) => this.engine.sourceRowCheck(source),
      sinkFeed: (sink: SinkInfo) => this.sinkFeed(sink),
    };
  }

  /**
   * One source batch as one epoch, committed with the source's positions and skipped records; an
   * empty batch (only tombstones of unknown keys, only skipped records) still records its positions.
   */
  private applySourceBatch(source: string, incarnation: number, batch: SourceBatch): void {
    this.write(() => {
      if (this.connectorIncarnations.get(source)?.incarnation !== incarnation) {
        throw new SluiceError('UNKNOWN_TABLE', `source "${source}" was dropped`);
      }
      if (batch.upserts.length > 0 || batch.deletes.length > 0) {
        this.engine.applyChanges(
          source,
          // Each row was checked by the decoder with the source's own validation; the engine checks again.
          { insert: batch.upserts as Row[], delete: batch.deletes as Row[] },
          { fromSource: true, positions: { [source]: batch.positions }, ignoreMissingDeletes: true },
        );
      }
      // Skipped records become rows of the source's errors relation (an epoch of their own, in the
      // same transaction), so views and ad-hoc SELECTs can read them.
      const errorsRelation = `${source}_errors`;
      if (batch.skipped.length > 0 && this.engine.writtenByConnector(errorsRelation)) {
        this.engine.applyChanges(
          errorsRelation,
          {
            insert: batch.skipped.map((r) => ({
              topic: r.topic,
              kafka_partition: r.partition,
              kafka_offset: r.offset,
              reason: r.reason,
              raw: r.raw,
            })),
          },
          { fromSource: true, positions: { [source]: batch.positions } },
        );
      }
      this.store.begin();
      const next = new Map<number, number>();
      for (const [p, range] of Object.entries(batch.positions.partitions)) next.set(Number(p), range.next);
      this.sourceStore.saveOffsets(source, incarnation, next);
    });
  }

  private sinkFeed(sink: SinkInfo): SinkFeed {
    const view = sink.view;
    return {
      key: () => this.feeds.get(view)?.key ?? null,
      committedEpoch: () => this.committedEpoch,
      horizon: () => this.changelog.info(view)?.horizon ?? this.committedEpoch,
      read: (after, upTo, limit) =>
        this.changelog.read(view, after, upTo, limit).map((c) => ({
          epoch: c.epoch,
          changes: (JSON.parse(storedToWire(c.epoch, c.message)) as { changes: WireChange[] }).changes,
        })),
      snapshot: () => {
        this.flush();
        const snap = this.engine.viewSnapshot(view);
        // Wire JSON values (bigints as strings), as in the changelog.
        const rows = JSON.parse(stringifyWire(snap.rows)) as Record<string, unknown>[];
        return { epoch: snap.epoch, rows };
      },
    };
  }

  sourceReports(): SourceReport[] {
    return this.connectors.sourceReports();
  }

  sinkReports(): SinkReport[] {
    return this.connectors.sinkReports();
  }

  /** Records a source skipped (on_error = 'skip'), oldest first, after the record id `afterId`. */
  skippedRecords(source: string, afterId: number, limit: number): SkippedRecordRow[] {
    if (!this.connectorIncarnations.has(source) || !this.engine.writtenByConnector(source)) {
      throw new SluiceError('UNKNOWN_TABLE', `source "${source}" does not exist`);
    }
    // The errors relation is the one store of skipped records; it only grows, in arrival order, so
    // a record's id is its position in it.
    const relation = `${source}_errors`;
    if (!this.engine.writtenByConnector(relation)) return [];
    return this.engine.tableRowsRange(relation, afterId, afterId + limit).map((r, i) => ({
      id: afterId + i + 1,
      topic: String(r.topic),
      partition: Number(r.kafka_partition),
      offset: Number(r.kafka_offset),
      reason: String(r.reason),
      raw: r.raw === null ? null : String(r.raw),
    }));
  }

  private startFeed(view: ViewInfo): void {
    const incarnation = this.log.lastDdlOffset;
    const info = this.changelog.register(view.name, incarnation, this.engine.epoch);
    const feed = new ViewFeed(view.name, incarnation);
    feed.onBehind = (sub) => void this.follow(sub, feed, view.name);
    const writable = info.incarnation === incarnation;
    const unsubscribe = this.engine.subscribe(
      view.name,
      (changes) => this.onChanges(feed, writable, changes),
      // Dropped (also by CASCADE): called inside the DDL's engine call, so inside its transaction.
      () => {
        const entry = this.feeds.get(view.name);
        if (entry !== undefined && entry.feed === feed) this.endFeed(view.name, entry);
      },
    );
    this.feeds.set(view.name, {
      feed,
      sql: view.sql,
      columns: view.columns,
      key: view.key,
      writable,
      unsubscribe,
    });
  }

  private endFeed(name: string, entry: FeedEntry): void {
    entry.unsubscribe();
    this.feeds.delete(name);
    const info = this.changelog.info(name);
    if (info !== undefined && info.incarnation === entry.feed.incarnation) this.changelog.drop(name);
    entry.feed.closed = true;
    if (!this.replaying) this.pendingDrops.push(entry.feed);
  }

  private onChanges(feed: ViewFeed, writable: boolean, changes: ViewChangeSet): void {
    if (!writable) return;
    // Stored compactly (changelog-codec.ts); the wire message is written at publication, if needed.
    if (this.replaying) {
      const info = this.changelog.info(feed.view);
      if (info === undefined || changes.epoch <= info.horizon) return;
      const message = encodeChangesStored(changes);
      const verify = this.replayCheck;
      const stored = verify === null ? undefined : this.changelog.get(feed.view, changes.epoch);
      if (verify === null || stored === undefined) {
        this.changelog.append(feed.view, changes.epoch, this.replayAt, message);
        return;
      }
      // Replaying the journal after a checkpoint recomputes what the run before the crash stored:
      // a difference means the checkpoint's state is not the state of its journal offset.
      if (!sameStoredChanges(changes.epoch, stored.message, message)) {
        throw new SluiceError(
          'STATE_ERROR',
          `the checkpoint disagrees with the journal: replaying epoch ${changes.epoch} gives other changes of view "${feed.view}" than it stored`,
        );
      }
      verify.set(feed.view, (verify.get(feed.view) ?? 0) + 1);
      return;
    }
    this.changelog.append(feed.view, changes.epoch, Date.now(), encodeChangesStored(changes));
    this.pending.push({ feed, changes });
    this.hooks.viewChanges?.(feed.view, changes.changes.length);
  }

  // ---- recovery -----------------------------------------------------------------------------

  /**
   * Rebuilds the engine from the data file: with a usable checkpoint, the catalog by replaying the
   * DDL it covers, the state from the checkpoint, then the journal after it; without one (or when it
   * is damaged or belongs to another catalog), the whole journal. A damaged journal entry refuses
   * the start: state is never served from input that cannot be read back exactly.
   */
  private recover(checkpointDamage: string | null): RecoveryReport {
    const started = performance.now();
    const logger = this.options.logger;
    const tracking = this.options.checkpoint !== null;
    this.engine.setStateTracking(tracking);
    let fallbackReason: string | null = checkpointDamage;
    let stored: ReturnType<CheckpointStore['read']> = null;
    if (tracking && checkpointDamage === null) {
      try {
        stored = this.checkpoints.read();
      } catch (error) {
        fallbackReason = errorText(error);
        logger.error({ err: error }, 'the checkpoint is damaged; recovering from the whole journal instead');
        this.discardCheckpoints();
      }
    }
    this.checkAcknowledged(stored?.journalOffset ?? null, stored?.checkpoint.epoch ?? null);
    if (stored !== null) {
      try {
        const report = this.recoverFromCheckpoint(stored.checkpoint, stored.journalOffset, started);
        logger.info({ ...report, epoch: this.engine.epoch }, 'recovered from the checkpoint');
        return report;
      } catch (error) {
        if (isJournalDamage(error)) throw error;
        // The journal is whole, so it alone gives the right state: recover from it, and say so.
        fallbackReason = errorText(error);
        logger.error(
          { err: error, checkpointEpoch: stored.checkpoint.epoch },
          'recovery from the checkpoint failed; replaying the whole journal instead',
        );
        this.resetForFullReplay();
        this.discardCheckpoints();
      }
    }
    const replayedEntries = this.replay(this.log.entries(0));
    const report: RecoveryReport = {
      checkpointEpoch: null,
      checkpointOffset: null,
      replayedEntries,
      rebuiltViews: [],
      fallbackReason,
      ms: performance.now() - started,
    };
    if (replayedEntries > 0) logger.info({ ...report, epoch: this.engine.epoch }, 'replayed the journal');
    return report;
  }

  /**
   * Refuses a start whose journal ends before what was committed earlier — by the high-water mark,
   * or by the checkpoint's own journal offset: SQLite's write-ahead log was lost or damaged, and
   * acknowledged writes with it. Serving the shorter journal would silently forget them.
   */
  private checkAcknowledged(checkpointOffset: number | null, checkpointEpoch: number | null): void {
    const mark = this.highWater?.read() ?? { kind: 'none' };
    if (mark.kind === 'damaged') {
      this.options.logger.warn(
        { file: this.highWater?.path, detail: mark.detail },
        'the high-water mark is unreadable; the journal is not checked against it this time',
      );
    }
    const candidates: { offset: number; epoch: number; by: string }[] = [];
    if (mark.kind === 'mark') candidates.push({ ...mark.mark, by: 'the high-water mark' });
    if (checkpointOffset !== null && checkpointEpoch !== null) {
      candidates.push({ offset: checkpointOffset, epoch: checkpointEpoch, by: 'the checkpoint' });
    }
    const ends = this.log.lastOffset;
    const beyond = candidates.filter((c) => c.offset > ends).sort((a, b) => b.offset - a.offset)[0];
    if (beyond === undefined) return;
    throw new SluiceError(
      'STATE_ERROR',
      `acknowledged writes are missing from "${this.store.path}": its journal ends at offset ${ends}, but ${beyond.by} records offset ${beyond.offset} (epoch ${beyond.epoch}) as committed`,
      {
        detail: `journal entries ${ends + 1}–${beyond.offset} are gone: the file's write-ahead log (${this.store.path}-wal) was deleted or damaged, or the file was replaced by an older copy`,
        hint: 'restore the whole data directory from a backup; to start on purpose from this older journal, remove sluice.hwm and checkpoint.db from the data directory first',
      },
    );
  }

  /**
   * The catalog by replaying the DDL the checkpoint covers, its state, then the journal after it —
   * checking every epoch replayed against the changelog stored before the restart, and that none
   * of those stored entries was left unmatched, so a checkpoint that is not the state of its
   * journal offset is found here instead of being served.
   */
  private recoverFromCheckpoint(
    checkpoint: StoredCheckpointData,
    journalOffset: number,
    started: number,
  ): RecoveryReport {
    this.replay(this.log.ddlEntries(journalOffset));
    const rebuiltViews = this.engine.loadCheckpoint(checkpoint).rebuilt;
    if (rebuiltViews.length > 0) {
      this.options.logger.warn(
        { views: rebuiltViews },
        'views whose plan changed were rebuilt from their inputs',
      );
    }
    const matched = new Map<string, number>();
    this.replayCheck = matched;
    let replayedEntries: number;
    try {
      replayedEntries = this.replay(this.log.entries(journalOffset));
    } finally {
      this.replayCheck = null;
    }
    for (const [view, entry] of this.feeds) {
      if (!entry.writable) continue;
      const info = this.changelog.info(view);
      if (info === undefined) continue;
      const stored = this.changelog.countAfter(view, Math.max(checkpoint.epoch, info.horizon));
      if (stored !== (matched.get(view) ?? 0)) {
        throw new SluiceError(
          'STATE_ERROR',
          `the checkpoint disagrees with the journal: view "${view}" stored ${stored} changes after epoch ${checkpoint.epoch}, replaying the journal gives ${matched.get(view) ?? 0}`,
        );
      }
    }
    this.checkpointEpoch = checkpoint.epoch;
    this.checkpointOffset = journalOffset;
    return {
      checkpointEpoch: checkpoint.epoch,
      checkpointOffset: journalOffset,
      replayedEntries,
      rebuiltViews,
      fallbackReason: null,
      ms: performance.now() - started,
    };
  }

  /**
   * Opens the checkpoint file. One that cannot be opened or fails its integrity check is set aside
   * (renamed `checkpoint.db.damaged`) and a new one started: the journal holds everything, so a
   * damaged checkpoint costs a full replay, never the start. Returns what was wrong, if anything.
   */
  private openCheckpoints(): { file: SqliteStore; store: CheckpointStore; damage: string | null } {
    const open = () => {
      const file = new SqliteStore({
        dataDir: this.options.dataDir,
        file: CHECKPOINT_FILE,
        journal: false,
        ...(this.options.verifyOnOpen !== undefined ? { verifyOnOpen: this.options.verifyOnOpen } : {}),
      });
      try {
        const store = new CheckpointStore(file.db, {
          beforeHeader: () => crashPoint('during-checkpoint'),
          betweenSlices: () => crashPoint('between-checkpoint-slices'),
        });
        return { file, store };
      } catch (error) {
        file.close();
        throw error;
      }
    };
    try {
      return { ...open(), damage: null };
    } catch (error) {
      const dir = this.options.dataDir;
      if (dir === null) throw error;
      const damage = `the checkpoint file cannot be opened: ${errorText(error)}`;
      const aside = setAsideDamaged(dir, CHECKPOINT_FILE);
      this.options.logger.error(
        { err: error, setAside: aside },
        'the checkpoint file is damaged; it was set aside and the whole journal is replayed instead',
      );
      return { ...open(), damage };
    }
  }

  /** Forgets the stored checkpoint after it was found unusable; the next one is full. */
  private discardCheckpoints(): void {
    try {
      this.checkpoints.clear();
      return;
    } catch (error) {
      const dir = this.options.dataDir;
      if (dir === null) throw error;
      // Too damaged even to be emptied: set aside like one that cannot be opened.
      this.checkpointFile.close();
      const aside = setAsideDamaged(dir, CHECKPOINT_FILE);
      this.options.logger.error({ err: error, setAside: aside }, 'the damaged checkpoint file was set aside');
      const fresh = this.openCheckpoints();
      this.checkpointFile = fresh.file;
      this.checkpoints = fresh.store;
    }
  }

  /** Forgets a partly recovered engine and its feeds, so the whole journal can be replayed. */
  private resetForFullReplay(): void {
    this.checkpointEpoch = -1;
    this.checkpointOffset = -1;
    this.store.rollback();
    for (const entry of this.feeds.values()) entry.unsubscribe();
    this.feeds.clear();
    this.ddlSinceSync = false;
    this.engine = this.options.createEngine();
    this.engine.setStateTracking(true);
  }

  /** Applies journal entries to the engine, reproducing their epochs; returns how many. */
  private replay(entries: Iterable<LoggedEntry>): number {
    this.replaying = true;
    this.engine.setJournal(null);
    let applied = 0;
    try {
      for (const entry of entries) {
        this.store.begin();
        this.replayAt = entry.at;
        try {
          if (entry.kind === 'ddl') {
            if (this.ddlSinceSync) this.syncCatalog();
            this.log.lastDdlOffset = entry.offset;
            // Accepted once, so replayed whatever today's limits say (an older data file may exceed them).
            this.engine.execute(entry.sql, { limits: REPLAY_SQL_LIMITS });
            this.ddlSinceSync = true;
          } else {
            if (this.ddlSinceSync) this.syncCatalog();
            const fromSource = this.engine.writtenByConnector(entry.table);
            const result = this.engine.applyChanges(
              entry.table,
              { insert: entry.inserts, delete: entry.deletes },
              { positions: entry.positions, fromSource },
            );
            if (result.epoch !== entry.epoch) {
              throw new SluiceError(
                'STATE_ERROR',
                `replay diverged: log offset ${entry.offset} produced epoch ${result.epoch}, logged as ${entry.epoch}`,
              );
            }
          }
        } catch (error) {
          if (error instanceof SluiceError && error.code === 'STATE_ERROR') throw error;
          throw new SluiceError('STATE_ERROR', `replay of log offset ${entry.offset} failed`, {
            detail: errorText(error),
          });
        }
        applied += 1;
        if (applied % 256 === 0) this.store.commit();
      }
      if (this.ddlSinceSync) this.syncCatalog();
      this.store.commit();
    } catch (error) {
      this.store.rollback();
      throw error;
    } finally {
      this.replaying = false;
    }
    return applied;
  }

  // ---- checkpoints ----------------------------------------------------------------------------

  /** Takes a checkpoint when the policy says one is due and something changed since the last. */
  private maybeCheckpoint(): void {
    const policy = this.options.checkpoint;
    if (policy === null || this.checkpointing || !this.ready || this.store.inTransaction) return;
    if (!this.changedSinceCheckpoint()) return;
    const elapsed = performance.now() - this.lastCheckpointAttempt;
    // A checkpoint pauses everything: after one that took d ms the next waits at least
    // CHECKPOINT_PACING·d, so checkpoints never take more than ~1/CHECKPOINT_PACING of the time
    // (a large state being loaded is not checkpointed over and over).
    if (elapsed < CHECKPOINT_PACING * (this.lastCheckpointStats?.busyMs ?? 0)) return;
    const due = this.committedEpoch - this.checkpointEpoch >= policy.epochs || elapsed >= policy.intervalMs;
    if (due) void this.checkpointInSlices();
  }

  private changedSinceCheckpoint(): boolean {
    return this.committedEpoch !== this.checkpointEpoch || this.log.lastOffset !== this.checkpointOffset;
  }

  /**
   * Commits the open group, then writes a checkpoint of the committed state at once (incremental
   * when the previous one was written). Used at shutdown and by tests; while serving, checkpoints
   * are written in slices (`checkpointInSlices`). A failure (disk full, I/O) is logged and counted;
   * the previous checkpoint stays whole and the next attempt is a full one.
   */
  checkpoint(): CheckpointWriteStats | null {
    if (!this.startCheckpoint()) return null;
    try {
      return this.checkpointWritten(this.checkpoints.checkpoint(this.engine, this.log.lastOffset));
    } catch (error) {
      this.checkpointFailed(error);
      return null;
    } finally {
      this.checkpointing = false;
    }
  }

  /**
   * A checkpoint of the committed state, written in slices of about 10 ms between which epochs go
   * on (the state is taken at once, so the checkpoint is of one epoch): a large checkpoint costs
   * throughput, never a multi-second stall. Resolves with null when it failed (logged, counted).
   */
  async checkpointInSlices(): Promise<CheckpointWriteStats | null> {
    if (!this.startCheckpoint()) return null;
    try {
      const stats = await this.checkpoints.checkpointSliced(
        this.engine,
        this.log.lastOffset,
        this.options.checkpoint?.sliceMs,
      );
      return this.closing ? null : this.checkpointWritten(stats);
    } catch (error) {
      if (!this.closing) this.checkpointFailed(error);
      return null;
    } finally {
      this.checkpointing = false;
    }
  }

  /**
   * Commits the open group so the checkpoint is of committed state, and claims the one checkpoint
   * that may run at a time; false when checkpoints are off, one is running or the store failed.
   */
  private startCheckpoint(): boolean {
    if (this.options.checkpoint === null || this.checkpointing || this.failure !== null) return false;
    this.checkpointing = true;
    this.flush();
    if (this.failure !== null || this.store.inTransaction) {
      this.checkpointing = false;
      return false;
    }
    this.lastCheckpointAttempt = performance.now();
    return true;
  }

  private checkpointWritten(stats: CheckpointWriteStats): CheckpointWriteStats {
    crashPoint('after-checkpoint');
    this.highWater?.sync();
    this.checkpointEpoch = stats.epoch;
    this.checkpointOffset = stats.journalOffset;
    this.checkpointsWritten += 1;
    this.lastCheckpointStats = stats;
    this.lastCheckpointError = null;
    this.hooks.checkpointWritten?.(stats);
    return stats;
  }

  private checkpointFailed(error: unknown): void {
    const failure =
      error instanceof SluiceError
        ? error
        : new SluiceError('STATE_ERROR', 'checkpoint failed', { detail: errorText(error) });
    this.checkpointFailures += 1;
    this.lastCheckpointError = failure.message;
    this.options.logger.error({ err: failure }, 'checkpoint failed; the previous checkpoint is kept');
    this.hooks.checkpointFailed?.(failure);
  }

  checkpointStatus(): CheckpointStatus {
    return {
      enabled: this.options.checkpoint !== null,
      epoch: this.checkpointEpoch >= 0 ? this.checkpointEpoch : null,
      journalOffset: this.checkpointOffset >= 0 ? this.checkpointOffset : null,
      written: this.checkpointsWritten,
      failures: this.checkpointFailures,
      lastError: this.lastCheckpointError,
      last: this.lastCheckpointStats,
    };
  }

  // ---- reads and subscriptions ----------------------------------------------------------------

  viewNames(): string[] {
    return [...this.feeds.keys()];
  }

  subscriberCount(view: string): number {
    return this.feeds.get(view)?.feed.subscribers.size ?? 0;
  }

  /** Subscribers starting or live, in all. */
  get subscribers(): number {
    return this.subscriberTotal;
  }

  /**
   * A view's reader once its ordered index exists. The first read of a large view builds the index
   * in slices of READ_SLICE_MS, yielding to the event loop between them, so other requests and
   * epochs go on; the reader returned is of the committed epoch, for use in the same synchronous block.
   */
  async viewReader(view: string): Promise<ViewReader> {
    for (;;) {
      this.flush();
      const reader = this.engine.viewReader(view, performance.now() + READ_SLICE_MS);
      if (reader.index !== null) return reader;
      await yieldToLoop();
    }
  }

  /** One page of a view's rows at one epoch (view-rows.ts), read without copying the view. */
  async viewPage(view: string, request: PageRequest): Promise<{ reader: ViewReader; page: Page }> {
    const reader = await this.viewReader(view);
    const page = readPage(view, reader, request, this.options.reads ?? DEFAULTS.reads);
    this.hooks.rowsExamined?.('page', page.examined);
    return { reader, page };
  }

  /** The subscriber memory budget's account and the number of subscribers (metrics). */
  subscriberMemory(): {
    limit: number;
    used: number;
    live: number;
    closing: number;
    retained: number;
    peak: number;
    subscribers: number;
  } {
    const b = this.subscriberBudget;
    return {
      limit: b.limit,
      used: b.used(),
      live: b.liveBytes,
      closing: b.closingBytes,
      retained: b.retained(),
      peak: b.peak,
      subscribers: this.subscriberTotal,
    };
  }

  /**
   * Checks a subscription request; throws UNKNOWN_VIEW, INVALID_REQUEST or RESUME_TOO_OLD before
   * anything is sent (the NDJSON endpoint turns these into HTTP statuses).
   */
  checkSubscription(view: string, params: SubscribeParams): void {
    if (!this.ready) throw new SluiceError('UNAVAILABLE', 'server is shutting down');
    this.flush();
    const entry = this.feeds.get(view);
    if (entry === undefined) throw new SluiceError('UNKNOWN_VIEW', `view "${view}" does not exist`);
    const max = this.options.maxSubscribers ?? DEFAULTS.maxSubscribers;
    const perView = this.options.maxSubscribersPerView ?? DEFAULTS.maxSubscribersPerView;
    const ofView = this.subscriberCounts.get(view) ?? 0;
    if (this.subscriberTotal >= max || ofView >= perView) {
      this.subscribersRefused += 1;
      const which =
        ofView >= perView
          ? `view "${view}" has ${ofView} subscribers, the most allowed per view`
          : `the server has ${this.subscriberTotal} subscribers, the most allowed`;
      throw new SluiceError('TOO_MANY_SUBSCRIBERS', `cannot subscribe to view "${view}": ${which}`, {
        hint: 'retry later, or share one subscription among clients (--max-subscribers, --max-subscribers-per-view)',
      });
    }
    if (params.resumeFrom === undefined) return;
    if (params.resumeFrom > this.committedEpoch) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `resumeFrom ${params.resumeFrom} is after the current epoch ${this.committedEpoch}`,
      );
    }
    const horizon = this.changelog.prune(view, this.committedEpoch, Date.now(), this.options.retention);
    if (params.resumeFrom < horizon) {
      const info = this.changelog.info(view);
      const created = info !== undefined && params.resumeFrom < info.createdEpoch;
      throw new SluiceError(
        'RESUME_TOO_OLD',
        `cannot resume view "${view}" from epoch ${params.resumeFrom}: ${created ? `the view was created at epoch ${info.createdEpoch}` : `changes are retained after epoch ${horizon} only`}`,
        {
          hint: 'subscribe again with a snapshot',
        },
      );
    }
  }

  /**
   * Runs a subscription to completion (until the transport closes). The caller has run
   * checkSubscription in the same synchronous block.
   */
  async subscribe(view: string, params: SubscribeParams, transport: SubscriberTransport): Promise<void> {
    this.flush();
    const entry = this.feeds.get(view);
    if (entry === undefined) throw new SluiceError('UNKNOWN_VIEW', `view "${view}" does not exist`);
    const feed = entry.feed;
    const sub = new Subscriber(
      view,
      transport,
      this.options.limits,
      this.committedEpoch,
      this.subscriberBudget,
    );
    sub.onFail = (code) => this.hooks.subscriberFailed?.(view, code);
    this.starting.add(sub);
    this.countSubscriber(view, 1);
    transport.onClose(() => {
      this.starting.delete(sub);
      this.countSubscriber(view, -1);
    });
    try {
      const hello = (epoch: number, snapshot: boolean, columns: unknown, key: unknown): string =>
        stringifyWire({ type: 'subscribed', view, epoch, snapshot, columns, key });
      // Every message waits for room in the shared budget (send); only live epochs are offered.
      if (params.resumeFrom !== undefined) {
        sub.cursor = params.resumeFrom;
        if (!(await sub.send(hello(params.resumeFrom, false, entry.columns, entry.key)))) return;
      } else if (params.snapshot) {
        if (!(await this.streamSnapshot(sub, view, hello))) return;
      } else {
        // The cursor is taken now: epochs committed while the hello waits come from the backlog.
        if (!(await sub.send(hello(sub.cursor, false, entry.columns, entry.key)))) return;
      }
    } catch (error) {
      this.subscriptionFailed(sub, view, error);
      return;
    }
    await this.follow(sub, feed, view);
  }

  /**
   * The stored backlog after the subscriber's cursor, then live delivery. The switch happens in the
   * synchronous block where the store holds nothing after the cursor up to the committed epoch, so
   * no epoch falls between. Also how a live subscriber that found no room in the budget catches up.
   */
  private async follow(sub: Subscriber, feed: ViewFeed, view: string): Promise<void> {
    if (sub.closed) return;
    this.starting.add(sub);
    // Room for about one more stored epoch is waited for before each read; a page is then written
    // in one go while it fits and the rest is read again later, so a waiting subscriber holds none
    // of its backlog in memory. Pages start at one entry and double while they fit (a subscriber
    // short of room reads only what it can send).
    let room = 0;
    let pageSize = 1;
    try {
      for (;;) {
        if (sub.closed || feed.closed) return;
        if (!(await sub.paced(room))) return;
        if (sub.closed || feed.closed) return;
        const info = this.changelog.info(view);
        if (info === undefined || info.incarnation !== feed.incarnation) return;
        if (sub.cursor < info.horizon) {
          sub.fail(
            'SLOW_CONSUMER',
            CloseCodes.slowConsumer,
            `subscriber of view "${view}" fell behind the changelog retention; resume from epoch ${sub.cursor} or subscribe with a snapshot`,
            { epoch: sub.cursor },
          );
          return;
        }
        const page = this.changelog.read(view, sub.cursor, this.committedEpoch, pageSize);
        if (page.length === 0) {
          this.starting.delete(sub);
          feed.add(sub);
          return;
        }
        pageSize = Math.min(BACKLOG_PAGE, pageSize * 2);
        for (const change of page) {
          const text = feed.recentText(change.epoch) ?? storedToWire(change.epoch, change.message);
          if (!sub.tryWrite(text)) {
            room = Buffer.byteLength(text) + 1;
            pageSize = 1;
            break;
          }
          sub.cursor = change.epoch;
        }
        await yieldToLoop();
      }
    } catch (error) {
      this.subscriptionFailed(sub, view, error);
    } finally {
      if (sub.closed) this.starting.delete(sub);
    }
  }

  private subscriptionFailed(sub: Subscriber, view: string, error: unknown): void {
    if (error instanceof SluiceError) {
      sub.fail(error.code, closeCodeOf(error), error.message);
      return;
    }
    this.options.logger.error({ err: error, view }, 'subscription failed');
    sub.fail('INTERNAL_ERROR', CloseCodes.internal, 'internal error while serving the subscription');
  }

  private countSubscriber(view: string, delta: number): void {
    const n = (this.subscriberCounts.get(view) ?? 0) + delta;
    if (n > 0) this.subscriberCounts.set(view, n);
    else this.subscriberCounts.delete(view);
    this.subscriberTotal += delta;
  }

  /**
   * Streams the view's rows at one epoch from a frozen snapshot of its ordered index: nothing is
   * copied (every subscriber snapshotting at the same epoch shares one frozen version), and a chunk
   * is encoded only once the subscriber's buffer and the shared budget have room for it.
   */
  private async streamSnapshot(
    sub: Subscriber,
    view: string,
    hello: (epoch: number, snapshot: boolean, columns: unknown, key: unknown) => string,
  ): Promise<boolean> {
    const reader = await this.viewReader(view);
    if (sub.closed) return false;
    const frozen = (reader.index as OrderedIndex).freeze();
    this.holdSnapshot(frozen, 1);
    try {
      const epoch = reader.epoch;
      sub.cursor = epoch;
      if (!(await sub.send(hello(epoch, true, reader.columns, reader.key)))) return false;
      const chunkRows = Math.max(1, this.options.snapshotChunkRows);
      const overheads = columnOverheads(reader.columns.map((c) => c.name));
      const cursor = frozen.cursorAt(0);
      do {
        const values: (readonly Row[keyof Row][])[] = [];
        let estimate = 64;
        while (!cursor.done && values.length < chunkRows) {
          const row = cursor.row;
          const take = Math.min(cursor.count - cursor.dup, chunkRows - values.length);
          const bytes = rowJsonBytes(row, overheads);
          for (let i = 0; i < take; i++) values.push(row);
          estimate += bytes * take;
          cursor.dup += take;
          if (cursor.dup >= cursor.count) cursor.nextRow();
        }
        // A turn of the event loop per chunk: other requests and epochs go between chunks even
        // when the room for them is there at once.
        await yieldToLoop();
        if (!(await sub.paced(estimate))) return false;
        const text = stringifyWire({
          type: 'snapshot',
          epoch,
          rows: values.map((v) => reader.toRow(v)),
          more: !cursor.done,
        });
        if (!(await sub.send(text))) return false;
      } while (!cursor.done);
      return sub.send(`{"type":"snapshot_end","epoch":${epoch},"rows":${frozen.size}}`);
    } finally {
      this.holdSnapshot(frozen, -1);
      frozen.release();
    }
  }

  private holdSnapshot(frozen: FrozenIndex, delta: number): void {
    const n = (this.snapshotHolds.get(frozen.source) ?? 0) + delta;
    if (n > 0) this.snapshotHolds.set(frozen.source, n);
    else this.snapshotHolds.delete(frozen.source);
  }

  private heartbeat(): void {
    const now = Date.now();
    for (const entry of this.feeds.values())
      entry.feed.heartbeat(this.committedEpoch, now, this.options.heartbeatMs);
  }

  /** Applies changelog retention to every view (its own small transaction). */
  pruneAll(): void {
    if (this.store.inTransaction || this.failure !== null || !this.store.db.open) return;
    try {
      this.store.begin();
      const now = Date.now();
      for (const name of this.feeds.keys())
        this.changelog.prune(
          name,
          this.committedEpoch,
          now,
          this.options.retention,
          this.connectors.sinkFloor(name),
        );
      this.store.commit();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Closes every subscriber (going away) and the store, after a last checkpoint. */
  close(): void {
    if (this.closing) return;
    // Requests already applied are committed and answered before the store closes.
    if (this.failure === null && this.store.db.open) {
      this.flush();
      // A sliced checkpoint in progress is abandoned (rolled back) for one written now, whole.
      if (this.checkpoints.writing) {
        this.checkpoints.abort();
        this.checkpointing = false;
      }
      // A clean stop restarts without replaying anything.
      if (this.changedSinceCheckpoint()) this.checkpoint();
    }
    this.closing = true;
    // Runners stop at once (no batch is delivered after this); their network close finishes later.
    void this.connectors.close();
    for (const timer of this.timers) clearInterval(timer);
    const message = 'server is shutting down; resume from your last epoch';
    for (const entry of this.feeds.values())
      entry.feed.closeAll('UNAVAILABLE', CloseCodes.goingAway, message);
    for (const sub of this.starting) sub.fail('UNAVAILABLE', CloseCodes.goingAway, message);
    this.starting.clear();
    this.engine.setJournal(null);
    this.store.close();
    this.checkpointFile.close();
    this.highWater?.close();
  }
}

const CHECKPOINT_FILE = 'checkpoint.db';

/**
 * Renames a damaged SQLite file and its write-ahead log to `<file>.damaged[-wal]` (replacing an
 * earlier one), so a new file can start in its place and the old one stays for inspection. A
 * stale `-wal` must not stay beside a new file: SQLite would apply it. Returns the new path.
 */
function setAsideDamaged(dir: string, file: string): string {
  const target = join(dir, `${file}.damaged`);
  for (const suffix of ['', '-wal', '-shm']) {
    const from = join(dir, file + suffix);
    if (existsSync(from)) renameSync(from, target + suffix);
    else rmSync(target + suffix, { force: true });
  }
  return target;
}

/** Lets the event loop run (I/O, timers, other requests) before going on. */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isJournalDamage(error: unknown): boolean {
  return error instanceof SluiceError && error.code === 'STATE_ERROR' && /^journal entry/.test(error.message);
}

export function closeCodeOf(error: SluiceError): number {
  switch (error.code) {
    case 'UNKNOWN_VIEW':
      return CloseCodes.unknownView;
    case 'RESUME_TOO_OLD':
      return CloseCodes.resumeTooOld;
    case 'SLOW_CONSUMER':
      return CloseCodes.slowConsumer;
    case 'VIEW_DROPPED':
      return CloseCodes.viewDropped;
    case 'UNAVAILABLE':
    case 'TOO_MANY_SUBSCRIBERS':
      return CloseCodes.unavailable;
    default:
      return error.errorClass === 'internal' || error.errorClass === 'state'
        ? CloseCodes.internal
        : CloseCodes.invalidRequest;
  }
}
