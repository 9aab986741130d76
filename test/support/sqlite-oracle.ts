// A SQLite oracle for the randomized suites: it mirrors Sluice's tables in an in-memory SQLite database,
// applies the same batches, defines every Sluice view as a plain SQLite VIEW with the same SELECT text
// (so views over views just work), and answers a view's rows in a canonical, comparable form.
//
// Known, documented semantic differences between SQLite and PostgreSQL (which Sluice follows), and
// how this file neutralises each one. Everything else must match exactly.
//  1. Booleans: SQLite has no boolean type; TRUE/FALSE are 1/0. A value in a column Sluice types as
//     `boolean` is canonicalised from 0/1 (SQLite) or false/true (Sluice) to `false`/`true`.
//  2. Integers: SQLite returns a REAL for some integer-valued results that PostgreSQL types as an
//     integer (e.g. mod(), floor() of a real). A value in a column Sluice types as an integer is
//     canonicalised to its exact decimal string via BigInt when it is integral; a non-integral value
//     there is kept as `float:<x>` and so is reported as a mismatch.
//  3. Floating point (real, double precision): sums and averages may be computed in a different
//     order, so a value in a float-typed column is compared with a relative tolerance of about 1e-10:
//     it is canonicalised by rounding to 10 significant digits, |x| < 1e-9 counts as 0, and -0 is 0.
//     An integer that SQLite returns for such a column (floor() of an integer) is compared as a float.
//  3b. NUMERIC is exact in Sluice (a Decimal) and a double in SQLite. Where SQLite's answer is exact —
//     an integral value (SUM of integers, sums of the generators' quarters that come out whole, an
//     exact average) — it is compared exactly, as digits, with Sluice's decimal (so 1.50 is 1.5 and
//     an integer past 2^53 must match to the last digit); a fractional value is compared like a
//     float (note 3). A value integral on one side only is a mismatch.
//  4. NUMERIC columns are declared REAL in SQLite (SQLite's NUMERIC affinity would store 5 as an
//     integer and then divide it with integer division, unlike PostgreSQL's numeric).
//  5. LIKE: SQLite's LIKE is case-insensitive by default; `PRAGMA case_sensitive_like = ON` gives
//     PostgreSQL's case-sensitive LIKE.
//  6. Text compares byte-wise in SQLite (BINARY collation), which is PostgreSQL's "C" collation; the
//     generators keep text ASCII so UTF-16 code-unit order (JavaScript) is the same order.
//  7. DATE / TIMESTAMP are ISO text in both, so comparisons and MIN/MAX agree.
//  8. Function names: PostgreSQL's STRPOS(s, sub) is SQLite's INSTR(s, sub) (the same 1-based
//     character position, 0 when absent); the SELECT text is rewritten for SQLite (`sqliteSql`).
//  9. Regular expressions: SQLite has none; the oracle registers JavaScript RegExp functions
//     (`registerRegexFunctions`), another engine than Sluice's RE2, for the generators' patterns.
// Constructs where the two systems differ unavoidably (division by a non-constant or zero, overflow,
// ROUND of .5 ties, `::`, casts of floats to int or text) are avoided by the generator, not normalised.
import { Decimal, parseDecimal } from '../../src/common/decimal.ts';
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import type { ColumnInfo, Row, Value } from '../../src/common/types.ts';
import type { EngineLike } from './engine-like.ts';
import { sqliteTimeSql } from './sqlite-time.ts';

export interface ColumnSpec {
  readonly name: string;
  /** The type as written in Sluice's CREATE TABLE, e.g. `integer`, `varchar(16)`, `numeric(12,2)`. */
  readonly sqlType: string;
  readonly nullable: boolean;
}

export interface TableSpec {
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  readonly primaryKey: readonly string[] | null;
}

export interface Changes {
  readonly insert?: readonly Row[];
  readonly delete?: readonly Row[];
}

/** Sluice's CREATE TABLE statement for a spec. */
export function createTableSql(spec: TableSpec): string {
  const cols = spec.columns.map((c) => `${c.name} ${c.sqlType}${c.nullable ? '' : ' NOT NULL'}`);
  if (spec.primaryKey !== null) cols.push(`PRIMARY KEY (${spec.primaryKey.join(', ')})`);
  return `CREATE TABLE ${spec.name} (${cols.join(', ')})`;
}

