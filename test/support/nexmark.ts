// A deterministic Nexmark generator: person, auction and bid as RisingWave declares them (BIGINT,
// VARCHAR, TIMESTAMP with milliseconds), seeded, handing out per-table batches that insert, update and
// delete rows and carry late (out-of-order) event times — for the Nexmark differential suite and bench.
import type { Row } from '../../src/common/types.ts';
import { formatEpochMicros } from '../../src/common/time/time-window.ts';
import { Rng } from './random-workload.ts';
import type { TableSpec } from './sqlite-oracle.ts';

const col = (name: string, sqlType: string): { name: string; sqlType: string; nullable: boolean } => ({
  name,
  sqlType,
  nullable: true,
});

/**
 * RisingWave's nexmark tables (e2e_test/streaming/nexmark). person and auction are keyed on id so an
 * update replaces the row; bid has no key in Nexmark, so it is a multiset and an update is a delete of
 * the old row plus an insert of the new one.
 */
export const NEXMARK_TABLES: readonly TableSpec[] = [
  {
    name: 'person',
    columns: [
      col('id', 'bigint'),
      col('name', 'varchar'),
      col('email_address', 'varchar'),
      col('credit_card', 'varchar'),
      col('city', 'varchar'),
      col('state', 'varchar'),
      col('date_time', 'timestamp'),
      col('extra', 'varchar'),
    ],
    primaryKey: ['id'],
  },
  {
    name: 'auction',
    columns: [
      col('id', 'bigint'),
      col('item_name', 'varchar'),
      col('description', 'varchar'),
      col('initial_bid', 'bigint'),
      col('reserve', 'bigint'),
      col('date_time', 'timestamp'),
      col('expires', 'timestamp'),
      col('seller', 'bigint'),
      col('category', 'bigint'),
      col('extra', 'varchar'),
    ],
    primaryKey: ['id'],
  },
  {
    name: 'bid',
    columns: [
      col('auction', 'bigint'),
      col('bidder', 'bigint'),
      col('price', 'bigint'),
      col('channel', 'varchar'),
      col('url', 'varchar'),
      col('date_time', 'timestamp'),
      col('extra', 'varchar'),
    ],
    primaryKey: null,
  },
];

// The value pools of the Nexmark generator (RisingWave's nexmark crate uses lowercase cities and states).
const FIRST = [
  'peter',
  'paul',
  'luke',
  'john',
  'saul',
  'vicky',
  'kate',
  'julie',
  'sarah',
  'deiter',
  'walter',
];
const LAST = ['shultz', 'abrams', 'spencer', 'white', 'bartels', 'walton', 'smith', 'jones', 'noris'];
const CITIES = ['phoenix', 'los angeles', 'san francisco', 'boise', 'portland', 'bend', 'redmond', 'seattle'];
const STATES = ['az', 'ca', 'id', 'or', 'wa', 'wy'];
const HOT_CHANNELS = ['Google', 'Facebook', 'Baidu', 'Apple'];
/** Nexmark's first person and auction id; its categories are 10…14. */
export const FIRST_ID = 1000;

export interface NexmarkOptions {
  /** Events per `step()` (spread over the three tables by Nexmark's 1 : 3 : 46 mix, boosted for joins). */
  readonly eventsPerStep: number;
  /** Share of a step's changes that update an existing row, and that delete one. */
  readonly updateRate: number;
  readonly deleteRate: number;
  /** Share of new events whose time is up to `lateMs` before the newest time so far. */
  readonly lateRate: number;
  readonly lateMs: number;
  /** Milliseconds the event clock advances per event, on average. */
  readonly msPerEvent: number;
  /** Epoch milliseconds of the first event. */
  readonly startMs: number;
  /** Every bid's price and time distinct among the live bids (see `distinct` below). */
  readonly distinctBids: boolean;
}

export const TEST_OPTIONS: NexmarkOptions = {
  eventsPerStep: 24,
  updateRate: 0.1,
  deleteRate: 0.1,
  lateRate: 0.15,
  lateMs: 25_000,
  msPerEvent: 450,
  startMs: Date.UTC(2024, 1, 28, 23, 57, 0),
  distinctBids: true,
};

/** Start times the suite's seeds rotate through: across midnight into a leap day, across noon, at dawn. */
export const START_TIMES = [
  Date.UTC(2024, 1, 28, 23, 57, 0),
  Date.UTC(2024, 6, 4, 11, 58, 30),
  Date.UTC(2023, 11, 31, 5, 59, 0),
  Date.UTC(2025, 2, 9, 19, 59, 10),
];

export interface TableBatch {
  readonly table: 'person' | 'auction' | 'bid';
  readonly insert: Row[];
  readonly delete: Row[];
}

