// The join workload: auctions(id PK, seller, category) and bids(id PK, auction, bidder, amount),
// joined on bids.auction = auctions.id. Three phases: load the auctions, insert the bids (the probe
// side), then a mixed stream of updates and deletes on both sides. Everything derives from a seed, so
// every child process (one per implementation) regenerates exactly the same changes; the expected
// result of each phase is computed directly (a hash join over the tables as they stand).
import { sfc32 } from './workload.ts';

export interface Auction {
  id: number;
  seller: number;
  category: string;
}

export interface Bid {
  id: number;
  auction: number;
  bidder: number;
  amount: number;
}

/** One row change: an insert (old null), a delete (row null) or an update (both, same id). */
export interface Change {
  readonly table: 'auctions' | 'bids';
  readonly old: Auction | Bid | null;
  readonly row: Auction | Bid | null;
}

export type PhaseName = 'auctions' | 'bids' | 'mutations';

export interface Phase {
  readonly name: PhaseName;
  readonly changes: readonly Change[];
}

export interface JoinSpec {
  readonly auctions: number;
  readonly bids: number;
  /** Fraction of each side touched in the mutations phase. */
  readonly mutate: number;
  readonly categories: number;
  readonly seed: number;
}

/** The view shapes under test. */
export type Variant = 'agg' | 'join' | 'left' | 'semi';

export const VARIANT_SQL: Record<Variant, string> = {
  agg:
    'SELECT a.category, COUNT(*) AS bids, SUM(b.amount) AS total ' +
    'FROM bids b JOIN auctions a ON b.auction = a.id GROUP BY a.category',
  join:
    'SELECT b.id AS bid, b.auction, b.bidder, b.amount, a.seller, a.category ' +
    'FROM bids b JOIN auctions a ON b.auction = a.id',
  left:
    'SELECT a.id AS auction, a.category, b.id AS bid, b.amount ' +
    'FROM auctions a LEFT JOIN bids b ON b.auction = a.id',
  // A semi-join: each bid once while its auction exists (auction ids are unique, so it equals the
  // inner join projected to the bid's columns, which is what the peers compute).
  semi:
    'SELECT b.id AS bid, b.auction, b.bidder, b.amount ' +
    'FROM bids b WHERE b.auction IN (SELECT a.id FROM auctions a)',
};

/** The columns of each variant's result, in the order every implementation reports its rows. */
export const VARIANT_COLUMNS: Record<Variant, readonly string[]> = {
  agg: ['category', 'bids', 'total'],
  join: ['bid', 'auction', 'bidder', 'amount', 'seller', 'category'],
  left: ['auction', 'category', 'bid', 'amount'],
  semi: ['bid', 'auction', 'bidder', 'amount'],
};

export type Cell = number | string | null;
export type Tuple = readonly Cell[];

const categoryName = (i: number): string => `c${String(i).padStart(3, '0')}`;

/**
 * The three phases.
 *
 * - auctions: ids 1..A, seller uniform over A/10 sellers, category uniform over `categories`.
 * - bids: ids 1..B, auction uniform over the first 80% of the auctions (so a fifth of the auctions
 *   start without bids, which the LEFT JOIN reports with NULLs), bidder uniform over 50,000,
 *   amount uniform in 1..100.
 * - mutations: `mutate` × B distinct bids, 80% updated (new amount and new auction, uniform over all
 *   auctions: some move onto auctions without bids or onto deleted ones) and 20% deleted; and
 *   `mutate` × A distinct auctions that have bids, each deleted and re-inserted later with a new
 *   category (the re-insert lands up to 2% of the phase later). In random order. A key is touched
 *   at most once in the phase, except an auction's delete followed by its re-insert, so any cut of
 *   the stream into batches is a valid batch for every implementation (deletes before inserts).
 */
