// What the drivers of the join arrangements alone (join-arrangement.ts, join-fold-ab.ts,
// join-probe-ab.ts) share: join-workload.ts's rows made directly as arranged rows from one seeded
// generator, and the CPU clock they read around a phase.
import type { Value } from '../src/common/types.ts';

/** Uniform ints in [0, n) from a seeded linear congruential generator (the same seed, the same ints). */
export function seededInts(seed = 20111111): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

/** As join-workload.ts: 100 categories. */
const CATEGORIES = Array.from({ length: 100 }, (_, i) => `category-${i}`);

/** Auction `id` as the arrangement holds it: [id, seller, category]. */
export function auctionRow(id: number, int: (n: number) => number): Value[] {
  return [id, 1 + int(10_000), CATEGORIES[int(CATEGORIES.length)] as string];
}

/** Bid `id` as the arrangement holds it: [id, auction, bidder, amount], uniform over the first 80% of the auctions. */
export function bidRow(id: number, auctions: number, int: (n: number) => number): Value[] {
  return [id, 1 + int(Math.floor(auctions * 0.8)), 1 + int(50_000), 1 + int(100)];
}

/** CPU ms (user + system) since `since`. */
export function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}
