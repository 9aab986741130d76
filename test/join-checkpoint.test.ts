// Checkpoint round trips of join views: an engine running a seeded join workload (support/join-
// workload.ts) takes incremental checkpoints; a fresh engine restored from them (DDL replay, then the
// checkpoint) must hold the same views without rebuilding any (the join's arrangements of both
// inputs come from the checkpoint), and from then on produce the same changelogs and snapshots as the
// uninterrupted engine. SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
import { createTableSql } from './support/sqlite-oracle.ts';
import { JoinModel, randomJoinBatch, randomJoinBatchSize } from './support/join-schema.ts';
import { JOIN_TEMPLATES } from './support/join-template-parts.ts';
import { joinViewDdl, randomJoinScenario, type JoinScenario } from './support/join-templates.ts';
import { SCALAR_ROWS_TEMPLATES } from './support/scalar-subquery-templates.ts';

function big(_k: string, x: unknown): unknown {
  return typeof x === 'bigint' ? `${x}n` : x;
}

/** Each view's rows, or (a view in error: a scalar subquery of several rows) its row errors. */
function snapshots(engine: Engine, scenario: JoinScenario): string {
  const rows = (view: string): string[] => {
    try {
      return engine
        .viewSnapshot(view)
        .rows.map((r) => JSON.stringify(r, big))
        .sort();
    } catch {
      return ['(in error)', ...engine.viewErrors(view).map((e) => JSON.stringify(e, big))].sort();
    }
  };
  return scenario.views.map((v) => `${v.name}: ${JSON.stringify(rows(v.name))}`).join('\n');
}

function setup(scenario: JoinScenario): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  for (const t of scenario.schema.tables) e.execute(createTableSql(t));
  for (const v of scenario.views) e.execute(joinViewDdl(v));
  return e;
}

function roundTrip(seed: number, templates?: readonly string[]): number {
  const rng = new Rng(seed);
  const scenario = randomJoinScenario(rng, {
    minTemplates: 4,
    maxTemplates: 7,
    ...(templates !== undefined ? { templates } : {}),
  });
  const models = scenario.schema.tables.map((t) => new JoinModel(t, scenario.schema.domains));
  const batches = Array.from({ length: 90 }, () => {
    const m = rng.pick(models);
    const b = randomJoinBatch(rng, m, randomJoinBatchSize(rng));
    m.apply(b);
    return { table: m.table.name, changes: b };
  });
  const where = `seed ${seed}\n${scenario.views.map((v) => `  ${joinViewDdl(v)};`).join('\n')}`;
  const original = setup(scenario);
  const store = new MemoryCheckpointStore();
  const restoreAt = rng.int(20, 60);
  for (let i = 0; i < restoreAt; i++) {
    original.applyChanges(batches[i]!.table, batches[i]!.changes);
    if (rng.chance(0.2)) store.write(original.takeCheckpoint(rng.chance(0.1)));
  }
  store.write(original.takeCheckpoint());
  const restored = new Engine();
  restored.setStateTracking(true);
  for (const t of scenario.schema.tables) restored.execute(createTableSql(t));
  for (const v of scenario.views) restored.execute(joinViewDdl(v));
  const { rebuilt } = restored.loadCheckpoint(store.read());
  assert.deepEqual(rebuilt, [], `${where}\nviews rebuilt instead of restored`);
  assert.equal(restored.epoch, original.epoch);
  assert.equal(
    snapshots(restored, scenario),
    snapshots(original, scenario),
    `${where}\nright after the restore`,
  );
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, i) => {
    for (const v of scenario.views) e.subscribe(v.name, (c) => logs[i]!.push(c));
  });
  for (let i = restoreAt; i < batches.length; i++) {
    original.applyChanges(batches[i]!.table, batches[i]!.changes);
    restored.applyChanges(batches[i]!.table, batches[i]!.changes);
    if (i % 13 === 0) store.write(restored.takeCheckpoint());
    assert.equal(
      snapshots(restored, scenario),
      snapshots(original, scenario),
      `${where}\nafter batch ${i} (restored at ${restoreAt})`,
    );
  }
  // Exactly, order included: a restored arrangement keeps its rows' arrival order (main 54ed7d8;
  // before it, a restored join listed the changes of one epoch in another order).
  assert.equal(logs[1].length, logs[0].length, `${where}\nnumber of change sets after the restore`);
  logs[0].forEach((cs, i) => {
    assert.equal(
      JSON.stringify(logs[1][i], big),
      JSON.stringify(cs, big),
      `${where}\nchange set ${i} (view ${cs.view}, epoch ${cs.epoch})`,
    );
  });
  return logs[0].length;
}