export function generatePhases(spec: JoinSpec): Phase[] {
  const rnd = sfc32(spec.seed ^ 0x6a6f696e);
  const int = (n: number): number => Math.floor(rnd() * n); // 0..n-1
  const sellers = Math.max(1, Math.floor(spec.auctions / 10));
  const auctions: Auction[] = new Array<Auction>(spec.auctions);
  for (let i = 0; i < spec.auctions; i++)
    auctions[i] = { id: i + 1, seller: 1 + int(sellers), category: categoryName(int(spec.categories)) };
  const bidRange = Math.max(1, Math.floor(spec.auctions * 0.8));
  const bids: Bid[] = new Array<Bid>(spec.bids);
  const hasBids = new Uint8Array(spec.auctions + 1);
  for (let i = 0; i < spec.bids; i++) {
    const auction = 1 + int(bidRange);
    hasBids[auction] = 1;
    bids[i] = { id: i + 1, auction, bidder: 1 + int(50_000), amount: 1 + int(100) };
  }

  // Mutations: distinct bids (a partial Fisher–Yates over the bid ids) and distinct auctions with bids.
  const bidOps = Math.round(spec.bids * spec.mutate);
  const bidPick = new Int32Array(spec.bids);
  for (let i = 0; i < bidPick.length; i++) bidPick[i] = i;
  for (let i = 0; i < bidOps; i++) {
    const j = i + int(spec.bids - i);
    const t = bidPick[i]!;
    bidPick[i] = bidPick[j]!;
    bidPick[j] = t;
  }
  const withBids: number[] = [];
  for (let id = 1; id <= spec.auctions; id++) if (hasBids[id] === 1) withBids.push(id);
  const auctionOps = Math.min(withBids.length, Math.round(spec.auctions * spec.mutate));
  for (let i = 0; i < auctionOps; i++) {
    const j = i + int(withBids.length - i);
    const t = withBids[i]!;
    withBids[i] = withBids[j]!;
    withBids[j] = t;
  }
  // Each op gets a time; a re-insert comes after its delete. Sorting by time gives the stream.
  const total = bidOps + auctionOps;
  const timed: { t: number; c: Change }[] = [];
  const slots = new Float64Array(total);
  for (let i = 0; i < total; i++) slots[i] = i;
  for (let i = total - 1; i > 0; i--) {
    const j = int(i + 1);
    const t = slots[i]!;
    slots[i] = slots[j]!;
    slots[j] = t;
  }
  for (let i = 0; i < bidOps; i++) {
    const old = bids[bidPick[i]!]!;
    const update = rnd() < 0.8;
    const row: Bid | null = update
      ? { id: old.id, auction: 1 + int(spec.auctions), bidder: old.bidder, amount: 1 + int(100) }
      : null;
    timed.push({ t: slots[i]!, c: { table: 'bids', old, row } });
  }
  const gap = Math.max(1, Math.floor(total * 0.02));
  for (let i = 0; i < auctionOps; i++) {
    const old = auctions[withBids[i]! - 1]!;
    const t = slots[bidOps + i]!;
    timed.push({ t, c: { table: 'auctions', old, row: null } });
    const again: Auction = { id: old.id, seller: old.seller, category: categoryName(int(spec.categories)) };
    timed.push({ t: t + 0.5 + rnd() * gap, c: { table: 'auctions', old: null, row: again } });
  }
  timed.sort((x, y) => x.t - y.t);

  return [
    { name: 'auctions', changes: auctions.map((row) => ({ table: 'auctions', old: null, row })) },
    { name: 'bids', changes: bids.map((row) => ({ table: 'bids', old: null, row })) },
    { name: 'mutations', changes: timed.map((x) => x.c) },
  ];
}

/** The tables as they stand after applying phases[0..through], for the reference result. */
/**
 * The phases of one round of a paired A/B driver: round 0 warms both sides' code on a tenth of the
 * rows with its own seed and is not reported; every timed round replays the same full-size phases.
 */
export function roundPhases(round: number, auctions: number, bids: number): Phase[] {
  const scale = round === 0 ? 10 : 1;
  return generatePhases({
    auctions: Math.ceil(auctions / scale),
    bids: Math.ceil(bids / scale),
    mutate: 0.1,
    categories: 100,
    seed: round === 0 ? 7 : 20111111,
  });
}

export class ReferenceTables {
  readonly auctions = new Map<number, Auction>();
  readonly bids = new Map<number, Bid>();

  apply(changes: readonly Change[]): void {
    for (const c of changes) {
      const t = (c.table === 'auctions' ? this.auctions : this.bids) as Map<number, Auction | Bid>;
      if (c.old !== null) {
        if (t.get(c.old.id) !== c.old)
          throw new Error(`workload: ${c.table} ${c.old.id} is not the row to delete`);
        t.delete(c.old.id);
      }
      if (c.row !== null) {
        if (t.has(c.row.id)) throw new Error(`workload: ${c.table} ${c.row.id} inserted twice`);
        t.set(c.row.id, c.row);
      }
    }
  }

