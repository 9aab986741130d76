// INSERT … SELECT against SQLite: random inserts, updates and deletes on a source table, and now and
// then `INSERT INTO <target> SELECT …` of a filtered, projected, aggregated or joined query of it
// (into a keyless table, and into a keyed one where a row of an existing key replaces it, which
// SQLite spells INSERT OR REPLACE). After every statement each target table and the views over them
// equal SQLite running the same statements. The query is read at the current epoch and its rows are
// one write: journaled as rows, so a restart replays what was inserted, not the query (a clock read
// in it comes back as it was).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { SqliteOracle, assertViewMatchesOracle } from './support/sqlite-oracle.ts';
import { mulberry32 } from './support/checkpoint-workload.ts';
import { afterCrash } from './server/helpers.ts';
import { assertRefused, type RefusedStatement } from './support/sql-errors.ts';

const SCHEMA = `CREATE TABLE src (id integer PRIMARY KEY, g integer, v integer, s text);
CREATE TABLE lake (g integer, v integer, s text);
CREATE TABLE keyed (id integer PRIMARY KEY, g integer, total integer);
CREATE MATERIALIZED VIEW lake_by_g AS SELECT g, COUNT(*) AS n, SUM(v) AS total FROM lake GROUP BY g;
CREATE MATERIALIZED VIEW lake_all AS SELECT g, v, s FROM lake;
CREATE MATERIALIZED VIEW keyed_all AS SELECT id, g, total FROM keyed`;
const VIEWS = ['lake_by_g', 'lake_all', 'keyed_all'];

/** INSERT … SELECTs as Sluice takes them, and as SQLite does (INSERT OR REPLACE into the keyed table). */
const INSERTS: readonly ((c: number) => readonly [string, string])[] = [
  (c) => same(`INSERT INTO lake SELECT g, v, s FROM src WHERE v > ${c}`),
  (c) => same(`INSERT INTO lake (g, v) SELECT g, v * 2 FROM src WHERE g = ${c % 4}`),
  () => same(`INSERT INTO lake (g, v, s) SELECT g, SUM(v), MIN(s) FROM src GROUP BY g`),
  (c) =>
    same(
      `INSERT INTO lake SELECT a.g, b.v, a.s FROM src a JOIN src b ON a.g = b.g AND a.id < b.id WHERE a.v < ${c}`,
    ),
  () => same(`INSERT INTO lake SELECT * FROM (VALUES (NULL, 1, 'x'), (7, NULL, NULL)) AS t`),
  (c) => {
    const q = `SELECT id, g, v + ${c} FROM src WHERE id % 3 = ${c % 3}`;
    return [`INSERT INTO keyed ${q}`, `INSERT OR REPLACE INTO keyed ${q}`];
  },
  () => {
    const q = `SELECT g + 1000, g, COUNT(*) FROM src WHERE g IS NOT NULL GROUP BY g`;
    return [`INSERT INTO keyed (id, g, total) ${q}`, `INSERT OR REPLACE INTO keyed (id, g, total) ${q}`];
  },
];

function same(sql: string): readonly [string, string] {
  return [sql, sql];
}

