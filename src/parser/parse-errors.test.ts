// Parser unit tests: constructs refused as NOT_SUPPORTED, syntax errors with their positions, and
// the node-sql-parser quirks the SELECT adapter absorbs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import { SluiceError, type ErrorCode, type SourcePosition } from '../common/errors.ts';
import {
  node,
  select,
  shape,
  exprShape,
  throwsSluice,
  col,
  int,
  bin,
  fn,
  type,
} from '../../test/support/parse-helpers.ts';

// ── NOT_SUPPORTED ────────────────────────────────────────────────────────────────────────────────

describe('NOT_SUPPORTED constructs', () => {
  const cases: [string, string, SourcePosition][] = [
    ['SELECT a FROM t JOIN u ON t.x IN (SELECT 1)', 'subquery is not supported', { line: 1, column: 35 }],
    [
      'WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x',
      'WITH RECURSIVE is not supported',
      { line: 1, column: 6 },
    ],
    ['SELECT a FROM t JOIN LATERAL u ON true', 'LATERAL is not supported', { line: 1, column: 22 }],
    ['SELECT a FROM t JOIN f(1) ON true', 'function in FROM is not supported', { line: 1, column: 22 }],
    [
      'SELECT a FROM (t JOIN u ON true) AS j',
      'alias for a join in parentheses is not supported',
      { line: 1, column: 34 },
    ],
    ['SELECT mode(a) OVER () FROM t', 'window function MODE is not supported', { line: 1, column: 8 }],
    [
      'SELECT sum(a) FILTER (WHERE a > 0) OVER (PARTITION BY b) FROM t',
      'FILTER in a window function is not supported',
      { line: 1, column: 15 },
    ],
    [
      'SELECT sum(a) OVER (ORDER BY b GROUPS 1 PRECEDING) FROM t',
      'GROUPS window frame is not supported',
      { line: 1, column: 32 },
    ],
    [
      'SELECT sum(a) OVER (ORDER BY b ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM t',
      'window frame EXCLUDE is not supported',
      { line: 1, column: 73 },
    ],
    [
      'SELECT lag(a) IGNORE NULLS OVER (ORDER BY b) FROM t',
      'IGNORE NULLS is not supported',
      { line: 1, column: 15 },
    ],
    ['SELECT a FROM LATERAL f(x)', 'LATERAL is not supported', { line: 1, column: 15 }],
    ['SELECT a FROM json_each(x) g', 'function in FROM is not supported', { line: 1, column: 15 }],
    ['SELECT a INTO x FROM t', 'SELECT INTO is not supported', { line: 1, column: 10 }],
    [
      'SELECT a FROM t ORDER BY a FETCH FIRST 5 ROWS WITH TIES',
      'FETCH … WITH TIES is not supported',
      { line: 1, column: 47 },
    ],
    ['SELECT a FROM t FOR UPDATE', 'FOR UPDATE is not supported', { line: 1, column: 17 }],
    ['SELECT max(a ORDER BY a) FROM t', 'ORDER BY inside MAX is not supported', { line: 1, column: 14 }],
    [
      "SELECT a SIMILAR TO 'x!%' ESCAPE '!' FROM t",
      'SIMILAR TO ... ESCAPE is not supported',
      { line: 1, column: 27 },
    ],
    [
      "SELECT INTERVAL '1' DAY TO SECOND",
      'INTERVAL with this qualifier is not supported',
      { line: 1, column: 8 },
    ],
    [
      "SELECT INTERVAL '1 day' HOUR",
      "INTERVAL '…' HOUR with anything but a number is not supported",
      { line: 1, column: 17 },
    ],
    ['SELECT a[1:2] FROM t', 'array slice is not supported', { line: 1, column: 9 }],
    ['SELECT ARRAY[ARRAY[1]]', 'multidimensional ARRAY[...] is not supported', { line: 1, column: 14 }],
    // @> is jsonb containment now; @? (a jsonpath match) is not
    ['SELECT a @? b FROM t', 'operator @? is not supported', { line: 1, column: 10 }],
    ['SELECT a FROM s.t', 'schema-qualified name is not supported', { line: 1, column: 15 }],
    ['SELECT s.t.a FROM t', 'schema-qualified name is not supported', { line: 1, column: 8 }],
    // "C", "POSIX" and "default" are Sluice's order; any other collation is named at its name
    ['SELECT a COLLATE "en_US" FROM t', 'collation "en_US" is not supported', { line: 1, column: 18 }],
    [
      'SELECT a FROM t\n  ORDER BY a COLLATE "de_DE"',
      'collation "de_DE" is not supported',
      { line: 2, column: 22 },
    ],
    [
      'SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 1 + a PRECEDING AND CURRENT ROW) FROM t',
      'window frame offset that is not a constant integer expression is not supported',
      { line: 1, column: 49 },
    ],
    [
      // A named window's frame is refused where it is written, in the WINDOW clause.
      'SELECT a, sum(a) OVER w FROM t WINDOW w AS (PARTITION BY a ORDER BY a RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)',
      'RANGE window frame is not supported',
      { line: 1, column: 71 },
    ],
    ['CREATE VIEW v AS SELECT 1', 'CREATE VIEW is not supported', { line: 1, column: 8 }],
    ['CREATE TABLE t (a int CHECK (a > 0))', 'CHECK constraint is not supported', { line: 1, column: 23 }],
    [
      'CREATE TABLE t (a int REFERENCES u (id))',
      'REFERENCES constraint is not supported',
      { line: 1, column: 23 },
    ],
    [
      'CREATE TABLE t (a int, FOREIGN KEY (a) REFERENCES u (id))',
      'FOREIGN KEY constraint is not supported',
      { line: 1, column: 24 },
    ],
    [
      'CREATE TABLE t (a int, CONSTRAINT pk PRIMARY KEY (a))',
      'named CONSTRAINT is not supported',
      { line: 1, column: 24 },
    ],
    ['CREATE TABLE s.t (a int)', 'schema-qualified name is not supported', { line: 1, column: 14 }],
    [
      'DROP TABLE a, b',
      'dropping several objects in one statement is not supported',
      { line: 1, column: 13 },
    ],
    [
      'INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING',
      'ON CONFLICT is not supported',
      { line: 1, column: 26 },
    ],
    ['INSERT INTO t VALUES ((SELECT 1))', 'subquery is not supported', { line: 1, column: 24 }],
    ['INSERT INTO t VALUES (b IN (SELECT 1))', 'subquery is not supported', { line: 1, column: 29 }],
    ['UPDATE t SET a = sum(b) OVER ()', 'window function is not supported', { line: 1, column: 18 }],
    [
      'UPDATE t SET a = count(*) FILTER (WHERE b)',
      'aggregate FILTER is not supported',
      { line: 1, column: 27 },
    ],
    ['UPDATE t SET a = f(b FROM c)', 'F(... FROM ...) is not supported', { line: 1, column: 22 }],
    ['UPDATE t SET a = b ~ c', 'operator ~ is not supported', { line: 1, column: 20 }],
    [
      'CREATE TABLE d (x int DEFAULT EXISTS (SELECT 1))',
      'subquery is not supported',
      { line: 1, column: 39 },
    ],
    ['UPDATE t SET a = ARRAY_LENGTH(SELECT 1)', 'subquery is not supported', { line: 1, column: 31 }],
    [
      'SELECT a FROM t WHERE a = ANY (1, 2)',
      'ANY (...) with a list is not supported',
      { line: 1, column: 27 },
    ],
    ["SELECT E'x'", "E'...' string constant is not supported", { line: 1, column: 8 }],
    // UPDATE and DELETE read COLLATE as a SELECT does: any collation but Sluice's order is named
    [
      'UPDATE t SET s = s\n  COLLATE "en_US" WHERE a ISNULL',
      'collation "en_US" is not supported',
      { line: 2, column: 11 },
    ],
    [
      "UPDATE t SET a = INTERVAL '1 day' HOUR",
      "INTERVAL '…' HOUR with anything but a number is not supported",
      { line: 1, column: 27 },
    ],
    ['SELECT a IS MAYBE FROM t', 'IS MAYBE is not supported', { line: 1, column: 13 }],
    ['SELECT a FROM t TABLESAMPLE SYSTEM (10)', 'TABLESAMPLE is not supported', { line: 1, column: 17 }],
  ];
  for (const [sql, message, position] of cases) {
    it(sql, () => throwsSluice(sql, 'NOT_SUPPORTED', message, position));
  }
});

