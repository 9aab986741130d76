// Writes: each engine call runs in one SQLite transaction (journal and changelog entries together)
// whose epochs are published only after it committed; ingest requests are group-committed.
import { SluiceError } from '../../common/errors.ts';
import { crashPoint } from '../crash-points.ts';
import type { TableChanges } from '../../exec/api.ts';
import type { ApplyOptions } from '../../exec/engine.ts';
import { CloseCodes, type ViewFeed } from '../../sink/subscriber.ts';
import { encodeChangesWire } from '../../storage/changelog-codec.ts';
import type { IdempotencyWindow, IdempotentRequest, IngestAnswer } from '../idempotency-window.ts';
import { type PendingChange, RuntimeFeeds } from './feeds.ts';

/** Loop turns a group waits for more ingest requests before it commits (bounded added latency). */
const GROUP_MAX_HOPS = 4;
/** A group commits at once beyond this many requests (bounds the answers held back). */
const GROUP_MAX_REQUESTS = 64;
/**
 * A group commits at once with this many connector epochs (writeGrouped): about one fetch of a
 * 4-partition backlog at max_batch_rows 10,000 (≈ 7 batches), which then shares one COMMIT.
 */
const GROUP_MAX_CONNECTOR_EPOCHS = 8;
/**
 * WAL syncs in flight at once. With one, a group applied while the previous group's sync ran had to
 * wait for that sync before its COMMIT and then for its own: with the server bench's four requests in
 * flight the thread was left with nothing to do (the main thread slept about a quarter of the
 * throughput phase). With two, that group commits and starts its own sync at once; a third waits, so
 * a slow disk still holds the answers back rather than queueing syncs on the libuv pool.
 */
const MAX_SYNCS_IN_FLIGHT = 2;

interface GroupWaiter {
  readonly resolve: (value: { accepted: number; epoch: number }) => void;
  readonly reject: (error: unknown) => void;
  readonly result: { accepted: number; epoch: number };
  readonly table: string;
  readonly rows: number;
  readonly started: number;
  /** `checkpointSlicesResumed` when it was applied. */
  readonly slices: number;
}

/** A group whose COMMIT is written but not yet synced: completed (published, answered) once it is. */
interface UnsyncedGroup {
  readonly waiters: GroupWaiter[];
  readonly pending: PendingChange[];
  readonly drops: ViewFeed[];
  readonly epoch: number;
  readonly clock: number;
  readonly offset: number;
  /**
   * The store's deferred commits once its COMMIT returned: it is durable once the store's
   * `durableCommits` reaches this (a sync begun after its COMMIT, and every one before, returned
   * without an error).
   */
  readonly commits: number;
}

// Group commit: ingest requests are applied at once, each as its own epoch, into one open SQLite
// transaction; the transaction commits once the event loop has gone a turn without new ingest work
// (so requests that arrive together share one fsync), and only then are their answers resolved and
// their epochs published. Everything else — SQL scripts, reads, snapshots, subscriptions — first
// commits the open group (flush), so it only ever sees committed epochs.
//
// The group's fsync runs off the server's thread (sqlite-store.ts, "Deferred sync"): its COMMIT
// writes the WAL, an fdatasync of the WAL runs on the libuv pool, and the group is completed — its
// high-water mark recorded, epochs published, answers resolved — when a sync begun after its COMMIT
// returns. Meanwhile the thread applies the next requests into the next transaction, which commits
// and starts its own sync at once if fewer than MAX_SYNCS_IN_FLIGHT are in flight, else when one is
// back. An fdatasync makes durable everything written to the WAL before it began; the store takes
// syncs in the order they were issued (the pool may finish them in either order) and counts the
// deferred commits known durable (`durableCommits`), and a returning sync completes, oldest first,
// the groups that count covers: one queue of syncs and one place for the in-order rule, the store's.
// Each sync in flight, a flush's included, has its own descriptor of the WAL (sqlite-store.ts), so a
// write error is reported to every sync whose frames it could hold, and an error fails every group
// not yet complete.
// A flush while a sync is in flight commits and syncs at once on this thread and completes
// everything, so whatever reads or writes next sees durable epochs only.