const only = process.env['SLUICE_SEED'];
const seeds = only !== undefined ? [Number(only)] : [0, 1, 2, 3, 4, 5].map((i) => deriveSeed(4711, i));

test('join views restore from incremental checkpoints and continue like the uninterrupted engine', () => {
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed);
  console.log(`join checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});

// Set operations (their row → left/right count state), derived tables and WITH queries read twice.
const RELATIONAL = JOIN_TEMPLATES.filter((t) => /setop|union|intersect|except|derived|cte/.test(t));

test('set operation, derived table and WITH views restore from checkpoints and continue alike', () => {
  assert.ok(RELATIONAL.length >= 12, `only ${RELATIONAL.length} relational templates`);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, RELATIONAL);
  console.log(`relational checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});

// Predicate subqueries: a semi-join's left arrangement and right match counts (and for NOT IN its
// groups' row and NULL counts, and the index of left keys by group rebuilt from them) come from the
// checkpoint, so NOT IN keeps retracting and restoring rows as NULLs come and go after a restore.
const SUBQUERY = JOIN_TEMPLATES.filter((t) => /^(not_)*(in|exists)_|_semi$|two_predicates/.test(t));

test('IN / NOT IN / EXISTS views restore their semi-join state from checkpoints and continue alike', () => {
  assert.ok(SUBQUERY.length >= 14, `only ${SUBQUERY.length} subquery templates`);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, SUBQUERY);
  console.log(`subquery checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});

// Scalar subqueries: the one-row relation a view joins (a global aggregate, or [rows, MIN(value)]
// per correlation key with its value multiset) and the join's arrangements come from the checkpoint,
// so a subquery's value changing after the restore re-emits the outer rows exactly as before.
// The templates whose subquery can return several rows are in: their views' row errors are state too.
const SCALAR = [...JOIN_TEMPLATES.filter((t) => t.startsWith('scalar_')), ...SCALAR_ROWS_TEMPLATES];

test('scalar subquery views restore from checkpoints and continue alike', () => {
  assert.ok(SCALAR.length >= 12, `only ${SCALAR.length} scalar subquery templates`);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, SCALAR);
  console.log(
    `scalar subquery checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`,
  );
});

// Top-N, ranking and DISTINCT ON views: their partition → rows arrangement comes from the
// checkpoint (no rebuild), the per-partition order is derived again, and the changes after the
// restore are the uninterrupted engine's, order included.
const TOP_N = JOIN_TEMPLATES.filter((t) => /topn|rank|row_number|distinct_on/.test(t));

test('Top-N, ranking and DISTINCT ON views restore from checkpoints and continue alike', () => {
  assert.ok(TOP_N.length >= 10, `only ${TOP_N.length} Top-N templates`);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, TOP_N);
  console.log(`top-n checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});

// Window functions: the partition → rows arrangement comes from the checkpoint; the order and every
// slot's window values (and running aggregates) are derived again on load, and the changes after the
// restore — which rows are retracted and re-emitted with which values — are the uninterrupted
// engine's, order included.
const WINDOW = JOIN_TEMPLATES.filter((t) => t.startsWith('win_'));

test('window function views restore from checkpoints and continue alike', () => {
  assert.ok(WINDOW.length >= 8, `only ${WINDOW.length} window templates`);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, WINDOW);
  console.log(`window checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});

// BOOL_AND/BOOL_OR/EVERY, the variance family (their counts and exact Σx, Σx² per group) and
// STRING_AGG (its value → count multiset; with ORDER BY, its (value, keys) → count multiset).
// JSONB_OBJECT_AGG: its [key, value] pair → count multiset.
const AGG_MORE = JOIN_TEMPLATES.filter(
  (t) => t.startsWith('agg_more') || t.startsWith('string_agg') || t === 'jsonb_object_agg',
);

test('BOOL_AND/OR and variance views restore their per-group sums from checkpoints and continue alike', () => {
  assert.equal(AGG_MORE.length, 6);
  let sets = 0;
  for (const seed of seeds) sets += roundTrip(seed, AGG_MORE);
  console.log(`aggregate checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});
