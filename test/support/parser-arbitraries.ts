// Generators for the parser's property tests (fast-check): mutated SQL, random expressions, FROM
// trees and SELECTs, each printed with random spacing, parentheses and case, with the shape the parser
// must give back; and the checks that compare a parse with that shape (positions included).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SourcePosition } from '../../src/common/errors.ts';
import type { BinaryOp, Statement, TypeName } from '../../src/parser/ast.ts';
import { one, shape } from './parse-helpers.ts';
const SEEDS = [
  'SELECT a, b + 1 AS c, count(*) FROM t WHERE a > 1 AND b IS NOT NULL GROUP BY a, b HAVING count(*) > 2 ORDER BY a DESC NULLS LAST LIMIT 10 OFFSET 2',
  'CREATE MATERIALIZED VIEW v AS SELECT x, sum(y) FROM t WHERE z BETWEEN 1 AND 10 OR z IN (1, 2, 3) GROUP BY x',
  'CREATE TABLE t (a int PRIMARY KEY, b varchar(20) NOT NULL, c numeric(10,2))',
  "INSERT INTO t VALUES (1, 'a''b', -3.5e2), (2, NULL, 9223372036854775807)",
  "UPDATE t SET a = CASE WHEN b LIKE 'x%' THEN 1 ELSE 2 END WHERE NOT (a = 1 OR b::int < 3)",
  'SELECT substring(s FROM 2 FOR 3), CAST(a AS double precision), coalesce(a, b) FROM t',
  'SELECT DISTINCT t.*, "Q".x FROM t AS "Q" WHERE x ILIKE \'%a%\'; DROP VIEW IF EXISTS v; SHOW TABLES',
];
const FRAGMENTS = [
  'select',
  'from',
  'where',
  ',',
  '(',
  ')',
  'and',
  'or',
  'not',
  '=',
  '+',
  '-',
  '*',
  "'",
  '"',
  'a',
  '1',
  '::',
  'int',
  'case',
  'when',
  'end',
  'between',
  'in',
  'is',
  'null',
  ';',
  '.',
  'count',
  'distinct',
  'join',
  '--',
  '/*',
  '*/',
  'limit',
  'group by',
  'as',
  'true',
  '||',
  'like',
  'over',
  'all',
  'substring',
  'for',
  '[',
  '@',
  '$',
];

export const mutatedSql = fc
  .tuple(
    fc.constantFrom(...SEEDS),
    fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(...FRAGMENTS)), { minLength: 1, maxLength: 4 }),
  )
  .map(([sql, mutations]) => {
    let out = sql;
    for (const [at, how, fragment] of mutations) {
      const i = at % (out.length + 1);
      if (how === 0) out = `${out.slice(0, i)} ${fragment} ${out.slice(i)}`;
      else if (how === 1) out = out.slice(0, i) + out.slice(i + 1 + (at % 5));
      else if (how === 2) out = out.slice(0, i) + fragment + out.slice(i);
      else out = out.slice(0, i) + out.slice(i).replace(/\S+/, fragment);
    }
    return out;
  });

// Random expressions, printed with PostgreSQL's precedence (minimal parentheses plus random extra
// ones, random case and quoting), must parse back to the same tree through both the SELECT adapter
// and the DML grammar, with identical positions.
const NAMES = ['a', 'b', 'price', 'qty', 'x1', 'total_amount'];
const TYPES: readonly [string, Omit<TypeName, 'pos'>][] = [
  ['int', { name: 'int', params: [] }],
  ['BIGINT', { name: 'bigint', params: [] }],
  ['text', { name: 'text', params: [] }],
  ['double precision', { name: 'double precision', params: [] }],
  ['varchar(20)', { name: 'varchar', params: [20] }],
  ['numeric(10, 2)', { name: 'numeric', params: [10, 2] }],
  ['timestamp without time zone', { name: 'timestamp without time zone', params: [] }],
  ['boolean', { name: 'boolean', params: [] }],
];
const PREC: Readonly<Record<string, number>> = {
  or: 1,
  and: 2,
  '=': 5,
  '<>': 5,
  '<': 5,
  '<=': 5,
  '>': 5,
  '>=': 5,
  '||': 7,
  '+': 8,
  '-': 8,
  '*': 9,
  '/': 9,
  '%': 9,
};
export type Bare = { readonly kind: string; readonly [key: string]: unknown };
const P0 = { line: 0, column: 0 };

