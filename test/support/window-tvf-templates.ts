// View templates over the window table functions TUMBLE and HOP for the SQLite differential
// (test/window-tvf-differential.test.ts): each is Sluice's SELECT and the same query as SQLite
// computes it with integer arithmetic on strftime('%s', ts) — its own, independent date code — and
// datetime(…, 'unixepoch') back to text: window_start = e − ((e − offset) mod size, floored), HOP's
// windows by a join with the numbers 0…k−1. Whole seconds, so SQLite's seconds are exact.
import type { Row } from '../../src/common/types.ts';
import { formatEpochMicros } from '../../src/common/time/time-window.ts';
import type { Rng } from './random-workload.ts';
import type { TableSpec } from './sqlite-oracle.ts';

export const WINDOW_TABLES: readonly TableSpec[] = [
  {
    name: 'bid',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'auction', sqlType: 'integer', nullable: false },
      { name: 'price', sqlType: 'integer', nullable: false },
      { name: 'ts', sqlType: 'timestamp', nullable: true },
      { name: 'day', sqlType: 'date', nullable: true },
    ],
    primaryKey: ['id'],
  },
  {
    name: 'ask',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'auction', sqlType: 'integer', nullable: false },
      { name: 'price', sqlType: 'integer', nullable: false },
      { name: 'ts', sqlType: 'timestamp', nullable: false },
    ],
    primaryKey: ['id'],
  },
  {
    // Keyless: equal rows are counted (a HOP of two equal rows yields each window twice).
    name: 'click',
    columns: [
      { name: 'auction', sqlType: 'integer', nullable: false },
      { name: 'ts', sqlType: 'timestamp', nullable: false },
    ],
    primaryKey: null,
  },
];

export interface WindowView {
  readonly name: string;
  readonly sql: string;
  readonly sqlite: string;
  readonly template: string;
  /** A view this one reads, created first. */
  readonly base?: { readonly name: string; readonly sql: string; readonly sqlite: string };
  /**
   * HOP's shared panes (src/ivm/lower-hop-panes.ts): the same query in a form lowered the old way
   * (one row per window, then GROUP BY), whose rows must be this view's exactly, value texts and all.
   */
  readonly unshared?: string;
}

export const WINDOW_TEMPLATES = [
  'tumble_agg',
  'tumble_rows',
  'hop_agg',
  'hop_keyless',
  'window_join',
  'topn_per_window',
  'tumble_date',
  'view_over_hop',
  'tumble_over_view',
  'flink_hop',
  'tumble_subquery',
  'session_agg',
  'session_rows',
  'hop_shared',
  'hop_shared_exact',
  'hop_shared_end',
] as const;

/** Templates whose views run over shared panes (their `unshared` twin is the old plan). */
export const PANE_TEMPLATES: readonly string[] = [
  'hop_agg',
  'flink_hop',
  'hop_shared',
  'hop_shared_exact',
  'hop_shared_end',
];

/**
 * `sql` (a GROUP BY over one HOP, with or without WHERE) in the form lowered one row per window: a
 * WHERE reading window_end (never NULL) keeps the HOP's rows apart from the GROUP BY.
 */
function unsharedForm(sql: string): string {
  return sql.includes(' WHERE ')
    ? sql.replace(' WHERE ', ' WHERE window_end IS NOT NULL AND ')
    : sql.replace(' GROUP BY ', ' WHERE window_end IS NOT NULL GROUP BY ');
}

/** SQLite: seconds since the epoch of a timestamp or date column. */
function epoch(col: string): string {
  return `CAST(strftime('%s', ${col}) AS INTEGER)`;
}

/** SQLite: the start (seconds) of the window of `size` seconds offset by `offset` holding `col`. */
function startSecs(col: string, size: number, offset: number): string {
  const e = epoch(col);
  return `(${e} - (((${e} - (${offset})) % ${size}) + ${size}) % ${size})`;
}

function asTs(secs: string): string {
  return `datetime(${secs}, 'unixepoch')`;
}

/** Sluice's interval argument for a number of seconds. */
function iv(secs: number): string {
  return secs < 0 ? `- INTERVAL '${-secs}' SECOND` : `INTERVAL '${secs}' SECOND`;
}

