// While a view holds row errors its reads are refused (VIEW_ERROR) and its subscription stops
// (subscription.ts). A ViewErrorWatch then asks GET /v1/views/{name}/rows?limit=1 once a second:
// each refusal is reported (the server's own error body, to show), and the first successful read
// ends the watch (`cleared`: subscribe again from a snapshot). An unknown view ends it too. Used by
// the view page and the overview's featured chart, so both recover by themselves the same way.
import { ApiError, getJson, type ApiErrorBody } from './api.ts';
import { h } from './dom.ts';

export interface ViewErrorHandlers {
  /** The view still refuses reads: the server's error (usually VIEW_ERROR with the row). */
  error(body: ApiErrorBody): void;
  /** The view is readable again. */
  cleared(): void;
  /** The view no longer exists (UNKNOWN_VIEW). */
  unknown(body: ApiErrorBody): void;
}

export class ViewErrorWatch {
  private watching = false;
  private checking = false;
  private stopped = false;
  private timer: number | undefined;

  constructor(
    private readonly view: string,
    private readonly on: ViewErrorHandlers,
    private readonly intervalMs = 1000,
  ) {}

  /** Whether the view is (as far as this page knows) in error. */
  get active(): boolean {
    return this.watching;
  }

  /** Starts checking (at once, then every interval) until the view is readable or gone. */
  start(): void {
    if (this.stopped || this.watching) return;
    this.watching = true;
    void this.check();
  }

  /** For good: the page is closing. */
  stop(): void {
    this.stopped = true;
    this.watching = false;
    window.clearTimeout(this.timer);
  }

  private async check(): Promise<void> {
    if (this.checking || !this.watching) return;
    this.checking = true;
    try {
      await getJson(`/v1/views/${encodeURIComponent(this.view)}/rows?limit=1`);
      if (!this.watching) return;
      this.watching = false;
      this.on.cleared();
    } catch (error) {
      if (!this.watching || !(error instanceof ApiError)) return; // offline: the next check retries
      if (error.body.code === 'UNKNOWN_VIEW') {
        this.watching = false;
        this.on.unknown(error.body);
      } else this.on.error(error.body);
    } finally {
      this.checking = false;
      if (this.watching) this.timer = window.setTimeout(() => void this.check(), this.intervalMs);
    }
  }
}

/** The server's error body as text blocks: code and message, then its detail and hint. */
export function errorParts(body: ApiErrorBody): HTMLElement[] {
  const parts = [
    h('p', { class: 'error-message' }, h('code', { class: 'error-code' }, body.code), ' ', body.message),
  ];
  if (body.detail !== undefined)
    parts.push(h('p', { class: 'error-detail' }, h('strong', {}, 'Detail: '), body.detail));
  if (body.hint !== undefined)
    parts.push(h('p', { class: 'error-hint' }, h('strong', {}, 'Hint: '), body.hint));
  return parts;
}