/** SQLite storage class for a Sluice column type (see note 4 for numeric). */
export function sqliteTypeOf(sqlType: string): 'INTEGER' | 'REAL' | 'TEXT' {
  const t = sqlType.toLowerCase().trim();
  if (/^(boolean|bool|smallint|int|integer|bigint|int2|int4|int8)$/.test(t)) return 'INTEGER';
  if (/^(real|double precision|float|float4|float8|numeric|decimal)(\s*\(.*\))?$/.test(t)) return 'REAL';
  if (/^(text|varchar|char|character|character varying)(\s*\(.*\))?$/.test(t)) return 'TEXT';
  if (t === 'date' || t === 'timestamp') return 'TEXT';
  throw new Error(`sqlite-oracle: no SQLite mapping for type "${sqlType}"`);
}

type TypeClass = 'bool' | 'int' | 'float' | 'numeric' | 'text' | 'other';

function typeClassOf(sluiceTypeName: string): TypeClass {
  const t = sluiceTypeName.toLowerCase();
  if (t === 'boolean') return 'bool';
  if (t === 'smallint' || t === 'integer' || t === 'bigint') return 'int';
  if (t.startsWith('numeric') || t.startsWith('decimal')) return 'numeric';
  if (t === 'real' || t === 'double precision') return 'float';
  if (t === 'text' || t.startsWith('char') || t.startsWith('varchar')) return 'text';
  if (t === 'date' || t.startsWith('timestamp')) return 'text';
  return 'other';
}

/** Canonical float text: 10 significant digits, tiny values and -0 are 0 (note 3). */
export function canonicalFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (Math.abs(x) < 1e-9) return '0';
  return String(Number(x.toPrecision(10)));
}

/** A numeric value (note 3b): integral values as exact digits, fractions with the float tolerance. */
export function canonicalNumeric(v: unknown): string {
  if (v instanceof Decimal) {
    if (v.round(0).key() === v.key()) return `int:${v.round(0).big().toString()}`; // integral
    return canonicalFloat(v.toNumber());
  }
  if (typeof v === 'bigint') return `int:${v.toString()}`;
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return `int:${BigInt(v).toString()}`;
    return canonicalFloat(v);
  }
  // Over HTTP a numeric is its exact decimal string ("205", "-12.0000000000000000").
  if (typeof v === 'string') {
    const d = /^-?\d+(\.\d+)?$/.test(v) ? parseDecimal(v) : null;
    if (d !== null) return canonicalNumeric(d);
  }
  return `bad-numeric:${valueKind(v)}:${String(v)}`;
}

function valueKind(v: unknown): string {
  return v === null ? 'null' : typeof v;
}

/** One value in canonical text, driven by the Sluice column type (notes 1–3). */
export function canonicalValue(typeName: string, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  switch (typeClassOf(typeName)) {
    case 'bool':
      if (typeof v === 'boolean') return String(v);
      if (v === 0 || v === 0n) return 'false';
      if (v === 1 || v === 1n) return 'true';
      return `bad-bool:${valueKind(v)}:${String(v)}`;
    case 'int':
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v).toString();
      if (typeof v === 'number') return `float:${v}`;
      return `bad-int:${valueKind(v)}:${String(v)}`;
    case 'float':
      if (typeof v === 'number') return canonicalFloat(v);
      if (typeof v === 'bigint') return canonicalFloat(Number(v));
      return `bad-float:${valueKind(v)}:${String(v)}`;
    case 'numeric':
      return canonicalNumeric(v);
    case 'text':
      if (typeof v === 'string') return JSON.stringify(v);
      return `bad-text:${valueKind(v)}:${String(v)}`;
    case 'other':
      return `${valueKind(v)}:${String(v)}`;
  }
}

/** Rows as a sorted multiset of canonical strings, columns in `columns` order. */
export function canonicalRows(
  columns: readonly ColumnInfo[],
  rows: readonly Record<string, unknown>[],
): string[] {
  return rows
    .map((r) => columns.map((c) => `${c.name}=${canonicalValue(c.type, r[c.name])}`).join(' | '))
    .sort();
}

/**
 * Rows as a sorted multiset of text, each row its values in column order made text by `cell`: for
 * comparisons whose SQLite side is not the same SELECT (a type SQLite spells otherwise).
 */
export function rowsAsText(rows: readonly Record<string, unknown>[], cell: (v: unknown) => string): string[] {
  return rows.map((r) => Object.values(r).map(cell).join(' | ')).sort();
}

/**
 * A view's rows against SQLite running `oracle` over the same current rows (as text by `cell`), and
 * with `adhoc` the view's own SELECT run ad hoc against the same expectation. Returns the expected rows.
 */
