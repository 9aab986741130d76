// HOP over shared panes under EMIT ON WINDOW CLOSE (src/ivm/lower-hop-panes.ts, ops/pane-close-op.ts):
// each view against its twin lowered one row per window (a WHERE on window_end keeps the old plan) —
// the same closed windows, value texts and all, and the same count of changes to closed windows —
// under inserts (some late), deletes and updates of rows in open, partly closed and closed windows;
// pane state freed as windows close; a checkpoint round trip. SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
import { exactRows, ignored, lateBatches, stamp, type LateBatchOptions } from './support/late-workload.ts';

/** A tenth of the present rows change in a batch; an update takes any v. */
const CHANGES: LateBatchOptions = { changeRate: 0.1, updatedValue: (rng) => rng.int(1, 9) };
const DDL = `CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '3' SECOND)`;
const AGGS =
  `COUNT(*) AS n, COUNT(NULLIF(v, 4)) AS nv, SUM(NULLIF(v, 4)) AS s, AVG(v) AS a, AVG(v * 0.5) AS ah, ` +
  `MIN(v) AS lo, MAX(v) FILTER (WHERE v < 8) AS hi, SUM(CAST(v AS BIGINT)) FILTER (WHERE k = 2) AS s2`;

/**
 * The shared view and its twin over the same HOP (slide 2 s, size 6 s, offset 1 s), with an allowed
 * lateness when `lateness` is given (e.g. `INTERVAL '3' SECOND`).
 */
function views(name: string, lateness = ''): [string, string] {
  const hop = `HOP(t, ts, INTERVAL '2' SECOND, INTERVAL '6' SECOND, INTERVAL '1' SECOND)`;
  const emit = `EMIT ON WINDOW CLOSE${lateness === '' ? '' : ` ALLOWED LATENESS ${lateness}`}`;
  return [
    `CREATE MATERIALIZED VIEW ${name} AS SELECT window_end, k, ${AGGS} FROM ${hop} WHERE v > 1 GROUP BY window_end, k ${emit}`,
    `CREATE MATERIALIZED VIEW ${name}_old AS SELECT window_end, k, ${AGGS} FROM ${hop} WHERE v > 1 AND window_end IS NOT NULL GROUP BY window_end, k ${emit}`,
  ];
}

test('HOP panes under EMIT ON WINDOW CLOSE equal the one-row-per-window plan', () => {
  const seeds =
    process.env['SLUICE_SEED'] !== undefined
      ? [Number(process.env['SLUICE_SEED'])]
      : [0, 1, 2, 3, 4, 5].map((i) => deriveSeed(2027, i));
  let compared = 0;
  let late = 0;
  for (const seed of seeds) {
    const rng = new Rng(seed);
    const e = new Engine();
    e.execute(DDL);
    for (const sql of views('h')) e.execute(sql);
    // The same with an allowed lateness: panes must outlive their last window's end by it too.
    for (const sql of views('hl', `INTERVAL '3' SECOND`)) e.execute(sql);
    assert.match(e.explainView('h'), /PaneClose/);
    assert.match(e.explainView('hl'), /PaneClose.*plus 00:00:03/);
    assert.doesNotMatch(e.explainView('h_old'), /PaneClose|pane_start/);
    let i = 0;
    for (const b of lateBatches(rng, 150, CHANGES)) {
      e.applyChanges('t', b);
      const where = `seed ${seed}, batch ${i++}; replay: SLUICE_SEED=${seed}`;
      for (const v of ['h', 'hl']) {
        const got = exactRows(e, v);
        assert.deepEqual(got, exactRows(e, `${v}_old`), `${v}, ${where}`);
        assert.equal(ignored(e, v), ignored(e, `${v}_old`), `${v}: changes to closed windows, ${where}`);
        compared += got.length;
      }
    }
    late += ignored(e, 'h');
    assert.ok(ignored(e, 'hl') < ignored(e, 'h'), 'the lateness applied changes the plain view ignored');
  }
  assert.ok(compared > 1000, `only ${compared} rows compared`);
  assert.ok(late > 0, 'no change reached a closed window: the counting is untested');
});

/** Entries of the view's stateful parts whose id matches, in a full checkpoint. */
function entries(e: Engine, view: string): { panes: number; windows: number } {
  const parts = e.takeCheckpoint(true).objects.find((o) => o.name === view)?.parts ?? [];
  const count = (n: number): number =>
    parts.find((p) => p.stateId === `${view}/reduce${n}`)?.delta.upserts.length ?? -1;
  return { panes: count(1), windows: count(3) };
}

test('panes are freed with their last window: state stays flat over a long run', () => {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute(DDL);
  e.execute(views('h')[0]);
  const seen: { panes: number; windows: number }[] = [];
  for (let i = 0; i < 3000; i++) {
    e.applyChanges('t', { insert: [{ id: i, k: i % 3, v: 2 + (i % 5), ts: stamp(i / 4) }], delete: [] });
    if (i % 200 === 199) seen.push(entries(e, 'h'));
  }
  // Four rows a second, a 3 s delay, 6 s windows: panes of ≤ 6 + 3 + 2 s are held (≤ 6 per key, 3
  // keys) and the windows open over them hold ≤ 3 partials each; plus one close entry each.
  const panes = Math.max(...seen.map((s) => s.panes));
  const windows = Math.max(...seen.map((s) => s.windows));
  assert.ok(Math.min(...seen.map((s) => s.panes)) > 0, 'no pane state seen');
  assert.ok(panes <= 3 * 6 + 1, `pane entries ${seen.map((s) => s.panes).join(',')}`);
  assert.ok(windows <= 3 * 5 * 3 + 1, `window entries ${seen.map((s) => s.windows).join(',')}`);
  assert.equal(e.viewSnapshot('h').rows.length > 3 * 300, true);
});

test('checkpoint round trip of the panes: same rows, appends and counts afterwards', () => {
  const rng = new Rng(deriveSeed(2027, 99));
  const all = [...lateBatches(rng, 120, CHANGES)];
  const setup = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    e.execute(DDL);
    e.execute(views('h')[0]);
    return e;
  };
  const original = setup();
  const store = new MemoryCheckpointStore();
  for (let i = 0; i < 60; i++) {
    original.applyChanges('t', all[i]!);
    if (i % 7 === 0) store.write(original.takeCheckpoint());
  }
  store.write(original.takeCheckpoint());
  const restored = setup();
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  assert.deepEqual(exactRows(restored, 'h'), exactRows(original, 'h'));
  assert.equal(ignored(restored, 'h'), ignored(original, 'h'));
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, i) => e.subscribe('h', (c) => logs[i]!.push(c)));
  for (let i = 60; i < all.length; i++) {
    original.applyChanges('t', all[i]!);
    restored.applyChanges('t', all[i]!);
  }
  assert.ok(logs[0].length > 0);
  assert.deepEqual(logs[1], logs[0]);
  assert.equal(ignored(restored, 'h'), ignored(original, 'h'));
  assert.ok(ignored(original, 'h') > 0);
});
