// Samples /metrics once a second and turns counter deltas into rates (input rows/s, epochs/s,
// changelog rows/s) and the mean epoch latency over the last interval. It starts from the server's
// recent history (GET /console/metrics-history, one reading a second), so the plots are not empty
// on a fresh page: `onRates` gets those rates first, oldest first, with `fromHistory` set.
import { rates, readMetrics, type MetricsReading } from '../shared/prom-text.ts';
import { getJson, getText } from './api.ts';

export type Rates = ReturnType<typeof rates>;

interface HistoryJson {
  readonly readings: readonly Omit<MetricsReading, 'changesOut'>[];
}

export class MetricsSampler {
  private prev: MetricsReading | null = null;
  private timer: number | undefined;
  private stopped = false;

  constructor(
    private readonly onRates: (r: Rates, fromHistory: boolean) => void,
    private readonly view?: string,
    private readonly intervalMs = 1000,
  ) {
    void this.history().then(() => this.tick());
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  private async history(): Promise<void> {
    try {
      const { readings } = await getJson<HistoryJson>('/console/metrics-history');
      let prev: MetricsReading | null = null;
      for (const r of readings) {
        const reading = { ...r, changesOut: 0 };
        if (prev !== null && !this.stopped) this.onRates(rates(prev, reading), true);
        prev = reading;
      }
    } catch {
      // No history: the plots start empty and fill in from live samples.
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const reading = readMetrics(await getText('/metrics'), performance.now(), this.view);
      if (this.prev !== null && !this.stopped) this.onRates(rates(this.prev, reading), false);
      this.prev = reading;
    } catch {
      // A missed scrape leaves a gap in the plot; the next one resumes it.
    }
    if (!this.stopped) this.timer = window.setTimeout(() => void this.tick(), this.intervalMs);
  }
}
