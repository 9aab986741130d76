// Property tests (fast-check) over random scenarios from support/random-workload.ts:
// (a) batch-split invariance and (b) changelog fold — see support/properties.ts.
// fast-check prints the failing seed and path; record them in test/regressions/seeds.json
// ("properties") so replay.test.ts replays them on every run. SLUICE_PROP_RUNS scales the run count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkBatchSplitInvariance, checkChangelogFold } from './support/properties.ts';

const RUNS = Number(process.env['SLUICE_PROP_RUNS'] ?? 40);
const FC_SEED = process.env['SLUICE_FC_SEED'];
const params = (runs: number): fc.Parameters<unknown> => ({
  numRuns: runs,
  ...(FC_SEED !== undefined ? { seed: Number(FC_SEED) } : {}),
});

test('batch-split invariance: any batching of one change sequence gives the same views', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0x7fffffff }),
      fc.integer({ min: 10, max: 120 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
      (seed, units, cuts) => {
        checkBatchSplitInvariance(seed, units, cuts);
      },
    ),
    params(RUNS),
  );
});

test('changelog fold: folding every emitted change set reproduces each view, epoch by epoch', () => {
  let folded = 0;
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 5, max: 60 }), (seed, epochs) => {
      folded += checkChangelogFold(seed, epochs);
    }),
    params(RUNS),
  );
  assert.ok(folded > 0, 'no change set was ever folded');
});
