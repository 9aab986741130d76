// EMIT ON WINDOW CLOSE over views (src/planner/bind-window-close.ts follows window_end into views):
// each EOWC view reading a view that computes TUMBLE or HOP (directly, or through a view of it) against
// its twin written over the table itself — the same closed windows, value texts and all, and the same
// count of changes to closed windows — under inserts (some late), deletes and updates of rows in open
// and closed windows; a view created over existing rows; a checkpoint round trip; EXPLAIN DATAFLOW.
// SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
import { exactRows, ignored, lateBatches, type LateBatchOptions } from './support/late-workload.ts';

/** An update always changes v, so it changes the windowing views' rows too. */
const CHANGES: LateBatchOptions = {
  changeRate: 0.12,
  updatedValue: (rng, v) => 1 + ((v + rng.int(0, 7)) % 9),
};
const DDL = `CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '3' SECOND)`;
const AGGS = `COUNT(*) AS n, SUM(v) AS s, AVG(v) AS a, MIN(v) AS lo, MAX(v) FILTER (WHERE v < 8) AS hi`;
const TUMBLE = `TUMBLE(t, ts, INTERVAL '5' SECOND)`;
const HOP = `HOP(t, ts, INTERVAL '2' SECOND, INTERVAL '6' SECOND, INTERVAL '1' SECOND)`;

/**
 * The windowing views (kept whole: each keeps `id`, so every change of a row the view passes reaches
 * the EOWC view over it, as it reaches the twin over the table) and the EOWC views with their twins.
 */
const WINDOWS = [
  `CREATE MATERIALIZED VIEW tw AS SELECT id, k, v, window_start, window_end FROM ${TUMBLE} WHERE v > 1`,
  `CREATE MATERIALIZED VIEW tww AS SELECT id, k AS kk, v AS vv, window_end AS we FROM tw WHERE k < 3`,
  `CREATE MATERIALIZED VIEW hw AS SELECT id, k, v, window_end FROM ${HOP} WHERE v > 1`,
];
function pairs(suffix = ''): [string, string, string][] {
  const emit = 'EMIT ON WINDOW CLOSE';
  const late = `${emit} ALLOWED LATENESS INTERVAL '4' SECOND`;
  return [
    [
      `vt${suffix}`,
      `SELECT window_end, k, ${AGGS} FROM tw GROUP BY window_end, k ${emit}`,
      `SELECT window_end, k, ${AGGS} FROM ${TUMBLE} WHERE v > 1 GROUP BY window_end, k ${emit}`,
    ],
    [
      `vtt${suffix}`,
      `SELECT we, kk, COUNT(*) AS n, SUM(vv) AS s FROM tww GROUP BY we, kk ${emit}`,
      `SELECT window_end AS we, k AS kk, COUNT(*) AS n, SUM(v) AS s FROM ${TUMBLE} WHERE v > 1 AND k < 3 GROUP BY window_end, k ${emit}`,
    ],
    [
      `vh${suffix}`,
      `SELECT window_end, k, ${AGGS} FROM hw GROUP BY window_end, k ${emit}`,
      `SELECT window_end, k, ${AGGS} FROM ${HOP} WHERE v > 1 GROUP BY window_end, k ${emit}`,
    ],
    [
      `vl${suffix}`,
      `SELECT window_end, COUNT(*) AS n, SUM(v) AS s FROM tw GROUP BY window_end ${late}`,
      `SELECT window_end, COUNT(*) AS n, SUM(v) AS s FROM ${TUMBLE} WHERE v > 1 GROUP BY window_end ${late}`,
    ],
  ];
}

