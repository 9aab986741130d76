// JSONB views against SQLite's JSON functions (its own implementation, not ours): random documents
// are inserted, updated and deleted batch by batch, and after every batch each view equals the
// same question asked of SQLite with its JSON path syntax (`doc ->> '$.k'`, json_type). Keys come in
// random orders; values are strings, integers and JSON null, nested one level (`o`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/index.ts';
import { Jsonb } from '../src/common/json/jsonb.ts';
import type { Value } from '../src/common/types.ts';
import { rowsAsText } from './support/sqlite-oracle.ts';
import { LcgRng } from './support/lcg-rng.ts';

// Each view: Sluice's SELECT and SQLite's equivalent (same columns, same order).
const VIEWS: readonly { name: string; sluice: string; sqlite: string }[] = [
  {
    name: 'by_k',
    sluice: "SELECT doc->>'k' AS k, COUNT(*) AS n, SUM((doc->>'n')::int) AS s FROM ev GROUP BY doc->>'k'",
    sqlite:
      "SELECT CAST(doc ->> '$.k' AS TEXT) AS k, COUNT(*) AS n, SUM(doc ->> '$.n') AS s FROM ev GROUP BY 1",
  },
  {
    name: 'with_o',
    sluice: "SELECT id, doc #>> '{o,x}' AS x, doc #>> '{o,1}' AS second FROM ev WHERE doc ? 'o'",
    sqlite:
      "SELECT id, CAST(doc ->> '$.o.x' AS TEXT) AS x, CAST(doc ->> '$.o[1]' AS TEXT) AS second FROM ev WHERE json_type(doc) = 'object' AND json_type(doc, '$.o') IS NOT NULL",
  },
  {
    name: 'k_values',
    sluice: "SELECT DISTINCT doc->'k' AS kj, jsonb_typeof(doc->'k') AS t FROM ev",
    sqlite:
      "SELECT DISTINCT doc -> '$.k' AS kj, CASE json_type(doc, '$.k') WHEN 'text' THEN 'string' WHEN 'integer' THEN 'number' ELSE json_type(doc, '$.k') END AS t FROM ev",
  },
  {
    name: 'k_is_a',
    sluice:
      "SELECT id, jsonb_array_length(doc->'o') AS len FROM ev WHERE doc @> '{\"k\": \"a\"}' AND jsonb_typeof(doc->'o') = 'array'",
    sqlite:
      "SELECT id, json_array_length(doc, '$.o') AS len FROM ev WHERE json_type(doc) = 'object' AND json_type(doc, '$.k') = 'text' AND doc ->> '$.k' = 'a' AND json_type(doc, '$.o') = 'array'",
  },
  {
    // jsonb - key on objects is SQLite's json_remove
    name: 'minus_k',
    sluice: "SELECT id, doc - 'k' AS d, (doc - 'n') - 'zz' AS e FROM ev WHERE jsonb_typeof(doc) = 'object'",
    sqlite:
      "SELECT id, json_remove(doc, '$.k') AS d, json_remove(doc, '$.n', '$.zz') AS e FROM ev WHERE json_type(doc) = 'object'",
  },
  {
    // jsonb_set of a top-level key and #- of a nested one are SQLite's json_set / json_remove
    name: 'set_del',
    sluice:
      "SELECT id, jsonb_set(doc, '{k}', '\"z\"') AS s, doc #- '{o,x}' AS r FROM ev WHERE jsonb_typeof(doc) = 'object' AND (doc->'o' IS NULL OR jsonb_typeof(doc->'o') = 'object')",
    sqlite:
      "SELECT id, json_set(doc, '$.k', 'z') AS s, json_remove(doc, '$.o.x') AS r FROM ev WHERE json_type(doc) = 'object' AND (json_type(doc, '$.o') IS NULL OR json_type(doc, '$.o') = 'object')",
  },
  {
    // JSONB_AGG in Sluice's order (jsonb's: JSON null first, then by value) is SQLite's
    // json_group_array with that ORDER BY (NULLs first ascending, text by code unit)
    name: 'aggs',
    sluice:
      "SELECT id % 3 AS g, JSONB_AGG((doc->>'n')::int) AS ns, JSONB_AGG(doc->>'k') AS ks, JSON_AGG(DISTINCT doc->>'k') AS dks FROM ev GROUP BY id % 3",
    sqlite:
      "SELECT id % 3 AS g, json_group_array(CAST(doc ->> '$.n' AS INTEGER) ORDER BY CAST(doc ->> '$.n' AS INTEGER)) AS ns, " +
      "json_group_array(CAST(doc ->> '$.k' AS TEXT) ORDER BY CAST(doc ->> '$.k' AS TEXT)) AS ks, " +
      "(SELECT json_group_array(d.k ORDER BY d.k) FROM (SELECT DISTINCT CAST(i.doc ->> '$.k' AS TEXT) AS k FROM ev i WHERE i.id % 3 = ev.id % 3) d) AS dks FROM ev GROUP BY 1",
  },
];