export const exprArb = fc.letrec<{ expr: Bare; leaf: Bare }>((tie) => ({
  leaf: fc.oneof(
    fc.nat(100000).map((v) => ({ kind: 'literal', value: v, literalType: 'integer' })),
    fc
      .bigInt({ min: 2n ** 53n, max: 2n ** 70n })
      .map((v) => ({ kind: 'literal', value: v, literalType: 'integer' })),
    fc
      .tuple(fc.nat(1000), fc.integer({ min: 1, max: 99 }))
      .map(([i, f]) => ({ kind: 'literal', value: i + f / 100, literalType: 'numeric' })),
    fc.string({ maxLength: 6 }).map((v) => ({ kind: 'literal', value: v, literalType: 'string' })),
    fc.boolean().map((v) => ({ kind: 'literal', value: v, literalType: 'boolean' })),
    fc.constant({ kind: 'literal', value: null, literalType: 'null' }),
    fc
      .tuple(fc.constantFrom(...NAMES), fc.option(fc.constantFrom('t', 'u'), { nil: undefined }))
      .map(([name, table]) =>
        table === undefined ? { kind: 'column', name } : { kind: 'column', table, name },
      ),
    fc.constant({ kind: 'function', name: 'current_date', args: [], distinct: false, star: false }),
    fc.constant({ kind: 'function', name: 'count', args: [], distinct: false, star: true }),
  ),
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    fc
      .tuple(fc.constantFrom(...(Object.keys(PREC) as BinaryOp[])), tie('expr'), tie('expr'))
      .map(([op, left, right]) => ({ kind: 'binary', op, left, right })),
    fc.tuple(fc.constantFrom('not', '-', '+'), tie('expr')).map(([op, operand]) => ({
      kind: 'unary',
      // Unary minus on a numeric literal folds into the literal: generate + there instead.
      op:
        op === '-' &&
        operand.kind === 'literal' &&
        typeof operand['value'] !== 'string' &&
        operand['literalType'] !== 'boolean' &&
        operand['literalType'] !== 'null'
          ? '+'
          : op,
      operand,
    })),
    fc.tuple(tie('expr'), fc.boolean()).map(([operand, negated]) => ({ kind: 'isNull', operand, negated })),
    fc
      .tuple(tie('expr'), tie('expr'), tie('expr'), fc.boolean())
      .map(([operand, low, high, negated]) => ({ kind: 'between', operand, low, high, negated })),
    fc
      .tuple(tie('expr'), fc.array(tie('expr'), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([operand, list, negated]) => ({ kind: 'inList', operand, list, negated })),
    fc
      .tuple(tie('expr'), tie('expr'), fc.boolean(), fc.boolean())
      .map(([operand, pattern, negated, caseInsensitive]) => ({
        kind: 'like',
        operand,
        pattern,
        negated,
        caseInsensitive,
      })),
    fc
      .tuple(
        // node-sql-parser accepts only simple operands in `CASE x WHEN`.
        fc.option(tie('leaf'), { nil: undefined }),
        fc.array(fc.tuple(tie('expr'), tie('expr')), { minLength: 1, maxLength: 2 }),
        fc.option(tie('expr'), { nil: undefined }),
      )
      .map(([operand, whens, otherwise]) => ({
        kind: 'case',
        ...(operand !== undefined ? { operand } : {}),
        whens: whens.map(([when, then]) => ({ when, then })),
        ...(otherwise !== undefined ? { else: otherwise } : {}),
      })),
    fc
      .tuple(tie('expr'), fc.constantFrom(...TYPES))
      .map(([operand, [, t]]) => ({ kind: 'cast', operand, type: t })),
    fc
      .tuple(
        fc.constantFrom('coalesce', 'nullif', 'round', 'lower', 'sum', 'max', 'substring'),
        fc.array(tie('expr'), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
      )
      .map(([name, args, distinct]) => ({
        kind: 'function',
        name,
        args,
        distinct: distinct && (name === 'sum' || name === 'max'),
        star: false,
      })),
  ),
}));

/** Prints `e` so that PostgreSQL's grammar reads it back as `e`; `rand` picks spelling variants. */
export function printExpr(e: Bare, rand: () => number): string {
  const pick = <T>(...options: T[]): T => options[Math.floor(rand() * options.length)]!;
  const kw = (word: string): string => pick(word.toUpperCase(), word.toLowerCase());
  const ident = (name: string): string => pick(name, name.toUpperCase(), `"${name}"`);
  const typeText = (t: Omit<TypeName, 'pos'>): string => TYPES.find(([, x]) => x === t)![0];
  // PostgreSQL's comparison, IS and LIKE/IN/BETWEEN levels do not associate, so same-level
  // operands get parentheses (min is one higher). Beyond PostgreSQL's needs, parentheses also go
  // where node-sql-parser rejects valid SQL without them (`gap` kinds, IN items and ELSE with
  // AND/OR, a binary LIKE pattern); the parser tests list these limitations.
  const sub = (x: unknown, min: number, gap: readonly string[] = [], extra = 0.1): string => {
    const node = x as Bare;
    const [text, prec] = raw(node);
    const wrap = prec < min || gap.includes(node.kind) || rand() < extra;
    return wrap ? pick(`(${text})`, `( ${text} )`, `(\n${text})`) : text;
  };
  let castOperand = false;
  const withCastOperand = (print: () => string): string => {
    castOperand = true;
    try {
      return print();
    } finally {
      castOperand = false;
    }
  };
  const raw = (n: Bare): [string, number] => {
    const outerCastOperand = castOperand;
    castOperand = false;
    try {
      return rawNode(n, outerCastOperand);
    } finally {
      castOperand = outerCastOperand;
    }
  };
  const rawNode = (n: Bare, castOperand: boolean): [string, number] => {
    switch (n.kind) {
      case 'literal': {
        const v = n['value'];
        if (v === null) return [kw('null'), 100];
        if (typeof v === 'boolean') return [kw(String(v)), 100];
        if (typeof v === 'string') return [`'${v.replace(/'/g, "''")}'`, 100];
        return [String(v), 100];
      }
      case 'column':
        return [
          (n['table'] !== undefined ? `${ident(String(n['table']))}.` : '') + ident(String(n['name'])),
          100,
        ];
      case 'binary': {
        const op = String(n['op']);
        const p = PREC[op]!;
        const opText = op === '<>' ? pick('<>', '!=') : op === 'and' || op === 'or' ? kw(op) : op;
        const comparison = p === 5;
        const gap = comparison ? ['like', 'between', 'inList', 'isNull'] : [];
        return [`${sub(n['left'], comparison ? 6 : p, gap)} ${opText} ${sub(n['right'], p + 1, gap)}`, p];
      }
      case 'unary':
        return n['op'] === 'not'
          ? [`${kw('not')} ${sub(n['operand'], 3)}`, 3]
          : [`${String(n['op'])} ${sub(n['operand'], 11)}`, 11];
      case 'isNull':
        return [
          `${sub(n['operand'], 6, ['like', 'between', 'inList'])} ${kw('is')} ${n['negated'] === true ? `${kw('not')} ` : ''}${kw('null')}`,
          4,
        ];
      case 'between':
        return [
          `${sub(n['operand'], 7)} ${n['negated'] === true ? `${kw('not')} ` : ''}${kw('between')} ${sub(n['low'], 7)} ${kw('and')} ${sub(n['high'], 7)}`,
          6,
        ];
      case 'inList':
        return [
          `${sub(n['operand'], 7)} ${n['negated'] === true ? `${kw('not')} ` : ''}${kw('in')} (${(n['list'] as Bare[]).map((x) => sub(x, 4)).join(', ')})`,
          6,
        ];
      case 'like': {
        const word = n['caseInsensitive'] === true ? 'ilike' : 'like';
        return [
          `${sub(n['operand'], 7)} ${n['negated'] === true ? `${kw('not')} ` : ''}${kw(word)} ${sub(n['pattern'], 7, ['binary'])}`,
          6,
        ];
      }
      case 'case': {
        const whens = (n['whens'] as { when: Bare; then: Bare }[]).map(
          (w) => `${kw('when')} ${sub(w.when, 0)} ${kw('then')} ${sub(w.then, 0)}`,
        );
        // node-sql-parser rejects `CASE (x) WHEN …`: no optional parentheses around the operand.
        const operand = n['operand'] !== undefined ? ` ${sub(n['operand'], 0, [], 0)}` : '';
        const otherwise = n['else'] !== undefined ? ` ${kw('else')} ${sub(n['else'], 4)}` : '';
        return [`${kw('case')}${operand} ${whens.join(' ')}${otherwise} ${kw('end')}`, 100];
      }
      case 'cast': {
        const t = typeText(n['type'] as Omit<TypeName, 'pos'>);
        // node-sql-parser rejects `CAST(x AS t)::u` except as a whole select item.
        const operand = n['operand'] as Bare;
        return rand() < 0.5 && !castOperand
          ? [`${kw('cast')}(${sub(operand, 4)} ${kw('as')} ${t})`, 100]
          : [`${withCastOperand(() => sub(operand, 12))}::${t}`, 12];
      }
      case 'function': {
        const name = String(n['name']);
        if (n['star'] === true) return [`${kw(name)}(*)`, 100];
        const args = (n['args'] as Bare[]).map((x) => sub(x, 0));
        if (name === 'current_date') return [kw(name), 100];
        if (name === 'substring' && args.length >= 2 && rand() < 0.5) {
          return [
            `${kw(name)}(${args[0]} ${kw('from')} ${args[1]}${args[2] !== undefined ? ` ${kw('for')} ${args[2]}` : ''})`,
            100,
          ];
        }
        return [`${kw(name)}(${n['distinct'] === true ? `${kw('distinct')} ` : ''}${args.join(', ')})`, 100];
      }
      default:
        throw new Error(`cannot print ${n.kind}`);
    }
  };
  return sub(e, 0);
}

export function bareShape(e: Bare): unknown {
  return shape(
    JSON.parse(
      JSON.stringify({ ...e, pos: P0 }, (_k, v: unknown) =>
        typeof v === 'bigint' ? { bigint: String(v) } : v,
      ),
    ),
  );
}
export function toComparable(e: unknown): unknown {
  return shape(
    JSON.parse(JSON.stringify(e, (_k, v: unknown) => (typeof v === 'bigint' ? { bigint: String(v) } : v))),
  );
}

export function parseOrExplain(sql: string): Statement {
  try {
    return one(sql);
  } catch (error) {
    throw new Error(`${JSON.stringify(sql)}: ${String(error)}`);
  }
}

/** Every leaf's pos must point at its own text in `sql`. */
export function checkLeafPositions(sql: string, e: unknown): void {
  const lines = sql.split('\n');
  const at = (pos: SourcePosition): string => lines[pos.line - 1]!.slice(pos.column - 1);
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (typeof x !== 'object' || x === null) return;
    const node = x as Bare & { pos?: SourcePosition };
    if (node.kind === 'column' && node.pos !== undefined) {
      const first = String(node['table'] ?? node['name']);
      assert.ok(
        at(node.pos).toLowerCase().replace(/^"/, '').startsWith(first.toLowerCase()),
        `column pos in ${sql}`,
      );
    }
    if (node.kind === 'case' && node.pos !== undefined) assert.match(at(node.pos), /^case/i);
    Object.values(node).forEach(visit);
  };
  visit(e);
}

export const RUNS = Number(process.env['PARSER_PROPERTY_RUNS'] ?? 1000);

// FROM: a table, or a join tree of them (commas and JOINs, conditions, parentheses where needed).
const fromArb = fc.letrec<{ item: Bare; table: Bare }>((tie) => ({
  table: fc
    .tuple(fc.constantFrom('t', 'orders', 'Q'), fc.option(fc.constantFrom('o', 'src'), { nil: undefined }))
    .map(([name, alias]): Bare => ({ kind: 'table', name, ...(alias !== undefined ? { alias } : {}) })),
  item: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('table'),
    fc
      .tuple(
        fc.constantFrom('inner', 'left', 'right', 'full', 'cross'),
        tie('item'),
        tie('item'),
        fc.oneof(
          fc.constant<Bare>({ kind: 'natural' }),
          exprArb.expr.map((on): Bare => ({ kind: 'on', on })),
          fc
            .uniqueArray(fc.constantFrom('a', 'b', 'K'), { minLength: 1, maxLength: 3 })
            .map((names): Bare => ({ kind: 'using', using: names.map((name) => ({ name })) })),
        ),
      )
      .map(([joinKind, left, right, condition]): Bare => {
        const { kind: _, ...rest } = condition;
        return {
          kind: 'join',
          joinKind,
          left,
          right,
          ...(joinKind === 'cross' || condition.kind === 'natural' ? {} : rest),
          natural: joinKind !== 'cross' && condition.kind === 'natural',
        };
      }),
  ),
}));

