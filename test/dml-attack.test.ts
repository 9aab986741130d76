// DML as an outside client would attack it, each answer compared with PostgreSQL 15's: a primary key
// repeated within one INSERT (PostgreSQL refuses the statement; Sluice had kept the last row and
// counted them all), a text expression into a numeric column (PostgreSQL has no assignment cast for
// it; Sluice had parsed the text), and an UPDATE or DELETE of more rows than one epoch should hold
// (the server bounds it; refused before the table is read to its end, nothing changed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { SluiceError } from '../src/common/errors.ts';
import type { Value } from '../src/common/types.ts';

function refusal(engine: Engine, sql: string): SluiceError {
  try {
    engine.execute(sql);
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    return error;
  }
  assert.fail(`expected ${sql} to be refused`);
}

function rowsOf(engine: Engine, sql: string): readonly Record<string, Value>[] {
  const [result] = engine.execute(sql);
  return (result?.rows ?? []) as readonly Record<string, Value>[];
}

function ids(engine: Engine): Value[] {
  return rowsOf(engine, 'SELECT id FROM t ORDER BY id').map((r) => r.id as Value);
}

function keyedEngine(): Engine {
  const engine = new Engine();
  engine.execute(`CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL, n integer);
    CREATE MATERIALIZED VIEW t_count AS SELECT count(*) AS c FROM t;
    INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)`);
  return engine;
}

test('a primary key repeated within one INSERT refuses the statement, nothing written', () => {
  const engine = keyedEngine();
  const epoch = engine.epoch;
  for (const sql of [
    `INSERT INTO t VALUES (50, 'x', 1), (50, 'y', 2)`,
    `INSERT INTO t SELECT 60, 'x', 1 FROM t`,
    `INSERT INTO t SELECT id, v, n FROM t UNION ALL SELECT id, v, n FROM t`,
  ]) {
    const error = refusal(engine, sql);
    assert.equal(error.code, 'UNIQUE_VIOLATION', sql);
    assert.match(error.detail ?? '', /Key \(id\)=\((50|60|1)\) appears more than once/, sql);
  }
  assert.equal(engine.epoch, epoch);
  assert.deepEqual(ids(engine), [1, 2]);
  // A key the table holds is still replaced (Sluice's upsert, documented), one row per key.
  const [r] = engine.execute(`INSERT INTO t VALUES (2, 'B', 20), (3, 'c', 3)`);
  assert.equal(r?.rowCount, 2);
  assert.deepEqual(ids(engine), [1, 2, 3]);
  assert.deepEqual(rowsOf(engine, 'SELECT c FROM t_count'), [{ c: 3 }]);
});

test('a text expression into a non-text column is a TYPE_MISMATCH, as in PostgreSQL; a literal still casts', () => {
  const engine = keyedEngine();
  const epoch = engine.epoch;
  for (const sql of [
    `INSERT INTO t (id, v) SELECT v, v FROM t WHERE id = 1`,
    `INSERT INTO t (id, v) SELECT n::text, 'q' FROM t WHERE id = 1`,
    `INSERT INTO t (id, v) VALUES ('7'::text, 'q')`,
    `UPDATE t SET n = v WHERE id = 1`,
    `UPDATE t SET n = CASE WHEN id = 1 THEN '7' ELSE '8' END WHERE id = 1`,
  ]) {
    const error = refusal(engine, sql);
    assert.equal(error.code, 'TYPE_MISMATCH', sql);
    assert.match(error.message, /column "(id|n)" is of type integer but expression is of type text/, sql);
  }
  assert.equal(engine.epoch, epoch);
  // An untyped literal, an explicit cast, and a number into text are assignments PostgreSQL makes.
  engine.execute(`INSERT INTO t (id, v) SELECT '7', 'x';
    INSERT INTO t (id, v) SELECT CAST(n::text AS integer) + 10, n FROM t WHERE id = 1;
    INSERT INTO t (id, v) VALUES ('8', 9)`);
  assert.deepEqual(ids(engine), [1, 2, 7, 8, 11]);
  // UPDATE's SET takes an untyped literal as its column's type too (PostgreSQL: UPDATE 1).
  engine.execute(`UPDATE t SET n = '6' WHERE id = 1`);
  assert.deepEqual(engine.execute('SELECT n FROM t WHERE id = 1')[0]?.rows, [{ n: 6 }]);
});