/**
 * Seeded Nexmark events. `step()` returns the next batches (one per table it touches; each is applied
 * as its own epoch). The generator keeps the live rows, so every delete names a row that exists.
 *
 * With `distinctBids`, no two live bids share a price or a time. That is the only bend of the data
 * for the tests' sake: q6, q9, q18 and q19 rank bids by price or time, and SQL leaves the order of
 * tied rows undefined, so with ties Sluice and SQLite could both be right and still differ.
 */
export class NexmarkGenerator {
  private readonly rng: Rng;
  private clockMs: number;
  private nextPerson = FIRST_ID;
  private nextAuction = FIRST_ID;
  private bidSeq = 0;
  readonly persons = new Map<number, Row>();
  readonly auctions = new Map<number, Row>();
  /** Live bids by an internal sequence number (bids have no key of their own). */
  readonly bids = new Map<number, Row>();
  private readonly prices = new Set<number>();
  private readonly times = new Set<number>();

  constructor(
    seed: number,
    private readonly options: NexmarkOptions = TEST_OPTIONS,
  ) {
    this.rng = new Rng(seed);
    this.clockMs = options.startMs;
  }

  private ts(ms: number): string {
    return formatEpochMicros(ms * 1000, false);
  }

  /** The next event time: mostly the advancing clock, sometimes a late one behind it. */
  private eventMs(): number {
    const o = this.options;
    this.clockMs += this.rng.int(0, 2 * o.msPerEvent);
    // A third of the times fall on whole seconds, so window bounds (BETWEEN, window_end) are hit exactly.
    const round = (ms: number): number => (this.rng.chance(0.33) ? ms - (ms % 1000) : ms);
    if (this.rng.chance(o.lateRate)) return round(this.clockMs - this.rng.int(0, o.lateMs));
    return round(this.clockMs);
  }

  private word(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(97 + this.rng.int(0, 25));
    return s;
  }

  private person(id: number): Row {
    const rng = this.rng;
    const name = `${rng.pick(FIRST)} ${rng.pick(LAST)}`;
    return {
      id,
      name,
      email_address: `${this.word(5)}@${this.word(4)}.com`,
      credit_card: `${rng.int(1000, 9999)} ${rng.int(1000, 9999)} ${rng.int(1000, 9999)} ${rng.int(1000, 9999)}`,
      city: rng.pick(CITIES),
      state: rng.pick(STATES),
      date_time: this.ts(this.eventMs()),
      extra: this.word(rng.int(0, 8)),
    };
  }

  /** A live key, recent ones likelier (Nexmark's hot auctions and active people), or a missing one. */
  private recentId(ids: Map<number, Row>, next: number): number {
    if (ids.size === 0 || this.rng.chance(0.05)) return next + this.rng.int(0, 3); // not (yet) there
    if (this.rng.chance(0.6)) return Math.max(FIRST_ID, next - 1 - this.rng.int(0, 3));
    return this.rng.pick([...ids.keys()]);
  }

  private auction(id: number): Row {
    const rng = this.rng;
    const ms = this.eventMs();
    const initial = rng.int(1, 500);
    return {
      id,
      item_name: this.word(rng.int(3, 8)),
      description: this.word(rng.int(5, 12)),
      initial_bid: initial,
      reserve: initial + rng.int(0, 500),
      date_time: this.ts(ms),
      expires: this.ts(ms + rng.int(1_000, 40_000)),
      seller: this.recentId(this.persons, this.nextPerson),
      category: rng.int(10, 14),
      extra: this.word(rng.int(0, 8)),
    };
  }

  /** Prices spread over 1…10^8 on a log scale (Nexmark's are skewed to small ones). */
  private price(): number {
    for (;;) {
      const p = Math.max(1, Math.round(10 ** (this.rng.next() * 8)));
      if (!this.options.distinctBids || !this.prices.has(p)) return p;
    }
  }

  private bidTime(): number {
    for (;;) {
      const ms = this.eventMs();
      if (!this.options.distinctBids || !this.times.has(ms)) return ms;
    }
  }

  private bid(): Row {
    const rng = this.rng;
    const channel = rng.chance(0.5) ? rng.pick(HOT_CHANNELS) : `channel-${rng.int(0, 9)}`;
    const dirs = `${this.word(rng.int(1, 5))}/${this.word(rng.int(1, 5))}/${this.word(rng.int(1, 5))}`;
    // q21 reads channel_id after '&' or at the start: some urls lack it, some have it after '?'.
    const query = channel.startsWith('channel-')
      ? rng.chance(0.8)
        ? `query=1&channel_id=${channel.slice(8)}`
        : 'query=1'
      : rng.chance(0.3)
        ? `channel_id=${rng.int(0, 99)}&query=1`
        : 'query=1';
    return {
      auction: this.recentId(this.auctions, this.nextAuction),
      bidder: this.recentId(this.persons, this.nextPerson),
      price: this.price(),
      channel: rng.chance(0.1) ? channel.toLowerCase() : channel,
      url: `https://www.nexmark.com/${dirs}/item.htm?${query}`,
      date_time: this.ts(this.bidTime()),
      extra: this.word(rng.int(0, 12)),
    };
  }

