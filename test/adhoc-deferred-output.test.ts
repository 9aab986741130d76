// An ad-hoc SELECT is stepped a slice of input at a time, and its answer is read once, at the end.
// Its stateful operators used to emit every slice: a Reduce recomputed each changed group's
// STRING_AGG / ARRAY_AGG / COUNT(DISTINCT) over the whole group (and inserted each new value into
// the group's sorted values one splice at a time), a window recomputed its partition from the
// first changed row — work that grew with the square of the input (a million rows ran minutes and
// held the server's loop seconds a slice; the window case was refused with RESULT_TOO_LARGE). They
// now absorb the slices and emit once when the input is exhausted, a bounded part per step.
// Work is counted (rows each operator emitted, drain steps), not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { parseStatements } from '../src/parser/parse.ts';
import type { SelectJob } from '../src/exec/select-job.ts';

const ROWS = 100_000;

function engineWithRows(): Engine {
  const engine = new Engine();
  engine.execute('CREATE TABLE t (k bigint PRIMARY KEY, v bigint)');
  const rows = Array.from({ length: ROWS }, (_, k) => ({ k, v: (k * 7919) % 100_003 }));
  engine.applyChanges('t', { insert: rows, delete: [] });
  return engine;
}

function job(engine: Engine, sql: string): SelectJob {
  const [statement] = parseStatements(sql);
  assert.equal(statement?.kind, 'select');
  return engine.prepareSelect(statement.query);
}

/** Steps the job a slice at a time (deadline 0), as the server does between other requests. */
function runSliced(select: SelectJob): void {
  while (!select.work(0));
}

function rowsOut(select: SelectJob, kind: string): number {
  return select
    .nodeStats()
    .filter((s) => s.kind === kind)
    .reduce((n, s) => n + s.rowsOut, 0);
}

test('a window over one partition in scattered order computes each row once', () => {
  const engine = engineWithRows();
  const select = job(engine, 'SELECT k, row_number() OVER (ORDER BY v) AS r FROM t ORDER BY k LIMIT 3');
  runSliced(select);
  // row_number of k: the place of v = k × 7919 mod 100,003 among all the v (all distinct)
  const sorted = Array.from({ length: ROWS }, (_, k) => (k * 7919) % 100_003).sort((x, y) => x - y);
  const expected = [0, 1, 2].map((k) => [k, sorted.indexOf((k * 7919) % 100_003) + 1]);
  assert.deepEqual(
    (select.result().rows ?? []).map((row) => [Number(row['k']), Number(row['r'])]),
    expected,
  );
  assert.equal(select.rowsRead, ROWS);
  // one output row per input row (the base emitted each recomputed row again, slice after slice)
  assert.equal(rowsOut(select, 'window'), ROWS);
});

test('a whole-input STRING_AGG and COUNT(DISTINCT) compute their group once', () => {
  const engine = engineWithRows();
  const select = job(
    engine,
    "SELECT length(string_agg(CAST(k AS text), ',')) AS n, count(DISTINCT v) AS d, array_length(array_agg(k), 1) AS a FROM t",
  );
  runSliced(select);
  const [row] = select.result().rows ?? [];
  const text = Array.from({ length: ROWS }, (_, k) => String(k)).join(',');
  assert.equal(Number(row?.['n']), text.length);
  assert.equal(Number(row?.['d']), ROWS);
  assert.equal(Number(row?.['a']), ROWS);
  assert.equal(rowsOut(select, 'reduce'), 1);
});

test('groups are emitted a bounded number per step once the input is read', () => {
  const engine = engineWithRows();
  const select = job(
    engine,
    'SELECT k % 20000 AS g, count(DISTINCT v) AS d FROM t GROUP BY 1 ORDER BY g LIMIT 2',
  );
  runSliced(select);
  assert.deepEqual(
    (select.result().rows ?? []).map((row) => [Number(row['g']), Number(row['d'])]),
    [
      [0, 5],
      [1, 5],
    ],
  );
  assert.equal(rowsOut(select, 'reduce'), 20_000);
  // 20,000 groups at most 4,096 a step
  assert.ok(select.drainSteps >= 5, `${select.drainSteps} drain steps`);
});

test('a window whose slices only append (ORDER BY the input order) or over small partitions', () => {
  const engine = engineWithRows();
  for (const sql of [
    'SELECT k, row_number() OVER (ORDER BY k) AS r FROM t ORDER BY k LIMIT 3',
    'SELECT k, row_number() OVER (PARTITION BY v ORDER BY k) AS r FROM t ORDER BY k LIMIT 3',
  ]) {
    const select = job(engine, sql);
    runSliced(select);
    assert.deepEqual(
      (select.result().rows ?? []).map((row) => Number(row['k'])),
      [0, 1, 2],
      sql,
    );
    assert.equal(select.rowsRead, ROWS);
  }
});

test('sliced ad-hoc results equal a view of the same query (views never defer)', () => {
  const engine = new Engine();
  engine.execute('CREATE TABLE u (k bigint PRIMARY KEY, g bigint, v numeric, s text)');
  const rows = Array.from({ length: 12_000 }, (_, k) => ({
    k,
    g: k % 7,
    v: k % 3 === 0 ? '1.50' : k % 3 === 1 ? '1.5' : String(k % 5),
    s: k % 11 === 0 ? null : `x${k % 13}`,
  }));
  engine.applyChanges('u', { insert: rows, delete: [] });
  const queries = [
    "SELECT g, count(DISTINCT s) AS d, length(string_agg(s, '')) AS l, min(v) AS lo FROM u GROUP BY g",
    "SELECT v, count(*) AS n, string_agg(DISTINCT s, ',' ORDER BY s) AS a FROM u GROUP BY v",
    'SELECT d, count(*) AS n FROM (SELECT g, count(DISTINCT s) AS d FROM u GROUP BY g) x GROUP BY d',
    'SELECT g, d, rank() OVER (ORDER BY d DESC, g) AS r FROM (SELECT g, count(DISTINCT k % 100) AS d FROM u GROUP BY g) x',
    'SELECT k, lag(k) OVER (PARTITION BY g ORDER BY k DESC) AS p, sum(k) OVER (PARTITION BY g ORDER BY k ROWS 2 PRECEDING) AS w FROM u',
    'SELECT s, array_length(array_agg(k), 1) AS n FROM u WHERE k NOT IN (SELECT k FROM u WHERE g = 3) GROUP BY s',
  ];
  const canonical = (r: Record<string, unknown>): string =>
    JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  queries.forEach((sql, i) => {
    const select = job(engine, sql);
    runSliced(select);
    engine.execute(`CREATE MATERIALIZED VIEW same_${i} AS ${sql}`);
    const view = engine.viewSnapshot(`same_${i}`).rows.map(canonical).sort();
    assert.deepEqual((select.result().rows ?? []).map(canonical).sort(), view, sql);
    assert.ok(view.length > 0, sql);
  });
});