test('an UPDATE or DELETE past the row bound is refused as soon as the bound is passed, nothing changed', () => {
  const engine = new Engine();
  engine.execute(`CREATE TABLE t (id integer PRIMARY KEY, g integer);
    CREATE TABLE lake (g integer);
    CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) AS c FROM t GROUP BY g`);
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i, g: i % 2 }));
  engine.applyChanges('t', { insert: rows });
  engine.applyChanges('lake', { insert: Array.from({ length: 300 }, () => ({ g: 1 })) });
  engine.maxDmlRows = 100;
  const epoch = engine.epoch;
  for (const [sql, table] of [
    ['DELETE FROM t', 't'],
    ['UPDATE t SET g = g + 1 WHERE g = 0', 't'],
    ['DELETE FROM lake', 'lake'],
  ] as const) {
    const run = engine.runScript(sql, {});
    const ended = run.step(Infinity);
    const error = ended?.error;
    assert.ok(error instanceof SluiceError, sql);
    assert.equal(error.code, 'EPOCH_TOO_LARGE', sql);
    assert.match(error.message, new RegExp(`more than 100 rows of table "${table}"`));
    assert.ok(error.hint !== undefined && /in parts/.test(error.hint));
    // The scan stops at the bound: a WHERE matching every other row reads about 200 rows, not 1,000.
    assert.ok(run.dmlRowsRead <= 202, `${sql}: ${run.dmlRowsRead} rows read`);
  }
  assert.equal(engine.epoch, epoch);
  assert.deepEqual(rowsOf(engine, 'SELECT g, c FROM by_g ORDER BY g'), [
    { g: 0, c: 500 },
    { g: 1, c: 500 },
  ]);
  // At the bound, and by key, it is accepted.
  const [del] = engine.execute('DELETE FROM t WHERE id < 100');
  assert.equal(del?.rowCount, 100);
  const [upd] = engine.execute('UPDATE t SET g = 5 WHERE id IN (100, 101)');
  assert.equal(upd?.rowCount, 2);
  assert.deepEqual(rowsOf(engine, 'SELECT count(*) AS c FROM t'), [{ c: 900 }]);
});

test('WITH before INSERT reads its queries as PostgreSQL does; before UPDATE, DELETE or VALUES it is refused by name', () => {
  const engine = new Engine();
  engine.execute(`CREATE TABLE t (id integer PRIMARY KEY, v text);
    CREATE TABLE s (id integer, v text);
    INSERT INTO s VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
  const [one] = engine.execute(
    `WITH x AS (SELECT id, v FROM s WHERE id > 1) INSERT INTO t SELECT id, v FROM x`,
  );
  assert.equal(one?.rowCount, 2);
  const [two] = engine.execute(`WITH x (a, b) AS (SELECT id, v FROM s), y AS (SELECT a + 10 AS a, b FROM x)
    INSERT INTO t (id, v) SELECT a, b FROM y WHERE a > 11`);
  assert.equal(two?.rowCount, 2);
  assert.deepEqual(ids(engine), [2, 3, 12, 13]);
  const epoch = engine.epoch;
  for (const [sql, message, column] of [
    [`WITH x AS (SELECT 1) UPDATE t SET v = 'z'`, 'WITH before UPDATE is not supported', 22],
    [`WITH x AS (SELECT 1) DELETE FROM t`, 'WITH before DELETE is not supported', 22],
    [
      `WITH x AS (SELECT 1) INSERT INTO t VALUES (5, 'q')`,
      'WITH before INSERT … VALUES is not supported',
      36,
    ],
    // An error in the moved query still points into the text as it was written.
    [`WITH x AS (SELECT id FROM s) INSERT INTO t SELECT id, v FROM x`, 'column "v" does not exist', 55],
  ] as const) {
    const error = refusal(engine, sql);
    assert.ok(error.message.includes(message), `${sql}: ${error.message}`);
    assert.deepEqual(error.position, { line: 1, column }, sql);
  }
  assert.equal(engine.epoch, epoch);
});

test('INSERT … SELECT into a target it cannot write is refused before its query reads a row', () => {
  const engine = new Engine();
  engine.execute(`CREATE TABLE t (id integer PRIMARY KEY, v text);
    CREATE MATERIALIZED VIEW tv AS SELECT id, v FROM t`);
  engine.applyChanges('t', { insert: Array.from({ length: 500 }, (_, i) => ({ id: i, v: `v${i}` })) });
  for (const [sql, code] of [
    ['INSERT INTO tv SELECT id, v FROM t', 'WRONG_OBJECT_KIND'],
    ['INSERT INTO nowhere SELECT id, v FROM t', 'UNKNOWN_TABLE'],
    ['INSERT INTO t (id, nope) SELECT id, v FROM t', 'UNKNOWN_COLUMN'],
    ['INSERT INTO t (id, id) SELECT id, id FROM t', 'DUPLICATE_COLUMN'],
  ] as const) {
    const run = engine.runScript(sql, {});
    const ended = run.step(Infinity);
    assert.equal(ended?.error?.code, code, sql);
    assert.equal(run.rowsRead, 0, `${sql}: the query read ${run.rowsRead} rows`);
  }
});
