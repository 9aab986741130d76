// UPDATE and DELETE with subqueries in SET and WHERE (IN, NOT IN, EXISTS, scalar; correlated or
// not) against SQLite: random writes to three tables, a keyless one among them, and now and then
// such a statement; after every statement the tables and the views over them equal SQLite running
// the same statements, and a statement one side refuses the other refuses too, changing nothing.
// The statement's rows are read by one query at the current epoch and written as one epoch; run in
// slices (a server's script) it is refused whole if another write changed a row it read meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { assertViewMatchesOracle } from './support/sqlite-oracle.ts';
import { FILLER, dmlWorld, stepped } from './support/dml-oracle.ts';
import { assertRefused } from './support/sql-errors.ts';

/** Statements with a subquery, the same text for both (`c` a small random constant). */
const WITH_SUBQUERY: readonly ((c: number) => string | readonly [string, string])[] = [
  (c) => `DELETE FROM t WHERE id IN (SELECT id FROM u WHERE w > ${c})`,
  (c) => `DELETE FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.id = t.id) AND v > ${c}`,
  (c) => `UPDATE t SET v = (SELECT MAX(w) FROM u WHERE u.id = t.id) WHERE g = ${c % 4}`,
  (c) => `UPDATE t SET v = v + (SELECT COUNT(*) FROM lake WHERE lake.g = t.g) WHERE id % 3 = ${c % 3}`,
  // NULL-sensitive: one NULL among t's v and no lake row is deleted
  () => `DELETE FROM lake WHERE v NOT IN (SELECT v FROM t)`,
  (c) => `DELETE FROM lake WHERE v NOT IN (SELECT v FROM t WHERE v IS NOT NULL AND g = ${c % 4})`,
  (c) =>
    `UPDATE lake SET v = (SELECT SUM(w) FROM u WHERE u.id = lake.g) WHERE g IN (SELECT g FROM t WHERE v < ${c})`,
  () => `UPDATE t SET g = (SELECT MIN(g) FROM lake), s = 'm' WHERE id IN (SELECT id FROM u)`,
  () => `DELETE FROM u WHERE w > (SELECT AVG(v) FROM t)`,
  () => `UPDATE u SET w = w + 1 WHERE EXISTS (SELECT 1 FROM lake WHERE lake.g = u.id % 4)`,
  // may move a key onto another: both sides refuse it whole
  (c) => `UPDATE t SET id = id + 3 WHERE id IN (SELECT id FROM u WHERE w % 5 = ${c % 5})`,
  // SQLite has no = ANY (subquery): its IN is the same predicate
  (c) => [
    `UPDATE t SET s = 'q' WHERE v = ANY (SELECT w FROM u WHERE id < ${c * 2})`,
    `UPDATE t SET s = 'q' WHERE v IN (SELECT w FROM u WHERE id < ${c * 2})`,
  ],
];

for (const seed of [1, 2, 3, 4]) {
  test(`UPDATE and DELETE with subqueries equal SQLite after every statement (seed ${seed})`, () => {
    const { engine, oracle, views, int, randomInsert } = dmlWorld(seed);
    let written = 0;
    let refused = 0;
    for (let step = 0; step < 150; step++) {
      const kind = int(5);
      let sluiceSql: string;
      let sqliteSql: string;
      if (kind <= 1) {
        const sql = WITH_SUBQUERY[int(WITH_SUBQUERY.length)]!(int(20));
        [sluiceSql, sqliteSql] = typeof sql === 'string' ? [sql, sql] : sql;
      } else [sluiceSql, sqliteSql] = randomInsert((kind - 2) as 0 | 1 | 2);
      let sluiceError: unknown;
      let rowCount: number | undefined;
      try {
        rowCount = engine.execute(sluiceSql)[0]?.rowCount;
      } catch (error) {
        sluiceError = error;
      }
      let sqliteError: unknown;
      let changes = 0;
      try {
        changes = Number(oracle.db.prepare(sqliteSql).run().changes);
      } catch (error) {
        sqliteError = error;
      }
      const at = `seed ${seed}, step ${step}: ${sluiceSql}`;
      assert.equal(
        sluiceError === undefined,
        sqliteError === undefined,
        `${at}: ${String(sluiceError ?? sqliteError)}`,
      );
      if (sluiceError !== undefined) {
        assert.equal((sluiceError as { code?: string }).code, 'UNIQUE_VIOLATION', at);
        refused++;
      } else if (kind <= 1) {
        assert.equal(rowCount, changes, `${at}: rows changed`);
        written += changes;
      }
      for (const name of views) assertViewMatchesOracle(engine, oracle, name, at);
    }
    assert.ok(written > 20, `only ${written} rows changed by statements with a subquery`);
    assert.ok(refused < 30, `${refused} statements refused`);
    oracle.close();
  });
}

