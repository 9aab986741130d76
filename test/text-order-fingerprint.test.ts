// Text orders by code point since the release after 5d242fc (it ordered by UTF-16 code unit, so a
// character above U+FFFF sorted before U+E000–U+FFFF). A view that orders text (a comparison, MIN/MAX,
// GREATEST/LEAST, a quantified comparison, Top-N, a window, an aggregate's ORDER BY) gets a new plan
// fingerprint, so state checkpointed under the old order is rebuilt from its inputs, not loaded; a
// view that only tests text for equality, or orders numbers beside a text column, keeps its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

const ORDERING = {
  mx: 'SELECT max(s) AS m FROM t',
  lt: "SELECT k FROM t WHERE s < 'm'",
  top: 'SELECT k, s FROM t ORDER BY s LIMIT 3',
  win: 'SELECT k, row_number() OVER (ORDER BY s) AS r FROM t',
  agg: "SELECT string_agg(s, ',' ORDER BY s) AS a FROM t",
  gr: "SELECT k, greatest(s, 'x') AS g FROM t",
  anyv: "SELECT k FROM t WHERE s < ANY (ARRAY['a', 'b'])",
};
const NOT_ORDERING = {
  eq: "SELECT k FROM t WHERE s = 'm'",
  num: 'SELECT s, count(*) AS c FROM t WHERE n > 3 GROUP BY s',
  numtop: 'SELECT k, s FROM t ORDER BY n LIMIT 3',
  numwin: 'SELECT k, s, row_number() OVER (PARTITION BY s ORDER BY n) AS r FROM t',
};
// The fingerprints on 5d242fc, the commit before the change.
const BEFORE: Record<string, string> = {
  t: '42b159e935d85c46',
  mx: 'cb784201bd76e882',
  lt: '789b1363099bfe49',
  top: 'edf489ec0cccd254',
  win: '374badab3f2e0cb5',
  agg: '1399561d75aace11',
  gr: 'a148e7518ba4d7f1',
  anyv: '261b3c5fa3b89fee',
  eq: '011ee80128487fc5',
  num: '0c25a039e893993d',
  numtop: '4b5430a1725b084d',
  numwin: '04a0cbd467f8b71b',
};
const DDL = [
  'CREATE TABLE t (k integer PRIMARY KEY, s text, n bigint)',
  ...Object.entries({ ...ORDERING, ...NOT_ORDERING }).map(
    ([v, q]) => `CREATE MATERIALIZED VIEW ${v} AS ${q}`,
  ),
];
const ROWS = [
  { k: 1, s: '\u{1F600}', n: 5 },
  { k: 2, s: '\uFF21', n: 4 },
  { k: 3, s: 'a', n: 1 },
  { k: 4, s: 'z', n: 9 },
];

test('views ordering text are rebuilt from a checkpoint written before code point order; the rest load', () => {
  const original = trackedEngine(DDL);
  original.applyChanges('t', { insert: ROWS });
  const { checkpoint, fingerprints } = storedCheckpoint(original);
  for (const v of ['t', ...Object.keys(NOT_ORDERING)]) assert.equal(fingerprints[v], BEFORE[v], v);
  for (const v of Object.keys(ORDERING)) assert.notEqual(fingerprints[v], BEFORE[v], v);

  const restored = trackedEngine(DDL);
  const { rebuilt } = restored.loadCheckpoint(withFingerprints(checkpoint, BEFORE));
  assert.deepEqual([...rebuilt].sort(), Object.keys(ORDERING).sort());
  // Rebuilt in code point order: U+FF21 sorts before U+1F600 (the old order had it after).
  assert.deepEqual(restored.viewSnapshot('mx').rows, [{ m: '\u{1F600}' }]);
  assert.deepEqual(restored.viewSnapshot('agg').rows, [{ a: `a,z,\uFF21,\u{1F600}` }]);
  restored.applyChanges('t', { delete: [{ k: 1 }] });
  assert.deepEqual(restored.viewSnapshot('mx').rows, [{ m: '\uFF21' }]);
});
