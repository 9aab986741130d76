// Seeded random schemas and change batches for the differential and property suites, and the seeded
// stream they and the views (random-views.ts, random-expressions.ts) draw from. Every choice comes
// from one mulberry32 stream, so a seed replays exactly (as long as the generator is unchanged:
// GENERATOR_VERSION names the stream's shape and is recorded with regression seeds).
//
// The generated SQL stays inside the subset where PostgreSQL (Sluice's semantics) and SQLite (the
// oracle) agree: random-expressions.ts lists the rules that keep it there.
import type { Row, Value } from '../../src/common/types.ts';
import type { Changes, ColumnSpec, TableSpec } from './sqlite-oracle.ts';

export const GENERATOR_VERSION = 1;

/** mulberry32: a small, fast, seedable PRNG (no Math.random anywhere in the suites). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('Rng.pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
  /** Picks by weight: [[weight, value], ...]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of choices) {
      if (r < w) return v;
      r -= w;
    }
    const last = choices[choices.length - 1];
    if (last === undefined) throw new Error('Rng.weighted with no choices');
    return last[1];
  }
}

/** Derives independent seeds from a base seed (splitmix-style). */
export function deriveSeed(base: number, index: number): number {
  let z = (base + Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------------------------------
// Schemas

export type ColumnKind =
  | 'smallint'
  | 'int'
  | 'bigint'
  | 'huge'
  | 'double'
  | 'numeric'
  | 'text'
  | 'varchar'
  | 'bool'
  | 'date'
  | 'timestamp';

const SQL_TYPE: Record<ColumnKind, string> = {
  smallint: 'smallint',
  int: 'integer',
  bigint: 'bigint',
  huge: 'bigint',
  double: 'double precision',
  numeric: 'numeric(12,2)',
  text: 'text',
  varchar: 'varchar(16)',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
};

export interface GenColumn extends ColumnSpec {
  readonly kind: ColumnKind;
}

export interface GenTable extends TableSpec {
  readonly columns: readonly GenColumn[];
}

export const WORDS = [
  'apple',
  'banana',
  'cherry',
  'ab',
  'ba',
  'abc',
  '',
  'a_b',
  'x1',
  'pear',
  'plum',
  'kiwi',
  'b2',
  'zz',
];

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

export function randomDate(rng: Rng): string {
  const d = new Date(Date.UTC(2024, 0, 1) + rng.int(0, 365) * 86400000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function randomValue(rng: Rng, col: GenColumn): Value {
  if (col.nullable && rng.chance(0.1)) return null;
  switch (col.kind) {
    case 'smallint':
      return rng.int(0, 9);
    case 'int':
      return rng.int(-20, 60);
    case 'bigint':
      return rng.chance(0.5) ? rng.int(0, 40) : rng.int(0, 1_000_000) * 1_000_000 + rng.int(0, 999);
    case 'huge': {
      const base = 1n << 62n;
      const off = BigInt(rng.int(0, 20));
      return rng.chance(0.5) ? base - off : -base + off;
    }
    case 'double':
    case 'numeric':
      return rng.int(-200, 400) / 4;
    case 'text':
    case 'varchar':
      return rng.pick(WORDS);
    case 'bool':
      return rng.chance(0.5);
    case 'date':
      return randomDate(rng);
    case 'timestamp':
      return `${randomDate(rng)} ${pad(rng.int(0, 23))}:${pad(rng.pick([0, 15, 30, 45]))}:${pad(rng.int(0, 59))}`;
  }
}

const NON_KEY_KINDS: readonly ColumnKind[] = [
  'smallint',
  'int',
  'int',
  'bigint',
  'huge',
  'double',
  'numeric',
  'text',
  'varchar',
  'bool',
  'date',
  'timestamp',
];

export function randomTable(rng: Rng, name: string): GenTable {
  const columns: GenColumn[] = [];
  let primaryKey: string[] | null = null;
  const keyShape = rng.weighted<'none' | 'int' | 'composite'>([
    [4, 'none'],
    [4, 'int'],
    [2, 'composite'],
  ]);
  if (keyShape !== 'none') {
    columns.push({ name: 'id', kind: 'int', sqlType: 'integer', nullable: false });
    primaryKey = ['id'];
    if (keyShape === 'composite') {
      columns.push({ name: 'region', kind: 'text', sqlType: 'text', nullable: false });
      primaryKey.push('region');
    }
  }
  // Always at least one small int and one text column so every template has material.
  const kinds: ColumnKind[] = ['int', 'text'];
  const extra = rng.int(2, 6);
  for (let i = 0; i < extra; i++) kinds.push(rng.pick(NON_KEY_KINDS));
  kinds.forEach((kind, i) => {
    columns.push({
      name: `${kind.slice(0, 3)}${i}`,
      kind,
      sqlType: SQL_TYPE[kind],
      nullable: rng.chance(0.6),
    });
  });
  return { name, columns, primaryKey };
}

// ---------------------------------------------------------------------------------------------------
// Data

function keyOf(table: GenTable, row: Row): string {
  const pk = table.primaryKey ?? table.columns.map((c) => c.name);
  return JSON.stringify(pk.map((k) => String(row[k])));
}

/** The current rows of one table, as the generator believes them to be (a multiset). */
export class TableModel {
  readonly rows: Row[] = [];
  /** Key (primary key, or the full row for keyless tables) → indexes in rows. */
  private readonly byKey = new Map<string, number[]>();
  private nextId = 1;

  constructor(readonly table: GenTable) {}

  get keyed(): boolean {
    return this.table.primaryKey !== null;
  }

  key(row: Row): string {
    return keyOf(this.table, row);
  }

  freshRow(rng: Rng): Row {
    const row: Row = {};
    for (const c of this.table.columns) row[c.name] = randomValue(rng, c);
    if (this.keyed) {
      row['id'] = this.nextId++;
      if (this.table.primaryKey?.includes('region')) row['region'] = rng.pick(['eu', 'us', 'ap']);
    }
    return row;
  }

  /** A modified copy of `row`: one or two non-key columns get new values. */
  modified(rng: Rng, row: Row): Row {
    const out: Row = { ...row };
    const pk = new Set(this.table.primaryKey ?? []);
    const cols = this.table.columns.filter((c) => !pk.has(c.name));
    const n = rng.int(1, 2);
    for (let i = 0; i < n; i++) {
      const c = rng.pick(cols);
      out[c.name] = randomValue(rng, c);
    }
    return out;
  }

  private indexAdd(k: string, i: number): void {
    const list = this.byKey.get(k);
    if (list === undefined) this.byKey.set(k, [i]);
    else list.push(i);
  }

  private indexReplace(k: string, from: number, to: number): void {
    const list = this.byKey.get(k);
    const at = list?.indexOf(from) ?? -1;
    if (list === undefined || at < 0) throw new Error('TableModel: index out of sync');
    list[at] = to;
  }

  private remove(k: string): void {
    const list = this.byKey.get(k);
    const i = list?.pop();
    if (list === undefined || i === undefined) throw new Error(`TableModel: delete of missing row ${k}`);
    if (list.length === 0) this.byKey.delete(k);
    const last = this.rows.pop();
    if (last === undefined) throw new Error('TableModel: remove from empty');
    if (i < this.rows.length) {
      this.rows[i] = last;
      this.indexReplace(this.key(last), this.rows.length, i);
    }
  }

  /** Replaces the model's rows (after SQL statements changed the table, from the oracle's copy). */
  reset(rows: readonly Row[]): void {
    this.rows.length = 0;
    this.byKey.clear();
    this.apply({ insert: rows });
  }

  /** Applies a batch with the engine's semantics: deletes (full row or key), then inserts (upsert). */
  apply(changes: Changes): void {
    for (const d of changes.delete ?? []) this.remove(this.key(d));
    for (const ins of changes.insert ?? []) {
      const k = this.key(ins);
      if (this.keyed) {
        const i = this.byKey.get(k)?.[0];
        if (i !== undefined) {
          this.rows[i] = ins;
          continue;
        }
        const id = ins['id'];
        if (typeof id === 'number' && id >= this.nextId) this.nextId = id + 1;
      }
      this.indexAdd(k, this.rows.length);
      this.rows.push(ins);
    }
  }
}

function pkOnly(table: GenTable, row: Row): Row {
  const out: Row = {};
  for (const k of table.primaryKey ?? []) out[k] = row[k] ?? null;
  return out;
}

/** Batch size: mostly small, sometimes hundreds, rarely thousands. */
export function randomBatchSize(rng: Rng, scale = 1): number {
  return rng.weighted<() => number>([
    [70, () => rng.int(1, 10)],
    [20, () => rng.int(10, 150)],
    [8, () => rng.int(150, 800)],
    [2 * scale, () => rng.int(1000, 3000)],
  ])();
}

/**
 * Takes distinct rows of the first `n` of `model.rows` in random order, each at most once (a partial
 * Fisher–Yates shuffle, one draw a take), then undefined.
 */
export function distinctRowPicker(
  rng: Rng,
  model: { readonly rows: readonly Row[] },
  n: number,
): () => Row | undefined {
  const order = Array.from({ length: n }, (_, i) => i);
  let cursor = 0;
  return () => {
    if (cursor >= order.length) return undefined;
    const j = cursor + Math.floor(rng.next() * (order.length - cursor));
    const tmp = order[cursor]!;
    order[cursor] = order[j]!;
    order[j] = tmp;
    return model.rows[order[cursor++]!];
  };
}
/**
 * One valid batch against the model's current rows (does not apply it). `target` is the table size
 * the workload drifts towards: above it, deletes dominate.
 */
export function randomBatch(rng: Rng, model: TableModel, size: number, target = 400): Changes {
  const insert: Row[] = [];
  const del: Row[] = [];
  const n = model.rows.length;
  const pDelete = n === 0 ? 0 : n > target ? 0.55 : 0.2;
  const pUpdate = n === 0 ? 0 : 0.25;
  // Distinct rows of the pre-batch state, each touched at most once in this batch.
  const takeExisting = distinctRowPicker(rng, model, n);
  for (let i = 0; i < size; i++) {
    const r = rng.next();
    if (r < pDelete) {
      const row = takeExisting();
      if (row === undefined) continue;
      del.push(model.keyed && rng.chance(0.5) ? pkOnly(model.table, row) : row);
    } else if (r < pDelete + pUpdate) {
      const row = takeExisting();
      if (row === undefined) continue;
      const next = model.modified(rng, row);
      if (model.keyed && rng.chance(0.5)) {
        insert.push(next); // upsert: replaces the row with the same key
      } else {
        del.push(model.keyed && rng.chance(0.5) ? pkOnly(model.table, row) : row);
        insert.push(next);
      }
    } else if (!model.keyed && n > 0 && rng.chance(0.1)) {
      // An exact duplicate of an existing row (multiplicity > 1 in keyless tables).
      insert.push({ ...model.rows[rng.int(0, n - 1)]! });
    } else {
      insert.push(model.freshRow(rng));
    }
  }
  if (insert.length === 0 && del.length === 0) insert.push(model.freshRow(rng));
  const out: { insert?: Row[]; delete?: Row[] } = {};
  if (insert.length > 0) out.insert = insert;
  if (del.length > 0) out.delete = del;
  return out;
}

/** A printable form of a batch (bigint-safe), for failure messages. */
export function describeBatch(table: string, changes: Changes, limit = 8): string {
  const j = (r: Row): string => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  const ins = changes.insert ?? [];
  const del = changes.delete ?? [];
  const lines = [`batch on ${table}: ${ins.length} inserts, ${del.length} deletes`];
  for (const r of del.slice(0, limit)) lines.push(`  - ${j(r)}`);
  if (del.length > limit) lines.push(`  - ... ${del.length - limit} more`);
  for (const r of ins.slice(0, limit)) lines.push(`  + ${j(r)}`);
  if (ins.length > limit) lines.push(`  + ... ${ins.length - limit} more`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------
// SQL statements (INSERT / UPDATE / DELETE) as an alternative way into a table

/** A SQL literal for a generated value (text quoted, booleans TRUE/FALSE). */
export function sqlLiteral(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return `'${v.replace(/'/g, "''")}'`;
  return String(v);
}

/** SQLite's row values back in Sluice's representation, for TableModel.reset. */
export function fromSqliteRow(t: GenTable, r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const c of t.columns) {
    const v = r[c.name];
    if (v === null || v === undefined) out[c.name] = null;
    else if (c.kind === 'bool') out[c.name] = v === 1n || v === 1;
    else if (typeof v === 'bigint') {
      out[c.name] =
        c.kind === 'double' || c.kind === 'numeric'
          ? Number(v)
          : v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
            ? Number(v)
            : v;
    } else out[c.name] = v as Value;
  }
  return out;
}
