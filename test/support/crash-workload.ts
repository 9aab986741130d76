// The concurrent crash workload: the Double 11 tables and views (MIN/MAX, COUNT DISTINCT, SUM, a view
// over a view, a keyless table with a keyless view and a SELECT DISTINCT), clients that each own a key
// space and delete only rows they saw acknowledged, and readers that page through a table or a view
// over HTTP. Because concurrently in-flight batches touch disjoint keys, the final state depends only
// on which batches were applied, never on the order the server applied them in; a batch is atomic, so
// one whose answer was lost in a crash is resolved by whether its first inserted key is present.
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import { mulberry32 } from './checkpoint-workload.ts';
import type { TableSpec } from './sqlite-oracle.ts';
import { request } from '../server/helpers.ts';

export const CRASH_TABLES: readonly TableSpec[] = [
  {
    name: 'orders',
    columns: [
      { name: 'order_id', sqlType: 'bigint', nullable: false },
      { name: 'seller_id', sqlType: 'integer', nullable: false },
      { name: 'amount', sqlType: 'integer', nullable: false },
    ],
    primaryKey: ['order_id'],
  },
  {
    // Keyless: a delete removes one copy of an equal row; `ref` is unique so a batch can be found.
    name: 'clicks',
    columns: [
      { name: 'seller_id', sqlType: 'integer', nullable: false },
      { name: 'channel', sqlType: 'text', nullable: false },
      { name: 'ref', sqlType: 'bigint', nullable: false },
    ],
    primaryKey: null,
  },
];

/** The column each table's batches are found by (unique per inserted row). */
export const PROBE_COLUMN: Readonly<Record<string, string>> = { orders: 'order_id', clicks: 'ref' };

export const CRASH_VIEWS: readonly (readonly [string, string])[] = [
  [
    'seller_totals',
    'SELECT seller_id, COUNT(*) AS orders, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi, COUNT(DISTINCT amount) AS amounts FROM orders GROUP BY seller_id',
  ],
  [
    'total_histogram',
    'SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers, SUM(orders) AS orders, MIN(lo) AS lo, MAX(hi) AS hi FROM seller_totals GROUP BY FLOOR(total / 100)',
  ],
  [
    'channel_stats',
    'SELECT channel, COUNT(*) AS clicks, COUNT(DISTINCT seller_id) AS sellers, MIN(seller_id) AS lo, MAX(seller_id) AS hi FROM clicks GROUP BY channel',
  ],
  ['hot_clicks', 'SELECT seller_id, channel FROM clicks WHERE seller_id < 40'],
  ['click_pairs', 'SELECT DISTINCT channel, seller_id FROM clicks WHERE seller_id < 100'],
  // A left join of two views.
  [
    'seller_channels',
    'SELECT s.seller_id, s.total, p.channel FROM seller_totals s LEFT JOIN click_pairs p ON s.seller_id = p.seller_id',
  ],
];

export const CRASH_DDL: readonly string[] = [
  'CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INT NOT NULL, amount INT NOT NULL, PRIMARY KEY (order_id))',
  'CREATE TABLE clicks (seller_id INT NOT NULL, channel TEXT NOT NULL, ref BIGINT NOT NULL)',
  ...CRASH_VIEWS.map(([name, select]) => `CREATE MATERIALIZED VIEW ${name} AS ${select}`),
];

export interface WorkloadShape {
  /** Sellers orders and clicks are spread over (few per group keeps MIN/MAX multisets busy). */
  readonly sellers: number;
  /** Live orders one client keeps at most (above it, it deletes more than it inserts). */
  readonly orderCap: number;
  /** Live clicks one client keeps at most. */
  readonly clickCap: number;
}

export interface CrashBatch {
  readonly table: 'orders' | 'clicks';
  readonly insert: Row[];
  readonly delete: Row[];
  /** Value of the table's probe column in the first inserted row: present iff the batch applied. */
  readonly probe: number;
  /** The whole rows the deletes remove (an orders delete names only the key). */
  readonly removed: readonly Row[];
}

/**
 * Whether the batch changes the number of rows of some `column` group (inserted minus removed):
 * then a view grouping the table by `column` with a COUNT(*) must change in the batch's epoch. (A
 * batch that inserts and removes as many rows of each group may change nothing at all.)
 */
