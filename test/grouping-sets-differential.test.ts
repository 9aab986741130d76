// Randomized differential runs of the grouping-set templates (support/grouping-set-templates.ts)
// against SQLite, each template on its own over several seeds: after every epoch of random inserts,
// updates and deletes each view equals SQLite running the same query written out as one GROUP BY per
// set. Then what a grouping-set query is refused for, where, and that a refusal changes nothing.
//
// SLUICE_SEED=<n> with SLUICE_JOIN_TEMPLATE=<t> replays one failure; SLUICE_GROUPING_SEEDS=<k> seeds
// per template, SLUICE_EPOCHS=<e> epochs per seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTemplateSeeds } from './support/template-seeds.ts';
import { GROUPING_SET_TEMPLATES } from './support/grouping-set-templates.ts';
import { Engine } from '../src/exec/engine.ts';
import { assertRefused, type RefusedStatement } from './support/sql-errors.ts';

const SEEDS = Number(process.env['SLUICE_GROUPING_SEEDS'] ?? 3);
const EPOCHS = Number(process.env['SLUICE_EPOCHS'] ?? 80);
const oneTemplate = process.env['SLUICE_JOIN_TEMPLATE'];

const templates: readonly string[] = oneTemplate !== undefined ? [oneTemplate] : GROUPING_SET_TEMPLATES;

for (const template of templates) {
  test(`grouping sets differential: ${template}`, () => {
    const seedBase = 20261207 + templates.indexOf(template);
    const r = runTemplateSeeds(template, { seeds: SEEDS, epochs: EPOCHS, seedBase });
    console.log(`${template}: ${r.seeds} seeds × ${EPOCHS} epochs, ${r.checks} views equal to SQLite`);
    assert.ok(r.checks > 0, 'no view was compared');
  });
}

test('grouping sets: the rows PostgreSQL 15 gives, in ad-hoc SELECT', () => {
  const engine = new Engine();
  engine.executeScript(
    "CREATE TABLE t (id integer PRIMARY KEY, g integer, s text, v integer); INSERT INTO t VALUES (1, 1, 'a', 10), (2, 1, 'b', 20), (3, 2, 'a', 30), (4, NULL, 'b', 5)",
  );
  const rows = (sql: string): unknown[] => (engine.execute(sql)[0]?.rows ?? []).map((r) => Object.values(r));
  // Each answer is PostgreSQL 15's for the same statement over the same rows.
  assert.deepEqual(
    rows(
      'SELECT g, s, SUM(v) AS total, GROUPING(g, s) AS gr FROM t GROUP BY ROLLUP (g, s) ORDER BY gr, g, s',
    ),
    [
      [1, 'a', 10, 0],
      [1, 'b', 20, 0],
      [2, 'a', 30, 0],
      [null, 'b', 5, 0],
      [1, null, 30, 1],
      [2, null, 30, 1],
      [null, null, 5, 1],
      [null, null, 65, 3],
    ],
  );
  assert.deepEqual(rows('SELECT g, s, count(*) FROM t GROUP BY GROUPING SETS ((g), (s)) ORDER BY 1, 2'), [
    [1, null, 2],
    [2, null, 1],
    [null, 'a', 2],
    [null, 'b', 2],
    [null, null, 1],
  ]);
  assert.deepEqual(
    rows('SELECT g AS gg, count(*) FROM t GROUP BY ROLLUP (gg) HAVING count(*) > 1 ORDER BY gg'),
    [
      [1, 2],
      [null, 4],
    ],
  );
  // A qualified name is the grouping column written without its qualifier.
  assert.deepEqual(rows('SELECT t.g, count(*) FROM t GROUP BY ROLLUP (g) ORDER BY 1, 2'), [
    [1, 2],
    [2, 1],
    [null, 1],
    [null, 4],
  ]);
  // The empty set is one group even of no rows; a ROLLUP's total is there over an empty table.
  engine.executeScript('CREATE TABLE e (k integer, j integer)');
  assert.deepEqual(rows('SELECT 1 AS one FROM e GROUP BY ()'), [[1]]);
  assert.deepEqual(rows('SELECT k, count(*) FROM e GROUP BY ROLLUP (k)'), [[null, 0]]);
  assert.deepEqual(rows('SELECT DISTINCT k FROM e GROUP BY GROUPING SETS ((k), (k, j), ())'), [[null]]);
  // CUBE's sets in PostgreSQL's order: the whole set, each column left out in turn, none.
  assert.deepEqual(
    rows('SELECT GROUPING(g, s) AS b, count(*) FROM t GROUP BY CUBE (g, s) ORDER BY 1, 2 DESC').length,
    4 + 3 + 2 + 1,
  );
});

test('grouping sets: errors say what is wrong and where, and change nothing', () => {
  const engine = new Engine();
  engine.executeScript('CREATE TABLE t (a integer, b integer)');
  const cases: RefusedStatement[] = [
    ['SELECT a FROM t GROUP BY ROLLUP ()', 'SYNTAX_ERROR', 'syntax error at or near ")"', 34],
    [
      'SELECT a, GROUPING(b) FROM t GROUP BY ROLLUP (a)',
      'INVALID_DEFINITION',
      'arguments to GROUPING must be grouping expressions of the associated query level',
      20,
    ],
    [
      'SELECT a, count(*) FROM t GROUP BY CUBE (a, b, a + 1, a + 2, a + 3, a + 4, a + 5)',
      'TOO_MANY_ITEMS',
      'a GROUP BY can expand to at most 64 grouping sets',
      36,
    ],
    [
      'SELECT a, row_number() OVER (ORDER BY a) FROM t GROUP BY ROLLUP (a)',
      'NOT_SUPPORTED',
      'a window function in a SELECT with grouping sets is not supported',
      11,
    ],
    [
      'CREATE MATERIALIZED VIEW v AS SELECT a, count(*) FROM t GROUP BY ROLLUP (a) ORDER BY a',
      'NOT_SUPPORTED',
      'ORDER BY without LIMIT in a materialized view is not supported',
      86,
    ],
  ];
  assertRefused(engine, cases);
  assert.throws(() => engine.viewSnapshot('v'), /does not exist/, 'the refused view was not created');
});
