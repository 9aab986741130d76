// A full checkpoint is read from copy-on-write snapshots while later epochs change, delete and
// re-insert the keyed table's rows: the entries are read a few at a time with whole epochs applied
// between reads (driven by counts, not timing), and the checkpoint loaded back must equal the state
// at the epoch it was taken — tables and views — and the next incremental one the state after.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckpointInput } from '../src/storage/checkpoint-store.ts';
import { CheckpointStore } from '../src/storage/checkpoint-store.ts';
import { SqliteStore } from '../src/storage/sqlite-store.ts';
import type { Engine } from '../src/exec/engine.ts';
import { removeDir, tempDir } from './server/helpers.ts';
import { apply, freshEngine, snapshotAll, tableState, workload } from './support/checkpoint-workload.ts';

function restored(cps: CheckpointStore): Engine {
  const stored = cps.read();
  assert.ok(stored !== null, 'a checkpoint is stored');
  const engine = freshEngine();
  assert.deepEqual(engine.loadCheckpoint(stored.checkpoint).rebuilt, []);
  return engine;
}

/** The checkpoint with `between()` called after every `every`-th entry read, in every part. */
function interleaved(cp: CheckpointInput, every: number, between: () => void): CheckpointInput {
  let read = 0;
  return {
    ...cp,
    objects: cp.objects.map((o) => ({
      ...o,
      parts: o.parts.map((p) => ({
        stateId: p.stateId,
        delta: {
          replaceAll: p.delta.replaceAll,
          deletes: p.delta.deletes,
          upserts: {
            *[Symbol.iterator]() {
              for (const entry of p.delta.upserts) {
                yield entry;
                if (++read % every === 0) between();
              }
            },
          } as unknown as readonly (readonly [string, unknown])[],
        },
      })),
    })),
  };
}

for (const [seed, every] of [
  [1, 1],
  [2, 2],
  [3, 3],
  [4, 1],
  [5, 2],
] as const) {
  test(`a checkpoint read while epochs change the table is the state at its epoch (seed ${seed}, an epoch per ${every} entries)`, () => {
    const dir = tempDir('sluice-cow-');
    try {
      const steps = workload(seed, 900);
      const engine = freshEngine();
      const sqlite = new SqliteStore({ dataDir: dir });
      const cps = new CheckpointStore(sqlite.db);
      let next = 0;
      for (; next < 500; next++) apply(engine, steps[next]!);
      const tablesAt = tableState(engine);
      const viewsAt = snapshotAll(engine);
      const cp = engine.takeCheckpoint(true);
      let applied = 0;
      const stats = cps.write(
        interleaved(cp, every, () => {
          if (next < steps.length) {
            apply(engine, steps[next++]!);
            applied++;
          }
        }),
        0,
      );
      assert.ok(applied >= 100, `${applied} epochs ran while the checkpoint was read`);
      assert.equal(stats.epoch, cp.epoch);
      assert.notEqual(tableState(engine), tablesAt, 'the live state moved on');
      const loaded = restored(cps);
      assert.equal(tableState(loaded), tablesAt);
      assert.equal(snapshotAll(loaded), viewsAt);

      // What changed while it was read is the next, incremental checkpoint.
      for (; next < steps.length; next++) apply(engine, steps[next]!);
      assert.equal(cps.checkpoint(engine, 0).full, false);
      const later = restored(cps);
      assert.equal(tableState(later), tableState(engine));
      assert.equal(snapshotAll(later), snapshotAll(engine));
      sqlite.close();
    } finally {
      removeDir(dir);
    }
  });
}
