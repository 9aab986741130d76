// The seeded workload of the durability attack (durability-run.ts): the driver's model of what the
// server acknowledged (catalog and every table's rows), the view templates it creates and drops, and
// the steps it sends — each with the model as it is once the server applies the step.
import type { Row } from '../../src/common/types.ts';
import { MAX_EPOCH_JOIN_ROWS } from '../../src/exec/engine-epochs.ts';
import { request } from '../server/helpers.ts';

export interface TableModel {
  readonly name: string;
  readonly ddl: string;
  readonly columns: { name: string; sqlType: string; nullable: boolean }[];
  readonly key: string | null;
  /** Keyed: key → row; keyless: an entry per copy, keyed by an ever-growing copy id. */
  rows: Map<string, Row>;
}

export interface ViewTemplate {
  readonly name: string;
  readonly select: string;
  /** Tables and views it reads. */
  readonly deps: readonly string[];
  /** The SELECT SQLite runs instead, where the engine's text is not SQLite's (VALUES aliases, SQL functions inlined). */
  readonly oracle?: (model: Model) => string;
  /** Uses the SQL function `dbl` (dropped with it by DROP FUNCTION … CASCADE). */
  readonly usesFunction?: boolean;
}

const VALUES_ROWS = "VALUES (0, 'zero'), (1, 'one'), (3, 'three')";

// Two permanent views (never dropped; subscribers follow them), the rest come and go.
export const PERMANENT_VIEWS: readonly ViewTemplate[] = [
  { name: 'pv', select: 'SELECT g, COUNT(*) AS n, SUM(v) AS total FROM a GROUP BY g', deps: ['a'] },
  { name: 'pj', select: 'SELECT a.id, a.v, b.w FROM a JOIN b ON a.g = b.g', deps: ['a', 'b'] },
  // Over a table of tens of thousands of rows, so that a full checkpoint takes several slices.
  {
    name: 'bigv',
    select: 'SELECT g, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi FROM big GROUP BY g',
    deps: ['big'],
  },
];
const VIEW_POOL: readonly ViewTemplate[] = [
  {
    name: 'lj',
    select:
      'SELECT a.g, COUNT(b.w) AS nb, SUM(a.v) AS sv FROM a LEFT JOIN b ON a.g = b.g AND b.w > 2 GROUP BY a.g',
    deps: ['a', 'b'],
  },
  {
    name: 'topn',
    select:
      'SELECT g, id, v FROM (SELECT g, id, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, id) AS rn FROM a) AS r WHERE rn <= 2',
    deps: ['a'],
  },
  {
    name: 'win',
    select:
      'SELECT id, g, SUM(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2 FROM a',
    deps: ['a'],
  },
  { name: 'dist', select: 'SELECT DISTINCT g, w FROM b', deps: ['b'] },
  {
    name: 'hav',
    select: 'SELECT g, COUNT(*) AS n, SUM(w) AS sw FROM b GROUP BY g HAVING COUNT(*) > 2',
    deps: ['b'],
  },
  { name: 'vov', select: 'SELECT n, COUNT(*) AS groups FROM pv GROUP BY n', deps: ['pv'] },
  { name: 'vov2', select: 'SELECT sw, COUNT(*) AS k FROM hav GROUP BY sw', deps: ['hav'] },
  { name: 'topv', select: 'SELECT g, total FROM pv ORDER BY total DESC, g LIMIT 3', deps: ['pv'] },
  { name: 'tv', select: 'SELECT k, x FROM t WHERE x > 10', deps: ['t'] },
  { name: 'tj', select: 'SELECT t.k, t.x, a.v FROM t LEFT JOIN a ON t.k = a.id', deps: ['t', 'a'] },
  // VALUES in FROM: joined with a table, and alone (a view of no input at all).
  {
    name: 'vj',
    select: `SELECT v.k, v.label, COUNT(a.id) AS n FROM (${VALUES_ROWS}) AS v(k, label) LEFT JOIN a ON a.g = v.k GROUP BY v.k, v.label`,
    deps: ['a'],
    oracle: () =>
      `WITH v(k, label) AS (${VALUES_ROWS}) SELECT v.k, v.label, COUNT(a.id) AS n FROM v LEFT JOIN a ON a.g = v.k GROUP BY v.k, v.label`,
  },
  {
    name: 'vq',
    select: "SELECT * FROM (VALUES (1, 'x'), (2, NULL), (3, '')) AS q(n, s)",
    deps: [],
    oracle: () => "WITH q(n, s) AS (VALUES (1, 'x'), (2, NULL), (3, '')) SELECT * FROM q",
  },
  // A SQL function inlined into a view (the function can be replaced only while no view uses it).
  {
    name: 'fv',
    select: 'SELECT g, SUM(dbl(v)) AS s2 FROM a GROUP BY g',
    deps: ['a'],
    usesFunction: true,
    oracle: (m) => `SELECT g, SUM(v * ${m.functionFactor ?? 0}) AS s2 FROM a GROUP BY g`,
  },
  // A join without an equality: a write of tens of thousands of rows to b is EPOCH_TOO_LARGE.
  {
    name: 'xj',
    select: 'SELECT COUNT(*) AS n, SUM(big.v) AS s FROM b CROSS JOIN big WHERE big.g < 3',
    deps: ['b', 'big'],
  },
];
/** Refused at CREATE (VIEW_TOO_LARGE): its first build would pair every row of big with every other. */
const HUGE_VIEW =
  'CREATE MATERIALIZED VIEW huge AS SELECT x.id AS i, y.id AS j FROM big AS x CROSS JOIN big AS y';
