// The durable engine: wraps the in-memory Engine with the SQLite journal and changelog store, replays
// the journal on open, and fans each committed epoch out to subscribers. Nothing is acknowledged or
// published before the transaction holding it committed (fsync).
import { closeSync, existsSync, fsyncSync, openSync } from 'node:fs';
import type { CheckpointStore } from '../storage/checkpoint-store.ts';
import { ConnectorManager, connectorError, connectorHostsAfterRecovery } from './connectors.ts';
import { CatalogSnapshotStore } from '../storage/catalog-snapshot-store.ts';
import { SourceStore } from '../storage/source-store.ts';
import { HighWaterMark } from '../storage/high-water-mark.ts';
import { ChangelogStore } from '../storage/changelog-store.ts';
import { EpochTimeStore } from '../storage/epoch-time-store.ts';
import { CloseCodes } from '../sink/subscriber.ts';
import { SubscriberBudget } from '../sink/subscriber-budget.ts';
import { BudgetAccount } from '../sink/budget-account.ts';
import { SqliteStore } from '../storage/sqlite-store.ts';
import { TableLog } from '../storage/table-log.ts';
import { JournalRetention, type JournalTrimSlice } from '../storage/journal-retention.ts';
import { crashPoint } from './crash-points.ts';
import { IdempotencyStore } from '../storage/idempotency-store.ts';
import { IdempotencyWindow } from './idempotency-window.ts';
import type { Engine } from '../index.ts';
import { DEFAULTS } from './defaults.ts';
import type { RuntimeOptions, RecoveryReport } from './runtime/types.ts';
import { RuntimeRecovery } from './runtime/recovery.ts';

/** The durable engine; its parts are the classes of ./runtime/ it extends (see runtime/base.ts). */
export class SluiceRuntime extends RuntimeRecovery {
  readonly recovery: RecoveryReport;
  private readonly timers: NodeJS.Timeout[] = [];
  // Opened by the constructor; described where declared (runtime/base.ts).
  engine: Engine;
  readonly store: SqliteStore;
  readonly log: TableLog;
  readonly changelog: ChangelogStore;
  readonly journalRetention: JournalRetention;
  /** A slice of journal retention is queued for the next turn of the event loop. */
  private journalTrimQueued = false;
  readonly epochTimes: EpochTimeStore;
  checkpoints: CheckpointStore;
  checkpointFile: SqliteStore;
  protected readonly highWater: HighWaterMark | null;
  readonly sourceStore: SourceStore;
  readonly catalogSnapshots: CatalogSnapshotStore;
  readonly connectors: ConnectorManager;
  committedEpoch: number;
  readonly subscriberBudget: BudgetAccount;
  readonly idempotency: IdempotencyWindow;