/**
 * Prints a FROM item. A comma binds looser than JOIN and cannot stand in parentheses, so one is
 * printed only on the left spine of the whole list (`commaOk`); a join on the right is parenthesised.
 */
function printFrom(f: Bare, rand: () => number, commaOk = true): string {
  const pick = <T>(...options: T[]): T => options[Math.floor(rand() * options.length)]!;
  const kw = (word: string): string => pick(word.toUpperCase(), word.toLowerCase());
  const ident = (name: string): string =>
    name === name.toLowerCase() ? pick(name, name.toUpperCase()) : `"${name}"`;
  if (f.kind === 'table') {
    const alias = f['alias'] as string | undefined;
    return ident(String(f['name'])) + (alias !== undefined ? ` ${pick(`${kw('as')} `, '')}${alias}` : '');
  }
  const joinKind = String(f['joinKind']);
  const comma = joinKind === 'cross' && commaOk && rand() < 0.5;
  const left = printFrom(f['left'] as Bare, rand, comma);
  const rightItem = f['right'] as Bare;
  const right =
    rightItem.kind === 'join' ? `(${printFrom(rightItem, rand, false)})` : printFrom(rightItem, rand);
  if (comma) return `${left}${pick(', ', ',\n  ', ' ,')}${right}`;
  const outer =
    joinKind === 'left' || joinKind === 'right' || joinKind === 'full' ? pick('', ` ${kw('outer')}`) : '';
  const word =
    joinKind === 'inner'
      ? pick('', `${kw('inner')} `)
      : joinKind === 'cross'
        ? `${kw('cross')} `
        : `${kw(joinKind)}${outer} `;
  const natural = f['natural'] === true ? `${kw('natural')} ` : '';
  let condition = '';
  if (f['on'] !== undefined) condition = ` ${kw('on')} ${printExpr(f['on'] as Bare, rand)}`;
  const using = f['using'] as { name: string }[] | undefined;
  if (using !== undefined) condition = ` ${kw('using')} (${using.map((u) => ident(u.name)).join(', ')})`;
  return `${left} ${natural}${word}${kw('join')} ${right}${condition}`;
}