/** The largest write to b that steps send to pass the epoch bound through xj (≈ 1.7 MB of JSON). */
const XJ_MOST_ROWS = 120_000;
/** Rows b may hold before a step stops adding to it (an EPOCH_TOO_LARGE write applies none). */
const SMALL_CAP = 120;
/** The server's `--max-result-rows` as the runs start it (its default): an ad-hoc result past it is refused. */
const SERVER_MAX_RESULT_ROWS = 10_000;
export const ALL_VIEWS = [...PERMANENT_VIEWS, ...VIEW_POOL];

export function tableA(): TableModel {
  return {
    name: 'a',
    ddl: 'CREATE TABLE a (id INTEGER NOT NULL, g INTEGER NOT NULL, v INTEGER NOT NULL, s TEXT, PRIMARY KEY (id))',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'g', sqlType: 'integer', nullable: false },
      { name: 'v', sqlType: 'integer', nullable: false },
      { name: 's', sqlType: 'text', nullable: true },
    ],
    key: 'id',
    rows: new Map(),
  };
}
/** The large table, loaded once at the start (ids from `BIG_FIRST_ID`). */
const BIG_FIRST_ID = 1_000_000;
const BIG_CAP = 30_000;

export function tableBig(): TableModel {
  return {
    name: 'big',
    ddl: 'CREATE TABLE big (id INTEGER NOT NULL, g INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id))',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'g', sqlType: 'integer', nullable: false },
      { name: 'v', sqlType: 'integer', nullable: false },
    ],
    key: 'id',
    rows: new Map(),
  };
}

/** Rows `from` … `from + count - 1` of the large table's initial load. */
export function bigRows(from: number, count: number): Row[] {
  const rows: Row[] = [];
  for (let i = from; i < from + count; i++)
    rows.push({ id: BIG_FIRST_ID + i, g: (i * 7919) % 1000, v: (i * 104_729) % 1000 });
  return rows;
}

export function tableB(): TableModel {
  return {
    name: 'b',
    ddl: 'CREATE TABLE b (g INTEGER NOT NULL, w INTEGER)',
    columns: [
      { name: 'g', sqlType: 'integer', nullable: false },
      { name: 'w', sqlType: 'integer', nullable: true },
    ],
    key: null,
    rows: new Map(),
  };
}
function tableT(): TableModel {
  return {
    name: 't',
    ddl: 'CREATE TABLE t (k INTEGER NOT NULL, x INTEGER NOT NULL, PRIMARY KEY (k))',
    columns: [
      { name: 'k', sqlType: 'integer', nullable: false },
      { name: 'x', sqlType: 'integer', nullable: false },
    ],
    key: 'k',
    rows: new Map(),
  };
}

export class Model {
  tables = new Map<string, TableModel>();
  views = new Set<string>();
  /** `dbl(x)` is `x * functionFactor`; null while the function does not exist. */
  functionFactor: number | null = null;
  private copyId = 0;

