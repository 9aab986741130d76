// Row identity by exact text, randomized: numerics of one value and other scales (1.5, 1.50, 1.500)
// are inserted, updated and deleted at random, and after every batch the *text* of every view must
// equal a from-scratch computation over the current rows (an oracle that keeps each value as the text
// it was given and applies the documented rule: a group of equal values shows the text of the
// smallest scale present). SQLite cannot be the oracle here: it stores a numeric as a REAL and prints
// 1.50 as 1.5. Then the same with a checkpoint and restart halfway: the restored engine must show
// the same texts without rebuilding a view. SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { formatValue } from '../src/common/values.ts';
import type { Row, Value } from '../src/common/types.ts';
import type { TableChanges } from '../src/exec/api.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';

/** Equal values in several texts each (and -0.1 = -0.10, 0 = 0.0 = -0.0 for a numeric). */
const TEXTS = ['1.5', '1.50', '1.500', '2', '2.0', '2.00', '-0.1', '-0.10', '0', '0.0', '0.00', '10', '10.0'];

const DDL = [
  'CREATE TABLE t (id integer PRIMARY KEY, g integer, x numeric)',
  'CREATE TABLE k (g integer, x numeric)',
  'CREATE MATERIALIZED VIEW v AS SELECT id, x FROM t',
  'CREATE MATERIALIZED VIEW vx AS SELECT x FROM t',
  'CREATE MATERIALIZED VIEW kx AS SELECT g, x FROM k',
  'CREATE MATERIALIZED VIEW d AS SELECT DISTINCT x FROM t',
  'CREATE MATERIALIZED VIEW gk AS SELECT x, COUNT(*) AS n FROM t GROUP BY x',
  'CREATE MATERIALIZED VIEW gk2 AS SELECT g, x, COUNT(*) AS n FROM k GROUP BY g, x',
  'CREATE MATERIALIZED VIEW top3 AS SELECT id, x FROM t ORDER BY x, id LIMIT 3',
  'CREATE MATERIALIZED VIEW don AS SELECT DISTINCT ON (g) g, x FROM t ORDER BY g, x',
  'CREATE MATERIALIZED VIEW win AS SELECT id, MIN(x) OVER (PARTITION BY g) AS lo, MAX(x) OVER (PARTITION BY g) AS hi FROM t',
  'CREATE MATERIALIZED VIEW un AS SELECT x FROM t UNION SELECT x FROM k',
  'CREATE MATERIALIZED VIEW ex AS SELECT x FROM t EXCEPT SELECT x FROM k',
  'CREATE MATERIALIZED VIEW j AS SELECT t.id, t.x, k.x AS kx FROM t JOIN k ON t.g = k.g',
  'CREATE MATERIALIZED VIEW jx AS SELECT t.id, k.g FROM t JOIN k ON t.x = k.x',
];

const VIEWS = ['v', 'vx', 'kx', 'd', 'gk', 'gk2', 'top3', 'don', 'win', 'un', 'ex', 'j', 'jx'];

/** The value a text stands for (all texts here are exact as doubles, and -0 is 0 for a numeric). */
const num = (text: string): number => Number(text) + 0;
/** Digits after the point: the smaller first among equal values (compareExact's order). */
const scale = (text: string): number => (text.includes('.') ? text.length - text.indexOf('.') - 1 : 0);
/** The text a group of equal values shows: the smallest scale present. */
const pick = (texts: readonly string[]): string => texts.reduce((a, b) => (scale(b) < scale(a) ? b : a));

interface Model {
  readonly t: Map<number, { g: number; x: string }>;
  readonly k: { g: number; x: string }[];
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const at = out.get(k);
    if (at === undefined) out.set(k, [item]);
    else at.push(item);
  }
  return out;
}

/** Each view's rows as text lines, from the current rows alone. */
function oracle(m: Model): Record<string, string[]> {
  const t = [...m.t].map(([id, r]) => ({ id, ...r }));
  const line = (...cells: (string | number)[]): string => cells.join(' | ');
  const byValue = (xs: readonly string[]): string[] =>
    [...groupBy(xs, (x) => String(num(x))).values()].map(pick);
  const extreme = (xs: readonly string[], sign: 1 | -1): string => {
    const best = xs.reduce((a, b) => (sign * (num(b) - num(a)) < 0 ? b : a));
    return pick(xs.filter((x) => num(x) === num(best)));
  };
  const kValues = new Set(m.k.map((r) => num(r.x)));
  return {
    v: t.map((r) => line(r.id, r.x)),
    vx: t.map((r) => r.x),
    kx: m.k.map((r) => line(r.g, r.x)),
    d: byValue(t.map((r) => r.x)),
    gk: [...groupBy(t, (r) => String(num(r.x))).values()].map((rs) =>
      line(pick(rs.map((r) => r.x)), rs.length),
    ),
    gk2: [...groupBy(m.k, (r) => `${r.g}/${num(r.x)}`).values()].map((rs) =>
      line(rs[0]!.g, pick(rs.map((r) => r.x)), rs.length),
    ),
    top3: t
      .slice()
      .sort((a, b) => num(a.x) - num(b.x) || a.id - b.id)
      .slice(0, 3)
      .map((r) => line(r.id, r.x)),
    don: [...groupBy(t, (r) => String(r.g)).values()].map((rs) =>
      line(
        rs[0]!.g,
        extreme(
          rs.map((r) => r.x),
          1,
        ),
      ),
    ),
    win: t.map((r) => {
      const xs = t.filter((o) => o.g === r.g).map((o) => o.x);
      return line(r.id, extreme(xs, 1), extreme(xs, -1));
    }),
    un: byValue([...t.map((r) => r.x), ...m.k.map((r) => r.x)]),
    ex: byValue(t.map((r) => r.x).filter((x) => !kValues.has(num(x)))),
    j: t.flatMap((r) => m.k.filter((o) => o.g === r.g).map((o) => line(r.id, r.x, o.x))),
    jx: t.flatMap((r) => m.k.filter((o) => num(o.x) === num(r.x)).map((o) => line(r.id, o.g))),
  };
}

