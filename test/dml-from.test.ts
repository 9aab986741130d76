// UPDATE … FROM and DELETE … USING against SQLite: random writes to three tables, a keyless one
// among them, and now and then such a statement (joins, FROM subqueries, a target alias, a keyless
// target whose rows match several FROM rows); after every statement the views over the tables equal
// SQLite running the same statements. SQLite, like PostgreSQL, sets a row that matches several FROM
// rows with different new values to whichever it meets first; Sluice refuses such a statement whole
// (CARDINALITY_VIOLATION): each statement that can be so carries the SQLite query counting the rows
// that would be, and Sluice must refuse exactly when that count is not zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { assertViewMatchesOracle } from './support/sqlite-oracle.ts';
import { FILLER, dmlWorld, stepped } from './support/dml-oracle.ts';
import { assertRefused } from './support/sql-errors.ts';

interface FromStatement {
  readonly sluice: string;
  /** SQLite's text when it differs (it has no DELETE … USING: rowids of the same join instead). */
  readonly sqlite?: string;
  /** SQLite counting the table rows the statement would set to more than one new value. */
  readonly ambiguous?: string;
}

/** Distinct new values, NULL counted as one. */
const distinct = (e: string): string => `COUNT(DISTINCT IFNULL(${e}, 'null'))`;

const STATEMENTS: readonly ((c: number) => FromStatement)[] = [
  (c) => ({ sluice: `UPDATE t SET v = u.w FROM u WHERE t.id = u.id AND u.w > ${c}` }),
  // several lake rows per t row, one new value: each t row written once
  () => ({ sluice: `UPDATE t SET s = 'f' FROM lake WHERE lake.g = t.g` }),
  (c) => ({
    sluice: `UPDATE t SET v = lake.v FROM lake WHERE lake.g = t.g AND t.id % 3 = ${c % 3}`,
    ambiguous: `SELECT COUNT(*) AS n FROM (SELECT t.id FROM t JOIN lake ON lake.g = t.g WHERE t.id % 3 = ${c % 3} GROUP BY t.id HAVING ${distinct('lake.v')} > 1)`,
  }),
  (c) => ({
    sluice: `UPDATE t AS x SET v = x.v + u.w, s = 'a' FROM u, lake WHERE x.id = u.id AND lake.g = x.g AND u.w < ${c}`,
  }),
  // a keyless target: every copy of a row written alike
  () => ({ sluice: `UPDATE lake SET v = u.w FROM u WHERE u.id = lake.g` }),
  (c) => ({ sluice: `UPDATE lake SET v = lake.v + 1 FROM t WHERE t.g = lake.g AND t.v > ${c}` }),
  (c) => ({
    sluice: `UPDATE lake SET v = t.v FROM t WHERE t.g = lake.g AND t.id < ${c + 10}`,
    ambiguous: `SELECT COUNT(*) AS n FROM (SELECT lake.rowid FROM lake JOIN t ON t.g = lake.g WHERE t.id < ${c + 10} GROUP BY lake.rowid HAVING ${distinct('t.v')} > 1)`,
  }),
  // a derived table in FROM, a join in FROM
  () => ({
    sluice: `UPDATE t SET v = s.total FROM (SELECT g, SUM(v) AS total FROM lake GROUP BY g) AS s WHERE s.g = t.g`,
  }),
  (c) => ({
    sluice: `UPDATE u SET w = t.v FROM t JOIN lake ON lake.g = t.g WHERE t.id = u.id AND lake.v > ${c}`,
  }),
  (c) => ({
    sluice: `DELETE FROM t USING u WHERE t.id = u.id AND u.w < ${c}`,
    sqlite: `DELETE FROM t WHERE rowid IN (SELECT t.rowid FROM t, u WHERE t.id = u.id AND u.w < ${c})`,
  }),
  (c) => ({
    sluice: `DELETE FROM lake USING t WHERE lake.g = t.g AND t.v > ${c}`,
    sqlite: `DELETE FROM lake WHERE rowid IN (SELECT lake.rowid FROM lake, t WHERE lake.g = t.g AND t.v > ${c})`,
  }),
  () => ({
    sluice: `DELETE FROM lake AS l USING u JOIN t ON u.id = t.id WHERE l.v = t.v`,
    sqlite: `DELETE FROM lake WHERE rowid IN (SELECT l.rowid FROM lake AS l, u JOIN t ON u.id = t.id WHERE l.v = t.v)`,
  }),
  // a subquery in the WHERE beside the USING list
  (c) => ({
    sluice: `DELETE FROM u USING t WHERE t.id = u.id AND t.g IN (SELECT g FROM lake WHERE v < ${c})`,
    sqlite: `DELETE FROM u WHERE rowid IN (SELECT u.rowid FROM u, t WHERE t.id = u.id AND t.g IN (SELECT g FROM lake WHERE v < ${c}))`,
  }),
];

