// Checkpoint scheduling: when one is due (epochs, time, pacing), writing it whole or in slices
// between epochs, and what the stored checkpoint covers.
import { SluiceError } from '../../common/errors.ts';
import type { CheckpointSource, CheckpointWriteStats } from '../../storage/checkpoint-store.ts';
import { crashPoint } from '../crash-points.ts';
import type { CheckpointStatus } from './types.ts';
import { RuntimeConnectors } from './connector-lifecycle.ts';
import { errorText } from './base.ts';
import { OffThreadCheckpointWriter, checkpointWorkerEntry } from './checkpoint-writer.ts';
import type { WriterSettings } from './checkpoint-protocol.ts';

/** The gap after a checkpoint is at least this many times its duration. */
const CHECKPOINT_PACING = 10;
/**
 * After this many deaths of the writer thread in a row (no write completed between them), the
 * runtime stops starting new threads and writes its checkpoints on the main thread, slower but
 * durable, logged as an error and shown by `sluice_checkpoint_writer_fallback`.
 */
export const MAX_WRITER_THREAD_DEATHS = 3;
/**
 * Fewer changed entries than this are tracked whatever their share of the state: that costs little
 * (about 2 µs a change, so under 0.15 s), and small states keep their incremental checkpoints.
 */
const TRACKED_CHANGES_MIN = 65_536;
/**
 * With journal retention on, a checkpoint written by the writer thread is made durable (the WAL
 * copied into the file, with its fsyncs) when the last durable one is older than this. Retention
 * deletes only what a durable checkpoint covers, so it lags by up to this much behind a retention of
 * days; the fsyncs of a large file are rare, not at every checkpoint (they held the disk, and the
 * journal's syncs behind them, for 50–100 ms: bench/README.md, `server-e2e.ts`).
 */
export const DURABLE_CHECKPOINT_INTERVAL_MS = 10 * 60_000;
/**
 * Test-only: `SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS` replaces the interval's default for a whole
 * process, so a kill -9 attack on a real server can make durable points (and with them journal
 * deletions) many times a second. Read once, like SLUICE_CRASH_POINT; unset in production.
 */
const durableIntervalFromEnv = ((): number | undefined => {
  const text = process.env.SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS;
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new Error(`SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS must be an integer ≥ 0: "${text}"`);
  return ms;
})();

export abstract class RuntimeCheckpoints extends RuntimeConnectors {
  // Checkpoint bookkeeping: what the stored checkpoint covers, and when the last attempt was.
  protected checkpointEpoch = -1;
  protected checkpointOffset = -1;
  /**
   * The journal offset of the last checkpoint known to survive a power loss (-1: none in this
   * process). Journal retention deletes only up to it: a checkpoint the writer thread committed
   * without a sync survives a process kill, but a power loss may take it back to an older one.
   */
  protected durableCheckpointOffset = -1;
  private lastDurableAt = performance.now();
  private lastCheckpointAttempt = performance.now();
  protected checkpointing = false;
  private checkpointsWritten = 0;
  private checkpointFailures = 0;
  private lastCheckpointError: string | null = null;
  private lastCheckpointStats: CheckpointWriteStats | null = null;
  /**
   * Writes sliced checkpoints from a worker thread; made at the first one (after recovery); false
   * when this build has no worker module.
   */
  private offThread: OffThreadCheckpointWriter | null | false = null;
  /** Why checkpoints are written on the main thread although the writer thread exists; null if not. */
  private writerFallback: string | null = null;
  /** Whether the engine records which state entries change (for the next incremental checkpoint). */
  private stateTracked = false;
  /** Entries the last full checkpoint wrote (0 before one): what the next full one's growth is from. */
  private lastFullEntries = 0;
  /**
   * The engine as a checkpoint takes it. Until a checkpoint is taken whole, the engine tracks no
   * changes: the next checkpoint is full whatever changed, and tracking costs every change a set
   * insert (a keyed table's every new key, a Reduce's every touched group's encoded key: about half
   * the server's CPU on the HTTP bench's inserts). Tracking starts in the same turn as the full
   * take, so every change after it is recorded.
   */
  private readonly checkpointSource: CheckpointSource = {
    takeCheckpoint: (full = false) => {
      // Never incremental while untracked (the store asks for full then: `setStateTracking`).
      const cp = this.engine.takeCheckpoint(full || !this.stateTracked);
      if (!this.stateTracked) this.setStateTracking(true);
      return cp;
    },
  };

