// Randomized differential suite: Sluice's views against SQLite running the same SELECT, compared after
// every epoch (see support/differential.ts). Seeds derive from BASE_SEED; `SLUICE_SEED=<n>` replays
// exactly one seed (with SLUICE_EPOCHS epochs, default as below), `SLUICE_SEEDS=<k>` runs k seeds,
// `SLUICE_BASE_SEED=<n>` derives them from another base (for long bug hunts).
// Seeds that once failed are kept in test/regressions/seeds.json and replayed by the regression suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveSeed } from './support/random-workload.ts';
import { replayCommand, runDifferential } from './support/differential.ts';

const BASE_SEED = Number(process.env['SLUICE_BASE_SEED'] ?? 20261130);
const SEEDS = Number(process.env['SLUICE_SEEDS'] ?? 16);
const EPOCHS = Number(process.env['SLUICE_EPOCHS'] ?? 250);
const only = process.env['SLUICE_SEED'];

const seeds =
  only !== undefined ? [Number(only)] : Array.from({ length: SEEDS }, (_, i) => deriveSeed(BASE_SEED, i));

let totalEpochs = 0;
let totalChecks = 0;

for (const seed of seeds) {
  test(`differential seed ${seed}`, () => {
    try {
      const r = runDifferential(seed, { epochs: EPOCHS });
      totalEpochs += r.epochs;
      totalChecks += r.checks;
      assert.ok(r.checks > 0, 'no view was compared');
    } catch (e) {
      console.error(`\ndifferential failure — replay with:\n  ${replayCommand(seed)}\n`);
      throw e;
    }
  });
}

test('differential totals', () => {
  console.log(`differential: ${seeds.length} seeds, ${totalEpochs} epochs, ${totalChecks} view comparisons`);
  assert.equal(totalEpochs, seeds.length * EPOCHS);
});