/**
 * SQLite: SESSION's windows with window functions over epoch seconds: a row starts a session when
 * it follows the previous one (per partition, in time order) by more than the gap; window_start is
 * the latest start so far (peers share), window_end the session's last time plus the gap.
 */
function sqliteSession(table: string, cols: string, partition: string | null, gap: number): string {
  const by = partition === null ? '' : `PARTITION BY ${partition} `;
  const bySession = partition === null ? 'PARTITION BY s' : `PARTITION BY ${partition}, s`;
  const e = `(SELECT *, ${epoch('ts')} AS e FROM ${table} WHERE ts IS NOT NULL)`;
  const marked = `(SELECT *, CASE WHEN LAG(e) OVER (${by}ORDER BY e) IS NULL OR e - LAG(e) OVER (${by}ORDER BY e) > ${gap} THEN e END AS m FROM ${e})`;
  const started = `(SELECT *, MAX(m) OVER (${by}ORDER BY e) AS s FROM ${marked})`;
  const ended = `(SELECT *, MAX(e) OVER (${bySession}) AS l FROM ${started})`;
  return `SELECT ${cols}, ${asTs('s')} AS window_start, ${asTs(`l + ${gap}`)} AS window_end FROM ${ended}`;
}

/** The numbers 0…k−1 as a SQLite relation `n(i)`. */
function numbers(k: number): string {
  return `(${Array.from({ length: k }, (_, i) => `SELECT ${i} AS i`).join(' UNION ALL ')}) AS n`;
}

/** SQLite: `table` with its columns and HOP's window_start / window_end, one row per window. */
function sqliteHop(table: string, cols: string, slide: number, size: number, offset: number): string {
  const k = size / slide;
  return (
    `SELECT ${cols}, ${asTs(`b.l - n.i * ${slide}`)} AS window_start, ${asTs(`b.l - n.i * ${slide} + ${size}`)} AS window_end ` +
    `FROM (SELECT *, ${startSecs('ts', slide, offset)} AS l FROM ${table} WHERE ts IS NOT NULL) AS b CROSS JOIN ${numbers(k)}`
  );
}

/** SQLite: `table` with TUMBLE's window_start / window_end. */
function sqliteTumble(table: string, cols: string, col: string, size: number, offset: number): string {
  const s = startSecs(col, size, offset);
  return `SELECT ${cols}, ${asTs(s)} AS window_start, ${asTs(`${s} + ${size}`)} AS window_end FROM ${table}`;
}

function pickSize(rng: Rng): number {
  return rng.pick([1, 5, 10, 30, 60, 3600]);
}

function pickOffset(rng: Rng, size: number): number {
  return rng.chance(0.5) ? 0 : rng.int(-size * 2, size * 2);
}

/** A hop: slide, a size k·slide (fewest ≤ k ≤ 4), an offset. */
function pickHop(rng: Rng, fewest = 1): [number, number, number] {
  const slide = rng.pick([1, 5, 10, 30]);
  const size = slide * rng.int(fewest, 4);
  return [slide, size, pickOffset(rng, slide)];
}