export function changesGroupCount(batch: CrashBatch, column: string): boolean {
  const net = new Map<unknown, number>();
  for (const r of batch.insert) net.set(r[column], (net.get(r[column]) ?? 0) + 1);
  for (const r of batch.removed) net.set(r[column], (net.get(r[column]) ?? 0) - 1);
  for (const n of net.values()) if (n !== 0) return true;
  return false;
}

const CHANNELS = ['app', 'web', 'mini', 'tv', 'ads'];
/** Each client's keys are client·KEY_SPACE + n: disjoint, and exact as JSON numbers. */
const KEY_SPACE = 1_000_000_000;

/** Rows kept for O(1) random picks and removal by key. */
class LiveRows {
  private readonly keys: number[] = [];
  private readonly rows: Row[] = [];
  private readonly index = new Map<number, number>();

  get size(): number {
    return this.keys.length;
  }

  add(key: number, row: Row): void {
    this.index.set(key, this.keys.length);
    this.keys.push(key);
    this.rows.push(row);
  }

  remove(key: number): void {
    const i = this.index.get(key);
    if (i === undefined) throw new Error(`crash workload: row ${key} is not live`);
    const last = this.keys.length - 1;
    this.keys[i] = this.keys[last] as number;
    this.rows[i] = this.rows[last] as Row;
    this.index.set(this.keys[i] as number, i);
    this.keys.pop();
    this.rows.pop();
    this.index.delete(key);
  }

  /** `n` distinct random live rows (fewer when fewer are live). */
  sample(n: number, rnd: () => number): Row[] {
    const picked = new Set<number>();
    const out: Row[] = [];
    for (let tries = 0; out.length < n && tries < 4 * n && picked.size < this.keys.length; tries++) {
      const i = Math.floor(rnd() * this.keys.length);
      if (picked.has(i)) continue;
      picked.add(i);
      out.push(this.rows[i] as Row);
    }
    return out;
  }
}

/**
 * One client: batches of 1–200 orders (1–50 clicks) plus up to 20 (10) deletes of its own
 * acknowledged rows. At most one batch is in flight; a client whose batch's answer was lost sends
 * nothing more until the batch is resolved (`acknowledge` or `lose`).
 */
export class CrashClient {
  private readonly rnd: () => number;
  private readonly orders = new LiveRows();
  private readonly clicks = new LiveRows();
  private nextKey: number;
  inFlight: CrashBatch | null = null;

