// Array views against SQLite, which has no arrays: an int[] column is JSON array text there, and
// each question is asked with SQLite's JSON functions (its own implementation, not ours) —
// json_group_array for ARRAY_AGG (with ORDER BY inside; without it, Sluice's documented order),
// json_each for subscripts, cardinality, = ANY, @> and array_to_string. Rows are inserted, updated
// and deleted batch by batch; after every batch each view equals SQLite's answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/index.ts';
import { SqlArray } from '../src/common/array/sql-array.ts';
import { stringifyWire } from '../src/common/json-codec.ts';
import type { Value } from '../src/common/types.ts';
import { rowsAsText } from './support/sqlite-oracle.ts';
import { LcgRng } from './support/lcg-rng.ts';

/** SQLite: `x = ANY (xs)` with SQL's three-valued logic over json_each. */
const anyEq = (x: string): string =>
  `CASE WHEN xs IS NULL OR ${x} IS NULL AND json_array_length(xs) > 0 THEN NULL ` +
  `WHEN EXISTS (SELECT 1 FROM json_each(xs) WHERE value = ${x}) THEN 1 ` +
  `WHEN EXISTS (SELECT 1 FROM json_each(xs) WHERE value IS NULL) THEN NULL ELSE 0 END`;

const VIEWS: readonly { name: string; sluice: string; sqlite: string }[] = [
  {
    // ORDER BY inside the aggregate: json_group_array with the same ORDER BY (ties by the value)
    name: 'ordered',
    sluice:
      'SELECT g, ARRAY_AGG(v ORDER BY id DESC) AS by_id, ARRAY_AGG(s ORDER BY v NULLS FIRST, s) AS by_v, ARRAY_AGG(DISTINCT s ORDER BY s DESC) AS ds FROM t GROUP BY g',
    sqlite:
      'SELECT g, json_group_array(v ORDER BY id DESC) AS by_id, json_group_array(s ORDER BY v IS NOT NULL, v, s IS NULL, s) AS by_v, ' +
      '(SELECT json_group_array(d.s ORDER BY d.s IS NULL DESC, d.s DESC) FROM (SELECT DISTINCT s FROM t i WHERE i.g = t.g) d) AS ds FROM t GROUP BY g',
  },
  {
    // without ORDER BY: the values in their type's order, NULLs last (docs/sql.md)
    name: 'plain',
    sluice: 'SELECT g, ARRAY_AGG(v) AS vs, ARRAY_AGG(s) AS ss FROM t GROUP BY g',
    sqlite:
      'SELECT g, json_group_array(v ORDER BY v IS NULL, v) AS vs, json_group_array(s ORDER BY s IS NULL, s) AS ss FROM t GROUP BY g',
  },
  {
    name: 'elements',
    sluice:
      'SELECT id, xs[1] AS first, xs[2] AS second, cardinality(xs) AS n, array_length(xs, 1) AS len, v = ANY (xs) AS v_in, 2 <> ALL (xs) AS no_two, xs @> ARRAY[1] AS has_one FROM t',
    sqlite:
      "SELECT id, xs ->> '$[0]' AS first, xs ->> '$[1]' AS second, json_array_length(xs) AS n, " +
      'CASE WHEN json_array_length(xs) > 0 THEN json_array_length(xs) END AS len, ' +
      `${anyEq('v')} AS v_in, ` +
      'CASE WHEN xs IS NULL THEN NULL WHEN EXISTS (SELECT 1 FROM json_each(xs) WHERE value = 2) THEN 0 ' +
      'WHEN EXISTS (SELECT 1 FROM json_each(xs) WHERE value IS NULL) THEN NULL ELSE 1 END AS no_two, ' +
      'CASE WHEN xs IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM json_each(xs) WHERE value = 1) END AS has_one FROM t',
  },
  {
    name: 'texts',
    sluice: "SELECT id, array_to_string(xs, ',', '*') AS joined, array_position(xs, v) AS pos FROM t",
    sqlite:
      "SELECT id, CASE WHEN xs IS NOT NULL THEN coalesce((SELECT group_concat(coalesce(value, '*'), ',' ORDER BY key) FROM json_each(xs)), '') END AS joined, " +
      'CASE WHEN xs IS NOT NULL THEN (SELECT min(key) + 1 FROM json_each(xs) WHERE value IS v) END AS pos FROM t',
  },
  {
    // unnest in FROM: json_each, one row per element (key is its 0-based position)
    name: 'unnested',
    sluice:
      'SELECT x, COUNT(*) AS c, SUM(n) AS sn FROM t, unnest(t.xs) WITH ORDINALITY AS u(x, n) GROUP BY x',
    sqlite:
      'SELECT j.value AS x, COUNT(*) AS c, SUM(j.key + 1) AS sn FROM t, json_each(t.xs) j GROUP BY j.value',
  },
  {
    name: 'pairs',
    sluice:
      'SELECT t.id, u.x FROM t CROSS JOIN LATERAL unnest(t.xs) AS u(x) WHERE u.x IS NOT NULL AND t.v < 3',
    sqlite: 'SELECT t.id, j.value AS x FROM t, json_each(t.xs) j WHERE j.value IS NOT NULL AND t.v < 3',
  },
  {
    // grouping by an array: SQLite groups the JSON text (one spelling per array here)
    name: 'by_xs',
    sluice: 'SELECT xs, COUNT(*) AS c, SUM(v) AS sv FROM t GROUP BY xs',
    sqlite: 'SELECT xs, COUNT(*) AS c, SUM(v) AS sv FROM t GROUP BY xs',
  },
];

