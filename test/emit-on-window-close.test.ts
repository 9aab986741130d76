// EMIT ON WINDOW CLOSE (src/ivm/ops/window-close-op.ts): against SQLite over the closed windows the
// test computes itself from the watermark, state staying flat over a long run, a checkpoint round
// trip, and EXPLAIN DATAFLOW. SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';

const BASE = Date.UTC(2024, 0, 1);
const DELAY = 5;
const SIZE = 10;
const DDL = `CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '${DELAY}' SECOND)`;
const SLIDE = 5;
const HOP_VIEW = `CREATE MATERIALIZED VIEW hw AS SELECT window_end, MAX(v) AS top, COUNT(*) AS n FROM HOP(t, ts, INTERVAL '${SLIDE}' SECOND, INTERVAL '${SIZE}' SECOND) GROUP BY window_end EMIT ON WINDOW CLOSE`;
const VIEW = `CREATE MATERIALIZED VIEW w AS SELECT window_end, k, COUNT(*) AS n, SUM(v) AS s FROM TUMBLE(t, ts, INTERVAL '${SIZE}' SECOND) GROUP BY window_end, k EMIT ON WINDOW CLOSE`;

function stamp(sec: number): string {
  return new Date(BASE + sec * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

interface Batch {
  readonly insert: { id: number; k: number; v: number; ts: string }[];
  readonly delete: { id: number }[];
}

/**
 * A seeded run: inserts around a moving time (some late), deletes of rows in windows still open.
 * `model` mirrors the table's watermark rule so the test knows the watermark and the late rows.
 */
function workload(seed: number, length: number): { batches: Batch[]; marks: number[] } {
  const rng = new Rng(seed);
  const rows = new Map<number, number>(); // id → ts (seconds)
  let mark: number | null = null;
  let now = 0;
  let next = 1;
  const batches: Batch[] = [];
  const marks: number[] = [];
  for (let b = 0; b < length; b++) {
    now += rng.int(0, 4);
    const insert: Batch['insert'] = [];
    const del: Batch['delete'] = [];
    for (const [id, ts] of rows) {
      // The earliest end among the row's TUMBLE and HOP windows: only rows of open windows are deleted.
      const end = ts - (ts % SLIDE) + SLIDE;
      if (mark !== null && end > mark && rng.chance(0.1)) del.push({ id });
    }
    for (const d of del) rows.delete(d.id);
    let max: number | null = null;
    for (let i = rng.int(1, 4); i > 0; i--) {
      const ts = Math.max(0, now - rng.int(0, 12));
      const id = next++;
      insert.push({ id, k: rng.int(1, 3), v: rng.int(1, 9), ts: stamp(ts) });
      if (mark !== null && ts < mark) continue; // late: the table drops it
      rows.set(id, ts);
      max = max === null ? ts : Math.max(max, ts);
    }
    if (max !== null && (mark === null || max - DELAY > mark)) mark = max - DELAY;
    batches.push({ insert, delete: del });
    marks.push(mark ?? -Infinity);
  }
  return { batches, marks };
}

test('EMIT ON WINDOW CLOSE equals SQLite over exactly the windows the watermark closed', () => {
  const seeds =
    process.env['SLUICE_SEED'] !== undefined
      ? [Number(process.env['SLUICE_SEED'])]
      : [0, 1, 2, 3, 4, 5, 6, 7].map((i) => deriveSeed(1515, i));
  let compared = 0;
  for (const seed of seeds) {
    const { batches, marks } = workload(seed, 120);
    const e = new Engine();
    e.execute(DDL);
    e.execute(VIEW);
    e.execute(HOP_VIEW);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, v INTEGER, ts INTEGER)');
    const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)');
    const del = db.prepare('DELETE FROM t WHERE id = ?');
    const q = db.prepare(
      `SELECT ts - ts % ${SIZE} + ${SIZE} AS we, k, COUNT(*) AS n, SUM(v) AS s FROM t
       WHERE ts - ts % ${SIZE} + ${SIZE} <= ? GROUP BY we, k ORDER BY we, k`,
    );
    // HOP(slide 5, size 10): a row is in the windows ending at its next multiple of 5 and 5 s later.
    const hq = db.prepare(
      `SELECT we, MAX(v) AS top, COUNT(*) AS n FROM (
         SELECT ts - ts % ${SLIDE} + ${SLIDE} AS we, v FROM t
         UNION ALL SELECT ts - ts % ${SLIDE} + ${2 * SLIDE} AS we, v FROM t)
       WHERE we <= ? GROUP BY we ORDER BY we`,
    );
    let mark: number | null = null;
    const appended: string[] = [];
    e.subscribe('w', (c) => {
      for (const ch of c.changes) {
        assert.equal(ch.op, '+I', `seed ${seed}: an EOWC view only appends`);
        appended.push(JSON.stringify(ch.row));
      }
    });
    batches.forEach((b, i) => {
      e.applyChanges('t', { insert: b.insert, delete: b.delete });
      for (const d of b.delete) del.run(d.id);
      for (const r of b.insert) {
        const ts = (Date.parse(`${r.ts.replace(' ', 'T')}Z`) - BASE) / 1000;
        if (mark === null || ts >= mark) ins.run(r.id, r.k, r.v, ts);
      }
      mark = marks[i] === -Infinity ? null : (marks[i] as number);
      const want = (
        mark === null ? [] : (q.all(mark) as { we: number; k: number; n: number; s: number }[])
      ).map((r) => JSON.stringify({ window_end: stamp(r.we), k: r.k, n: r.n, s: r.s }));
      const got = e
        .viewSnapshot('w')
        .rows.map((r) => JSON.stringify(r))
        .sort();
      assert.deepEqual(got, [...want].sort(), `seed ${seed}, batch ${i}, watermark ${mark}`);
      const hopWant = (mark === null ? [] : (hq.all(mark) as { we: number; top: number; n: number }[])).map(
        (r) => JSON.stringify({ window_end: stamp(r.we), top: r.top, n: r.n }),
      );
      const hopGot = e
        .viewSnapshot('hw')
        .rows.map((r) => JSON.stringify(r))
        .sort();
      assert.deepEqual(hopGot, [...hopWant].sort(), `seed ${seed}, batch ${i}, watermark ${mark} (HOP)`);
      compared += want.length + hopWant.length;
    });
    assert.equal(appended.length, e.viewSnapshot('w').rows.length, `seed ${seed}: each row appended once`);
  }
  assert.ok(compared > 100, `only ${compared} closed-window rows compared`);
});