  clone(): Model {
    const m = new Model();
    m.functionFactor = this.functionFactor;
    for (const [n, t] of this.tables) m.tables.set(n, { ...t, rows: new Map(t.rows) });
    m.views = new Set(this.views);
    m.copyId = this.copyId;
    return m;
  }

  nextCopy(): string {
    this.copyId += 1;
    return `#${this.copyId}`;
  }

  dependants(name: string): string[] {
    return ALL_VIEWS.filter((v) => this.views.has(v.name) && v.deps.includes(name)).map((v) => v.name);
  }
}

/** One step of the driver: a request and what the model becomes if the server applies it. */
export interface Step {
  readonly what: string;
  readonly isDdl: boolean;
  readonly send: (base: string) => Promise<{ status: number; text: string }>;
  readonly after: Model;
  /** The error code the server must refuse it with (a 4xx that changes nothing: `after` is the model). */
  readonly refusedWith?: string;
}

export function post(base: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  return request(base, 'POST', path, body);
}

/**
 * A write to b that xj must refuse (EPOCH_TOO_LARGE), or null while xj does not exist or refusing
 * would take a write of more than XJ_MOST_ROWS. Each row written to b pairs with every row of big
 * under g < 3 (27 of a 9,000-row load, 60 of 20,000; writes to big move it): the write is sized from
 * the model so that its pairs just pass the bound.
 */
export function crossJoinBlowup(model: Model): Step | null {
  if (!model.views.has('xj')) return null;
  let bigLow = 0;
  for (const row of model.tables.get('big')?.rows.values() ?? []) if ((row['g'] as number) < 3) bigLow++;
  const rows = bigLow > 0 ? Math.floor(MAX_EPOCH_JOIN_ROWS / bigLow) + 1 : Infinity;
  if (rows > XJ_MOST_ROWS) return null;
  const insert: Row[] = [];
  for (let i = 0; i < rows; i++) insert.push({ g: i % 5, w: i % 6 });
  return {
    what: `ingest b +${rows} (EPOCH_TOO_LARGE)`,
    isDdl: false,
    send: (base) => post(base, '/v1/tables/b/rows', { insert }),
    after: model.clone(),
    refusedWith: 'EPOCH_TOO_LARGE',
  };
}

function sqlStep(what: string, statement: string, isDdl: boolean, after: Model): Step {
  return { what, isDdl, send: (base) => post(base, '/v1/sql', { sql: statement }), after };
}

function refusedStep(what: string, statement: string, isDdl: boolean, model: Model, code: string): Step {
  return { ...sqlStep(what, statement, isDdl, model.clone()), refusedWith: code };
}

function functionDdl(factor: number, orReplace: boolean): string {
  return `CREATE ${orReplace ? 'OR REPLACE ' : ''}FUNCTION dbl(x integer) RETURNS integer LANGUAGE SQL IMMUTABLE AS $$ SELECT x * ${factor} $$`;
}

/** Removes `gone`'s dependants from the model's views, transitively (what CASCADE drops). */
function dropDependants(after: Model, gone: Set<string>): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const v of ALL_VIEWS)
      if (after.views.has(v.name) && v.deps.some((d) => gone.has(d))) {
        after.views.delete(v.name);
        gone.add(v.name);
        changed = true;
      }
  }
}

export class Driver {
  private nextId = 1;
  constructor(private readonly rnd: () => number) {}

  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  chance(p: number): boolean {
    return this.rnd() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }

  next(model: Model): Step {
    const r = this.rnd();
    if (r < 0.2) return this.ddl(model);
    if (r < 0.25) return this.functionDdl(model);
    if (r < 0.31) return this.statementDml(model);
    if (r < 0.37) return this.insertStatement(model);
    if (r < 0.41) return this.refusedWrite(model);
    return this.ingest(model);
  }

