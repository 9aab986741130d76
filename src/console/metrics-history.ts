// The recent history of what the console plots (input rows, epochs and their total time, from the
// server's own /metrics text), one reading a second, so a page opened now draws its rolling plots
// from the last minutes instead of starting empty. Memory is bounded: a ring of `capacity` readings
// of four numbers each, however long the server runs.
import { readMetrics } from './shared/prom-text.ts';

/** One reading, as served: `at` is the server's wall clock in ms; the rest are counter totals. */
export interface HistoryReading {
  readonly at: number;
  readonly rowsIn: number;
  readonly batches: number;
  readonly batchSeconds: number;
}

export const HISTORY_INTERVAL_MS = 1000;
/** Five minutes at one reading a second. */
export const HISTORY_CAPACITY = 300;

export class MetricsHistory {
  private readonly ring: (HistoryReading | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity = HISTORY_CAPACITY) {
    this.ring = new Array<HistoryReading | undefined>(capacity);
  }

  record(reading: HistoryReading): void {
    this.ring[this.next] = reading;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.capacity, this.size + 1);
  }

  /** Oldest first. */
  readings(): HistoryReading[] {
    const out: HistoryReading[] = [];
    for (let i = 0; i < this.size; i++) {
      const r = this.ring[(this.next - this.size + i + this.capacity) % this.capacity];
      if (r !== undefined) out.push(r);
    }
    return out;
  }
}

/**
 * Samples `metricsText` every `intervalMs` into `history` until the returned stop is called. The
 * timer does not keep the process alive; a failed or slow scrape is skipped, never queued.
 */
export function sampleMetrics(
  history: MetricsHistory,
  metricsText: () => Promise<string>,
  intervalMs = HISTORY_INTERVAL_MS,
): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    metricsText()
      .then((text) => {
        const { rowsIn, batches, batchSeconds } = readMetrics(text, Date.now());
        history.record({ at: Date.now(), rowsIn, batches, batchSeconds });
      })
      .catch(() => undefined) // a missed reading is a gap in the plot
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
