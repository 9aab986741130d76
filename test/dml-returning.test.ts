// RETURNING on INSERT, UPDATE and DELETE against SQLite (which has it since 3.35): random writes to
// a keyed and a keyless table, and now and then a statement with a RETURNING list; its returned rows
// (in any order: neither side promises one) and their column names equal SQLite's, and the tables
// and views after it too. Then what PostgreSQL 15 answers where the two differ or SQLite has no
// form (an UPDATE's alias, DELETE … USING), refusals that change nothing, and the result bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatementResult } from '../src/exec/api.ts';
import { Engine } from '../src/exec/engine.ts';
import type { Row } from '../src/common/types.ts';
import { assertViewMatchesOracle } from './support/sqlite-oracle.ts';
import { FILLER, dmlWorld, stepped } from './support/dml-oracle.ts';
import { assertRefused } from './support/sql-errors.ts';

/** Statements with RETURNING: [Sluice's text, SQLite's] (`c` a small random constant). */
const RETURNING: readonly ((c: number, row: string) => readonly [string, string])[] = [
  (_c, row) => [
    `INSERT INTO t VALUES (${row}) RETURNING *`,
    `INSERT OR REPLACE INTO t VALUES (${row}) RETURNING *`,
  ],
  (c) => same(`INSERT INTO lake VALUES (${c % 4}, ${c}), (NULL, ${c + 1}) RETURNING g, v, g * 10 + v AS gv`),
  (c) => same(`INSERT INTO lake SELECT g, v FROM t WHERE id < ${c} RETURNING v AS value, g`),
  (c) => same(`UPDATE t SET v = v + 1, s = s || 'x' WHERE g = ${c % 4} RETURNING id, v, s, v - id AS d`),
  (c) => same(`UPDATE t SET v = (SELECT MAX(w) FROM u WHERE u.id = t.id) WHERE g = ${c % 4} RETURNING id, v`),
  (c) => same(`UPDATE t SET v = u.w FROM u WHERE u.id = t.id AND u.w < ${c} RETURNING t.id, t.v, g`),
  (c) => same(`UPDATE lake SET v = NULL WHERE v > ${c + 10} RETURNING *`),
  // may move a key onto another: both sides refuse it whole
  (c) => same(`UPDATE t SET id = id + 3 WHERE g = ${c % 4} RETURNING id`),
  (c) => same(`DELETE FROM lake WHERE v < ${c} RETURNING *, v + g AS vg`),
  (c) => same(`DELETE FROM t WHERE id IN (SELECT id FROM u WHERE w > ${c}) RETURNING id, g, s`),
  (c) => same(`DELETE FROM u WHERE id = ${c} RETURNING w`),
];

function same(sql: string): readonly [string, string] {
  return [sql, sql];
}

/** Rows as sorted JSON arrays in column order, the two sides' common form. */
function sortedValues(columns: readonly string[], rows: readonly Row[]): string[] {
  // the oracle reads integers as bigints; Sluice's integer columns are numbers
  const plain = (v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : (v ?? null));
  return rows.map((r) => JSON.stringify(columns.map((c) => plain(r[c])))).sort();
}

for (const seed of [1, 2, 3, 4]) {
  test(`RETURNING answers what SQLite returns, and writes what it writes (seed ${seed})`, () => {
    const { engine, oracle, views, int, maybeNull, randomInsert } = dmlWorld(seed);
    let returned = 0;
    let refused = 0;
    for (let step = 0; step < 150; step++) {
      const kind = int(5);
      let sluiceSql: string;
      let sqliteSql: string;
      if (kind <= 1) {
        const row = `${int(30)}, ${maybeNull(4)}, ${maybeNull(25)}, '${'abc'[int(3)]}'`;
        [sluiceSql, sqliteSql] = RETURNING[int(RETURNING.length)]!(int(20), row);
      } else [sluiceSql, sqliteSql] = randomInsert((kind - 2) as 0 | 1 | 2);
      const at = `seed ${seed}, step ${step}: ${sluiceSql}`;
      let result: StatementResult | undefined;
      let sluiceError: unknown;
      try {
        result = engine.execute(sluiceSql)[0];
      } catch (error) {
        sluiceError = error;
      }
      let sqliteRows: Record<string, unknown>[] = [];
      let sqliteColumns: string[] = [];
      let sqliteError: unknown;
      try {
        const prepared = oracle.db.prepare(sqliteSql);
        if (kind <= 1) {
          sqliteColumns = prepared.columns().map((c) => c.name);
          sqliteRows = prepared.all() as Record<string, unknown>[];
        } else prepared.run();
      } catch (error) {
        sqliteError = error;
      }
      assert.equal(
        sluiceError === undefined,
        sqliteError === undefined,
        `${at}: ${String(sluiceError ?? sqliteError)}`,
      );
      if (sluiceError !== undefined) {
        assert.equal((sluiceError as { code?: string }).code, 'UNIQUE_VIOLATION', at);
        refused++;
      } else if (kind <= 1) {
        const columns = (result?.columns ?? []).map((c) => c.name);
        assert.deepEqual(columns, sqliteColumns, `${at}: columns`);
        const rows = result?.rows ?? [];
        assert.deepEqual(sortedValues(columns, rows), sortedValues(columns, sqliteRows as Row[]), at);
        assert.equal(result?.rowCount, rows.length, `${at}: rowCount`);
        returned += rows.length;
      }
      for (const name of views) assertViewMatchesOracle(engine, oracle, name, at);
    }
    assert.ok(returned > 40, `only ${returned} rows returned`);
    assert.ok(refused < 30, `${refused} statements refused`);
    oracle.close();
  });
}