export function windowView(rng: Rng, template: (typeof WINDOW_TEMPLATES)[number], name: string): WindowView {
  switch (template) {
    case 'tumble_agg': {
      const size = pickSize(rng);
      const offset = pickOffset(rng, size);
      const sql = `SELECT window_start, window_end, auction, COUNT(*) AS n, SUM(price) AS total FROM TUMBLE(bid, ts, ${iv(size)}, ${iv(offset)}) GROUP BY window_start, window_end, auction`;
      const sqlite = `SELECT window_start, window_end, auction, COUNT(*) AS n, SUM(price) AS total FROM (${sqliteTumble('bid', 'auction, price', 'ts', size, offset)}) GROUP BY window_start, window_end, auction`;
      return { name, sql, sqlite, template };
    }
    case 'tumble_rows': {
      const size = pickSize(rng);
      const sql = `SELECT id, price, window_start, window_end FROM TUMBLE(bid, ts, ${iv(size)}) AS w WHERE w.price > 20`;
      const sqlite = `SELECT id, price, window_start, window_end FROM (${sqliteTumble('bid', 'id, price', 'ts', size, 0)}) WHERE price > 20`;
      return { name, sql, sqlite, template };
    }
    case 'hop_agg': {
      const [slide, size, offset] = pickHop(rng);
      const sql = `SELECT window_start, window_end, auction, COUNT(*) AS n, MAX(price) AS top FROM HOP(bid, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)}) GROUP BY window_start, window_end, auction`;
      const sqlite = `SELECT window_start, window_end, auction, COUNT(*) AS n, MAX(price) AS top FROM (${sqliteHop('bid', 'b.auction, b.price', slide, size, offset)}) GROUP BY window_start, window_end, auction`;
      return { name, sql, sqlite, template, ...(size > slide ? { unshared: unsharedForm(sql) } : {}) };
    }
    case 'hop_keyless': {
      const [slide, size, offset] = pickHop(rng);
      const sql = `SELECT auction, window_start, window_end FROM HOP(click, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)})`;
      const sqlite = `SELECT auction, window_start, window_end FROM (${sqliteHop('click', 'b.auction', slide, size, offset)})`;
      return { name, sql, sqlite, template };
    }
    case 'window_join': {
      const size = pickSize(rng);
      const sql =
        `SELECT b.window_start, b.auction, COUNT(*) AS pairs, MAX(b.price) AS hi_bid, MIN(a.price) AS lo_ask ` +
        `FROM TUMBLE(bid, ts, ${iv(size)}) AS b JOIN TUMBLE(ask, ts, ${iv(size)}) AS a ` +
        `ON a.window_start = b.window_start AND a.auction = b.auction GROUP BY b.window_start, b.auction`;
      const sqlite =
        `SELECT b.window_start, b.auction, COUNT(*) AS pairs, MAX(b.price) AS hi_bid, MIN(a.price) AS lo_ask ` +
        `FROM (${sqliteTumble('bid', 'auction, price', 'ts', size, 0)}) AS b JOIN (${sqliteTumble('ask', 'auction, price', 'ts', size, 0)}) AS a ` +
        `ON a.window_start = b.window_start AND a.auction = b.auction GROUP BY b.window_start, b.auction`;
      return { name, sql, sqlite, template };
    }
    case 'topn_per_window': {
      const size = pickSize(rng);
      const n = rng.int(1, 3);
      const sql = `SELECT window_start, id, price, rn FROM (SELECT window_start, id, price, ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY price DESC, id) AS rn FROM TUMBLE(bid, ts, ${iv(size)})) AS r WHERE rn <= ${n}`;
      const sqlite = `SELECT window_start, id, price, rn FROM (SELECT window_start, id, price, ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY price DESC, id) AS rn FROM (${sqliteTumble('bid', 'id, price', 'ts', size, 0)})) AS r WHERE rn <= ${n}`;
      return { name, sql, sqlite, template };
    }
    case 'tumble_date': {
      const days = rng.pick([1, 2, 7]);
      const sql = `SELECT window_start, window_end, COUNT(*) AS n FROM TUMBLE(bid, day, INTERVAL '${days}' DAY) GROUP BY window_start, window_end`;
      const sqlite = `SELECT window_start, window_end, COUNT(*) AS n FROM (${sqliteTumble('bid', 'id', 'day', days * 86400, 0)}) GROUP BY window_start, window_end`;
      return { name, sql, sqlite, template };
    }
    case 'view_over_hop': {
      const [slide, size, offset] = pickHop(rng);
      const baseName = `${name}_base`;
      const baseSql = `SELECT * FROM HOP(bid, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)})`;
      const baseSqlite = sqliteHop('bid', 'b.id, b.auction, b.price, b.ts, b.day', slide, size, offset);
      const sql = `SELECT window_start, SUM(price) AS total, COUNT(*) AS n FROM ${baseName} GROUP BY window_start`;
      return { name, sql, sqlite: sql, template, base: { name: baseName, sql: baseSql, sqlite: baseSqlite } };
    }
    case 'tumble_over_view': {
      const size = pickSize(rng);
      const baseName = `${name}_base`;
      const baseSql = `SELECT id, auction, price, ts FROM bid WHERE auction < 3`;
      const sql = `SELECT window_end, COUNT(*) AS n FROM TUMBLE(${baseName}, ts, ${iv(size)}) GROUP BY window_end`;
      const sqlite = `SELECT window_end, COUNT(*) AS n FROM (${sqliteTumble(baseName, 'id', 'ts', size, 0)}) GROUP BY window_end`;
      return { name, sql, sqlite, template, base: { name: baseName, sql: baseSql, sqlite: baseSql } };
    }
    case 'flink_hop': {
      const [slide, size] = pickHop(rng);
      const sql = `SELECT window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE ask, DESCRIPTOR(ts), ${iv(slide)}, ${iv(size)})) GROUP BY window_start`;
      const sqlite = `SELECT window_start, COUNT(*) AS n FROM (${sqliteHop('ask', 'b.id', slide, size, 0)}) GROUP BY window_start`;
      return { name, sql, sqlite, template, ...(size > slide ? { unshared: unsharedForm(sql) } : {}) };
    }
    case 'hop_shared': {
      // Every shareable aggregate: COUNT(*), COUNT(v), SUM, AVG of an int with NULLs (v), MIN/MAX
      // (retracted as rows move and leave), FILTER on COUNT(*) and MAX.
      const [slide, size, offset] = pickHop(rng, 2);
      const v = 'CASE WHEN price % 4 = 0 THEN NULL ELSE price END';
      const aggs =
        `COUNT(*) AS n, COUNT(${v}) AS nv, SUM(${v}) AS s, AVG(${v}) AS a, MIN(${v}) AS lo, ` +
        `MAX(price) FILTER (WHERE price < 40) AS hi, COUNT(*) FILTER (WHERE price > 30) AS nf`;
      const sql = `SELECT window_start, window_end, auction, ${aggs} FROM HOP(bid, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)}) GROUP BY window_start, window_end, auction`;
      const sqlite = `SELECT window_start, window_end, auction, ${aggs} FROM (${sqliteHop('bid', 'b.auction, b.price', slide, size, offset)}) GROUP BY window_start, window_end, auction`;
      return { name, sql, sqlite, template, unshared: unsharedForm(sql) };
    }
    case 'hop_shared_exact': {
      // Numeric and bigint sums and averages (exact decimals, their scales), grouped by window_start
      // alone; SUM of no non-NULL value is NULL (FILTER).
      const [slide, size, offset] = pickHop(rng, 2);
      const sql =
        `SELECT window_start, SUM(price * 0.25) AS q, AVG(price * 0.25) AS aq, SUM(CAST(price AS bigint)) AS sb, ` +
        `AVG(CAST(price AS bigint)) AS ab, SUM(price) FILTER (WHERE price > 55) AS top, AVG(price) FILTER (WHERE price > 55) AS atop ` +
        `FROM HOP(bid, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)}) GROUP BY window_start`;
      const sqlite =
        `SELECT window_start, SUM(price * 0.25) AS q, AVG(price * 0.25) AS aq, SUM(price) AS sb, AVG(price) AS ab, ` +
        `SUM(price) FILTER (WHERE price > 55) AS top, AVG(price) FILTER (WHERE price > 55) AS atop ` +
        `FROM (${sqliteHop('bid', 'b.price', slide, size, offset)}) GROUP BY window_start`;
      return { name, sql, sqlite, template, unshared: unsharedForm(sql) };
    }
    case 'hop_shared_end': {
      // window_end alone, a WHERE on the row under the panes, a keyless table (duplicates counted).
      const [slide, size, offset] = pickHop(rng, 2);
      const sql = `SELECT window_end, COUNT(*) AS n, MIN(auction) AS lo, MAX(auction) AS hi, SUM(auction) AS s FROM HOP(click, ts, ${iv(slide)}, ${iv(size)}, ${iv(offset)}) WHERE auction <> 2 GROUP BY window_end`;
      const sqlite = `SELECT window_end, COUNT(*) AS n, MIN(auction) AS lo, MAX(auction) AS hi, SUM(auction) AS s FROM (${sqliteHop('click', 'b.auction', slide, size, offset)}) WHERE auction <> 2 GROUP BY window_end`;
      return { name, sql, sqlite, template, unshared: unsharedForm(sql) };
    }
    case 'session_agg': {
      const gap = rng.pick([1, 5, 10, 30]);
      const sql = `SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total FROM SESSION(bid PARTITION BY auction, ts, ${iv(gap)}) GROUP BY auction, window_start, window_end`;
      const sqlite = `SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total FROM (${sqliteSession('bid', 'auction, price', 'auction', gap)}) GROUP BY auction, window_start, window_end`;
      return { name, sql, sqlite, template };
    }
    case 'session_rows': {
      const gap = rng.pick([1, 3, 8]);
      const sql = `SELECT id, window_start, window_end FROM TABLE(SESSION(TABLE ask, DESCRIPTOR(ts), ${iv(gap)}))`;
      const sqlite = `SELECT id, window_start, window_end FROM (${sqliteSession('ask', 'id', null, gap)})`;
      return { name, sql, sqlite, template };
    }
    case 'tumble_subquery': {
      const size = pickSize(rng);
      const sql = `SELECT s.id, s.window_start FROM TUMBLE((SELECT id, ts FROM bid WHERE price % 2 = 0), ts, ${iv(size)}) AS s`;
      const sqlite = `SELECT id, window_start FROM (${sqliteTumble('(SELECT id, ts FROM bid WHERE price % 2 = 0)', 'id', 'ts', size, 0)})`;
      return { name, sql, sqlite, template };
    }
  }
}

