// The join differential suite's seeded schema, its model of each table's rows, and random batches and
// DML over it (test/support/join-workload.ts runs them). Every choice comes from one mulberry32 stream
// (Rng from random-workload.ts), so a seed replays exactly as long as the generator is unchanged.
//
// Schema. 2–4 tables named a, b, c, d. Every table starts with the join keys `k` and `j` (nullable
// integers from small domains, so matches are common; ~10% NULL; sometimes one hot key holds a large
// share of the rows), then, for keyed tables, `<t>id integer PRIMARY KEY`, then `<t>v` (nullable
// integer) and `<t>w` (nullable text). Only `k` and `j` are shared between tables, so NATURAL JOIN
// joins on exactly (k, j), the other columns can be referenced unqualified, and `SELECT *` over
// NATURAL / USING (k, j) has the same column order in PostgreSQL (USING columns first) and SQLite
// (the left table's order) because k, j come first in every table. At least one table is small
// (≤ ~12 rows) for cross and theta joins.
import type { Row, Value } from '../../src/common/types.ts';
import { Rng, distinctRowPicker, sqlLiteral } from './random-workload.ts';
import type { Changes, ColumnSpec, TableSpec } from './sqlite-oracle.ts';

// ---------------------------------------------------------------------------------------------------
// Schema

export interface JoinTable extends TableSpec {
  /** The table name, also the prefix of its own columns (`aid`, `av`, `aw`). */
  readonly name: string;
  readonly keyed: boolean;
  /** Size the workload drifts towards. */
  readonly target: number;
  readonly small: boolean;
}

/** Value domains shared by every table of one seed. */
export interface Domains {
  /** Keys are 0..kMax. */
  readonly kMax: number;
  /** When set, this share of non-NULL keys is key 0. */
  readonly hot: number;
  readonly jMax: number;
}

export interface JoinSchema {
  readonly tables: readonly JoinTable[];
  readonly domains: Domains;
}

const WORDS = ['p', 'q', 'r', 'pq', 'qr', '', 'x'];

export function idCol(t: JoinTable): string {
  return `${t.name}id`;
}
export function vCol(t: JoinTable): string {
  return `${t.name}v`;
}
export function wCol(t: JoinTable): string {
  return `${t.name}w`;
}

function makeTable(name: string, keyed: boolean, small: boolean, rng: Rng): JoinTable {
  // Join keys of different integer types across tables (integer = bigint must match like 1 = 1).
  const columns: ColumnSpec[] = [
    { name: 'k', sqlType: rng.pick(['integer', 'integer', 'bigint', 'smallint']), nullable: true },
    { name: 'j', sqlType: rng.pick(['integer', 'smallint', 'bigint']), nullable: true },
  ];
  if (keyed) columns.push({ name: `${name}id`, sqlType: 'integer', nullable: false });
  columns.push({ name: `${name}v`, sqlType: 'integer', nullable: true });
  columns.push({ name: `${name}w`, sqlType: 'text', nullable: true });
  return {
    name,
    columns,
    primaryKey: keyed ? [`${name}id`] : null,
    keyed,
    small,
    target: small ? rng.int(4, 12) : rng.int(25, 50),
  };
}

export function randomJoinSchema(rng: Rng): JoinSchema {
  const n = rng.weighted([
    [4, 2],
    [4, 3],
    [3, 4],
  ]);
  const names = ['a', 'b', 'c', 'd'].slice(0, n);
  // At least one keyed and one keyless table; at least one small table.
  const keyed = names.map(() => rng.chance(0.5));
  if (keyed.every((x) => x)) keyed[rng.int(0, n - 1)] = false;
  if (keyed.every((x) => !x)) keyed[rng.int(0, n - 1)] = true;
  const small = names.map(() => rng.chance(0.3));
  if (!small.some((x) => x)) small[n - 1] = true;
  const tables = names.map((name, i) => makeTable(name, keyed[i]!, small[i]!, rng));
  const domains: Domains = {
    kMax: rng.pick([3, 5, 8]),
    hot: rng.chance(0.35) ? rng.pick([0.4, 0.6]) : 0,
    jMax: rng.pick([1, 2]),
  };
  return { tables, domains };
}

