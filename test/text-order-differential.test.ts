// Text order is by code point, as SQLite's BINARY collation (memcmp over UTF-8) and PostgreSQL's C
// collation: a character above U+FFFF (a UTF-16 surrogate pair) sorts after U+E000–U+FFFF, where
// JavaScript's `<` on strings puts it before. Views that order or compare such text — Top-N,
// ROW_NUMBER per partition, MIN/MAX, `<` and BETWEEN, RANK, STRING_AGG, GREATEST/LEAST, array
// comparison — are kept through random inserts, replacements and deletes and, after every batch,
// equal SQLite's result of the same SELECT (NULLs placed explicitly: SQLite's default differs) (ad hoc too, every fifth batch). Halfway the engine is
// checkpointed and a fresh one restored from it carries on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/index.ts';
import { assertViewMatchesSqlite } from './support/sqlite-oracle.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { LcgRng } from './support/lcg-rng.ts';

interface TextView {
  readonly name: string;
  readonly sql: string;
  /** SQLite's spelling of the same SELECT, when it differs. */
  readonly oracle?: string;
}

const VIEWS: readonly TextView[] = [
  { name: 'first3', sql: 'SELECT id, s FROM t ORDER BY s NULLS LAST, id LIMIT 3' },
  { name: 'last3', sql: 'SELECT id, s FROM t ORDER BY s DESC NULLS LAST, id LIMIT 3' },
  {
    name: 'per_group',
    sql: 'SELECT g, id, s FROM (SELECT g, id, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s DESC NULLS FIRST, id) AS r FROM t) x WHERE r <= 2',
  },
  {
    name: 'extremes',
    sql: 'SELECT g, MIN(s) AS lo, MAX(s) AS hi, MIN(u) AS ulo, MAX(u) AS uhi FROM t GROUP BY g',
  },
  { name: 'below', sql: "SELECT id FROM t WHERE s < '\uE000x'" },
  { name: 'in_range', sql: "SELECT id FROM t WHERE s BETWEEN 'b' AND '\u{1F600}'" },
  { name: 'columns', sql: 'SELECT id, s < u AS lt, s >= u AS ge FROM t' },
  { name: 'ranked', sql: 'SELECT id, RANK() OVER (ORDER BY s NULLS LAST) AS r FROM t' },
  {
    name: 'joined',
    sql: "SELECT g, STRING_AGG(s, ',') AS all_s FROM t GROUP BY g",
    oracle:
      "SELECT g, (SELECT group_concat(s, ',') FROM (SELECT s FROM t AS i WHERE i.g = t.g AND s IS NOT NULL ORDER BY s)) AS all_s FROM t GROUP BY g",
  },
  {
    name: 'greatest',
    sql: 'SELECT id, GREATEST(s, u) AS hi, LEAST(s, u) AS lo FROM t WHERE s IS NOT NULL AND u IS NOT NULL',
    oracle: 'SELECT id, max(s, u) AS hi, min(s, u) AS lo FROM t WHERE s IS NOT NULL AND u IS NOT NULL',
  },
  {
    name: 'arrays',
    sql: 'SELECT id, ARRAY[s, u] < ARRAY[u, s] AS lt FROM t WHERE s IS NOT NULL AND u IS NOT NULL',
    oracle: 'SELECT id, s < u AS lt FROM t WHERE s IS NOT NULL AND u IS NOT NULL',
  },
];

/** Around the surrogates: U+E000, U+FF21, U+FFFD and U+FFFF against U+10000 and U+1F600, as a prefix too. */
const TEXTS = [
  null,
  '',
  'a',
  'b',
  'é',
  '\uE000',
  '\uFF21',
  '\uFFFD',
  '\uFFFF',
  '\u{10000}',
  '\u{1F600}',
  'a\u{1F600}',
  'a\uFFFF',
  '\u{1F600}a',
  '\uE000\u{1F600}',
];

const cell = (v: unknown): string =>
  v === null || v === undefined ? 'NULL' : v === true ? '1' : v === false ? '0' : String(v);

interface Row {
  readonly id: number;
  readonly g: number;
  readonly s: string | null;
  readonly u: string | null;
}

test('views ordering and comparing text above U+FFFF equal SQLite (code point order) after every batch', () => {
  let checks = 0;
  for (const seed of [1, 2, 3]) {
    const rng = new LcgRng(seed);
    let engine = new Engine();
    const db = new Database(':memory:');
    const schema = [
      'CREATE TABLE t (id integer PRIMARY KEY, g integer, s text, u text)',
      ...VIEWS.map((v) => `CREATE MATERIALIZED VIEW ${v.name} AS ${v.sql}`),
    ];
    for (const ddl of schema) engine.execute(ddl);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, s TEXT, u TEXT)');
    const live = new Map<number, Row>();
    for (let epoch = 0; epoch < 30; epoch++) {
      if (epoch === 15) {
        const store = new MemoryCheckpointStore();
        store.write(engine.takeCheckpoint());
        const restored = new Engine();
        for (const ddl of schema) restored.execute(ddl);
        assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, [], `seed ${seed}: views rebuilt`);
        engine = restored;
      }
      const insert: Row[] = [];
      const del: { id: number }[] = [];
      for (let i = 1 + rng.int(6); i > 0; i--) {
        const id = rng.int(16);
        if (insert.some((r) => r.id === id) || del.some((d) => d.id === id)) continue;
        if (live.has(id)) del.push({ id });
        if (live.has(id) && rng.int(3) === 0) continue; // a delete, else a replacement
        insert.push({ id, g: rng.int(3), s: rng.pick(TEXTS), u: rng.pick(TEXTS) });
      }
      engine.applyChanges('t', { insert: insert.map((r) => ({ ...r })), delete: del });
      for (const d of del) {
        db.prepare('DELETE FROM t WHERE id = ?').run(d.id);
        live.delete(d.id);
      }
      for (const r of insert) {
        db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)').run(r.id, r.g, r.s, r.u);
        live.set(r.id, r);
      }
      for (const v of VIEWS) {
        assertViewMatchesSqlite(engine, db, v, cell, `seed ${seed}, epoch ${epoch}`, epoch % 5 === 4);
        checks++;
      }
    }
  }
  assert.equal(checks, 3 * 30 * VIEWS.length);
});

test('an ad-hoc ORDER BY puts text above U+FFFF after U+E000–U+FFFF, as SQLite', () => {
  const engine = new Engine();
  const db = new Database(':memory:');
  engine.execute('CREATE TABLE t (id integer PRIMARY KEY, s text)');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)');
  const texts = TEXTS.filter((s) => s !== null);
  engine.applyChanges('t', { insert: texts.map((s, id) => ({ id, s })) });
  texts.forEach((s, id) => db.prepare('INSERT INTO t VALUES (?, ?)').run(id, s));
  for (const order of ['s', 's DESC']) {
    const sql = `SELECT s FROM t ORDER BY ${order}`;
    const [result] = engine.execute(sql);
    const rows = result !== undefined && 'rows' in result ? (result.rows as { s: string }[]) : [];
    const expected = (db.prepare(sql).all() as { s: string }[]).map((r) => r.s);
    assert.deepEqual(
      rows.map((r) => r.s),
      expected,
      order,
    );
  }
});