/** Arrays compared as JSON values; booleans as SQLite's 1 and 0. */
const cell = (v: unknown): string => {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof SqlArray) return stringifyWire(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  const s = String(v);
  return s.startsWith('[') ? JSON.stringify(JSON.parse(s)) : s;
};

test('array views equal SQLite JSON queries after every batch', () => {
  let checks = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const rng = new LcgRng(seed);
    const engine = new Engine();
    const db = new Database(':memory:');
    engine.execute('CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT, s TEXT, xs INT[])');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, v INTEGER, s TEXT, xs TEXT)');
    for (const v of VIEWS) engine.execute(`CREATE MATERIALIZED VIEW ${v.name} AS ${v.sluice}`);
    const live = new Set<number>();
    let nextId = 0;
    for (let epoch = 0; epoch < 30; epoch++) {
      type In = { id: number; g: number; v: number | null; s: string | null; xs: (number | null)[] | null };
      const insert: In[] = [];
      const del: { id: number }[] = [];
      const ids = [...live];
      for (let i = rng.int(6); i > 0; i--) {
        const id = rng.int(3) === 0 && ids.length > 0 ? rng.pick(ids) : nextId++;
        if (live.has(id) && !del.some((d) => d.id === id)) del.push({ id }); // an update
        if (insert.some((r) => r.id === id)) continue;
        insert.push({
          id,
          g: rng.int(3),
          v: rng.int(5) === 0 ? null : rng.int(4),
          s: rng.pick(['a', 'b', 'B', '', 'a b', null]),
          xs:
            rng.int(6) === 0
              ? null
              : Array.from({ length: rng.int(4) }, () => (rng.int(6) === 0 ? null : rng.int(4))),
        });
      }
      for (let i = rng.int(3); i > 0 && ids.length > 0; i--) {
        const id = rng.pick(ids);
        if (!del.some((d) => d.id === id) && !insert.some((r) => r.id === id)) del.push({ id });
      }
      engine.applyChanges('t', {
        insert: insert.map((r) => ({ ...r, xs: r.xs as unknown as Value })),
        delete: del,
      });
      for (const d of del) {
        db.prepare('DELETE FROM t WHERE id = ?').run(d.id);
        live.delete(d.id);
      }
      for (const r of insert) {
        db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)').run(
          r.id,
          r.g,
          r.v,
          r.s,
          r.xs === null ? null : JSON.stringify(r.xs),
        );
        live.add(r.id);
      }
      for (const v of VIEWS) {
        const actual = rowsAsText(engine.viewSnapshot(v.name).rows, cell);
        const expected = rowsAsText(db.prepare(v.sqlite).all() as Record<string, unknown>[], cell);
        assert.deepEqual(actual, expected, `seed ${seed}, epoch ${epoch}, view ${v.name}`);
        checks++;
      }
    }
    db.close();
  }
  assert.equal(checks, 6 * 30 * VIEWS.length);
});