export abstract class RuntimeCommit extends RuntimeFeeds {
  /** Ingest requests applied in the open transaction, answered once it commits. */
  private group: GroupWaiter[] = [];
  private groupScheduled = false;
  private groupSeen = 0;
  private groupHops = 0;
  /** Tells a stale loop-turn callback (its group was committed early by a flush) to stop. */
  private groupGeneration = 0;
  /** Groups committed whose WAL sync is in flight, oldest first. */
  private unsynced: UnsyncedGroup[] = [];
  /** The open group's commit waits for a sync in flight (MAX_SYNCS_IN_FLIGHT reached). */
  private commitWhenSynced = false;
  /** Checkpoint slices waiting for the ingest requests applied before they asked to be answered. */
  private answerWaiters: { readonly epoch: number; readonly resolve: () => void }[] = [];
  /**
   * Slices of checkpoint writes off the thread resumed after their first (checkpoints.ts counts
   * them), and the most of them one ingest request waited behind for its answer since the current
   * checkpoint began (its log line: a count, whatever the machine's load).
   */
  checkpointSlicesResumed = 0;
  protected maxSlicesBeforeAnswer = 0;
  /** Connector epochs applied into the open group (writeGrouped), counted towards its bound. */
  private groupEpochs = 0;
  /** Commits of ingest groups and the requests they carried (metrics, tests). */
  groupCommits = 0;
  groupedRequests = 0;
  /** Keyed ingest requests and their answers (../idempotency-window.ts), durable with their batches. */
  abstract readonly idempotency: IdempotencyWindow;
  // Provided by connector-lifecycle.ts and checkpoints.ts.
  protected abstract syncConnectors(): void;
  protected abstract maybeCheckpoint(): void;

