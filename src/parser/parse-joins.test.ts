// Parser unit tests: FROM clauses and join trees: every join kind, ON/USING/NATURAL, comma joins,
// parentheses, aliases, and the errors of malformed ones.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import { type SourcePosition } from '../common/errors.ts';
import { DEFAULT_SQL_LIMITS, type SqlLimits } from '../common/limits.ts';
import type { FromItem, JoinRef } from './ast.ts';
import {
  one,
  stmt,
  node,
  select,
  shape,
  throwsSluice,
  col,
  int,
  str,
  bool,
  bin,
  fn,
} from '../../test/support/parse-helpers.ts';

// ── joins ────────────────────────────────────────────────────────────────────────────────────────

const tbl = (name: string, alias?: string): unknown =>
  alias === undefined ? { kind: 'table', name } : { kind: 'table', name, alias };
type JoinExtra = { on?: unknown; using?: string[]; natural?: boolean };
const join = (joinKind: string, left: unknown, right: unknown, extra: JoinExtra = {}): unknown => ({
  kind: 'join',
  joinKind,
  left,
  right,
  ...(extra.on !== undefined ? { on: extra.on } : {}),
  ...(extra.using !== undefined ? { using: extra.using.map((name) => ({ name })) } : {}),
  natural: extra.natural ?? false,
});
const cross = (left: unknown, right: unknown): unknown => join('cross', left, right);
const eqCols = (l: [string, string], r: [string, string]): unknown =>
  bin('=', col(l[1], l[0]), col(r[1], r[0]));

function fromOf(sql: string, limits?: SqlLimits): FromItem {
  const statements = parseStatements(sql, limits);
  const first = statements[0];
  assert.ok(statements.length === 1 && first?.kind === 'select', `expected one SELECT in ${sql}`);
  const from = first.query.from;
  assert.ok(from !== undefined, `no FROM in ${sql}`);
  return from;
}
function joinOf(item: FromItem | undefined): JoinRef {
  assert.equal(item?.kind, 'join');
  return item as JoinRef;
}

