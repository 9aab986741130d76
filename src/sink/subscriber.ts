// One changelog subscriber (WebSocket or NDJSON): snapshot → stored backlog → live epochs, in epoch
// order with no gap and no duplicate. Memory per subscriber is bounded; past the bound it is told
// SLOW_CONSUMER (with the last epoch it was sent) and closed, never silently dropped.

/** The byte pipe a subscriber writes to; the WebSocket and NDJSON adapters implement it. */
export interface SubscriberTransport {
  /** Queues one message (one frame / one line). */
  send(text: string): void;
  /** Bytes queued but not yet written to the kernel. */
  bufferedBytes(): number;
  /** Messages queued but not yet written. */
  pendingMessages(): number;
  /** Resolves once everything queued so far is written (or the transport closed). */
  drained(): Promise<void>;
  /** Ends the stream after what is queued; `code` is a WebSocket close code. */
  close(code: number, reason: string): void;
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

export class Subscriber {
  state: SubscriberState = 'starting';
  /** The last epoch this subscriber was sent (snapshot epoch, resume point, or a changes message). */
  cursor: number;
  /** When the last message was queued (ms), for progress heartbeats. */
  lastSentAt = Date.now();
  /** Told when the subscriber is failed with an error code (metrics). */
  onFail: ((code: string) => void) | undefined;

  constructor(
    readonly view: string,
    readonly transport: SubscriberTransport,
    readonly limits: SubscriberLimits,
    startEpoch: number,
  ) {
    this.cursor = startEpoch;
    transport.onClose(() => {
      this.state = 'closed';
    });
  }

  get closed(): boolean {
    return this.state === 'closed' || this.transport.closed;
  }

  /** Queues a message unconditionally (control messages and paced backlog). */
  write(text: string): void {
    if (this.closed) return;
    this.transport.send(text);
    this.lastSentAt = Date.now();
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
   * (from the snapshot or the backlog) and are skipped; past the bound the subscriber is closed.
   */
  offer(epoch: number, text: string): void {
    if (this.state !== 'live' || epoch <= this.cursor) return;
    if (this.overLimit(text.length)) {
      this.fail('SLOW_CONSUMER', CloseCodes.slowConsumer, slowConsumerMessage(this), { epoch: this.cursor });
      return;
    }
    this.write(text);
    this.cursor = epoch;
  }

  /** Waits until the transport drained, or fails the subscriber as slow after the stall timeout. */
  async paced(): Promise<boolean> {
    if (this.closed) return false;
    if (this.transport.bufferedBytes() < this.limits.maxBufferedBytes / 2) return true;
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = setTimeout(() => resolve('stalled'), this.limits.stallTimeoutMs);
    });
    const outcome = await Promise.race([this.transport.drained().then(() => 'drained' as const), stalled]);
    clearTimeout(timer);
    if (outcome === 'stalled') {
      this.fail('SLOW_CONSUMER', CloseCodes.slowConsumer, slowConsumerMessage(this), { epoch: this.cursor });
      return false;
    }
    return !this.closed;
  }

  /** Sends an `error` message, then closes with `closeCode`. */
  fail(code: string, closeCode: number, message: string, extra: Record<string, unknown> = {}): void {
    if (this.closed) return;
    this.onFail?.(code);
    this.transport.send(JSON.stringify({ type: 'error', code, message, ...extra }));
    this.state = 'closed';
    this.transport.close(closeCode, code);
  }
}

function slowConsumerMessage(sub: Subscriber): string {
  return `subscriber of view "${sub.view}" fell behind by more than ${sub.limits.maxBufferedBytes} bytes or ${sub.limits.maxBufferedMessages} messages; resume from epoch ${sub.cursor}`;
}

/** The live subscribers of one view. */
export class ViewFeed {
  readonly subscribers = new Set<Subscriber>();
  closed = false;

  constructor(
    readonly view: string,
    readonly incarnation: number,
  ) {}

  add(sub: Subscriber): void {
    sub.state = 'live';
    this.subscribers.add(sub);
    sub.transport.onClose(() => this.subscribers.delete(sub));
  }

  publish(epoch: number, text: string): void {
    for (const sub of this.subscribers) {
      sub.offer(epoch, text);
      if (sub.closed) this.subscribers.delete(sub);
    }
  }

  /** Progress heartbeats: every live subscriber idle for `idleMs` learns the current epoch. */
  heartbeat(epoch: number, now: number, idleMs: number): void {
    for (const sub of this.subscribers) {
      if (sub.closed) {
        this.subscribers.delete(sub);
        continue;
      }
      if (now - sub.lastSentAt < idleMs || sub.overLimit(64)) continue;
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