function randomDoc(rng: LcgRng): unknown {
  const shape = rng.int(10);
  if (shape === 0) return [rng.int(3), 'k'];
  if (shape === 1) return rng.pick(['s', 'a', 7]);
  const scalar = (): unknown => rng.pick(['a', 'b', 'c', 1, 2, 30, null]);
  const pairs: [string, unknown][] = [];
  if (rng.int(4) > 0) pairs.push(['k', scalar()]);
  if (rng.int(3) > 0) pairs.push(['n', rng.int(100) - 50]);
  if (rng.int(2) > 0)
    pairs.push(['o', rng.int(2) === 0 ? { x: scalar(), y: [1] } : [scalar(), scalar(), rng.int(5)]]);
  if (rng.int(3) === 0) pairs.push(['zz', { deep: [scalar()] }]);
  // random key order: jsonb sorts, SQLite keeps it; neither may matter to the answers
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [pairs[i], pairs[j]] = [pairs[j] as [string, unknown], pairs[i] as [string, unknown]];
  }
  return Object.fromEntries(pairs);
}

// JSON arrays and objects compared as values: jsonb prints `[1, 2]` and sorts keys, SQLite's
// json_group_array writes `[1,2]` and json_remove keeps the input's key order
const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([k, x]) => [k, sortKeys(x)]),
        )
      : v;
const jsonArray = (text: string): string =>
  text.startsWith('[') || text.startsWith('{') ? JSON.stringify(sortKeys(JSON.parse(text))) : text;
const cell = (v: unknown): string =>
  v instanceof Jsonb ? jsonArray(v.text) : v === null || v === undefined ? 'NULL' : jsonArray(String(v));

test('jsonb views equal SQLite JSON queries after every batch', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const rng = new LcgRng(seed);
    const engine = new Engine();
    const db = new Database(':memory:');
    engine.execute('CREATE TABLE ev (id INT PRIMARY KEY, doc JSONB)');
    db.exec('CREATE TABLE ev (id INTEGER PRIMARY KEY, doc TEXT)');
    for (const v of VIEWS) engine.execute(`CREATE MATERIALIZED VIEW ${v.name} AS ${v.sluice}`);
    const live = new Set<number>();
    let nextId = 0;
    let checks = 0;
    for (let epoch = 0; epoch < 30; epoch++) {
      const insert: { id: number; doc: Value }[] = [];
      const del: { id: number }[] = [];
      const ids = [...live];
      for (let i = rng.int(6); i > 0; i--) {
        const id = rng.int(3) === 0 && ids.length > 0 ? rng.pick(ids) : nextId++;
        if (live.has(id) && !del.some((d) => d.id === id)) del.push({ id }); // an update: delete, insert
        if (insert.some((r) => r.id === id)) continue;
        insert.push({ id, doc: randomDoc(rng) as Value });
      }
      for (let i = rng.int(3); i > 0 && ids.length > 0; i--) {
        const id = rng.pick(ids);
        if (!del.some((d) => d.id === id) && !insert.some((r) => r.id === id)) del.push({ id });
      }
      engine.applyChanges('ev', { insert, delete: del });
      for (const d of del) {
        db.prepare('DELETE FROM ev WHERE id = ?').run(d.id);
        live.delete(d.id);
      }
      for (const r of insert) {
        db.prepare('INSERT INTO ev VALUES (?, ?)').run(r.id, JSON.stringify(r.doc));
        live.add(r.id);
      }
      for (const v of VIEWS) {
        const actual = rowsAsText(engine.viewSnapshot(v.name).rows, cell);
        const expected = rowsAsText(db.prepare(v.sqlite).all() as Record<string, unknown>[], cell);
        assert.deepEqual(actual, expected, `seed ${seed}, epoch ${epoch}, view ${v.name}`);
        checks++;
      }
    }
    assert.ok(checks === 30 * VIEWS.length);
    db.close();
  }
});
