// Randomized differential runs of the VALUES-in-FROM templates (support/values-templates.ts) against
// SQLite, each template on its own over several seeds: after every epoch of random inserts, updates
// and deletes each view equals SQLite running the same SELECT over the same rows.
//
// SLUICE_SEED=<n> with SLUICE_JOIN_TEMPLATE=<t> replays one failure; SLUICE_VALUES_SEEDS=<k> seeds per
// template, SLUICE_EPOCHS=<e> epochs per seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTemplateSeeds } from './support/template-seeds.ts';
import { VALUES_TEMPLATES } from './support/values-templates.ts';
import { Engine } from '../src/exec/engine.ts';
import { assertRefused, type RefusedStatement } from './support/sql-errors.ts';

const SEEDS = Number(process.env['SLUICE_VALUES_SEEDS'] ?? 3);
const EPOCHS = Number(process.env['SLUICE_EPOCHS'] ?? 80);
const oneTemplate = process.env['SLUICE_JOIN_TEMPLATE'];

const templates: readonly string[] = oneTemplate !== undefined ? [oneTemplate] : VALUES_TEMPLATES;

for (const template of templates) {
  test(`VALUES in FROM differential: ${template}`, () => {
    const seedBase = 20261206 + templates.indexOf(template);
    const r = runTemplateSeeds(template, { seeds: SEEDS, epochs: EPOCHS, seedBase });
    console.log(`${template}: ${r.seeds} seeds × ${EPOCHS} epochs, ${r.checks} views equal to SQLite`);
    assert.ok(r.checks > 0, 'no view was compared');
  });
}

test('VALUES in FROM: errors say what is wrong and where, and change nothing', () => {
  const engine = new Engine();
  engine.executeScript('CREATE TABLE t (a integer)');
  const cases: RefusedStatement[] = [
    [
      "SELECT * FROM (VALUES (1, 'a'), (2)) AS v",
      'INVALID_DEFINITION',
      'VALUES lists must all be the same length',
      34,
    ],
    [
      "SELECT * FROM (VALUES (1), ('x')) AS v",
      'INVALID_CAST',
      'invalid input syntax for type integer: "x"',
      29,
    ],
    [
      'SELECT * FROM (VALUES (1), (true)) AS v',
      'TYPE_MISMATCH',
      'VALUES types integer and boolean cannot be matched',
      24,
    ],
    [
      'SELECT * FROM (VALUES (1)) AS v(a, b)',
      'INVALID_DEFINITION',
      'table "v" has 1 columns available but 2 columns specified',
      36,
    ],
    [
      'SELECT * FROM (VALUES (count(*))) AS v',
      'INVALID_AGGREGATE',
      'aggregate functions are not allowed in VALUES',
      24,
    ],
    ['SELECT * FROM t, (VALUES (t.a)) AS v', 'UNKNOWN_COLUMN', 'column "t.a" does not exist', 27],
    [
      'CREATE MATERIALIZED VIEW v AS SELECT * FROM (VALUES (now())) AS x',
      'NOT_SUPPORTED',
      'NOW() in a materialized view',
      54,
    ],
  ];
  assertRefused(engine, cases);
  const wide = `SELECT * FROM (VALUES (${Array.from({ length: 1665 }, (_, i) => i).join(', ')})) AS v`;
  assert.throws(() => engine.execute(wide), {
    code: 'TOO_MANY_ITEMS',
    message: /VALUES has more than 1664 columns/,
  });
  assert.throws(() => engine.viewSnapshot('v'), /does not exist/, 'the refused view was not created');
});
