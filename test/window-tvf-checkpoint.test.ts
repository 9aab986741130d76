// Checkpoint round trips of windowed views (TUMBLE's Map, HOP's FlatMap, aggregates, a window join,
// Top-N per window, views over windowed views): an engine running the window workload takes
// incremental checkpoints; a fresh engine restored from them (DDL replay, then the checkpoint) must
// hold the same views without rebuilding any — the plans, window arguments included, print to the
// same fingerprint — and from then on produce exactly the same change sets as the uninterrupted one.
// SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
import { restoreRoundTrip } from './support/restore-equivalence.ts';
import { createTableSql } from './support/sqlite-oracle.ts';
import {
  WINDOW_TABLES,
  WINDOW_TEMPLATES,
  WindowWorkload,
  windowView,
} from './support/window-tvf-templates.ts';

function big(_k: string, x: unknown): unknown {
  return typeof x === 'bigint' ? `${x}n` : x;
}

function roundTrip(seed: number): number {
  const rng = new Rng(seed);
  const ddl: string[] = WINDOW_TABLES.map(createTableSql);
  const names: string[] = [];
  WINDOW_TEMPLATES.forEach((t, i) => {
    const v = windowView(rng, t, `w${i}`);
    for (const x of v.base !== undefined ? [v.base, v] : [v]) {
      ddl.push(`CREATE MATERIALIZED VIEW ${x.name} AS ${x.sql}`);
      names.push(x.name);
    }
  });
  const setup = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    for (const sql of ddl) e.execute(sql);
    return e;
  };
  const snapshots = (e: Engine): string =>
    names
      .map(
        (n) =>
          `${n}: ${JSON.stringify(
            e
              .viewSnapshot(n)
              .rows.map((r) => JSON.stringify(r, big))
              .sort(),
          )}`,
      )
      .join('\n');
  const workload = new WindowWorkload(rng);
  const batches = Array.from({ length: 80 }, () => workload.batch());
  return restoreRoundTrip({
    rng,
    where: `seed ${seed}\n${ddl.map((s) => `  ${s};`).join('\n')}\n`,
    engine: setup,
    batches,
    apply: (e, b) => e.applyChanges(b.table, { insert: b.insert, delete: b.delete }),
    restoreAt: rng.int(20, 50),
    checkpointChance: 0.2,
    checkpointEvery: 13,
    views: names,
    snapshot: snapshots,
    encode: (sets) => JSON.stringify(sets, big),
    everyBatch: false,
    atRestore: (original, restored) => {
      assert.equal(restored.epoch, original.epoch);
      assert.ok(
        names.some((n) => original.viewSnapshot(n).rows.length > 0),
        `seed ${seed}: every view empty at the restore: the round trip checks nothing`,
      );
    },
  });
}

const only = process.env['SLUICE_SEED'];
const seeds = only !== undefined ? [Number(only)] : [0, 1, 2, 3].map((i) => deriveSeed(1202, i));

test('windowed views restore from incremental checkpoints and continue like the uninterrupted engine', () => {
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed);
  console.log(`window checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
  assert.ok(sets > 0);
});

test('a restart with another window size rebuilds the view instead of loading its state', () => {
  const ddl = (size: number): string[] => [
    WINDOW_TABLES.map(createTableSql)[0]!,
    `CREATE MATERIALIZED VIEW per_window AS SELECT window_start, COUNT(*) AS n FROM HOP(bid, ts, INTERVAL '5' SECOND, INTERVAL '${size}' SECOND) GROUP BY window_start`,
  ];
  const original = new Engine();
  original.setStateTracking(true);
  for (const s of ddl(10)) original.execute(s);
  original.applyChanges('bid', {
    insert: [
      { id: 1, auction: 1, price: 5, ts: '2024-01-01 00:00:07', day: null },
      { id: 2, auction: 1, price: 6, ts: '2024-01-01 00:00:12', day: null },
    ],
  });
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint(true));
  const same = new Engine();
  for (const s of ddl(10)) same.execute(s);
  assert.deepEqual(same.loadCheckpoint(store.read()).rebuilt, []);
  const other = new Engine();
  for (const s of ddl(15)) other.execute(s);
  // The plan prints the window size, so the fingerprint differs and the state is recomputed.
  assert.deepEqual(other.loadCheckpoint(store.read()).rebuilt, ['per_window']);
  const rows = other
    .viewSnapshot('per_window')
    .rows.map((r) => `${String(r['window_start'])}=${String(r['n'])}`)
    .sort();
  assert.deepEqual(rows, [
    '2023-12-31 23:59:55=1',
    '2024-01-01 00:00:00=2',
    '2024-01-01 00:00:05=2',
    '2024-01-01 00:00:10=1',
  ]);
});
