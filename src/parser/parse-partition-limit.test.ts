// Expressions node-sql-parser's grammar does not take where PostgreSQL 15 does: PARTITION BY items
// (any expression, parenthesised or not), LIMIT/OFFSET counts (any expression), and `TABLE t` as a
// query. Each parses to the tree its plain spelling gives, and an error inside one points at its
// own token, where PostgreSQL reports it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import { SluiceError } from '../common/errors.ts';

/** A statement's tree without positions (the two spellings differ only there). */
function shape(sql: string): string {
  return JSON.stringify(parseStatements(sql), (k, v: unknown) =>
    k === 'pos' || k === 'position' || k === 'text' || k === 'sql'
      ? undefined
      : typeof v === 'bigint'
        ? String(v)
        : v,
  );
}

function failure(sql: string): { code: string; message: string; at: string } {
  try {
    parseStatements(sql);
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    const pos = error.position;
    return {
      code: error.code,
      message: error.message,
      at: pos === undefined ? '' : `${pos.line}:${pos.column}`,
    };
  }
  assert.fail(`parsed: ${sql}`);
}

test('a PARTITION BY item is any expression, as in a SELECT list', () => {
  const same: [string, string][] = [
    [
      "SELECT sum(b) OVER (PARTITION BY a % 2, (b), s || 'z' ORDER BY b) FROM t",
      "SELECT sum(b) OVER (PARTITION BY (a % 2), b, (s || 'z') ORDER BY b) FROM t",
    ],
    [
      'SELECT rank() OVER (PARTITION BY CASE WHEN a > 1 THEN 1 END, a IS NULL ORDER BY b) FROM t',
      'SELECT rank() OVER (PARTITION BY (CASE WHEN a > 1 THEN 1 END), (a IS NULL) ORDER BY b) FROM t',
    ],
    [
      'SELECT sum(b) OVER w FROM t WINDOW w AS (PARTITION BY a::text ROWS UNBOUNDED PRECEDING)',
      'SELECT sum(b) OVER (PARTITION BY CAST(a AS text) ROWS UNBOUNDED PRECEDING) FROM t',
    ],
    // columns alone node-sql-parser reads itself; the trees agree
    [
      'SELECT rank() OVER (PARTITION BY t.a, "b" ORDER BY c) FROM t',
      'SELECT rank() OVER (PARTITION BY (t.a), (b) ORDER BY c) FROM t',
    ],
  ];
  for (const [a, b] of same) assert.equal(shape(a), shape(b), a);
  const select = parseStatements('SELECT row_number() OVER (PARTITION BY a % 2 ORDER BY b) FROM t')[0];
  assert.ok(select?.kind === 'select');
  const item = select.query.items[0];
  assert.ok(item?.kind === 'expr' && item.expr.kind === 'function');
  const partition = item.expr.over?.partitionBy[0];
  assert.equal(partition?.kind, 'binary');
  assert.deepEqual(partition?.pos, { line: 1, column: 40 });
});

test('errors inside a PARTITION BY item point at its token', () => {
  assert.deepEqual(failure('SELECT row_number() OVER (PARTITION BY a %\n  ORDER BY b) FROM t'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "ORDER"',
    at: '2:3',
  });
  assert.deepEqual(failure('SELECT row_number() OVER (PARTITION BY a, , b) FROM t'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near ","',
    at: '1:43',
  });
  assert.deepEqual(failure('SELECT row_number() OVER (PARTITION BY a % 2, ORDER BY b) FROM t'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "ORDER"',
    at: '1:47',
  });
  assert.deepEqual(failure('SELECT sum(b) OVER (PARTITION BY (a ORDER BY b)) FROM t'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "ORDER"',
    at: '1:37',
  });
});

test('LIMIT and OFFSET take expressions; TABLE t is SELECT * FROM t', () => {
  const same: [string, string][] = [
    ['SELECT a FROM t LIMIT (1 + 2) OFFSET (1)', 'SELECT a FROM t LIMIT 1 + 2 OFFSET 1'],
    ['SELECT a FROM t OFFSET 2 * 1 LIMIT NULL', 'SELECT a FROM t OFFSET (2 * 1) LIMIT (NULL)'],
    ['SELECT a FROM t LIMIT 5 OFFSET (1)', 'SELECT a FROM t LIMIT (5) OFFSET 1'],
    ['TABLE t', 'SELECT * FROM t'],
    ['TABLE t ORDER BY a LIMIT 2', 'SELECT * FROM t ORDER BY a LIMIT 2'],
    ['SELECT * FROM (TABLE t) x UNION TABLE u', 'SELECT * FROM (SELECT * FROM t) x UNION SELECT * FROM u'],
  ];
  for (const [a, b] of same) assert.equal(shape(a), shape(b), a);
  assert.deepEqual(failure('SELECT a FROM t LIMIT 1 +\n  OFFSET 2'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "OFFSET"',
    at: '2:3',
  });
  assert.deepEqual(failure('SELECT a FROM t LIMIT (1 2)'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "2"',
    at: '1:26',
  });
  assert.deepEqual(failure('TABLE t x'), {
    code: 'SYNTAX_ERROR',
    message: 'syntax error at or near "x"',
    at: '1:9',
  });
});
