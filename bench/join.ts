// The join benchmark: auctions ⋈ bids (bids.auction = auctions.id) maintained incrementally, with a
// GROUP BY on top (agg), the join view itself (join) and a LEFT JOIN from auctions (left). Three
// phases: load the auctions, insert the bids (the probe side), then updates and deletes on both
// sides. Sluice in-process beside @tanstack/db-ivm and a hand-written Map implementation (the
// naive ceiling), each (impl, variant, batch) in a fresh child process that runs every repeat on a fresh
// instance; every phase's
// result is checked against a direct computation and the implementations against each other.
// See bench/README.md.
//
//   node --import tsx bench/join.ts                     # the full matrix
//   node --import tsx bench/join.ts --quick             # a 40th of the rows, one repeat, one process (< 60 s)
//   node --import tsx bench/join.ts --peers             # db-ivm and the Map only
//   node --import tsx bench/join.ts --impl sluice --variant agg --batch 10000 --repeat 1
//
// Every flag can also be given as an environment variable: BENCH_QUICK=1, BENCH_IMPL=sluice,
// BENCH_BATCH=100, BENCH_REPEAT=5, ... (flags win).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { Row } from '../src/common/types.ts';
import { D2, MultiSet, join, map, output, reduce } from '@tanstack/db-ivm';
import type { MultiSetArray } from '@tanstack/db-ivm';
import {
  ReferenceTables,
  VARIANT_COLUMNS,
  VARIANT_SQL,
  diffRows,
  digest,
  generatePhases,
  type Auction,
  type Bid,
  type Cell,
  type Change,
  type JoinSpec,
  type Phase,
  type PhaseName,
  type Tuple,
  type Variant,
} from './join-workload.ts';

type Impl = 'sluice' | 'db-ivm' | 'map';
const IMPLS: readonly Impl[] = ['sluice', 'db-ivm', 'map'];
const VARIANTS: readonly Variant[] = ['agg', 'join', 'left', 'semi'];
const PHASES: readonly PhaseName[] = ['auctions', 'bids', 'mutations'];

/** Batches of the untimed prefix of a phase (batch 1 times only the last `slice` changes of each). */
const PREFIX_BATCH = 10_000;

