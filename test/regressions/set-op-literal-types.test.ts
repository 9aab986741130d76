// A quoted literal in a set operation's branch is typed by the other branches, as PostgreSQL does
// (`SELECT n FROM t UNION SELECT '0'` is an integer column): Sluice refused it with TYPE_MISMATCH
// ("UNION types integer and text cannot be matched") in views and ad-hoc SELECTs alike, though NULL
// adapted and docs/sql.md said string literals do. A cast literal ('0'::text) and a literal under a
// nested set operation or DISTINCT stay text and still refuse, as in PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
};

test('a quoted literal in a set operation branch takes the other branches type', () => {
  const e = new Engine();
  try {
    e.execute(`CREATE TABLE t (id integer, n bigint, d numeric, x double precision, c text);
      INSERT INTO t VALUES (1, 10, 1.5, 0.5, 'a'), (2, NULL, NULL, NULL, NULL)`);
    const adhoc = e.execute(`SELECT n, c FROM t UNION SELECT '7', 'b' ORDER BY 1`)[0]!;
    assert.deepEqual(
      adhoc.columns?.map((c) => c.type),
      ['bigint', 'text'],
    );
    assert.deepEqual(adhoc.rows, [
      { n: 7, c: 'b' },
      { n: 10, c: 'a' },
      { n: null, c: null },
    ]);
    // In the first branch, it names the column and still takes the second branch's type.
    const first = e.execute(
      `SELECT '2.50' AS v FROM t WHERE id = 1 UNION ALL SELECT d FROM t ORDER BY 1`,
    )[0]!;
    assert.deepEqual(
      first.columns?.map((c) => [c.name, c.type]),
      [['v', 'numeric']],
    );
    assert.deepEqual(
      first.rows?.map((r) => (r['v'] === null ? null : String(r['v']))),
      ['1.5', '2.50', null],
    );
    e.execute(`CREATE MATERIALIZED VIEW v AS SELECT id, x FROM t EXCEPT SELECT '2', '-1' FROM t`);
    assert.deepEqual(
      e.viewSnapshot('v').columns.map((c) => c.type),
      ['integer', 'double precision'],
    );
    e.execute(`INSERT INTO t VALUES (2, NULL, NULL, -1, NULL)`);
    assert.deepEqual(
      e
        .viewSnapshot('v')
        .rows.map((r) => [r['id'], r['x']])
        .sort(),
      [
        [1, 0.5],
        [2, null],
      ],
    );
    // PostgreSQL's refusals stay: a literal that does not read as the type, a cast one, a nested one.
    assert.equal(
      codeOf(() => e.execute(`SELECT id FROM t UNION SELECT 'x'`)),
      'INVALID_CAST',
    );
    assert.equal(
      codeOf(() => e.execute(`SELECT id FROM t UNION SELECT '1'::text`)),
      'TYPE_MISMATCH',
    );
    assert.equal(
      codeOf(() => e.execute(`SELECT id FROM t UNION SELECT DISTINCT '1'`)),
      'TYPE_MISMATCH',
    );
    assert.equal(
      codeOf(() => e.execute(`SELECT id FROM t UNION (SELECT '1' UNION SELECT '2')`)),
      'TYPE_MISMATCH',
    );
  } finally {
    e.close();
  }
});
