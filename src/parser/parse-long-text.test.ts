// Parser unit tests: a SELECT's long literals, blanks and comments are not handed to node-sql-parser
// character for character. It reads ≈ 0.5 µs a character, so a 1 MB literal in an ad-hoc SELECT
// held the server 0.5–2 s while every token limit saw a handful of tokens. The work is counted
// (characters handed to the library), not timed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adapterDiagnostics } from './select-adapter.ts';
import { select } from '../../test/support/parse-helpers.ts';
import { parseStatements } from './parse.ts';
import { SluiceError } from '../common/errors.ts';
import type { Expr, SelectStmt } from './ast.ts';

const MEGA = 1_000_000;

/** The SELECT and how many characters node-sql-parser read to parse it. */
function parsedWithCount(sql: string): { query: SelectStmt; characters: number } {
  const before = adapterDiagnostics.parsedCharacters;
  const query = select(sql);
  return { query, characters: adapterDiagnostics.parsedCharacters - before };
}

function firstItem(query: SelectStmt): Expr {
  const item = query.items[0];
  assert.equal(item?.kind, 'expr');
  return item.expr;
}

describe('long text in a SELECT and node-sql-parser', () => {
  it('a 1M-character string literal is read from our token, the library sees a short one', () => {
    const text = "ab''c".repeat(MEGA / 5);
    const { query, characters } = parsedWithCount(`SELECT length('${text}') AS n`);
    assert.ok(characters < 200, `node-sql-parser read ${characters} characters`);
    const call = firstItem(query);
    assert.equal(call.kind, 'function');
    const arg = call.args[0];
    assert.equal(arg?.kind, 'literal');
    assert.equal(arg.value, "ab'c".repeat(MEGA / 5));
  });

  it('a 100,000-digit integer keeps its digits', () => {
    const digits = '7'.repeat(100_000);
    const { query, characters } = parsedWithCount(`SELECT ${digits} AS n`);
    assert.ok(characters < 200, `node-sql-parser read ${characters} characters`);
    const literal = firstItem(query);
    assert.equal(literal.kind, 'literal');
    assert.equal(String(literal.value), digits);
  });

  it('1M blanks, a 1M comment and a 1M line comment between tokens', () => {
    const half = MEGA / 2;
    for (const gap of [' '.repeat(half), `/* ${'c'.repeat(half)} */`, `-- ${'c'.repeat(half)}\n`]) {
      const { query, characters } = parsedWithCount(`SELECT 1${gap}AS x,${gap}2 AS y`);
      assert.ok(characters < 200, `node-sql-parser read ${characters} characters`);
      assert.deepEqual(
        query.items.map((item) => (item.kind === 'expr' ? item.alias : undefined)),
        ['x', 'y'],
      );
    }
  });

  it('a long literal inside a join condition (parsed in a batch of its own)', () => {
    const text = 'z'.repeat(MEGA);
    const { query, characters } = parsedWithCount(
      `SELECT a.k FROM a JOIN b ON a.k = b.k AND a.s = '${text}' JOIN c ON c.k = a.k`,
    );
    assert.ok(characters < 400, `node-sql-parser read ${characters} characters`);
    assert.ok(JSON.stringify(query.from).includes(text), 'the literal is in the join condition');
  });

  it('a syntax error after a long literal or gap is reported where it is', () => {
    const cases: [string, number, number][] = [
      [`SELECT length('${'x'.repeat(100_000)}'),\n  FROM t`, 2, 3],
      [`SELECT 1,${' '.repeat(100_000)}FROM t`, 1, 100_010],
      [`SELECT a.k FROM a JOIN b ON a.s = '${'x'.repeat(100_000)}' AND AND b.k = 1`, 1, 100_042],
    ];
    for (const [sql, line, column] of cases) {
      assert.throws(
        () => parseStatements(sql),
        (error: unknown) => {
          assert.ok(error instanceof SluiceError, String(error));
          assert.equal(error.code, 'SYNTAX_ERROR', error.message);
          assert.deepEqual(error.position, { line, column });
          return true;
        },
      );
    }
  });
});