export function assertViewMatchesSqlite(
  engine: EngineLike,
  db: Database.Database,
  view: { readonly name: string; readonly sql: string; readonly oracle?: string },
  cell: (v: unknown) => string,
  label: string,
  adhoc: boolean,
): string[] {
  const expected = rowsAsText(db.prepare(view.oracle ?? view.sql).all() as Record<string, unknown>[], cell);
  const actual = rowsAsText(engine.viewSnapshot(view.name).rows, cell);
  assert.deepEqual(actual, expected, `${label}, view ${view.name}`);
  if (adhoc) {
    const [result] = engine.execute(view.sql);
    const rows = result !== undefined && 'rows' in result ? result.rows : [];
    assert.deepEqual(rowsAsText(rows as Record<string, unknown>[], cell), expected, `ad hoc ${view.name}`);
  }
  return expected;
}

/** Multiset difference of two sorted lists: what `expected` has that `actual` lacks, and the reverse. */
export function multisetDiff(
  expected: readonly string[],
  actual: readonly string[],
): { missing: string[]; extra: string[] } {
  const counts = new Map<string, number>();
  for (const e of expected) counts.set(e, (counts.get(e) ?? 0) + 1);
  const extra: string[] = [];
  for (const a of actual) {
    const n = counts.get(a) ?? 0;
    if (n > 0) counts.set(a, n - 1);
    else extra.push(a);
  }
  const missing: string[] = [];
  for (const [k, n] of counts) for (let i = 0; i < n; i++) missing.push(k);
  return { missing: missing.sort(), extra: extra.sort() };
}

function bindValue(v: Value): null | number | bigint | string {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Decimal) return v.toNumber(); // SQLite has no decimal type
  if (typeof v === 'object' && v !== null) return v.toString(); // an interval: its text
  return v;
}

export class SqliteOracle {
  readonly db: Database.Database;
  private readonly tables = new Map<string, TableSpec>();

  constructor() {
    this.db = new Database(':memory:');
    // Exact integers beyond 2^53 come back as bigint.
    this.db.defaultSafeIntegers(true);
    this.db.pragma('case_sensitive_like = ON');
    registerRegexFunctions(this.db);
  }

  createTable(spec: TableSpec): void {
    const cols = spec.columns.map(
      (c) => `${c.name} ${sqliteTypeOf(c.sqlType)}${c.nullable ? '' : ' NOT NULL'}`,
    );
    if (spec.primaryKey !== null) cols.push(`PRIMARY KEY (${spec.primaryKey.join(', ')})`);
    this.db.exec(`CREATE TABLE ${spec.name} (${cols.join(', ')})`);
    // Full-row deletes look rows up by every column; an index keeps big delete batches fast.
    const names = spec.columns.map((c) => c.name).join(', ');
    this.db.exec(`CREATE INDEX ${spec.name}__all ON ${spec.name} (${names})`);
    this.tables.set(spec.name, spec);
  }

  createView(name: string, selectSql: string): void {
    this.db.exec(`CREATE VIEW ${name} AS ${sqliteSql(selectSql)}`);
  }

  dropView(name: string): void {
    this.statements.clear();
    this.db.exec(`DROP VIEW ${name}`);
  }

  private readonly statements = new Map<string, Database.Statement>();

