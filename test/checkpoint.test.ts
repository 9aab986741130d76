// Checkpoint round trips: an engine that takes incremental checkpoints while a seeded workload runs
// must be restorable from them (catalog by DDL replay, state from the checkpoint, the rest by
// replaying later batches) into an engine whose views and changelogs equal the original's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineCheckpoint, StoredCheckpoint } from '../src/exec/engine.ts';
import { Engine } from '../src/exec/engine.ts';
import { encodeStored as encodeValue } from '../src/common/json-codec.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import type { Step } from './support/checkpoint-workload.ts';
import {
  DDL,
  apply,
  big,
  freshEngine,
  mulberry32,
  record,
  snapshotAll,
  workload,
} from './support/checkpoint-workload.ts';

for (const seed of [1, 2, 3, 4, 5, 6]) {
  test(`restore from incremental checkpoints equals the uninterrupted run (seed ${seed})`, () => {
    const steps = workload(seed, 120);
    const original = freshEngine();
    const store = new MemoryCheckpointStore();
    const rnd = mulberry32(seed * 7919);
    const restoreAt = 30 + Math.floor(rnd() * 60);
    let checkpointAfter = 0;
    for (let i = 0; i < restoreAt; i++) {
      apply(original, steps[i] as Step);
      if (rnd() < 0.2) {
        store.write(original.takeCheckpoint());
        checkpointAfter = i + 1;
      }
    }
    store.write(original.takeCheckpoint());
    checkpointAfter = restoreAt;

    const restored = freshEngine();
    const { rebuilt } = restored.loadCheckpoint(store.read());
    assert.deepEqual(rebuilt, []);
    assert.equal(restored.epoch, original.epoch);
    assert.equal(snapshotAll(restored), snapshotAll(original), `seed ${seed}: state right after restore`);

    const a = record(original);
    const b = record(restored);
    for (let i = checkpointAfter; i < steps.length; i++) {
      apply(original, steps[i] as Step);
      apply(restored, steps[i] as Step);
      if (i % 17 === 0) store.write(restored.takeCheckpoint());
    }
    assert.equal(JSON.stringify(b, big), JSON.stringify(a, big), `seed ${seed}: changelogs after restore`);
    assert.equal(snapshotAll(restored), snapshotAll(original));
  });
}

test('a view whose plan fingerprint changed is rebuilt from its inputs, not restored', () => {
  const original = new Engine();
  original.execute(DDL.slice(0, 5).join(';'));
  for (const s of workload(9, 40).filter((x) => x.table === 'orders'))
    original.applyChanges(s.table, { insert: s.insert, delete: s.delete });
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint(true));
  const stored = store.read();
  const tampered: StoredCheckpoint = {
    ...stored,
    objects: new Map(
      [...stored.objects].map(([n, o]) => [
        n,
        n === 'total_histogram' ? { ...o, fingerprint: 'other-plan' } : o,
      ]),
    ),
  };
  const restored = new Engine();
  restored.execute(DDL.slice(0, 5).join(';'));
  assert.deepEqual(restored.loadCheckpoint(tampered).rebuilt, ['total_histogram']);
  assert.equal(snapshotAll(restored), snapshotAll(original));
});

// A checkpoint is written in slices while later epochs run, so what `takeCheckpoint` hands out must
// be a value: no operator may keep mutating an object it put into a delta (a multiset's value→count
// pair mutated in place once wrote counts from beyond the checkpoint's journal offset, which replay
// then applied twice — "negative multiplicity in min state", or a silently wrong SUM).
for (const seed of [11, 12, 13, 14]) {
  test(`a taken checkpoint does not change when later epochs run (seed ${seed})`, () => {
    const steps = workload(seed, 200);
    const engine = freshEngine();
    const rnd = mulberry32(seed * 31);
    const taken: { cp: EngineCheckpoint; text: string }[] = [];
    // Indexed (`slice`), so a keyed table's copy-on-write snapshot, which a checkpoint writer reads
    // once as it goes (test/checkpoint-snapshot.test.ts), is read whole at once and can be read again.
    const encode = (cp: EngineCheckpoint): string =>
      encodeValue(
        cp.objects.map((o) =>
          o.parts.map((p) => [p.stateId, { ...p.delta, upserts: p.delta.upserts.slice() }]),
        ),
      );
    for (const step of steps) {
      apply(engine, step);
      if (rnd() < 0.15) {
        const cp = engine.takeCheckpoint(rnd() < 0.2);
        taken.push({ cp, text: encode(cp) });
      }
    }
    assert.ok(taken.length > 10);
    for (const [i, t] of taken.entries()) {
      assert.equal(encode(t.cp), t.text, `seed ${seed}: checkpoint #${i + 1} at epoch ${t.cp.epoch} changed`);
    }
  });
}