function create(e: Engine, suffix = ''): string[] {
  const names: string[] = [];
  for (const [name, overView, direct] of pairs(suffix)) {
    e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${overView}`);
    e.execute(`CREATE MATERIALIZED VIEW ${name}_t AS ${direct}`);
    names.push(name);
  }
  return names;
}

function setup(): Engine {
  const e = new Engine();
  e.execute(DDL);
  for (const sql of WINDOWS) e.execute(sql);
  return e;
}

test('an EOWC view over a windowing view equals its twin over the table', () => {
  const seeds =
    process.env['SLUICE_SEED'] !== undefined
      ? [Number(process.env['SLUICE_SEED'])]
      : [0, 1, 2, 3, 4].map((i) => deriveSeed(1548, i));
  let compared = 0;
  const late = new Map<string, number>();
  for (const seed of seeds) {
    const rng = new Rng(seed);
    const e = setup();
    const names = create(e);
    let i = 0;
    for (const b of lateBatches(rng, 150, CHANGES)) {
      // Views created over existing rows start with the windows already closed, as their twins do.
      if (i === 60) names.push(...create(e, '_later'));
      e.applyChanges('t', b);
      const where = `seed ${seed}, batch ${i++}; replay: SLUICE_SEED=${seed}`;
      for (const v of names) {
        const got = exactRows(e, v);
        assert.deepEqual(got, exactRows(e, `${v}_t`), `${v}, ${where}`);
        assert.equal(ignored(e, v), ignored(e, `${v}_t`), `${v}: changes to closed windows, ${where}`);
        compared += got.length;
      }
    }
    for (const v of names) late.set(v, (late.get(v) ?? 0) + ignored(e, v));
    assert.ok(ignored(e, 'vl') < ignored(e, 'vt'), 'the lateness applied changes the plain view ignored');
  }
  assert.ok(compared > 5000, `only ${compared} rows compared`);
  for (const [v, n] of late)
    assert.ok(n > 0, `${v}: no change reached a closed window: the counting is untested`);
});

test('checkpoint round trip of EOWC views over views: same rows, appends and counts afterwards', () => {
  const all = [...lateBatches(new Rng(deriveSeed(1548, 99)), 120, CHANGES)];
  const make = (): Engine => {
    const e = setup();
    e.setStateTracking(true);
    create(e);
    return e;
  };
  const original = make();
  const store = new MemoryCheckpointStore();
  for (let i = 0; i < 60; i++) {
    original.applyChanges('t', all[i]!);
    if (i % 7 === 0) store.write(original.takeCheckpoint());
  }
  store.write(original.takeCheckpoint());
  const restored = make();
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  const views = ['vt', 'vtt', 'vh', 'vl'];
  for (const v of views) {
    assert.deepEqual(exactRows(restored, v), exactRows(original, v), v);
    assert.equal(ignored(restored, v), ignored(original, v), v);
  }
  const logs = new Map<string, [ViewChangeSet[], ViewChangeSet[]]>();
  for (const v of views) {
    const log: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
    logs.set(v, log);
    [original, restored].forEach((e, i) => e.subscribe(v, (c) => log[i]!.push(c)));
  }
  for (let i = 60; i < all.length; i++) {
    original.applyChanges('t', all[i]!);
    restored.applyChanges('t', all[i]!);
  }
  for (const [v, [a, b]] of logs) {
    assert.ok(a.length > 0, v);
    assert.deepEqual(b, a, v);
    assert.equal(ignored(restored, v), ignored(original, v), v);
  }
  assert.ok(ignored(original, 'vt') > 0);
});

test('EXPLAIN DATAFLOW: the view input closes on the table, and the clause is in the fingerprint', () => {
  const e = setup();
  create(e);
  e.execute(
    'CREATE MATERIALIZED VIEW plain AS SELECT window_end, k, COUNT(*) AS n FROM tw GROUP BY window_end, k',
  );
  e.execute(
    'CREATE MATERIALIZED VIEW closing AS SELECT window_end, k, COUNT(*) AS n FROM tw GROUP BY window_end, k EMIT ON WINDOW CLOSE',
  );
  const plan = e.explainView('vtt');
  assert.match(
    plan,
    /WindowClose \(rows \[keys, arguments\] held by #0:we, reduced once when the watermark of "t"/,
  );
  assert.match(plan, /Input view tww /);
  const fingerprint = (v: string): string => /fingerprint ([0-9a-f]+)/.exec(e.explainView(v))?.[1] ?? '';
  assert.notEqual(fingerprint('closing'), fingerprint('plain'));
  assert.notEqual(fingerprint('vl'), fingerprint('vl_t'));
});
