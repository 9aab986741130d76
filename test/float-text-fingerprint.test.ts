// A float's text became PostgreSQL's (1e+20, -0) and jsonb input refuses \u0000 and unpaired
// surrogate escapes: views that may write a float as text or parse text as jsonb get a new plan
// fingerprint, so state built under the old text is rebuilt from the inputs, not loaded (a
// retraction would compute another text than its insert did and meet no group).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

// The fingerprints these objects had before the change (computed on the commit before it, e02f5e3).
const BEFORE = {
  t: '0d8639a78d812f22',
  g: '3c138ffc923f232e',
  c: 'f76f2cc3e3b8f987',
  j: '6bd3b14d9a8a55a7',
  w: '3947b0110cd12265',
};

const DDL = [
  'CREATE TABLE t (id integer PRIMARY KEY, d double precision, r real, s text, a double precision[])',
  'CREATE MATERIALIZED VIEW g AS SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text',
  "CREATE MATERIALIZED VIEW c AS SELECT id, 'r' || r AS x, array_to_string(a, ',') AS y FROM t",
  'CREATE MATERIALIZED VIEW j AS SELECT s::jsonb AS k, COUNT(*) AS n FROM t GROUP BY s::jsonb',
  'CREATE MATERIALIZED VIEW w AS SELECT id, d, s FROM t',
];

test('views writing a float as text or parsing jsonb are rebuilt from a checkpoint taken before the change', () => {
  const original = trackedEngine(DDL);
  original.execute(
    `INSERT INTO t VALUES (1, 1e20, 1e6, '{"a": 1}', ARRAY[1e-5]), (2, '-0'::float8, 0.5, '[1]', ARRAY[2.5]), (3, 1e20, 2, '{"a": 1}', NULL)`,
  );
  const { checkpoint: current, fingerprints } = storedCheckpoint(original);
  // The table and a view that writes no float as text keep theirs: their checkpoints still load.
  assert.equal(fingerprints.t, BEFORE.t);
  assert.equal(fingerprints.w, BEFORE.w);
  for (const changed of ['g', 'c', 'j'] as const)
    assert.notEqual(fingerprints[changed], BEFORE[changed], changed);

  const aged = withFingerprints(current, BEFORE);
  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(aged).rebuilt].sort(), ['c', 'g', 'j']);
  const rows = (view: string): string[] =>
    restored.viewSnapshot(view).rows.map((r) => JSON.stringify(Object.values(r)));
  assert.deepEqual(rows('g').sort(), ['["-0",1]', '["1e+20",2]']);
  assert.deepEqual(rows('c').sort(), ['[1,"r1e+06","1e-05"]', '[2,"r0.5","2.5"]', '[3,"r2",null]']);
  // A retraction after the rebuild meets the group its insert made.
  restored.execute('DELETE FROM t WHERE id IN (1, 2)');
  assert.deepEqual(rows('g'), ['["1e+20",1]']);
  assert.deepEqual(rows('j'), [JSON.stringify(['{"a": 1}', 1])]);
});
