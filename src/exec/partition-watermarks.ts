// A Kafka source's watermark over its partitions: each partition's watermark is the largest event
// time it delivered minus the delay, and the source's is the least over the partitions that are
// active — a partition that delivered nothing for the idle timeout (on the logical clock) stops
// holding it back until it delivers again. Everything is a function of the journaled epochs (their
// positions carry each partition's largest event time, their clocks the time), so replay agrees.

/** One partition's part of a source epoch, read from the epoch's positions. */
export interface PartitionStep {
  /** The partition delivered records in this epoch (its offsets moved). */
  readonly active: boolean;
  /** The largest event time (µs) among them; null when none had one. */
  readonly maxTime: number | null;
}

interface PartitionState {
  /** Largest event time delivered so far (µs), null before any. */
  max: number | null;
  /** The logical clock of the epoch in which it last delivered (or was first seen). */
  seen: number;
}

/**
 * The partitions of a source epoch's positions (`{ topic, partitions: { "<p>": { from, next,
 * maxTime } } }`, written by src/source/kafka), or null when they carry no event times (a source
 * without a watermark, or an epoch journaled before per-partition watermarks existed).
 */
export function partitionSteps(positions: unknown): Map<string, PartitionStep> | null {
  if (typeof positions !== 'object' || positions === null) return null;
  const partitions = (positions as { partitions?: unknown }).partitions;
  if (typeof partitions !== 'object' || partitions === null) return null;
  const out = new Map<string, PartitionStep>();
  for (const [p, range] of Object.entries(partitions as Record<string, unknown>)) {
    if (typeof range !== 'object' || range === null || !('maxTime' in range)) return null;
    const r = range as { from?: unknown; next?: unknown; maxTime?: unknown };
    const maxTime = typeof r.maxTime === 'number' ? r.maxTime : null;
    const active = typeof r.from === 'number' && typeof r.next === 'number' && r.next > r.from;
    out.set(p, { active, maxTime });
  }
  return out;
}

/** Per-partition maxima and activity of one source; `value(clock)` is the source's watermark then. */
export class PartitionWatermarks {
  private readonly parts = new Map<string, PartitionState>();

  constructor(
    private readonly delayMicros: number,
    private readonly idleMicros: number,
  ) {}

  get size(): number {
    return this.parts.size;
  }

  /** Folds one epoch's partitions in: maxima raised, the active ones seen at `clock`. */
  observe(steps: ReadonlyMap<string, PartitionStep>, clock: number): void {
    for (const [p, step] of steps) {
      let state = this.parts.get(p);
      if (state === undefined) {
        // A partition first seen counts as active from now: it holds the watermark back until it
        // delivers or its idle timeout passes.
        state = { max: null, seen: clock };
        this.parts.set(p, state);
      }
      if (step.active) state.seen = Math.max(state.seen, clock);
      if (step.maxTime !== null && (state.max === null || step.maxTime > state.max)) state.max = step.maxTime;
    }
  }

  /**
   * The source's watermark at `clock` from the partitions alone: the least watermark of the active
   * partitions (null while an active one has delivered no event time); with every partition idle,
   * the largest (nothing holds it back). Null when nothing is known.
   */
  value(clock: number): number | null {
    let least: number | null = null;
    let anyActive = false;
    let largest: number | null = null;
    for (const state of this.parts.values()) {
      if (state.max !== null && (largest === null || state.max > largest)) largest = state.max;
      if (clock - state.seen >= this.idleMicros) continue;
      if (state.max === null) return null;
      anyActive = true;
      if (least === null || state.max < least) least = state.max;
    }
    const mark = anyActive ? least : largest;
    return mark === null ? null : mark - this.delayMicros;
  }

  /**
   * The earliest clock at which a partition going idle raises the watermark above `current`
   * (Infinity: none will), so a clock tick can close windows while no data arrives.
   */
  nextChangeAt(current: number | null, clock: number): number {
    // Partitions by the clock at which they go idle; at deadline k the ones after it are active.
    // Suffix minima make this O(P log P) for P partitions (it runs at every tick check).
    const parts = [...this.parts.values()]
      .map((s) => ({ at: s.seen + this.idleMicros, max: s.max }))
      .sort((a, b) => a.at - b.at);
    const n = parts.length;
    const least: (number | null)[] = new Array<number | null>(n + 1).fill(null);
    const held: boolean[] = new Array<boolean>(n + 1).fill(false);
    let largest: number | null = null;
    for (let i = n - 1; i >= 0; i--) {
      const max = (parts[i] as { max: number | null }).max;
      held[i] = (held[i + 1] as boolean) || max === null;
      const below = least[i + 1] ?? null;
      least[i] = max === null ? below : below === null ? max : Math.min(below, max);
      if (max !== null && (largest === null || max > largest)) largest = max;
    }
    for (let i = 0; i < n; i++) {
      const at = (parts[i] as { at: number }).at;
      // Partitions going idle at the same clock go together: look from the last of them.
      if (at <= clock || (i + 1 < n && (parts[i + 1] as { at: number }).at === at)) continue;
      const mark = i + 1 < n ? (held[i + 1] === true ? null : (least[i + 1] ?? null)) : largest;
      if (mark === null) continue;
      const v = mark - this.delayMicros;
      if (current === null || v > current) return at;
    }
    return Infinity;
  }

  /** The checkpointed form: [partition, max, seen] per partition. */
  entries(): [string, number | null, number][] {
    return [...this.parts].map(([p, s]) => [p, s.max, s.seen]);
  }

  load(entries: readonly (readonly [string, number | null, number])[]): void {
    this.parts.clear();
    for (const [p, max, seen] of entries) this.parts.set(p, { max, seen });
  }
}
