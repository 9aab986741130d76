// An interval times or divided by a number now cascades as PostgreSQL's interval_mul/interval_div
// ('1 month' / 7 was 4 days 06:51:25.714286, is 4 days 06:51:25.6896), and to_char writes a
// negative interval's fields as PostgreSQL does (-01:-02:-03, was -01:02:03): views that may compute
// one get a new plan fingerprint, so state built under the old values is rebuilt from the inputs,
// not loaded (a retraction would meet no group).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

// The fingerprints these objects had before the change (computed on the commit before it, d85f995).
const BEFORE = {
  t: '1130a50313db95b1',
  g: '7b8bd4474f872edb',
  c: 'bb3d55dcf5f4ac4a',
  w: '374caf331694b1b0',
};

const DDL = [
  'CREATE TABLE t (id integer PRIMARY KEY, took interval, at timestamp)',
  'CREATE MATERIALIZED VIEW g AS SELECT took / 7 AS share, COUNT(*) AS n FROM t GROUP BY took / 7',
  "CREATE MATERIALIZED VIEW c AS SELECT id, to_char(took, 'HH24:MI:SS') AS clock FROM t",
  'CREATE MATERIALIZED VIEW w AS SELECT id, took FROM t',
];

test('interval scaling and to_char as PostgreSQL: views computing one are rebuilt from an older checkpoint', () => {
  const original = trackedEngine(DDL);
  original.execute("INSERT INTO t VALUES (1, '1 mon', null), (2, '1 mon', null), (3, '-01:02:03', null)");
  const { checkpoint: current, fingerprints } = storedCheckpoint(original);
  // The table and a view that computes nothing keep theirs: their checkpoints still load.
  assert.equal(fingerprints.t, BEFORE.t);
  assert.equal(fingerprints.w, BEFORE.w);
  assert.notEqual(fingerprints.g, BEFORE.g);
  assert.notEqual(fingerprints.c, BEFORE.c);

  const aged = withFingerprints(current, BEFORE);
  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(aged).rebuilt].sort(), ['c', 'g']);
  const rows = (view: string): string[] =>
    restored.viewSnapshot(view).rows.map((r) => JSON.stringify(Object.values(r)));
  // PostgreSQL 15: '1 mon' / 7 is 4 days 06:51:25.6896; to_char('-01:02:03', 'HH24:MI:SS') is -01:-02:-03.
  assert.deepEqual(rows('g').sort(), ['["-00:08:51.857143",1]', '["4 days 06:51:25.6896",2]']);
  assert.deepEqual(rows('c').sort(), ['[1,"00:00:00"]', '[2,"00:00:00"]', '[3,"-01:-02:-03"]']);
  // A retraction after the rebuild meets the group its insert made.
  restored.execute('DELETE FROM t WHERE id = 1');
  assert.deepEqual(rows('g').sort(), ['["-00:08:51.857143",1]', '["4 days 06:51:25.6896",1]']);
});
