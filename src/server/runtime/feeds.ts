// Catalog → feeds: one ViewFeed per view incarnation, kept in step with the engine's catalog, and each
// epoch's changes of a view into its stored changelog (checked against it while replaying).
import { SluiceError } from '../../common/errors.ts';
import type { ViewChangeSet } from '../../exec/api.ts';
import { type Subscriber, ViewFeed } from '../../sink/subscriber.ts';
import { encodeChanges, encodeChangesStored, sameStoredChanges } from '../../storage/changelog-codec.ts';
import type { ColumnInfo } from '../../common/types.ts';
import { rawChangesOf, withTimeFields } from '../../common/raw-changes.ts';
import type { Engine, ViewInfo } from '../../index.ts';
import { formatMicros } from '../../common/time/instant-micros.ts';
import { RuntimeBase } from './base.ts';
import { CatalogIncarnations } from './catalog-incarnations.ts';

export interface FeedEntry {
  readonly feed: ViewFeed;
  readonly sql: string;
  columns: readonly ColumnInfo[];
  key: readonly string[] | null;
  /** False for a historical incarnation met during replay: its changes are not stored. */
  readonly writable: boolean;
  readonly unsubscribe: () => void;
}

/** What a message or page at an epoch says of its time (docs/server.md, "Time of an epoch"). */
export interface EpochTimeFields {
  readonly clock: string;
  readonly watermarks?: Readonly<Record<string, string | null>>;
}

export interface PendingChange {
  readonly feed: ViewFeed;
  readonly changes: ViewChangeSet;
  /** The wire message, written with the stored form when the view had subscribers (else null). */
  readonly wire: string | null;
}

export abstract class RuntimeFeeds extends RuntimeBase {
  protected readonly feeds = new Map<string, FeedEntry>();
  protected pending: PendingChange[] = [];
  protected pendingDrops: ViewFeed[] = [];
  protected ddlSinceSync = false;
  protected replaying = false;
  protected replayAt = 0;
  /** While the journal after a checkpoint is replayed: stored changelog entries matched, per view. */
  protected replayCheck: Map<string, number> | null = null;
  /**
   * While the whole journal is replayed: per view, the epochs replayed (after its horizon) and the
   * first one whose recomputed changes differ from the entry stored before the restart. A data
   * directory written by an earlier version computing the view differently (a new lowering, exact
   * numerics) recomputes other rows than its stored history says; recovery.ts then ends that history.
   */
  protected replayCompare: Map<string, { replayed: number; divergedAt: number | null }> | null = null;
  /** The DDL entries that made the live catalog (recorded for recovery from a checkpoint). */
  protected readonly catalogIncarnations = new CatalogIncarnations();
  /** The last row recordCatalog wrote inside a transaction, and which one. */
  private catalogRecorded: { readonly at: number; readonly transaction: number } | null = null;
  /** The journal offset of the stored checkpoint (-1: none); checkpoints.ts keeps it. */
  protected abstract checkpointOffset: number;
  /** The latest epoch's clock as text, formatted once for all the views that changed in it. */
  private clockText: { readonly epoch: number; readonly text: string } | null = null;
  // Provided by connector-lifecycle.ts and subscriptions.ts.
  protected abstract trackConnectors(catalog: ReturnType<Engine['catalogDefinitions']>): void;
  protected abstract follow(sub: Subscriber, feed: ViewFeed, view: string): Promise<void>;

  /** Matches the feeds (one per view incarnation) to the engine's catalog. */
  protected syncCatalog(): void {
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
    this.catalogIncarnations.sync(catalog, this.log.lastDdlOffset);
    // Recorded in the DDL's own transaction; recovery replays what it records, so while replaying
    // (the rows are already there, or the data file predates them) nothing is written.
    if (!this.replaying) this.recordCatalog();
  }

  /**
   * Stores the live catalog's entries under the last DDL entry's offset (with checkpoints on). The
   * row of an earlier DDL entry of the same open transaction goes: a checkpoint is of committed
   * state, so it never needs one (a script of n CREATEs would otherwise write n rows of up to n
   * offsets each).
   */
  protected recordCatalog(): void {
    const at = this.log.lastDdlOffset;
    if (this.options.checkpoint === null || at <= 0) return;
    const transaction = this.store.inTransaction ? this.store.transactionSerial : null;
    const earlier = this.catalogRecorded;
    if (earlier !== null && transaction !== null && earlier.transaction === transaction && earlier.at < at) {
      this.catalogSnapshots.remove(earlier.at);
    }
    this.catalogSnapshots.write(at, this.catalogIncarnations.offsets());
    this.catalogSnapshots.prune(this.checkpointOffset);
    this.catalogRecorded = transaction === null ? null : { at, transaction };
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
    // The drop's epoch is kept: a view created again under this name at the same epoch must not be
    // resumed from it by a client of this one (changelog-store.ts historyEnd).
    if (info !== undefined && info.incarnation === entry.feed.incarnation)
      this.changelog.drop(name, -1, this.engine.epoch);
    entry.feed.closed = true;
    if (!this.replaying) this.pendingDrops.push(entry.feed);
  }

