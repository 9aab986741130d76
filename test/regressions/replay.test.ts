// Replays every seed in seeds.json that once made a randomized suite fail: differential seeds with
// their epoch count, property cases with their exact arguments. Add an entry for every failure found
// (the failing suite prints the seed and arguments), with a note of what it found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATOR_VERSION } from '../support/random-workload.ts';
import { runDifferential } from '../support/differential.ts';
import { checkBatchSplitInvariance, checkChangelogFold } from '../support/properties.ts';

interface DifferentialEntry {
  readonly seed: number;
  readonly epochs: number;
  readonly generator: number;
  readonly note: string;
}

type PropertyEntry =
  | {
      readonly property: 'batch-split';
      readonly seed: number;
      readonly units: number;
      readonly cuts: boolean[];
      readonly generator: number;
      readonly note: string;
    }
  | {
      readonly property: 'changelog-fold';
      readonly seed: number;
      readonly epochs: number;
      readonly generator: number;
      readonly note: string;
    };

const file = join(dirname(fileURLToPath(import.meta.url)), 'seeds.json');
const data = JSON.parse(readFileSync(file, 'utf8')) as {
  differential: DifferentialEntry[];
  properties: PropertyEntry[];
};

test('regression seeds file is well-formed and matches the generator version', () => {
  assert.ok(Array.isArray(data.differential) && Array.isArray(data.properties));
  for (const e of [...data.differential, ...data.properties]) {
    assert.equal(typeof e.seed, 'number');
    assert.equal(typeof e.note, 'string');
    assert.equal(
      e.generator,
      GENERATOR_VERSION,
      `seed ${e.seed} was recorded with generator v${e.generator}; re-derive it`,
    );
  }
});

for (const e of data.differential) {
  test(`regression: differential seed ${e.seed} (${e.note})`, () => {
    runDifferential(e.seed, { epochs: e.epochs });
  });
}

for (const e of data.properties) {
  test(`regression: ${e.property} seed ${e.seed} (${e.note})`, () => {
    if (e.property === 'batch-split') checkBatchSplitInvariance(e.seed, e.units, e.cuts);
    else checkChangelogFold(e.seed, e.epochs);
  });
}
