// EMIT ON WINDOW CLOSE ... ALLOWED LATENESS (src/ivm/ops/window-close-op.ts): a window stays open for
// the lateness past the watermark, so deletes in that time apply before its one final result (checked
// against SQLite over the windows closed at watermark - lateness), a checkpoint round trip, and the
// option in EXPLAIN DATAFLOW and the fingerprint. SLUICE_SEED=<n> replays one seed.
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
const LATENESS = 7;
const DDL = `CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '${DELAY}' SECOND)`;
const view = (name: string, lateness: string): string =>
  `CREATE MATERIALIZED VIEW ${name} AS SELECT window_end, k, COUNT(*) AS n, SUM(v) AS s FROM TUMBLE(t, ts, INTERVAL '${SIZE}' SECOND) GROUP BY window_end, k EMIT ON WINDOW CLOSE${lateness}`;
const LATE_VIEW = view('wl', ` ALLOWED LATENESS INTERVAL '${LATENESS}' SECOND`);
const PLAIN_VIEW = view('w', '');

function stamp(sec: number): string {
  return new Date(BASE + sec * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

interface Batch {
  readonly insert: { id: number; k: number; v: number; ts: string }[];
  readonly delete: { id: number }[];
}

/**
 * Inserts around a moving time (some late: the table drops them), and deletes of rows whose window
 * the lateness still keeps open — some of them in windows the watermark itself has passed.
 */
function workload(seed: number, length: number): { batches: Batch[]; marks: number[]; pastMark: number } {
  const rng = new Rng(seed);
  const rows = new Map<number, number>();
  let mark: number | null = null;
  let now = 0;
  let next = 1;
  let pastMark = 0;
  const batches: Batch[] = [];
  const marks: number[] = [];
  for (let b = 0; b < length; b++) {
    now += rng.int(0, 4);
    const insert: Batch['insert'] = [];
    const del: Batch['delete'] = [];
    for (const [id, ts] of rows) {
      const end = ts - (ts % SIZE) + SIZE;
      if (mark !== null && end > mark - LATENESS && rng.chance(0.15)) {
        del.push({ id });
        if (end <= mark) pastMark++;
      }
    }
    for (const d of del) rows.delete(d.id);
    let max: number | null = null;
    for (let i = rng.int(1, 4); i > 0; i--) {
      const ts = Math.max(0, now - rng.int(0, 12));
      const id = next++;
      insert.push({ id, k: rng.int(1, 3), v: rng.int(1, 9), ts: stamp(ts) });
      if (mark !== null && ts < mark) continue;
      rows.set(id, ts);
      max = max === null ? ts : Math.max(max, ts);
    }
    if (max !== null && (mark === null || max - DELAY > mark)) mark = max - DELAY;
    batches.push({ insert, delete: del });
    marks.push(mark ?? -Infinity);
  }
  return { batches, marks, pastMark };
}

test('ALLOWED LATENESS: changes within it apply, the window is emitted once at watermark - lateness', () => {
  const seeds =
    process.env['SLUICE_SEED'] !== undefined
      ? [Number(process.env['SLUICE_SEED'])]
      : [0, 1, 2, 3, 4, 5].map((i) => deriveSeed(1616, i));
  let compared = 0;
  let pastMark = 0;
  for (const seed of seeds) {
    const run = workload(seed, 120);
    pastMark += run.pastMark;
    const e = new Engine();
    e.execute(DDL);
    e.execute(LATE_VIEW);
    e.execute(PLAIN_VIEW);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, v INTEGER, ts INTEGER)');
    const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)');
    const del = db.prepare('DELETE FROM t WHERE id = ?');
    const q = db.prepare(
      `SELECT ts - ts % ${SIZE} + ${SIZE} AS we, k, COUNT(*) AS n, SUM(v) AS s FROM t
       WHERE ts - ts % ${SIZE} + ${SIZE} <= ? GROUP BY we, k ORDER BY we, k`,
    );
    const appended: string[] = [];
    e.subscribe('wl', (c) => {
      for (const ch of c.changes) {
        assert.equal(ch.op, '+I', `seed ${seed}: an EOWC view only appends, also with a lateness`);
        appended.push(JSON.stringify(ch.row));
      }
    });
    let mark: number | null = null;
    run.batches.forEach((b, i) => {
      e.applyChanges('t', { insert: b.insert, delete: b.delete });
      for (const d of b.delete) del.run(d.id);
      for (const r of b.insert) {
        const ts = (Date.parse(`${r.ts.replace(' ', 'T')}Z`) - BASE) / 1000;
        if (mark === null || ts >= mark) ins.run(r.id, r.k, r.v, ts);
      }
      mark = run.marks[i] === -Infinity ? null : (run.marks[i] as number);
      const want = (
        mark === null ? [] : (q.all(mark - LATENESS) as { we: number; k: number; n: number; s: number }[])
      ).map((r) => JSON.stringify({ window_end: stamp(r.we), k: r.k, n: r.n, s: r.s }));
      const got = e
        .viewSnapshot('wl')
        .rows.map((r) => JSON.stringify(r))
        .sort();
      assert.deepEqual(got, [...want].sort(), `seed ${seed}, batch ${i}, watermark ${mark}`);
      compared += want.length;
    });
    assert.equal(appended.length, e.viewSnapshot('wl').rows.length, `seed ${seed}: each row appended once`);
    // The same deletes reached windows the view without a lateness had closed: it counted them.
    const counts = new Map(e.closingViews().map((v) => [v.name, v.ignored]));
    assert.equal(counts.get('wl'), 0, `seed ${seed}: nothing ignored within the lateness`);
    if (run.pastMark > 0) assert.ok((counts.get('w') ?? 0) > 0, `seed ${seed}: the plain view counts them`);
  }
  assert.ok(compared > 100, `only ${compared} closed-window rows compared`);
  assert.ok(pastMark > 20, `only ${pastMark} deletes behind the watermark, within the lateness`);
});