  /** Takes a checkpoint when the policy says one is due and something changed since the last. */
  protected maybeCheckpoint(): void {
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

  /**
   * After a checkpoint is written, whether tracking changes for the next one pays. Not when the
   * state changed by a quarter or more since the one before (an incremental checkpoint's changed
   * entries, or a full one's new entries since the last full one): at that rate the next
   * incremental checkpoint would pass the store's compaction bound (a quarter of the base) and be
   * followed by a full one anyway, and tracking each change costs more than writing the state whole
   * (on the HTTP bench's inserts, ≈2 µs of server CPU a change against ≈0.4 µs an entry written
   * whole). Untracked, the next checkpoint is full, and the one after it is tracked again once a
   * full one finds the state grown by less. The first full checkpoint of a run decides nothing: its
   * entries are all "new", whether they came in a burst or over hours, and stopping there made the
   * next checkpoint of a large, slowly changing state full too — on the HTTP bench a full write of
   * 3.6M entries while 1,000 events/s came in, and a p99 of 190–360 ms instead of 8–16 ms.
   */
  private reconsiderTracking(stats: CheckpointWriteStats): void {
    const known = !stats.full || this.lastFullEntries > 0;
    const changed = stats.full ? stats.upserts - this.lastFullEntries : stats.upserts + stats.deletes;
    const size = stats.full ? stats.upserts : stats.baseEntries;
    if (stats.full) this.lastFullEntries = stats.upserts;
    if (known && this.stateTracked && changed >= TRACKED_CHANGES_MIN && changed * 4 >= size) {
      this.setStateTracking(false);
    }
  }

  /** Whether the engine tracks its changed state entries now (the next checkpoint may be incremental). */
  get changesTracked(): boolean {
    return this.stateTracked;
  }

  /** Turns the engine's change tracking on or off; off, the next checkpoint must be full. */
  protected setStateTracking(on: boolean): void {
    this.stateTracked = on;
    this.engine.setStateTracking(on);
    if (!on) this.checkpoints.requireFull();
  }

  protected changedSinceCheckpoint(): boolean {
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
      // The main thread's connection runs at synchronous=FULL: its COMMIT syncs the WAL.
      return this.checkpointWritten(
        this.checkpoints.checkpoint(this.checkpointSource, this.log.lastOffset),
        true,
      );
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
      const sliceMs = this.options.checkpoint?.sliceMs;
      const writer = this.offThreadWriter();
      if (writer === null) {
        // On the main thread's connection (synchronous=FULL): durable at its COMMIT.
        const stats = await this.checkpoints.checkpointSliced(
          this.checkpointSource,
          this.log.lastOffset,
          sliceMs,
        );
        return this.closing ? null : this.checkpointWritten(stats, true);
      }
      const stats = await writer.write(
        this.checkpointSource,
        this.log.lastOffset,
        sliceMs,
        this.durablePointDue(),
      );
      return this.closing ? null : this.checkpointWritten(stats, writer.lastWriteDurable);
    } catch (error) {
      if (!this.closing) {
        this.checkpointFailed(error);
        this.maybeFallBackToMainThread();
      }
      return null;
    } finally {
      this.checkpointing = false;
    }
  }

  /**
   * The writer thread's side of this runtime's checkpoint file; null in memory (a second connection
   * cannot reach an in-memory file), where slices are written on the main thread.
   */
  private offThreadWriter(): OffThreadCheckpointWriter | null {
    if (this.options.dataDir === null || this.offThread === false) return null;
    if (this.offThread !== null) return this.offThread;
    const entry = checkpointWorkerEntry();
    if (entry === null) {
      this.options.logger.warn(
        {},
        'the checkpoint writer thread is not available (its module is missing beside this build): checkpoints are written on the main thread',
      );
      this.offThread = false;
      return null;
    }
    this.offThread = new OffThreadCheckpointWriter(
      entry,
      this.checkpointFile.path,
      this.checkpoints,
      this.options.logger,
      () => {
        this.checkpointSlicesResumed += 1;
        crashPoint('between-checkpoint-slices');
      },
      () => this.ingestAnswered(),
    );
    return this.offThread;
  }

