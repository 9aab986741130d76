// A view rebuilt at a checkpoint load (its plan fingerprint changed) may compute other rows than
// the stored state holds, while a view reading it keeps its own fingerprint (its print names the
// input, not what the input computes): the reader, the readers of that reader, and a shared
// arrangement over the rebuilt view must be rebuilt too, or they keep rows the input no longer
// has and a retraction meets nothing. The shape of the float-text change (c479eb0): `d::text`
// wrote 100000000000000000000 and 0 before, 1e+20 and -0 after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { StoredCheckpoint } from '../src/exec/engine-types.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { storedCheckpoint, withFingerprints } from './support/aged-checkpoint.ts';

// The fingerprints on e02f5e3 (before the float-text change): the readers' are those of today, so
// a checkpoint written then restored them over a rebuilt g.
const BEFORE: Record<string, string> = {
  g: '62c1523741b73f5b',
  dd: 'b9d6296cbf8d05cd',
  jn: 'e9feba24efc9cd3b',
  ddd: 'e72b2f260587826d',
  semi: '51d13290e7aca8e1',
};

const READERS = [
  'CREATE MATERIALIZED VIEW dd AS SELECT k, n FROM g WHERE n > 0',
  'CREATE MATERIALIZED VIEW jn AS SELECT g.k, g.n, l.label FROM g JOIN l ON g.k = l.k',
  'CREATE MATERIALIZED VIEW ddd AS SELECT k, n * 2 AS twice FROM dd',
  'CREATE MATERIALIZED VIEW semi AS SELECT k, label FROM l WHERE k IN (SELECT k FROM g)',
];
const SELECTS: Record<string, string> = {
  g: 'SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text',
  dd: 'SELECT k, n FROM (SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text) AS g WHERE n > 0',
  jn: 'SELECT g.k, g.n, l.label FROM (SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text) AS g JOIN l ON g.k = l.k',
  ddd: 'SELECT k, n * 2 AS twice FROM (SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text) AS g WHERE n > 0',
  semi: 'SELECT k, label FROM l WHERE k IN (SELECT d::text FROM t)',
};
// g as the version before wrote it: the old texts of 1e20 and -0, computed by today's engine.
const OLD_G =
  "CREATE MATERIALIZED VIEW g AS SELECT CASE WHEN d = 1e20 THEN '100000000000000000000' WHEN d = 0 THEN '0' ELSE d::text END AS k, COUNT(*) AS n FROM t GROUP BY CASE WHEN d = 1e20 THEN '100000000000000000000' WHEN d = 0 THEN '0' ELSE d::text END";

function engine(g: string): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute('CREATE TABLE t (id integer PRIMARY KEY, d double precision)');
  e.execute('CREATE TABLE l (k text PRIMARY KEY, label text)');
  e.execute(g);
  for (const sql of READERS) e.execute(sql);
  return e;
}

function fill(e: Engine): void {
  e.execute("INSERT INTO t VALUES (1, 1e20), (2, '-0'::float8), (3, 1e20), (4, 2.5)");
  e.execute(
    "INSERT INTO l VALUES ('1e+20', 'new big'), ('100000000000000000000', 'old big'), ('-0', 'new zero'), ('0', 'old zero'), ('2.5', 'plain')",
  );
}

/** A checkpoint as e02f5e3 wrote it: g's old texts in every state, g's old fingerprint. */
function checkpointBefore(): StoredCheckpoint {
  const original = engine(OLD_G);
  fill(original);
  return withFingerprints(storedCheckpoint(original, true).checkpoint, BEFORE);
}

const CURRENT_G = `CREATE MATERIALIZED VIEW g AS ${SELECTS.g}`;

function sorted(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map((r) => JSON.stringify(Object.values(r))).sort();
}

function assertViewsEqualSelects(e: Engine, when: string): void {
  for (const [view, select] of Object.entries(SELECTS)) {
    const [result] = e.execute(select);
    assert.deepEqual(sorted(e.viewSnapshot(view).rows), sorted(result?.rows ?? []), `${view} ${when}`);
  }
}

test('views reading a view rebuilt at a checkpoint load are rebuilt too, and its shared arrangement refilled', () => {
  const restored = engine(CURRENT_G);
  // The readers' plans print as they did before: only g's fingerprint tells its state is old.
  const plain = new MemoryCheckpointStore();
  plain.write(restored.takeCheckpoint(true));
  for (const reader of ['dd', 'jn', 'ddd', 'semi'])
    assert.equal(plain.read().objects.get(reader)?.fingerprint, BEFORE[reader], reader);

  const { rebuilt } = restored.loadCheckpoint(checkpointBefore());
  assertViewsEqualSelects(restored, 'after the restore');
  // Named, so the server ends their stored histories as it does g's.
  assert.deepEqual([...rebuilt].sort(), ['dd', 'ddd', 'g', 'jn', 'semi']);
  assert.deepEqual(sorted(restored.viewSnapshot('jn').rows), [
    '["-0",1,"new zero"]',
    '["1e+20",2,"new big"]',
    '["2.5",1,"plain"]',
  ]);
  assert.deepEqual(
    restored.sharedArrangements().map((a) => [a.name, a.rows]),
    [['g(0)', 3]],
  );
  // Retractions meet the rows their inserts made, in g and in every reader.
  restored.execute('DELETE FROM t WHERE id IN (1, 2)');
  assertViewsEqualSelects(restored, 'after a delete');
  restored.execute('INSERT INTO t VALUES (5, 0)');
  restored.execute("UPDATE l SET label = 'zero' WHERE k = '0'");
  assertViewsEqualSelects(restored, 'after an insert');
});

test('a checkpoint whose views all fit restores every view, rebuilding none', () => {
  const original = engine(CURRENT_G);
  fill(original);
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint(true));
  const restored = engine(CURRENT_G);
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  assertViewsEqualSelects(restored, 'after the restore');
  restored.execute('DELETE FROM t WHERE id IN (1, 2)');
  assertViewsEqualSelects(restored, 'after a delete');
});
