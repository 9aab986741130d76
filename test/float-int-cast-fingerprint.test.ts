// A double cast to an integer rounds a tie to even since the rint change: views that may hold such a
// cast get a new plan fingerprint, so state built under the old rounding is rebuilt, not loaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

// The fingerprints these objects had before the change (computed on the commit before it).
const BEFORE = { t: '63f4c9eed890ad18', v: '9a221c3cf76c2004', w: '928fba4102faea36', x: '480dc809a6024605' };

const DDL = [
  'CREATE TABLE t (id integer PRIMARY KEY, d double precision, r real)',
  'CREATE MATERIALIZED VIEW v AS SELECT CAST(d AS integer) AS k, COUNT(*) AS n FROM t GROUP BY CAST(d AS integer)',
  'CREATE MATERIALIZED VIEW w AS SELECT id, d FROM t',
  'CREATE MATERIALIZED VIEW x AS SELECT id, r::bigint AS b FROM t',
];

test('views with a double-to-integer cast are rebuilt from a checkpoint taken before rint', () => {
  const original = trackedEngine(DDL);
  original.execute('INSERT INTO t VALUES (1, 2.5, 3.5), (2, 3.5, 0.5), (3, -2.5, 1.5)');
  const { checkpoint: current, fingerprints } = storedCheckpoint(original);
  // The table and a view without such a cast keep theirs: their checkpoints still load.
  assert.equal(fingerprints.t, BEFORE.t);
  assert.equal(fingerprints.w, BEFORE.w);
  assert.notEqual(fingerprints.v, BEFORE.v);
  assert.notEqual(fingerprints.x, BEFORE.x);

  const aged = withFingerprints(current, BEFORE);
  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(aged).rebuilt].sort(), ['v', 'x']);
  const rows = (view: string): string[] =>
    restored.viewSnapshot(view).rows.map((r) => JSON.stringify(Object.values(r)));
  assert.deepEqual(rows('v').sort(), ['[-2,1]', '[2,1]', '[4,1]']);
  assert.deepEqual(rows('x').sort(), ['[1,4]', '[2,0]', '[3,2]']);
});