  /** CREATE, CREATE OR REPLACE and DROP … CASCADE of the SQL function views inline. */
  private functionDdl(model: Model): Step {
    const after = model.clone();
    if (model.functionFactor === null) {
      after.functionFactor = 2 + this.int(3);
      return sqlStep(
        `CREATE FUNCTION dbl ×${after.functionFactor}`,
        functionDdl(after.functionFactor, false),
        true,
        after,
      );
    }
    const used = ALL_VIEWS.some((v) => v.usesFunction === true && model.views.has(v.name));
    const r = this.rnd();
    if (r < 0.5) {
      const factor = 2 + this.int(3);
      if (used)
        return refusedStep(
          'CREATE OR REPLACE FUNCTION dbl (used)',
          functionDdl(factor, true),
          true,
          model,
          'DEPENDENT_OBJECTS',
        );
      after.functionFactor = factor;
      return sqlStep(`CREATE OR REPLACE FUNCTION dbl ×${factor}`, functionDdl(factor, true), true, after);
    }
    after.functionFactor = null;
    for (const v of ALL_VIEWS) if (v.usesFunction === true) after.views.delete(v.name);
    dropDependants(
      after,
      new Set(ALL_VIEWS.filter((v) => v.usesFunction === true && model.views.has(v.name)).map((v) => v.name)),
    );
    return sqlStep('DROP FUNCTION dbl CASCADE', 'DROP FUNCTION dbl CASCADE', true, after);
  }

  /** INSERT … VALUES into a and INSERT … SELECT from a into b. */
  private insertStatement(model: Model): Step {
    const after = model.clone();
    const a = after.tables.get('a') as TableModel;
    const b = after.tables.get('b') as TableModel;
    if (this.chance(0.5) && a.rows.size < SMALL_CAP) {
      const rows: Row[] = [];
      for (let i = 1 + this.int(4); i > 0; i--) rows.push(this.row(a, this.nextId++));
      for (const row of rows) a.rows.set(String(row['id']), row);
      const literal = (v: unknown): string =>
        v === null ? 'NULL' : typeof v === 'string' ? `'${v}'` : String(v);
      const values = rows
        .map((r) => `(${[r['id'], r['g'], r['v'], r['s']].map(literal).join(', ')})`)
        .join(', ');
      return sqlStep(
        `INSERT INTO a VALUES ×${rows.length}`,
        `INSERT INTO a (id, g, v, s) VALUES ${values}`,
        false,
        after,
      );
    }
    const m = 2 + this.int(5);
    const r = this.int(m);
    const picked = [...a.rows.values()].filter((row) => (row['id'] as number) % m === r);
    if (b.rows.size + picked.length > SMALL_CAP + 40) return this.statementDml(model);
    for (const row of picked)
      b.rows.set(after.nextCopy(), { g: row['g'] as number, w: (row['v'] as number) % 6 });
    return sqlStep(
      `INSERT INTO b SELECT … a id%${m}=${r} (${picked.length})`,
      `INSERT INTO b (g, w) SELECT g, v % 6 FROM a WHERE id % ${m} = ${r}`,
      false,
      after,
    );
  }

  /** Writes the server must refuse, changing nothing: each is journaled never. */
  private refusedWrite(model: Model): Step {
    const r = this.rnd();
    const blowup = r < 0.3 ? crossJoinBlowup(model) : null;
    if (blowup !== null) return blowup;
    // INSERT … SELECT of every row of big passes the server's result limit only while big holds more
    // rows than it (a run may load fewer, and deletes shrink it): else the CREATE that pairs big with
    // itself is the refusal, past the first build's bound from ≈ 1,000 rows of big on.
    const bigRows = model.tables.get('big')?.rows.size ?? 0;
    if (r < 0.6 || bigRows <= SERVER_MAX_RESULT_ROWS) {
      return refusedStep('CREATE huge (VIEW_TOO_LARGE)', HUGE_VIEW, true, model, 'VIEW_TOO_LARGE');
    }
    return refusedStep(
      'INSERT INTO b SELECT … FROM big (RESULT_TOO_LARGE)',
      'INSERT INTO b (g, w) SELECT g % 5, v % 6 FROM big',
      false,
      model,
      'RESULT_TOO_LARGE',
    );
  }