  /**
   * The change set with its epoch's logical clock and the view's watermarks after it (called while
   * the engine is at that epoch: a listener runs inside it), as the changelog stores and sends it.
   */
  private withTime(view: string, changes: ViewChangeSet): ViewChangeSet {
    if (this.clockText === null || this.clockText.epoch !== changes.epoch)
      this.clockText = { epoch: changes.epoch, text: formatMicros(this.engine.clock) };
    // Not a spread: that would build the lazy set's row objects (raw-changes.ts).
    return withTimeFields(changes, this.clockText.text, this.engine.viewWatermarks(view));
  }

  private onChanges(feed: ViewFeed, writable: boolean, given: ViewChangeSet): void {
    if (!writable) return;
    const changes = this.withTime(feed.view, given);
    // Stored compactly (changelog-codec.ts); the wire message only for a view with subscribers.
    if (this.replaying) {
      const info = this.changelog.info(feed.view);
      if (info === undefined || changes.epoch <= info.horizon) return;
      const message = encodeChangesStored(changes);
      const verify = this.replayCheck;
      const compare = this.replayCompare;
      const stored =
        verify !== null
          ? this.changelog.get(feed.view, changes.epoch)
          : compare !== null
            ? this.readableEntry(feed.view, changes.epoch)
            : undefined;
      if (compare !== null) {
        const seen = compare.get(feed.view) ?? { replayed: 0, divergedAt: null };
        seen.replayed += 1;
        if (
          seen.divergedAt === null &&
          stored !== undefined &&
          !sameStoredChanges(changes.epoch, stored.message, message)
        )
          seen.divergedAt = changes.epoch;
        compare.set(feed.view, seen);
      }
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
    // A view someone listens to gets its wire message in the same pass (published after the commit).
    const encoded = encodeChanges(changes, feed.subscribers.size > 0);
    this.changelog.append(feed.view, changes.epoch, Date.now(), encoded.stored);
    this.pending.push({ feed, changes, wire: encoded.wire });
    this.hooks.viewChanges?.(feed.view, (rawChangesOf(changes)?.rows ?? changes.changes).length);
  }

  /**
   * The stored entry to compare a whole-journal replay with, or undefined: a damaged one is left as
   * it is (kept, and a resume across it fails as before), not taken for a difference.
   */
  private readableEntry(view: string, epoch: number): { readonly message: string } | undefined {
    try {
      return this.changelog.get(view, epoch);
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'STATE_ERROR') return undefined;
      throw error;
    }
  }

  /** Records every epoch of the engine's time (called for each engine the runtime creates). */
  protected watchEpochs(): void {
    const engine = this.engine;
    engine.onEpoch((epoch) => this.epochTimes.record(epoch, engine.clock, engine.tableWatermarks()));
  }

  /**
   * The clock and the view's watermarks of epoch `epoch` (at most the committed one), as its
   * `changes` message says them: the engine's own for the committed epoch, else the stored time of
   * that epoch; null when that is no longer known (a data file from before it was recorded).
   */
  timeAt(view: string, epoch: number): EpochTimeFields | null {
    const current = this.engine.viewWatermarks(view);
    if (epoch === this.engine.epoch) {
      return {
        clock: formatMicros(this.engine.clock),
        ...(current !== null ? { watermarks: current } : {}),
      };
    }
    // Before the first epoch the clock stood at 0 and no table had a row (so no watermark).
    const stored = epoch === 0 ? { clock: 0, watermarks: {} } : this.epochTimes.at(epoch);
    if (stored === undefined) return null;
    if (current === null) return { clock: formatMicros(stored.clock) };
    // The view reads the same tables as then (its inputs outlive it); one not yet recorded had none.
    const watermarks: Record<string, string | null> = {};
    for (const table of Object.keys(current)) watermarks[table] = stored.watermarks[table] ?? null;
    return { clock: formatMicros(stored.clock), watermarks };
  }

  viewNames(): string[] {
    return [...this.feeds.keys()];
  }
}
