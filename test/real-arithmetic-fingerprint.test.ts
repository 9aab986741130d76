// A real's + - * / became single precision (0.1::real * 3::real was 0.30000000000000004, held in a
// column of type real): views that may compute one get a new plan fingerprint, so state built under
// the old values is rebuilt from the inputs, not loaded (a retraction would meet no group).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

// The fingerprints these objects had before the change (computed on the commit before it, 950303c).
const BEFORE = {
  t: '76fa88b5f4285566',
  g: '578b3aa713f046e0',
  w: '1230b0d9d88a5bce',
};

const DDL = [
  'CREATE TABLE t (id integer PRIMARY KEY, r real, d double precision)',
  'CREATE MATERIALIZED VIEW g AS SELECT r * 3::real AS k, COUNT(*) AS n FROM t GROUP BY r * 3::real',
  'CREATE MATERIALIZED VIEW w AS SELECT id, r FROM t',
];

test('real arithmetic in single precision: views computing one are rebuilt from an older checkpoint', () => {
  const original = trackedEngine(DDL);
  original.execute('INSERT INTO t VALUES (1, 0.1, 0.1), (2, 0.2, 0.2), (3, 0.1, 0)');
  const { checkpoint: current, fingerprints } = storedCheckpoint(original);
  // The table and a view that computes nothing keep theirs: their checkpoints still load.
  assert.equal(fingerprints.t, BEFORE.t);
  assert.equal(fingerprints.w, BEFORE.w);
  assert.notEqual(fingerprints.g, BEFORE.g);

  const aged = withFingerprints(current, BEFORE);
  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(aged).rebuilt].sort(), ['g']);
  const rows = (): string[] => restored.viewSnapshot('g').rows.map((r) => JSON.stringify(Object.values(r)));
  // PostgreSQL 15: 0.1::real * 3::real is 0.3, 0.2::real * 3::real is 0.6.
  assert.deepEqual(rows().sort(), ['[0.3,2]', '[0.6,1]']);
  // A retraction after the rebuild meets the group its insert made.
  restored.execute('DELETE FROM t WHERE id = 1');
  assert.deepEqual(rows().sort(), ['[0.3,1]', '[0.6,1]']);
});
