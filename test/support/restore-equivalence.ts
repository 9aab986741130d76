// One checkpoint round trip of the restore suites: an engine runs the first batches, taking full and
// incremental checkpoints now and then; a fresh engine restored from them must rebuild no view, hold
// the same views, and from then on produce exactly the change sets of the uninterrupted engine.
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import type { Row } from '../../src/common/types.ts';
import { stringifyWire } from '../../src/common/json-codec.ts';
import { MemoryCheckpointStore } from './memory-checkpoint-store.ts';
import { Rng } from './random-workload.ts';

export interface RestoreRoundTrip<B> {
  readonly rng: Rng;
  /** Opens every failure message (the seed, the DDL). */
  readonly where: string;
  /** A fresh engine with the DDL run and state tracking on. */
  readonly engine: () => Engine;
  readonly batches: readonly B[];
  readonly apply: (e: Engine, batch: B) => void;
  /** Batches before the restore. */
  readonly restoreAt: number;
  /** Before the restore, the chance of a checkpoint after a batch (a full one in a tenth of them). */
  readonly checkpointChance: number;
  /** After the restore, the restored engine checkpoints after every batch whose index this divides. */
  readonly checkpointEvery: number;
  readonly views: readonly string[];
  readonly snapshot: (e: Engine) => string;
  /** The change sets as compared: one string for the whole log. */
  readonly encode: (sets: readonly ViewChangeSet[]) => string;
  /** Compare snapshots after every batch past the restore (else at the end only). */
  readonly everyBatch: boolean;
  /** Checks right after the restore. */
  readonly atRestore?: (original: Engine, restored: Engine) => void;
  /** Called after each batch past the restore (everyBatch) with its index and the views' snapshot. */
  readonly afterBatch?: (i: number, snapshot: string) => void;
}

/** Runs the round trip; returns how many change sets were compared after the restore. */
export function restoreRoundTrip<B>(t: RestoreRoundTrip<B>): number {
  const original = t.engine();
  const store = new MemoryCheckpointStore();
  for (let i = 0; i < t.restoreAt; i++) {
    t.apply(original, t.batches[i] as B);
    if (t.rng.chance(t.checkpointChance)) store.write(original.takeCheckpoint(t.rng.chance(0.1)));
  }
  store.write(original.takeCheckpoint());
  const restored = t.engine();
  const { rebuilt } = restored.loadCheckpoint(store.read());
  assert.deepEqual(rebuilt, [], `${t.where}: views rebuilt instead of restored`);
  assert.equal(t.snapshot(restored), t.snapshot(original), `${t.where}: right after the restore`);
  t.atRestore?.(original, restored);
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, k) => {
    for (const v of t.views) e.subscribe(v, (c) => logs[k]!.push(c));
  });
  for (let i = t.restoreAt; i < t.batches.length; i++) {
    for (const e of [original, restored]) t.apply(e, t.batches[i] as B);
    if (i % t.checkpointEvery === 0) store.write(restored.takeCheckpoint());
    if (!t.everyBatch) continue;
    const now = t.snapshot(original);
    assert.equal(t.snapshot(restored), now, `${t.where}: after batch ${i} (restored at ${t.restoreAt})`);
    t.afterBatch?.(i, now);
  }
  if (!t.everyBatch) assert.equal(t.snapshot(restored), t.snapshot(original), `${t.where}: at the end`);
  assert.equal(logs[1].length, logs[0].length, `${t.where}: number of change sets after the restore`);
  assert.equal(t.encode(logs[1]), t.encode(logs[0]), `${t.where}: change sets`);
  return logs[0].length;
}

/** A batch of a keyed table's workload and the rows present after it. */
export interface KeyedBatch {
  readonly changes: { readonly insert: Row[]; readonly delete: Row[] };
  readonly rows: readonly Row[];
}

/**
 * `count` batches of 1–8 changes over a table keyed by `id`: inserts of `randomRow` rows with new
 * ids, and deletes (45%) of rows from earlier batches — a batch's deletes apply before its inserts.
 */
export function keyedBatches(
  rng: Rng,
  count: number,
  randomRow: (rng: Rng, id: number) => Row,
): KeyedBatch[] {
  const live = new Map<number, Row>();
  let nextId = 0;
  return Array.from({ length: count }, () => {
    const insert: Row[] = [];
    const del: Row[] = [];
    const before = [...live.keys()];
    for (let k = rng.int(1, 8); k > 0; k--) {
      if (before.length > 0 && rng.chance(0.45)) {
        const id = rng.pick(before);
        if (!live.has(id)) continue;
        del.push({ id });
        live.delete(id);
      } else {
        const row = randomRow(rng, nextId++);
        insert.push(row);
        live.set(row['id'] as number, row);
      }
    }
    return { changes: { insert, delete: del }, rows: [...live.values()] };
  });
}

/** One keyed table `t` and views over it, for oneTableRoundTrip. */
export interface OneTableViews {
  /** CREATE TABLE t (id … PRIMARY KEY, …). */
  readonly table: string;
  readonly views: readonly string[];
  readonly viewNames: readonly string[];
  readonly randomRow: (rng: Rng, id: number) => Row;
  /** A view row as compared (the views' snapshot is their rows so encoded, sorted); default the wire's. */
  readonly encodeRow?: (row: Row) => string;
  /** The change sets as compared; default the wire's encoding. */
  readonly encodeSets?: (sets: readonly ViewChangeSet[]) => string;
  /** Batches in a run, and the restore's range of batch indexes [from, to). */
  readonly batches: number;
  readonly restoreBetween: readonly [number, number];
  /** The rebuild inserts the rows in the reverse order (arrival order must leave no trace). */
  readonly rebuildReversed: boolean;
}

/**
 * The restore suites' common run over one keyed table: `keyedBatches`, a checkpoint round trip
 * (restoreRoundTrip, after every batch), and after every batch each view equal to the same views
 * built from scratch over the current rows. Returns the change sets compared after the restore.
 */
export function oneTableRoundTrip(spec: OneTableViews, seed: number): number {
  const encodeRow = spec.encodeRow ?? ((row: Row) => stringifyWire(row));
  const snapshot = (e: Engine): string =>
    spec.viewNames.map((v) => `${v}: ${e.viewSnapshot(v).rows.map(encodeRow).sort().join(' ')}`).join('\n');
  const engine = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    e.execute(spec.table);
    for (const v of spec.views) e.execute(v);
    return e;
  };
  const fromScratch = (rows: readonly Row[]): string => {
    const e = engine();
    const all = spec.rebuildReversed ? [...rows].reverse() : [...rows];
    if (all.length > 0) e.applyChanges('t', { insert: all });
    return snapshot(e);
  };
  const rng = new Rng(seed);
  const batches = keyedBatches(rng, spec.batches, spec.randomRow);
  return restoreRoundTrip({
    rng,
    where: `seed ${seed}`,
    engine,
    batches,
    apply: (e, b) => e.applyChanges('t', b.changes),
    restoreAt: rng.int(spec.restoreBetween[0], spec.restoreBetween[1]),
    checkpointChance: 0.3,
    checkpointEvery: 7,
    views: spec.viewNames,
    snapshot,
    encode: spec.encodeSets ?? ((sets) => stringifyWire(sets)),
    everyBatch: true,
    afterBatch: (i, now) =>
      assert.equal(
        now,
        fromScratch((batches[i] as KeyedBatch).rows),
        `seed ${seed}: batch ${i} differs from a rebuild`,
      ),
  });
}
