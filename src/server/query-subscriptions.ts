// Subscriptions to a query or to a table. The query becomes a temporary materialized view, named by a
// hash of its text (so every client subscribing to the same query shares one), created through the
// journal like any view — so a subscriber resumes from its last epoch exactly as on a named view,
// also across a restart — and dropped, through the journal, once it has had no subscriber for the
// linger time. Names with the prefix are refused in clients' scripts (RESERVED_NAME), so nothing a
// user creates is ever taken for one of these.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import type { SluiceRuntime } from './runtime.ts';
import type { RuntimeOptions } from './runtime/types.ts';

export const TEMPORARY_VIEW_PREFIX = 'sluice_sub_';

export interface QuerySubscriptionOptions {
  /** How long a temporary view stays after its last subscriber left (a client may resume meanwhile). */
  readonly lingerMs: number;
  /** Most temporary views at once (of all tenants together when `heldInAll` is given). */
  readonly maxViews: number;
  /** The temporary views of every tenant's runtime (the server's count); absent: this runtime's. */
  readonly heldInAll?: () => number;
  /**
   * At the cap, drops one temporary view without subscribers (of the tenant holding the most) and
   * says whether it did; absent: this runtime's own, via dropIdle.
   */
  readonly makeRoom?: () => boolean;
}

export function isTemporaryView(name: string): boolean {
  return name.startsWith(TEMPORARY_VIEW_PREFIX);
}

/**
 * The SELECT of a subscription's text: `SELECT …` as it is, or `SUBSCRIBE (SELECT …)` /
 * `SUBSCRIBE SELECT …` with the wrapper blanked out character for character, so positions in errors
 * still point into the text the client sent.
 */
export function subscriptionSelect(text: string): string {
  const wrapped = /^(\s*subscribe\b\s*)(\(?)([\s\S]*?)(\)?)(\s*;?\s*)$/i.exec(text);
  if (wrapped === null) return text;
  const [, keyword, open, inner, close, tail] = wrapped as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if ((open === '') !== (close === '')) {
    throw new SluiceError('SYNTAX_ERROR', 'unbalanced parentheses around the query of SUBSCRIBE', {
      position: { line: 1, column: 1 },
      hint: 'write SUBSCRIBE (SELECT …) or just SELECT …',
    });
  }
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  return `${blank(keyword)}${blank(open)}${inner}${blank(close)}${tail}`;
}

