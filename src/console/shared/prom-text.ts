// A small reader of the Prometheus text format served at /metrics: enough for the console's
// rolling plots (counter sums and histogram sum/count), not a general client.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) {
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    }
    const value = Number(m[3]);
    out.push({ name: m[1] as string, labels, value: Number.isNaN(value) ? 0 : value });
  }
  return out;
}

/** Sum of every series of one metric (optionally only those whose labels match). */
export function sumOf(samples: readonly Sample[], name: string, where: Record<string, string> = {}): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(where).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}

/** What the console plots, read off one /metrics scrape. */
export interface MetricsReading {
  readonly at: number;
  readonly rowsIn: number;
  readonly batches: number;
  readonly batchSeconds: number;
  readonly changesOut: number;
}

export function readMetrics(text: string, at: number, view?: string): MetricsReading {
  const s = parsePrometheus(text);
  return {
    at,
    rowsIn: sumOf(s, 'sluice_rows_in_total'),
    batches: sumOf(s, 'sluice_batch_duration_seconds_count'),
    batchSeconds: sumOf(s, 'sluice_batch_duration_seconds_sum'),
    changesOut: sumOf(s, 'sluice_view_changes_out_total', view === undefined ? {} : { view }),
  };
}

/** Rates between two readings: input rows/s, view changes/s and the mean epoch (batch) latency. */
export function rates(
  prev: MetricsReading,
  next: MetricsReading,
): { rowsPerSecond: number; changesPerSecond: number; epochsPerSecond: number; latencyMs: number | null } {
  const seconds = Math.max(1e-3, (next.at - prev.at) / 1000);
  const batches = next.batches - prev.batches;
  return {
    rowsPerSecond: Math.max(0, (next.rowsIn - prev.rowsIn) / seconds),
    changesPerSecond: Math.max(0, (next.changesOut - prev.changesOut) / seconds),
    epochsPerSecond: Math.max(0, batches / seconds),
    latencyMs: batches > 0 ? ((next.batchSeconds - prev.batchSeconds) / batches) * 1000 : null,
  };
}
