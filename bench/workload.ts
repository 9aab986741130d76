// The canonical workload: an append-only stream of orders (order_id, seller_id, amount) over a fixed
// population of sellers, with amounts uniform in 1..100. Everything is derived from a seed, so every
// child process (one per implementation) regenerates exactly the same rows.

export interface Order {
  order_id: number;
  seller_id: number;
  amount: number;
}

export type Dist = 'uniform' | 'zipf';

/** sfc32: a small, fast, well-distributed 32-bit PRNG. Returns floats in [0, 1). */
export function sfc32(seed: number): () => number {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x243f6a88 ^ Math.imul(seed, 0x85ebca6b);
  let c = 0xb7e15162 ^ Math.imul(seed, 0xc2b2ae35);
  let d = 1;
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next(); // mix the seed in
  return next;
}

/** Cumulative distribution of Zipf(s) over ranks 1..n, normalised so the last entry is 1. */
export function zipfCdf(n: number, s: number): Float64Array {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let k = 1; k <= n; k++) {
    acc += 1 / Math.pow(k, s);
    cdf[k - 1] = acc;
  }
  for (let i = 0; i < n; i++) cdf[i] = cdf[i]! / acc;
  cdf[n - 1] = 1;
  return cdf;
}

/** Smallest index i with cdf[i] > u (binary search). */
function sampleCdf(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export interface WorkloadSpec {
  readonly dist: Dist;
  readonly sellers: number;
  readonly events: number;
  readonly seed: number;
  readonly zipfS: number;
}

/**
 * All input rows, in order. Seller ids are 1..sellers; under Zipf the popularity ranks are mapped to
 * ids through a seeded permutation so that the hot sellers are not simply the smallest ids.
 */
export function generateRows(spec: WorkloadSpec): Order[] {
  const rnd = sfc32(spec.seed ^ (spec.dist === 'zipf' ? 0x5a5a5a5a : 0x0f0f0f0f));
  let pick: () => number;
  if (spec.dist === 'uniform') {
    pick = () => 1 + Math.floor(rnd() * spec.sellers);
  } else {
    const cdf = zipfCdf(spec.sellers, spec.zipfS);
    const perm = new Int32Array(spec.sellers);
    for (let i = 0; i < perm.length; i++) perm[i] = i + 1;
    for (let i = perm.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      const t = perm[i]!;
      perm[i] = perm[j]!;
      perm[j] = t;
    }
    pick = () => perm[sampleCdf(cdf, rnd())]!;
  }
  const rows: Order[] = new Array<Order>(spec.events);
  for (let i = 0; i < spec.events; i++) {
    const seller_id = pick();
    const amount = 1 + Math.floor(rnd() * 100);
    rows[i] = { order_id: i + 1, seller_id, amount };
  }
  return rows;
}

/** rows[from, to) cut into batches of `size` (the last one may be short). */
export function cut(rows: readonly Order[], from: number, to: number, size: number): Order[][] {
  const out: Order[][] = [];
  for (let i = from; i < to; i += size) out.push(rows.slice(i, Math.min(i + size, to)));
  return out;
}

/** The expected result, computed directly: bucket → number of sellers, and the number of sellers. */
export function referenceHistogram(rows: readonly Order[]): {
  histogram: Map<number, number>;
  groups: number;
} {
  const totals = new Map<number, number>();
  for (const r of rows) totals.set(r.seller_id, (totals.get(r.seller_id) ?? 0) + r.amount);
  const histogram = new Map<number, number>();
  for (const total of totals.values()) {
    const bucket = Math.floor(total / 10);
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
  }
  return { histogram, groups: totals.size };
}

/** A histogram as a sorted list of [bucket, sellers] pairs, zero entries dropped. */
export function histogramEntries(h: ReadonlyMap<number, number>): [number, number][] {
  return [...h.entries()].filter(([, n]) => n !== 0).sort((a, b) => a[0] - b[0]);
}

export function sameHistogram(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): boolean {
  return JSON.stringify(histogramEntries(a)) === JSON.stringify(histogramEntries(b));
}
