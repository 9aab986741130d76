// SUM over floats is -0 exactly when every input is -0, as PostgreSQL's (its float8pl adds the inputs
// from the first: -0 + -0 is -0, any +0 or nonzero input makes the sum +0 or nonzero); AVG stays +0
// (PostgreSQL's float8_accum starts from +0). A group's state counts its -0 inputs, so the sign
// follows inserts and deletes, survives a checkpoint, and plans summing floats get a new fingerprint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/index.ts';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';

const DDL = [
  'CREATE TABLE ft (k integer PRIMARY KEY, g integer, f double precision, r real)',
  'CREATE MATERIALIZED VIEW fs AS SELECT g, SUM(f) AS s, SUM(r) AS sr, AVG(f) AS a FROM ft GROUP BY g',
];

/** Each group's [SUM(f), SUM(r), AVG(f)], with -0 told from 0. */
function sums(e: Engine): Record<string, string[]> {
  const show = (v: unknown): string => (Object.is(v, -0) ? '-0' : String(v));
  const out: Record<string, string[]> = {};
  for (const row of e.viewSnapshot('fs').rows) out[String(row.g)] = [show(row.s), show(row.sr), show(row.a)];
  return out;
}

test('a float SUM is -0 while every input is -0, through inserts and deletes', () => {
  const e = trackedEngine(DDL);
  e.execute("INSERT INTO ft VALUES (1, 1, '-0', '-0'), (2, 1, '-0', '-0'), (3, 2, '-0', '-0'), (4, 2, 0, 0)");
  assert.deepEqual(sums(e), { 1: ['-0', '-0', '0'], 2: ['0', '0', '0'] });
  e.execute('DELETE FROM ft WHERE k = 4');
  assert.deepEqual(sums(e), { 1: ['-0', '-0', '0'], 2: ['-0', '-0', '0'] });
  e.execute('INSERT INTO ft VALUES (5, 2, 1.5, 1.5), (6, 2, -1.5, -1.5)');
  assert.deepEqual(sums(e), { 1: ['-0', '-0', '0'], 2: ['0', '0', '0'] });
  e.execute('DELETE FROM ft WHERE k IN (5, 6)');
  assert.deepEqual(sums(e), { 1: ['-0', '-0', '0'], 2: ['-0', '-0', '0'] });
  // a NULL input does not count: SUM over -0 and NULL is -0
  e.execute('INSERT INTO ft VALUES (7, 2, NULL, NULL)');
  assert.deepEqual(sums(e), { 1: ['-0', '-0', '0'], 2: ['-0', '-0', '0'] });
  // an ad-hoc SELECT answers the same
  const [r] = e.execute('SELECT SUM(f) AS s FROM ft WHERE g = 1');
  assert.ok(r !== undefined && 'rows' in r && Object.is(r.rows?.[0]?.s, -0));
});

// The fingerprint the view had before the change (computed on the commit before it, ea087b6).
const BEFORE = { ft: '8e03091b7e3d5f15', fs: 'e760ec2bfcdb2c7f' };

test('the -0 counts survive a checkpoint; a view stored before them is rebuilt', () => {
  const original = trackedEngine(DDL);
  original.execute("INSERT INTO ft VALUES (1, 1, '-0', '-0'), (2, 1, '-0', 0), (3, 2, 2.5, 2.5)");
  const { checkpoint, fingerprints } = storedCheckpoint(original);
  if (process.env.PRINT_FINGERPRINTS === '1') console.log(JSON.stringify(fingerprints));
  assert.equal(fingerprints.ft, BEFORE.ft);
  assert.notEqual(fingerprints.fs, BEFORE.fs);

  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(checkpoint).rebuilt], []);
  assert.deepEqual(sums(restored), { 1: ['-0', '0', '0'], 2: ['2.5', '2.5', '2.5'] });
  restored.execute('DELETE FROM ft WHERE k = 1');
  assert.deepEqual(sums(restored), { 1: ['-0', '0', '0'], 2: ['2.5', '2.5', '2.5'] });
  restored.execute('DELETE FROM ft WHERE k = 3');
  restored.execute("INSERT INTO ft VALUES (4, 1, 0, '-0')");
  assert.deepEqual(sums(restored), { 1: ['0', '0', '0'] });

  const aged = trackedEngine(DDL);
  assert.deepEqual([...aged.loadCheckpoint(withFingerprints(checkpoint, BEFORE)).rebuilt], ['fs']);
  assert.deepEqual(sums(aged), { 1: ['-0', '0', '0'], 2: ['2.5', '2.5', '2.5'] });
});