// Float sums keep an exact integer part (a bigint beyond 2^53), a fractional part and counts of
// infinities; a checkpoint must carry all three, and one written before they were kept apart (a
// single double) must still restore.
test('float sums restore exactly: integer parts beyond 2^53, fractions, infinities', () => {
  const ddl =
    'CREATE TABLE fl (k INT PRIMARY KEY, g INT, x DOUBLE PRECISION);' +
    'CREATE MATERIALIZED VIEW fs AS SELECT g, SUM(x) AS s, AVG(x) AS a FROM fl GROUP BY g;' +
    "CREATE MATERIALIZED VIEW fi AS SELECT g, SUM(CASE WHEN x < 0 THEN 'Infinity'::float8 ELSE x END) AS s FROM fl GROUP BY g";
  const original = new Engine();
  original.execute(ddl);
  original.applyChanges('fl', {
    insert: [
      { k: 1, g: 1, x: 1e20 },
      { k: 2, g: 1, x: 1.5 },
      { k: 3, g: 2, x: 1e308 },
      { k: 4, g: 2, x: -2 },
      { k: 5, g: 3, x: 0.125 },
    ],
  });
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint(true));
  const restored = new Engine();
  restored.execute(ddl);
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  assert.equal(snapshotAll(restored), snapshotAll(original));
  // Retraction after the restore is as exact as before it.
  for (const engine of [original, restored]) engine.applyChanges('fl', { delete: [{ k: 1 }, { k: 4 }] });
  assert.equal(snapshotAll(restored), snapshotAll(original));
  // Both views: the sum, and the sum whose -2 was an Infinity that has left again.
  for (const view of ['fs', 'fi']) {
    const rows = restored.execute(`SELECT g, s FROM ${view} ORDER BY g`)[0];
    assert.ok(rows !== undefined && 'rows' in rows);
    assert.deepEqual(rows.rows, [
      { g: 1, s: 1.5 },
      { g: 2, s: 1e308 },
      { g: 3, s: 0.125 },
    ]);
  }

  // A checkpoint of the old format: each float sum one double in `s`, no `f` or `x`.
  const old = store.read();
  const legacy: StoredCheckpoint = {
    ...old,
    objects: new Map(
      [...old.objects].map(([name, o]) => [
        name,
        {
          ...o,
          parts: new Map([...o.parts].map(([id, entries]) => [id, [...entries].map(toLegacy)])),
        },
      ]),
    ),
  };
  const fromLegacy = new Engine();
  fromLegacy.execute(ddl);
  fromLegacy.loadCheckpoint(legacy);
  const fresh = new Engine();
  fresh.execute(ddl);
  fresh.loadCheckpoint(old);
  assert.equal(snapshotAll(fromLegacy), snapshotAll(fresh));
});

/**
 * A state entry as checkpoints held it before float sums kept their parts apart: each sum's `{s, f,
 * x}` folded into one double `s` (Infinity or NaN when the group held such inputs).
 */
function toLegacy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toLegacy);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if ('f' in o && 's' in o) {
    const { f, s, x, ...rest } = o as { f: number; s: number | bigint; x?: [number, number, number] };
    const folded =
      x === undefined
        ? Number(s) + f
        : x[2] > 0 || (x[0] > 0 && x[1] > 0)
          ? NaN
          : x[0] > 0
            ? Infinity
            : -Infinity;
    return { ...rest, s: folded };
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toLegacy(v)]));
}

test('UNIQUE constraints hold after a checkpoint loads: their indexes are rebuilt from the rows', () => {
  const ddl =
    "CREATE TABLE k (id INT PRIMARY KEY, x INT UNIQUE, tag TEXT DEFAULT 'new');" +
    'CREATE TABLE m (a INT, b INT, UNIQUE (a, b))';
  const original = new Engine();
  original.execute(ddl);
  const store = new MemoryCheckpointStore();
  original.setStateTracking(true);
  original.execute('INSERT INTO k (id, x) VALUES (1, 10), (2, NULL)');
  store.write(original.takeCheckpoint());
  original.applyChanges('m', {
    insert: [
      { a: 1, b: 1 },
      { a: 1, b: null },
    ],
  });
  original.applyChanges('k', { delete: [{ id: 1 }], insert: [{ id: 3, x: 10 }] });
  store.write(original.takeCheckpoint());

  const restored = new Engine();
  restored.execute(ddl);
  restored.loadCheckpoint(store.read());
  assert.deepEqual(restored.tableRows('k'), original.tableRows('k'));
  for (const engine of [original, restored]) {
    assert.throws(() => engine.applyChanges('k', { insert: [{ id: 4, x: 10 }] }), {
      code: 'UNIQUE_VIOLATION',
    });
    assert.throws(() => engine.applyChanges('m', { insert: [{ a: 1, b: 1 }] }), { code: 'UNIQUE_VIOLATION' });
    // The value row 1 held left with it; NULLs never conflict; the default came back with the DDL.
    engine.applyChanges('m', { insert: [{ a: 1, b: null }] });
    engine.applyChanges('k', { insert: [{ id: 5, x: 11 }] });
    assert.deepEqual(
      engine.tableRows('k').find((r) => r['id'] === 5),
      { id: 5, x: 11, tag: 'new' },
    );
  }
});
