// Parser unit tests of VALUES in FROM: rows read node by node through node-sql-parser, and a long list
// of constant rows read from our tokens after the library was handed only its first row (it reads a
// token at a time). The work is counted (tokens handed to the library, against maxSelectTokens),
// not timed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { select, throwsSluice } from '../../test/support/parse-helpers.ts';
import { parseStatements } from './parse.ts';
import { DEFAULT_SQL_LIMITS } from '../common/limits.ts';
import type { Expr, SelectStmt, ValuesRef } from './ast.ts';

function valuesOf(query: SelectStmt): ValuesRef {
  const from = query.from;
  assert.equal(from?.kind, 'values');
  return from;
}

/** A literal's value, a signed number as written, or the expression's kind. */
function shown(e: Expr): unknown {
  if (e.kind === 'literal') return e.value;
  if (e.kind === 'unary' && e.operand.kind === 'literal') return `${e.op}${String(e.operand.value)}`;
  return e.kind;
}

describe('VALUES in FROM', () => {
  it('a short list: rows, alias, column names and positions', () => {
    const query = select("SELECT * FROM (VALUES (1, 'a'), (x + 1, NULL)) AS v (n, s)");
    const values = valuesOf(query);
    assert.equal(values.alias, 'v');
    assert.deepEqual(
      values.columns?.map((c) => c.name),
      ['n', 's'],
    );
    assert.deepEqual(values.pos, { line: 1, column: 15 });
    assert.deepEqual(
      values.rows.map((r) => r.map(shown)),
      [
        [1, 'a'],
        ['binary', null],
      ],
    );
  });

  it('2,000 constant rows: the library is handed one of them, our tokens give every row', () => {
    const rows = Array.from(
      { length: 2000 },
      (_, i) => `(${i % 2 === 0 ? i : -i}, 'r''${i}', ${i % 3 === 0 ? 'NULL' : 'TRUE'})`,
    );
    // 16,000 tokens, of which the library must be handed at most 100 (the tokens it reads count
    // against maxSelectTokens; the hidden rows do not).
    const sql = `SELECT count(*) FROM (VALUES ${rows.join(', ')}) AS v`;
    const [statement] = parseStatements(sql, { ...DEFAULT_SQL_LIMITS, maxSelectTokens: 100 });
    assert.equal(statement?.kind, 'select');
    const values = valuesOf(statement.query);
    assert.equal(values.rows.length, 2000);
    assert.deepEqual(values.rows[0]!.map(shown), [0, "r'0", null]);
    assert.deepEqual(values.rows[1999]!.map(shown), [-1999, "r'1999", true]);
  });

  it('a long list with one row of an expression or of another width goes through the library whole', () => {
    const constant = Array.from({ length: 30 }, (_, i) => `(${i}, ${i})`);
    for (const odd of ['(1 + 1, 2)', '(3)']) {
      const sql = `SELECT * FROM (VALUES ${[...constant, odd].join(', ')}) AS v`;
      throwsSluice(
        sql,
        'STATEMENT_TOO_LARGE',
        'query is too large (more than 100 tokens to parse)',
        undefined,
        {
          maxSelectTokens: 100,
        },
      );
      assert.equal(valuesOf(select(sql)).rows.length, 31);
    }
  });

  it('more rows than the limit is TOO_MANY_ITEMS at the first row past it', () => {
    const rows = Array.from({ length: 12 }, (_, i) => `(${i})`).join(', ');
    throwsSluice(
      `SELECT * FROM (VALUES ${rows}) AS v`,
      'TOO_MANY_ITEMS',
      'VALUES has more than 10 rows',
      undefined,
      {
        maxListItems: 10,
      },
    );
  });
});