// ── row constructors ─────────────────────────────────────────────────────────────────────────────
// A row is taken only by a comparison with another row (a row left elsewhere is refused by the binder,
// test/golden/row-comparison.slt); these are refused while parsing, pointing at the left row.

describe('row comparisons', () => {
  const cases: [string, ErrorCode, string, SourcePosition][] = [
    [
      'SELECT a FROM t WHERE (a, b) = (1, 2, 3)',
      'SYNTAX_ERROR',
      'unequal number of entries in row expressions',
      { line: 1, column: 23 },
    ],
    [
      'SELECT a FROM t WHERE\n  (a, b) IN ((1, 2), (1, 2, 3))',
      'SYNTAX_ERROR',
      'unequal number of entries in row expressions',
      { line: 2, column: 3 },
    ],
    [
      'DELETE FROM t WHERE ROW(a) < ROW(1, 2)',
      'SYNTAX_ERROR',
      'unequal number of entries in row expressions',
      { line: 1, column: 21 },
    ],
    [
      'SELECT (a, b) || (1, 2) FROM t',
      'NOT_SUPPORTED',
      'operator || on rows is not supported',
      { line: 1, column: 8 },
    ],
    [
      'SELECT a FROM t WHERE (a, b) = (SELECT 1, 2)',
      'NOT_SUPPORTED',
      'a row compared with a subquery is not supported',
      { line: 1, column: 23 },
    ],
    [
      'SELECT ROW() = ROW()',
      'NOT_SUPPORTED',
      'an empty row constructor is not supported',
      { line: 1, column: 11 },
    ],
  ];
  for (const [sql, code, message, position] of cases) {
    it(sql, () => throwsSluice(sql, code, message, position));
  }
});