for (const seed of [1, 2, 3]) {
  test(`INSERT … SELECT equals SQLite after every statement (seed ${seed})`, () => {
    const rnd = mulberry32(seed);
    const int = (n: number): number => Math.floor(rnd() * n);
    const engine = new Engine();
    const oracle = new SqliteOracle();
    engine.executeScript(SCHEMA);
    oracle.createTable({
      name: 'src',
      columns: [
        { name: 'id', sqlType: 'integer', nullable: false },
        { name: 'g', sqlType: 'integer', nullable: true },
        { name: 'v', sqlType: 'integer', nullable: true },
        { name: 's', sqlType: 'text', nullable: true },
      ],
      primaryKey: ['id'],
    });
    oracle.db.exec('CREATE TABLE lake (g INTEGER, v INTEGER, s TEXT)');
    oracle.db.exec('CREATE TABLE keyed (id INTEGER NOT NULL PRIMARY KEY, g INTEGER, total INTEGER)');
    oracle.createView('lake_by_g', 'SELECT g, COUNT(*) AS n, SUM(v) AS total FROM lake GROUP BY g');
    oracle.createView('lake_all', 'SELECT g, v, s FROM lake');
    oracle.createView('keyed_all', 'SELECT id, g, total FROM keyed');
    let inserted = 0;
    for (let step = 0; step < 120; step++) {
      const kind = int(4);
      let sluiceSql: string;
      let sqliteSql: string;
      if (kind === 0) {
        [sluiceSql, sqliteSql] = INSERTS[int(INSERTS.length)]!(int(20));
      } else if (kind === 1) {
        const id = int(40);
        const row = `${id}, ${int(7) === 0 ? 'NULL' : int(4)}, ${int(9) === 0 ? 'NULL' : int(30)}, '${'abc'[int(3)]}'`;
        sluiceSql = `INSERT INTO src VALUES (${row})`;
        sqliteSql = `INSERT OR REPLACE INTO src VALUES (${row})`;
      } else if (kind === 2) {
        sluiceSql = sqliteSql = `UPDATE src SET v = v + 1 WHERE g = ${int(4)}`;
      } else {
        sluiceSql = sqliteSql = `DELETE FROM src WHERE id % 5 = ${int(5)}`;
      }
      const result = engine.execute(sluiceSql);
      const info = oracle.db.prepare(sqliteSql).run();
      if (kind === 0) {
        assert.equal(result[0]?.rowCount, Number(info.changes), `${sluiceSql}: rows inserted`);
        inserted += Number(info.changes);
      }
      for (const view of VIEWS)
        assertViewMatchesOracle(engine, oracle, view, `seed ${seed}, step ${step}: ${sluiceSql}`);
    }
    assert.ok(inserted > 20, `only ${inserted} rows inserted by INSERT … SELECT`);
    oracle.close();
  });
}

