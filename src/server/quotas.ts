// Per-tenant quotas (docs/security.md#quotas), checked before a request does anything, so a refused
// request has no effect: sizes (objects, connectors, state bytes, subscribers) answer
// 403 QUOTA_EXCEEDED, rates (ingest rows/s and bytes/s) 429 RATE_LIMITED with Retry-After. Each
// tenant's rate is a token bucket of its own holding one second of its rate, so a tenant at its
// limit is refused at the door and takes no engine work from the others.
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import { parseInSlices } from '../parser/parse.ts';
import type { Quotas } from '../storage/tenant-store.ts';
import { isTemporaryView } from './query-subscriptions.ts';
import type { SluiceRuntime } from './runtime.ts';

/** What a script would add and whether it writes at all. */
export interface ScriptFootprint {
  /** CREATE TABLE / MATERIALIZED VIEW / SOURCE / SINK statements. */
  readonly creates: number;
  /** CREATE SOURCE / SINK statements. */
  readonly connectors: number;
  /** Any statement that changes state (DDL or DML). */
  readonly writes: boolean;
  /** Any statement that may add state (all writes but DELETE and DROP). */
  readonly grows: boolean;
}

/**
 * Parses `sql` in slices (a long script does not hold the loop) and counts what it creates. Null
 * when it does not parse: the engine then refuses it whole with its parse error.
 */
export async function scriptFootprint(sql: string, limits: SqlLimits): Promise<ScriptFootprint | null> {
  const statements = await parseInSlices(sql, limits);
  if (statements === null) return null;
  let creates = 0;
  let connectors = 0;
  let writes = false;
  let grows = false;
  for (const s of statements) {
    if (s.kind === 'createTable' || s.kind === 'createView') creates += 1;
    if (s.kind === 'createSource' || s.kind === 'createSink') {
      creates += 1;
      connectors += 1;
    }
    if (s.kind !== 'select' && s.kind !== 'explain' && s.kind !== 'show') {
      writes = true;
      if (s.kind !== 'delete' && s.kind !== 'drop') grows = true;
    }
  }
  return { creates, connectors, writes, grows };
}

/** A tenant's objects now: tables, views (not temporary ones of query subscriptions), sources, sinks. */
export function objectCounts(runtime: SluiceRuntime): { objects: number; connectors: number } {
  const catalog = runtime.engine.catalog();
  const sources = runtime.sourceReports().length;
  const sinks = runtime.sinkReports().length;
  // Sources are tables only their connector writes: the catalog lists them among the tables.
  const tables = catalog.tables.length;
  const views = catalog.views.filter((v) => !isTemporaryView(v.name)).length;
  return { objects: tables + views + sinks, connectors: sources + sinks };
}

/** The state a tenant holds, in bytes: its views' and its shared arrangements'. */
export function stateBytes(runtime: SluiceRuntime): number {
  if (!runtime.store.db.open) return 0;
  let bytes = 0;
  for (const v of runtime.engine.catalog().views) bytes += v.stateBytes;
  for (const a of runtime.engine.sharedArrangements()) bytes += a.stateBytes;
  return bytes + runtime.engine.tableStateBytes();
}

function exceeded(what: string, limit: number, detail: string): SluiceError {
  return new SluiceError('QUOTA_EXCEEDED', `quota exceeded: ${what} (at most ${limit})`, {
    detail,
    hint: 'drop something first, or ask the operator to raise the quota (PATCH /v1/tenants/{t})',
  });
}

/** The error a script would meet against the tenant's size quotas, or null. */
export function checkScript(
  runtime: SluiceRuntime,
  quotas: Quotas,
  footprint: ScriptFootprint,
): SluiceError | null {
  if (!footprint.writes) return null;
  const now = objectCounts(runtime);
  if (quotas.objects !== null && footprint.creates > 0 && now.objects + footprint.creates > quotas.objects) {
    return exceeded(
      'objects',
      quotas.objects,
      `the tenant has ${now.objects} and the script creates ${footprint.creates}; no statement of it was run`,
    );
  }
  if (
    quotas.connectors !== null &&
    footprint.connectors > 0 &&
    now.connectors + footprint.connectors > quotas.connectors
  ) {
    return exceeded(
      'connectors',
      quotas.connectors,
      `the tenant has ${now.connectors} sources and sinks and the script creates ${footprint.connectors}; no statement of it was run`,
    );
  }
  return footprint.grows ? checkState(runtime, quotas) : null;
}

/** Writes that may add state are refused while the tenant's state is at or above its quota. */
export function checkState(runtime: SluiceRuntime, quotas: Quotas): SluiceError | null {
  if (quotas.stateBytes === null) return null;
  const bytes = stateBytes(runtime);
  if (bytes < quotas.stateBytes) return null;
  return exceeded(
    'state bytes',
    quotas.stateBytes,
    `the tenant holds ${bytes} bytes of state; nothing was applied`,
  );
}

/** The error for one more subscriber of a tenant holding `subscribers`, or null. */
export function checkSubscriber(subscribers: number, quotas: Quotas): SluiceError | null {
  if (quotas.subscribers === null || subscribers < quotas.subscribers) return null;
  return exceeded('subscribers', quotas.subscribers, `the tenant has ${subscribers} open subscriptions`);
}

/** A token bucket holding at most one second of `rate`; a request may take it into debt once. */
class Bucket {
  private tokens: number | null = null;
  private at = 0;

  /** Seconds to wait before `amount` is admitted, or 0 (then it is taken). */
  take(rate: number, amount: number, now: number): number {
    if (this.tokens === null) this.tokens = rate;
    this.tokens = Math.min(rate, this.tokens + ((now - this.at) / 1000) * rate);
    this.at = now;
    // A request larger than the bucket is admitted when it is full, leaving a debt: the rate holds.
    const needed = Math.min(amount, rate);
    if (this.tokens >= needed) {
      this.tokens -= amount;
      return 0;
    }
    return Math.max(1, Math.ceil((needed - this.tokens) / rate));
  }

  /** Gives back what an admitted request took (it was refused further on and applied nothing). */
  refund(amount: number): void {
    if (this.tokens !== null) this.tokens += amount;
  }
}

/** RATE_LIMITED with the seconds to wait (sent as Retry-After). */
export class RateLimitedError extends SluiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message, {
      detail: `retry after ${retryAfterSeconds} s; nothing was applied`,
      hint: 'send smaller or fewer batches, or ask the operator to raise the quota',
    });
  }
}

/** A tenant's ingest rates. */
export class IngestLimiter {
  private readonly rows = new Bucket();
  private readonly bytes = new Bucket();

  /** Admits (and takes from the buckets) an ingest of `rows` rows and `bytes` bytes, or refuses it. */
  admit(quotas: Quotas, rows: number, bytes: number, now = Date.now()): RateLimitedError | null {
    const rowRate = quotas.ingestRowsPerSecond;
    const byteRate = quotas.ingestBytesPerSecond;
    if (rowRate !== null) {
      const wait = this.rows.take(Math.max(1, rowRate), rows, now);
      if (wait > 0)
        return new RateLimitedError(
          `rate limited: the tenant's ingest quota of ${rowRate} rows per second is used up`,
          wait,
        );
    }
    if (byteRate !== null) {
      const wait = this.bytes.take(Math.max(1, byteRate), bytes, now);
      if (wait > 0) {
        if (rowRate !== null) this.rows.refund(rows);
        return new RateLimitedError(
          `rate limited: the tenant's ingest quota of ${byteRate} bytes per second is used up`,
          wait,
        );
      }
    }
    return null;
  }
}