export class QuerySubscriptions {
  /** Temporary views with no subscriber, and since when. */
  private readonly idleSince = new Map<string, number>();
  /** Views whose drop was refused (e.g. a user's view reads one): logged once, retried each sweep. */
  private readonly stuck = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly logger: RuntimeOptions['logger'],
    private readonly options: QuerySubscriptionOptions,
  ) {
    this.timer = setInterval(
      () => this.sweep(Date.now()),
      Math.max(50, Math.min(5000, options.lingerMs / 4)),
    );
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /**
   * The temporary view serving `text` (a SELECT, or SUBSCRIBE of one), created if it does not exist.
   * Errors are the client's: a parse or bind error of the query (positions into `text`),
   * TOO_MANY_SUBSCRIBERS when the server holds its most temporary views. `admit`: the tenant's quota
   * for a view that must be created (its state), asked before making room and again at the CREATE's
   * turn; its error refuses the subscription.
   */
  async viewFor(text: string, admit: () => SluiceError | null = () => null): Promise<string> {
    const select = subscriptionSelect(text);
    this.runtime.engine.checkSingleSelect(select);
    const body = select.replace(/;\s*$/, '');
    const name = TEMPORARY_VIEW_PREFIX + createHash('sha256').update(body.trim()).digest('hex').slice(0, 20);
    if (!this.runtime.viewNames().includes(name)) {
      const refused = admit();
      if (refused !== null) throw refused;
      const heldNow = (): number =>
        this.options.heldInAll?.() ?? this.runtime.viewNames().filter(isTemporaryView).length;
      // Views lingering without a subscriber only wait for a client that may resume: at the cap they
      // make room rather than refuse, or one tenant's abandoned queries (each lingering a minute, its
      // subscriber quota not counting them) would refuse every other tenant's query subscriptions.
      const makeRoom = this.options.makeRoom ?? ((): boolean => this.dropIdle());
      while (heldNow() >= this.options.maxViews && makeRoom()) {
        // dropped one; look again
      }
      const full = (): SluiceError | null => {
        const held = heldNow();
        if (held < this.options.maxViews) return null;
        return new SluiceError(
          'TOO_MANY_SUBSCRIBERS',
          `cannot subscribe to a query: the server holds ${held} query subscriptions, the most allowed`,
          {
            hint: 'subscribe to an existing view, or retry once other query subscriptions end (--max-query-subscriptions)',
          },
        );
      };
      const refusedNow = full();
      if (refusedNow !== null) throw refusedNow;
      // Again at the CREATE's turn: queries that arrived together each passed the cap above (150 at
      // once held 150 views under a cap of 100). No room is made there: a view just created waits a
      // few microtasks for its subscriber and would look idle.
      const atTurn = (): SluiceError | null =>
        this.runtime.viewNames().includes(name) ? null : (admit() ?? full());
      // The query starts on the second line: its positions are the client's, one line down.
      const result = await this.runtime.executeSql(
        `CREATE MATERIALIZED VIEW IF NOT EXISTS "${name}" AS\n${body}`,
        {},
        undefined,
        atTurn,
      );
      if (result.error !== undefined) throw lineUp(result.error);
    }
    // A subscriber arrives within this synchronous block (the caller subscribes next): not idle.
    this.idleSince.delete(name);
    return name;
  }

  /**
   * Drops this runtime's temporary view that has been without a subscriber the longest (through the
   * journal, like DROP) to make room; false when every one has a subscriber (or the drop failed).
   */
  dropIdle(): boolean {
    if (!this.runtime.ready || this.runtime.failure !== null) return false;
    let oldest: string | null = null;
    let oldestSince = Infinity;
    for (const name of this.runtime.viewNames()) {
      if (!isTemporaryView(name) || this.stuck.has(name) || this.runtime.subscribersOf(name) > 0) continue;
      // Not swept since its last subscriber left: idle from now on.
      const since = this.idleSince.get(name) ?? Date.now();
      if (since < oldestSince) [oldest, oldestSince] = [name, since];
    }
    if (oldest === null) return false;
    const result = this.runtime.executeScript(`DROP MATERIALIZED VIEW IF EXISTS "${oldest}"`);
    if (result.error !== undefined) {
      this.stuck.add(oldest);
      return false;
    }
    this.idleSince.delete(oldest);
    return true;
  }

  /** Temporary views of this runtime (with or without subscribers). */
  get held(): number {
    return this.runtime.viewNames().filter(isTemporaryView).length;
  }

  /** Drops the temporary views idle for the linger time (through the journal, like DROP). */
  sweep(now: number): void {
    if (!this.runtime.ready || this.runtime.failure !== null) return;
    const live = new Set<string>();
    for (const name of this.runtime.viewNames()) {
      if (!isTemporaryView(name)) continue;
      live.add(name);
      if (this.runtime.subscribersOf(name) > 0) {
        this.idleSince.delete(name);
        continue;
      }
      const since = this.idleSince.get(name);
      if (since === undefined) {
        this.idleSince.set(name, now);
        continue;
      }
      if (now - since < this.options.lingerMs) continue;
      const result = this.runtime.executeScript(`DROP MATERIALIZED VIEW IF EXISTS "${name}"`);
      if (result.error === undefined) {
        this.idleSince.delete(name);
        this.stuck.delete(name);
      } else if (!this.stuck.has(name)) {
        this.stuck.add(name);
        this.logger.warn(
          { view: name, err: result.error },
          'a query subscription without subscribers could not be dropped; it is retried',
        );
      }
    }
    for (const name of this.idleSince.keys()) if (!live.has(name)) this.idleSince.delete(name);
  }
}

/** An error of the CREATE wrapping a query, with its position moved back into the query's text. */
function lineUp(error: SluiceError): SluiceError {
  const position = error.position;
  if (position === undefined || position.line < 2) return error;
  return new SluiceError(error.code, error.message, {
    position: { line: position.line - 1, column: position.column },
    ...(error.detail !== undefined ? { detail: error.detail } : {}),
    ...(error.hint !== undefined ? { hint: error.hint } : {}),
  });
}
