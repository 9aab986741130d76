// Checkpoint round trips of windowed views (TUMBLE's Map, HOP's FlatMap, aggregates, a window join,
// Top-N per window, views over windowed views): an engine running the window workload takes
// incremental checkpoints; a fresh engine restored from them (DDL replay, then the checkpoint) must
// hold the same views without rebuilding any — the plans, window arguments included, print to the
// same fingerprint — and from then on produce exactly the same change sets as the uninterrupted one.
// SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
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
  const where = `seed ${seed}\n${ddl.map((s) => `  ${s};`).join('\n')}`;
  const original = setup();
  const store = new MemoryCheckpointStore();
  const restoreAt = rng.int(20, 50);
  for (let i = 0; i < restoreAt; i++) {
    const b = batches[i]!;
    original.applyChanges(b.table, { insert: b.insert, delete: b.delete });
    if (rng.chance(0.2)) store.write(original.takeCheckpoint(rng.chance(0.1)));
  }
  store.write(original.takeCheckpoint());
  const restored = setup();
  const { rebuilt } = restored.loadCheckpoint(store.read());
  assert.deepEqual(rebuilt, [], `${where}\nviews rebuilt instead of restored`);
  assert.equal(restored.epoch, original.epoch);
  assert.equal(snapshots(restored), snapshots(original), `${where}\nright after the restore`);
  assert.ok(
    names.some((n) => original.viewSnapshot(n).rows.length > 0),
    `${where}\nevery view empty at the restore: the round trip checks nothing`,
  );
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, i) => {
    for (const n of names) e.subscribe(n, (c) => logs[i]!.push(c));
  });
  for (let i = restoreAt; i < batches.length; i++) {
    const b = batches[i]!;
    for (const e of [original, restored]) e.applyChanges(b.table, { insert: b.insert, delete: b.delete });
    if (i % 13 === 0) store.write(restored.takeCheckpoint());
  }
  assert.equal(snapshots(restored), snapshots(original), `${where}\nat the end`);
  assert.equal(logs[1].length, logs[0].length, `${where}\nnumber of change sets after the restore`);
  logs[0].forEach((cs, i) => {
    assert.equal(JSON.stringify(logs[1][i], big), JSON.stringify(cs, big), `${where}\nchange set ${i}`);
  });
  return logs[0].length;
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