  constructor(options: RuntimeOptions) {
    super(options);
    // The server's one budget (shared by every tenant), or one of its own; this runtime's account of it.
    const shared =
      options.subscriberBudget ?? new SubscriberBudget(options.subscriberMemory ?? DEFAULTS.subscriberMemory);
    this.subscriberBudget = new BudgetAccount(shared, () => {
      let bytes = 0;
      for (const index of this.snapshotHolds.keys()) bytes += index.retainedBytes;
      return bytes;
    });
    this.store = new SqliteStore({
      dataDir: options.dataDir,
      ...(options.verifyOnOpen !== undefined ? { verifyOnOpen: options.verifyOnOpen } : {}),
    });
    // Closed again if the start fails after opening them.
    const opened: { close(): void }[] = [this.store];
    try {
      this.changelog = new ChangelogStore(this.store.db, this.store.checksummedFrom.changelog);
      this.epochTimes = new EpochTimeStore(this.store.db);
      this.log = new TableLog(this.store, {
        beforeAppend: () => {
          if (this.ddlSinceSync) this.syncCatalog();
        },
        afterDdl: () => {
          this.ddlSinceSync = true;
        },
      });
      this.journalRetention = new JournalRetention(this.store);
      this.sourceStore = new SourceStore(this.store.db);
      this.catalogSnapshots = new CatalogSnapshotStore(this.store.db);
      // Rebuilt from the keys committed with their batches (before recovery: it needs no engine).
      this.idempotency = new IdempotencyWindow(
        new IdempotencyStore(this.store.db),
        options.idempotency ?? DEFAULTS.idempotency,
      );
      this.store.begin();
      this.idempotency.load();
      this.store.commit();
      this.highWater = options.dataDir === null ? null : new HighWaterMark(options.dataDir);
      if (this.highWater !== null) opened.push(this.highWater);
      const checkpoints = this.openCheckpoints();
      this.checkpointFile = checkpoints.file;
      this.checkpoints = checkpoints.store;
      opened.push(this.checkpointFile);
      this.engine = options.createEngine();
      this.watchEpochs();
      this.recovery = this.recover(checkpoints.damage);
      this.syncCheckpointFiles(this.recovery.checkpointOffset);
      this.engine.selectLimits = options.selectLimits ?? DEFAULTS.selectLimits;
      this.engine.maxDmlRows = options.maxDmlRows ?? DEFAULTS.maxDmlRows;
      this.committedEpoch = this.engine.epoch;
      this.committedClock = this.engine.clock;
      this.highWater?.record(this.log.lastOffset, this.engine.epoch);
      this.engine.setJournal(this.log);
      // Judged from here on only: a replayed CREATE SOURCE/SINK was allowed when it ran.
      const hosts = connectorHostsAfterRecovery(options.connectorHosts ?? null, this.engine.catalog());
      this.engine.setConnectorCheck((connector) => connectorError(hosts, connector));
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
    const tickMs = options.clockTickMs ?? DEFAULTS.clockTickMs;
    if (tickMs > 0) {
      // Temporal filters change as time passes: each tick that crosses a bound is an epoch.
      const clock = setInterval(() => this.clockTick(), tickMs);
      clock.unref();
      this.timers.push(clock);
    }
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

  /**
   * One clock tick: when some view's temporal filter has a bound the clock has reached, an epoch
   * (journaled and committed like a write); otherwise nothing is written. Cheap when no view has one.
   */
  clockTick(): void {
    if (this.closing || this.failure !== null || !this.engine.tickDue()) return;
    try {
      this.write(() => this.engine.tick());
    } catch (error) {
      this.options.logger.error({ err: error }, 'a clock tick failed');
    }
  }

  /** Applies changelog retention to every view (its own small transaction). */
  pruneAll(): void {
    if (this.store.inTransaction || this.failure !== null || !this.store.db.open) return;
    try {
      this.store.begin();
      const now = Date.now();
      // The time of epochs is kept as far back as some view's changelog reaches.
      let oldest = this.committedEpoch;
      for (const name of this.feeds.keys())
        oldest = Math.min(
          oldest,
          this.changelog.prune(
            name,
            this.committedEpoch,
            now,
            this.options.retention,
            this.connectors.sinkFloor(name),
          ),
        );
      this.epochTimes.prune(oldest);
      this.idempotency.prune();
      this.store.commit();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.queueJournalTrim();
  }

  /**
   * Queues a slice of journal retention for a later turn of the event loop, and after it the next
   * while more are due: each slice is one short transaction between requests.
   */
  private queueJournalTrim(): void {
    if (this.journalTrimQueued || !this.journalTrimDue()) return;
    this.journalTrimQueued = true;
    setImmediate(() => {
      this.journalTrimQueued = false;
      if (this.closing || !this.store.db.open) return;
      if (this.trimJournalSlice()?.more === true) this.queueJournalTrim();
    });
  }

  private journalTrimDue(): boolean {
    const policy = this.options.journalRetention;
    return policy !== undefined && policy.ms !== null && this.durableCheckpointOffset > 0;
  }

  /**
   * Makes the checkpoint recovery loaded (`journalOffset`; null: none) survive a power loss, so
   * journal retention may delete what it covers: the process before this one may have been killed
   * with its last writes to `checkpoint.db` (at synchronous=NORMAL, or OFF before that) in the OS's
   * cache only. An fsync of the file and its WAL puts on disk exactly what this process read. The
   * directory last, at every start: an fsync of a file does not make its name durable (POSIX; ext4's
   * journal usually does), SQLite syncs the directory only for a WAL it syncs itself, never for a new
   * database file, and the writer thread's durable points later sync only the files. Without it a
   * power loss after retention's deletions could take checkpoint.db (created at a first start) or a
   * WAL the killed process created, and with them the only copy of the deleted batches' effect.
   */
  private syncCheckpointFiles(journalOffset: number | null): void {
    if (this.options.dataDir !== null) {
      const paths: (readonly [string, 'r' | 'r+'])[] = [[this.options.dataDir, 'r']];
      if (journalOffset !== null)
        paths.unshift([this.checkpointFile.path, 'r+'], [`${this.checkpointFile.path}-wal`, 'r+']);
      for (const [path, flags] of paths) {
        if (!existsSync(path)) continue;
        const fd = openSync(path, flags);
        try {
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    if (journalOffset !== null) this.checkpointDurable(journalOffset);
  }

  /**
   * Deletes one slice of the table batches the durable checkpoint covers that are older than the
   * journal retention at `now` (journal-retention.ts); null when none may be deleted now: retention
   * off, no durable checkpoint yet, a request's transaction open or its commit's sync owed (the next prune
   * tries again).
   */
  trimJournalSlice(now = Date.now()): JournalTrimSlice | null {
    const policy = this.options.journalRetention;
    if (policy === undefined || policy.ms === null || !this.journalTrimDue()) return null;
    if (this.failure !== null || this.store.inTransaction || this.store.syncOwed) return null;
    try {
      this.store.begin();
      // Up to the checkpoint known durable only: the latest one may not survive a power loss yet.
      const slice = this.journalRetention.deleteSlice(
        this.durableCheckpointOffset,
        now - policy.ms,
        policy.sliceRows,
      );
      if (slice.deleted > 0) crashPoint('during-journal-trim');
      this.store.commit();
      if (slice.deleted > 0) this.hooks.journalTrimmed?.(slice.deleted);
      return slice;
    } catch (error) {
      this.fail(error);
      return null;
    }
  }

  /** Closes every subscriber (going away) and the store, after a last checkpoint. */
  close(): void {
    if (this.closing) return;
    // Requests already applied are committed and answered before the store closes.
    if (this.failure === null && this.store.db.open) {
      this.flush();
      // A sliced checkpoint in progress is abandoned (rolled back) for one written now, whole.
      if (this.abandonCheckpointWrite()) this.checkpointing = false;
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
    this.engine.close(); // its worker threads, if any
    this.subscriberBudget.close();
    this.store.close();
    this.closeCheckpointWriter();
    this.checkpointFile.close();
    this.highWater?.close();
  }
}
