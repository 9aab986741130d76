// generate_series(start, stop [, step]) in FROM, alone and after a relation, and unnest alone: the
// rows PostgreSQL 15 gives for the same statements (each expected answer is its output), the
// refusals, and a view over a series kept equal to its SELECT through writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { assertRefused, type RefusedStatement } from './support/sql-errors.ts';

function rowsOf(engine: Engine, sql: string): unknown[][] {
  return (engine.execute(sql)[0]?.rows ?? []).map((r) => Object.values(r));
}

test('generate_series gives the rows PostgreSQL 15 gives', () => {
  const engine = new Engine();
  engine.executeScript('CREATE TABLE t (id integer PRIMARY KEY, n integer)');
  engine.executeScript('INSERT INTO t VALUES (1, 2), (2, 0), (3, NULL)');
  const cases: [string, unknown[][]][] = [
    ['SELECT * FROM generate_series(1, 5)', [[1], [2], [3], [4], [5]]],
    ['SELECT s.n * 2 AS d FROM generate_series(1, 10, 3) AS s(n)', [[2], [8], [14], [20]]],
    [
      'SELECT * FROM generate_series(5, 1, -2) WITH ORDINALITY AS s(n, i)',
      [
        [5, 1],
        [3, 2],
        [1, 3],
      ],
    ],
    ['SELECT * FROM generate_series(3, 1)', []],
    ['SELECT * FROM generate_series(1, NULL)', []],
    ["SELECT * FROM generate_series(1, '3')", [[1], [2], [3]]],
    [
      "SELECT * FROM generate_series(TIMESTAMP '2024-01-31', TIMESTAMP '2024-05-01', INTERVAL '1 month')",
      [['2024-01-31 00:00:00'], ['2024-02-29 00:00:00'], ['2024-03-29 00:00:00'], ['2024-04-29 00:00:00']],
    ],
    [
      "SELECT * FROM generate_series('2024-01-01', '2024-01-03', INTERVAL '1 day')",
      [['2024-01-01 00:00:00+00'], ['2024-01-02 00:00:00+00'], ['2024-01-03 00:00:00+00']],
    ],
    [
      "SELECT * FROM generate_series(DATE '2024-01-01', DATE '2024-01-02', INTERVAL '12 hours')",
      [['2024-01-01 00:00:00+00'], ['2024-01-01 12:00:00+00'], ['2024-01-02 00:00:00+00']],
    ],
    ['SELECT count(*) FROM generate_series(1, 100000)', [[100000]]],
    [
      'SELECT t.id, s.x FROM t, generate_series(1, t.n) AS s(x) ORDER BY 1, 2',
      [
        [1, 1],
        [1, 2],
      ],
    ],
    [
      // The WHERE guard filters t's rows before the series reads them (a zero step raises).
      'SELECT t.id, s FROM t, generate_series(1, 3, t.n) AS s WHERE t.n <> 0 ORDER BY 1, 2',
      [
        [1, 1],
        [1, 3],
      ],
    ],
    [
      'SELECT * FROM unnest(ARRAY[3, 1, 2]) WITH ORDINALITY AS u(x, i)',
      [
        [3, 1],
        [1, 2],
        [2, 3],
      ],
    ],
  ];
  for (const [sql, rows] of cases) assert.deepEqual(rowsOf(engine, sql), rows, sql);
});

test('generate_series: errors say what is wrong and where, and change nothing', () => {
  const engine = new Engine();
  engine.executeScript('CREATE TABLE t (id integer PRIMARY KEY, n integer)');
  const cases: RefusedStatement[] = [
    [
      'SELECT * FROM generate_series(1)',
      'UNKNOWN_FUNCTION',
      'function generate_series(integer) does not exist',
      15,
    ],
    [
      "SELECT * FROM generate_series(1, 3, INTERVAL '1 day')",
      'UNKNOWN_FUNCTION',
      'function generate_series(integer, integer, interval) does not exist',
      15,
    ],
    [
      'SELECT * FROM generate_series(1.5, 3)',
      'NOT_SUPPORTED',
      'generate_series of numeric or floating-point values is not supported',
      15,
    ],
    [
      'CREATE MATERIALIZED VIEW v AS SELECT t.id, s.x FROM t, generate_series(1, t.n) AS s(x)',
      'NOT_SUPPORTED',
      'generate_series after a relation in a materialized view is not supported',
      56,
    ],
    [
      'SELECT * FROM generate_series(1, 2) AS s(a, b)',
      'INVALID_DEFINITION',
      'has 1 columns available but 2',
      45,
    ],
  ];
  assertRefused(engine, cases);
  assert.throws(() => engine.viewSnapshot('v'), /does not exist/, 'the refused view was not created');
  // Errors of the values themselves, found when the series runs.
  assert.throws(() => engine.execute('SELECT * FROM generate_series(1, 3, 0)'), {
    code: 'INVALID_VALUE',
    message: 'step size cannot equal zero',
  });
  assert.throws(() => engine.execute('SELECT * FROM generate_series(1, 100001)'), {
    code: 'ARRAY_TOO_LARGE',
    message: /more than 100000 values/,
  });
});

test('a view joining a series stays equal to its SELECT through writes', () => {
  const engine = new Engine();
  engine.executeScript(
    'CREATE TABLE t (id integer PRIMARY KEY, n integer);' +
      'CREATE MATERIALIZED VIEW slots AS SELECT t.id, s.x FROM t JOIN (SELECT x FROM generate_series(1, 4) AS g(x)) AS s ON s.x <= t.n;' +
      "CREATE MATERIALIZED VIEW days AS SELECT d FROM generate_series(TIMESTAMP '2024-01-01', TIMESTAMP '2024-01-03', INTERVAL '1 day') AS c(d)",
  );
  const select =
    'SELECT t.id, s.x FROM t JOIN (SELECT x FROM generate_series(1, 4) AS g(x)) AS s ON s.x <= t.n';
  const sorted = (rows: unknown[][]): string[] => rows.map((r) => JSON.stringify(r)).sort();
  for (const statement of [
    'INSERT INTO t VALUES (1, 2), (2, 0), (3, 9)',
    'UPDATE t SET n = 3 WHERE id = 2',
    'DELETE FROM t WHERE id = 1',
    'INSERT INTO t VALUES (4, NULL), (5, 1)',
  ]) {
    engine.execute(statement);
    const view = engine.viewSnapshot('slots').rows.map((r) => Object.values(r));
    assert.deepEqual(sorted(view), sorted(rowsOf(engine, select)), statement);
  }
  assert.equal(engine.viewSnapshot('days').rows.length, 3);
});
