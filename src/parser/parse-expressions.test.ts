// Parser unit tests: identifiers and literals, every expression form (checked to parse alike on the
// SELECT and the DML path), and arrays.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import type { Expr, Statement } from './ast.ts';
import {
  one,
  stmt,
  select,
  expr,
  dmlExpr,
  shape,
  exprShape,
  col,
  int,
  num,
  str,
  bool,
  nul,
  bin,
  fn,
  type,
} from '../../test/support/parse-helpers.ts';

// ── identifiers and literals ─────────────────────────────────────────────────────────────────────

/** The shape of `a [NOT] [I]LIKE pattern`. */
const like = (negated: boolean, caseInsensitive: boolean, pattern: unknown): unknown => ({
  kind: 'like',
  operand: col('a'),
  pattern,
  negated,
  caseInsensitive,
});

describe('identifiers and literals', () => {
  it('unquoted identifiers fold to lowercase, quoted ones keep case', () => {
    const query = select('SELECT Amount, "Amount", "we""ird", T.X, "T"."X" FROM "Orders" O');
    assert.deepEqual(
      query.items.map((i) => i.kind === 'expr' && shape(i.expr)),
      [col('amount'), col('Amount'), col('we"ird'), col('x', 't'), col('X', 'T')],
    );
    assert.deepEqual(shape(query.from), { kind: 'table', name: 'Orders', alias: 'o' });
    const create = one('CREATE TABLE "MixedCase" ("ID" int, Name text)');
    assert.equal(create.kind === 'createTable' && create.name, 'MixedCase');
    assert.deepEqual(create.kind === 'createTable' && create.columns.map((c) => c.name), ['ID', 'name']);
  });

  it('non-reserved keywords work as names', () => {
    const statement = one('CREATE TABLE tables (key int, views text, dataflow int, values int)');
    assert.equal(statement.kind === 'createTable' && statement.name, 'tables');
    assert.deepEqual(
      shape(select('select key, views from tables').items.map((i) => i.kind === 'expr' && i.expr)),
      [col('key'), col('views')],
    );
  });

  it('function names are lowercased', () => {
    assert.deepEqual(exprShape('COALESCE(A, 1)'), fn('coalesce', [col('a'), int(1)]));
    assert.deepEqual(exprShape('Upper(s)'), fn('upper', [col('s')]));
  });

  it('integers are exact: number when safe, bigint beyond', () => {
    assert.deepEqual(exprShape('9007199254740991'), int(9007199254740991));
    assert.deepEqual(exprShape('9007199254740992'), int(9007199254740992n));
    assert.deepEqual(exprShape('9223372036854775807'), int(9223372036854775807n));
    assert.deepEqual(exprShape('-9223372036854775808'), int(-9223372036854775808n));
    assert.deepEqual(exprShape('123456789012345678901234567890'), int(123456789012345678901234567890n));
    assert.deepEqual(exprShape('007'), int(7));
    const [row] = stmt(
      one('insert into t values (9223372036854775807, -9223372036854775808)'),
      'insert',
    ).rows;
    assert.deepEqual(shape(row), [int(9223372036854775807n), int(-9223372036854775808n)]);
  });

  it('numeric literals have a point or an exponent', () => {
    assert.deepEqual(exprShape('1.5'), num(1.5));
    assert.deepEqual(exprShape('.5'), num(0.5));
    assert.deepEqual(exprShape('5.'), num(5));
    assert.deepEqual(exprShape('1e3'), num(1000));
    assert.deepEqual(exprShape('2.5E-2'), num(0.025));
    assert.deepEqual(exprShape('-0.0'), num(0));
  });

  it('numeric literals keep their exact source text (the binder reads the decimal from it)', () => {
    for (const [source, text] of [
      ['1.50', '1.50'],
      ['12345678901234567.89', '12345678901234567.89'],
      ['-2.5E-2', '-2.5E-2'],
    ] as const) {
      for (const e of [expr(source), dmlExpr(source)]) {
        assert.equal(e.kind, 'literal');
        assert.equal((e as { text?: string }).text, text, source);
      }
    }
  });

  it('strings, booleans, NULL', () => {
    assert.deepEqual(exprShape("'it''s'"), str("it's"));
    assert.deepEqual(exprShape("''"), str(''));
    assert.deepEqual(exprShape("'multi\nline'"), str('multi\nline'));
    assert.deepEqual(exprShape("'a\\b'"), str('a\\b'));
    assert.deepEqual(exprShape('TRUE'), bool(true));
    assert.deepEqual(exprShape('false'), bool(false));
    assert.deepEqual(exprShape('NULL'), nul);
  });

  it('unary minus folds into numeric literals (as in PostgreSQL), not into other operands', () => {
    assert.deepEqual(exprShape('- 5'), int(-5));
    assert.deepEqual(exprShape('-(2)'), int(-2));
    assert.deepEqual(exprShape('- - 2'), int(2));
    assert.deepEqual(exprShape('1 - -2'), bin('-', int(1), int(-2)));
    assert.deepEqual(exprShape('+3'), { kind: 'unary', op: '+', operand: int(3) });
    assert.deepEqual(exprShape('-a'), { kind: 'unary', op: '-', operand: col('a') });
    assert.deepEqual(exprShape('-2::int'), {
      kind: 'unary',
      op: '-',
      operand: { kind: 'cast', operand: int(2), type: type('int') },
    });
  });

  it('typed literals are casts of strings', () => {
    assert.deepEqual(exprShape("DATE '2024-01-31'"), {
      kind: 'cast',
      operand: str('2024-01-31'),
      type: type('date'),
    });
    assert.deepEqual(exprShape("timestamp '2024-01-31 10:00:00'"), {
      kind: 'cast',
      operand: str('2024-01-31 10:00:00'),
      type: type('timestamp'),
    });
  });
});