  /** Synchronous ingest: applies and commits at once (commits any open group first). */
  ingest(table: string, changes: TableChanges): { accepted: number; epoch: number } {
    const started = performance.now();
    const result = this.write(() => this.engine.applyChanges(table, changes));
    this.hooks.epochCpu?.(busyMicros(started));
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
  ingestGrouped(
    table: string,
    changes: TableChanges,
    idempotent?: IdempotentRequest,
    ahead?: ApplyOptions, // its inserts' journal text written ahead (ingest-ahead.ts)
  ): Promise<{ accepted: number; epoch: number }> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new SluiceError('UNAVAILABLE', 'server is shutting down'));
    const started = performance.now();
    let result: { accepted: number; epoch: number };
    try {
      result = this.applyIntoGroup(() => {
        const applied = this.engine.applyChanges(table, changes, ahead);
        this.hooks.epochCpu?.(busyMicros(started));
        return applied;
      });
    } catch (error) {
      return Promise.reject(error);
    }
    const rows = (changes.insert?.length ?? 0) + (changes.delete?.length ?? 0);
    const done = new Promise<{ accepted: number; epoch: number }>((resolve, reject) => {
      const slices = this.checkpointSlicesResumed;
      this.group.push({ resolve, reject, result, table, rows, started, slices });
    });
    if (idempotent !== undefined) {
      try {
        // In the batch's own transaction (an empty batch opens one): the key commits with it or not at all.
        this.store.begin();
        this.idempotency.record(idempotent, table, result, done);
      } catch (e) {
        this.store.deferSync = false;
        this.fail(e);
        this.rejectGroup(this.failure);
        return done;
      }
    }
    this.store.deferSync = false;
    if (this.group.length >= GROUP_MAX_REQUESTS) this.flush();
    else this.scheduleGroup();
    return done;
  }

  /**
   * Ingest with a client's idempotency key: a key the window remembers gets the answer its first
   * request got (waiting for that request's commit if it is still open) and applies nothing — a
   * different request under the same key is IDEMPOTENCY_KEY_REUSED; an unknown key applies as
   * ingestGrouped() does and is remembered with its batch, in the same transaction.
   */
  ingestIdempotent(
    table: string,
    changes: TableChanges,
    request: IdempotentRequest,
    ahead?: ApplyOptions,
  ): Promise<{ answer: IngestAnswer; replayed: boolean }> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new SluiceError('UNAVAILABLE', 'server is shutting down'));
    let known: Promise<IngestAnswer> | null;
    try {
      known = this.idempotency.lookup(request);
    } catch (error) {
      return Promise.reject(error);
    }
    if (known !== null) return known.then((answer) => ({ answer: { ...answer }, replayed: true }));
    return this.ingestGrouped(table, changes, request, ahead).then((a) => ({ answer: a, replayed: false }));
  }

  /**
   * Settles once every ingest request applied so far is answered (its group committed, synced and
   * published) or failed; null when none is waiting for its answer. A checkpoint's next slice waits
   * on it (checkpoint-writer.ts): a request's group takes several loop turns (its hops, the COMMIT,
   * the WAL sync's return), and a slice resumed by setImmediate ran in every one of them, so an
   * answer waited behind several slices (8–34 on the server bench, bench/README.md).
   */
  protected ingestAnswered(): Promise<void> | null {
    // The last request's own epoch, not the engine's: a waiter is let go by a group's completion,
    // so it must not wait on an epoch no ingest group will ever complete.
    const open = this.group[this.group.length - 1];
    const unsynced = this.unsynced[this.unsynced.length - 1];
    const epoch = open !== undefined ? open.result.epoch : unsynced?.epoch;
    if (epoch === undefined) return null;
    return new Promise((resolve) => this.answerWaiters.push({ epoch, resolve }));
  }

  /** Lets go the waiters whose requests are answered: all epochs through `epoch` (Infinity: all). */
  private releaseAnswerWaiters(epoch: number): void {
    if (this.answerWaiters.length === 0) return;
    const waiting: { readonly epoch: number; readonly resolve: () => void }[] = [];
    for (const w of this.answerWaiters) {
      if (w.epoch <= epoch) w.resolve();
      else waiting.push(w);
    }
    this.answerWaiters = waiting;
  }

  /**
   * A connector's epoch (a source batch with its positions), applied into the open group's
   * transaction as an ingest request is, and committed with it: a source catching up on a backlog
   * delivers several batches a fetch, and each no longer pays a COMMIT and a WAL sync on this thread
   * (the group's sync runs on the pool, and batches delivered meanwhile join the next group). Its
   * epoch is published once the group is durable, as an ingest request's is. A call that throws
   * leaves what it did in the transaction (as write() does) and throws; a commit failure fails the
   * runtime (fail()), so positions the connector holds past the last durable group are never read
   * again by this process.
   */
  protected writeGrouped(call: () => void): void {
    if (this.failure !== null) throw this.failure;
    if (this.closing) throw new SluiceError('UNAVAILABLE', 'server is shutting down');
    this.applyIntoGroup(call);
    this.store.deferSync = false;
    this.groupEpochs += 1;
    // Bounds what an open group holds: its epochs' change sets wait in memory for the commit and the
    // sync (held longer, they outlive scavenges), so a slow disk does not let a catch-up pile them up.
    if (this.groupEpochs >= GROUP_MAX_CONNECTOR_EPOCHS || this.group.length >= GROUP_MAX_REQUESTS)
      this.flush();
    else this.scheduleGroup();
  }

  /**
   * Runs `call` into the open group's transaction, which commits without waiting for the disk
   * (`deferSync` is left on: the caller may add to the transaction, then turns it off). A call that
   * throws leaves what it did in the transaction, which commits with the group, and throws; failing
   * to take back its logged batch fails the runtime and every request of the group.
   */
  private applyIntoGroup<T>(call: () => T): T {
    this.store.deferSync = true;
    let result: T;
    try {
      result = call();
    } catch (error) {
      this.store.deferSync = false;
      try {
        this.settleFailedCall();
      } catch (e) {
        this.fail(e);
        this.rejectGroup(this.failure);
        throw this.failure;
      }
      if (this.store.inTransaction) this.scheduleGroup();
      throw error;
    }
    this.log.lastBatch = null;
    return result;
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
    this.commitGroup();
  }

  /**
   * Commits the open group and starts its WAL sync off the thread; with MAX_SYNCS_IN_FLIGHT in
   * flight, the commit waits for one of them (the requests arriving meanwhile join the group). A
   * group whose transaction was not deferred (in memory) is complete at once, as flush() completes it.
   */
  private commitGroup(): void {
    this.groupScheduled = false;
    if (this.group.length === 0 && this.pending.length === 0 && !this.store.inTransaction) return;
    if (this.failure !== null) {
      this.rejectGroup(this.failure);
      return;
    }
    // Issued and not yet taken in order (the store's count): a returned sync behind one still out
    // counts, so a slow sync holds the commits back rather than letting syncs queue on the pool.
    if (this.store.syncsOutstanding >= MAX_SYNCS_IN_FLIGHT) {
      this.commitWhenSynced = true;
      return;
    }
    const waiters = this.group;
    this.group = [];
    let owed: boolean;
    try {
      if (this.ddlSinceSync) this.syncCatalog();
      if (this.store.inTransaction) crashPoint('before-commit');
      owed = this.store.commitUnsynced();
    } catch (e) {
      this.fail(e);
      for (const w of waiters) w.reject(this.failure);
      this.rejectGroup(this.failure);
      return;
    }
    crashPoint('after-commit');
    const committed = this.takeCommitted(waiters);
    if (!owed) {
      this.complete([committed]);
      this.maybeCheckpoint();
      return;
    }
    this.unsynced.push(committed);
    this.store.syncAsync((error) => this.synced(error));
  }

  /**
   * A WAL sync returned: the groups the store now counts durable are complete, oldest first. The
   * store moved `durableCommits` only through syncs that returned without an error after every
   * earlier one did, so a later sync's success alone completes nothing an earlier sync, still out,
   * may yet report a write error of; an error fails every group not yet complete.
   */
  private synced(error: Error | null): void {
    if (this.closing) return;
    if (error !== null && this.failure === null) this.fail(error);
    if (this.failure !== null) {
      this.rejectGroup(this.failure);
      return;
    }
    const durable = this.store.durableCommits;
    let n = 0;
    while (n < this.unsynced.length && (this.unsynced[n] as UnsyncedGroup).commits <= durable) n += 1;
    const groups = this.unsynced.slice(0, n);
    this.unsynced = this.unsynced.slice(n);
    this.complete(groups);
    this.store.checkpointWalWhenIdle();
    if (this.commitWhenSynced) {
      this.commitWhenSynced = false;
      this.commitGroup();
    }
    this.maybeCheckpoint();
  }

  /** The epochs and answers of the open transaction's group, as its COMMIT left them. */
  private takeCommitted(waiters: GroupWaiter[]): UnsyncedGroup {
    const committed: UnsyncedGroup = {
      waiters,
      pending: this.pending,
      drops: this.pendingDrops,
      epoch: this.engine.epoch,
      clock: this.engine.clock,
      offset: this.log.lastOffset,
      commits: this.store.deferredCommitCount,
    };
    this.pending = [];
    this.pendingDrops = [];
    this.groupEpochs = 0;
    return committed;
  }

  /** Durable groups, oldest first: their mark recorded, epochs published, answers resolved. */
  private complete(groups: readonly UnsyncedGroup[]): void {
    for (const g of groups) {
      try {
        this.highWater?.record(g.offset, g.epoch);
      } catch (e) {
        this.fail(e);
        for (const w of g.waiters) w.reject(this.failure);
        continue;
      }
      this.committedEpoch = g.epoch;
      this.committedClock = g.clock;
      this.publish(g.pending, g.drops);
      if (g.waiters.length > 0) {
        this.groupCommits += 1;
        this.groupedRequests += g.waiters.length;
        this.hooks.groupCommitted?.(g.waiters.length);
      }
      const now = performance.now();
      for (const w of g.waiters) {
        // Batch time as before: from the request's apply to its durable commit and publication.
        this.hooks.batchApplied?.(w.table, w.rows, (now - w.started) / 1000);
        const slices = this.checkpointSlicesResumed - w.slices;
        if (slices > this.maxSlicesBeforeAnswer) this.maxSlicesBeforeAnswer = slices;
        w.resolve(w.result);
      }
    }
    // After the answers: their continuations run before a slice's.
    const last = groups[groups.length - 1];
    if (last !== undefined) this.releaseAnswerWaiters(last.epoch);
  }

  /**
   * Commits the open ingest group (if any), publishes its epochs and resolves its answers. Called
   * before anything that reads state or writes outside the group, so they see committed epochs only.
   */
  flush(): void {
    this.groupScheduled = false;
    this.commitWhenSynced = false;
    const group = this.group;
    if (
      group.length === 0 &&
      this.pending.length === 0 &&
      !this.store.inTransaction &&
      this.unsynced.length === 0
    )
      return;
    if (this.failure !== null) {
      this.rejectGroup(this.failure);
      return;
    }
    this.group = [];
    try {
      if (this.ddlSinceSync) this.syncCatalog();
      if (this.store.inTransaction) crashPoint('before-commit');
      // Durable at once, with any group whose sync is still in flight.
      this.store.commit();
    } catch (e) {
      this.fail(e);
      for (const w of group) w.reject(this.failure);
      this.rejectGroup(this.failure);
      return;
    }
    crashPoint('after-commit');
    const earlier = this.unsynced;
    this.unsynced = [];
    this.complete([...earlier, this.takeCommitted(group)]);
    this.maybeCheckpoint();
  }

  private rejectGroup(error: unknown): void {
    const group = this.group;
    const unsynced = this.unsynced;
    this.group = [];
    this.unsynced = [];
    this.groupScheduled = false;
    this.commitWhenSynced = false;
    this.groupEpochs = 0;
    this.pending = [];
    this.pendingDrops = [];
    for (const g of unsynced) for (const w of g.waiters) w.reject(error);
    for (const w of group) w.reject(error);
    this.releaseAnswerWaiters(Infinity);
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
  protected write<T>(call: () => T): T {
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
    this.committedClock = this.engine.clock;
    this.publish(this.pending, this.pendingDrops);
    this.pending = [];
    this.pendingDrops = [];
    this.syncConnectors();
    this.maybeCheckpoint();
    if (threw) throw error;
    return result as T;
  }

  protected fail(error: unknown): void {
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

  private publish(pending: readonly PendingChange[], drops: readonly ViewFeed[]): void {
    // The wire message is written once per epoch and view, and only for a view someone listens to
    // (with the stored form, feeds.ts, or here for a view whose first subscriber came since).
    for (const p of pending) {
      if (p.feed.subscribers.size > 0) {
        p.feed.publish(p.changes.epoch, p.wire ?? encodeChangesWire(p.changes));
        crashPoint('while-publishing');
      }
    }
    if (pending.length > 0) this.connectors?.committed();
    for (const feed of drops) {
      feed.closeAll('VIEW_DROPPED', CloseCodes.viewDropped, `view "${feed.view}" was dropped`);
    }
  }
}

/**
 * The time since `startedMs` (performance.now()) in microseconds: what a synchronous write cost the
 * server's one thread, which is its CPU time unless the machine took the core away meanwhile. Not
 * process.cpuUsage(): that is a getrusage syscall summing every thread of the process, and the pair
 * around each ingest request took 3.6% of the server's busy time under the server-e2e bench
 * (bench/README.md); the clock read is a fraction of a microsecond.
 */
export function busyMicros(startedMs: number): number {
  return Math.round((performance.now() - startedMs) * 1000);
}