  private ddl(model: Model): Step {
    const after = model.clone();
    const creatable = VIEW_POOL.filter(
      (v) =>
        !model.views.has(v.name) &&
        v.deps.every((d) => model.tables.has(d) || model.views.has(d)) &&
        (v.usesFunction !== true || model.functionFactor !== null),
    );
    const droppable = VIEW_POOL.filter(
      (v) => model.views.has(v.name) && model.dependants(v.name).length === 0,
    );
    const r = this.rnd();
    if (!model.tables.has('t') && r < 0.2) {
      const t = tableT();
      after.tables.set('t', t);
      return sqlStep('CREATE TABLE t', t.ddl, true, after);
    }
    if (model.tables.has('t') && r < 0.12) {
      // With CASCADE the views over t go too.
      after.tables.delete('t');
      dropDependants(after, new Set(['t']));
      return sqlStep('DROP TABLE t CASCADE', 'DROP TABLE t CASCADE', true, after);
    }
    if (creatable.length > 0 && (droppable.length === 0 || this.chance(0.6))) {
      const v = this.pick(creatable);
      after.views.add(v.name);
      return sqlStep(`CREATE ${v.name}`, `CREATE MATERIALIZED VIEW ${v.name} AS ${v.select}`, true, after);
    }
    if (droppable.length > 0) {
      const v = this.pick(droppable);
      after.views.delete(v.name);
      return sqlStep(`DROP ${v.name}`, `DROP MATERIALIZED VIEW ${v.name}`, true, after);
    }
    return this.ingest(model);
  }

  private statementDml(model: Model): Step {
    const after = model.clone();
    const a = after.tables.get('a') as TableModel;
    const g = this.int(5);
    if (this.chance(0.6)) {
      const add = 1 + this.int(5);
      for (const [k, row] of a.rows)
        if (row['g'] === g) a.rows.set(k, { ...row, v: (row['v'] as number) + add });
      return sqlStep(`UPDATE a g=${g}`, `UPDATE a SET v = v + ${add} WHERE g = ${g}`, false, after);
    }
    const b = after.tables.get('b') as TableModel;
    const w = this.int(6);
    for (const [k, row] of b.rows) if (row['w'] === w) b.rows.delete(k);
    return sqlStep(`DELETE b w=${w}`, `DELETE FROM b WHERE w = ${w}`, false, after);
  }

  private ingest(model: Model): Step {
    const after = model.clone();
    const names = [...after.tables.keys()];
    const table = after.tables.get(this.pick(names)) as TableModel;
    const insert: Row[] = [];
    const del: Row[] = [];
    const size = this.chance(0.1) ? 20 + this.int(60) : 1 + this.int(6);
    const touched = new Set<string>();
    for (let i = 0; i < size; i++) {
      const live = [...table.rows.keys()].filter((k) => !touched.has(k));
      const r = this.rnd();
      if (live.length > 0 && r < 0.3) {
        const k = this.pick(live);
        touched.add(k);
        const row = table.rows.get(k) as Row;
        del.push(table.key === null ? row : { [table.key]: row[table.key] as number });
        table.rows.delete(k);
      } else if (table.key !== null && live.length > 0 && r < 0.5) {
        // An update: an insert on a live key replaces the row.
        const k = this.pick(live);
        touched.add(k);
        const row = this.row(table, Number(k));
        insert.push(row);
        table.rows.set(k, row);
      } else if (table.rows.size < (table.name === 'big' ? BIG_CAP : 120)) {
        const id = this.nextId++;
        const row = this.row(table, id);
        insert.push(row);
        const k = table.key === null ? after.nextCopy() : String(id);
        touched.add(k);
        table.rows.set(k, row);
      }
    }
    // Deletes apply before inserts; a keyed insert of a deleted key in the same request is avoided
    // above (touched keys are not reused).
    return {
      what: `ingest ${table.name} +${insert.length} -${del.length}`,
      isDdl: false,
      send: (base) => post(base, `/v1/tables/${table.name}/rows`, { insert, delete: del }),
      after,
    };
  }

  private row(table: TableModel, id: number): Row {
    switch (table.name) {
      case 'a':
        return { id, g: this.int(5), v: this.int(100) - 20, s: this.chance(0.2) ? null : `s${this.int(7)}` };
      case 'b':
        return { g: this.int(5), w: this.chance(0.15) ? null : this.int(6) };
      case 'big':
        return { id, g: this.int(1000), v: this.int(1000) };
      default:
        return { k: id, x: this.int(30) };
    }
  }
}
