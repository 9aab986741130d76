// One changelog subscriber (WebSocket or NDJSON): snapshot → stored backlog → live epochs, in epoch
// order with no gap and no duplicate. Memory per subscriber is bounded, and all subscribers share
// one budget (subscriber-budget.ts): past either bound a subscriber is told SLOW_CONSUMER (with the
// last epoch it was sent) and closed, never silently dropped. It counts the bytes it queued itself
// (released by each write's completion callback), so what the socket layer holds is counted too.
import { messageParts } from './message-parts.ts';
import type { BudgetMember, MemoryBudget, Reservation } from './subscriber-budget.ts';
import { utf8Length } from './utf8-text.ts';

/** The byte pipe a subscriber writes to; the WebSocket and NDJSON adapters implement it. */
export interface SubscriberTransport {
  /**
   * Queues one message (one frame / one line); `written` is called once it has left the process
   * (handed to the kernel) or can never be sent (the connection closed).
   */
  send(text: string, written?: () => void): void;
  /** Bytes queued but not yet written to the kernel. */
  bufferedBytes(): number;
  /** Messages queued but not yet written. */
  pendingMessages(): number;
  /** Resolves once everything queued so far is written (or the transport closed). */
  drained(): Promise<void>;
  /**
   * Ends the stream after what is queued; `code` is a WebSocket close code. A peer that has not
   * taken the close after `graceMs` (default: the server's close grace) is cut off.
   */
  close(code: number, reason: string, graceMs?: number): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

export interface SubscriberLimits {
  /** Most bytes a subscriber may have queued before it is a slow consumer. */
  readonly maxBufferedBytes: number;
  /** Most messages a subscriber may have queued before it is a slow consumer. */
  readonly maxBufferedMessages: number;
  /** A subscriber that writes nothing for this long while a backlog is queued is a slow consumer. */
  readonly stallTimeoutMs: number;
}

export const CloseCodes = {
  normal: 1000,
  goingAway: 1001,
  invalidRequest: 4400,
  unknownView: 4404,
  resumeTooOld: 4409,
  viewDropped: 4410,
  slowConsumer: 4429,
  internal: 4500,
  unavailable: 4503,
} as const;

export type SubscriberState = 'starting' | 'live' | 'closed';

/** Wire text of recent epochs a feed keeps for subscribers catching up (characters). */
const RECENT_BYTES = 8 * 1024 * 1024;

/** How long a subscriber closed to make room in the memory budget may take to accept the close. */
const EVICTION_GRACE_MS = 250;

export class Subscriber implements BudgetMember {
  state: SubscriberState = 'starting';
  /** The last epoch this subscriber was sent (snapshot epoch, resume point, or a changes message). */
  cursor: number;
  /** When the last message was queued (ms), for progress heartbeats. */
  lastSentAt = Date.now();
  /** Told when the subscriber is failed with an error code (metrics). */
  onFail: ((code: string) => void) | undefined;
  /** Bytes this subscriber queued that are not written out yet. */
  private queued = 0;
  /** Closing: its queued bytes count as the budget's closing bytes, not as live ones. */
  private retired = false;
  /** Since when the queue has not been empty (0: empty): how the budget tells who fell behind. */
  private busyFrom = 0;
  /** Room `paced` reserved in the budget for the next message. */
  private reservation: Reservation | null = null;
  /** Room `paced` is waiting for. */
  private waitingRoom: Reservation | null = null;
  private readonly gone: Promise<'closed'>;
  /**
   * The client's bound on one message (`maxMessageBytes`), or null: a larger `changes` message or
   * snapshot chunk is sent in parts (message-parts.ts). By default an epoch is one message.
   */
  maxMessageBytes: number | null = null;

  constructor(
    readonly view: string,
    readonly transport: SubscriberTransport,
    readonly limits: SubscriberLimits,
    startEpoch: number,
    readonly budget: MemoryBudget | null = null,
  ) {
    this.cursor = startEpoch;
    budget?.join(this);
    let closed: () => void = () => undefined;
    this.gone = new Promise((resolve) => (closed = () => resolve('closed')));
    transport.onClose(() => {
      this.state = 'closed';
      this.retire();
      closed();
    });
  }

  get closed(): boolean {
    return this.state === 'closed' || this.transport.closed;
  }

  heldBytes(): number {
    return this.queued;
  }

  busySince(): number {
    return this.busyFrom;
  }

  evict(): void {
    // It has not emptied its queue for a while: waiting long for it to take the close would only
    // keep the memory the others need, so it is cut off soon.
    this.fail(
      'SLOW_CONSUMER',
      CloseCodes.slowConsumer,
      slowConsumerMessage(this, 'memory'),
      { epoch: this.cursor },
      EVICTION_GRACE_MS,
    );
  }