// Whole SELECT statements: every clause the adapter walks, with random spelling.
export const selectArb = fc.record(
  {
    distinct: fc.boolean(),
    items: fc.array(
      fc.oneof(
        fc.constant<Bare>({ kind: 'star' }),
        fc.constant<Bare>({ kind: 'star', table: 't' }),
        fc
          .tuple(exprArb.expr, fc.option(fc.constantFrom('total', 'x_1', 'Price'), { nil: undefined }))
          .map(([expr, alias]): Bare => ({ kind: 'expr', expr, ...(alias !== undefined ? { alias } : {}) })),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    from: fc.option(fromArb.item, { nil: undefined }),
    where: fc.option(exprArb.expr, { nil: undefined }),
    groupBy: fc.array(exprArb.expr, { maxLength: 2 }),
    having: fc.option(exprArb.expr, { nil: undefined }),
    orderBy: fc.array(
      fc
        .tuple(exprArb.expr, fc.boolean(), fc.option(fc.constantFrom('first', 'last'), { nil: undefined }))
        .map(([expr, desc, nulls]) => ({ expr, desc, ...(nulls !== undefined ? { nulls } : {}) })),
      { maxLength: 2 },
    ),
    limit: fc.option(fc.nat(100), { nil: undefined }),
    offset: fc.option(fc.nat(100), { nil: undefined }),
  },
  { requiredKeys: ['distinct', 'items', 'groupBy', 'orderBy'] },
);

type BareSelect = typeof selectArb extends fc.Arbitrary<infer T> ? T : never;

export function printSelect(q: BareSelect, rand: () => number): { sql: string; expected: unknown } {
  const pick = <T>(...options: T[]): T => options[Math.floor(rand() * options.length)]!;
  const kw = (word: string): string => pick(word.toUpperCase(), word.toLowerCase());
  // node-sql-parser rejects AND/OR in GROUP BY and ORDER BY items without parentheses.
  const item = (e: Bare): string =>
    ['binary', 'unary'].includes(e.kind) ? `(${printExpr(e, rand)})` : printExpr(e, rand);
  const parts = [kw('select'), q.distinct ? kw('distinct') : ''];
  parts.push(
    q.items
      .map((i) => {
        if (i.kind === 'star') return i['table'] !== undefined ? `${String(i['table'])}.*` : '*';
        const alias = i['alias'] as string | undefined;
        const text = printExpr(i['expr'] as Bare, rand);
        if (alias === undefined) return text;
        const quoted = alias === 'Price' ? '"Price"' : alias;
        return `${text} ${pick(`${kw('as')} `, '')}${quoted}`;
      })
      .join(pick(', ', ',\n  ')),
  );
  if (q.from !== undefined) parts.push(kw('from'), printFrom(q.from, rand));
  if (q.where !== undefined) parts.push(kw('where'), printExpr(q.where, rand));
  if (q.groupBy.length > 0) parts.push(kw('group by'), q.groupBy.map(item).join(', '));
  if (q.having !== undefined) parts.push(kw('having'), printExpr(q.having, rand));
  if (q.orderBy.length > 0) {
    const orders = q.orderBy.map((o) => {
      const direction = o.desc ? ` ${kw('desc')}` : pick('', ` ${kw('asc')}`);
      const nulls = o['nulls'] !== undefined ? ` ${kw('nulls')} ${kw(String(o['nulls']))}` : '';
      return `${item(o.expr)}${direction}${nulls}`;
    });
    parts.push(kw('order by'), orders.join(', '));
  }
  const limit = q.limit !== undefined ? `${kw('limit')} ${q.limit}` : '';
  const offset = q.offset !== undefined ? `${kw('offset')} ${q.offset}` : '';
  parts.push(...(rand() < 0.5 ? [limit, offset] : [offset, limit]));
  const expected = {
    kind: 'select',
    distinct: q.distinct,
    items: q.items,
    ...(q.from !== undefined ? { from: q.from } : {}),
    ...(q.where !== undefined ? { where: q.where } : {}),
    groupBy: q.groupBy,
    ...(q.having !== undefined ? { having: q.having } : {}),
    orderBy: q.orderBy,
    ...(q.limit !== undefined ? { limit: { kind: 'literal', value: q.limit, literalType: 'integer' } } : {}),
    ...(q.offset !== undefined
      ? { offset: { kind: 'literal', value: q.offset, literalType: 'integer' } }
      : {}),
  };
  return { sql: parts.filter((p) => p !== '').join(' '), expected };
}

export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}
