// Set operations, derived tables and WITH through the real engine: the parse tree's shape
// (PostgreSQL's precedence), the exact row order of ORDER BY after a set operation, one sub-plan for
// a WITH query read several times, and the errors (with positions) for what does not fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { SluiceError } from '../src/common/errors.ts';
import { parseStatements } from '../src/parser/parse.ts';
import type { SelectStmt } from '../src/parser/ast.ts';

function shape(q: SelectStmt): string {
  if (q.setOp !== undefined) {
    return `(${shape(q.setOp.left)} ${q.setOp.op}${q.setOp.all ? ' all' : ''} ${shape(q.setOp.right)})`;
  }
  const item = q.items[0];
  return item?.kind === 'expr' && item.expr.kind === 'column' ? item.expr.name : '?';
}

function parsed(sql: string): SelectStmt {
  const [stmt] = parseStatements(sql);
  assert.ok(stmt?.kind === 'select');
  return stmt.query;
}

test('set operators nest as in PostgreSQL: INTERSECT first, the others to the left, parentheses as written', () => {
  const cases: [string, string][] = [
    ['SELECT a FROM t UNION SELECT b FROM t INTERSECT SELECT c FROM t', '(a union (b intersect c))'],
    ['SELECT a FROM t EXCEPT SELECT b FROM t UNION ALL SELECT c FROM t', '((a except b) union all c)'],
    [
      'SELECT a FROM t INTERSECT ALL SELECT b FROM t EXCEPT SELECT c FROM t',
      '((a intersect all b) except c)',
    ],
    ['SELECT a FROM t EXCEPT (SELECT b FROM t UNION SELECT c FROM t)', '(a except (b union c))'],
    ['(SELECT a FROM t) UNION DISTINCT ((SELECT b FROM t))', '(a union b)'],
    [
      'SELECT a FROM t UNION SELECT b FROM t INTERSECT SELECT c FROM t INTERSECT SELECT d FROM t UNION SELECT e FROM t',
      '((a union ((b intersect c) intersect d)) union e)',
    ],
  ];
  for (const [sql, expected] of cases) assert.equal(shape(parsed(sql)), expected, sql);
  // ORDER BY / LIMIT after the last plain branch belong to the whole set operation.
  const q = parsed('SELECT a FROM t UNION SELECT b FROM t ORDER BY 1 DESC LIMIT 3');
  assert.equal(q.orderBy.length, 1);
  assert.ok(q.limit !== undefined && q.setOp !== undefined);
  assert.equal(q.setOp.right.orderBy.length, 0);
});

function engine(): Engine {
  const e = new Engine();
  e.executeScript(
    `CREATE TABLE t (k integer, v text); CREATE TABLE u (k bigint, v text);
     INSERT INTO t VALUES (3, 'c'), (1, 'a'), (NULL, 'n'), (2, 'b'), (2, 'b');
     INSERT INTO u VALUES (2, 'b'), (5, 'e'), (NULL, 'n')`,
  );
  return e;
}

test('ORDER BY, LIMIT and OFFSET after a set operation return the rows in that exact order', () => {
  const e = engine();
  const rows = (sql: string): unknown[] => (e.execute(sql)[0]?.rows ?? []).map((r) => Object.values(r));
  assert.deepEqual(rows('SELECT k, v FROM t UNION SELECT k, v FROM u ORDER BY k DESC'), [
    [null, 'n'],
    [5, 'e'],
    [3, 'c'],
    [2, 'b'],
    [1, 'a'],
  ]);
  assert.deepEqual(
    rows('SELECT k FROM t UNION ALL SELECT k FROM u ORDER BY 1 NULLS FIRST LIMIT 4 OFFSET 1'),
    [[null], [1], [2], [2]],
  );
  assert.deepEqual(rows('(SELECT v FROM t EXCEPT ALL SELECT v FROM u) ORDER BY v'), [['a'], ['b'], ['c']]);
});

test('a WITH query read twice is one sub-plan feeding both readers', () => {
  const e = engine();
  e.execute(
    'CREATE MATERIALIZED VIEW w AS WITH c AS (SELECT k, COUNT(*) AS n FROM t GROUP BY k) ' +
      'SELECT a.k, a.n, b.n AS m FROM c a JOIN c b ON b.k = a.k + 1',
  );
  const plan = e.viewPlan('w');
  const reduces = plan.nodes.filter((n) => n.kind === 'reduce');
  assert.equal(reduces.length, 1, 'one Reduce for both references');
  const join = plan.nodes.find((n) => n.kind === 'join');
  assert.ok(join?.kind === 'join');
  assert.deepEqual([...join.inputs], [reduces[0]!.id, reduces[0]!.id]);
  assert.equal(plan.nodes.filter((n) => n.kind === 'input').length, 1);
  assert.deepEqual(
    (e.viewSnapshot('w').rows as Record<string, unknown>[]).map((r) => [r['k'], r['n'], r['m']]).sort(),
    [
      [1, 1, 2],
      [2, 2, 1],
    ],
  );
  // Both readers see one epoch's change of the shared Reduce.
  e.execute("INSERT INTO t VALUES (3, 'x')");
  assert.deepEqual(
    (e.viewSnapshot('w').rows as Record<string, unknown>[]).map((r) => [r['k'], r['n'], r['m']]).sort(),
    [
      [1, 1, 2],
      [2, 2, 2],
    ],
  );
});