function cell(v: Value): string {
  return v === null ? 'NULL' : formatValue(v);
}

function actual(engine: Engine): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const view of VIEWS) {
    const snap = engine.viewSnapshot(view);
    const rows: string[] = [];
    for (const r of snap.rows) {
      const line = Object.values(r).map(cell).join(' | ');
      const n = (r as { _count?: number })._count ?? 1;
      for (let i = 0; i < n; i++) rows.push(line);
    }
    out[view] = rows;
  }
  return out;
}

function sorted(views: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(views).map(([k, rows]) => [k, rows.slice().sort()]));
}

function setup(): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  for (const sql of DDL) e.execute(sql);
  return e;
}

/** One random batch against the model: inserts, updates to another text, deletes. */
function randomBatch(rng: Rng, m: Model): { table: 't' | 'k'; changes: TableChanges } {
  if (rng.chance(0.6)) {
    const insert: Row[] = [];
    const del: Row[] = [];
    const n = rng.int(1, 4);
    const touched = new Set<number>();
    for (let i = 0; i < n; i++) {
      const id = rng.int(1, 12);
      if (touched.has(id)) continue;
      touched.add(id);
      if (m.t.has(id) && rng.chance(0.3)) {
        del.push({ id });
        m.t.delete(id);
      } else {
        // an insert, or (the key is present) an update: often to an equal value of another text
        const old = m.t.get(id);
        const x =
          old !== undefined && rng.chance(0.6)
            ? rng.pick(TEXTS.filter((s) => num(s) === num(old.x)))
            : rng.pick(TEXTS);
        const g = old !== undefined && rng.chance(0.7) ? old.g : rng.int(1, 3);
        insert.push({ id, g, x });
        m.t.set(id, { g, x });
      }
    }
    return { table: 't', changes: { insert, delete: del } };
  }
  if (m.k.length > 0 && rng.chance(0.45)) {
    // delete a row by its text, or (a text no row holds) by an equal value: the smallest scale goes
    const target = rng.pick(m.k);
    const sameText = rng.chance(0.7);
    const x = sameText ? target.x : rng.pick(TEXTS.filter((s) => num(s) === num(target.x)));
    const exact = m.k.findIndex((r) => r.g === target.g && r.x === x);
    let at = exact;
    if (at < 0) {
      const equal = m.k.filter((r) => r.g === target.g && num(r.x) === num(x));
      const chosen = pick(equal.map((r) => r.x));
      at = m.k.findIndex((r) => r.g === target.g && r.x === chosen);
    }
    m.k.splice(at, 1);
    return { table: 'k', changes: { delete: [{ g: target.g, x }] } };
  }
  const insert = Array.from({ length: rng.int(1, 3) }, () => ({ g: rng.int(1, 3), x: rng.pick(TEXTS) }));
  m.k.push(...insert);
  return { table: 'k', changes: { insert } };
}

function seeds(base: number, n: number): number[] {
  const one = process.env.SLUICE_SEED;
  if (one !== undefined) return [Number(one)];
  return Array.from({ length: n }, (_, i) => deriveSeed(base, i));
}

test('every view shows the exact texts of its current rows, batch after batch', () => {
  for (const seed of seeds(0x7e47, 12)) {
    const rng = new Rng(seed);
    const engine = setup();
    const model: Model = { t: new Map(), k: [] };
    for (let b = 0; b < 60; b++) {
      const { table, changes } = randomBatch(rng, model);
      engine.applyChanges(table, changes);
      assert.deepEqual(sorted(actual(engine)), sorted(oracle(model)), `seed ${seed}, batch ${b + 1}`);
    }
  }
});

