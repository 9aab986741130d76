// Views of the SQL added in one stop (grouping sets and GROUP BY DISTINCT, generate_series and unnest
// alone in FROM, the jsonb set functions after a relation behind a WHERE guard, = ANY / <> ALL over
// a subquery, IS NOT DISTINCT FROM join keys, rows and (a, b) [NOT] IN (SELECT …), PARTITION BY
// expressions, LIMIT expressions and FETCH FIRST, TABLE, the new functions, BETWEEN SYMMETRIC,
// interval × number, char(n)) survive a checkpoint: an engine restored from it loads every view
// without a rebuild, prints the same EXPLAIN DATAFLOW (fingerprint included), and from then on emits
// the same changes, epoch by epoch, as the engine that never stopped, through random writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import { MemoryCheckpointStore } from '../support/memory-checkpoint-store.ts';
import { LcgRng } from '../support/lcg-rng.ts';

const VIEWS: readonly string[] = [
  'SELECT g, h, COUNT(*) AS n, SUM(x) AS sx, GROUPING(g, h) AS gr FROM t GROUP BY ROLLUP (g, h)',
  'SELECT t.g, u.y, COUNT(*) AS n FROM t JOIN u ON t.g = u.g GROUP BY CUBE (t.g, u.y) HAVING COUNT(*) > 0',
  'SELECT g, h, COUNT(*) AS n FROM t GROUP BY DISTINCT ROLLUP (g, h), ROLLUP (h, g)',
  'SELECT g, GROUPING(g) AS gr, COUNT(*) FILTER (WHERE x > 0) AS n FROM t GROUP BY g',
  'SELECT g % 2 AS m, g, COUNT(*) AS n, GROUPING(g % 2, g) AS gr FROM t GROUP BY ROLLUP (g % 2, g)',
  'SELECT s.v, t.id FROM generate_series(0, 3) AS s(v) JOIN t ON t.g = s.v',
  "SELECT d FROM generate_series('2024-01-31'::timestamp, '2024-06-01'::timestamp, '1 month') AS s(d)",
  'SELECT z.v, z.o FROM unnest(ARRAY[1, NULL, 3]) WITH ORDINALITY AS z(v, o)',
  "SELECT t.id, e.value FROM t, jsonb_array_elements(t.j) AS e WHERE jsonb_typeof(t.j) = 'array'",
  "SELECT t.id, e.key, e.value FROM t, jsonb_each_text(t.j) AS e WHERE jsonb_typeof(t.j) = 'object'",
  'SELECT id, x FROM t WHERE x = ANY (SELECT y FROM u)',
  'SELECT id, x FROM t WHERE x <> ALL (SELECT y FROM u)',
  'SELECT t.id AS tid, u.id AS uid FROM t JOIN u ON t.x IS NOT DISTINCT FROM u.y',
  'SELECT id, (g, x) < (1, 2) AS lt FROM t WHERE (g, x) IN (SELECT g, y FROM u)',
  'SELECT id, x FROM t WHERE (g, x) NOT IN (SELECT g, y FROM u WHERE y <> 3 OR y IS NULL)',
  'SELECT id, row_number() OVER (PARTITION BY g % 2 ORDER BY id) AS rn FROM t',
  'SELECT id, x FROM t ORDER BY id LIMIT 1 + 2',
  'SELECT id, x FROM t ORDER BY id OFFSET 1 ROWS FETCH FIRST 3 ROWS ONLY',
  'TABLE u',
  "SELECT id, degrees(x) AS d, to_hex(x) AS hx, format('%s-%L', h, g) AS f, translate(h, 'a', 'x') AS tr FROM t",
  'SELECT id FROM t WHERE x BETWEEN SYMMETRIC 2 AND g',
  "SELECT id, interval '1 month 2 days' * x AS m FROM t",
  "SELECT c, COUNT(*) AS n FROM t WHERE c <> 'b' GROUP BY c",
];

const G = [null, 0, 1, 2];
const H = [null, 'a', 'b', ''];
const X = [null, -1, 0, 1, 2, 3];
const J = [null, '[1, "a", null]', '{"a": 1, "b": [2]}', '3', '"s"', 'null', '[]', '{}'];
const C = [null, 'a', 'ab ', 'b', ''];

const SCHEMA = [
  'CREATE TABLE t (id integer PRIMARY KEY, g integer, h text, x integer, j jsonb, c char(3))',
  'CREATE TABLE u (id integer PRIMARY KEY, g integer, y integer)',
  ...VIEWS.map((sql, i) => `CREATE MATERIALIZED VIEW v${i} AS ${sql}`),
];

const json = (cs: ViewChangeSet): string =>
  JSON.stringify(cs, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

/** Each view's change sets, as text, appended as the engine emits them. */
function watch(engine: Engine): string[][] {
  return VIEWS.map((_sql, i) => {
    const seen: string[] = [];
    engine.subscribe(`v${i}`, (cs) => seen.push(json(cs)));
    return seen;
  });
}

function literal(v: string | number | null): string {
  return v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${v}'`;
}

test('views of the new SQL load from a checkpoint unchanged and go on with the same changes', () => {
  let compared = 0;
  for (const seed of [1, 2, 3]) {
    const rng = new LcgRng(seed);
    const batch = (): string[] => {
      const statements: string[] = [];
      for (let k = 1 + rng.int(4); k > 0; k--) {
        const id = rng.int(8);
        if (rng.int(3) === 0) {
          statements.push(
            `DELETE FROM u WHERE id = ${id}`,
            `INSERT INTO u VALUES (${id}, ${literal(rng.pick(G))}, ${literal(rng.pick(X))})`,
          );
        } else if (rng.int(4) === 0) {
          statements.push(`DELETE FROM t WHERE id = ${id}`);
        } else {
          const row = [id, rng.pick(G), rng.pick(H), rng.pick(X), rng.pick(J), rng.pick(C)];
          statements.push(
            `DELETE FROM t WHERE id = ${id}`,
            `INSERT INTO t VALUES (${row.map(literal).join(', ')})`,
          );
        }
      }
      return statements;
    };
    const original = new Engine();
    for (const ddl of SCHEMA) original.execute(ddl);
    for (let i = 0; i < 15; i++) for (const sql of batch()) original.execute(sql);

    const store = new MemoryCheckpointStore();
    store.write(original.takeCheckpoint());
    const restored = new Engine();
    for (const ddl of SCHEMA) restored.execute(ddl);
    assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, [], `seed ${seed}: views rebuilt`);
    VIEWS.forEach((sql, i) => {
      const name = `v${i}`;
      assert.equal(restored.explainView(name), original.explainView(name), `seed ${seed}: plan of ${sql}`);
      assert.deepEqual(restored.viewSnapshot(name).rows, original.viewSnapshot(name).rows, `rows of ${sql}`);
    });

    const before = watch(original);
    const after = watch(restored);
    for (let i = 0; i < 15; i++) {
      for (const sql of batch()) {
        original.execute(sql);
        restored.execute(sql);
      }
    }
    VIEWS.forEach((sql, i) => {
      assert.deepEqual(after[i], before[i], `seed ${seed}: changes of ${sql}`);
      compared += before[i]!.length;
    });
  }
  // Most views change in most epochs: the comparison saw real changelogs, not empty lists.
  assert.ok(compared > 3 * VIEWS.length * 5, `only ${compared} change sets compared`);
});
