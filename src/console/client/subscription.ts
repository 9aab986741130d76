// A view's changelog over WebSocket (API.md "Subscribing"): snapshot first, then one `changes`
// message per epoch. On a dropped connection it resumes from the last fully applied epoch (no gap,
// no duplicate); when the server can no longer resume (RESUME_TOO_OLD) it starts over from a snapshot.
// A view holding row errors is not a lost connection: the server refuses its snapshot (an `error`
// VIEW_ERROR, close 4400) or, to a live subscriber, sends the error's appearance (`+E` in a
// `changes` message). Either way the subscription stops in state `error` until `restart()`, since
// reconnecting cannot help before the offending rows are retracted.
import type { WireChange, WireRow } from '../shared/changelog-state.ts';
import { signInNeeded, storedToken, type ColumnInfo } from './api.ts';

export interface ChangesMessage {
  readonly epoch: number;
  readonly positions: Readonly<Record<string, unknown>>;
  readonly changes: readonly WireChange[];
  readonly errors?: readonly unknown[];
}

export type ConnectionState = 'connecting' | 'loading' | 'live' | 'reconnecting' | 'error' | 'closed';

/** Why a subscription stopped: the server's error code and message. */
export interface StopReason {
  readonly code: string;
  readonly message: string;
}

export interface SubscriptionHandlers {
  /** A fresh snapshot starts: drop everything held. */
  reset(columns: readonly ColumnInfo[], key: readonly string[] | null, epoch: number): void;
  snapshotRows(rows: readonly WireRow[]): void;
  snapshotEnd(epoch: number): void;
  changes(message: ChangesMessage): void;
  progress(epoch: number): void;
  /** `reason` is set when the subscription stopped (`error`, `closed`) on a server error. */
  state(state: ConnectionState, detail?: string, reason?: StopReason): void;
}

/** Errors after which reconnecting cannot help. */
const FINAL = new Set(['UNKNOWN_VIEW', 'VIEW_DROPPED', 'INVALID_REQUEST', 'WRONG_OBJECT_KIND']);

export class ViewSubscription {
  private socket: WebSocket | null = null;
  private lastEpoch: number | null = null;
  private needSnapshot = true;
  private stopped = false;
  private retryMs = 500;
  private timer: number | undefined;
  private finalError: StopReason | null = null;
  private viewError: StopReason | null = null;

  constructor(
    readonly view: string,
    private readonly on: SubscriptionHandlers,
  ) {
    this.connect();
  }

  close(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.socket?.close(1000, 'page closed');
    this.socket = null;
  }

  /** Starts over with a fresh snapshot (after a view error was retracted). */
  restart(): void {
    if (this.stopped) return;
    window.clearTimeout(this.timer);
    const old = this.socket;
    this.socket = null;
    old?.close(1000, 'restart');
    this.lastEpoch = null;
    this.needSnapshot = true;
    this.viewError = null;
    this.retryMs = 500;
    this.connect();
  }

  private connect(): void {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const query =
      this.needSnapshot || this.lastEpoch === null ? 'snapshot=true' : `resumeFrom=${this.lastEpoch}`;
    const ws = new WebSocket(
      `${proto}://${location.host}/v1/views/${encodeURIComponent(this.view)}/subscribe?${query}`,
    );
    this.socket = ws;
    // A browser cannot set headers on a WebSocket: the token goes in the first message (never the URL).
    ws.onopen = () => {
      const token = storedToken();
      if (token !== null) ws.send(JSON.stringify({ type: 'auth', token }));
    };
    this.on.state(this.lastEpoch === null ? 'connecting' : 'reconnecting');
    ws.onmessage = (event) => {
      if (typeof event.data !== 'string') return;
      this.handle(JSON.parse(event.data) as { type: string } & Record<string, unknown>);
    };
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = null;
      if (this.stopped) return;
      if (this.finalError !== null) {
        this.on.state('closed', `${this.finalError.code}: ${this.finalError.message}`, this.finalError);
        return;
      }
      if (this.viewError !== null) {
        this.on.state('error', `${this.viewError.code}: ${this.viewError.message}`, this.viewError);
        return;
      }
      this.on.state('reconnecting', `connection lost; retrying in ${Math.round(this.retryMs / 100) / 10}s`);
      this.timer = window.setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(5000, this.retryMs * 2);
    };
  }

  private handle(msg: { type: string } & Record<string, unknown>): void {
    switch (msg.type) {
      case 'subscribed':
        if (msg.snapshot === true) {
          this.on.reset(
            (msg.columns as ColumnInfo[] | undefined) ?? [],
            (msg.key as string[] | null | undefined) ?? null,
            msg.epoch as number,
          );
          this.on.state('loading');
        } else {
          this.on.state('live');
        }
        return;
      case 'snapshot':
        this.on.snapshotRows((msg.rows as WireRow[] | undefined) ?? []);
        return;
      case 'snapshot_end':
        this.lastEpoch = msg.epoch as number;
        this.needSnapshot = false;
        this.retryMs = 500;
        this.on.snapshotEnd(this.lastEpoch);
        this.on.state('live');
        return;
      case 'changes':
        this.lastEpoch = msg.epoch as number;
        this.retryMs = 500;
        this.on.changes(msg as unknown as ChangesMessage);
        if ((msg as unknown as ChangesMessage).errors?.some((e) => isAppearance(e)) === true) {
          // The view now holds a row error: its reads are refused until it is retracted.
          this.stopWith({ code: 'VIEW_ERROR', message: `view "${this.view}" holds row errors` });
        }
        return;
      case 'progress':
        this.lastEpoch = Math.max(this.lastEpoch ?? 0, msg.epoch as number);
        this.on.progress(msg.epoch as number);
        return;
      case 'error': {
        const code = String(msg.code);
        const reason = { code, message: String(msg.message) };
        if (code === 'UNAUTHENTICATED') {
          this.finalError = reason;
          signInNeeded();
        } else if (code === 'RESUME_TOO_OLD') this.needSnapshot = true;
        else if (code === 'VIEW_ERROR') this.viewError = reason;
        else if (FINAL.has(code)) this.finalError = reason;
        return;
      }
    }
  }

  /** Closes the socket and reports `error` without reconnecting. */
  private stopWith(reason: StopReason): void {
    const ws = this.socket;
    this.socket = null;
    ws?.close(1000, 'view error');
    this.viewError = reason;
    this.on.state('error', `${reason.code}: ${reason.message}`, reason);
  }
}

function isAppearance(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { op?: unknown }).op === '+E';
}
