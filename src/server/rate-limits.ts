// A tenant's ingest rates (docs/security.md#quotas): rows/s and bytes/s, one token bucket each holding
// one second of the rate, shared by everything that writes rows into the tenant — ingest requests,
// INSERT/UPDATE/DELETE through /v1/sql, and its Kafka sources. Requests are refused at the door
// (429 RATE_LIMITED, nothing applied); a source is paced instead (it waits, reading nothing more,
// until its batch is admitted), so it never drops or skips a record.
import { SluiceError } from '../common/errors.ts';
import type { Quotas } from '../storage/tenant-store.ts';

/** A token bucket holding at most one second of `rate`; a request may take it into debt once. */
class Bucket {
  private tokens: number | null = null;
  private at = 0;

  /** Milliseconds to wait before `amount` is admitted, or 0 (then it is taken). */
  take(rate: number, amount: number, now: number): number {
    this.refill(rate, now);
    const tokens = this.tokens as number;
    // A request larger than the bucket is admitted when it is full, leaving a debt: the rate holds.
    const needed = Math.min(amount, rate);
    if (tokens >= needed) {
      this.tokens = tokens - amount;
      return 0;
    }
    return Math.max(1, Math.ceil(((needed - tokens) / rate) * 1000));
  }

  /** Takes `amount` more (positive: a debt an admitted write ran up) or gives it back (negative). */
  adjust(rate: number, amount: number, now: number): void {
    this.refill(rate, now);
    this.tokens = Math.min(rate, (this.tokens as number) - amount);
  }

  private refill(rate: number, now: number): void {
    if (this.tokens === null) this.tokens = rate;
    this.tokens = Math.min(rate, this.tokens + ((now - this.at) / 1000) * rate);
    this.at = now;
  }
}

/** RATE_LIMITED with the seconds to wait (sent as Retry-After). */
export class RateLimitedError extends SluiceError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    hint = 'send smaller or fewer batches, or ask the operator to raise the quota',
  ) {
    super('RATE_LIMITED', message, {
      detail: `retry after ${retryAfterSeconds} s; nothing was applied`,
      hint,
    });
  }
}

/** What a refused take waits for: the milliseconds, and which rate refused it. */
interface Refusal {
  readonly waitMs: number;
  readonly message: string;
}

/** A tenant's ingest rates. */
export class IngestLimiter {
  private readonly rows = new Bucket();
  private readonly bytes = new Bucket();
  /** Times a Kafka source of the tenant had to wait for its batch to be admitted (metrics, tests). */
  sourceWaits = 0;

  /** Admits (and takes from the buckets) an ingest of `rows` rows and `bytes` bytes, or refuses it. */
  admit(quotas: Quotas, rows: number, bytes: number, now = Date.now()): RateLimitedError | null {
    const refused = this.take(quotas, rows, bytes, now);
    return refused === null
      ? null
      : new RateLimitedError(refused.message, Math.max(1, Math.ceil(refused.waitMs / 1000)));
  }

  /**
   * Admits a /v1/sql script with DML, or refuses it (then nothing of it runs). Its INSERT rows are
   * known; an UPDATE or DELETE counts one row until it has run, as its row count is known only then:
   * `settle` then takes what the script actually wrote, leaving a debt when it wrote more (so the
   * rate holds over time, as for an ingest batch larger than the bucket).
   */
  admitScript(
    quotas: Quotas,
    footprint: { readonly dmlRows: number; readonly dmlUnknown: number },
    bytes: number,
    now = Date.now(),
  ): RateLimitedError | null {
    return this.admit(quotas, footprint.dmlRows + footprint.dmlUnknown, bytes, now);
  }

  /** An admitted write reserved `reserved` rows and wrote `written`: the difference is settled. */
  settle(quotas: Quotas, reserved: number, written: number, now = Date.now()): void {
    const rate = quotas.ingestRowsPerSecond;
    if (rate !== null && written !== reserved) this.rows.adjust(Math.max(1, rate), written - reserved, now);
  }

  /**
   * For a Kafka source: 0 when a batch of `rows` rows and `bytes` bytes is admitted now (and taken),
   * else the milliseconds to wait before asking again (nothing taken). A source waits, it is never
   * refused.
   */
  sourceWait(quotas: Quotas, rows: number, bytes: number, now = Date.now()): number {
    const refused = this.take(quotas, rows, bytes, now);
    if (refused === null) return 0;
    this.sourceWaits += 1;
    return refused.waitMs;
  }

  /**
   * The largest batch a source should cut under these rates (rows, bytes), so that a batch is at
   * most one second of the rate and a wait for it at most about a second; null: unlimited.
   */
  static batchBound(quotas: Quotas): { rows: number | null; bytes: number | null } {
    const rows = quotas.ingestRowsPerSecond;
    const bytes = quotas.ingestBytesPerSecond;
    return {
      rows: rows === null ? null : Math.max(1, rows),
      bytes: bytes === null ? null : Math.max(1, bytes),
    };
  }

  private take(quotas: Quotas, rows: number, bytes: number, now: number): Refusal | null {
    const rowRate = quotas.ingestRowsPerSecond;
    const byteRate = quotas.ingestBytesPerSecond;
    if (rowRate !== null) {
      const waitMs = this.rows.take(Math.max(1, rowRate), rows, now);
      if (waitMs > 0)
        return {
          waitMs,
          message: `rate limited: the tenant's ingest quota of ${rowRate} rows per second is used up`,
        };
    }
    if (byteRate !== null) {
      const waitMs = this.bytes.take(Math.max(1, byteRate), bytes, now);
      if (waitMs > 0) {
        // The rows taken above are given back: the request applies nothing.
        if (rowRate !== null) this.rows.adjust(Math.max(1, rowRate), -rows, now);
        return {
          waitMs,
          message: `rate limited: the tenant's ingest quota of ${byteRate} bytes per second is used up`,
        };
      }
    }
    return null;
  }
}
