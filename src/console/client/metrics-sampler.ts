// Samples /metrics once a second and turns counter deltas into rates (input rows/s, epochs/s,
// changelog rows/s) and the mean epoch latency over the last interval.
import { rates, readMetrics, type MetricsReading } from '../shared/prom-text.ts';
import { getText } from './api.ts';

export type Rates = ReturnType<typeof rates>;

export class MetricsSampler {
  private prev: MetricsReading | null = null;
  private timer: number | undefined;
  private stopped = false;

  constructor(
    private readonly onRates: (r: Rates) => void,
    private readonly view?: string,
    private readonly intervalMs = 1000,
  ) {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    try {
      const reading = readMetrics(await getText('/metrics'), performance.now(), this.view);
      if (this.prev !== null && !this.stopped) this.onRates(rates(this.prev, reading));
      this.prev = reading;
    } catch {
      // A missed scrape leaves a gap in the plot; the next one resumes it.
    }
    if (!this.stopped) this.timer = window.setTimeout(() => void this.tick(), this.intervalMs);
  }
}
