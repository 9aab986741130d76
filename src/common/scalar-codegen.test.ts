// Generated expressions against the closure compiler they stand for: on random well-typed trees and
// rows full of edge values (NULL, NaN, ±Infinity, -0, range bounds, bigints), both give the same
// value or throw the same error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { T, type SqlType, type Value } from './types.ts';
import { compileScalar, compileScalarClosure, type ScalarExpr, type ScalarFn } from './scalar-expr.ts';
import { generateScalar } from './scalar-codegen.ts';
import { Decimal } from './decimal.ts';

const COLUMNS: readonly { readonly type: SqlType; readonly values: readonly Value[] }[] = [
  { type: T.int16, values: [null, 0, 1, -1, 7, 32767, -32768, 181, -182] },
  { type: T.int32, values: [null, 0, -0, 1, -1, 3, 10, 2147483647, -2147483648, 46341, -65536] },
  {
    type: T.int64,
    values: [
      null,
      0,
      1,
      -1,
      10,
      2 ** 52,
      -(2 ** 52),
      2 ** 53 - 1,
      -(2 ** 53) + 1,
      2n ** 62n,
      -(2n ** 63n),
      3037000500,
    ],
  },
  {
    type: T.float64,
    values: [null, 0, -0, 1.5, -2.25, NaN, Infinity, -Infinity, 1e308, -1e308, 5e-324, 1e-200, 0.1, 10],
  },
  { type: T.text, values: [null, '', 'a', 'B', 'é', '😀', 'ab', '10', '9'] },
  { type: T.bool, values: [null, true, false] },
  { type: T.numeric, values: [null, Decimal.fromInt(3), new Decimal(-15n, 1)] },
];

const col = (i: number): ScalarExpr => ({
  kind: 'col',
  index: i,
  name: `c${i}`,
  type: (COLUMNS[i] as { type: SqlType }).type,
});
const call = (fn: ScalarFn, type: SqlType, ...args: ScalarExpr[]): ScalarExpr => ({
  kind: 'call',
  fn,
  args,
  type,
});
const colOf = (type: SqlType): ScalarExpr => col(COLUMNS.findIndex((c) => c.type === type));

function constOf(type: SqlType): fc.Arbitrary<ScalarExpr> {
  const values = (COLUMNS.find((c) => c.type === type) as { values: readonly Value[] }).values;
  return fc.constantFrom(...values).map((value) => ({ kind: 'const', value, type }) as ScalarExpr);
}

type Arbs = Record<'int16' | 'int32' | 'int64' | 'float' | 'text' | 'bool' | 'numeric', ScalarExpr>;

const exprs = fc.letrec<Arbs>((tie) => {
  const intOf = (type: SqlType, key: 'int16' | 'int32' | 'int64') =>
    fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(colOf(type)),
      constOf(type),
      fc
        .tuple(fc.constantFrom<ScalarFn>('add', 'sub', 'mul', 'div', 'mod'), tie(key), tie(key))
        .map(([fn, a, b]) => call(fn, type, a, b)),
      fc
        .tuple(tie('bool'), tie(key), tie(key))
        .map(([w, t, e]) => ({ kind: 'case', whens: [{ when: w, then: t }], else: e, type }) as ScalarExpr),
      fc.tuple(tie(key), tie(key)).map(([a, b]) => ({ kind: 'coalesce', args: [a, b], type }) as ScalarExpr),
    );
  return {
    int16: intOf(T.int16, 'int16'),
    int32: intOf(T.int32, 'int32'),
    int64: intOf(T.int64, 'int64'),
    float: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(colOf(T.float64)),
      constOf(T.float64),
      fc
        .tuple(fc.constantFrom<ScalarFn>('add', 'sub', 'mul', 'div', 'mod'), tie('float'), tie('float'))
        .map(([fn, a, b]) => call(fn, T.float64, a, b)),
      fc
        .tuple(fc.constantFrom<ScalarFn>('floor', 'ceil', 'round', 'trunc'), tie('float'))
        .map(([fn, a]) => call(fn, T.float64, a)),
      fc
        .tuple(fc.constantFrom('int16', 'int32', 'int64' as const), fc.constant(null))
        .chain(([k]) => tie(k))
        .map((operand) => ({ kind: 'cast', operand, type: T.float64 }) as ScalarExpr),
      // The histogram's shape: a rounding of an integer made a double, often of a quotient.
      fc
        .tuple(
          fc.constantFrom<ScalarFn>('floor', 'ceil', 'round', 'trunc'),
          fc.constantFrom('int16', 'int32', 'int64' as const),
          fc.constantFrom(10, -1, 1, 3, -7),
        )
        .chain(([fn, k, d]) =>
          fc.tuple(
            fc.constant(fn),
            fc.oneof(
              tie(k),
              tie(k).map((a) => call('div', a.type, a, { kind: 'const', value: d, type: a.type })),
            ),
          ),
        )
        .map(([fn, operand]) => call(fn, T.float64, { kind: 'cast', operand, type: T.float64 })),
    ),
    numeric: fc.oneof(
      fc.constant(colOf(T.numeric)),
      tie('numeric').map((a) => call('floor', T.numeric, a)),
    ),
    text: fc.oneof(fc.constant(colOf(T.text)), constOf(T.text)),
    bool: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(colOf(T.bool)),
      constOf(T.bool),
      fc
        .tuple(
          fc.constantFrom<ScalarFn>(
            'eq',
            'ne',
            'lt',
            'le',
            'gt',
            'ge',
            'is_distinct_from',
            'is_not_distinct_from',
          ),
          fc.constantFrom('int32', 'int64', 'float', 'text', 'bool', 'numeric' as const),
        )
        .chain(([fn, k]) => fc.tuple(fc.constant(fn), tie(k), tie(k)))
        .map(([fn, a, b]) => call(fn, T.bool, a, b)),
      fc
        .tuple(
          fc.constantFrom('and' as const, 'or' as const),
          fc.array(tie('bool'), { minLength: 2, maxLength: 4 }),
        )
        .map(([kind, args]) => ({ kind, args, type: T.bool }) as ScalarExpr),
      tie('bool').map((a) => call('not', T.bool, a)),
      fc
        .tuple(fc.constantFrom<ScalarFn>('is_null', 'is_not_null'), tie('float'))
        .map(([fn, a]) => call(fn, T.bool, a)),
    ),
  };
});

