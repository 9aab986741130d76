// An ad-hoc `ORDER BY … LIMIT` picked the first-arrived rows among peers, a view of the same query
// its whole-row order (docs/sql.md, "Ties"): `ORDER BY x LIMIT 1` over 0 then -0, or 1.50 then 1.5,
// or (0, 'b') then (0, 'a'), answered one row ad hoc and another in the view. Ad hoc now orders peers
// as the view does, so the same query gives the same rows both ways, in any arrival order, after
// deletes too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';
import { LcgRng } from '../support/lcg-rng.ts';

/** The result's rows in order, -0 and a numeric's scale written out (JSON loses both). */
function texts(results: readonly unknown[]): string[] {
  const rows = (results.at(-1) as { rows: readonly Record<string, unknown>[] }).rows;
  return rows.map((r) =>
    Object.values(r)
      .map((v) =>
        Object.is(v, -0) ? '-0' : typeof v === 'object' && v !== null ? String(v) : JSON.stringify(v),
      )
      .join('|'),
  );
}

const QUERIES = [
  'SELECT x, s FROM t ORDER BY x LIMIT 1',
  'SELECT x, s FROM t ORDER BY x LIMIT 3',
  'SELECT x, s FROM t ORDER BY x DESC LIMIT 2 OFFSET 1',
  'SELECT x, n, s FROM t ORDER BY n NULLS FIRST, x DESC LIMIT 4',
  'SELECT s, n FROM t ORDER BY s LIMIT 2',
];

function engineWith(): Engine {
  const engine = new Engine();
  engine.execute('CREATE TABLE t (id INT PRIMARY KEY, x DOUBLE PRECISION, n NUMERIC, s TEXT)');
  QUERIES.forEach((q, i) => engine.execute(`CREATE MATERIALIZED VIEW v${i} AS ${q}`));
  return engine;
}

function assertSameBothWays(engine: Engine, context: string): void {
  QUERIES.forEach((q, i) => {
    // A view is a set of rows (read without ORDER BY, in no order): the same rows, compared sorted.
    const adHoc = texts(engine.execute(q)).sort();
    assert.deepEqual(adHoc, texts(engine.execute(`SELECT * FROM v${i}`)).sort(), `${context}: ${q}`);
  });
}

test('ad hoc and in a view, ORDER BY … LIMIT picks the same rows among peers', () => {
  const engine = engineWith();
  engine.execute("INSERT INTO t VALUES (1, 0, 1.50, 'b'), (2, -0, 1.5, 'b'), (3, 0, 1.5, 'a')");
  assertSameBothWays(engine, 'three zeros');
  // The view's rule: peers by the whole row, so (0, 'a') before (0, 'b') whichever came first.
  assert.deepEqual(texts(engine.execute('SELECT x, s FROM t ORDER BY x LIMIT 1')), ['0|"a"']);
});

test('ad hoc equals the view among peers for random rows in random arrival orders, with deletes', () => {
  const xs = [0, -0, 1, 2.5, null];
  const ns = ['1.5', '1.50', '2', null];
  const ss = ['a', 'b', 'B', '', null];
  for (let seed = 1; seed <= 10; seed++) {
    const rng = new LcgRng(seed);
    const engine = engineWith();
    const live = new Set<number>();
    for (let batch = 0; batch < 12; batch++) {
      const values: string[] = [];
      for (let k = 0; k < 1 + rng.int(6); k++) {
        const id = rng.int(40);
        if (live.has(id)) continue;
        live.add(id);
        const lit = (v: unknown): string =>
          v === null ? 'NULL' : typeof v === 'string' ? `'${v}'` : String(v);
        const x = rng.pick(xs);
        values.push(
          `(${id}, ${Object.is(x, -0) ? "'-0'::float8" : lit(x)}, ${lit(rng.pick(ns))}::numeric, ${lit(rng.pick(ss))})`,
        );
      }
      if (values.length > 0) engine.execute(`INSERT INTO t VALUES ${values.join(', ')}`);
      if (rng.int(3) === 0 && live.size > 0) {
        const id = [...live][rng.int(live.size)] as number;
        live.delete(id);
        engine.execute(`DELETE FROM t WHERE id = ${id}`);
      }
      assertSameBothWays(engine, `seed ${seed}, batch ${batch}`);
    }
  }
});