test('UPDATE and DELETE with a subquery: refusals point at their cause and change nothing', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, a integer);
CREATE TABLE u (id integer PRIMARY KEY, b integer);
CREATE TABLE j (x integer) APPEND ONLY;
CREATE MATERIALIZED VIEW tv AS SELECT COUNT(*) AS n FROM t`);
  engine.execute('INSERT INTO t VALUES (1, 10), (2, 20)');
  engine.execute('INSERT INTO u VALUES (1, 100), (2, 200)');
  const epoch = engine.epoch;
  assertRefused(engine, [
    ['UPDATE t SET a = max((SELECT 1))', 'INVALID_AGGREGATE', 'not allowed in UPDATE', 18],
    ['UPDATE t SET a = rank() OVER () WHERE id IN (SELECT 1)', 'NOT_SUPPORTED', 'window function', 18],
    ['UPDATE t SET zz = (SELECT 1)', 'UNKNOWN_COLUMN', 'column "zz" of relation "t"', 14],
    ['UPDATE t SET a = (SELECT nope FROM u)', 'UNKNOWN_COLUMN', '"nope"', 26],
    [
      "UPDATE t SET a = (SELECT 'x'::text)",
      'TYPE_MISMATCH',
      'is of type integer but expression is of type text',
      19,
    ],
    ['UPDATE tv SET n = (SELECT 1)', 'WRONG_OBJECT_KIND', 'materialized view "tv"', 1],
    ['DELETE FROM j WHERE x IN (SELECT 1)', 'APPEND_ONLY_TABLE', 'j', 1],
    [
      'DELETE FROM t WHERE a IN (SELECT b FROM u) OR id = 2',
      'NOT_SUPPORTED',
      'subquery in this position',
      27,
    ],
    ['DELETE FROM t WHERE (SELECT 1)', 'TYPE_MISMATCH', 'boolean', 22],
    ['DELETE FROM t WHERE id = count((SELECT 1))', 'INVALID_AGGREGATE', 'not allowed in WHERE', 26],
    // a subquery where the statement has no query to read it: VALUES, a column DEFAULT
    ['INSERT INTO t VALUES ((SELECT 5), 1)', 'NOT_SUPPORTED', 'subquery', 24],
    ['CREATE TABLE d (x integer DEFAULT (SELECT 1))', 'NOT_SUPPORTED', 'subquery', 36],
  ]);
  // More than one row for a row's scalar subquery: the whole statement is refused.
  assert.throws(() => engine.execute('UPDATE t SET a = (SELECT b FROM u)'), {
    code: 'CARDINALITY_VIOLATION',
  });
  assert.equal(engine.epoch, epoch, 'nothing written');
  assert.deepEqual(engine.viewSnapshot('tv').rows, [{ n: 2 }]);
  // The statement's bound on rows holds as for one without a subquery.
  engine.maxDmlRows = 1;
  assert.throws(() => engine.execute('DELETE FROM t WHERE id IN (SELECT id FROM u)'), {
    code: 'EPOCH_TOO_LARGE',
  });
  assert.equal(engine.epoch, epoch, 'nothing written');
});

test('a stepped UPDATE or DELETE with a subquery is refused whole when a row it read changed meanwhile', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, a integer);
CREATE TABLE m (x integer, y integer);
CREATE TABLE u (id integer PRIMARY KEY)`);
  const filler = Array.from({ length: FILLER }, (_, i) => i + 100);
  engine.applyChanges('t', { insert: filler.map((id) => ({ id, a: 0 })) });
  engine.applyChanges('m', { insert: filler.map((x) => ({ x, y: 0 })) });
  engine.execute('INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)');
  engine.execute('INSERT INTO m VALUES (1, 1), (1, 1), (2, 2)');
  engine.execute('INSERT INTO u VALUES (1), (2)');
  const read = (sql: string): unknown => engine.execute(sql)[0]?.rows;
  // A write to another row between the query's start and its write: the statement applies.
  let epoch = engine.epoch;
  let result = stepped(engine, 'UPDATE t SET a = a + 1 WHERE id IN (SELECT id FROM u)', () =>
    engine.execute('UPDATE t SET a = 0 WHERE id = 3'),
  ).result;
  assert.equal(result.error, undefined);
  assert.equal(engine.epoch, epoch + 2);
  const rows = [
    { id: 1, a: 11 },
    { id: 2, a: 21 },
    { id: 3, a: 0 },
  ];
  assert.deepEqual(read('SELECT id, a FROM t WHERE id < 100 ORDER BY id'), rows);
  // A row it read deleted meanwhile: writing its update would bring it back.
  epoch = engine.epoch;
  result = stepped(engine, 'UPDATE t SET a = a + 1 WHERE id IN (SELECT id FROM u)', () =>
    engine.execute('DELETE FROM t WHERE id = 2'),
  ).result;
  assert.equal(result.error?.code, 'SERIALIZATION_FAILURE');
  assert.equal(engine.epoch, epoch + 1, 'only the delete between');
  assert.deepEqual(read('SELECT id, a FROM t WHERE id < 100 ORDER BY id'), [rows[0], rows[2]]);
  // A row it read updated meanwhile: deleting by its key would delete the newer row.
  epoch = engine.epoch;
  result = stepped(engine, 'DELETE FROM t WHERE id IN (SELECT id FROM u)', () =>
    engine.execute('UPDATE t SET a = 5 WHERE id = 1'),
  ).result;
  assert.equal(result.error?.code, 'SERIALIZATION_FAILURE');
  assert.equal(engine.epoch, epoch + 1);
  assert.deepEqual(read('SELECT id, a FROM t WHERE id < 100 ORDER BY id'), [{ id: 1, a: 5 }, rows[2]]);
  // A table without a key: one of two equal rows deleted meanwhile.
  epoch = engine.epoch;
  result = stepped(engine, 'DELETE FROM m WHERE x IN (SELECT id FROM u)', () =>
    engine.applyChanges('m', { delete: [{ x: 1, y: 1 }] }),
  ).result;
  assert.equal(result.error?.code, 'SERIALIZATION_FAILURE');
  assert.equal(engine.epoch, epoch + 1);
  assert.deepEqual(read('SELECT COUNT(*) AS n FROM m WHERE x < 100'), [{ n: 2 }]);
  // Nothing it read changed meanwhile: it applies.
  result = stepped(engine, 'DELETE FROM m WHERE x IN (SELECT id FROM u)', () =>
    engine.applyChanges('m', { insert: [{ x: 7, y: 7 }] }),
  ).result;
  assert.equal(result.error, undefined);
  assert.deepEqual(read('SELECT x FROM m WHERE x < 100'), [{ x: 7 }]);
});