const rowArb = fc.tuple(...COLUMNS.map((c) => fc.constantFrom(...c.values)));

function outcome(f: (row: readonly Value[]) => Value, row: readonly Value[]): string {
  try {
    const v = f(row);
    if (typeof v === 'number') return Object.is(v, -0) ? 'n:-0' : `n:${String(v)}`;
    if (v instanceof Decimal) return `d:${v.toString()}`;
    return `${typeof v}:${String(v)}`;
  } catch (error) {
    return `error:${(error as { code?: string }).code ?? ''}:${(error as Error).message}`;
  }
}

test('generated expressions give the closures’ value or error on every row', () => {
  let generated = 0;
  fc.assert(
    fc.property(
      fc.oneof(exprs.int16, exprs.int32, exprs.int64, exprs.float, exprs.bool),
      fc.array(rowArb, { minLength: 1, maxLength: 12 }),
      (e, rows) => {
        const fast = generateScalar(e, compileScalarClosure);
        if (fast === null) return;
        generated++;
        const reference = compileScalarClosure(e);
        for (const row of rows)
          assert.equal(outcome(fast, row), outcome(reference, row), JSON.stringify(row, replacer));
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(generated > 1000, `only ${generated} expressions were generated`);
});

function replacer(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}

test('the canonical histogram key is generated; a lone column or unsupported node is not', () => {
  const key = call('floor', T.float64, {
    kind: 'cast',
    operand: call('div', T.int64, colOf(T.int64), { kind: 'const', value: 10, type: T.int32 }),
    type: T.float64,
  });
  assert.notEqual(generateScalar(key, compileScalarClosure), null);
  assert.equal(compileScalar(key)([null, null, 2n ** 62n]), Number(2n ** 62n / 10n));
  assert.equal(compileScalar(key)([null, null, 95]), 9);
  assert.equal(compileScalar(key)([null, null, -95]), -9);
  assert.equal(compileScalar(key)([null, null, null]), null);
  // The quotient is already whole: no rounding call in the generated text.
  assert.doesNotMatch(String(generateScalar(key, compileScalarClosure)), /Math\.floor/);
  const round = call('round', T.float64, { kind: 'cast', operand: colOf(T.int64), type: T.float64 });
  assert.equal(compileScalarClosure(round)([null, null, 2 ** 52]), 2 ** 52);
  assert.equal(compileScalar(round)([null, null, 2 ** 52]), 2 ** 52);
  assert.equal(generateScalar(call('lower', T.text, colOf(T.text)), compileScalarClosure), null);
});

test('a tree past the size bound stays closures', () => {
  let e: ScalarExpr = colOf(T.int32);
  for (let i = 0; i < 300; i++) e = call('add', T.int32, e, { kind: 'const', value: 1, type: T.int32 });
  assert.equal(generateScalar(e, compileScalarClosure), null);
  assert.equal(compileScalar(e)([null, 5]), 305);
});