// ── syntax errors ────────────────────────────────────────────────────────────────────────────────

describe('syntax errors', () => {
  const cases: [string, string, SourcePosition][] = [
    ['SELECT * FORM t', 'syntax error at or near "FORM"', { line: 1, column: 10 }],
    // RETURNING lists, as PostgreSQL 15 reports them (a select list's words have no place there)
    ['INSERT INTO t VALUES (1) RETURNING', 'syntax error at end of input', { line: 1, column: 35 }],
    ['DELETE FROM t USING u RETURNING * FROM u', 'syntax error at or near "FROM"', { line: 1, column: 35 }],
    [
      'UPDATE t SET n = 1 RETURNING DISTINCT n',
      'syntax error at or near "DISTINCT"',
      { line: 1, column: 30 },
    ],
    [
      'INSERT INTO t SELECT 1 RETURNING n ORDER BY n',
      'syntax error at or near "ORDER"',
      { line: 1, column: 36 },
    ],
    ['UPDATE t SET n = 1 FROM u RETURNING n, (n', 'syntax error at end of input', { line: 1, column: 42 }],
    // UPDATE's FROM list and DELETE's USING list with their WHERE, as PostgreSQL 15 reports them
    [
      'UPDATE t SET a = u.b\nFROM u, v\nWHERE u.k = v.k GROUP BY 1',
      'syntax error at or near "GROUP"',
      { line: 3, column: 17 },
    ],
    [
      'DELETE FROM t\nUSING u JOIN v\nWHERE u.k = 1',
      'syntax error at or near "WHERE"',
      { line: 3, column: 1 },
    ],
    ['DELETE FROM t\nUSING u,\nWHERE u.k = 1', 'syntax error at or near "WHERE"', { line: 3, column: 1 }],
    ["UPDATE t SET a = 1 FROM u WHERE u.k = 'x' ||", 'syntax error at end of input', { line: 1, column: 45 }],
    ['SELECT a, FROM t', 'syntax error at or near "FROM"', { line: 1, column: 11 }],
    ['SELECT a, b FORM t', 'syntax error at or near "t"', { line: 1, column: 18 }],
    ['SELECT a FROM', 'syntax error at end of input', { line: 1, column: 14 }],
    ['SELECT a FROM t WHERE', 'syntax error at end of input', { line: 1, column: 22 }],
    ['SELECT a FROM t WHERE AND', 'syntax error at or near "AND"', { line: 1, column: 23 }],
    ['SELECT a IS DISTINCT b FROM t', 'syntax error at or near "b"', { line: 1, column: 22 }],
    ['UPDATE t SET c = a IS DISTINCT b', 'syntax error at or near "b"', { line: 1, column: 32 }],
    ['SELECT a IS DISTINCT FROM', 'syntax error at end of input', { line: 1, column: 26 }],
    ['UPDATE t SET c = a IS NOT DISTINCT FROM', 'syntax error at end of input', { line: 1, column: 40 }],
    // the positions PostgreSQL 15 gives for these UPDATE and DELETE forms (a second ESCAPE: the
    // SELECT path's position, PostgreSQL points at the value after it)
    ["DELETE FROM t\nWHERE s ESCAPE '!'", 'syntax error at or near "ESCAPE"', { line: 2, column: 9 }],
    [
      "DELETE FROM t WHERE s LIKE 'a' AND b ESCAPE '!'",
      'syntax error at or near "ESCAPE"',
      { line: 1, column: 38 },
    ],
    [
      "DELETE FROM t WHERE s LIKE 'a' ESCAPE '!' ESCAPE '!'",
      'syntax error at or near "ESCAPE"',
      { line: 1, column: 43 },
    ],
    ["UPDATE t SET s = overlay(s PLACING 'x')", 'syntax error at or near ")"', { line: 1, column: 39 }],
    [
      "UPDATE t SET s = foo(s PLACING 'x' FROM 1)",
      'syntax error at or near "PLACING"',
      { line: 1, column: 24 },
    ],
    ['UPDATE t SET isnull = 1', 'syntax error at or near "isnull"', { line: 1, column: 14 }],
    ['SELECT a,, b FROM t', 'syntax error at or near ","', { line: 1, column: 10 }],
    ['SELECT f(a,) FROM t', 'syntax error at or near ")"', { line: 1, column: 12 }],
    ['SELECT int sum(y) FROM t', 'syntax error at or near "("', { line: 1, column: 15 }],
    [
      'SELECT a FROM t ORDER BY a NULLS LASTLIMIT 1',
      'syntax error at or near "LASTLIMIT"',
      { line: 1, column: 34 },
    ],
    ["SELECT 'abc", 'unterminated quoted string', { line: 1, column: 8 }],
    ["SELECT 1;\nSELECT 'abc\n\ndef", 'unterminated quoted string', { line: 2, column: 8 }],
    ['SELECT "abc', 'unterminated quoted identifier', { line: 1, column: 8 }],
    ['SELECT 1 /* open', 'unterminated /* comment', { line: 1, column: 10 }],
    // A statement of nothing but an unterminated comment was left out: the script ran without error.
    ['SELECT 1; /* open', 'unterminated /* comment', { line: 1, column: 11 }],
    ['SELECT 1;\n/* a /* nested */ still open', 'unterminated /* comment', { line: 2, column: 1 }],
    ['SELECT ""', 'zero-length delimited identifier at or near """"', { line: 1, column: 8 }],
    ['SELECT 123abc', 'trailing junk after numeric literal at or near "123abc"', { line: 1, column: 8 }],
    ['SELECT $1', 'syntax error at or near "$"', { line: 1, column: 8 }],
    ['CREAT TABLE t (a int)', 'syntax error at or near "CREAT"', { line: 1, column: 1 }],
    ['SHOW tables;\n  FOO bar', 'syntax error at or near "FOO"', { line: 2, column: 3 }],
    ['CREATE TABLE t (a int', 'syntax error at end of input', { line: 1, column: 22 }],
    ['CREATE TABLE t (a int,)', 'syntax error at or near ")"', { line: 1, column: 23 }],
    ['CREATE TABLE t (a big int)', 'syntax error at or near "int"', { line: 1, column: 23 }],
    ['CREATE TABLE t (select int)', 'syntax error at or near "select"', { line: 1, column: 17 }],
    [
      'CREATE TABLE t (a int NULL NOT NULL)',
      'conflicting NULL/NOT NULL declarations for column "a" of table "t"',
      { line: 1, column: 17 },
    ],
    ['CREATE SOURCE s', 'syntax error at end of input', { line: 1, column: 16 }],
    ['CREATE SINK s FROM v', 'syntax error at end of input', { line: 1, column: 21 }],
    ['DROP TABLE', 'syntax error at end of input', { line: 1, column: 11 }],
    ['SHOW columns', 'syntax error at or near "columns"', { line: 1, column: 6 }],
    ['SHOW TABLES extra', 'syntax error at or near "extra"', { line: 1, column: 13 }],
    ['SELECT 1 SELECT 2', 'syntax error at or near "2"', { line: 1, column: 17 }],
    ['INSERT INTO t VALUES (1 2)', 'syntax error at or near "2"', { line: 1, column: 25 }],
    ['INSERT INTO t VALUES (1', 'syntax error at end of input', { line: 1, column: 24 }],
    ['UPDATE t SET a = WHERE b', 'syntax error at or near "WHERE"', { line: 1, column: 18 }],
    ['UPDATE t SET a = 1 WHERE b = = 2', 'syntax error at or near "="', { line: 1, column: 30 }],
    ['DELETE FROM t WHERE a = 1, b = 2', 'syntax error at or near ","', { line: 1, column: 26 }],
    ['EXPLAIN INSERT INTO t VALUES (1)', 'syntax error at or near "INSERT"', { line: 1, column: 9 }],
    ['SELECT a FROM t GROUP a', 'syntax error at or near "a"', { line: 1, column: 23 }],
    // EXTRACT's field is a word or a string; PostgreSQL 15's positions
    ['UPDATE t SET a = extract(t.year FROM b)', 'syntax error at or near "."', { line: 1, column: 27 }],
    ['DELETE FROM t WHERE extract(1 FROM b) = 1', 'syntax error at or near "1"', { line: 1, column: 29 }],
  ];
  for (const [sql, message, position] of cases) {
    it(sql.replace(/\n/g, '\\n'), () => throwsSluice(sql, 'SYNTAX_ERROR', message, position));
  }

  it('errors never include node-sql-parser or chevrotain wording', () => {
    for (const sql of [
      'SELECT a FROM t WHERE a = (',
      'SELECT CASE a END',
      'UPDATE t SET',
      'SELECT a FROM t LIMIT x y',
    ]) {
      assert.throws(
        () => parseStatements(sql),
        (error: unknown) =>
          error instanceof SluiceError &&
          error.code === 'SYNTAX_ERROR' &&
          /^syntax error (at or near "[^"]*"|at end of input)$/.test(error.message),
      );
    }
  });
});