test('ALLOWED LATENESS: checkpoint round trip gives the same rows and the same appends afterwards', () => {
  const { batches } = workload(deriveSeed(1616, 99), 100);
  const setup = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    e.execute(DDL);
    e.execute(LATE_VIEW);
    return e;
  };
  const original = setup();
  const store = new MemoryCheckpointStore();
  for (let i = 0; i < 50; i++) {
    original.applyChanges('t', batches[i]!);
    if (i % 7 === 0) store.write(original.takeCheckpoint());
  }
  store.write(original.takeCheckpoint());
  const restored = setup();
  assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, []);
  const snap = (e: Engine): string[] =>
    e
      .viewSnapshot('wl')
      .rows.map((r) => JSON.stringify(r))
      .sort();
  assert.deepEqual(snap(restored), snap(original));
  const logs: [ViewChangeSet[], ViewChangeSet[]] = [[], []];
  [original, restored].forEach((e, i) => e.subscribe('wl', (c) => logs[i]!.push(c)));
  for (let i = 50; i < batches.length; i++) {
    original.applyChanges('t', batches[i]!);
    restored.applyChanges('t', batches[i]!);
  }
  assert.ok(logs[0].length > 0);
  assert.deepEqual(logs[1], logs[0]);
  // A view of another lateness is another plan: its checkpoint is not loaded into it.
  const other = new Engine();
  other.execute(DDL);
  other.execute(view('wl', ` ALLOWED LATENESS INTERVAL '8' SECOND`));
  assert.deepEqual(other.loadCheckpoint(store.read()).rebuilt, ['wl']);
});

test('EXPLAIN DATAFLOW shows the allowed lateness, which changes the fingerprint; 0 does not', () => {
  const explain = (lateness: string): string => {
    const e = new Engine();
    e.execute(DDL);
    e.execute(view('w', lateness));
    return e.explainView('w');
  };
  const late = explain(` ALLOWED LATENESS INTERVAL '${LATENESS}' SECOND`);
  assert.match(late, /reduced once when the watermark of "t" reaches it plus 00:00:07 allowed lateness\)/);
  const fp = (text: string): string => /fingerprint ([0-9a-f]+)/.exec(text)?.[1] ?? '';
  assert.notEqual(fp(late), fp(explain('')));
  assert.equal(explain(" ALLOWED LATENESS INTERVAL '0' SECOND"), explain(''));
  assert.equal(explain(" ALLOWED LATENESS INTERVAL '7 seconds'"), late);
});