  constructor(
    readonly id: number,
    seed: number,
    private readonly shape: WorkloadShape,
  ) {
    this.rnd = mulberry32((seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0);
    this.nextKey = (id + 1) * KEY_SPACE + 1;
  }

  private int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  next(): CrashBatch {
    if (this.inFlight !== null) throw new Error(`client ${this.id}: a batch is still in flight`);
    const batch = this.rnd() < 0.2 ? this.clickBatch() : this.orderBatch();
    this.inFlight = batch;
    return batch;
  }

  private orderBatch(): CrashBatch {
    const over = this.orders.size >= this.shape.orderCap;
    const inserts = over ? 1 + this.int(20) : 1 + this.int(200);
    const deletes = over ? 10 + this.int(11) : this.int(21);
    const insert: Row[] = [];
    for (let i = 0; i < inserts; i++) {
      insert.push({
        order_id: this.nextKey++,
        seller_id: this.int(this.shape.sellers),
        // Few distinct amounts per seller: later epochs change the counts of values already held.
        amount: 5 * (1 + this.int(20)),
      });
    }
    const removed = this.orders.sample(deletes, this.rnd);
    const del = removed.map((r): Row => ({ order_id: r.order_id as number }));
    return { table: 'orders', insert, delete: del, probe: insert[0]?.order_id as number, removed };
  }

  private clickBatch(): CrashBatch {
    const over = this.clicks.size >= this.shape.clickCap;
    const inserts = over ? 1 + this.int(5) : 1 + this.int(50);
    const deletes = over ? 5 + this.int(6) : this.int(11);
    const insert: Row[] = [];
    for (let i = 0; i < inserts; i++) {
      insert.push({
        seller_id: this.int(this.shape.sellers),
        channel: CHANNELS[this.int(CHANNELS.length)] as string,
        ref: this.nextKey++,
      });
    }
    const removed = this.clicks.sample(deletes, this.rnd);
    const del = removed.map((r) => ({ ...r }));
    return { table: 'clicks', insert, delete: del, probe: insert[0]?.ref as number, removed };
  }

  /** The in-flight batch was applied (answered, or found applied after a restart). */
  acknowledge(): CrashBatch {
    const b = this.inFlight;
    if (b === null) throw new Error(`client ${this.id}: nothing in flight`);
    const live = b.table === 'orders' ? this.orders : this.clicks;
    const key = PROBE_COLUMN[b.table] as string;
    for (const r of b.delete) live.remove(r[key] as number);
    for (const r of b.insert) live.add(r[key] as number, r);
    this.inFlight = null;
    return b;
  }

  /** The in-flight batch was not applied (lost in a crash before its commit). */
  lose(): CrashBatch {
    const b = this.inFlight;
    if (b === null) throw new Error(`client ${this.id}: nothing in flight`);
    this.inFlight = null;
    return b;
  }
}

/** Every row of a view over REST, page by page, all at one epoch. */
export async function readViewRows(
  base: string,
  view: string,
  pageSize = 5000,
): Promise<{ epoch: number; columns: ColumnInfo[]; rows: Row[] }> {
  const rows: Row[] = [];
  let epoch = -1;
  let columns: ColumnInfo[] = [];
  for (;;) {
    const r = await request(base, 'GET', `/v1/views/${view}/rows?limit=${pageSize}&offset=${rows.length}`);
    if (r.status !== 200) throw new Error(`rows of view ${view}: ${r.status} ${r.text}`);
    const page = r.body.rows as Row[];
    if (epoch >= 0 && r.body.epoch !== epoch)
      throw new Error(`view ${view}: pages read at epochs ${epoch} and ${String(r.body.epoch)}`);
    epoch = r.body.epoch as number;
    columns = r.body.columns as ColumnInfo[];
    rows.push(...page);
    if (page.length < pageSize || rows.length >= (r.body.total as number)) return { epoch, columns, rows };
  }
}

/** Every row of a table via `POST /v1/sql` SELECT, paged by an ascending unique column. */
export async function readTableRows(
  base: string,
  table: string,
  columns: readonly string[],
  by: string,
  pageSize = 50_000,
): Promise<{ epoch: number; rows: Row[] }> {
  const rows: Row[] = [];
  let epoch = -1;
  let after = -1;
  for (;;) {
    const r = await request(base, 'POST', '/v1/sql', {
      sql: `SELECT ${columns.join(', ')} FROM ${table} WHERE ${by} > ${after} ORDER BY ${by} LIMIT ${pageSize}`,
    });
    if (r.status !== 200) throw new Error(`rows of table ${table}: ${r.status} ${r.text}`);
    const result = (r.body.results as { rows: Row[]; epoch: number }[])[0];
    if (result === undefined) throw new Error(`rows of table ${table}: no result in ${r.text}`);
    if (epoch >= 0 && result.epoch !== epoch)
      throw new Error(`table ${table}: pages read at epochs ${epoch} and ${result.epoch}`);
    epoch = result.epoch;
    rows.push(...result.rows);
    if (result.rows.length < pageSize) return { epoch, rows };
    after = result.rows[result.rows.length - 1]?.[by] as number;
  }
}

/** Whether a batch whose answer was lost was applied: its first inserted row is in the table. */
export async function batchApplied(base: string, batch: CrashBatch): Promise<boolean> {
  const column = PROBE_COLUMN[batch.table] as string;
  const r = await request(base, 'POST', '/v1/sql', {
    sql: `SELECT ${column} FROM ${batch.table} WHERE ${column} = ${batch.probe}`,
  });
  if (r.status !== 200) throw new Error(`resolving a batch of ${batch.table}: ${r.status} ${r.text}`);
  const rows = (r.body.results as { rows: Row[] }[])[0]?.rows ?? [];
  if (rows.length > 1)
    throw new Error(`${batch.table}.${column} = ${batch.probe} is held ${rows.length} times`);
  return rows.length === 1;
}