  /**
   * Queues a message unconditionally (control messages, and paced ones once they have room); it
   * uses up the room `paced` reserved.
   */
  write(text: string): void {
    if (this.maxMessageBytes !== null) {
      const parts = messageParts(text, this.maxMessageBytes);
      if (parts.length > 1) {
        for (const part of parts) this.writeOne(part);
        return;
      }
    }
    this.writeOne(text);
  }

  /** Queues one frame (one line for NDJSON). */
  private writeOne(text: string): void {
    if (this.closed) return;
    const bytes = utf8Length(text) + 1;
    if (this.queued === 0) this.busyFrom = Date.now();
    this.queued += bytes;
    const retired = this.retired;
    // The reserved room becomes these bytes (any excess reserved is given back).
    const reserved = this.reservation;
    this.reservation = null;
    reserved?.take();
    if (retired) this.budget?.addClosing(bytes);
    else this.budget?.addLive(bytes);
    if (reserved !== null) this.budget?.wake();
    this.transport.send(text, () => {
      this.queued -= bytes;
      if (this.queued === 0) this.busyFrom = 0;
      // Bytes queued while live were moved to the closing account when the subscriber retired.
      if (retired || this.retired) this.budget?.addClosing(-bytes);
      else this.budget?.addLive(-bytes);
    });
    this.lastSentAt = Date.now();
  }

  /**
   * Queues a paced message (a snapshot chunk, a stored backlog epoch): when it is larger than the
   * room reserved by `paced`, waits for room for all of it first. False when the subscriber failed.
   */
  async send(text: string): Promise<boolean> {
    const bytes = utf8Length(text) + 1;
    if (this.budget !== null && (this.reservation?.bytes ?? 0) < bytes) {
      if (!(await this.paced(bytes))) return false;
    }
    this.write(text);
    return !this.closed;
  }

  /**
   * Queues a paced message only if it fits now (its reservation, or free room in the budget and in
   * its own buffer); false, and nothing queued, otherwise.
   */
  tryWrite(text: string): boolean {
    if (this.closed) return false;
    const bytes = utf8Length(text) + 1;
    const reserved = this.reservation?.bytes ?? 0;
    if (reserved < bytes) {
      if (this.transport.bufferedBytes() >= this.limits.maxBufferedBytes / 2) return false;
      if (this.budget !== null && !this.budget.hasRoom(bytes - reserved)) return false;
    }
    this.write(text);
    return true;
  }

  private dropReservation(): void {
    const r = this.reservation;
    this.reservation = null;
    r?.release();
  }

  /** Leaves the budget's live account (closing): what is still queued is freed as the socket ends. */
  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.dropReservation();
    this.waitingRoom?.release();
    this.waitingRoom = null;
    this.budget?.leave(this);
    this.budget?.retire(this.queued);
  }

  /**
   * Would queuing `bytes` more exceed the bound? A message is always accepted into an empty buffer,
   * so one message larger than the bound does not fail a consumer that keeps up.
   */
  overLimit(bytes: number): boolean {
    const pending = this.transport.pendingMessages();
    if (pending === 0) return false;
    return (
      this.transport.bufferedBytes() + bytes > this.limits.maxBufferedBytes ||
      pending + 1 > this.limits.maxBufferedMessages
    );
  }

  /**
   * Live delivery of one epoch's message. Epochs at or before the cursor were already delivered
   * (from the snapshot or the backlog) and are skipped; past its own bound the subscriber is closed.
   * 'behind' when the shared budget has no room (and no one who fell behind could be closed to make
   * it): the subscriber leaves live delivery and takes this epoch from the stored changelog later.
   */
  offer(epoch: number, text: string): 'sent' | 'skipped' | 'behind' {
    if (this.state !== 'live' || epoch <= this.cursor) return 'skipped';
    if (this.overLimit(text.length)) {
      this.fail('SLOW_CONSUMER', CloseCodes.slowConsumer, slowConsumerMessage(this, 'buffer'), {
        epoch: this.cursor,
      });
      return 'skipped';
    }
    if (this.budget !== null) {
      const outcome = this.budget.admit(this, utf8Length(text) + 1);
      if (outcome === 'evicted') return 'skipped';
      if (outcome === 'wait') return 'behind';
    }
    this.write(text);
    this.cursor = epoch;
    return 'sent';
  }

  /** Whether a small control message (a heartbeat) may be queued now. */
  canSend(bytes: number): boolean {
    return !this.overLimit(bytes) && (this.budget === null || this.budget.hasRoom(bytes));
  }

