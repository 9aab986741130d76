// IS [NOT] DISTINCT FROM in views against SQLite (whose IS DISTINCT FROM is the same null-safe
// comparison): rows full of NULLs, and -0 beside 0, are inserted, replaced and deleted batch by batch,
// and after every batch each view — projections, filters, HAVING, CASE, inner, left and full joins
// whose ON is a null-safe equi key (NULL matches NULL) or a null-safe residual — equals SQLite's
// result of the same SELECT; every fifth batch the SELECTs also run ad hoc. Halfway through, the
// engine is checkpointed and a fresh one restored from it (without rebuilding a view) carries on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/index.ts';
import { assertViewMatchesSqlite } from './support/sqlite-oracle.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { LcgRng } from './support/lcg-rng.ts';

const VIEWS: readonly { readonly name: string; readonly sql: string }[] = [
  { name: 'flags', sql: 'SELECT id, x IS DISTINCT FROM y AS d, x IS NOT DISTINCT FROM y AS nd FROM a' },
  { name: 'not_k', sql: "SELECT id, s FROM a WHERE s IS DISTINCT FROM 'k' AND f IS NOT DISTINCT FROM 0" },
  {
    name: 'grouped',
    sql: 'SELECT x, COUNT(*) AS n, SUM(y) AS sy FROM a GROUP BY x HAVING MAX(y) IS DISTINCT FROM 3',
  },
  {
    name: 'cased',
    sql:
      "SELECT CASE WHEN f IS NOT DISTINCT FROM 0 THEN 'zero' WHEN f IS NOT DISTINCT FROM NULL THEN 'null' ELSE 'other' END AS c, " +
      "COUNT(*) AS n FROM a GROUP BY CASE WHEN f IS NOT DISTINCT FROM 0 THEN 'zero' WHEN f IS NOT DISTINCT FROM NULL THEN 'null' ELSE 'other' END",
  },
  { name: 'inner_key', sql: 'SELECT a.id AS aid, b.id AS bid FROM a JOIN b ON a.y IS NOT DISTINCT FROM b.y' },
  {
    name: 'two_keys',
    sql: 'SELECT a.id AS aid, b.id AS bid, a.s FROM a JOIN b ON a.s IS NOT DISTINCT FROM b.s AND b.y IS NOT DISTINCT FROM a.x',
  },
  {
    name: 'left_residual',
    sql: 'SELECT a.id AS aid, b.id AS bid FROM a LEFT JOIN b ON a.s IS NOT DISTINCT FROM b.s AND a.x IS DISTINCT FROM b.y',
  },
  {
    name: 'full_key',
    sql: 'SELECT a.id AS aid, b.id AS bid, b.s FROM a FULL JOIN b ON a.x IS NOT DISTINCT FROM b.y',
  },
  {
    name: 'per_join_key',
    sql: 'SELECT b.y, COUNT(*) AS n FROM a JOIN b ON a.y IS NOT DISTINCT FROM b.y GROUP BY b.y',
  },
];

const INTS = [null, null, 0, 1, 2, 3];
const TEXTS = [null, null, '', 'k', 'm'];
const FLOATS = [null, 0, -0, 1.5];

const cell = (v: unknown): string =>
  v === null || v === undefined ? 'NULL' : v === true ? '1' : v === false ? '0' : String(v);

interface RowA {
  readonly id: number;
  readonly x: number | null;
  readonly y: number | null;
  readonly s: string | null;
  readonly f: number | null;
}
interface RowB {
  readonly id: number;
  readonly y: number | null;
  readonly s: string | null;
}

test('IS [NOT] DISTINCT FROM views equal SQLite after every batch (NULLs, -0, null-safe join keys)', () => {
  let checks = 0;
  for (const seed of [1, 2, 3, 4]) {
    const rng = new LcgRng(seed);
    let engine = new Engine();
    engine.setStateTracking(true);
    const db = new Database(':memory:');
    const schema = [
      'CREATE TABLE a (id integer PRIMARY KEY, x integer, y integer, s text, f double precision)',
      'CREATE TABLE b (id integer PRIMARY KEY, y integer, s text)',
      ...VIEWS.map((v) => `CREATE MATERIALIZED VIEW ${v.name} AS ${v.sql}`),
    ];
    for (const ddl of schema) engine.execute(ddl);
    db.exec('CREATE TABLE a (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER, s TEXT, f REAL)');
    db.exec('CREATE TABLE b (id INTEGER PRIMARY KEY, y INTEGER, s TEXT)');
    const liveA = new Map<number, RowA>();
    const liveB = new Map<number, RowB>();
    for (let epoch = 0; epoch < 40; epoch++) {
      if (epoch === 20) {
        const store = new MemoryCheckpointStore();
        store.write(engine.takeCheckpoint());
        const restored = new Engine();
        restored.setStateTracking(true);
        for (const ddl of schema) restored.execute(ddl);
        assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, [], `seed ${seed}: views rebuilt`);
        engine = restored;
      }
      const table = rng.int(3) === 0 ? 'b' : 'a';
      const live: Map<number, RowA | RowB> = table === 'a' ? liveA : liveB;
      const insert: (RowA | RowB)[] = [];
      const del: { id: number }[] = [];
      for (let i = 1 + rng.int(5); i > 0; i--) {
        const id = rng.int(12);
        if (insert.some((r) => r.id === id) || del.some((d) => d.id === id)) continue;
        if (live.has(id)) del.push({ id });
        if (live.has(id) && rng.int(2) === 0) continue; // a delete, else a replacement
        insert.push(
          table === 'a'
            ? { id, x: rng.pick(INTS), y: rng.pick(INTS), s: rng.pick(TEXTS), f: rng.pick(FLOATS) }
            : { id, y: rng.pick(INTS), s: rng.pick(TEXTS) },
        );
      }
      engine.applyChanges(table, { insert: insert.map((r) => ({ ...r })), delete: del });
      for (const d of del) {
        db.prepare(`DELETE FROM ${table} WHERE id = ?`).run(d.id);
        live.delete(d.id);
      }
      for (const r of insert) {
        const values = Object.values(r);
        db.prepare(`INSERT INTO ${table} VALUES (${values.map(() => '?').join(', ')})`).run(...values);
        live.set(r.id, r);
      }
      for (const v of VIEWS) {
        assertViewMatchesSqlite(engine, db, v, cell, `seed ${seed}, epoch ${epoch}`, epoch % 5 === 4);
        checks++;
      }
    }
  }
  assert.equal(checks, 4 * 40 * VIEWS.length);
});