/** Epoch seconds the timestamps of one seed start from: around 1970, in 2024, at a leap day. */
const BASES = [-90, 1_704_067_170, 951_782_300];

/**
 * Random batches over WINDOW_TABLES, each valid for the rows so far: inserts, moves (a keyed row's
 * time, price or auction replaced in the same batch, so it changes windows) and deletes; the keyless
 * table gets exact duplicates. Times are whole seconds, a share of them straddling 1970.
 */
export class WindowWorkload {
  private readonly rows = new Map<string, Map<string, Row>>(WINDOW_TABLES.map((t) => [t.name, new Map()]));
  private nextId = 1;
  private readonly base: number;

  constructor(private readonly rng: Rng) {
    this.base = rng.pick(BASES);
  }

  private ts(): string {
    const from = this.rng.chance(0.3) ? -120 : this.base;
    return formatEpochMicros((from + this.rng.int(0, 240)) * 1_000_000, false);
  }

  private day(): string | null {
    if (this.rng.chance(0.1)) return null;
    return formatEpochMicros((this.base + this.rng.int(-5, 20) * 86_400) * 1_000_000, false).slice(0, 10);
  }

  private fresh(table: string, id: number): Row {
    const auction = this.rng.int(1, 4);
    if (table === 'click') return { auction, ts: this.ts() };
    const ts = table === 'bid' && this.rng.chance(0.1) ? null : this.ts();
    const row: Row = { id, auction, price: this.rng.int(1, 60), ts };
    return table === 'bid' ? { ...row, day: this.day() } : row;
  }