describe('joins', () => {
  const shapes: [string, unknown][] = [
    [
      'SELECT * FROM a JOIN b ON a.x = b.x',
      join('inner', tbl('a'), tbl('b'), { on: eqCols(['a', 'x'], ['b', 'x']) }),
    ],
    ['SELECT * FROM a INNER JOIN b ON true', join('inner', tbl('a'), tbl('b'), { on: bool(true) })],
    ['SELECT * FROM a LEFT JOIN b ON p', join('left', tbl('a'), tbl('b'), { on: col('p') })],
    ['SELECT * FROM a LEFT OUTER JOIN b ON p', join('left', tbl('a'), tbl('b'), { on: col('p') })],
    ['SELECT * FROM a RIGHT JOIN b ON p', join('right', tbl('a'), tbl('b'), { on: col('p') })],
    ['SELECT * FROM a right outer join b ON p', join('right', tbl('a'), tbl('b'), { on: col('p') })],
    ['SELECT * FROM a FULL JOIN b ON p', join('full', tbl('a'), tbl('b'), { on: col('p') })],
    ['SELECT * FROM a FULL OUTER JOIN b ON p', join('full', tbl('a'), tbl('b'), { on: col('p') })],
    [
      'SELECT * FROM a JOIN b ON a.x IS NOT DISTINCT FROM b.x AND a.y IS DISTINCT FROM b.y',
      join('inner', tbl('a'), tbl('b'), {
        on: bin(
          'and',
          bin('is not distinct from', col('x', 'a'), col('x', 'b')),
          bin('is distinct from', col('y', 'a'), col('y', 'b')),
        ),
      }),
    ],
    ['SELECT * FROM a CROSS JOIN b', cross(tbl('a'), tbl('b'))],
    ['SELECT * FROM a, b', cross(tbl('a'), tbl('b'))],
    ['SELECT * FROM a, b, c', cross(cross(tbl('a'), tbl('b')), tbl('c'))],
    ['SELECT * FROM a JOIN b USING (x)', join('inner', tbl('a'), tbl('b'), { using: ['x'] })],
    [
      'SELECT * FROM a LEFT JOIN b USING (x, "Y", Z)',
      join('left', tbl('a'), tbl('b'), { using: ['x', 'Y', 'z'] }),
    ],
    ['SELECT * FROM a FULL OUTER JOIN b USING (k)', join('full', tbl('a'), tbl('b'), { using: ['k'] })],
    ['SELECT * FROM a NATURAL JOIN b', join('inner', tbl('a'), tbl('b'), { natural: true })],
    ['SELECT * FROM a NATURAL INNER JOIN b', join('inner', tbl('a'), tbl('b'), { natural: true })],
    ['SELECT * FROM a NATURAL LEFT JOIN b', join('left', tbl('a'), tbl('b'), { natural: true })],
    ['SELECT * FROM a natural left outer join b', join('left', tbl('a'), tbl('b'), { natural: true })],
    ['SELECT * FROM a NATURAL RIGHT JOIN b', join('right', tbl('a'), tbl('b'), { natural: true })],
    ['SELECT * FROM a NATURAL FULL OUTER JOIN b', join('full', tbl('a'), tbl('b'), { natural: true })],
    // Aliases with and without AS on every relation; names fold unless quoted.
    [
      'SELECT * FROM Orders AS o JOIN "Items" i ON o.id = i.order_id',
      join('inner', tbl('orders', 'o'), tbl('Items', 'i'), { on: eqCols(['o', 'id'], ['i', 'order_id']) }),
    ],
    ['SELECT * FROM a x CROSS JOIN b AS "Y"', cross(tbl('a', 'x'), tbl('b', 'Y'))],
    ['SELECT * FROM a x NATURAL JOIN b y', join('inner', tbl('a', 'x'), tbl('b', 'y'), { natural: true })],
    ['SELECT * FROM a AS x, b y, c', cross(cross(tbl('a', 'x'), tbl('b', 'y')), tbl('c'))],
    // Joins nest to the left.
    [
      'SELECT * FROM a JOIN b ON p JOIN c ON q',
      join('inner', join('inner', tbl('a'), tbl('b'), { on: col('p') }), tbl('c'), { on: col('q') }),
    ],
    [
      'SELECT * FROM a LEFT JOIN b USING (k) CROSS JOIN c NATURAL FULL JOIN d',
      join('full', cross(join('left', tbl('a'), tbl('b'), { using: ['k'] }), tbl('c')), tbl('d'), {
        natural: true,
      }),
    ],
    // Comma binds looser than JOIN.
    ['SELECT * FROM a, b JOIN c ON p', cross(tbl('a'), join('inner', tbl('b'), tbl('c'), { on: col('p') }))],
    ['SELECT * FROM a JOIN b ON p, c', cross(join('inner', tbl('a'), tbl('b'), { on: col('p') }), tbl('c'))],
    [
      'SELECT * FROM a JOIN b ON p = 1, c x JOIN d ON q, e',
      cross(
        cross(
          join('inner', tbl('a'), tbl('b'), { on: bin('=', col('p'), int(1)) }),
          join('inner', tbl('c', 'x'), tbl('d'), { on: col('q') }),
        ),
        tbl('e'),
      ),
    ],
    [
      'SELECT * FROM a, b NATURAL JOIN c',
      cross(tbl('a'), join('inner', tbl('b'), tbl('c'), { natural: true })),
    ],
    ['SELECT * FROM a, b CROSS JOIN c', cross(tbl('a'), cross(tbl('b'), tbl('c')))],
    // Nested join syntax, read as PostgreSQL does: the inner ON qualifies the nearest pair.
    [
      'SELECT * FROM a JOIN b JOIN c ON p ON q',
      join('inner', tbl('a'), join('inner', tbl('b'), tbl('c'), { on: col('p') }), { on: col('q') }),
    ],
    [
      'SELECT * FROM a LEFT JOIN b FULL JOIN c USING (k) ON q RIGHT JOIN d ON r',
      join(
        'right',
        join('left', tbl('a'), join('full', tbl('b'), tbl('c'), { using: ['k'] }), { on: col('q') }),
        tbl('d'),
        { on: col('r') },
      ),
    ],
    [
      'SELECT * FROM a JOIN b JOIN c JOIN d ON p ON q ON r',
      join(
        'inner',
        tbl('a'),
        join('inner', tbl('b'), join('inner', tbl('c'), tbl('d'), { on: col('p') }), { on: col('q') }),
        { on: col('r') },
      ),
    ],
    [
      'SELECT * FROM a JOIN b JOIN c USING (k) USING (j)',
      join('inner', tbl('a'), join('inner', tbl('b'), tbl('c'), { using: ['k'] }), { using: ['j'] }),
    ],
    [
      'SELECT * FROM a JOIN b LEFT JOIN c JOIN d USING (x) USING (y, z) USING (w)',
      join(
        'inner',
        tbl('a'),
        join('left', tbl('b'), join('inner', tbl('c'), tbl('d'), { using: ['x'] }), { using: ['y', 'z'] }),
        { using: ['w'] },
      ),
    ],
    [
      'SELECT * FROM a JOIN b CROSS JOIN c ON p',
      join('inner', tbl('a'), cross(tbl('b'), tbl('c')), { on: col('p') }),
    ],
    [
      'SELECT * FROM a JOIN b NATURAL JOIN c USING (k)',
      join('inner', tbl('a'), join('inner', tbl('b'), tbl('c'), { natural: true }), { using: ['k'] }),
    ],
    // Parentheses nest as written.
    [
      'SELECT * FROM (a JOIN b ON p) JOIN c ON q',
      join('inner', join('inner', tbl('a'), tbl('b'), { on: col('p') }), tbl('c'), { on: col('q') }),
    ],
    [
      'SELECT * FROM a JOIN (b JOIN c ON p) ON q',
      join('inner', tbl('a'), join('inner', tbl('b'), tbl('c'), { on: col('p') }), { on: col('q') }),
    ],
    [
      'SELECT * FROM a LEFT JOIN (b CROSS JOIN (c NATURAL JOIN d)) USING (k)',
      join('left', tbl('a'), cross(tbl('b'), join('inner', tbl('c'), tbl('d'), { natural: true })), {
        using: ['k'],
      }),
    ],
    ['SELECT * FROM ((a CROSS JOIN b))', cross(tbl('a'), tbl('b'))],
    ['SELECT * FROM a, (b CROSS JOIN c)', cross(tbl('a'), cross(tbl('b'), tbl('c')))],
    // The condition is a whole expression, with its precedence.
    [
      'SELECT * FROM a JOIN b ON a.x = b.x AND (b.y > 1 OR NOT c)',
      join('inner', tbl('a'), tbl('b'), {
        on: bin(
          'and',
          eqCols(['a', 'x'], ['b', 'x']),
          bin('or', bin('>', col('y', 'b'), int(1)), { kind: 'unary', op: 'not', operand: col('c') }),
        ),
      }),
    ],
    [
      "SELECT * FROM a JOIN b ON left(a.s, 1) = 'x' LEFT JOIN c ON right(c.s, 1) = b.s",
      join(
        'left',
        join('inner', tbl('a'), tbl('b'), { on: bin('=', fn('left', [col('s', 'a'), int(1)]), str('x')) }),
        tbl('c'),
        { on: bin('=', fn('right', [col('s', 'c'), int(1)]), col('s', 'b')) },
      ),
    ],
  ];
  for (const [sql, expected] of shapes) {
    it(sql, () => assert.deepEqual(shape(fromOf(sql)), expected));
  }

  it('the join keyword (its first word) and the comma carry the positions', () => {
    const sql = [
      'SELECT *',
      'FROM a',
      '  NATURAL LEFT JOIN b, c',
      '  CROSS JOIN d',
      '  JOIN e ON e.k = d.k',
      '  RIGHT OUTER JOIN f USING (k)',
    ].join('\n');
    // The comma binds loosest: natural(a, b) × right(inner(c × d, e), f).
    const top = joinOf(fromOf(sql));
    assert.equal(top.joinKind, 'cross');
    assert.deepEqual(top.pos, { line: 3, column: 22 }); // the comma
    const natural = joinOf(top.left);
    assert.deepEqual([natural.joinKind, natural.natural], ['left', true]);
    assert.deepEqual(natural.pos, { line: 3, column: 3 }); // NATURAL
    assert.deepEqual(natural.left.pos, { line: 2, column: 6 });
    assert.deepEqual(natural.right.pos, { line: 3, column: 21 });
    const right = joinOf(top.right);
    assert.equal(right.joinKind, 'right');
    assert.deepEqual(right.pos, { line: 6, column: 3 }); // RIGHT
    assert.deepEqual(right.right.pos, { line: 6, column: 20 });
    assert.deepEqual(right.using, [{ name: 'k', pos: { line: 6, column: 29 } }]);
    const inner = joinOf(right.left);
    assert.deepEqual(inner.pos, { line: 5, column: 3 }); // JOIN
    assert.deepEqual(inner.right.pos, { line: 5, column: 8 });
    const on = node(inner.on, 'binary');
    assert.deepEqual(on.left.pos, { line: 5, column: 13 });
    assert.deepEqual(on.right.pos, { line: 5, column: 19 });
    const crossJoin = joinOf(inner.left);
    assert.equal(crossJoin.joinKind, 'cross');
    assert.deepEqual(crossJoin.pos, { line: 4, column: 3 }); // CROSS
    assert.deepEqual(crossJoin.left.pos, { line: 3, column: 24 });
    assert.deepEqual(crossJoin.right.pos, { line: 4, column: 14 });
  });

  it('positions inside parentheses and of aliased relations', () => {
    const top = joinOf(fromOf('SELECT 1 FROM (a AS x INNER JOIN b y ON x.k = y.k) FULL JOIN c ON true'));
    assert.deepEqual(top.pos, { line: 1, column: 52 });
    const inner = joinOf(top.left);
    assert.deepEqual(inner.pos, { line: 1, column: 23 });
    assert.deepEqual(inner.left.pos, { line: 1, column: 16 });
    assert.deepEqual(inner.right.pos, { line: 1, column: 34 });
    assert.deepEqual(node(inner.on, 'binary').left.pos, { line: 1, column: 41 });
  });

  it('keeps the rest of the statement around the joins', () => {
    const q = select(
      'SELECT a.g, count(*) FROM a JOIN b ON a.k = b.k, c WHERE c.v > 1 GROUP BY a.g HAVING count(*) > 1 ORDER BY 1 LIMIT 5',
    );
    assert.deepEqual(
      shape(q.from),
      cross(join('inner', tbl('a'), tbl('b'), { on: eqCols(['a', 'k'], ['b', 'k']) }), tbl('c')),
    );
    assert.deepEqual(shape(q.where), bin('>', col('v', 'c'), int(1)));
    assert.equal(q.groupBy.length, 1);
    assert.ok(q.having !== undefined && q.limit !== undefined);
    const view = stmt(one('CREATE MATERIALIZED VIEW v AS SELECT * FROM a NATURAL JOIN b'), 'createView');
    assert.deepEqual(shape(view.query.from), join('inner', tbl('a'), tbl('b'), { natural: true }));
    assert.equal(view.queryText, 'SELECT * FROM a NATURAL JOIN b');
    const parenthesised = select('(SELECT * FROM a JOIN b ON p, c)');
    assert.deepEqual(
      shape(parenthesised.from),
      cross(join('inner', tbl('a'), tbl('b'), { on: col('p') }), tbl('c')),
    );
  });

  it('a long IN list and SUBSTRING(… FROM … FOR …) in a condition', () => {
    const list = Array.from({ length: 20 }, (_, i) => i).join(', ');
    const sql = `SELECT * FROM a JOIN b ON a.x IN (${list}) AND substring(b.s FROM 1 FOR 2) = 'ab', c`;
    const on = joinOf(joinOf(fromOf(sql)).left).on;
    assert.deepEqual(
      shape(on),
      bin(
        'and',
        {
          kind: 'inList',
          operand: col('x', 'a'),
          list: Array.from({ length: 20 }, (_, i) => int(i)),
          negated: false,
        },
        bin('=', fn('substring', [col('s', 'b'), int(1), int(2)]), str('ab')),
      ),
    );
  });

  const syntaxErrors: [string, string, SourcePosition][] = [
    ['SELECT * FROM a JOIN b', 'syntax error at end of input', { line: 1, column: 23 }],
    ['SELECT * FROM a JOIN b WHERE x', 'syntax error at or near "WHERE"', { line: 1, column: 24 }],
    ['SELECT * FROM a LEFT JOIN b, c', 'syntax error at or near ","', { line: 1, column: 28 }],
    // The inner ON qualifies `b JOIN c`; the outer join still needs its own.
    ['SELECT * FROM a INNER JOIN b JOIN c ON p', 'syntax error at end of input', { line: 1, column: 41 }],
    [
      'SELECT * FROM a JOIN b JOIN c ON p WHERE x',
      'syntax error at or near "WHERE"',
      { line: 1, column: 36 },
    ],
    ['SELECT * FROM a JOIN b JOIN c ON p ON q ON r', 'syntax error at or near "ON"', { line: 1, column: 41 }],
    ['SELECT * FROM a NATURAL JOIN b ON p', 'syntax error at or near "ON"', { line: 1, column: 32 }],
    ['SELECT * FROM a NATURAL JOIN b USING (k)', 'syntax error at or near "USING"', { line: 1, column: 32 }],
    ['SELECT * FROM a CROSS JOIN b ON p', 'syntax error at or near "ON"', { line: 1, column: 30 }],
    ['SELECT * FROM a CROSS JOIN b USING (k)', 'syntax error at or near "USING"', { line: 1, column: 30 }],
    ['SELECT * FROM a JOIN b ON', 'syntax error at end of input', { line: 1, column: 26 }],
    ['SELECT * FROM a JOIN b ON x =\nWHERE y', 'syntax error at or near "WHERE"', { line: 2, column: 1 }],
    ['SELECT * FROM a JOIN b ON x y', 'syntax error at or near "y"', { line: 1, column: 29 }],
    ['SELECT * FROM a JOIN b ON p USING (k)', 'syntax error at or near "USING"', { line: 1, column: 29 }],
    ['SELECT * FROM a JOIN b ON p ON q', 'syntax error at or near "ON"', { line: 1, column: 29 }],
    [
      'SELECT * FROM a JOIN b USING (k) USING (j)',
      'syntax error at or near "USING"',
      { line: 1, column: 34 },
    ],
    [
      'SELECT * FROM a JOIN b JOIN c USING (k) USING (j) USING (i)',
      'syntax error at or near "USING"',
      { line: 1, column: 51 },
    ],
    ['SELECT * FROM a ON p', 'syntax error at or near "ON"', { line: 1, column: 17 }],
    ['SELECT * FROM a x, b ON (p)', 'syntax error at or near "ON"', { line: 1, column: 22 }],
    ['SELECT * FROM a JOIN b USING ()', 'syntax error at or near ")"', { line: 1, column: 31 }],
    ['SELECT * FROM a JOIN b USING (k', 'syntax error at end of input', { line: 1, column: 32 }],
    ['SELECT * FROM a JOIN b ON p,', 'syntax error at end of input', { line: 1, column: 29 }],
    ['SELECT * FROM a JOIN b ON p, WHERE x', 'syntax error at or near "WHERE"', { line: 1, column: 30 }],
    ['SELECT * FROM a JOIN b ON p, c JOIN d ON = 1', 'syntax error at or near "="', { line: 1, column: 42 }],
    ['SELECT * FROM (a)', 'syntax error at or near ")"', { line: 1, column: 17 }],
    ['SELECT * FROM (a, b)', 'syntax error at or near ","', { line: 1, column: 17 }],
    ['SELECT * FROM (a JOIN b ON p, c)', 'syntax error at or near ","', { line: 1, column: 29 }],
    ['SELECT * FROM a AS left JOIN b ON p', 'syntax error at or near "left"', { line: 1, column: 20 }],
    ['SELECT * FROM a NATURAL CROSS JOIN b', 'syntax error at or near "NATURAL"', { line: 1, column: 17 }],
  ];
  for (const [sql, message, position] of syntaxErrors) {
    it(`syntax error: ${sql}`, () => throwsSluice(sql, 'SYNTAX_ERROR', message, position));
  }

  const unsupported: [string, string, SourcePosition][] = [
    ['SELECT * FROM a JOIN b ON a.x IN (SELECT 1)', 'subquery is not supported', { line: 1, column: 35 }],
    ['SELECT * FROM a JOIN b ON EXISTS (SELECT 1), c', 'subquery is not supported', { line: 1, column: 35 }],
    ['SELECT * FROM a, LATERAL (SELECT 1) s', 'LATERAL is not supported', { line: 1, column: 18 }],
    ['SELECT * FROM a JOIN LATERAL b ON true', 'LATERAL is not supported', { line: 1, column: 22 }],
    ['SELECT * FROM a CROSS JOIN json_each(x)', 'function in FROM is not supported', { line: 1, column: 28 }],
    [
      'SELECT * FROM (a JOIN b ON p) x',
      'alias for a join in parentheses is not supported',
      { line: 1, column: 31 },
    ],
    // The first problem in the text is the one reported.
    [
      'SELECT * FROM a JOIN LATERAL b ON true JOIN c ON = 1',
      'LATERAL is not supported',
      { line: 1, column: 22 },
    ],
  ];
  for (const [sql, message, position] of unsupported) {
    it(`not supported: ${sql}`, () => throwsSluice(sql, 'NOT_SUPPORTED', message, position));
  }

  it('a condition is held to the expression limits', () => {
    const deep = `SELECT * FROM a JOIN b ON ${Array(30).fill('x').join(' + ')} = 1`;
    throwsSluice(deep, 'NESTING_TOO_DEEP', 'expression is too deep (more than 10 levels)', undefined, {
      maxExpressionDepth: 10,
    });
    const wide = `SELECT * FROM a, b JOIN c ON x IN (${Array(30).fill('1').join(', ')})`;
    throwsSluice(wide, 'TOO_MANY_ITEMS', 'IN list has more than 20 items', undefined, { maxListItems: 20 });
  });

  it('1,000 relations in a FROM list, and a chain of 1,000 joins, parse without recursion', () => {
    // Past the default FROM limit (64 relations): what is shown is that no pass recurses on it.
    const wide: SqlLimits = { ...DEFAULT_SQL_LIMITS, maxFromRelations: 1_000_000 };
    const names = Array.from({ length: 1000 }, (_, i) => `t${i}`);
    let item: FromItem = fromOf(`SELECT * FROM ${names.join(', ')}`, wide);
    for (let i = 999; i > 0; i--) {
      const j = joinOf(item);
      assert.equal(j.joinKind, 'cross');
      assert.deepEqual(shape(j.right), tbl(names[i]!));
      item = j.left;
    }
    assert.deepEqual(shape(item), tbl('t0'));
    const chain = names
      .slice(1)
      .map((n, i) => ` ${i % 2 === 0 ? 'JOIN' : 'LEFT JOIN'} ${n} ON ${n}.k = t${i}.k`);
    item = fromOf(`SELECT * FROM t0${chain.join('')}`, wide);
    for (let i = 999; i > 0; i--) {
      const j = joinOf(item);
      assert.equal(j.joinKind, i % 2 === 1 ? 'inner' : 'left');
      assert.deepEqual(shape(j.on), eqCols([names[i]!, 'k'], [names[i - 1]!, 'k']));
      item = j.left;
    }
    const mixed = names.slice(1).map((n) => (Number(n.slice(1)) % 2 === 0 ? `, ${n}` : ` NATURAL JOIN ${n}`));
    assert.equal(joinOf(fromOf(`SELECT * FROM t0${mixed.join('')}`, wide)).joinKind, 'cross');
  });

  it('a FROM of more than maxFromRelations relations is refused on its tokens, at the first one too many', () => {
    const names = Array.from({ length: 65 }, (_, i) => `t${i}`);
    assert.equal(joinOf(fromOf(`SELECT * FROM ${names.slice(0, 64).join(', ')}`)).joinKind, 'cross');
    const list = `SELECT * FROM ${names.join(', ')}`;
    throwsSluice(list, 'TOO_MANY_ITEMS', 'FROM has more than 64 relations', {
      line: 1,
      column: list.indexOf('t64') + 1,
    });
    const chain = `SELECT 1 FROM t0${names
      .slice(1)
      .map((n, i) => ` JOIN ${n} ON ${n}.k = t${i}.k`)
      .join('')}`;
    throwsSluice(chain, 'TOO_MANY_ITEMS', 'FROM has more than 64 relations', {
      line: 1,
      column: chain.indexOf(' t64 ') + 2,
    });
    // Commas inside a join condition and the FROM of a later clause are not relations.
    const withCalls = `SELECT 1 FROM t0 JOIN t1 ON coalesce(${names.join(', ')}) = 1 WHERE x IN (${names.join(', ')})`;
    assert.equal(joinOf(fromOf(withCalls)).joinKind, 'inner');
  });

  it('a FROM list too long for the token limit is refused before node-sql-parser runs', () => {
    const names = Array.from({ length: 7000 }, (_, i) => `t${i}`);
    throwsSluice(
      `SELECT * FROM ${names.join(', ')}`,
      'STATEMENT_TOO_LARGE',
      `query is too large (more than ${DEFAULT_SQL_LIMITS.maxSelectTokens} tokens to parse)`,
      undefined,
      { maxFromRelations: 1_000_000 },
    );
  });
});
