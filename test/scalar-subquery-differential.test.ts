// Randomized differential runs of the scalar-subquery templates (support/scalar-subquery-templates.ts)
// against SQLite, each template on its own over several seeds: after every epoch a view equals SQLite's
// result, or — while its subquery returns several rows for some outer row — refuses reads and holds
// CARDINALITY_VIOLATION errors only, and comes back equal once the subquery is down to one row.
// The templates of at most one row also run in test/join-differential.test.ts among the join ones.
//
// SLUICE_SEED=<n> with SLUICE_JOIN_TEMPLATE=<t> replays one failure; SLUICE_SCALAR_SEEDS=<k> seeds per
// template, SLUICE_EPOCHS=<e> epochs per seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTemplateSeeds } from './support/template-seeds.ts';
import { SCALAR_ROWS_TEMPLATES, SCALAR_TEMPLATES } from './support/scalar-subquery-templates.ts';

const SEEDS = Number(process.env['SLUICE_SCALAR_SEEDS'] ?? 4);
const EPOCHS = Number(process.env['SLUICE_EPOCHS'] ?? 120);
const only = process.env['SLUICE_SEED'];
const oneTemplate = process.env['SLUICE_JOIN_TEMPLATE'];

const templates: readonly string[] =
  oneTemplate !== undefined ? [oneTemplate] : [...SCALAR_ROWS_TEMPLATES, ...SCALAR_TEMPLATES];

for (const template of templates) {
  test(`scalar subquery differential: ${template}`, () => {
    const seedBase = 20261202 + templates.indexOf(template);
    const { seeds, checks, erred } = runTemplateSeeds(template, { seeds: SEEDS, epochs: EPOCHS, seedBase });
    console.log(
      `${template}: ${seeds} seeds × ${EPOCHS} epochs, ${checks} views equal to SQLite, ${erred} rightly in error`,
    );
    assert.ok(checks > 0, 'no view was compared');
    // The templates whose subquery can return several rows must have been seen both ways.
    if ((SCALAR_ROWS_TEMPLATES as readonly string[]).includes(template) && only === undefined) {
      assert.ok(erred > 0, `${template}: never saw a subquery of several rows`);
    }
  });
}