  /**
   * Abandons a sliced checkpoint in progress (rolled back; the previous one stays, the next is
   * full); true when one was running. Blocks until the writer thread has let go of the file.
   */
  protected abandonCheckpointWrite(): boolean {
    if (this.offThread !== false && this.offThread?.writing === true) {
      this.offThread.abort();
      return true;
    }
    if (this.checkpoints.writing) {
      this.checkpoints.abort();
      return true;
    }
    return false;
  }

  /**
   * After MAX_WRITER_THREAD_DEATHS deaths of the writer thread in a row, checkpoints are written on
   * the main thread from now on: a thread that keeps dying (out of memory, a native crash) must not
   * leave the server without checkpoints, so the journal would grow and recovery slow down
   * unnoticed. Each sliced write on the main thread costs the event loop its SQLite work too.
   */
  private maybeFallBackToMainThread(): void {
    const writer = this.offThread;
    if (writer === null || writer === false || writer.consecutiveThreadDeaths < MAX_WRITER_THREAD_DEATHS)
      return;
    writer.close();
    this.offThread = false;
    this.writerFallback = `the checkpoint writer thread died ${writer.consecutiveThreadDeaths} times in a row`;
    this.options.logger.error(
      { threadDeaths: writer.consecutiveThreadDeaths },
      `${this.writerFallback}: checkpoints are written on the main thread from now on (slower, they pause request handling); restart the server to try the thread again`,
    );
  }

  /**
   * Test hook: the writer thread's connection's durability pragmas, read back from that connection
   * (started if none yet); null when checkpoints are written on the main thread.
   */
  writerSettingsForTests(): Promise<WriterSettings> | null {
    return this.offThreadWriter()?.settingsForTests() ?? null;
  }

  /** Lets the writer thread close its connection (at shutdown). */
  protected closeCheckpointWriter(): void {
    if (this.offThread !== false) this.offThread?.close();
    this.offThread = null;
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
    this.maxSlicesBeforeAnswer = 0;
    return true;
  }

  /**
   * Whether the writer thread is to make its next write durable: journal retention is on (nothing
   * else needs it: a checkpoint left older by a power loss is recovered from like any other, the
   * journal after it replayed) and the last durable checkpoint is older than the interval.
   */
  private durablePointDue(): boolean {
    const retention = this.options.journalRetention;
    if (retention === undefined || retention.ms === null) return false;
    const interval =
      this.options.checkpoint?.durableIntervalMs ?? durableIntervalFromEnv ?? DURABLE_CHECKPOINT_INTERVAL_MS;
    // Timed from the start too: nothing is due for deletion sooner than the retention, so the first
    // large write after a start (a full one) is not synced at once either.
    return performance.now() - this.lastDurableAt >= interval;
  }

  /** The checkpoint covering the journal up to `journalOffset` is known to survive a power loss. */
  protected checkpointDurable(journalOffset: number): void {
    this.durableCheckpointOffset = journalOffset;
    this.lastDurableAt = performance.now();
  }

  private checkpointWritten(stats: CheckpointWriteStats, durable: boolean): CheckpointWriteStats {
    crashPoint('after-checkpoint');
    this.highWater?.sync();
    this.checkpointEpoch = stats.epoch;
    this.checkpointOffset = stats.journalOffset;
    if (durable) this.checkpointDurable(stats.journalOffset);
    this.checkpointsWritten += 1;
    this.lastCheckpointStats = stats;
    this.lastCheckpointError = null;
    this.reconsiderTracking(stats);
    // How many of its slices an ingest answer waited behind at most (commit.ts).
    const slicesBeforeAnswer = this.maxSlicesBeforeAnswer;
    this.options.logger.info({ ...stats, slicesBeforeAnswer }, 'checkpoint written');
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
      durableJournalOffset: this.durableCheckpointOffset >= 0 ? this.durableCheckpointOffset : null,
      written: this.checkpointsWritten,
      failures: this.checkpointFailures,
      lastError: this.lastCheckpointError,
      last: this.lastCheckpointStats,
      writerFallback: this.writerFallback,
    };
  }
}
