// A seeded workload for checkpoint round trips, shared by the engine's checkpoint test and the
// SQLite checkpoint store's: three tables (keyed, keyless, 64-bit sums beyond 2^53) and views that
// hold every kind of state (Reduce groups with multisets, Distinct counts, arrangements, row errors).
import type { ViewChangeSet } from '../../src/exec/api.ts';
import { Engine } from '../../src/exec/engine.ts';
import type { Row } from '../../src/common/types.ts';

export const DDL = [
  'CREATE TABLE orders (id BIGINT PRIMARY KEY, seller_id INT NOT NULL, amount INT NOT NULL, tag TEXT)',
  // keyless
  'CREATE TABLE events (kind TEXT, v DOUBLE PRECISION)',
  'CREATE TABLE ledger (acct INT NOT NULL, amt BIGINT NOT NULL)',
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total, MIN(amount) AS lo, MAX(tag) AS hi, COUNT(DISTINCT tag) AS tags FROM orders GROUP BY seller_id',
  'CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)',
  'CREATE MATERIALIZED VIEW kinds AS SELECT DISTINCT kind FROM events',
  'CREATE MATERIALIZED VIEW big_events AS SELECT kind, v FROM events WHERE v > 0.5',
  'CREATE MATERIALIZED VIEW event_range AS SELECT kind, MIN(v) AS lo, MAX(v) AS hi, COUNT(*) AS n FROM events GROUP BY kind',
  'CREATE MATERIALIZED VIEW everything AS SELECT COUNT(*) AS n, SUM(v) AS s, SUM(DISTINCT v) AS ds, AVG(DISTINCT v) AS da FROM events',
  // a row error whenever amount = 50
  'CREATE MATERIALIZED VIEW ratios AS SELECT id, 100 / (amount - 50) AS r FROM orders',
  // 64-bit sums beyond 2^53
  'CREATE MATERIALIZED VIEW balances AS SELECT acct, SUM(amt) AS total, MAX(amt) AS top, COUNT(DISTINCT amt) AS kinds, SUM(DISTINCT amt) AS kind_total FROM ledger GROUP BY acct',
  // joins: both arrangements, and per-row match counts (an outer join with a residual condition)
  'CREATE MATERIALIZED VIEW order_events AS SELECT o.id, o.seller_id, e.kind, e.v FROM orders o LEFT JOIN events e ON substring(o.tag, 2) = substring(e.kind, 2) AND e.v > 0.3',
  'CREATE MATERIALIZED VIEW seller_ledger AS SELECT s.seller_id, s.total, COUNT(l.amt) AS n, MAX(l.amt) AS top FROM seller_totals s FULL JOIN ledger l ON s.seller_id = l.acct GROUP BY s.seller_id, s.total',
];

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Step = { table: string; insert: Row[]; delete: Row[] };

/** Inserts, updates (re-insert of a live key) and deletes over three tables, seeded. */
export function workload(seed: number, epochs: number): Step[] {
  const rnd = mulberry32(seed);
  const live = new Map<number, Row>();
  const events: Row[] = [];
  const ledger: Row[] = [];
  let nextId = 1;
  const steps: Step[] = [];
  for (let e = 0; e < epochs; e++) {
    const r = rnd();
    if (r < 0.5) {
      const insert: Row[] = [];
      const del: Row[] = [];
      const n = 1 + Math.floor(rnd() * 20);
      for (let i = 0; i < n; i++) {
        const ids = [...live.keys()];
        if (ids.length > 0 && rnd() < 0.3) {
          const id = ids[Math.floor(rnd() * ids.length)] as number;
          if (del.some((x) => x.id === id) || insert.some((x) => x.id === id)) continue;
          del.push({ id });
          live.delete(id);
        } else {
          const id = rnd() < 0.2 && ids.length > 0 ? (ids[0] as number) : nextId++;
          if (del.some((x) => x.id === id) || insert.some((x) => x.id === id)) continue;
          const row = {
            id,
            seller_id: Math.floor(rnd() * 8),
            amount: Math.floor(rnd() * 100),
            tag: rnd() < 0.2 ? null : `t${Math.floor(rnd() * 5)}`,
          };
          insert.push(row);
          live.set(id, row);
        }
      }
      steps.push({ table: 'orders', insert, delete: del });
    } else if (r < 0.8) {
      const insert: Row[] = [];
      const del: Row[] = [];
      const n = 1 + Math.floor(rnd() * 10);
      for (let i = 0; i < n; i++) {
        if (events.length > 0 && rnd() < 0.35)
          del.push(events.splice(Math.floor(rnd() * events.length), 1)[0] as Row);
        else {
          const x = rnd();
          const v = x < 0.05 ? -0 : x < 0.1 ? null : Math.floor(rnd() * 8) / 8 - 0.25;
          insert.push({ kind: rnd() < 0.1 ? null : `k${Math.floor(rnd() * 4)}`, v });
        }
      }
      events.push(...insert);
      steps.push({ table: 'events', insert, delete: del });
    } else {
      const insert: Row[] = [];
      const del: Row[] = [];
      const n = 1 + Math.floor(rnd() * 6);
      for (let i = 0; i < n; i++) {
        if (ledger.length > 0 && rnd() < 0.3)
          del.push(ledger.splice(Math.floor(rnd() * ledger.length), 1)[0] as Row);
        else
          insert.push({
            acct: Math.floor(rnd() * 3),
            amt: (1n << 60n) + BigInt(Math.floor(rnd() * 1000)) * 1_000_003n,
          });
      }
      ledger.push(...insert);
      steps.push({ table: 'ledger', insert, delete: del });
    }
  }
  return steps;
}

export function big(_k: string, x: unknown): unknown {
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'number' && (Object.is(x, -0) || !Number.isFinite(x)))
    return `num:${Object.is(x, -0) ? '-0' : x}`;
  return x;
}

export function snapshotAll(engine: Engine): string {
  return engine
    .catalog()
    .views.map((v) => {
      try {
        const rows = engine
          .viewSnapshot(v.name)
          .rows.map((r) => JSON.stringify(r, big))
          .sort();
        return `${v.name}: ${JSON.stringify(rows)}`;
      } catch (e) {
        return `${v.name}: error ${(e as Error).message} ${JSON.stringify(engine.viewErrors(v.name), big)}`;
      }
    })
    .join('\n');
}

export function tableState(engine: Engine): string {
  return engine
    .catalog()
    .tables.map(
      (t) =>
        `${t.name}: ${JSON.stringify(
          engine
            .tableRows(t.name)
            .map((r) => JSON.stringify(r, big))
            .sort(),
        )}`,
    )
    .join('\n');
}

export function record(e: Engine): ViewChangeSet[] {
  const out: ViewChangeSet[] = [];
  for (const v of e.catalog().views) e.subscribe(v.name, (c) => out.push(c));
  return out;
}

export function apply(e: Engine, s: Step): void {
  e.applyChanges(s.table, { insert: s.insert, delete: s.delete });
}

export function freshEngine(): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute(DDL.join(';'));
  return e;
}
