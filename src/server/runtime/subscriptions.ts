// Serving views: their ordered indexes for REST pages (read-routes.ts), and subscriptions (a snapshot,
// or the stored changelog from a resume point, then live) under the subscriber caps and the shared
// memory budget.
import { SluiceError } from '../../common/errors.ts';
import { CloseCodes, Subscriber, ViewFeed, type SubscriberTransport } from '../../sink/subscriber.ts';
import { storedToWire } from '../../storage/changelog-codec.ts';
import { stringifyWire } from '../../common/json-codec.ts';
import type { Row } from '../../common/types.ts';
import type { ViewReader } from '../../exec/api.ts';
import { columnOverheads, rowJsonBytes } from '../../exec/result-size.ts';
import type { FrozenIndex, OrderedIndex } from '../../ivm/ordered-index.ts';
import { DEFAULTS } from '../defaults.ts';
import type { SubscribeParams } from './types.ts';
import { RuntimeCheckpoints } from './checkpoints.ts';
import { yieldToLoop } from './base.ts';
import { SnapshotChunkCache } from './snapshot-chunks.ts';

const BACKLOG_PAGE = 256;

/** Encoded snapshot chunks kept for the other streams of the same frozen version, in characters. */
const SHARED_CHUNK_CHARS = 8 * 1024 * 1024;

/** How long one slice of building a view's ordered index may hold the event loop. */
const READ_SLICE_MS = 8;

export abstract class RuntimeSubscriptions extends RuntimeCheckpoints {
  protected readonly starting = new Set<Subscriber>();
  /** Subscribers (starting or live) per view, for the subscriber caps. */
  private readonly subscriberCounts = new Map<string, number>();
  private subscriberTotal = 0;
  /** Subscribers refused by the caps (metrics). */
  subscribersRefused = 0;
  /** Ordered indexes with snapshots being streamed, and how many streams hold each. */
  protected readonly snapshotHolds = new Map<OrderedIndex, number>();
  /** Snapshot chunks encoded once for the streams reading the same frozen version at one epoch. */
  readonly snapshotChunks = new SnapshotChunkCache(SHARED_CHUNK_CHARS);

  subscriberCount(view: string): number {
    return this.feeds.get(view)?.feed.subscribers.size ?? 0;
  }

  /** Subscribers of a view starting (snapshot or backlog) or live. */
  subscribersOf(view: string): number {
    return this.subscriberCounts.get(view) ?? 0;
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
    // On the same history as the client's epoch? (changelog-store.ts resumeRefusal)
    const horizon = this.changelog.prune(view, this.committedEpoch, Date.now(), this.options.retention);
    const refusal = this.changelog.resumeRefusal(view, params.resumeFrom, horizon);
    if (refusal !== null) throw refusal;
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
    sub.maxMessageBytes = params.maxMessageBytes ?? null;
    this.starting.add(sub);
    this.countSubscriber(view, 1);
    transport.onClose(() => {
      this.starting.delete(sub);
      this.countSubscriber(view, -1);
    });
    try {
      // The epoch the stream continues from, with its clock and watermarks (a resumed one's are stored).
      const hello = (epoch: number, snapshot: boolean, columns: unknown, key: unknown): string =>
        stringifyWire({
          type: 'subscribed',
          view,
          epoch,
          ...this.timeAt(view, epoch),
          snapshot,
          columns,
          key,
        });
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
  protected async follow(sub: Subscriber, feed: ViewFeed, view: string): Promise<void> {
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
   * is encoded only once the subscriber's buffer and the shared budget have room for it, and once
   * for all the streams of that version (snapshot-chunks.ts).
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
    this.snapshotChunks.hold(frozen);
    try {
      const epoch = reader.epoch;
      const time = this.timeAt(view, epoch);
      sub.cursor = epoch;
      if (!(await sub.send(hello(epoch, true, reader.columns, reader.key)))) return false;
      const chunkRows = Math.max(1, this.options.snapshotChunkRows);
      const overheads = columnOverheads(reader.columns.map((c) => c.name));
      const cursor = frozen.cursorAt(0);
      let chunkIndex = 0;
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
        const more = !cursor.done;
        const text = this.snapshotChunks.chunk(frozen, epoch, chunkIndex++, values.length, () =>
          stringifyWire({ type: 'snapshot', epoch, ...time, rows: values.map((v) => reader.toRow(v)), more }),
        );
        if (!(await sub.send(text))) return false;
      } while (!cursor.done);
      return sub.send(`{"type":"snapshot_end","epoch":${epoch},"rows":${frozen.size}}`);
    } finally {
      this.holdSnapshot(frozen, -1);
      this.snapshotChunks.release(frozen);
      frozen.release();
    }
  }

  private holdSnapshot(frozen: FrozenIndex, delta: number): void {
    const n = (this.snapshotHolds.get(frozen.source) ?? 0) + delta;
    if (n > 0) this.snapshotHolds.set(frozen.source, n);
    else this.snapshotHolds.delete(frozen.source);
  }

  protected heartbeat(): void {
    const now = Date.now();
    for (const entry of this.feeds.values())
      entry.feed.heartbeat(this.committedEpoch, now, this.options.heartbeatMs);
  }
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
    case 'QUOTA_EXCEEDED':
      // The HTTP status (403) in the application range, like the others.
      return 4403;
    default:
      return error.errorClass === 'internal' || error.errorClass === 'state'
        ? CloseCodes.internal
        : CloseCodes.invalidRequest;
  }
}
