// What a Kafka source counts for its status: records and batches delivered, records skipped, the
// rate over the last second or more, and when the broker last answered a fetch.
import type { SourceError, SourceState, SourceStatus } from './kafka-source-types.ts';

/** Fetches long-poll for at most a few hundred ms: this long without an answer is a stall. */
const STALL_MS = 10_000;

export type SourceCounts = Pick<
  SourceStatus,
  | 'recordsIn'
  | 'batches'
  | 'skipped'
  | 'recordsPerSecond'
  | 'lastFetchAgoMs'
  | 'splitBatches'
  | 'oversizedRecords'
>;

export class SourceCounters {
  private recordsIn = 0;
  private batches = 0;
  private skipped = 0;
  private rate = 0;
  private rateWindowStart = performance.now();
  private rateWindowRecords = 0;
  private lastFetchAt: number | null = null;
  private splitBatches = 0;
  private oversizedRecords = 0;

  /** A batch was cut into several epochs (its parts are counted as batches when delivered). */
  split(): void {
    this.splitBatches += 1;
  }

  /** A record was applied alone in an epoch past the engine's bound. */
  oversized(): void {
    this.oversizedRecords += 1;
  }

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
      splitBatches: this.splitBatches,
      oversizedRecords: this.oversizedRecords,
    };
  }
}

/** What a source runner shows beside its counts. */
export interface RunnerState {
  readonly state: SourceState;
  readonly error: SourceError | null;
  readonly topic: string;
  /** Delivered positions: partition → next offset. */
  readonly applied: ReadonlyMap<number, number>;
  /** Log end offsets last seen. */
  readonly high: ReadonlyMap<number, number>;
  readonly retries: number;
  readonly rateWaits: number;
  readonly pausedAtStateQuota: boolean;
  readonly stateQuotaPauses: number;
}

/** A source's status: `running` shows as `stalled` once no fetch was answered for STALL_MS. */
export function sourceStatus(counts: SourceCounts, runner: RunnerState): SourceStatus {
  const partitions = [...new Set([...runner.applied.keys(), ...runner.high.keys()])].sort((a, b) => a - b);
  const sinceFetch = counts.lastFetchAgoMs;
  // A source paused at its tenant's state quota fetches nothing on purpose: it is not stalled.
  const stalled =
    runner.state === 'running' && !runner.pausedAtStateQuota && sinceFetch !== null && sinceFetch > STALL_MS;
  return {
    state: stalled ? 'stalled' : runner.state,
    error: stalled
      ? {
          message: `the broker has answered no fetch for ${Math.round((sinceFetch ?? 0) / 1000)} s`,
          topic: runner.topic,
          at: new Date().toISOString(),
        }
      : runner.error,
    partitions: partitions.map((p) => {
      const next = runner.applied.get(p) ?? 0;
      const high = runner.high.get(p) ?? null;
      return { partition: p, next, high, lag: high === null ? null : Math.max(0, high - next) };
    }),
    ...counts,
    retries: runner.retries,
    rateWaits: runner.rateWaits,
    pausedAtStateQuota: runner.pausedAtStateQuota,
    stateQuotaPauses: runner.stateQuotaPauses,
  };
}