// ── expressions ──────────────────────────────────────────────────────────────────────────────────

describe('expressions', () => {
  it('arithmetic and comparison operators with precedence', () => {
    assert.deepEqual(
      exprShape('a + b * c - d / e % f'),
      bin(
        '-',
        bin('+', col('a'), bin('*', col('b'), col('c'))),
        bin('%', bin('/', col('d'), col('e')), col('f')),
      ),
    );
    for (const op of ['=', '<>', '<', '<=', '>', '>='] as const) {
      assert.deepEqual(exprShape(`a ${op} b + 1`), bin(op, col('a'), bin('+', col('b'), int(1))));
    }
    assert.deepEqual(exprShape('a != b'), bin('<>', col('a'), col('b')));
  });

  it('AND binds tighter than OR; NOT tighter than AND (node-sql-parser gets this wrong)', () => {
    assert.deepEqual(exprShape('a AND b OR c'), bin('or', bin('and', col('a'), col('b')), col('c')));
    assert.deepEqual(exprShape('a OR b AND c'), bin('or', col('a'), bin('and', col('b'), col('c'))));
    assert.deepEqual(
      exprShape('a = 1 AND b = 2 OR c = 3 AND NOT d'),
      bin(
        'or',
        bin('and', bin('=', col('a'), int(1)), bin('=', col('b'), int(2))),
        bin('and', bin('=', col('c'), int(3)), { kind: 'unary', op: 'not', operand: col('d') }),
      ),
    );
    assert.deepEqual(exprShape('NOT a = b'), {
      kind: 'unary',
      op: 'not',
      operand: bin('=', col('a'), col('b')),
    });
    assert.deepEqual(
      exprShape('NOT (a OR b) AND c'),
      bin('and', { kind: 'unary', op: 'not', operand: bin('or', col('a'), col('b')) }, col('c')),
    );
    assert.deepEqual(exprShape('(a OR b) AND c'), bin('and', bin('or', col('a'), col('b')), col('c')));
  });

  it('IS [NOT] DISTINCT FROM binds as IS: looser than comparisons, tighter than NOT and AND', () => {
    assert.deepEqual(exprShape('a IS DISTINCT FROM b'), bin('is distinct from', col('a'), col('b')));
    assert.deepEqual(
      exprShape('a is  not distinct  from b'),
      bin('is not distinct from', col('a'), col('b')),
    );
    // PostgreSQL: `1 = 1 IS DISTINCT FROM false` is true, `a IS DISTINCT FROM b = c` compares a with b = c
    assert.deepEqual(
      exprShape('a = b IS DISTINCT FROM c'),
      bin('is distinct from', bin('=', col('a'), col('b')), col('c')),
    );
    assert.deepEqual(
      exprShape('a IS NOT DISTINCT FROM b + 1 = c AND d'),
      bin(
        'and',
        bin('is not distinct from', col('a'), bin('=', bin('+', col('b'), int(1)), col('c'))),
        col('d'),
      ),
    );
    assert.deepEqual(exprShape('NOT a IS DISTINCT FROM b'), {
      kind: 'unary',
      op: 'not',
      operand: bin('is distinct from', col('a'), col('b')),
    });
    assert.deepEqual(
      exprShape('a IS DISTINCT FROM b OR a IS NOT DISTINCT FROM NULL'),
      bin('or', bin('is distinct from', col('a'), col('b')), bin('is not distinct from', col('a'), nul)),
    );
    assert.deepEqual(
      exprShape('a IS DISTINCT FROM -b::int'),
      bin('is distinct from', col('a'), {
        kind: 'unary',
        op: '-',
        operand: { kind: 'cast', operand: col('b'), type: type('int') },
      }),
    );
    // the words as quoted names are names
    assert.deepEqual(
      exprShape('"is" IS DISTINCT FROM "distinct"'),
      bin('is distinct from', col('is'), col('distinct')),
    );
  });

  it('IS [NOT] UNKNOWN is IS [NOT] NULL marked for a boolean; BETWEEN [A]SYMMETRIC', () => {
    const isNull = (operand: unknown, negated: boolean): unknown => ({
      kind: 'isNull',
      operand,
      negated,
      unknown: true,
    });
    assert.deepEqual(exprShape('a IS UNKNOWN'), isNull(col('a'), false));
    assert.deepEqual(
      exprShape('(a = b) IS NOT UNKNOWN AND c'),
      bin('and', isNull(bin('=', col('a'), col('b')), true), col('c')),
    );
    const between = (negated: boolean, symmetric: boolean): unknown => ({
      kind: 'between',
      operand: col('a'),
      low: col('b'),
      high: bin('+', col('c'), int(1)),
      negated,
      ...(symmetric ? { symmetric: true } : {}),
    });
    assert.deepEqual(exprShape('a BETWEEN SYMMETRIC b AND c + 1'), between(false, true));
    assert.deepEqual(exprShape('a NOT BETWEEN symmetric b AND c + 1'), between(true, true));
    assert.deepEqual(exprShape('a BETWEEN ASYMMETRIC b AND c + 1'), between(false, false));
    assert.deepEqual(exprShape('"symmetric" BETWEEN b AND c + 1'), {
      ...(between(false, false) as object),
      operand: col('symmetric'),
    });
  });

  it('IS [NOT] NULL/TRUE/UNKNOWN beside comparisons, which node-sql-parser refuses on the SELECT path', () => {
    const isNull = (operand: unknown, negated: boolean): unknown => ({ kind: 'isNull', operand, negated });
    assert.deepEqual(exprShape('a = b IS NOT NULL'), isNull(bin('=', col('a'), col('b')), true));
    assert.deepEqual(exprShape('a IS NULL = true'), bin('=', isNull(col('a'), false), bool(true)));
    assert.deepEqual(
      exprShape('a < b IS NULL OR c'),
      bin('or', isNull(bin('<', col('a'), col('b')), false), col('c')),
    );
    assert.deepEqual(exprShape('a = b IS UNKNOWN'), {
      kind: 'isNull',
      operand: bin('=', col('a'), col('b')),
      negated: false,
      unknown: true,
    });
    assert.deepEqual(exprShape('a = b IS TRUE'), fn('coalesce', [bin('=', col('a'), col('b')), bool(false)]));
  });

  it('|| sits between comparison and + (node-sql-parser gets this wrong too)', () => {
    assert.deepEqual(exprShape('a || b + c'), bin('||', col('a'), bin('+', col('b'), col('c'))));
    assert.deepEqual(exprShape('a + b || c'), bin('||', bin('+', col('a'), col('b')), col('c')));
    assert.deepEqual(exprShape("a || 'x' = b"), bin('=', bin('||', col('a'), str('x')), col('b')));
  });

  it('IS [NOT] NULL, IS [NOT] TRUE/FALSE', () => {
    assert.deepEqual(exprShape('a IS NULL'), { kind: 'isNull', operand: col('a'), negated: false });
    assert.deepEqual(exprShape('a + 1 IS NOT NULL'), {
      kind: 'isNull',
      operand: bin('+', col('a'), int(1)),
      negated: true,
    });
    const coalesce = (fallback: boolean): unknown => fn('coalesce', [col('a'), bool(fallback)]);
    assert.deepEqual(exprShape('a IS TRUE'), coalesce(false));
    assert.deepEqual(exprShape('a IS NOT TRUE'), { kind: 'unary', op: 'not', operand: coalesce(false) });
    assert.deepEqual(exprShape('a IS FALSE'), { kind: 'unary', op: 'not', operand: coalesce(true) });
    assert.deepEqual(exprShape('a IS NOT FALSE'), coalesce(true));
  });

  it('[NOT] BETWEEN', () => {
    assert.deepEqual(exprShape('a BETWEEN 1 AND 2 + 3'), {
      kind: 'between',
      operand: col('a'),
      low: int(1),
      high: bin('+', int(2), int(3)),
      negated: false,
    });
    assert.deepEqual(
      exprShape('a NOT BETWEEN b AND c OR d'),
      bin(
        'or',
        { kind: 'between', operand: col('a'), low: col('b'), high: col('c'), negated: true },
        col('d'),
      ),
    );
  });

  it('[NOT] IN (list)', () => {
    assert.deepEqual(exprShape("a IN (1, 'x', b + 1)"), {
      kind: 'inList',
      operand: col('a'),
      list: [int(1), str('x'), bin('+', col('b'), int(1))],
      negated: false,
    });
    assert.deepEqual(exprShape('a NOT IN (1)'), {
      kind: 'inList',
      operand: col('a'),
      list: [int(1)],
      negated: true,
    });
  });

  it('[NOT] LIKE / ILIKE', () => {
    assert.deepEqual(exprShape("a LIKE 'x%'"), like(false, false, str('x%')));
    assert.deepEqual(exprShape("a NOT LIKE 'x%'"), like(true, false, str('x%')));
    assert.deepEqual(exprShape("a ILIKE 'x' || b"), like(false, true, bin('||', str('x'), col('b'))));
    assert.deepEqual(exprShape("a NOT ILIKE 'x'"), like(true, true, str('x')));
  });

  it('CASE, simple and searched', () => {
    assert.deepEqual(exprShape("CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END"), {
      kind: 'case',
      operand: col('a'),
      whens: [
        { when: int(1), then: str('one') },
        { when: int(2), then: str('two') },
      ],
      else: str('many'),
    });
    assert.deepEqual(exprShape('CASE WHEN a > 1 THEN 1 END'), {
      kind: 'case',
      whens: [{ when: bin('>', col('a'), int(1)), then: int(1) }],
    });
  });

  it('CAST and ::', () => {
    assert.deepEqual(exprShape('CAST(a AS double precision)'), {
      kind: 'cast',
      operand: col('a'),
      type: type('double precision'),
    });
    assert.deepEqual(exprShape('a::numeric(10,2)'), {
      kind: 'cast',
      operand: col('a'),
      type: type('numeric', [10, 2]),
    });
    assert.deepEqual(exprShape('a::int::text'), {
      kind: 'cast',
      operand: { kind: 'cast', operand: col('a'), type: type('int') },
      type: type('text'),
    });
    assert.deepEqual(
      exprShape('a + b::character varying(5)'),
      bin('+', col('a'), { kind: 'cast', operand: col('b'), type: type('character varying', [5]) }),
    );
    assert.deepEqual(exprShape('x::timestamp without time zone'), {
      kind: 'cast',
      operand: col('x'),
      type: type('timestamp without time zone'),
    });
    assert.deepEqual(exprShape('-a::int8'), {
      kind: 'unary',
      op: '-',
      operand: { kind: 'cast', operand: col('a'), type: type('int8') },
    });
    // A word after a cast in a select list is an alias, not part of the type.
    const item = select('select a::int total from t').items[0];
    assert.equal(item?.kind === 'expr' && item.alias, 'total');
  });

  it('function calls: COUNT(*), DISTINCT, special SUBSTRING syntax, niladic functions', () => {
    assert.deepEqual(exprShape('count(*)'), fn('count', [], false, true));
    assert.deepEqual(exprShape('COUNT(DISTINCT x)'), fn('count', [col('x')], true));
    assert.deepEqual(exprShape('sum(DISTINCT x)'), fn('sum', [col('x')], true));
    assert.deepEqual(exprShape('count(ALL x)'), fn('count', [col('x')]));
    for (const name of [
      'avg',
      'min',
      'max',
      'sum',
      'abs',
      'floor',
      'ceil',
      'ceiling',
      'lower',
      'upper',
      'length',
      'char_length',
    ]) {
      assert.deepEqual(exprShape(`${name}(x)`), fn(name, [col('x')]));
    }
    for (const name of ['coalesce', 'nullif', 'mod', 'round', 'substr']) {
      assert.deepEqual(exprShape(`${name}(x, 2)`), fn(name, [col('x'), int(2)]));
    }
    assert.deepEqual(exprShape('SUBSTRING(s FROM 2 FOR 3)'), fn('substring', [col('s'), int(2), int(3)]));
    assert.deepEqual(exprShape('substring(s from 2)'), fn('substring', [col('s'), int(2)]));
    assert.deepEqual(exprShape('substring(s, 2, 3)'), fn('substring', [col('s'), int(2), int(3)]));
    // EXTRACT(field FROM x): the field a word (quoted or not) or a string, lowercased, as in PostgreSQL
    const extract = (field: string, source: unknown): unknown => fn('extract', [str(field), source]);
    assert.deepEqual(exprShape('EXTRACT(year FROM ts)'), extract('year', col('ts')));
    assert.deepEqual(
      exprShape('extract("Second" from ts) + 1'),
      bin('+', extract('second', col('ts')), int(1)),
    );
    assert.deepEqual(
      exprShape("extract('EPOCH' FROM a - b)"),
      extract('epoch', bin('-', col('a'), col('b'))),
    );
    // [NOT] SIMILAR TO reads alike on both paths (the DML path refused it), at LIKE's precedence
    const similar = (negated: boolean, operand: unknown, pattern: unknown): unknown => ({
      kind: 'like',
      operand,
      pattern,
      negated,
      caseInsensitive: false,
      similar: true,
    });
    assert.deepEqual(
      exprShape("a SIMILAR TO 'x%' AND b"),
      bin('and', similar(false, col('a'), str('x%')), col('b')),
    );
    assert.deepEqual(
      exprShape("a || b NOT SIMILAR TO c || '%'"),
      similar(true, bin('||', col('a'), col('b')), bin('||', col('c'), str('%'))),
    );
    // x op ANY / SOME / ALL (array): the call the binder pairs with the comparison
    assert.deepEqual(exprShape('a = ANY (b)'), bin('=', col('a'), fn('[any]', [col('b')])));
    assert.deepEqual(
      exprShape('a < some(b) AND c'),
      bin('and', bin('<', col('a'), fn('[any]', [col('b')])), col('c')),
    );
    assert.deepEqual(
      exprShape('a <> ALL (b || c)'),
      bin('<>', col('a'), fn('[all]', [bin('||', col('b'), col('c'))])),
    );
    assert.deepEqual(exprShape('now()'), fn('now', []));
    assert.deepEqual(exprShape('current_date'), fn('current_date', []));
    assert.deepEqual(exprShape('CURRENT_TIMESTAMP'), fn('current_timestamp', []));
    assert.deepEqual(exprShape("string_agg(s, ',')"), fn('string_agg', [col('s'), str(',')]));
  });

  it('ISNULL / NOTNULL, LIKE … ESCAPE, COLLATE and OVERLAY … PLACING read alike on both paths', () => {
    const isNull = (operand: unknown, negated: boolean): unknown => ({ kind: 'isNull', operand, negated });
    assert.deepEqual(exprShape('a ISNULL'), isNull(col('a'), false));
    // at IS's precedence: looser than = and +, tighter than AND
    assert.deepEqual(exprShape('a = b NOTNULL'), isNull(bin('=', col('a'), col('b')), true));
    assert.deepEqual(
      exprShape('a + 1 notnull AND b isnull'),
      bin('and', isNull(bin('+', col('a'), int(1)), true), isNull(col('b'), false)),
    );
    const escaped = (pattern: unknown, escape: unknown): unknown => fn('like_escape', [pattern, escape]);
    assert.deepEqual(exprShape("a LIKE 'x!%' ESCAPE '!'"), like(false, false, escaped(str('x!%'), str('!'))));
    assert.deepEqual(
      exprShape("a NOT ILIKE 'x' || b ESCAPE '' AND c"),
      bin('and', like(true, true, escaped(bin('||', str('x'), col('b')), str(''))), col('c')),
    );
    assert.deepEqual(exprShape("a LIKE 'x' ESCAPE NULL"), like(false, false, escaped(str('x'), nul)));
    // ESCAPE takes any expression (PostgreSQL's `ESCAPE a_expr`), a bare name at the end included
    assert.deepEqual(exprShape('a LIKE b ESCAPE e'), like(false, false, escaped(col('b'), col('e'))));
    assert.deepEqual(
      exprShape("a NOT LIKE b ESCAPE e || '' AND c"),
      bin('and', like(true, false, escaped(col('b'), bin('||', col('e'), str('')))), col('c')),
    );
    assert.deepEqual(
      exprShape("a ILIKE b ESCAPE coalesce(e, '#')"),
      like(false, true, escaped(col('b'), fn('coalesce', [col('e'), str('#')]))),
    );
    // `::` after ISNULL / NOTNULL casts the test: (a ISNULL)::int, as in PostgreSQL
    const cast = (operand: unknown, name: string): unknown => ({ kind: 'cast', operand, type: type(name) });
    assert.deepEqual(exprShape('a ISNULL::int'), cast(isNull(col('a'), false), 'int'));
    assert.deepEqual(exprShape('a NOTNULL::int + 1'), bin('+', cast(isNull(col('a'), true), 'int'), int(1)));
    assert.deepEqual(
      exprShape('a isnull::int::text = b'),
      bin('=', cast(cast(isNull(col('a'), false), 'int'), 'text'), col('b')),
    );
    // COLLATE binds tighter than || and <: a call the binder checks (a type without a collation is refused)
    const collated = (operand: unknown): unknown => fn('[collate]', [operand]);
    assert.deepEqual(
      exprShape('a COLLATE "C" < b COLLATE "POSIX"'),
      bin('<', collated(col('a')), collated(col('b'))),
    );
    assert.deepEqual(exprShape('a || b COLLATE "default"'), bin('||', col('a'), collated(col('b'))));
    assert.deepEqual(
      exprShape("overlay(s PLACING 'ab' FROM 2 FOR 3)"),
      fn('overlay', [col('s'), str('ab'), int(2), int(3)]),
    );
    assert.deepEqual(
      exprShape('OVERLAY(s placing t from a + 1)'),
      fn('overlay', [col('s'), col('t'), bin('+', col('a'), int(1))]),
    );
  });

  it('parentheses only nest', () => {
    assert.deepEqual(exprShape('((a))'), col('a'));
    assert.deepEqual(exprShape('(a + b) * c'), bin('*', bin('+', col('a'), col('b')), col('c')));
    assert.deepEqual(exprShape('((a + b)) * (c)'), bin('*', bin('+', col('a'), col('b')), col('c')));
  });
});