/** State entries of the view's window-close Reduce in a full checkpoint. */
function heldEntries(e: Engine): number {
  const view = e.takeCheckpoint(true).objects.find((o) => o.name === 'w');
  const part = view?.parts.find((p) => /\/reduce\d+$/.test(p.stateId));
  assert.ok(part !== undefined, 'no window-close state in the checkpoint');
  return part.delta.upserts.length;
}

test('state of closed windows is freed: entries stay flat over a long run', () => {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute(DDL);
  e.execute(VIEW);
  const counts: number[] = [];
  for (let i = 0; i < 2000; i++) {
    e.applyChanges('t', { insert: [{ id: i, k: i % 3, v: 1, ts: stamp(i) }], delete: [] });
    if (i % 100 === 99) counts.push(heldEntries(e));
  }
  // One second per row, a 10 s window and a 5 s delay: at most two windows open, each holding its
  // [window_end, k, v] rows — three distinct, as v is always 1 — so ≤ 6 rows + 1 entry.
  assert.ok(Math.max(...counts) <= 7, `held entries ${counts.join(',')}`);
  assert.equal(e.viewSnapshot('w').rows.length, 3 * 199);
});

test('checkpoint round trip: same rows and the same appends afterwards', () => {
  const { batches } = workload(deriveSeed(1515, 99), 100);
  const setup = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    e.execute(DDL);
    e.execute(VIEW);
    return e;
  };
  const original = setup();
  const store = new MemoryCheckpointStore();
  for (let i = 0; i < 50; i++) {
    const b = batches[i]!;
    original.applyChanges('t', b);
    if (i % 7 === 0) store.write(original.takeCheckpoint());
  }
  store.write(original.takeCheckpoint());
  const restored = setup();
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  const snap = (e: Engine): string[] =>
    e
      .viewSnapshot('w')
      .rows.map((r) => JSON.stringify(r))
      .sort();
  assert.deepEqual(snap(restored), snap(original));
  assert.ok(snap(original).length > 0);
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, i) => e.subscribe('w', (c) => logs[i]!.push(c)));
  for (let i = 50; i < batches.length; i++) {
    original.applyChanges('t', batches[i]!);
    restored.applyChanges('t', batches[i]!);
  }
  assert.ok(logs[0].length > 0);
  assert.deepEqual(logs[1], logs[0]);
});

