// `x = ANY (SELECT …)` / `= SOME` are `x IN (SELECT …)` and `x <> ALL (SELECT …)` is `x NOT IN
// (SELECT …)`, NULLs included, in views and ad-hoc SELECT (they were NOT_SUPPORTED): each view equals
// the IN / NOT IN view beside it after every write, and the ad-hoc rows are PostgreSQL 15's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';

const ids = (rows: readonly Record<string, unknown>[]): unknown[] => rows.map((r) => r['id']).sort();

test('= ANY and <> ALL over a subquery are IN and NOT IN', () => {
  const engine = new Engine();
  engine.executeScript(
    'CREATE TABLE t (id integer PRIMARY KEY, v integer); CREATE TABLE u (w integer);' +
      'CREATE MATERIALIZED VIEW any_u AS SELECT id FROM t WHERE v = ANY (SELECT w FROM u);' +
      'CREATE MATERIALIZED VIEW in_u AS SELECT id FROM t WHERE v IN (SELECT w FROM u);' +
      'CREATE MATERIALIZED VIEW all_u AS SELECT id FROM t WHERE v <> ALL (SELECT w FROM u);' +
      'CREATE MATERIALIZED VIEW not_in_u AS SELECT id FROM t WHERE v NOT IN (SELECT w FROM u)',
  );
  const writes = [
    'INSERT INTO t VALUES (1, 1), (2, 2), (3, NULL)',
    'INSERT INTO u VALUES (1)',
    'INSERT INTO u VALUES (NULL)',
    'DELETE FROM u WHERE w IS NULL',
    'UPDATE t SET v = 1 WHERE id = 2',
    'DELETE FROM u WHERE w = 1',
  ];
  for (const sql of writes) {
    engine.execute(sql);
    const view = (name: string): unknown[] => ids(engine.viewSnapshot(name).rows);
    assert.deepEqual(view('any_u'), view('in_u'), `= ANY after ${sql}`);
    assert.deepEqual(view('all_u'), view('not_in_u'), `<> ALL after ${sql}`);
  }
});

test('= ANY, = SOME and <> ALL over a subquery give PostgreSQL 15 rows', () => {
  const engine = new Engine();
  engine.executeScript(
    'CREATE TABLE t (id integer PRIMARY KEY, v integer); CREATE TABLE u (w integer);' +
      'INSERT INTO t VALUES (1, 1), (2, 2), (3, NULL); INSERT INTO u VALUES (1), (NULL)',
  );
  const rows = (sql: string): unknown[] => ids(engine.execute(sql)[0]?.rows ?? []);
  assert.deepEqual(rows('SELECT id FROM t WHERE v = ANY (SELECT w FROM u)'), [1]);
  assert.deepEqual(rows('SELECT id FROM t WHERE v = SOME (SELECT w FROM u)'), [1]);
  // A NULL in the subquery: <> ALL is UNKNOWN for every v not in it.
  assert.deepEqual(rows('SELECT id FROM t WHERE v <> ALL (SELECT w FROM u)'), []);
  assert.deepEqual(rows('SELECT id FROM t WHERE v <> ALL (SELECT w FROM u WHERE w IS NOT NULL)'), [2]);
  assert.throws(() => engine.execute('SELECT id FROM t WHERE v > ANY (SELECT w FROM u)'), {
    code: 'NOT_SUPPORTED',
    message: 'operator > ANY (subquery) is not supported',
  });
});
