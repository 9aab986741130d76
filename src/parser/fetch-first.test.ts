// OFFSET n ROWS and FETCH {FIRST | NEXT} [n] {ROW | ROWS} ONLY parse as the OFFSET and LIMIT they
// mean, in a plain SELECT, after a set operation and in a subquery; malformed forms are syntax
// errors where PostgreSQL 15 reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import type { SluiceError } from '../common/errors.ts';

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

test('the standard row limits are LIMIT and OFFSET', () => {
  const same: [string, string][] = [
    ['SELECT a FROM t ORDER BY a FETCH FIRST 5 ROWS ONLY', 'SELECT a FROM t ORDER BY a LIMIT 5'],
    ['SELECT a FROM t ORDER BY a FETCH NEXT 1 ROW ONLY', 'SELECT a FROM t ORDER BY a LIMIT 1'],
    ['SELECT a FROM t ORDER BY a FETCH FIRST ROW ONLY', 'SELECT a FROM t ORDER BY a LIMIT 1'],
    ['SELECT a FROM t ORDER BY a OFFSET 2 ROWS', 'SELECT a FROM t ORDER BY a OFFSET 2'],
    [
      'SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH FIRST 3 ROWS ONLY',
      'SELECT a FROM t ORDER BY a OFFSET 2 LIMIT 3',
    ],
    [
      'SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 FETCH FIRST 4 ROWS ONLY',
      'SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 4',
    ],
    [
      'SELECT * FROM (SELECT a FROM t ORDER BY a DESC FETCH FIRST 2 ROWS ONLY) AS x',
      'SELECT * FROM (SELECT a FROM t ORDER BY a DESC LIMIT 2) AS x',
    ],
    [
      'SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t ORDER BY a FETCH FIRST 1 ROW ONLY',
      'SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t ORDER BY a LIMIT 1',
    ],
  ];
  for (const [standard, limit] of same) assert.equal(shape(standard), shape(limit), standard);
});

test('malformed row limits are syntax errors where PostgreSQL reports them', () => {
  const cases: [string, string, number][] = [
    ['SELECT a FROM t FETCH FIRST 2 ROWS', 'syntax error at end of input', 35],
    ['SELECT a FROM t FETCH FIRST 2 ONLY', 'syntax error at or near "ONLY"', 31],
    ['SELECT a FROM t FETCH FIRST 2 ROWS ONLY ONLY', 'syntax error at or near "ONLY"', 41],
    // One row count and one OFFSET a query level (the SQL library kept the last of two).
    ['SELECT a FROM t LIMIT 2 FETCH FIRST 1 ROW ONLY', 'syntax error at or near "FETCH"', 25],
    ['SELECT a FROM t FETCH FIRST 1 ROW ONLY LIMIT 2', 'syntax error at or near "LIMIT"', 40],
    ['SELECT a FROM t LIMIT 2 LIMIT 1', 'syntax error at or near "LIMIT"', 25],
    ['SELECT a FROM t OFFSET 1 ROWS OFFSET 1', 'syntax error at or near "OFFSET"', 31],
    [
      'SELECT a FROM (SELECT a FROM t LIMIT 1) s LIMIT 1 OFFSET 1 OFFSET 2',
      'syntax error at or near "OFFSET"',
      60,
    ],
  ];
  for (const [sql, message, column] of cases) {
    assert.throws(
      () => parseStatements(sql),
      (e: SluiceError) => {
        assert.equal(e.code, 'SYNTAX_ERROR', sql);
        assert.equal(e.message, message, sql);
        assert.equal(e.position?.column, column, sql);
        return true;
      },
    );
  }
});