test('EXPLAIN DATAFLOW shows the window-close Reduce (TUMBLE, and HOP over closing panes under a WHERE)', () => {
  const e = new Engine();
  e.execute(DDL);
  e.execute(VIEW);
  e.execute(
    "CREATE MATERIALIZED VIEW h AS SELECT window_end, COUNT(*) AS n FROM HOP(t, ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) WHERE v > 0 GROUP BY window_end EMIT ON WINDOW CLOSE",
  );
  assert.equal(
    e.explainView('w'),
    "Dataflow for w (fingerprint 4c6ca224cc14703d)\n  n3 Output w key [window_end, k] state w/output [window_end:timestamp, k:integer, n:bigint, s:bigint]\n    n2 WindowClose (rows [keys, arguments] held by #0:window_end, reduced once when the watermark of \"t\" reaches it) Reduce+Merge key [#0:window_end, #1:k] aggregates [count(*) [invertible: O(1) per group], sum(#2) [invertible: O(1) per group]] (fused Map, no projected rows: keys [#5:window_end, #1:k]; arguments [#2:v]) state w/reduce2 \u2192 [window_end:timestamp, k:integer, n:bigint, s:bigint]\n      n1 Map (stateless) project [#0:id, #1:k, #2:v, #3:ts, tumble_start(#3:ts, interval '00:00:10', interval '00:00:00'), time_add(tumble_start(#3:ts, interval '00:00:10', interval '00:00:00'), interval '00:00:10')]; keeps the key \u2192 [id:integer, k:integer, v:integer, ts:timestamp, window_start:timestamp, window_end:timestamp]\n        n0 Input table t [id:integer, k:integer, v:integer, ts:timestamp]",
  );
  assert.equal(
    e.explainView('h'),
    "Dataflow for h (fingerprint 2e2ac7e2efa2bdd5)\n  n4 Output h key [window_end] state h/output [window_end:timestamp, n:bigint]\n    n3 WindowClose (rows [keys, arguments] held by #0:window_end, reduced once when the watermark of \"t\" reaches it) Reduce+Merge key [#0:window_end] aggregates [sum(#1) [invertible: O(1) per group]] (fused Map, no projected rows: keys [#3:window_end]; arguments [#1:count_0]) state h/reduce3 \u2192 [window_end:timestamp, n:bigint]\n      n2 FlatMap (stateless, at most 2 rows per input row) hop(#0:pane_start, slide interval '00:00:05', size interval '00:00:10', offset interval '00:00:00') \u2192 [pane_start:timestamp, count_0:bigint, window_start:timestamp, window_end:timestamp]\n        n1 PaneClose (a group dropped when the watermark of \"t\" reaches #0:pane_start + 10 s, the end of its last window) Reduce+Merge key [#0:pane_start] aggregates [count(*) [invertible: O(1) per group]] (fused Map, no projected rows: filter and(gt(#2:v, 0), is_not_null(#3:ts)); keys [tumble_start(#3:ts, interval '00:00:05', interval '00:00:00')]) state h/reduce1 \u2192 [pane_start:timestamp, count_0:bigint]\n          n0 Input table t [id:integer, k:integer, v:integer, ts:timestamp]",
  );
});
