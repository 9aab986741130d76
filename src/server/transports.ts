// The two subscriber transports: a WebSocket (one message per frame) and an NDJSON HTTP response (one
// message per line). Both count queued bytes/messages for the slow-consumer bound and force-close a
// peer that does not take the close within a grace period, so a stalled client never pins memory.
// Every message's `written` callback runs exactly once: when it left the process, or when the
// connection is gone (whatever was still queued is then freed), so memory accounts always settle.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { SubscriberTransport } from '../sink/subscriber.ts';
import { utf8Bytes, utf8Length } from '../sink/utf8-text.ts';

/**
 * The longest a closed stream is kept while its peer still reads what was queued before the close
 * (a large message, then the `error`): the bytes stay in the subscriber memory budget meanwhile.
 */
export const MAX_CLOSE_DRAIN_MS = 30_000;

/** A closed stream whose bytes moved within this long (or its grace, if longer) is still read. */
export const CLOSE_PROGRESS_WINDOW_MS = 1_000;

abstract class CountingTransport implements SubscriberTransport {
  private pending = 0;
  private waiters: (() => void)[] = [];
  private closeListeners: (() => void)[] = [];
  private readonly unsettled = new Set<() => void>();
  /** Counts the bytes of each message sent (a tenant's metering); null: not metered. */
  private meter: ((bytes: number) => void) | null = null;
  closed = false;

  constructor(
    protected readonly closeGraceMs: number,
    /** Bytes the transport adds to each message on the wire (NDJSON's newline). */
    private readonly framingBytes = 0,
  ) {}

  /** Meters every message sent from now on. */
  meterBytes(meter: (bytes: number) => void): void {
    this.meter = meter;
  }

  protected abstract write(text: string, done: () => void): void;
  abstract bufferedBytes(): number;
  /** The TCP socket under the stream (what the kernel is given), once known. */
  protected abstract tcpSocket(): Socket | null;

  /**
   * Bytes not yet taken by the kernel: what is queued, plus what libuv still holds of the message
   * being written. A stream's queued length counts a message until all of it is written, so it does
   * not move while a peer reads one large message slowly; libuv's write queue does.
   */
  private unsentBytes(): number {
    const handle = (this.tcpSocket() as { _handle?: { writeQueueSize?: number } } | null)?._handle;
    return this.bufferedBytes() + (handle?.writeQueueSize ?? 0);
  }
  protected abstract end(code: number, reason: string): void;
  protected abstract destroy(): void;