test('INSERT … SELECT: a refused statement changes nothing, and errors point at the query', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE src (id integer PRIMARY KEY, v text);
CREATE TABLE dst (id integer PRIMARY KEY, v text NOT NULL, n numeric)`);
  engine.execute(`INSERT INTO src VALUES (1, 'a'), (2, NULL), (3, '4.5')`);
  const epoch = engine.epoch;
  const cases: RefusedStatement[] = [
    [
      'INSERT INTO dst SELECT id, v, v, id FROM src',
      'INVALID_DEFINITION',
      'INSERT has more expressions than target columns',
      34,
    ],
    [
      'INSERT INTO dst (id, v) SELECT id FROM src',
      'INVALID_DEFINITION',
      'INSERT has more target columns than expressions',
      32,
    ],
    ['INSERT INTO dst SELECT id, v, 1 FROM src', 'NOT_NULL_VIOLATION', 'null value in column "v"', 28],
    [
      // PostgreSQL has no assignment cast from text to numeric: refused before any row is read.
      "INSERT INTO dst SELECT id, 'x', v FROM src WHERE id = 1",
      'TYPE_MISMATCH',
      'column "n" is of type numeric but expression is of type text',
      33,
    ],
    ['INSERT INTO dst SELECT id, v FROM src RETURNING count(*)', 'INVALID_AGGREGATE', 'RETURNING', 49],
    ['INSERT INTO dst SELECT id, v FROM nowhere', 'UNKNOWN_TABLE', 'relation "nowhere" does not exist', 35],
  ];
  assertRefused(engine, cases);
  assert.equal(engine.epoch, epoch, 'no refused statement made an epoch');
  assert.deepEqual(engine.execute('SELECT COUNT(*) AS n FROM dst')[0]?.rows, [{ n: 0 }]);
  // The refused rows' statement had a valid row too: nothing of it was applied.
  const ok = engine.execute("INSERT INTO dst SELECT id, coalesce(v, '-'), 1 FROM src");
  assert.equal(ok[0]?.rowCount, 3);
});

test('INSERT … SELECT is journaled as its rows: a restart replays what was inserted, not the query', () => {
  let before: readonly unknown[] = [];
  afterCrash(
    (first) => {
      first.executeScript(`CREATE TABLE src (id integer PRIMARY KEY, v integer);
CREATE TABLE stamped (id integer, at timestamptz, v integer);
INSERT INTO src VALUES (1, 10), (2, 20);
INSERT INTO stamped SELECT id, now(), v FROM src;
DELETE FROM src WHERE id = 1;
INSERT INTO stamped SELECT id, now(), v FROM src`);
      before = first.engine.execute('SELECT id, at, v FROM stamped ORDER BY id, at')[0]?.rows ?? [];
    },
    (again) => {
      assert.equal(before.length, 3);
      assert.deepEqual(
        again.engine.execute('SELECT id, at, v FROM stamped ORDER BY id, at')[0]?.rows,
        before,
      );
    },
  );
});

test('INSERT … SELECT in a script reads its query in slices, as a SELECT does, and writes once at the end', () => {
  const engine = new Engine();
  engine.executeScript(`CREATE TABLE big (id integer PRIMARY KEY, v integer);
CREATE TABLE copy (id integer, v integer);
CREATE MATERIALIZED VIEW copied AS SELECT COUNT(*) AS n, SUM(v) AS total FROM copy`);
  const N = 20_000;
  engine.applyChanges('big', { insert: Array.from({ length: N }, (_, i) => ({ id: i, v: 1 })) });
  const script = engine.runScript('INSERT INTO copy SELECT id, v FROM big WHERE id % 2 = 0');
  let steps = 0;
  let result = null;
  const epochBefore = engine.epoch;
  while (result === null) {
    // A deadline already past: each step does one unit of work (a slice of the query's input).
    result = script.step(performance.now() - 1);
    steps += 1;
    // Another write between the slices: the query reads the rows as of its start.
    if (steps === 3) engine.applyChanges('big', { insert: [{ id: N, v: 1000 }] });
  }
  assert.equal(result.error, undefined);
  assert.ok(steps >= 5, `the query ran in ${steps} steps`);
  assert.equal(script.rowsRead, N, 'the rows read, as of the query start');
  assert.equal(engine.epoch, epochBefore + 2, 'one epoch for the write between, one for the INSERT');
  assert.deepEqual(engine.viewSnapshot('copied').rows, [{ n: N / 2, total: N / 2 }]);
});

test("INSERT … SELECT past the result limit is refused as the INSERT's, with nothing written", () => {
  const engine = new Engine();
  engine.executeScript('CREATE TABLE src (id integer PRIMARY KEY); CREATE TABLE dst (id integer)');
  engine.applyChanges('src', { insert: Array.from({ length: 10 }, (_, i) => ({ id: i })) });
  engine.selectLimits = { maxRows: 5, maxBytes: Infinity };
  const epoch = engine.epoch;
  const refused = { code: 'RESULT_TOO_LARGE', message: /^the rows of INSERT … SELECT is larger than/ };
  assert.throws(() => engine.execute('INSERT INTO dst SELECT id FROM src'), refused);
  const stepped = engine.runScript('INSERT INTO dst SELECT id FROM src').step(Infinity);
  assert.equal(stepped?.error?.code, 'RESULT_TOO_LARGE');
  assert.match(stepped?.error?.hint ?? '', /insert them in parts/);
  assert.equal(engine.epoch, epoch, 'nothing written');
  // Within the limit it is written.
  assert.equal(engine.execute('INSERT INTO dst SELECT id FROM src WHERE id < 5')[0]?.rowCount, 5);
});