  /**
   * Waits until this subscriber's buffer is below half its bound and the shared budget has room for
   * `bytes` (held for it until its next `write`), or fails it as slow once nothing moved for the
   * stall timeout. False when the subscriber failed or closed.
   */
  async paced(bytes = 0): Promise<boolean> {
    this.dropReservation();
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = setTimeout(() => resolve('stalled'), this.limits.stallTimeoutMs);
    });
    try {
      if (this.transport.bufferedBytes() >= this.limits.maxBufferedBytes / 2) {
        const outcome = await Promise.race([
          this.transport.drained().then(() => 'drained' as const),
          stalled,
        ]);
        if (outcome === 'stalled') return this.stalled();
        if (this.closed) return false;
      }
      if (this.budget === null || bytes <= 0) return true;
      // Short of room, a subscriber first takes what it already has: room goes to those that read.
      if (!this.budget.hasRoom(bytes) && this.queued > 0) {
        const outcome = await Promise.race([
          this.transport.drained().then(() => 'drained' as const),
          stalled,
        ]);
        if (outcome === 'stalled') return this.stalled();
        if (this.closed) return false;
      }
      const room = this.budget.reserve(bytes);
      this.waitingRoom = room;
      const outcome = await Promise.race([room.ready.then(() => 'room' as const), stalled, this.gone]);
      this.waitingRoom = null;
      if (outcome !== 'room' || this.closed) {
        room.release();
        return outcome === 'stalled' ? this.stalled() : false;
      }
      this.reservation = room;
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  private stalled(): false {
    this.fail('SLOW_CONSUMER', CloseCodes.slowConsumer, slowConsumerMessage(this, 'stalled'), {
      epoch: this.cursor,
    });
    return false;
  }

  /** Sends an `error` message, then closes with `closeCode`. */
  fail(
    code: string,
    closeCode: number,
    message: string,
    extra: Record<string, unknown> = {},
    graceMs?: number,
  ): void {
    if (this.closed) return;
    this.onFail?.(code);
    this.retire();
    this.write(JSON.stringify({ type: 'error', code, message, ...extra }));
    this.state = 'closed';
    this.transport.close(closeCode, code, graceMs);
  }
}

function slowConsumerMessage(sub: Subscriber, why: 'buffer' | 'memory' | 'stalled'): string {
  const resume = `resume from epoch ${sub.cursor}`;
  if (why === 'memory')
    return `subscriber of view "${sub.view}" held the most unsent bytes when the server's subscriber memory budget was full; ${resume}`;
  if (why === 'stalled')
    return `subscriber of view "${sub.view}" read nothing for ${sub.limits.stallTimeoutMs} ms; ${resume}`;
  return `subscriber of view "${sub.view}" fell behind by more than ${sub.limits.maxBufferedBytes} bytes or ${sub.limits.maxBufferedMessages} messages; ${resume}`;
}

/** The live subscribers of one view. */
export class ViewFeed {
  readonly subscribers = new Set<Subscriber>();
  closed = false;
  /** A subscriber left live delivery to catch up from the stored changelog (no room in the budget). */
  onBehind: ((sub: Subscriber) => void) | undefined;

  constructor(
    readonly view: string,
    readonly incarnation: number,
  ) {}

  add(sub: Subscriber): void {
    sub.state = 'live';
    this.subscribers.add(sub);
    sub.transport.onClose(() => this.subscribers.delete(sub));
  }

  /**
   * The wire text of the last epochs published, for subscribers catching up from the stored
   * changelog (they then share one string per epoch instead of each decoding its own).
   */
  private readonly recent = new Map<number, string>();
  private recentBytes = 0;

  recentText(epoch: number): string | undefined {
    return this.recent.get(epoch);
  }

  publish(epoch: number, text: string): void {
    this.recent.set(epoch, text);
    this.recentBytes += text.length;
    for (const [e, t] of this.recent) {
      if (this.recentBytes <= RECENT_BYTES || this.recent.size <= 1) break;
      this.recent.delete(e);
      this.recentBytes -= t.length;
    }
    for (const sub of this.subscribers) {
      const outcome = sub.offer(epoch, text);
      if (sub.closed) this.subscribers.delete(sub);
      else if (outcome === 'behind') {
        this.subscribers.delete(sub);
        sub.state = 'starting';
        this.onBehind?.(sub);
      }
    }
  }

  /** Progress heartbeats: every live subscriber idle for `idleMs` learns the current epoch. */
  heartbeat(epoch: number, now: number, idleMs: number): void {
    for (const sub of this.subscribers) {
      if (sub.closed) {
        this.subscribers.delete(sub);
        continue;
      }
      if (now - sub.lastSentAt < idleMs || !sub.canSend(64)) continue;
      if (epoch > sub.cursor) sub.cursor = epoch;
      sub.write(`{"type":"progress","epoch":${sub.cursor}}`);
    }
  }

  closeAll(code: string, closeCode: number, message: string): void {
    this.closed = true;
    for (const sub of this.subscribers) sub.fail(code, closeCode, message);
    this.subscribers.clear();
  }
}
