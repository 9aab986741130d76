// Parser unit tests: the limits one script may ask (src/common/limits.ts): statements, depth,
// lengths, list sizes; each refused with its code and position, before any work grows with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import { tokenize } from './lexer.ts';
import { SluiceError, type SourcePosition } from '../common/errors.ts';
import { DEFAULT_SQL_LIMITS, REPLAY_SQL_LIMITS } from '../common/limits.ts';
import { one, stmt, select, dmlExpr, expr, throwsSluice } from '../../test/support/parse-helpers.ts';

describe('limits on what one script may ask (src/common/limits.ts)', () => {
  const at = (line: number, column: number): SourcePosition => ({ line, column });

  it('script length, statements and created objects', () => {
    throwsSluice(
      'SELECT 1;\nSELECT 2',
      'SCRIPT_TOO_LARGE',
      'script is too large (more than 12 characters)',
      at(2, 3),
      {
        maxScriptLength: 12,
      },
    );
    throwsSluice(
      'SELECT 1; ; SELECT 2; -- c\n SELECT 3',
      'SCRIPT_TOO_LARGE',
      'script has more than 2 statements',
      at(2, 2),
      {
        maxScriptStatements: 2,
      },
    );
    const creates = 'CREATE TABLE a (x INT); DROP TABLE a; CREATE TABLE b (x INT);\n  CREATE TABLE c (x INT)';
    throwsSluice(creates, 'SCRIPT_TOO_LARGE', 'script creates more than 2 objects', at(2, 3), {
      maxScriptObjects: 2,
    });
    assert.equal(parseStatements(creates, { ...DEFAULT_SQL_LIMITS, maxScriptObjects: 3 }).length, 4);
  });

  it('the name __proto__ is reserved wherever it is written (it cannot be a JSON row field)', () => {
    const message = 'the name "__proto__" is reserved';
    throwsSluice('CREATE TABLE t (a INT, "__proto__" INT)', 'RESERVED_NAME', message, at(1, 24));
    throwsSluice('CREATE TABLE t (a INT, __PROTO__ INT)', 'RESERVED_NAME', message, at(1, 24));
    throwsSluice('SELECT a AS __proto__ FROM t', 'RESERVED_NAME', message, at(1, 13));
    throwsSluice('CREATE TABLE __proto__ (a INT)', 'RESERVED_NAME', message, at(1, 14));
    assert.equal(parseStatements('SELECT a AS "__proto" FROM t').length, 1);
    // A journal written before the rule replays.
    assert.equal(parseStatements('CREATE TABLE t (__proto__ INT)', REPLAY_SQL_LIMITS).length, 1);
  });

  it('identifier length in code points, quoted or not, wherever the identifier is', () => {
    const limits = { maxIdentifierLength: 4 };
    throwsSluice(
      'SELECT abcde FROM t',
      'NAME_TOO_LONG',
      'identifier is longer than 4 characters',
      at(1, 8),
      limits,
    );
    throwsSluice(
      'CREATE TABLE "ab""cd" (x INT)',
      'NAME_TOO_LONG',
      'identifier is longer than 4 characters',
      at(1, 14),
      limits,
    );
    throwsSluice(
      'SELECT x AS "😀😀😀😀😀" FROM t',
      'NAME_TOO_LONG',
      'identifier is longer than 4 characters',
      at(1, 13),
      limits,
    );
    // Four code points are eight UTF-16 code units here: still within the limit.
    assert.equal(
      parseStatements('CREATE TABLE "😀😀😀😀" (abcd INT)', { ...DEFAULT_SQL_LIMITS, ...limits }).length,
      1,
    );
    assert.equal(
      parseStatements('CREATE TABLE "a""b" (x INT)', { ...DEFAULT_SQL_LIMITS, ...limits }).length,
      1,
    );
    // String literals are not identifiers.
    assert.equal(parseStatements("SELECT 'abcdefgh' AS s", { ...DEFAULT_SQL_LIMITS, ...limits }).length, 1);
  });

  it('statement length in characters and in tokens', () => {
    throwsSluice(
      "SELECT 1;   SELECT 'abcdef'",
      'STATEMENT_TOO_LARGE',
      'statement is too large (more than 10 characters)',
      at(1, 23),
      {
        maxStatementLength: 10,
      },
    );
    throwsSluice(
      'SELECT 1 + 2 + 3',
      'STATEMENT_TOO_LARGE',
      'statement is too large (more than 4 tokens)',
      at(1, 14),
      {
        maxStatementTokens: 4,
      },
    );
  });

  it('named windows: each OVER w counts its definition in the tokens handed to the SQL library', () => {
    // 50 references to a 600-token window: refused while expanding, not after building 30,000 tokens.
    const def = 'PARTITION BY ' + Array.from({ length: 300 }, () => 'a').join(', ');
    const sql =
      'SELECT ' +
      Array.from({ length: 50 }, () => 'sum(a) OVER w').join(', ') +
      ` FROM t WINDOW w AS (${def})`;
    throwsSluice(
      sql,
      'STATEMENT_TOO_LARGE',
      'query is too large (more than 12000 tokens to parse)',
      at(1, 1420),
      {},
    );
  });

  it('list lengths: IN, VALUES rows, CASE arms, select list, GROUP BY, ORDER BY, columns, arguments', () => {
    const limits = { maxListItems: 3, maxSelectItems: 2, maxColumns: 2, maxFunctionArgs: 2 };
    const tooMany = (sql: string, message: string, position: SourcePosition): void =>
      throwsSluice(sql, 'TOO_MANY_ITEMS', message, position, limits);
    tooMany('SELECT a FROM t WHERE a IN (1, 2, 3, 4)', 'IN list has more than 3 items', at(1, 38));
    tooMany('DELETE FROM t WHERE a NOT IN (1, 2, 3, 4)', 'IN list has more than 3 items', at(1, 40));
    tooMany('INSERT INTO t VALUES (1), (2), (3), (4)', 'VALUES has more than 3 rows', at(1, 38));
    tooMany('INSERT INTO t VALUES (1, 2, 3)', 'a VALUES row has more than 2 values', at(1, 29));
    tooMany(
      'SELECT CASE WHEN a THEN 1 WHEN b THEN 2 WHEN c THEN 3 WHEN d THEN 4 END FROM t',
      'CASE has more than 3 WHEN clauses',
      at(1, 60),
    );
    tooMany('SELECT a, b, c FROM t', 'select list has more than 2 entries', at(1, 14));
    tooMany('SELECT 1 FROM t GROUP BY a, b, c', 'GROUP BY has more than 2 items', at(1, 32));
    tooMany('SELECT 1 FROM t ORDER BY a, b DESC, c', 'ORDER BY has more than 2 items', at(1, 37));
    tooMany('CREATE TABLE t (a INT, b INT, c INT)', 'tables can have at most 2 columns', at(1, 31));
    tooMany('SELECT coalesce(a, b, c) FROM t', 'cannot pass more than 2 arguments to a function', at(1, 23));
    // ARRAY[...] is a list (3 here), not a call's arguments (2)
    tooMany('SELECT ARRAY[1, 2, 3, 4]', 'ARRAY[...] has more than 3 elements', at(1, 23));
    tooMany('INSERT INTO t VALUES (ARRAY[1, 2, 3, 4])', 'ARRAY[...] has more than 3 elements', at(1, 38));
    tooMany(
      'UPDATE t SET a = coalesce(a, b, c)',
      'cannot pass more than 2 arguments to a function',
      at(1, 33),
    );
  });

  it('nesting: parentheses, calls, CASE and prefix operators, before any parser recurses', () => {
    const message = 'expression is nested too deeply (more than 3 levels)';
    const deep = (sql: string, position: SourcePosition): void =>
      throwsSluice(sql, 'NESTING_TOO_DEEP', message, position, { maxNestingDepth: 3 });
    deep('SELECT ((((1))))', at(1, 11));
    deep('SELECT abs(abs(abs(abs(1))))', at(1, 23));
    deep(
      'SELECT CASE WHEN true THEN CASE WHEN true THEN CASE WHEN true THEN CASE WHEN true THEN 1 END END END END',
      at(1, 68),
    );
    deep('UPDATE t SET b = NOT NOT NOT NOT true', at(1, 30));
    deep('SELECT - - (- (1))', at(1, 13));
    deep('SELECT NOT (NOT (true))', at(1, 17));
    // Infix minus and NOT before IN/LIKE do not nest.
    assert.doesNotThrow(() =>
      parseStatements('SELECT 1 - 1 - 1 - 1 - 1, a NOT IN (1) FROM t', {
        ...DEFAULT_SQL_LIMITS,
        maxNestingDepth: 3,
      }),
    );
  });

  it('expression depth counts operator chains, except chains of AND or of OR', () => {
    const limits = { maxExpressionDepth: 4 };
    const message = 'expression is too deep (more than 4 levels)';
    throwsSluice('SELECT 1 + 2 + 3 + 4 + 5', 'NESTING_TOO_DEEP', message, at(1, 12), limits);
    throwsSluice('SELECT 1::int::int::int::int', 'NESTING_TOO_DEEP', message, at(1, 8), limits);
    throwsSluice(
      "UPDATE t SET s = 'a' || 'b' || 'c' || 'd' || 'e'",
      'NESTING_TOO_DEEP',
      message,
      at(1, 25),
      limits,
    );
    const chain = Array.from({ length: 10_000 }, (_, i) => `a = ${i}`);
    assert.doesNotThrow(() =>
      parseStatements(`SELECT * FROM t WHERE ${chain.join(' OR ')}`, {
        ...DEFAULT_SQL_LIMITS,
        ...limits,
        maxSelectTokens: 1_000_000,
      }),
    );
    assert.doesNotThrow(() =>
      parseStatements(`DELETE FROM t WHERE ${chain.join(' AND ')}`, { ...DEFAULT_SQL_LIMITS, ...limits }),
    );
  });

  it('default limits: a 10,000-term chain is refused, with a position; nothing overflows the stack', () => {
    const terms = (n: number, term: string, op: string): string => Array(n).fill(term).join(op);
    for (const sql of [
      `SELECT ${terms(10_000, '1', '+')}`,
      `SELECT ${terms(10_000, "'a'", '||')}`,
      `SELECT 1${'::int'.repeat(10_000)}`,
      `UPDATE t SET a = ${terms(10_000, '1', ' * ')}`,
      `UPDATE t SET a = ${terms(5_000, 'true', ' = NOT ')}`,
      `INSERT INTO t VALUES (${terms(10_000, 'x', ' - ')})`,
      `SELECT ${'abs('.repeat(10_000)}1${')'.repeat(10_000)}`,
      `SELECT ${'CASE WHEN true THEN '.repeat(5_000)}1${' END'.repeat(5_000)}`,
      `SELECT ${'NOT '.repeat(10_000)}true`,
    ]) {
      assert.throws(
        () => parseStatements(sql),
        (error: unknown) =>
          error instanceof SluiceError &&
          // A SELECT this long is refused by the tokens it would hand the SQL library, first.
          (error.code === 'NESTING_TOO_DEEP' ||
            (error.code === 'STATEMENT_TOO_LARGE' && sql.startsWith('SELECT'))) &&
          error.position !== undefined &&
          !(error.position.line === 1 && error.position.column === 1),
        sql.slice(0, 40),
      );
    }
    // With the depth limit lifted, the same runs still parse: no parsing step recurses on a chain.
    const unlimited = {
      ...DEFAULT_SQL_LIMITS,
      maxExpressionDepth: 1_000_000,
      maxStatementTokens: 1_000_000,
      maxSelectTokens: 1_000_000,
    };
    assert.equal(
      parseStatements(`UPDATE t SET a = ${terms(20_000, 'true', ' = NOT ')}`, unlimited).length,
      1,
    );
    assert.equal(parseStatements(`SELECT ${terms(20_000, '1', '+')}`, unlimited).length, 1);
  });

  it('a long statement is lexed in parts exactly as in one piece, and stops soon after the token limit', () => {
    const operands = ['1e5', '1.5e+10', "'a b''c'", '"q""x"', 'abc', '.5', "'😀'", `'${'x'.repeat(70_000)}'`];
    const glue = ['+', '-', '*', '/', '=', '||', ',', ' ', '(', ')', '\n', '::', '<=', '\r\n', ' /* c */ '];
    const seeded =
      (seed: number): (() => number) =>
      () =>
        (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const describeTokens = (sql: string, max: number): string =>
      JSON.stringify(
        tokenize(sql, 0, sql.length, { line: 1, column: 1 }, max).map((t) => [
          t.tokenType.name,
          t.startOffset,
          t.endOffset,
          t.startLine,
          t.startColumn,
          t.endLine,
          t.endColumn,
        ]),
      );
    for (let run = 0; run < 5; run++) {
      const next = seeded(run + 1);
      let sql = 'SELECT ';
      while (sql.length < 300_000) {
        sql += operands[Math.floor(next() * operands.length)]! + glue[Math.floor(next() * glue.length)]!;
      }
      assert.equal(describeTokens(sql, 1e9), describeTokens(sql, Infinity), `run ${run}`);
    }
    // 500,000 tokens: lexing stops within a part of the limit.
    const dense = `SELECT ${Array(500_000).fill('1').join('+')}`;
    assert.ok(tokenize(dense, 0, dense.length, { line: 1, column: 1 }, 1_000).length < 100_000);
  });

  it('long IN lists of constants read the same as through the DML grammar', () => {
    const constants = [
      '0',
      '-1',
      "'s'",
      'NULL',
      'true',
      'FALSE',
      '- - 3.5',
      '+7',
      '9223372036854775808',
      '-9223372036854775808',
      '1e3',
      "'it''s'",
    ];
    const list = Array.from({ length: 40 }, (_, i) => constants[i % constants.length]).join(', ');
    const fromSelect = select(`SELECT * FROM tttt WHERE a NOT IN (${list})`).where;
    const fromDml = stmt(one(`UPDATE t SET a = 1 WHERE a NOT IN (${list})`), 'update').where;
    assert.deepEqual(fromSelect, fromDml);
  });
});

describe('limits', () => {
  it('numeric literals beyond double range', () => {
    throwsSluice('SELECT 1e400', 'NUMERIC_OVERFLOW', 'numeric literal "1e400" is out of range', {
      line: 1,
      column: 8,
    });
  });

  it('very deep nesting is NESTING_TOO_DEEP at the level that crosses the limit, not a crash', () => {
    const deep = `${'('.repeat(20000)}1${')'.repeat(20000)}`;
    const message = 'expression is nested too deeply (more than 100 levels)';
    // The 101st parenthesis: SELECT takes 7 columns, UPDATE t SET a = 17.
    throwsSluice(`SELECT ${deep}`, 'NESTING_TOO_DEEP', message, { line: 1, column: 108 });
    throwsSluice(`UPDATE t SET a = ${deep}`, 'NESTING_TOO_DEEP', message, { line: 1, column: 118 });
  });

  it('a numeric literal beyond numeric is NUMERIC_OVERFLOW before node-sql-parser reads its digits', () => {
    const message = 'value overflows numeric format';
    const tooMany = '9'.repeat(131_073);
    throwsSluice(`SELECT ${tooMany}`, 'NUMERIC_OVERFLOW', message, { line: 1, column: 8 });
    throwsSluice(`UPDATE t SET a = ${tooMany}`, 'NUMERIC_OVERFLOW', message, { line: 1, column: 18 });
    throwsSluice(`SELECT 1 + -${tooMany}.5`, 'NUMERIC_OVERFLOW', message, { line: 1, column: 13 });
    // The limit counts significant digits (leading zeros are free), and the limit itself is a value.
    const atLimit = expr(`${'0'.repeat(50)}${'9'.repeat(131_072)}`);
    assert.ok(atLimit.kind === 'literal' && typeof atLimit.value === 'bigint');
    // A journal replays what an older version accepted: not refused there.
    assert.equal(parseStatements(`SELECT ${tooMany}`, REPLAY_SQL_LIMITS).length, 1);
  });

  // Valid PostgreSQL that node-sql-parser rejects: SELECT bodies report a syntax error, while the
  // DML grammar accepts the same expression. Parenthesising the inner part works around each one.
  const selectOnly = [
    'a = NOT b',
    'a IN (1) = b',
    "b = a LIKE 'x'",
    'CASE (a) WHEN 1 THEN 2 END',
    'CASE WHEN a THEN 1 ELSE b OR c END',
    'a IN (b OR c)',
    'CAST(a OR b AS int)',
  ];
  for (const text of selectOnly) {
    it(`SELECT rejects, DML accepts: ${text}`, () => {
      assert.throws(
        () => parseStatements(`SELECT ${text}`),
        (error: unknown) => error instanceof SluiceError && error.code === 'SYNTAX_ERROR',
      );
      assert.doesNotThrow(() => dmlExpr(text));
    });
  }
});
