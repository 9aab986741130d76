// What a Kafka source counts for its status: records and batches delivered, records skipped, the
// rate over the last second or more, and when the broker last answered a fetch.
import type { SourceStatus } from './kafka-source-types.ts';

export type SourceCounts = Pick<
  SourceStatus,
  'recordsIn' | 'batches' | 'skipped' | 'recordsPerSecond' | 'lastFetchAgoMs'
>;

export class SourceCounters {
  private recordsIn = 0;
  private batches = 0;
  private skipped = 0;
  private rate = 0;
  private rateWindowStart = performance.now();
  private rateWindowRecords = 0;
  private lastFetchAt: number | null = null;

  /** The broker answered a fetch (with records or none). */
  fetched(): void {
    this.lastFetchAt = performance.now();
  }

  /** A batch of `records` was delivered, `skipped` of them poison records kept aside. */
  delivered(records: number, skipped: number): void {
    this.recordsIn += records;
    this.rateWindowRecords += records;
    this.batches += 1;
    this.skipped += skipped;
  }

  /** The counts now; the rate is recomputed once a second has passed since the last time. */
  read(): SourceCounts {
    const now = performance.now();
    const elapsed = now - this.rateWindowStart;
    if (elapsed >= 1000) {
      this.rate = (this.rateWindowRecords * 1000) / elapsed;
      this.rateWindowStart = now;
      this.rateWindowRecords = 0;
    }
    return {
      recordsIn: this.recordsIn,
      batches: this.batches,
      skipped: this.skipped,
      recordsPerSecond: this.rate,
      lastFetchAgoMs: this.lastFetchAt === null ? null : Math.round(now - this.lastFetchAt),
    };
  }
}