  private holdBid(seq: number, row: Row): void {
    this.bids.set(seq, row);
    this.prices.add(row['price'] as number);
    this.times.add(timestampMs(row['date_time'] as string));
  }

  private dropBid(seq: number): Row {
    const row = this.bids.get(seq) as Row;
    this.bids.delete(seq);
    this.prices.delete(row['price'] as number);
    this.times.delete(timestampMs(row['date_time'] as string));
    return row;
  }

  /** The next batches: at most one per table, in the order person, auction, bid. */
  step(): TableBatch[] {
    const rng = this.rng;
    const o = this.options;
    const person: TableBatch = { table: 'person', insert: [], delete: [] };
    const auction: TableBatch = { table: 'auction', insert: [], delete: [] };
    const bid: TableBatch = { table: 'bid', insert: [], delete: [] };
    const touchedP = new Set<number>();
    const touchedA = new Set<number>();
    const touchedB = new Set<number>();
    for (let i = 0; i < o.eventsPerStep; i++) {
      const kind = rng.weighted<'person' | 'auction' | 'bid'>([
        // Nexmark's mix is 1 : 3 : 46; more people and auctions here give the joins more to match.
        [4, 'person'],
        [8, 'auction'],
        [42, 'bid'],
      ]);
      const r = rng.next();
      if (kind === 'bid') {
        const seq = this.bids.size > 0 ? rng.pick([...this.bids.keys()]) : undefined;
        if (seq !== undefined && !touchedB.has(seq) && r < o.deleteRate) {
          touchedB.add(seq);
          bid.delete.push(this.dropBid(seq));
        } else if (seq !== undefined && !touchedB.has(seq) && r < o.deleteRate + o.updateRate) {
          // An update: a new price, a corrected (possibly late) time, or another auction.
          touchedB.add(seq);
          const old = this.dropBid(seq);
          const what = rng.int(0, 2);
          const row: Row = {
            ...old,
            ...(what === 0 ? { price: this.price() } : {}),
            ...(what === 1 ? { date_time: this.ts(this.bidTime()) } : {}),
            ...(what === 2 ? { auction: this.recentId(this.auctions, this.nextAuction) } : {}),
          };
          bid.delete.push(old);
          bid.insert.push(row);
          this.holdBid(seq, row);
        } else {
          const s = this.bidSeq++;
          touchedB.add(s);
          const row = this.bid();
          bid.insert.push(row);
          this.holdBid(s, row);
        }
      } else {
        const live = kind === 'person' ? this.persons : this.auctions;
        const batch = kind === 'person' ? person : auction;
        const touched = kind === 'person' ? touchedP : touchedA;
        const id = live.size > 0 ? rng.pick([...live.keys()]) : undefined;
        if (id !== undefined && !touched.has(id) && r < o.deleteRate / 2) {
          touched.add(id);
          batch.delete.push(live.get(id) as Row);
          live.delete(id);
        } else if (id !== undefined && !touched.has(id) && r < o.deleteRate / 2 + o.updateRate * 2) {
          touched.add(id);
          const old = live.get(id) as Row;
          const fresh = kind === 'person' ? this.person(id) : this.auction(id);
          // Keep the identity, change what the queries read.
          const row: Row =
            kind === 'person'
              ? {
                  ...old,
                  city: fresh['city'] ?? null,
                  state: fresh['state'] ?? null,
                  name: fresh['name'] ?? null,
                }
              : {
                  ...old,
                  category: fresh['category'] ?? null,
                  expires: fresh['expires'] ?? null,
                  date_time: fresh['date_time'] ?? null,
                  seller: fresh['seller'] ?? null,
                };
          batch.delete.push(old);
          batch.insert.push(row);
          live.set(id, row);
        } else {
          const newId = kind === 'person' ? this.nextPerson++ : this.nextAuction++;
          touched.add(newId);
          const row = kind === 'person' ? this.person(newId) : this.auction(newId);
          batch.insert.push(row);
          live.set(newId, row);
        }
      }
    }
    return [person, auction, bid].filter((b) => b.insert.length + b.delete.length > 0);
  }

  /** Batches deleting every live row (a retraction check: every view must end empty). */
  deleteEverything(): TableBatch[] {
    return [
      { table: 'bid', insert: [], delete: [...this.bids.values()] },
      { table: 'auction', insert: [], delete: [...this.auctions.values()] },
      { table: 'person', insert: [], delete: [...this.persons.values()] },
    ];
  }
}

/** Epoch milliseconds of a stored timestamp text (UTC, no zone). */
export function timestampMs(ts: string): number {
  return Date.parse(`${ts.replace(' ', 'T')}Z`);
}