// ── node-sql-parser quirks ───────────────────────────────────────────────────────────────────────

describe('node-sql-parser quirks the adapter absorbs', () => {
  it('argument lists it folds into an AND/OR chain: f(a, b OR c)', () => {
    assert.deepEqual(
      exprShape('coalesce(a, b OR c, d)'),
      fn('coalesce', [col('a'), bin('or', col('b'), col('c')), col('d')]),
    );
    assert.deepEqual(
      exprShape('f(a, b AND c OR d)'),
      fn('f', [col('a'), bin('or', bin('and', col('b'), col('c')), col('d'))]),
    );
  });

  it('select items it turns into a cast node with a tail', () => {
    assert.deepEqual(exprShape('a LIKE b::text'), {
      kind: 'like',
      operand: col('a'),
      pattern: { kind: 'cast', operand: col('b'), type: type('text') },
      negated: false,
      caseInsensitive: false,
    });
    assert.deepEqual(exprShape('CAST(a AS int)::text'), {
      kind: 'cast',
      operand: { kind: 'cast', operand: col('a'), type: type('int') },
      type: type('text'),
    });
    assert.deepEqual(
      exprShape('(a OR b)::int || c'),
      bin('||', { kind: 'cast', operand: bin('or', col('a'), col('b')), type: type('int') }, col('c')),
    );
    const item = select('select (a OR b)::int + 1 AS q from t').items[0];
    assert.equal(item?.kind === 'expr' && item.alias, 'q');
  });

  it('a cast after a BETWEEN bound stays on the bound', () => {
    assert.deepEqual(exprShape('a BETWEEN 1 AND (b OR c)::int'), {
      kind: 'between',
      operand: col('a'),
      low: int(1),
      high: { kind: 'cast', operand: bin('or', col('b'), col('c')), type: type('int') },
      negated: false,
    });
  });

  it('quoted identifiers after casts and LIKE, quoted function names', () => {
    const item = select('select a::int "Total" from t').items[0];
    assert.equal(item?.kind === 'expr' && item.alias, 'Total');
    assert.deepEqual(exprShape('a LIKE "B"'), {
      kind: 'like',
      operand: col('a'),
      pattern: col('B'),
      negated: false,
      caseInsensitive: false,
    });
    assert.deepEqual(exprShape('"count"(*)'), fn('count', [], false, true));
  });

  it('garbage node-sql-parser accepts is still a syntax error', () => {
    throwsSluice('SELECT a sum(x) FROM t', 'SYNTAX_ERROR', 'syntax error at or near "("', {
      line: 1,
      column: 13,
    });
    throwsSluice('SELECT a FROM only t', 'NOT_SUPPORTED', 'ONLY is not supported', { line: 1, column: 15 });
  });

  it('long AND/OR chains do not exhaust the stack', () => {
    const chain = Array.from({ length: 2900 }, (_, i) => `a = ${i}`).join(' OR ');
    const where = select(`SELECT * FROM t WHERE ${chain}`).where;
    assert.equal(where?.kind, 'binary');
    assert.deepEqual(shape(node(where, 'binary').right), bin('=', col('a'), int(2899)));
  });
});
