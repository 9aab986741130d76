// bench/join.ts's three implementations of the join view: Sluice in-process, @tanstack/db-ivm and a
// hand-written Map (the naive ceiling). Each takes a batch of changes in its own input form (built before timing)
// and keeps the view materialised; rows() reports it as tuples in VARIANT_COLUMNS order (untimed).
import type { Row } from '../src/common/types.ts';
import { D2, MultiSet, join, map, output, reduce } from '@tanstack/db-ivm';
import type { MultiSetArray } from '@tanstack/db-ivm';
import {
  VARIANT_COLUMNS,
  VARIANT_SQL,
  type Auction,
  type Bid,
  type Cell,
  type Change,
  type Tuple,
  type Variant,
} from './join-workload.ts';
import type { Impl } from './join-options.ts';

export interface JoinImpl {
  readonly prepare: (changes: readonly Change[]) => unknown;
  readonly apply: (batch: unknown) => void;
  readonly rows: () => Iterable<Tuple>;
  /** Sluice: the engine's own account of its state. */
  readonly state?: () => { bytes: number; joinBytes: number; detail: string };
}

function cell(v: unknown): Cell {
  if (v === null || typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new Error(`bench: unexpected value ${String(v)} in a view row`);
}

// ---- Sluice -------------------------------------------------------------------------------------

const TABLES_SQL = `
CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INT NOT NULL, category TEXT NOT NULL);
CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, bidder INT NOT NULL, amount INT NOT NULL);
`;

const VIEW = 'v';

interface SluiceBatch {
  auctions: { insert: Row[]; delete: Row[] } | null;
  bids: { insert: Row[]; delete: Row[] } | null;
}

async function buildSluice(variant: Variant): Promise<JoinImpl> {
  const { Engine } = await import('../src/exec/engine.ts');
  const engine = new Engine();
  engine.execute(TABLES_SQL);
  engine.execute(`CREATE MATERIALIZED VIEW ${VIEW} AS ${VARIANT_SQL[variant]}`); // throws on error
  const columns = VARIANT_COLUMNS[variant];
  return {
    // Inserts and updates are inserts (an insert of a key the table holds replaces its row); deletes
    // name the primary key only. One table per epoch: a batch touching both tables is two epochs.
    prepare: (changes) => {
      const b: SluiceBatch = { auctions: null, bids: null };
      for (const c of changes) {
        const side = (b[c.table] ??= { insert: [], delete: [] });
        if (c.row !== null) side.insert.push(c.row as unknown as Row);
        else if (c.old !== null) side.delete.push({ id: c.old.id });
      }
      return b;
    },
    apply: (batch) => {
      const b = batch as SluiceBatch;
      if (b.auctions !== null) engine.applyChanges('auctions', b.auctions);
      if (b.bids !== null) engine.applyChanges('bids', b.bids);
    },
    rows: function* () {
      for (const r of engine.viewSnapshot(VIEW).rows) yield columns.map((c) => cell(r[c]));
    },
    state: () => {
      const nodes = engine.viewNodeStats(VIEW);
      const shared = engine.sharedArrangements();
      const c = engine.catalog();
      const detail = [
        ...c.tables.map((t) => `table ${t.name}: ${t.rowCount.toLocaleString('en-US')} rows`),
        ...c.views.map(
          (v) =>
            `view ${v.name}: ${v.rowCount.toLocaleString('en-US')} rows, ~${v.stateBytes.toLocaleString('en-US')} B state`,
        ),
        `nodes: ${nodes.map((n) => `#${n.id} ${n.kind} ${n.stateBytes.toLocaleString('en-US')} B`).join(', ')}`,
        ...shared.map((a) => `shared arrangement ${a.name}: ~${a.stateBytes.toLocaleString('en-US')} B`),
      ].join('; ');
      // A join side that probes a shared arrangement holds no rows itself: count the arrangement,
      // so the figure stays the join's whole state (this bench runs one view).
      const sharedBytes = shared.reduce((s, a) => s + a.stateBytes, 0);
      return {
        bytes: nodes.reduce((s, n) => s + n.stateBytes, 0) + sharedBytes,
        joinBytes:
          nodes.reduce((s, n) => s + (n.kind === 'join' || n.kind === 'semijoin' ? n.stateBytes : 0), 0) +
          sharedBytes,
        detail,
      };
    },
  };
}

// ---- @tanstack/db-ivm ---------------------------------------------------------------------------

interface DbIvmBatch {
  auctions: MultiSetArray<Auction> | null;
  bids: MultiSetArray<Bid> | null;
}

interface JoinRow {
  bid: number;
  auction: number;
  bidder: number;
  amount: number;
  seller: number;
  category: string;
}

interface LeftRow {
  auction: number;
  category: string;
  bid: number | null;
  amount: number | null;
}

/**
 * The materialised view of a db-ivm output stream, keyed by the view's unique key. A run's output is
 * not consolidated: a record that one run both retracts and re-asserts (e.g. a bid moving off an
 * auction deleted in the same batch: δbids⋈auctions, bids⋈δauctions and δbids⋈δauctions each emit a
 * term) comes as several ±1 records built from different objects. So the records are gathered per
 * key and netted by content (`same`) when the run ends; what remains is at most one retraction (the
 * old row) and one assertion (the new one).
 */
class KeyedOutput<V> {
  readonly rows = new Map<number, V>();
  private pending = new Map<number, [V, number][]>();

  constructor(private readonly same: (a: V, b: V) => boolean) {}

  add(key: number, value: V, m: number): void {
    const l = this.pending.get(key);
    if (l === undefined) this.pending.set(key, [[value, m]]);
    else {
      for (const e of l)
        if (this.same(e[0], value)) {
          e[1] += m;
          return;
        }
      l.push([value, m]);
    }
  }

  flush(): void {
    for (const [key, l] of this.pending) {
      let ins: V | undefined;
      let del = 0;
      for (const [v, m] of l) {
        if (m === 1 && ins === undefined) ins = v;
        else if (m === -1 && del === 0) del = 1;
        else if (m !== 0) throw new Error(`db-ivm: key ${key} has multiplicity ${m} in one run`);
      }
      if (ins !== undefined) this.rows.set(key, ins);
      else if (del === 1) this.rows.delete(key);
    }
    this.pending = new Map();
  }
}

/**
 * The equivalent graph: both inputs keyed by auction id with [primary key, row] values (the shape
 * TanStack DB's query compiler feeds its joins), `join`, then per variant: map to [category, amount]
 * and a `reduce` to [count, sum] (the fast form; see the canonical bench's notes on `groupBy`), or a
 * `map` to the projected row, materialised by key (bid id; for the LEFT JOIN's null rows, −auction id).
 */
function buildDbIvm(variant: Variant): JoinImpl {
  const graph = new D2();
  const auctionsIn = graph.newInput<Auction>();
  const bidsIn = graph.newInput<Bid>();
  const auctionsK = auctionsIn.pipe(map((a: Auction): [number, [number, Auction]] => [a.id, [a.id, a]]));
  const bidsK = bidsIn.pipe(map((b: Bid): [number, [number, Bid]] => [b.auction, [b.id, b]]));
  let rows: () => Iterable<Tuple>;
  let flush: () => void = () => {};

  if (variant === 'agg') {
    // category → [count, sum]: one live output row per category, so the fold is linear.
    const groups = new Map<string, [number, number]>();
    bidsK.pipe(
      join(auctionsK, 'inner'),
      map(([, [b, a]]: [number, [[number, Bid] | null, [number, Auction] | null]]): [string, number] => [
        a![1].category,
        b![1].amount,
      ]),
      reduce((values: [number, number][]) => {
        let n = 0;
        let total = 0;
        for (const [amount, m] of values) {
          n += m;
          total += amount * m;
        }
        return n > 0 ? [[[n, total], 1]] : [];
      }),
      output((msg: MultiSet<[string, [number, number]]>) => {
        for (const [[category, [n, total]], m] of msg.getInner()) {
          let g = groups.get(category);
          if (g === undefined) groups.set(category, (g = [0, 0]));
          g[0] += n * m;
          g[1] += total * m;
          if (g[0] === 0 && g[1] === 0) groups.delete(category);
        }
      }),
    );
    rows = function* () {
      for (const [category, [n, total]] of groups) yield [category, n, total];
    };
  } else if (variant === 'join' || variant === 'semi') {
    // db-ivm has no semi-join: its inner join on the auction's primary key is the same result.
    const out = new KeyedOutput<JoinRow>(
      (x, y) =>
        x.auction === y.auction &&
        x.amount === y.amount &&
        x.bidder === y.bidder &&
        x.seller === y.seller &&
        x.category === y.category,
    );
    bidsK.pipe(
      join(auctionsK, 'inner'),
      map(([, [b, a]]: [number, [[number, Bid] | null, [number, Auction] | null]]): [number, JoinRow] => {
        const bid = b![1];
        const auction = a![1];
        return [
          bid.id,
          {
            bid: bid.id,
            auction: bid.auction,
            bidder: bid.bidder,
            amount: bid.amount,
            seller: auction.seller,
            category: auction.category,
          },
        ];
      }),
      output((msg: MultiSet<[number, JoinRow]>) => {
        for (const [[k, v], m] of msg.getInner()) out.add(k, v, m);
      }),
    );
    flush = () => out.flush();
    rows =
      variant === 'semi'
        ? function* () {
            for (const r of out.rows.values()) yield [r.bid, r.auction, r.bidder, r.amount];
          }
        : function* () {
            for (const r of out.rows.values())
              yield [r.bid, r.auction, r.bidder, r.amount, r.seller, r.category];
          };
  } else {
    const out = new KeyedOutput<LeftRow>(
      (x, y) =>
        x.auction === y.auction && x.category === y.category && x.bid === y.bid && x.amount === y.amount,
    );
    auctionsK.pipe(
      join(bidsK, 'left'),
      map(([, [a, b]]: [number, [[number, Auction] | null, [number, Bid] | null]]): [number, LeftRow] => {
        const auction = a![1];
        if (b === null)
          return [-auction.id, { auction: auction.id, category: auction.category, bid: null, amount: null }];
        const bid = b[1];
        return [bid.id, { auction: auction.id, category: auction.category, bid: bid.id, amount: bid.amount }];
      }),
      output((msg: MultiSet<[number, LeftRow]>) => {
        for (const [[k, v], m] of msg.getInner()) out.add(k, v, m);
      }),
    );
    flush = () => out.flush();
    rows = function* () {
      for (const r of out.rows.values()) yield [r.auction, r.category, r.bid, r.amount];
    };
  }
  graph.finalize();

  return {
    // The multisets are built before timing: a delete or update retracts the row object inserted.
    prepare: (changes) => {
      const b: DbIvmBatch = { auctions: null, bids: null };
      for (const c of changes) {
        const side = (b[c.table] ??= []) as [Auction | Bid, number][];
        if (c.old !== null) side.push([c.old, -1]);
        if (c.row !== null) side.push([c.row, 1]);
      }
      return b;
    },
    apply: (batch) => {
      const b = batch as DbIvmBatch;
      if (b.auctions !== null) auctionsIn.sendData(new MultiSet(b.auctions));
      if (b.bids !== null) bidsIn.sendData(new MultiSet(b.bids));
      graph.run();
      flush();
    },
    rows: () => rows(),
  };
}

// ---- a hand-written Map implementation (the naive ceiling) --------------------------------------

/**
 * auction id → auction, auction id → its bids, and per variant the view: category → [count, sum],
 * bid id → joined row, or (LEFT JOIN) bid id / −auction id → row. Changes carry the old row, as
 * db-ivm's retractions do, so no bid id → bid map is kept.
 */
function buildMap(variant: Variant): JoinImpl {
  // The semi-join keeps the join's rows (one per bid, auction ids being unique) and projects them.
  const joins = variant === 'join' || variant === 'semi';
  const auctions = new Map<number, Auction>();
  const bidsOf = new Map<number, Set<Bid>>();
  const groups = new Map<string, [number, number]>();
  const joined = new Map<number, JoinRow>();
  const left = new Map<number, LeftRow>();
  const nullRow = (a: Auction): LeftRow => ({ auction: a.id, category: a.category, bid: null, amount: null });
  const leftRow = (a: Auction, b: Bid): LeftRow => ({
    auction: a.id,
    category: a.category,
    bid: b.id,
    amount: b.amount,
  });
  const joinRow = (a: Auction, b: Bid): JoinRow => ({
    bid: b.id,
    auction: b.auction,
    bidder: b.bidder,
    amount: b.amount,
    seller: a.seller,
    category: a.category,
  });
  const addGroup = (category: string, n: number, amount: number): void => {
    let g = groups.get(category);
    if (g === undefined) groups.set(category, (g = [0, 0]));
    g[0] += n;
    g[1] += amount;
    if (g[0] === 0) groups.delete(category);
  };

  const insertBid = (b: Bid): void => {
    let set = bidsOf.get(b.auction);
    const wasEmpty = set === undefined;
    if (set === undefined) bidsOf.set(b.auction, (set = new Set()));
    set.add(b);
    const a = auctions.get(b.auction);
    if (a === undefined) return;
    if (variant === 'agg') addGroup(a.category, 1, b.amount);
    else if (joins) joined.set(b.id, joinRow(a, b));
    else {
      if (wasEmpty) left.delete(-a.id);
      left.set(b.id, leftRow(a, b));
    }
  };
  const deleteBid = (b: Bid): void => {
    const set = bidsOf.get(b.auction) as Set<Bid>;
    set.delete(b);
    if (set.size === 0) bidsOf.delete(b.auction);
    const a = auctions.get(b.auction);
    if (a === undefined) return;
    if (variant === 'agg') addGroup(a.category, -1, -b.amount);
    else if (joins) joined.delete(b.id);
    else {
      left.delete(b.id);
      if (set.size === 0) left.set(-a.id, nullRow(a));
    }
  };
  const insertAuction = (a: Auction): void => {
    auctions.set(a.id, a);
    const set = bidsOf.get(a.id);
    if (variant === 'agg') {
      if (set === undefined) return;
      let total = 0;
      for (const b of set) total += b.amount;
      addGroup(a.category, set.size, total);
    } else if (joins) {
      if (set !== undefined) for (const b of set) joined.set(b.id, joinRow(a, b));
    } else if (set === undefined) left.set(-a.id, nullRow(a));
    else for (const b of set) left.set(b.id, leftRow(a, b));
  };
  const deleteAuction = (a: Auction): void => {
    auctions.delete(a.id);
    const set = bidsOf.get(a.id);
    if (variant === 'agg') {
      if (set === undefined) return;
      let total = 0;
      for (const b of set) total += b.amount;
      addGroup(a.category, -set.size, -total);
    } else if (joins) {
      if (set !== undefined) for (const b of set) joined.delete(b.id);
    } else if (set === undefined) left.delete(-a.id);
    else for (const b of set) left.delete(b.id);
  };

  return {
    prepare: (changes) => changes,
    apply: (batch) => {
      for (const c of batch as Change[]) {
        if (c.table === 'bids') {
          if (c.old !== null) deleteBid(c.old as Bid);
          if (c.row !== null) insertBid(c.row as Bid);
        } else {
          if (c.old !== null) deleteAuction(c.old as Auction);
          if (c.row !== null) insertAuction(c.row as Auction);
        }
      }
    },
    rows: function* () {
      if (variant === 'agg') for (const [category, [n, total]] of groups) yield [category, n, total];
      else if (variant === 'semi')
        for (const r of joined.values()) yield [r.bid, r.auction, r.bidder, r.amount];
      else if (joins)
        for (const r of joined.values()) yield [r.bid, r.auction, r.bidder, r.amount, r.seller, r.category];
      else for (const r of left.values()) yield [r.auction, r.category, r.bid, r.amount];
    },
  };
}

export async function buildImpl(impl: Impl, variant: Variant): Promise<JoinImpl> {
  if (impl === 'sluice') return buildSluice(variant);
  if (impl === 'db-ivm') return buildDbIvm(variant);
  return buildMap(variant);
}