// ---------------------------------------------------------------------------------------------------
// Data

function keyValue(rng: Rng, d: Domains): Value {
  if (rng.chance(0.1)) return null;
  if (d.hot > 0 && rng.chance(d.hot)) return 0;
  return rng.int(0, d.kMax);
}

function jValue(rng: Rng, d: Domains): Value {
  if (rng.chance(0.1)) return null;
  return rng.int(0, d.jMax);
}

function vValue(rng: Rng): Value {
  return rng.chance(0.12) ? null : rng.int(-5, 25);
}

function wValue(rng: Rng): Value {
  return rng.chance(0.1) ? null : rng.pick(WORDS);
}

/** One table's rows as the generator believes them to be (a multiset; keyed by id when keyed). */
export class JoinModel {
  rows: Row[] = [];
  private nextId = 1;

  constructor(
    readonly table: JoinTable,
    readonly domains: Domains,
  ) {}

  freshRow(rng: Rng): Row {
    const t = this.table;
    const row: Row = { k: keyValue(rng, this.domains), j: jValue(rng, this.domains) };
    if (t.keyed) row[idCol(t)] = this.nextId++;
    row[vCol(t)] = vValue(rng);
    row[wCol(t)] = wValue(rng);
    return row;
  }

  /** A changed copy: mostly the join key moves (to another key, to NULL, from NULL). */
  modified(rng: Rng, row: Row): Row {
    const t = this.table;
    const out: Row = { ...row };
    const what = rng.weighted<'k' | 'j' | 'kj' | 'v' | 'w'>([
      [5, 'k'],
      [2, 'j'],
      [1, 'kj'],
      [2, 'v'],
      [1, 'w'],
    ]);
    if (what === 'k' || what === 'kj') out['k'] = keyValue(rng, this.domains);
    if (what === 'j' || what === 'kj') out['j'] = jValue(rng, this.domains);
    if (what === 'v') out[vCol(t)] = vValue(rng);
    if (what === 'w') out[wCol(t)] = wValue(rng);
    return out;
  }

  pkOnly(row: Row): Row {
    const id = idCol(this.table);
    return { [id]: row[id] ?? null };
  }

  /** The engine's batch semantics: deletes (full row, or the key), then inserts (upsert when keyed). */
  apply(changes: Changes): void {
    const t = this.table;
    const id = idCol(t);
    for (const d of changes.delete ?? []) {
      const i = t.keyed
        ? this.rows.findIndex((r) => r[id] === d[id])
        : this.rows.findIndex((r) => t.columns.every((c) => r[c.name] === d[c.name]));
      if (i < 0) throw new Error(`JoinModel: delete of a missing row ${JSON.stringify(d)} from ${t.name}`);
      this.rows[i] = this.rows[this.rows.length - 1]!;
      this.rows.pop();
    }
    for (const ins of changes.insert ?? []) {
      if (t.keyed) {
        const i = this.rows.findIndex((r) => r[id] === ins[id]);
        if (i >= 0) {
          this.rows[i] = ins;
          continue;
        }
        const n = ins[id];
        if (typeof n === 'number' && n >= this.nextId) this.nextId = n + 1;
      }
      this.rows.push(ins);
    }
  }

  reset(rows: readonly Row[]): void {
    this.rows = [];
    this.apply({ insert: rows });
  }
}

/** Batch size: mostly 1–50, sometimes a few hundred. */
export function randomJoinBatchSize(rng: Rng): number {
  return rng.weighted<() => number>([
    [55, () => rng.int(1, 8)],
    [35, () => rng.int(9, 50)],
    [10, () => rng.int(100, 300)],
  ])();
}

/**
 * One valid batch against the model's rows (not applied). Above the table's target size deletes
 * dominate; each existing row is touched at most once per batch. Rarely the batch deletes everything.
 */