for (const seed of [1, 2, 3, 4]) {
  test(`UPDATE … FROM and DELETE … USING equal SQLite after every statement (seed ${seed})`, () => {
    const { engine, oracle, views, int, randomInsert } = dmlWorld(seed, [
      ['t_lake', 'SELECT t.id, lake.v FROM t JOIN lake ON t.g = lake.g'],
    ]);
    let written = 0;
    let refusedAmbiguous = 0;
    let acceptedAmbiguous = 0;
    for (let step = 0; step < 160; step++) {
      const kind = int(5);
      if (kind >= 2) {
        const [sluiceSql, sqliteSql] = randomInsert((kind - 2) as 0 | 1 | 2);
        if (sluiceSql.startsWith('INSERT INTO t') || sluiceSql.startsWith('INSERT INTO u')) {
          // a repeated key replaces the row on both sides
          const [table, id] = /INTO (\w) VALUES \((\d+)/.exec(sluiceSql)!.slice(1);
          engine.execute(`DELETE FROM ${table} WHERE id = ${id}`);
        }
        engine.execute(sluiceSql);
        oracle.db.exec(sqliteSql);
        continue;
      }
      const stmt = STATEMENTS[int(STATEMENTS.length)]!(int(20));
      const at = `seed ${seed}, step ${step}: ${stmt.sluice}`;
      const ambiguousRows =
        stmt.ambiguous === undefined ? 0 : (oracle.db.prepare(stmt.ambiguous).get() as { n: number }).n;
      const epoch = engine.epoch;
      let sluiceError: { code?: string } | undefined;
      let rowCount: number | undefined;
      try {
        rowCount = engine.execute(stmt.sluice)[0]?.rowCount;
      } catch (error) {
        sluiceError = error as { code?: string };
      }
      if (ambiguousRows > 0) {
        assert.equal(sluiceError?.code, 'CARDINALITY_VIOLATION', `${at}: ${ambiguousRows} ambiguous rows`);
        assert.equal(engine.epoch, epoch, `${at}: nothing written`);
        refusedAmbiguous++;
      } else {
        assert.equal(sluiceError, undefined, `${at}: ${String(sluiceError)}`);
        const changes = Number(oracle.db.prepare(stmt.sqlite ?? stmt.sluice).run().changes);
        assert.equal(rowCount, changes, `${at}: rows changed`);
        written += changes;
        if (stmt.ambiguous !== undefined) acceptedAmbiguous++;
      }
      for (const name of views) assertViewMatchesOracle(engine, oracle, name, at);
    }
    assert.ok(written > 30, `only ${written} rows changed by UPDATE … FROM and DELETE … USING`);
    assert.ok(refusedAmbiguous > 0, 'no statement was refused as ambiguous');
    assert.ok(acceptedAmbiguous > 0, 'no statement that could be ambiguous ran');
    oracle.close();
  });
}

test('UPDATE … FROM and DELETE … USING: refusals point at their cause and change nothing', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, a integer);
CREATE TABLE u (id integer PRIMARY KEY, b integer);
CREATE TABLE m (k integer, b integer);
CREATE TABLE j (x integer) APPEND ONLY;
CREATE MATERIALIZED VIEW tv AS SELECT COUNT(*) AS n, SUM(a) AS total FROM t`);
  engine.execute('INSERT INTO t VALUES (1, 10), (2, 20)');
  engine.execute('INSERT INTO u VALUES (1, 100), (2, 200)');
  engine.execute('INSERT INTO m VALUES (1, 5), (1, 6), (2, 7), (2, 7)');
  const epoch = engine.epoch;
  assertRefused(engine, [
    // one row of t matched by m rows giving 5 and 6: at the FROM
    ['UPDATE t SET a = m.b FROM m WHERE m.k = t.id', 'CARDINALITY_VIOLATION', 'more than one new value', 22],
    ['UPDATE t x SET a = 1 FROM u WHERE t.id = u.id', 'UNKNOWN_TABLE', '"t"', 35],
    ['UPDATE t SET a = 1 FROM t WHERE t.id = 1', 'DUPLICATE_ALIAS', '"t"', 25],
    ['UPDATE t SET a = u.b FROM u WHERE t.id = u.id ORDER BY 1', 'SYNTAX_ERROR', '"ORDER"', 47],
    // PostgreSQL's `*` there holds u's columns too, which RETURNING cannot reach yet
    [
      'UPDATE t SET a = u.b FROM u WHERE t.id = u.id RETURNING *',
      'NOT_SUPPORTED',
      '* over the FROM list',
      57,
    ],
    ['UPDATE t SET a = 1 USING u', 'SYNTAX_ERROR', '"USING"', 20],
    ['DELETE FROM t FROM u', 'SYNTAX_ERROR', '"FROM"', 15],
    ['UPDATE t SET a = 1 FROM', 'SYNTAX_ERROR', 'end of input', 24],
    ['UPDATE t SET a = u.nope FROM u WHERE t.id = u.id', 'UNKNOWN_COLUMN', 'u.nope', 18],
    ['UPDATE t SET a = u.b FROM nope WHERE t.id = 1', 'UNKNOWN_TABLE', '"nope"', 27],
    ['UPDATE t SET a = u.b FROM u WHERE u.b', 'TYPE_MISMATCH', 'boolean', 35],
    ['DELETE FROM t USING u WHERE count(u.b) > 0', 'INVALID_AGGREGATE', 'not allowed in WHERE', 29],
    ['UPDATE tv SET n = 1 FROM u', 'WRONG_OBJECT_KIND', 'materialized view "tv"', 1],
    ['DELETE FROM j USING u WHERE j.x = u.id', 'APPEND_ONLY_TABLE', 'j', 1],
    // a column set twice, with or without a FROM list (PostgreSQL: "multiple assignments to same column")
    ['UPDATE t SET a = 1, a = 2', 'DUPLICATE_COLUMN', 'multiple assignments to same column "a"', 21],
    ['UPDATE t SET a = u.b, a = 2 FROM u', 'DUPLICATE_COLUMN', 'multiple assignments', 23],
    // a key moved onto a row the statement does not move
    ['UPDATE t SET id = 2 FROM u WHERE t.id = 1 AND u.id = 1', 'UNIQUE_VIOLATION', 'primary key', 1],
  ]);
  assert.equal(engine.epoch, epoch, 'nothing written');
  assert.deepEqual(engine.viewSnapshot('tv').rows, [{ n: 2, total: 30 }]);
  // The same new value from every match: written once.
  assert.equal(engine.execute('UPDATE t SET a = m.b FROM m WHERE m.k = t.id AND m.k = 2')[0]?.rowCount, 1);
  assert.deepEqual(engine.viewSnapshot('tv').rows, [{ n: 2, total: 17 }]);
  // The bound on rows one statement may change counts table rows, not joined rows.
  engine.maxDmlRows = 1;
  assert.equal(engine.execute('DELETE FROM t USING m WHERE m.k = t.id AND t.id = 2')[0]?.rowCount, 1);
  assert.throws(() => engine.execute('DELETE FROM m USING u WHERE m.k = u.id'), { code: 'EPOCH_TOO_LARGE' });
  assert.deepEqual(engine.viewSnapshot('tv').rows, [{ n: 1, total: 10 }]);
});

test('a stepped UPDATE … FROM or DELETE … USING is refused whole when rows it read changed meanwhile', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE t (id integer PRIMARY KEY, a integer);
CREATE TABLE m (x integer, y integer);
CREATE TABLE u (id integer PRIMARY KEY, b integer)`);
  const filler = Array.from({ length: FILLER }, (_, i) => i + 100);
  engine.applyChanges('t', { insert: filler.map((id) => ({ id, a: 0 })) });
  engine.applyChanges('m', { insert: filler.map((x) => ({ x, y: 0 })) });
  engine.execute('INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)');
  engine.execute('INSERT INTO m VALUES (1, 1), (1, 1), (2, 2)');
  engine.execute('INSERT INTO u VALUES (1, 5), (2, 6)');
  const read = (sql: string): unknown => engine.execute(sql)[0]?.rows;
  // Another row written meanwhile: the statement applies, and counts the rows its query read.
  let epoch = engine.epoch;
  let run = stepped(engine, 'UPDATE t SET a = t.a + u.b FROM u WHERE t.id = u.id', () =>
    engine.execute('UPDATE t SET a = 0 WHERE id = 3'),
  );
  assert.equal(run.result.error, undefined);
  assert.equal(engine.epoch, epoch + 2);
  assert.ok(run.examined >= FILLER, `${run.examined} rows examined`);
  // Counted the same however many slices the query ran in.
  const whole = engine.runScript('UPDATE t SET a = t.a + u.b FROM u WHERE t.id = u.id AND u.b < 0');
  assert.equal(whole.step(Infinity)?.error, undefined);
  assert.equal(whole.dmlRowsRead, run.examined);
  assert.deepEqual(read('SELECT id, a FROM t WHERE id < 100 ORDER BY id'), [
    { id: 1, a: 15 },
    { id: 2, a: 26 },
    { id: 3, a: 0 },
  ]);
  // A row it read updated meanwhile: writing its update would undo the newer value.
  epoch = engine.epoch;
  run = stepped(engine, 'UPDATE t SET a = t.a + u.b FROM u WHERE t.id = u.id', () =>
    engine.execute('UPDATE t SET a = 7 WHERE id = 2'),
  );
  assert.equal(run.result.error?.code, 'SERIALIZATION_FAILURE');
  assert.equal(engine.epoch, epoch + 1, 'only the update between');
  // A keyless table written meanwhile, even a row it did not read: the copies it counted may be
  // gone, so it is refused.
  epoch = engine.epoch;
  run = stepped(engine, 'DELETE FROM m USING u WHERE m.x = u.id', () =>
    engine.applyChanges('m', { insert: [{ x: 9, y: 9 }] }),
  );
  assert.equal(run.result.error?.code, 'SERIALIZATION_FAILURE');
  assert.equal(engine.epoch, epoch + 1);
  assert.deepEqual(read('SELECT COUNT(*) AS n FROM m WHERE x < 100'), [{ n: 4 }]);
  // Another table written meanwhile: it applies, each copy deleted.
  run = stepped(engine, 'DELETE FROM m USING u WHERE m.x = u.id', () =>
    engine.execute('INSERT INTO u VALUES (50, 0)'),
  );
  assert.equal(run.result.error, undefined);
  assert.equal(run.result.results[0]?.rowCount, 3);
  assert.deepEqual(read('SELECT x FROM m WHERE x < 100'), [{ x: 9 }]);
});