function fails(sql: string, code: string, message: string, position: { line: number; column: number }): void {
  const e = engine();
  const before = e.epoch;
  assert.throws(
    () => e.execute(sql),
    (err: unknown) => {
      assert.ok(err instanceof SluiceError, String(err));
      assert.equal(err.code, code, err.message);
      assert.equal(err.message, message);
      assert.deepEqual(err.position, position);
      return true;
    },
    sql,
  );
  assert.equal(e.epoch, before);
}

test('mismatched branches, WITH RECURSIVE and subquery ORDER BY are refused with positions, changing nothing', () => {
  fails(
    'SELECT k FROM t UNION SELECT k, v FROM u',
    'INVALID_DEFINITION',
    'each UNION query must have the same number of columns',
    {
      line: 1,
      column: 30,
    },
  );
  fails(
    'SELECT k, v FROM t EXCEPT SELECT k, k FROM u',
    'TYPE_MISMATCH',
    'EXCEPT types text and bigint cannot be matched',
    {
      line: 1,
      column: 37,
    },
  );
  fails(
    'CREATE MATERIALIZED VIEW x AS\n  WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r',
    'NOT_SUPPORTED',
    'WITH RECURSIVE is not supported',
    { line: 2, column: 8 },
  );
  fails(
    'CREATE MATERIALIZED VIEW x AS SELECT k FROM (SELECT k FROM t ORDER BY k) s',
    'NOT_SUPPORTED',
    'ORDER BY without LIMIT in a subquery in FROM is not supported',
    { line: 1, column: 71 },
  );
  fails(
    'SELECT k FROM t UNION SELECT k FROM u ORDER BY lower(v)',
    'INVALID_DEFINITION',
    'invalid UNION/INTERSECT/EXCEPT ORDER BY clause',
    {
      line: 1,
      column: 48,
    },
  );
  fails('SELECT 1 UNION', 'SYNTAX_ERROR', 'syntax error at end of input', { line: 1, column: 15 });
  fails('SELECT * FROM (SELECT 1', 'SYNTAX_ERROR', 'syntax error at end of input', { line: 1, column: 24 });
});

test('a chain of WITH queries each read twice stays linear: plan, EXPLAIN and key derivation', () => {
  const e = new Engine();
  // Distinct values: a self-join of each level keeps every row once.
  e.executeScript('CREATE TABLE t (k integer); INSERT INTO t VALUES (1), (2), (NULL)');
  const n = 40;
  const sql =
    'WITH c0 AS (SELECT k FROM t), ' +
    Array.from(
      { length: n },
      (_, i) => `c${i + 1} AS (SELECT a.k FROM c${i} a JOIN c${i} b ON a.k = b.k WHERE a.k > 0)`,
    ).join(', ') +
    ` SELECT * FROM c${n}`;
  // 2^40 paths through the plan; walking each would never end.
  const dataflow = e.execute(`EXPLAIN DATAFLOW ${sql}`)[0]?.rows ?? [];
  assert.ok(dataflow.length < 6 * n, `${dataflow.length} lines of EXPLAIN DATAFLOW`);
  const logical = e.execute(`EXPLAIN ${sql}`)[0]?.rows ?? [];
  assert.ok(logical.length < 6 * n, `${logical.length} lines of EXPLAIN`);
  e.execute(`CREATE MATERIALIZED VIEW chain AS ${sql}`);
  assert.ok(e.viewPlan('chain').nodes.length < 5 * n);
  const rows = e.viewSnapshot('chain').rows as Record<string, unknown>[];
  assert.deepEqual(rows.map((r) => r['k']).sort(), [1, 2]);
  e.execute('INSERT INTO t VALUES (3)');
  assert.deepEqual(
    (e.viewSnapshot('chain').rows as Record<string, unknown>[]).map((r) => r['k']).sort(),
    [1, 2, 3],
  );
});

test('more than 64 SELECTs in one statement are refused before any is parsed', () => {
  const sql = Array.from({ length: 65 }, () => 'SELECT k FROM t').join(' UNION ALL ');
  fails(sql, 'TOO_MANY_ITEMS', 'a statement can hold at most 64 SELECTs', { line: 1, column: 64 * 26 + 1 });
  const ok = Array.from({ length: 64 }, () => 'SELECT k FROM t').join(' UNION ALL ');
  assert.equal(engine().execute(ok)[0]?.rows?.length, 64 * 5);
});

test('a nested query keeps its column names: repeats are ambiguous by name, reached by *, refused as view columns', () => {
  const e = engine();
  const rows = e.execute('SELECT * FROM (SELECT k, k FROM t WHERE k = 1) s')[0]?.rows;
  assert.deepEqual(rows, [{ k: 1, k_2: 1 }]);
  fails('SELECT k FROM (SELECT k, k FROM t) s', 'AMBIGUOUS_COLUMN', 'column reference "k" is ambiguous', {
    line: 1,
    column: 8,
  });
  fails(
    'CREATE MATERIALIZED VIEW v AS SELECT k AS a, k AS a FROM t UNION SELECT k, k FROM u',
    'DUPLICATE_COLUMN',
    'column "a" specified more than once',
    { line: 1, column: 31 },
  );
});