/** A table and a view over it, two rows in each of t and u. */
function world(): Engine {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, v text, n integer NOT NULL);
CREATE TABLE u (id integer, w text);
CREATE MATERIALIZED VIEW tv AS SELECT COUNT(*) AS c, SUM(n) AS total FROM t;
INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20);
INSERT INTO u VALUES (1, 'x'), (2, 'y')`);
  return engine;
}

test('RETURNING as PostgreSQL 15 answers it: aliases, the target alias, new and old rows, USING', () => {
  const engine = world();
  const one = (sql: string): StatementResult => engine.execute(sql)[0]!;
  // PostgreSQL 15: id | n | twice | ?column? — 1 | 11 | 22 | ax
  const updated = one("UPDATE t AS z SET n = n + 1 WHERE id = 1 RETURNING z.id, n, n * 2 AS twice, v || 'x'");
  assert.deepEqual(
    updated.columns?.map((c) => `${c.name} ${c.type}`),
    ['id integer', 'n integer', 'twice integer', '?column? text'],
  );
  assert.deepEqual(updated.rows, [{ id: 1, n: 11, twice: 22, '?column?': 'ax' }]);
  assert.equal(updated.rowCount, 1);
  // the old row; DELETE … USING joins u, and the target's columns are returned
  const deleted = one("DELETE FROM t USING u WHERE u.id = t.id AND u.w = 'y' RETURNING t.*, upper(v)");
  assert.deepEqual(deleted.rows, [{ id: 2, v: 'b', n: 20, upper: 'B' }]);
  // nothing matched: no rows, the columns still named
  const none = one('DELETE FROM t WHERE id = 99 RETURNING id');
  assert.deepEqual([none.rowCount, none.rows, none.columns?.length], [0, [], 1]);
  // without RETURNING the answer is as it was: no columns, no rows
  assert.deepEqual(Object.keys(one("INSERT INTO t VALUES (3, 'c', 30)")).sort(), [
    'epoch',
    'object',
    'rowCount',
    'statement',
  ]);
  // an INSERT's row as stored: the omitted column NULL, the value cast to the column's type
  const inserted = one("INSERT INTO t (id, n) VALUES (4, '7') RETURNING *");
  assert.deepEqual(inserted.rows, [{ id: 4, v: null, n: 7 }]);
});

test('RETURNING refusals point at their cause and change nothing', () => {
  const engine = world();
  engine.executeScript('CREATE TABLE c (id integer PRIMARY KEY, at timestamptz DEFAULT now())');
  const epoch = engine.epoch;
  const tv = JSON.stringify(engine.viewSnapshot('tv').rows);
  assertRefused(engine, [
    // PostgreSQL 15's messages and positions
    ["INSERT INTO t VALUES (5, 'e', 1) RETURNING id / 0", 'DIVISION_BY_ZERO', 'division by zero', 44],
    ['DELETE FROM t WHERE id = 2 RETURNING v, count(*)', 'INVALID_AGGREGATE', 'not allowed in RETURNING', 41],
    [
      'DELETE FROM t RETURNING v, sum(n) OVER ()',
      'INVALID_DEFINITION',
      'window functions are not allowed in RETURNING',
      28,
    ],
    ['DELETE FROM t RETURNING u.*', 'UNKNOWN_TABLE', 'missing FROM-clause entry for table "u"', 25],
    ['UPDATE t SET n = 0 RETURNING nope', 'UNKNOWN_COLUMN', '"nope"', 30],
    ['UPDATE t AS z SET n = 0 RETURNING t.id', 'UNKNOWN_TABLE', '"t"', 35],
    // not yet: a subquery, the FROM list's columns, a clock default computed as the batch applies
    ['UPDATE t SET n = 0 RETURNING (SELECT 1)', 'NOT_SUPPORTED', 'a subquery in RETURNING', 31],
    ['UPDATE t SET n = 0 FROM u WHERE u.id = t.id RETURNING u.w', 'NOT_SUPPORTED', 'FROM list', 55],
    ['DELETE FROM t USING u WHERE u.id = t.id RETURNING u.*', 'NOT_SUPPORTED', 'FROM (USING)', 51],
    ['DELETE FROM t USING u WHERE u.id = t.id RETURNING id, *', 'NOT_SUPPORTED', '* over the USING list', 55],
    ['INSERT INTO c (id) VALUES (1) RETURNING *', 'NOT_SUPPORTED', 'clock default', 1],
  ]);
  assert.equal(engine.epoch, epoch, 'no epoch');
  assert.equal(JSON.stringify(engine.viewSnapshot('tv').rows), tv);
  // the clock default given a value: returned as written
  const given = engine.execute("INSERT INTO c VALUES (1, '2026-01-01 00:00:00+00') RETURNING id")[0];
  assert.deepEqual(given?.rows, [{ id: 1 }]);
});

test('RETURNING rows past the ad-hoc result bound refuse the statement whole; without RETURNING it runs', () => {
  const engine = world();
  engine.selectLimits = { maxRows: 3, maxBytes: 200 };
  const epoch = engine.epoch;
  const values = "(5, 'e', 1), (6, 'f', 1), (7, 'g', 1), (8, 'h', 1)";
  for (const sql of [
    `INSERT INTO t VALUES ${values} RETURNING id`,
    // four rows of 60 bytes' text each: under the row bound, past the bytes
    `INSERT INTO t VALUES (5, '${'e'.repeat(60)}', 1), (6, '${'f'.repeat(60)}', 1), (7, '${'g'.repeat(60)}', 1) RETURNING v`,
  ]) {
    assert.throws(
      () => engine.execute(sql),
      (e: unknown) => (e as { code?: string }).code === 'RESULT_TOO_LARGE',
      sql,
    );
  }
  engine.execute(`INSERT INTO t VALUES ${values}`);
  assert.throws(
    () => engine.execute('UPDATE t SET n = n + 1 RETURNING id'),
    (e: unknown) => /the rows this UPDATE returns is larger/.test((e as Error).message),
  );
  assert.throws(
    () => engine.execute('DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id > 1) RETURNING id'),
    (e: unknown) => (e as { code?: string }).code === 'RESULT_TOO_LARGE',
  );
  assert.equal(engine.epoch, epoch + 1, 'only the INSERT without RETURNING wrote');
  assert.equal(engine.execute('DELETE FROM t WHERE id > 5 RETURNING id')[0]?.rows?.length, 3);
});

test('a script run in slices returns the rows its write made, as of the write, or refuses whole', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, a integer);
CREATE TABLE u (id integer PRIMARY KEY)`);
  const filler = Array.from({ length: FILLER }, (_, i) => i + 100);
  engine.applyChanges('t', { insert: filler.map((id) => ({ id, a: 0 })) });
  engine.execute('INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)');
  engine.execute('INSERT INTO u VALUES (1), (2)');
  // the query reads t in slices; another row is written meanwhile; the write's rows are returned
  let epoch = engine.epoch;
  let result = stepped(engine, 'UPDATE t SET a = a + 1 WHERE id IN (SELECT id FROM u) RETURNING id, a', () =>
    engine.execute('UPDATE t SET a = 0 WHERE id = 3'),
  ).result;
  assert.equal(result.error, undefined);
  assert.deepEqual(result.results[0]?.rows, [
    { id: 1, a: 11 },
    { id: 2, a: 21 },
  ]);
  assert.equal(engine.epoch, epoch + 2);
  // past the bound once the query is done (its own rows are within it, the padded ones are not):
  // nothing written but the write made meanwhile
  engine.selectLimits = { maxRows: 10, maxBytes: 150 };
  epoch = engine.epoch;
  result = stepped(
    engine,
    "DELETE FROM t WHERE id IN (SELECT id FROM u) RETURNING *, repeat('x', 100) AS pad",
    () => engine.execute('UPDATE t SET a = 5 WHERE id = 3'),
  ).result;
  assert.match(result.error?.message ?? '', /^the rows this DELETE returns is larger than/);
  assert.equal(engine.epoch, epoch + 1);
  engine.selectLimits = { maxRows: Infinity, maxBytes: Infinity };
  assert.deepEqual(engine.execute('SELECT id, a FROM t WHERE id < 100 ORDER BY id')[0]?.rows, [
    { id: 1, a: 11 },
    { id: 2, a: 21 },
    { id: 3, a: 5 },
  ]);
});