export function randomJoinBatch(rng: Rng, model: JoinModel, size: number): Changes {
  const insert: Row[] = [];
  const del: Row[] = [];
  const t = model.table;
  const n = model.rows.length;
  if (n > 0 && rng.chance(0.02)) {
    // Every row goes (the last match of every key leaves at once).
    return { delete: model.rows.map((r) => (t.keyed && rng.chance(0.5) ? model.pkOnly(r) : { ...r })) };
  }
  const big = size > 60;
  const pDelete = n === 0 ? 0 : n > t.target ? 0.5 : 0.15;
  // Large batches churn (updates and deletes) rather than grow without bound.
  const pUpdate = n === 0 ? 0 : big ? 0.45 : 0.35;
  const takeExisting = distinctRowPicker(rng, model, n);
  let grow = 0;
  // Inserts stop at 1.5 × the target, so joins over the table stay a bounded size.
  const growCap = Math.max(big ? 5 : 2, Math.ceil(1.5 * t.target) - n);
  for (let i = 0; i < size; i++) {
    const r = rng.next();
    if (r < pDelete) {
      const row = takeExisting();
      if (row === undefined) continue;
      del.push(t.keyed && rng.chance(0.5) ? model.pkOnly(row) : { ...row });
    } else if (r < pDelete + pUpdate) {
      const row = takeExisting();
      if (row === undefined) continue;
      const next = model.modified(rng, row);
      if (t.keyed && rng.chance(0.5)) insert.push(next);
      else {
        del.push(t.keyed && rng.chance(0.5) ? model.pkOnly(row) : { ...row });
        insert.push(next);
      }
    } else if (grow < growCap) {
      grow++;
      if (!t.keyed && n > 0 && rng.chance(0.1)) insert.push({ ...model.rows[rng.int(0, n - 1)]! });
      else insert.push(model.freshRow(rng));
    }
  }
  if (insert.length === 0 && del.length === 0) insert.push(model.freshRow(rng));
  const out: { insert?: Row[]; delete?: Row[] } = {};
  if (insert.length > 0) out.insert = insert;
  if (del.length > 0) out.delete = del;
  return out;
}

/** An INSERT / UPDATE / DELETE valid in Sluice and SQLite; UPDATEs move join keys, never ids. */
export function randomJoinDml(rng: Rng, model: JoinModel): string {
  const t = model.table;
  const d = model.domains;
  const cond = (): string =>
    rng.pick([
      () => `k = ${rng.int(0, d.kMax)}`,
      () => `j = ${rng.int(0, d.jMax)}`,
      () => `k IS NULL`,
      () => `${vCol(t)} < ${rng.int(0, 20)}`,
      () => `(k = ${rng.int(0, d.kMax)} AND j IS NOT NULL)`,
    ])();
  const kind = rng.weighted<'insert' | 'update' | 'delete'>([
    [2, 'insert'],
    [5, 'update'],
    [model.rows.length > t.target ? 3 : 1, 'delete'],
  ]);
  if (kind === 'insert') {
    const rows = Array.from({ length: rng.int(1, 4) }, () => model.freshRow(rng));
    const cols = t.columns.map((c) => c.name);
    const values = rows.map((r) => `(${cols.map((c) => sqlLiteral(r[c] ?? null)).join(', ')})`);
    return `INSERT INTO ${t.name} (${cols.join(', ')}) VALUES ${values.join(', ')}`;
  }
  if (kind === 'delete') return `DELETE FROM ${t.name} WHERE ${cond()}`;
  const set = rng.pick([
    () => `k = k + 1`,
    () => `k = ${rng.int(0, d.kMax)}`,
    () => `k = NULL`,
    () => `j = ${rng.int(0, d.jMax)}`,
    () => `k = j, j = k`,
    () => `${vCol(t)} = ${vCol(t)} + ${rng.int(-3, 5)}`,
    () => `k = COALESCE(k, ${rng.int(0, d.kMax)})`,
  ])();
  return `UPDATE ${t.name} SET ${set} WHERE ${cond()}`;
}

/** SQLite's values (bigint under safe integers) back in Sluice's representation. */
export function fromSqlite(t: JoinTable, r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const c of t.columns) {
    const v = r[c.name];
    out[c.name] = v === undefined || v === null ? null : typeof v === 'bigint' ? Number(v) : (v as Value);
  }
  return out;
}