interface Options {
  impls: Impl[];
  variants: Variant[];
  batches: number[];
  auctions: number;
  bids: number;
  mutate: number;
  categories: number;
  /** Timed changes per phase at batch 1 (the rest of the phase is applied untimed first). */
  slice: number;
  repeat: number;
  seed: number;
  warmup: boolean;
  quick: boolean;
  cpuProfile: string | null;
  child: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    impls: [...IMPLS],
    variants: [...VARIANTS],
    batches: [1, 100, 10_000],
    auctions: 100_000,
    bids: 1_000_000,
    mutate: 0.1,
    categories: 100,
    slice: 20_000,
    repeat: 3,
    seed: 20111111,
    warmup: true,
    quick: false,
    cpuProfile: null,
    child: false,
  };
  const set = new Set<string>();
  const list = (v: string): string[] => v.split(',').filter((s) => s !== '');
  const int = (flag: string, v: string): number => {
    const n = Number(v.replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 0) throw new Error(`bench: ${flag} needs a non-negative integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`bench: ${flag} needs a value`);
      return v;
    };
    set.add(flag);
    switch (flag) {
      case '--quick':
        o.quick = inline === undefined || inline === '1' || inline === 'true';
        break;
      case '--child':
        o.child = true;
        break;
      case '--peers':
        o.impls = ['db-ivm', 'map'];
        break;
      case '--impl': {
        const v = value();
        o.impls = v === 'all' ? [...IMPLS] : (list(v) as Impl[]);
        for (const x of o.impls) if (!IMPLS.includes(x)) throw new Error(`bench: unknown impl ${x}`);
        break;
      }
      case '--variant': {
        const v = value();
        o.variants = v === 'all' ? [...VARIANTS] : (list(v) as Variant[]);
        for (const x of o.variants) if (!VARIANTS.includes(x)) throw new Error(`bench: unknown variant ${x}`);
        break;
      }
      case '--batch':
        o.batches = list(value()).map((v) => int('--batch', v));
        if (o.batches.some((b) => b === 0)) throw new Error('bench: --batch must be ≥ 1');
        break;
      case '--auctions':
        o.auctions = int(flag, value());
        break;
      case '--bids':
        o.bids = int(flag, value());
        break;
      case '--mutate':
        o.mutate = Number(value());
        if (!(o.mutate >= 0 && o.mutate <= 1)) throw new Error('bench: --mutate is a fraction in [0, 1]');
        break;
      case '--categories':
        o.categories = Math.max(1, int(flag, value()));
        break;
      case '--slice':
        o.slice = Math.max(1, int(flag, value()));
        break;
      case '--repeat':
        o.repeat = Math.max(1, int(flag, value()));
        break;
      case '--seed':
        o.seed = int(flag, value());
        break;
      case '--no-warmup':
        o.warmup = false;
        break;
      case '--cpu-profile':
        o.cpuProfile = value();
        break;
      case '--help':
      case '-h':
        console.log(
          'usage: node --import tsx bench/join.ts [--quick] [--peers | --impl sluice,db-ivm,map] [--variant agg,join,left,semi]\n' +
            '       [--batch 1,100,10000] [--auctions N] [--bids N] [--mutate F] [--categories N] [--slice N]\n' +
            '       [--repeat N] [--seed N] [--no-warmup] [--cpu-profile PREFIX]\n' +
            '  every flag also as an environment variable: BENCH_QUICK=1, BENCH_IMPL=..., BENCH_NO_WARMUP=1, ...',
        );
        process.exit(0);
        break;
      default:
        throw new Error(`bench: unknown flag ${a}`);
    }
  }
  if (o.quick) {
    if (!set.has('--auctions')) o.auctions = Math.ceil(o.auctions / 40);
    if (!set.has('--bids')) o.bids = Math.ceil(o.bids / 40);
    if (!set.has('--slice')) o.slice = Math.ceil(o.slice / 40);
    if (!set.has('--repeat')) o.repeat = 1;
  }
  return o;
}

/** BENCH_FOO_BAR=v → --foo-bar=v (before the command line's own flags, which therefore win). */
function envArgs(): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('BENCH_') || v === undefined || v === '') continue;
    const flag = '--' + k.slice(6).toLowerCase().replace(/_/g, '-');
    if (flag === '--quick' || flag === '--peers' || flag === '--no-warmup') {
      if (v !== '0' && v !== 'false') out.push(flag);
    } else out.push(`${flag}=${v}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The implementations. Each takes a batch of changes in its own input form (built before timing)
// and keeps the view materialised; rows() reports it as tuples in VARIANT_COLUMNS order (untimed).

interface JoinImpl {
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

async function buildImpl(impl: Impl, variant: Variant): Promise<JoinImpl> {
  if (impl === 'sluice') return buildSluice(variant);
  if (impl === 'db-ivm') return buildDbIvm(variant);
  return buildMap(variant);
}

// ---------------------------------------------------------------------------------------------
// Child: one implementation, one variant, one batch size.

interface PhaseResult {
  phase: PhaseName;
  /** Changes applied untimed (in batches of PREFIX_BATCH) before the timed ones. */
  prefix: number;
  events: number;
  events_per_s: number;
  events_per_cpu_s: number;
  p50_us: number;
  p99_us: number;
  digest: string;
}

/** One run on a fresh instance. */
interface RunResult {
  phases: PhaseResult[];
  /** Heap used + external after the run (workload dropped) minus before it (empty view built). */
  heap_delta_bytes: number;
  /** Live base rows (auctions + bids) at the end. */
  base_rows: number;
  /** Rows in the view at the end. */
  view_rows: number;
  /** Sluice: the view's operators' own estimate of their state (`viewNodeStats`). */
  state_bytes: number | null;
  /** Sluice: the join operator's part of it (its two arrangements). */
  join_state_bytes: number | null;
  state: string;
}

interface ChildResult {
  child: true;
  impl: Impl;
  variant: Variant;
  batch: number;
  runs: RunResult[];
}

/** What a child reports when a phase's result is wrong or the implementation throws. */
interface ChildFailure {
  child: true;
  failed: true;
  impl: Impl;
  variant: Variant;
  batch: number;
  sql: string;
  phase: PhaseName | 'create';
  message: string;
  code?: string;
  expected?: string;
  actual?: string;
  missing?: string[];
  extra?: string[];
}

class PhaseMismatch extends Error {
  constructor(
    readonly detail: Omit<ChildFailure, 'child' | 'failed' | 'impl' | 'variant' | 'batch' | 'sql'>,
  ) {
    super(detail.message);
  }
}

function getGc(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Heap used plus off-heap memory (ArrayBuffers of typed arrays), after full collections. */
function settledMemory(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx]!;
}

function cut<T>(xs: readonly T[], from: number, to: number, size: number): T[][] {
  const out: T[][] = [];
  for (let i = from; i < to; i += size) out.push(xs.slice(i, Math.min(i + size, to)));
  return out;
}

function specOf(o: Options): JoinSpec {
  return { auctions: o.auctions, bids: o.bids, mutate: o.mutate, categories: o.categories, seed: o.seed };
}

/** Expected digest after each phase, by a direct computation over the tables as they stand. */
function expectedDigests(
  phases: readonly Phase[],
  variant: Variant,
): { digests: string[]; baseRows: number } {
  const ref = new ReferenceTables();
  const digests: string[] = [];
  for (const ph of phases) {
    ref.apply(ph.changes);
    digests.push(digest(ref.result(variant)));
  }
  return { digests, baseRows: ref.auctions.size + ref.bids.size };
}

/**
 * Runs the phases on `p`: per phase the untimed prefix (batch 1 only), then the timed changes at
 * `batch`; after each phase the view is checked against `expected` (throws PhaseMismatch).
 */
async function runPhases(
  p: JoinImpl,
  phases: readonly Phase[],
  expected: readonly string[],
  variant: Variant,
  batch: number,
  slice: number,
  gc: () => void,
  session: Session | null,
  onPhase: (name: PhaseName) => void = () => {},
  checkAll = true,
): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (let pi = 0; pi < phases.length; pi++) {
    const { name, changes } = phases[pi]!;
    onPhase(name);
    const timedFrom = batch === 1 ? Math.max(0, changes.length - slice) : 0;
    for (const b of cut(changes, 0, timedFrom, PREFIX_BATCH)) p.apply(p.prepare(b));
    let prepared: unknown[] | null = cut(changes, timedFrom, changes.length, batch).map(p.prepare);
    const lat = new Float64Array(prepared.length);
    gc();
    if (session !== null) await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < prepared.length; i++) {
      const t0 = process.hrtime.bigint();
      p.apply(prepared[i]);
      lat[i] = Number(process.hrtime.bigint() - t0);
    }
    const wallNs = Number(process.hrtime.bigint() - start);
    const cpu = process.cpuUsage(cpu0);
    if (session !== null) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${profilePath}.${name}.cpuprofile`, JSON.stringify(profile));
    }
    prepared = null;
    const events = changes.length - timedFrom;
    const got = checkAll || pi === phases.length - 1 ? digest(p.rows()) : (expected[pi] as string);
    if (got !== expected[pi]) {
      // Recompute the phase's expected rows (the workload is still alive) for the report.
      const ref = new ReferenceTables();
      for (let j = 0; j <= pi; j++) ref.apply(phases[j]!.changes);
      const d = diffRows(ref.result(variant), p.rows());
      throw new PhaseMismatch({
        phase: name,
        message: `the view after phase "${name}" differs from the direct computation`,
        expected: `${d.expectedRows} rows (digest ${expected[pi]})`,
        actual: `${d.actualRows} rows (digest ${got})`,
        missing: d.missing,
        extra: d.extra,
      });
    }
    lat.sort();
    results.push({
      phase: name,
      prefix: timedFrom,
      events,
      events_per_s: Math.round(events / (wallNs / 1e9)),
      events_per_cpu_s: Math.round(events / ((cpu.user + cpu.system) / 1e6)),
      p50_us: Math.round(percentile(lat, 0.5) / 10) / 100,
      p99_us: Math.round(percentile(lat, 0.99) / 10) / 100,
      digest: got,
    });
  }
  return results;
}

let profilePath = '';

/** Every (variant, batch, impl) given, one after the other (one, except in --quick mode). */
async function runChild(o: Options): Promise<void> {
  for (const variant of o.variants)
    for (const batch of o.batches) for (const impl of o.impls) await runCell(o, impl, variant, batch);
}

async function runCell(o: Options, impl: Impl, variant: Variant, batch: number): Promise<void> {
  const gc = getGc();
  const fail = (f: Omit<ChildFailure, 'child' | 'failed' | 'impl' | 'variant' | 'batch' | 'sql'>): void => {
    const out: ChildFailure = {
      child: true,
      failed: true,
      impl,
      variant,
      batch,
      sql: VARIANT_SQL[variant],
      ...f,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exitCode = 1;
  };
  const codeOf = (e: unknown): string | undefined =>
    typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : undefined;

  let phase: PhaseName | 'create' = 'create';
  try {
    // Warm-up on a throwaway instance with a smaller, different workload, so the timed run sees
    // optimised code (its results are checked too).
    if (o.warmup) {
      const warm = await buildImpl(impl, variant);
      const wspec: JoinSpec = {
        ...specOf(o),
        auctions: Math.ceil(o.auctions / 20),
        bids: Math.ceil(o.bids / 20),
        seed: o.seed + 1,
      };
      const wphases = generatePhases(wspec);
      const { digests } = expectedDigests(wphases, variant);
      await runPhases(warm, wphases, digests, variant, batch, Math.ceil(o.slice / 10), gc, null);
    }

    // The expected views, once: generated, computed directly, dropped.
    const { digests, baseRows } = expectedDigests(generatePhases(specOf(o)), variant);

    let session: Session | null = null;
    if (o.cpuProfile !== null) {
      profilePath = `${o.cpuProfile}.${impl}-${variant}-${batch}`;
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
    }
    // Each repeat: a fresh instance, built before the baseline; the workload (regenerated, the same
    // rows) is made after it, so input rows an implementation keeps count as its state.
    const runs: RunResult[] = [];
    for (let rep = 0; rep < o.repeat; rep++) {
      phase = 'create';
      let p: JoinImpl | null = await buildImpl(impl, variant);
      const baseline = settledMemory(gc);
      let phases: Phase[] | null = generatePhases(specOf(o));
      phase = 'auctions';
      const results = await runPhases(
        p,
        phases,
        digests,
        variant,
        batch,
        o.slice,
        gc,
        rep === 0 ? session : null,
        (n) => {
          phase = n;
        },
        rep === 0, // every phase's view checked on the first run, the last phase's on the others
      );
      phases = null;
      const after = settledMemory(gc);
      let viewRows = 0;
      for (const _ of p.rows()) viewRows++;
      const st = p.state?.() ?? null;
      runs.push({
        phases: results,
        heap_delta_bytes: after - baseline,
        base_rows: baseRows,
        view_rows: viewRows,
        state_bytes: st?.bytes ?? null,
        join_state_bytes: st?.joinBytes ?? null,
        state: st?.detail ?? '',
      });
      p = null;
    }
    session?.disconnect();
    const r: ChildResult = { child: true, impl, variant, batch, runs };
    process.stdout.write(JSON.stringify(r) + '\n');
  } catch (e) {
    if (e instanceof PhaseMismatch) fail(e.detail);
    else {
      const code = codeOf(e);
      if (e instanceof Error && e.stack !== undefined)
        process.stderr.write(`bench: ${impl} ${variant} batch ${batch}: ${e.stack}\n`);
      fail({
        phase,
        message: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        ...(code !== undefined ? { code } : {}),
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Parent: children, medians over repeats, the table, JSON lines and ratios.

function childArgs(
  o: Options,
  impls: readonly Impl[],
  variants: readonly Variant[],
  batches: readonly number[],
): string[] {
  const exec = [...process.execArgv];
  if (!exec.some((a) => a.includes('expose-gc'))) exec.push('--expose-gc');
  if (!exec.some((a, i) => a === 'tsx' && exec[i - 1] === '--import') && !exec.includes('--import=tsx'))
    exec.push('--import', 'tsx');
  const args = [
    fileURLToPath(import.meta.url),
    '--child',
    `--impl=${impls.join(',')}`,
    `--variant=${variants.join(',')}`,
    `--batch=${batches.join(',')}`,
    `--auctions=${o.auctions}`,
    `--bids=${o.bids}`,
    `--mutate=${o.mutate}`,
    `--categories=${o.categories}`,
    `--slice=${o.slice}`,
    `--seed=${o.seed}`,
    `--repeat=${o.repeat}`,
  ];
  if (!o.warmup) args.push('--no-warmup');
  if (o.cpuProfile !== null) args.push(`--cpu-profile=${o.cpuProfile}`);
  return [...exec, ...args];
}

function spawnChild(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    // The child must not read BENCH_* again: its command line is complete.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BENCH_')));
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
    let stdout = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => (stdout += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function row(cells: string[]): string {
  const widths = [7, 7, 7, 10, 9, 9, 12, 12, 10, 11, 24];
  return cells.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' ');
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function runParent(o: Options): Promise<number> {
  const startLoad = loadavg();
  console.log(
    `Sluice join bench: ${fmt(o.auctions)} auctions ⋈ ${fmt(o.bids)} bids on bids.auction = auctions.id, ` +
      `${o.categories} categories, ${Math.round(o.mutate * 100)}% of each side updated/deleted, seed ${o.seed}, ` +
      `median of ${o.repeat} run${o.repeat > 1 ? 's' : ''}${o.quick ? ', QUICK (every cell in one process: heap deltas are approximate)' : ''}; load average ${startLoad}`,
  );
  for (const v of o.variants) console.log(`  ${v.padEnd(4)}  ${VARIANT_SQL[v]}`);
  console.log(
    `batch 1 times only the last ${fmt(o.slice)} changes of each phase (the rest of the phase is applied ` +
      `first, untimed, in batches of ${fmt(PREFIX_BATCH)}); batches 100 and 10,000 time every change.\n` +
      `events/s: changes ÷ wall time (bids phase: probe-side events); ev/cpu-s: the same by CPU time.\n`,
  );
  console.log(
    row([
      'impl',
      'variant',
      'batch',
      'phase',
      'events',
      'prefix',
      'events/s',
      'ev/cpu-s',
      'p50 µs',
      'p99 µs',
      'runs',
    ]),
  );

  type Key = string;
  const results = new Map<Key, RunResult[]>();
  const failures: string[] = [];
  const k = (impl: Impl, variant: Variant, batch: number): Key => `${impl}|${variant}|${batch}`;
  const phaseMedian = (rs: readonly RunResult[], phase: PhaseName, f: (p: PhaseResult) => number): number =>
    median(rs.map((r) => f(r.phases.find((p) => p.phase === phase)!)));

  // One child per (impl, variant, batch); in --quick mode one child runs every cell (the engine's
  // modules load once). A (variant, batch) is reported as soon as all its cells have run.
  const failed = new Set<Key>();
  const cells = o.variants.flatMap((variant) => o.batches.map((batch) => ({ variant, batch })));
  const jobs = o.quick
    ? [{ impls: o.impls, variants: o.variants, batches: o.batches }]
    : cells.flatMap(({ variant, batch }) =>
        o.impls.map((i) => ({ impls: [i], variants: [variant], batches: [batch] })),
      );
  const pending = new Set(cells.map(({ variant, batch }) => `${variant}|${batch}`));
  for (const job of jobs) {
    const { code, stdout } = await spawnChild(childArgs(o, job.impls, job.variants, job.batches));
    const lines = stdout
      .split('\n')
      .filter((l) => l.startsWith('{"child":true'))
      .map((l) => JSON.parse(l) as ChildResult | ChildFailure);
    for (const variant of job.variants)
      for (const batch of job.batches)
        for (const impl of job.impls) {
          const parsed = lines.find((l) => l.impl === impl && l.variant === variant && l.batch === batch);
          if (parsed === undefined || 'failed' in parsed) {
            failed.add(k(impl, variant, batch));
            const f = parsed ?? null;
            const msg =
              f === null
                ? `${impl} ${variant} batch ${batch}: no result (child exited with ${code})`
                : `${impl} ${variant} batch ${batch}, phase ${f.phase}${f.code !== undefined ? ` [${f.code}]` : ''}: ` +
                  `${f.message}\n    SQL: ${f.sql}` +
                  (f.expected !== undefined ? `\n    expected ${f.expected}\n    actual   ${f.actual}` : '') +
                  (f.missing !== undefined && f.missing.length > 0
                    ? `\n    missing: ${f.missing.join(' ')}`
                    : '') +
                  (f.extra !== undefined && f.extra.length > 0 ? `\n    extra:   ${f.extra.join(' ')}` : '');
            failures.push(msg);
            console.log(`!!! FAILED ${msg}`);
            if (f !== null) console.log(JSON.stringify({ bench: 'join', failure: f }));
          } else results.set(k(impl, variant, batch), parsed.runs);
        }
    for (const variant of job.variants)
      for (const batch of job.batches) {
        const done = o.impls.every(
          (i) => results.has(k(i, variant, batch)) || failed.has(k(i, variant, batch)),
        );
        if (done && pending.delete(`${variant}|${batch}`)) report(variant, batch);
      }
  }

  function report(variant: Variant, batch: number): void {
    for (const impl of o.impls) {
      const rs = results.get(k(impl, variant, batch));
      if (rs === undefined) continue;
      for (const phase of PHASES) {
        const first = rs[0]!.phases.find((p) => p.phase === phase)!;
        const eps = phaseMedian(rs, phase, (p) => p.events_per_s);
        const cps = phaseMedian(rs, phase, (p) => p.events_per_cpu_s);
        const p50 = phaseMedian(rs, phase, (p) => p.p50_us);
        const p99 = phaseMedian(rs, phase, (p) => p.p99_us);
        const runs = rs.map((r) => r.phases.find((p) => p.phase === phase)!.events_per_s);
        console.log(
          row([
            impl,
            variant,
            fmt(batch),
            phase,
            fmt(first.events),
            fmt(first.prefix),
            fmt(eps),
            fmt(cps),
            fmt(p50, 1),
            fmt(p99, 1),
            runs.length > 1 ? runs.map((x) => `${Math.round(x / 1000)}k`).join(' ') : '',
          ]),
        );
        console.log(
          JSON.stringify({
            bench: 'join',
            impl,
            variant,
            batch,
            phase,
            events: first.events,
            prefix: first.prefix,
            events_per_s: Math.round(eps),
            events_per_cpu_s: Math.round(cps),
            p50_us: p50,
            p99_us: p99,
            repeats: rs.length,
          }),
        );
      }
      const heap = median(rs.map((r) => r.heap_delta_bytes));
      const last = rs[rs.length - 1]!;
      const stateBytes = last.state_bytes;
      console.log(
        `        ${impl} state: heap delta ${fmt(heap / 2 ** 20, 1)} MiB = ${fmt(heap / last.base_rows)} B per base row ` +
          `(${fmt(last.base_rows)} rows; view ${fmt(last.view_rows)} rows)` +
          (stateBytes !== null
            ? `; engine's estimate: view state ${fmt(stateBytes / 2 ** 20, 1)} MiB, join arrangements ` +
              `${fmt(last.join_state_bytes! / last.base_rows)} B per arranged row`
            : ''),
      );
      if (last.state !== '') console.log(`        ${last.state}`);
      console.log(
        JSON.stringify({
          bench: 'join',
          impl,
          variant,
          batch,
          heap_delta_bytes: Math.round(heap),
          heap_bytes_per_row: Math.round(heap / last.base_rows),
          base_rows: last.base_rows,
          view_rows: last.view_rows,
          ...(stateBytes !== null
            ? {
                state_bytes: stateBytes,
                join_state_bytes: last.join_state_bytes,
                join_state_bytes_per_arranged_row: Math.round(last.join_state_bytes! / last.base_rows),
              }
            : {}),
        }),
      );
    }
    // Every implementation must end every phase with the same view (each matched the reference).
    const digestsOf = (impl: Impl): string | null => {
      const rs = results.get(k(impl, variant, batch));
      if (rs === undefined) return null;
      return rs.map((r) => r.phases.map((p) => p.digest).join(',')).join(';');
    };
    const ref = o.impls.map(digestsOf).find((d) => d !== null);
    for (const impl of o.impls) {
      const d = digestsOf(impl);
      if (d === null || ref === undefined) continue;
      if (d.split(';')[0] !== ref!.split(';')[0] || new Set(d.split(';')).size !== 1) {
        const msg = `MISMATCH: ${impl}'s views differ from the other implementations' (${variant}, batch ${batch})`;
        failures.push(msg);
        console.log(`!!! ${msg}\n  ${impl} ${d}\n  other ${ref}`);
      }
    }
  }

  const ratioLines: string[] = [];
  for (const peer of ['db-ivm', 'map'] as const) {
    for (const variant of o.variants)
      for (const batch of o.batches) {
        const s = results.get(k('sluice', variant, batch));
        const d = results.get(k(peer, variant, batch));
        if (s === undefined || d === undefined) continue;
        const cells: string[] = [];
        for (const phase of PHASES) {
          const value =
            phaseMedian(s, phase, (p) => p.events_per_s) / phaseMedian(d, phase, (p) => p.events_per_s);
          const valueCpu =
            phaseMedian(s, phase, (p) => p.events_per_cpu_s) /
            phaseMedian(d, phase, (p) => p.events_per_cpu_s);
          cells.push(`${phase} ${fmt(value, 2)}× (cpu ${fmt(valueCpu, 2)}×)`);
          ratioLines.push(
            JSON.stringify({
              bench: 'join',
              ratio: `sluice/${peer}`,
              variant,
              batch,
              phase,
              value: Math.round(value * 100) / 100,
              value_cpu: Math.round(valueCpu * 100) / 100,
            }),
          );
        }
        ratioLines.push(
          `  sluice/${peer.padEnd(6)} ${variant.padEnd(4)} batch ${fmt(batch).padStart(6)}: ${cells.join('  ')}`,
        );
      }
  }
  if (ratioLines.length > 0) {
    console.log('\nratios of median events/s:');
    for (const l of ratioLines) console.log(l);
  }
  const endLoad = loadavg();
  console.log(JSON.stringify({ bench: 'join', loadavg_start: startLoad, loadavg_end: endLoad }));
  console.log(`load average: start ${startLoad}, end ${endLoad}`);
  if (failures.length > 0) {
    console.log(`\nFAILED:\n  ${failures.join('\n  ')}`);
    return 1;
  }
  return 0;
}

const opts = parseArgs([...envArgs(), ...process.argv.slice(2)]);
if (opts.child) {
  await runChild(opts);
} else {
  process.exitCode = await runParent(opts);
}