  private prepared(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** One batch: deletes first (one copy each, or by primary key), then inserts (replacing on the key). */
  apply(table: string, changes: Changes): void {
    const spec = this.tables.get(table);
    if (spec === undefined) throw new Error(`sqlite-oracle: unknown table ${table}`);
    const run = this.db.transaction(() => {
      for (const row of changes.delete ?? []) {
        const names = Object.keys(row);
        const where = names.map((n) => `${n} IS ?`).join(' AND ');
        const info = this.prepared(
          `DELETE FROM ${table} WHERE rowid = (SELECT rowid FROM ${table} WHERE ${where} LIMIT 1)`,
        ).run(...names.map((n) => bindValue(row[n] ?? null)));
        if (info.changes !== 1)
          throw new Error(`sqlite-oracle: delete of a missing row ${JSON.stringify(row)}`);
      }
      const names = spec.columns.map((c) => c.name);
      const verb = spec.primaryKey !== null ? 'INSERT OR REPLACE' : 'INSERT';
      const stmt = this.prepared(
        `${verb} INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      );
      for (const row of changes.insert ?? []) stmt.run(...names.map((n) => bindValue(row[n] ?? null)));
    });
    run();
  }

  /** Raw rows of a view or query. */
  query(sql: string): Record<string, unknown>[] {
    return this.prepared(sqliteSql(sql)).all() as Record<string, unknown>[];
  }

  columnNames(view: string): string[] {
    return this.db
      .prepare(`SELECT * FROM ${view} LIMIT 0`)
      .columns()
      .map((c) => c.name);
  }

  /** The view's rows canonicalised with Sluice's column types. */
  canonicalView(view: string, columns: readonly ColumnInfo[]): string[] {
    return canonicalRows(columns, this.query(`SELECT * FROM ${view}`));
  }

  close(): void {
    this.db.close();
  }
}

/** A generated SELECT as SQLite spells it (difference 8 above; generated literals never hold `STRPOS(`). */
export function sqliteSql(sql: string): string {
  return sqliteTimeSql(sql.replaceAll('STRPOS(', 'INSTR('));
}

function bigintSafeJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
}

/**
 * Compares Sluice's snapshot of `view` with the oracle's rows. On mismatch throws an AssertionError
 * listing the missing/extra rows and `context` (seed, epoch, SQL, replay command).
 */
export function assertViewMatchesOracle(
  engine: EngineLike,
  oracle: SqliteOracle,
  view: string,
  context: string | (() => string),
): void {
  const ctx = (): string => (typeof context === 'string' ? context : context());
  let snap;
  try {
    snap = engine.viewSnapshot(view);
  } catch (e) {
    const errs = (() => {
      try {
        return bigintSafeJson(engine.viewErrors(view).slice(0, 5));
      } catch {
        return '(viewErrors failed too)';
      }
    })();
    throw new assert.AssertionError({
      message: `viewSnapshot(${view}) threw: ${String(e)}\nview errors: ${errs}\n${ctx()}`,
    });
  }
  const oracleCols = oracle.columnNames(view);
  const sluiceCols = snap.columns.map((c) => c.name);
  if (oracleCols.join(',') !== sluiceCols.join(',')) {
    throw new assert.AssertionError({
      message: `view ${view}: columns differ: sluice [${sluiceCols.join(', ')}], sqlite [${oracleCols.join(', ')}]\n${ctx()}`,
    });
  }
  if (snap.epoch !== engine.epoch) {
    throw new assert.AssertionError({
      message: `view ${view}: snapshot epoch ${snap.epoch} != engine epoch ${engine.epoch}\n${ctx()}`,
    });
  }
  const expected = oracle.canonicalView(view, snap.columns);
  const actual = canonicalRows(snap.columns, snap.rows);
  if (expected.length === actual.length && expected.every((e, i) => e === actual[i])) return;
  const { missing, extra } = multisetDiff(expected, actual);
  const show = (xs: string[]): string =>
    xs
      .slice(0, 25)
      .map((x) => `    ${x}`)
      .join('\n') + (xs.length > 25 ? `\n    ... ${xs.length - 25} more` : '');
  throw new assert.AssertionError({
    message:
      `view ${view} differs from SQLite at epoch ${engine.epoch} ` +
      `(sluice ${actual.length} rows, sqlite ${expected.length} rows; ` +
      `column types: ${snap.columns.map((c) => `${c.name} ${c.type}`).join(', ')})\n` +
      `  missing from sluice (${missing.length}):\n${show(missing)}\n` +
      `  extra in sluice (${extra.length}):\n${show(extra)}\n${ctx()}`,
  });
}

/**
 * Regular expressions for the oracle (note 9): SQLite has none built in, so `s REGEXP p`,
 * regexp_count_js(s, p) and regexp_group_js(s, p) run JavaScript's backtracking RegExp — another
 * engine than Sluice's RE2, over the generators' few fixed patterns (plain syntax both agree on;
 * `s` flag: PostgreSQL's `.` matches a newline).
 */
function registerRegexFunctions(db: Database.Database): void {
  const strict =
    <T>(f: (s: string, p: string) => T) =>
    (s: unknown, p: unknown): T | null =>
      typeof s === 'string' && typeof p === 'string' ? f(s, p) : null;
  // SQLite calls regexp(pattern, subject) for `subject REGEXP pattern`
  db.function('regexp', { deterministic: true }, (p: unknown, s: unknown) =>
    strict((x, q) => (new RegExp(q, 's').test(x) ? 1 : 0))(s, p),
  );
  db.function(
    'regexp_count_js',
    { deterministic: true },
    strict((s, p) => [...s.matchAll(new RegExp(p, 'gs'))].length),
  );
  // the first match's first group, or the whole match (substring(s FROM p)); NULL without a match
  db.function(
    'regexp_group_js',
    { deterministic: true },
    strict((s, p) => {
      const m = new RegExp(p, 's').exec(s);
      if (m === null) return null;
      return m.length > 1 ? (m[1] ?? null) : m[0];
    }),
  );
}