  /** The variant's result computed directly (not incrementally), as tuples in VARIANT_COLUMNS order. */
  *result(variant: Variant): Generator<Tuple> {
    if (variant === 'agg') {
      const groups = new Map<string, [number, number]>();
      for (const b of this.bids.values()) {
        const a = this.auctions.get(b.auction);
        if (a === undefined) continue;
        const g = groups.get(a.category);
        if (g === undefined) groups.set(a.category, [1, b.amount]);
        else {
          g[0]++;
          g[1] += b.amount;
        }
      }
      for (const [category, [n, total]] of groups) yield [category, n, total];
    } else if (variant === 'join') {
      for (const b of this.bids.values()) {
        const a = this.auctions.get(b.auction);
        if (a !== undefined) yield [b.id, b.auction, b.bidder, b.amount, a.seller, a.category];
      }
    } else if (variant === 'semi') {
      for (const b of this.bids.values())
        if (this.auctions.has(b.auction)) yield [b.id, b.auction, b.bidder, b.amount];
    } else {
      const byAuction = new Map<number, Bid[]>();
      for (const b of this.bids.values()) {
        const l = byAuction.get(b.auction);
        if (l === undefined) byAuction.set(b.auction, [b]);
        else l.push(b);
      }
      for (const a of this.auctions.values()) {
        const l = byAuction.get(a.id);
        if (l === undefined) yield [a.id, a.category, null, null];
        else for (const b of l) yield [a.id, a.category, b.id, b.amount];
      }
    }
  }
}

// ---- result digests: an order-independent fingerprint of a multiset of tuples ----------------

function mix(h: number, x: number): number {
  h = Math.imul(h ^ x, 0x5bd1e995);
  return h ^ (h >>> 15);
}

/** Two 32-bit hashes of a tuple, straight from its cells (no string is built for numbers). */
function hashTuple(t: Tuple): [number, number] {
  let h1 = 0x811c9dc5 ^ t.length;
  let h2 = 0x9747b28c ^ t.length;
  for (let i = 0; i < t.length; i++) {
    const v = t[i] as Cell;
    if (v === null) {
      h1 = mix(h1, 0x6e756c6c);
      h2 = mix(h2, 0x4e554c4c);
    } else if (typeof v === 'number') {
      if (Number.isInteger(v) && Math.abs(v) < 2 ** 31) {
        h1 = mix(h1, v | 0);
        h2 = mix(h2, Math.imul(v | 0, 0x27d4eb2d) ^ 0x165667b1);
      } else {
        const s = `n${v}`;
        for (let j = 0; j < s.length; j++) {
          h1 = mix(h1, s.charCodeAt(j));
          h2 = mix(h2, s.charCodeAt(j) + 0x3c6ef372);
        }
      }
    } else {
      h1 = mix(h1, 0x73747200 ^ v.length);
      h2 = mix(h2, 0x53545200 ^ v.length);
      for (let j = 0; j < v.length; j++) {
        h1 = mix(h1, v.charCodeAt(j));
        h2 = mix(h2, v.charCodeAt(j) + 0x3c6ef372);
      }
    }
    h1 = mix(h1, 0x01000193 + i);
    h2 = mix(h2, 0x85ebca6b - i);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b);
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
  return [(h1 ^ (h1 >>> 16)) >>> 0, (h2 ^ (h2 >>> 16)) >>> 0];
}

/** "rows:hash1:hash2", the sums of two 32-bit hashes of every tuple: equal multisets, equal digests. */
export function digest(rows: Iterable<Tuple>): string {
  let n = 0;
  let a = 0;
  let b = 0;
  for (const t of rows) {
    const [h1, h2] = hashTuple(t);
    a = (a + h1) >>> 0;
    b = (b + h2) >>> 0;
    n++;
  }
  return `${n}:${a.toString(16)}:${b.toString(16)}`;
}

/** Up to `limit` tuples missing from `actual` and up to `limit` extra ones, for a failure report. */
export function diffRows(
  expected: Iterable<Tuple>,
  actual: Iterable<Tuple>,
  limit = 5,
): { missing: string[]; extra: string[]; expectedRows: number; actualRows: number } {
  const counts = new Map<string, number>();
  let expectedRows = 0;
  let actualRows = 0;
  for (const t of expected) {
    const k = JSON.stringify(t);
    counts.set(k, (counts.get(k) ?? 0) + 1);
    expectedRows++;
  }
  for (const t of actual) {
    const k = JSON.stringify(t);
    counts.set(k, (counts.get(k) ?? 0) - 1);
    actualRows++;
  }
  const missing: string[] = [];
  const extra: string[] = [];
  for (const [k, n] of counts) {
    if (n > 0 && missing.length < limit) missing.push(n === 1 ? k : `${k} ×${n}`);
    if (n < 0 && extra.length < limit) extra.push(n === -1 ? k : `${k} ×${-n}`);
  }
  return { missing, extra, expectedRows, actualRows };
}