  batch(): { table: string; insert: Row[]; delete: Row[] } {
    const rng = this.rng;
    const table = rng.pick(['bid', 'bid', 'ask', 'click']);
    const model = this.rows.get(table)!;
    const insert: Row[] = [];
    const del: Row[] = [];
    const keys = [...model.keys()];
    const touched = new Set<string>();
    for (let i = rng.int(1, 12); i > 0; i--) {
      const r = rng.next();
      const key = keys.length > 0 ? rng.pick(keys) : undefined;
      if (key !== undefined && !touched.has(key) && r < 0.25) {
        touched.add(key);
        del.push(model.get(key)!);
        model.delete(key);
      } else if (key !== undefined && !touched.has(key) && r < 0.5 && table !== 'click') {
        touched.add(key);
        const old = model.get(key)!;
        const moved = this.fresh(table, old['id'] as number);
        del.push(old);
        insert.push(moved);
        model.set(key, moved);
      } else {
        const id = this.nextId++;
        const present = [...model.values()];
        const row =
          table === 'click' && present.length > 0 && rng.chance(0.2)
            ? rng.pick(present)
            : this.fresh(table, id);
        insert.push(row);
        model.set(String(id), row);
        touched.add(String(id));
      }
    }
    return { table, insert, delete: del };
  }

  /** Every table's current rows. */
  everything(): [string, Row[]][] {
    return [...this.rows].map(([table, rows]) => [table, [...rows.values()]]);
  }
}