test('a restored engine shows the same texts and goes on like the uninterrupted one', () => {
  for (const seed of seeds(0x5eed, 8)) {
    const rng = new Rng(seed);
    const original = setup();
    const model: Model = { t: new Map(), k: [] };
    const store = new MemoryCheckpointStore();
    // each batch with what the views show after it
    const batches = Array.from({ length: 60 }, () => ({
      ...randomBatch(rng, model),
      expected: sorted(oracle(model)),
    }));
    const restoreAt = rng.int(15, 40);
    for (let i = 0; i < restoreAt; i++) {
      original.applyChanges(batches[i]!.table, batches[i]!.changes);
      if (rng.chance(0.3)) store.write(original.takeCheckpoint(rng.chance(0.1)));
    }
    store.write(original.takeCheckpoint());
    const restored = new Engine();
    restored.setStateTracking(true);
    for (const sql of DDL) restored.execute(sql);
    const { rebuilt } = restored.loadCheckpoint(store.read());
    assert.deepEqual(rebuilt, [], `seed ${seed}: views rebuilt instead of restored`);
    assert.deepEqual(
      sorted(actual(restored)),
      batches[restoreAt - 1]!.expected,
      `seed ${seed}: after restore`,
    );
    for (let i = restoreAt; i < batches.length; i++) {
      original.applyChanges(batches[i]!.table, batches[i]!.changes);
      restored.applyChanges(batches[i]!.table, batches[i]!.changes);
      if (rng.chance(0.3)) store.write(restored.takeCheckpoint());
      assert.deepEqual(
        sorted(actual(restored)),
        batches[i]!.expected,
        `seed ${seed}: batch ${i + 1} after restore`,
      );
      assert.deepEqual(sorted(actual(original)), batches[i]!.expected, `seed ${seed}: batch ${i + 1}`);
    }
    // and the final checkpoint, written incrementally since the restore, restores those texts too
    store.write(restored.takeCheckpoint());
    const again = new Engine();
    for (const sql of DDL) again.execute(sql);
    again.loadCheckpoint(store.read());
    assert.deepEqual(
      sorted(actual(again)),
      batches[batches.length - 1]!.expected,
      `seed ${seed}: second restore`,
    );
  }
});

// The fingerprints the same objects had before exact row identity (computed on the commit before
// it): state stored under them keyed equal rows as one, under other entry ids.
const BEFORE = {
  t: 'bbd977324779a24e',
  v: 'e8b50a0617677f50',
  plain: 'ca44815f5b8ff7f4',
  pv: 'f2c9774b543c683b',
};

test('a checkpoint from before exact row identity is refused for numeric tables and rebuilt for views', () => {
  const ddl = [
    'CREATE TABLE t (id integer PRIMARY KEY, g integer, x numeric)',
    'CREATE TABLE plain (id integer PRIMARY KEY, s text)',
    'CREATE MATERIALIZED VIEW v AS SELECT id, x FROM t',
    'CREATE MATERIALIZED VIEW pv AS SELECT id, s FROM plain',
  ];
  const engine = (): Engine => {
    const e = new Engine();
    e.setStateTracking(true);
    for (const sql of ddl) e.execute(sql);
    return e;
  };
  const original = engine();
  original.applyChanges('t', { insert: [{ id: 1, g: 1, x: '1.50' }] });
  original.applyChanges('t', { insert: [{ id: 1, g: 1, x: '1.5' }] });
  original.applyChanges('plain', { insert: [{ id: 1, s: 'a' }] });
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint());
  const current = store.read();
  const fingerprints = Object.fromEntries([...current.objects].map(([name, o]) => [name, o.fingerprint]));
  // Objects whose values always print alike keep their fingerprints (their checkpoints still load).
  assert.equal(fingerprints.plain, BEFORE.plain);
  assert.equal(fingerprints.pv, BEFORE.pv);
  assert.notEqual(fingerprints.t, BEFORE.t);
  assert.notEqual(fingerprints.v, BEFORE.v);
  const aged = (names: readonly (keyof typeof BEFORE)[]): typeof current => ({
    ...current,
    objects: new Map(
      [...current.objects].map(([name, o]) => [
        name,
        names.includes(name as keyof typeof BEFORE)
          ? { ...o, fingerprint: BEFORE[name as keyof typeof BEFORE] }
          : o,
      ]),
    ),
  });
  // A numeric table's old state is refused (the runtime then replays the whole journal) ...
  assert.throws(
    () => engine().loadCheckpoint(aged(['t', 'v'])),
    (e: unknown) => (e as { code?: string }).code === 'STATE_ERROR',
  );
  // ... and a view's old state is not loaded: the view is rebuilt from its inputs.
  const restored = engine();
  assert.deepEqual(restored.loadCheckpoint(aged(['v'])).rebuilt, ['v']);
  assert.deepEqual(actualOf(restored, 'v'), ['1 | 1.5']);
});

function actualOf(engine: Engine, view: string): string[] {
  return engine.viewSnapshot(view).rows.map((r) => Object.values(r).map(cell).join(' | '));
}