  send(text: string, written?: () => void): void {
    if (this.closed) {
      written?.();
      return;
    }
    this.meter?.(utf8Length(text) + this.framingBytes);
    this.pending += 1;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      this.unsettled.delete(settle);
      this.pending -= 1;
      written?.();
      if (this.pending === 0) this.wake();
    };
    this.unsettled.add(settle);
    this.write(text, settle);
  }

  /** The connection ended: what it still held is freed. */
  protected gone(): void {
    for (const settle of [...this.unsettled]) settle();
  }

  pendingMessages(): number {
    return this.pending;
  }

  drained(): Promise<void> {
    if (this.pending === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Ends the stream after what is queued (the `error` message a failed subscriber was sent last).
   * A peer that has not taken it all after `graceMs` is cut off — unless it is still reading: a peer
   * reading a large message slowly gets to its end and to the `error` after it, for at most
   * MAX_CLOSE_DRAIN_MS. Cut off in the middle of a message it would see a truncated frame or line
   * and no error (API.md: the error always comes first). "Still reading" is: bytes left the process
   * within the last max(graceMs, CLOSE_PROGRESS_WINDOW_MS) — the kernel takes a slow reader's bytes
   * in steps of about half its send buffer, so a shorter grace alone cannot see them move. A peer
   * that reads nothing is cut off after that window.
   */
  close(code: number, reason: string, graceMs = this.closeGraceMs): void {
    if (this.closed) return;
    this.markClosed();
    this.end(code, reason);
    const started = Date.now();
    const window = Math.max(graceMs, CLOSE_PROGRESS_WINDOW_MS);
    let movedAt = started;
    let left = this.unsentBytes();
    const check = (): void => {
      const now = Date.now();
      const unsent = this.unsentBytes();
      if (unsent < left) movedAt = now;
      left = unsent;
      const keep =
        unsent > 0 &&
        now - movedAt < window &&
        now + graceMs - started <= Math.max(graceMs, MAX_CLOSE_DRAIN_MS);
      if (keep) {
        this.closeExtensions += 1;
        setTimeout(check, graceMs).unref();
        return;
      }
      this.destroy();
      this.gone();
    };
    setTimeout(check, graceMs).unref();
  }

  /** Grace periods added to closes because the peer was still reading (tests count them). */
  closeExtensions = 0;

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  protected markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake();
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const l of listeners) l();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** The TCP socket under a WebSocket: its writes can be held back and sent together. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

export class WsTransport extends CountingTransport {
  /** True while the socket is corked until the end of the current tick. */
  private corked = false;

  constructor(
    private readonly socket: WebSocket,
    closeGraceMs: number,
    /** The connection's TCP socket (ws writes its frames there), or null to send each frame at once. */
    private readonly raw: Corkable | null = null,
  ) {
    super(closeGraceMs);
    socket.on('close', () => {
      this.markClosed();
      this.gone();
    });
    socket.on('error', () => this.markClosed());
  }

  protected write(text: string, done: () => void): void {
    // A socket the peer is closing takes nothing more: the subscriber is closed now, not once the
    // close handshake ends (meanwhile it would go on encoding messages nobody can receive).
    if (this.socket.readyState !== this.socket.OPEN) {
      done();
      this.markClosed();
      return;
    }
    // Frames sent in one tick (the epochs of one group commit are published together) leave in one
    // write: a write to the socket cost about 0.5 ms of the server's thread per frame in the server
    // bench. ws corks around each frame itself; corks nest, so its uncork no longer flushes alone.
    if (this.raw !== null && !this.corked) {
      const raw = this.raw;
      this.corked = true;
      raw.cork();
      process.nextTick(() => {
        this.corked = false;
        raw.uncork();
      });
    }
    // The bytes encoded once for every subscriber of the epoch (sent as a text frame all the same).
    this.socket.send(utf8Bytes(text), { binary: false }, () => done());
  }

  bufferedBytes(): number {
    return this.socket.bufferedAmount;
  }

  protected tcpSocket(): Socket | null {
    return (this.socket as unknown as { _socket?: Socket })._socket ?? null;
  }

  protected end(code: number, reason: string): void {
    this.socket.close(code, reason.slice(0, 120));
  }

  protected destroy(): void {
    this.socket.terminate();
  }
}

/** Messages at least this long (characters) are written as shared bytes (utf8-text.ts caches them). */
const SHARED_BYTES_FROM = 1024;
const NEWLINE = Buffer.from('\n');

export class NdjsonTransport extends CountingTransport {
  constructor(
    private readonly res: ServerResponse,
    closeGraceMs: number,
  ) {
    super(closeGraceMs, 1);
    // The peer went away: the response can never finish, so release the socket (a half-open
    // socket with an unfinished response would hold the server's close forever).
    const gone = (): void => {
      this.markClosed();
      if (!res.writableFinished) res.destroy();
      this.gone();
    };
    res.on('close', gone);
    res.on('error', gone);
  }

  protected write(text: string, done: () => void): void {
    if (text.length < SHARED_BYTES_FROM) {
      this.res.write(`${text}\n`, () => done());
      return;
    }
    // An epoch's message goes to every subscriber of the view in the same tick: its bytes are
    // encoded once and the same Buffer is queued on each response, followed by the newline. A line
    // built per subscriber (`${text}\n`) was a new string, encoded into a new buffer of the
    // message's size for each one (a 1M-row epoch: 55 MB of CPU work and memory per subscriber).
    this.res.write(utf8Bytes(text));
    this.res.write(NEWLINE, () => done());
  }

  bufferedBytes(): number {
    return this.res.writableLength;
  }

  protected tcpSocket(): Socket | null {
    return this.res.socket;
  }

  protected end(): void {
    this.res.end();
  }

  protected destroy(): void {
    this.res.destroy();
  }
}
