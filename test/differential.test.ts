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
// Scenarios whose expressions also use the named functions SQLite shares (REPLACE, TRIM, LTRIM,
// RTRIM, STRPOS, SIGN, TRUNC, and date_part / date ± integer / date - date / timestamp + INTERVAL,
// which SQLite computes with its own date functions, see support/sqlite-time.ts); `SLUICE_FN_SEED=<n>`
// replays one, `SLUICE_FN_SEEDS=<k>` runs k.
const FN_SEEDS = Number(process.env['SLUICE_FN_SEEDS'] ?? 8);
const onlyFn = process.env['SLUICE_FN_SEED'];
const fnSeeds =
  onlyFn !== undefined
    ? [Number(onlyFn)]
    : Array.from({ length: FN_SEEDS }, (_, i) => deriveSeed(BASE_SEED + 1, i));

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

let fnEpochs = 0;
let fnCalls = 0;
let timeCalls = 0;
for (const seed of fnSeeds) {
  test(`differential seed ${seed} with functions`, () => {
    try {
      const r = runDifferential(seed, { epochs: EPOCHS, functions: true });
      fnEpochs += r.epochs;
      fnCalls += r.scenario.views.filter((v) =>
        /\b(REPLACE|TRIM|LTRIM|RTRIM|STRPOS|SIGN|TRUNC)\(/.test(v.select),
      ).length;
      timeCalls += r.scenario.views.filter((v) => /date_part\(|AS DATE\)/.test(v.select)).length;
      assert.ok(r.checks > 0, 'no view was compared');
    } catch (e) {
      console.error(`\ndifferential failure — replay with:\n  ${replayCommand(seed, true)}\n`);
      throw e;
    }
  });
}

test('differential with functions: the functions were generated', () => {
  console.log(
    `differential with functions: ${fnSeeds.length} seeds, ${fnEpochs} epochs, ${fnCalls} views using them, ${timeCalls} using date/time functions`,
  );
  assert.equal(fnEpochs, fnSeeds.length * EPOCHS);
  if (fnSeeds.length >= 3) assert.ok(fnCalls > 0, 'no generated view used a function');
  if (fnSeeds.length >= 8) assert.ok(timeCalls > 0, 'no generated view used a date/time function');
});

test('differential totals', () => {
  console.log(`differential: ${seeds.length} seeds, ${totalEpochs} epochs, ${totalChecks} view comparisons`);
  assert.equal(totalEpochs, seeds.length * EPOCHS);
});
