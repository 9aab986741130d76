// Type checks PostgreSQL 15 makes that Sluice skipped (each checked against PostgreSQL by hand):
// COLLATE on a type without a collation, and a computed text constant ('1'::text, upper('1'), a
// varchar or char(n) cast) beside a non-text type — only a bare quoted literal is PostgreSQL's
// `unknown`, which takes the type beside it. Each refused with TYPE_MISMATCH (abs(text): UNKNOWN_FUNCTION, as other calls) at its position, in a
// SELECT and in a view; the forms PostgreSQL accepts stay accepted, with its values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import { assertRefused, type RefusedStatement } from './support/sql-errors.ts';

function engineWithRow(): Engine {
  const engine = new Engine();
  engine.execute(
    'CREATE TABLE t (id integer PRIMARY KEY, i integer, s text, c char(3), n numeric, d date, j jsonb)',
  );
  engine.applyChanges('t', {
    insert: [{ id: 1, i: 1, s: 'x', c: 'z', n: 2.5, d: '2024-01-01' }],
  });
  return engine;
}

const REFUSED: readonly RefusedStatement[] = [
  ['SELECT 1 COLLATE "C"', 'TYPE_MISMATCH', 'collations are not supported by type integer', 10],
  ['SELECT i COLLATE "C" FROM t', 'TYPE_MISMATCH', 'collations are not supported by type integer', 10],
  ['SELECT -1 COLLATE "C"', 'TYPE_MISMATCH', 'collations are not supported by type integer', 11],
  ['SELECT n COLLATE "POSIX" FROM t', 'TYPE_MISMATCH', 'collations are not supported by type numeric', 10],
  ['SELECT d COLLATE "C" FROM t', 'TYPE_MISMATCH', 'collations are not supported by type date', 10],
  ['SELECT j COLLATE "C" FROM t', 'TYPE_MISMATCH', 'collations are not supported by type jsonb', 10],
  ['SELECT ARRAY[1] COLLATE "C"', 'TYPE_MISMATCH', 'collations are not supported by type integer[]', 17],
  // two different explicit collations meet (PostgreSQL's 42P21, at the second COLLATE)
  [
    'SELECT s COLLATE "C" = s COLLATE "POSIX" FROM t',
    'TYPE_MISMATCH',
    'collation mismatch between explicit collations "C" and "POSIX"',
    26,
  ],
  [
    'SELECT upper(s COLLATE "C") || s COLLATE "default" FROM t',
    'TYPE_MISMATCH',
    'explicit collations "C" and "default"',
    34,
  ],
  [
    'SELECT COALESCE(s COLLATE "POSIX", c COLLATE "C") FROM t',
    'TYPE_MISMATCH',
    'explicit collations "POSIX" and "C"',
    38,
  ],
  // ORDER BY x COLLATE naming a select item (or an ordinal) is x's type, as PostgreSQL reads it
  [
    'SELECT i FROM t ORDER BY i COLLATE "C"',
    'TYPE_MISMATCH',
    'collations are not supported by type integer',
    28,
  ],
  [
    'SELECT s FROM t ORDER BY 1 COLLATE "C"',
    'TYPE_MISMATCH',
    'collations are not supported by type integer',
    28,
  ],
  [
    'SELECT id, n FROM t ORDER BY n COLLATE "C", id',
    'TYPE_MISMATCH',
    'collations are not supported by type numeric',
    32,
  ],
  ["SELECT 1 = '1'::text", 'TYPE_MISMATCH', 'operator does not exist: integer = text', 8],
  ["SELECT i < '1'::text FROM t", 'TYPE_MISMATCH', 'operator does not exist: integer < text', 8],
  ["SELECT '1'::text = 1", 'TYPE_MISMATCH', 'operator does not exist: text = integer', 8],
  ["SELECT 1 = upper('1')", 'TYPE_MISMATCH', 'operator does not exist: integer = text', 8],
  ["SELECT 1 = '1' || ''", 'TYPE_MISMATCH', 'operator does not exist: integer = text', 8],
  ["SELECT 1 IN ('1'::text)", 'TYPE_MISMATCH', 'integer', 8],
  ["SELECT COALESCE(1, '1'::text)", 'TYPE_MISMATCH', 'COALESCE types integer and text cannot be matched', 8],
  ["SELECT 1 + '1'::text", 'TYPE_MISMATCH', 'operator does not exist: integer + text', 8],
  ["SELECT abs('1'::text)", 'UNKNOWN_FUNCTION', 'function abs(text) does not exist', 8],
  ["SELECT d = '2024-01-01'::text FROM t", 'TYPE_MISMATCH', 'operator does not exist: date = text', 8],
];

test('COLLATE on a type without a collation and computed text beside other types are refused', () => {
  const engine = engineWithRow();
  assertRefused(engine, REFUSED);
  // A view is refused the same way, and nothing is created.
  assert.throws(() => engine.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM t WHERE i = '1'::text"), {
    code: 'TYPE_MISMATCH',
  });
  assert.throws(() => engine.execute('CREATE MATERIALIZED VIEW v AS SELECT i COLLATE "C" AS x FROM t'), {
    code: 'TYPE_MISMATCH',
  });
  assert.throws(() => engine.execute('SELECT * FROM v'));
});

test('what PostgreSQL accepts stays accepted: literals adapt, text collates, computed text is text', () => {
  const engine = engineWithRow();
  const one = (sql: string): unknown => {
    const [r] = engine.execute(sql);
    const rows = r !== undefined && 'rows' in r ? (r.rows as Record<string, unknown>[]) : [];
    return rows.map((row) => Object.values(row));
  };
  assert.deepEqual(one("SELECT 1 = '1', i = '1', i IN (1, '2'), COALESCE(i, '1') FROM t"), [
    [true, true, true, 1],
  ]);
  assert.deepEqual(one('SELECT s COLLATE "C", \'a\' COLLATE "C", NULL COLLATE "C" FROM t'), [
    ['x', 'a', null],
  ]);
  assert.deepEqual(one("SELECT ARRAY['a'] COLLATE \"C\" = ARRAY['a'], 1 = '1' COLLATE \"C\""), [
    [true, true],
  ]);
  assert.deepEqual(one("SELECT s = 'x'::text, c = 'z'::varchar, 'a'::text || 1, i::text = '1' FROM t"), [
    [true, true, 'a1', true],
  ]);
  assert.deepEqual(one("SELECT d < '2025-01-01', i + '1', abs('-1') FROM t"), [[true, 2, 1]]);
  // NULL takes the type beside it, text or not (`s = NULL` is NULL, as in PostgreSQL)
  assert.deepEqual(one('SELECT s = NULL, NULL < s, i = NULL, s IS NULL FROM t'), [[null, null, null, false]]);
  // one explicit collation beside implicit ones, a CASE's operand beside its WHEN, non-text results
  assert.deepEqual(
    one(
      'SELECT s COLLATE "C" = s, CASE s COLLATE "C" WHEN s COLLATE "POSIX" THEN 1 END, length(s COLLATE "C") = length(s COLLATE "POSIX") FROM t',
    ),
    [[true, 1, true]],
  );
  // DISTINCT ON and ORDER BY through COLLATE name the same item (a hidden column each, before)
  assert.deepEqual(one('SELECT DISTINCT ON (s COLLATE "C") s FROM t ORDER BY s COLLATE "C"'), [['x']]);
  // x COLLATE "C" is named as x is
  const [named] = engine.execute('SELECT s COLLATE "C" FROM t');
  assert.deepEqual(
    named !== undefined && 'columns' in named ? (named.columns ?? []).map((c) => c.name) : [],
    ['s'],
  );
});
