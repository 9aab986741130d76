// The small linear congruential generator the per-type differential tests (array, jsonb, uuid-bytea,
// IS DISTINCT FROM, row comparisons) draw their rows and batches from: one seed, one stream, so a
// failing seed replays. The join and workload suites use random-workload.ts's Rng instead.
export class LcgRng {
  constructor(private s: number) {}
  next(): number {
    this.s = (Math.imul(this.s, 1103515245) + 12345) >>> 0;
    return this.s / 2 ** 32;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
}