// ── arrays ───────────────────────────────────────────────────────────────────────────────────────

describe('arrays', () => {
  const items = (sql: string): unknown =>
    (parseStatements(sql)[0] as Extract<Statement, { kind: 'select' }>).query.items.map((i) =>
      i.kind === 'expr' ? strip(i.expr) : i.kind,
    );
  /** The expression without positions, as a compact nested list. */
  const strip = (e: Expr): unknown =>
    e.kind === 'function'
      ? [e.name, ...e.args.map(strip)]
      : e.kind === 'literal'
        ? e.value
        : e.kind === 'column'
          ? e.name
          : e.kind === 'cast'
            ? ['cast', strip(e.operand), e.type.name, e.type.arrayDims ?? 0]
            : e.kind === 'binary'
              ? [e.op, strip(e.left), strip(e.right)]
              : e.kind;
  it('reads ARRAY[...], subscripts of columns and of parenthesised calls, ANY/ALL and array types', () => {
    assert.deepEqual(items("SELECT ARRAY[1, 2], a[1], (regexp_match(u, 'x'))[2], a[1][2] FROM t"), [
      ['[array]', 1, 2],
      ['[subscript]', 'a', 1],
      ['[subscript]', ['regexp_match', 'u', 'x'], 2],
      ['[subscript]', ['[subscript]', 'a', 1], 2],
    ]);
    assert.deepEqual(items('SELECT x = ANY (a), x <> ALL (a), a && b FROM t'), [
      ['=', 'x', ['[any]', 'a']],
      ['<>', 'x', ['[all]', 'a']],
      ['&&', 'a', 'b'],
    ]);
    assert.deepEqual(items("SELECT '{1}'::int[], CAST(a AS integer ARRAY), a::text[][] FROM t"), [
      ['cast', '{1}', 'int', 1],
      ['cast', 'a', 'integer', 1],
      ['cast', 'a', 'text', 2],
    ]);
  });
  it('reads array column types and ARRAY[...] / subscripts in INSERT, UPDATE and DELETE', () => {
    const create = parseStatements('CREATE TABLE t (a int[], b text ARRAY[3], c bigint[4])')[0];
    assert.ok(create?.kind === 'createTable');
    assert.deepEqual(
      create.columns.map((c) => [c.type.name, c.type.arrayDims]),
      [
        ['int', 1],
        ['text', 1],
        ['bigint', 1],
      ],
    );
    const del = parseStatements('DELETE FROM t WHERE a[1] = 2')[0];
    assert.ok(del?.kind === 'delete' && del.where !== undefined);
    assert.deepEqual(strip(del.where), ['=', ['[subscript]', 'a', 1], 2]);
    const insert = parseStatements('INSERT INTO t VALUES (ARRAY[1, NULL])')[0];
    assert.ok(insert?.kind === 'insert');
    const first = insert.rows[0]?.[0];
    assert.ok(first !== undefined && first.kind !== 'default');
    assert.deepEqual(strip(first), ['[array]', 1, null]);
  });
});
