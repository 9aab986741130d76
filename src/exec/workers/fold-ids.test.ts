import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileScalar, type ScalarExpr } from '../../common/scalar-expr.ts';
import { T, type Value } from '../../common/types.ts';
import { foldIdsFunction } from './fold-ids.ts';
import { groupId } from './partition-hash.ts';

const int = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.int64 });
const text = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.text });
const lit = (value: number): ScalarExpr => ({ kind: 'const', value, type: T.int64 });
const call = (fn: 'div' | 'floor' | 'add' | 'upper', ...args: ScalarExpr[]): ScalarExpr => ({
  kind: 'call',
  fn,
  args,
  type: fn === 'upper' ? T.text : T.int64,
});

/** What a fold did before: every column copied into a row, each key's compiled function, `groupId`. */
function referenceIds(keys: readonly ScalarExpr[], cols: readonly Value[][], n: number): Value[] | 'error' {
  const fns = keys.map(compileScalar);
  const out: Value[] = [];
  try {
    for (let j = 0; j < n; j++) {
      const row = cols.map((c) => c[j] as Value);
      out.push(groupId(fns.map((f) => f(row))));
    }
  } catch {
    return 'error';
  }
  return out;
}

const KEY_SETS: readonly (readonly ScalarExpr[])[] = [
  [call('floor', call('div', int(2), lit(10)))], // the canonical histogram's FLOOR(total / 10)
  [int(0)],
  [call('div', int(2), int(0))], // division by zero on a 0 in column 0: a row error
  [call('upper', text(1))],
  [int(0), call('upper', text(1))],
  [call('add', int(2), int(2)), int(0)],
  [],
];

const cell = fc.oneof(
  fc.constant(null),
  fc.integer({ min: -5, max: 5 }),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.constant(-0),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
);
const textCell = fc.oneof(fc.constant(null), fc.string({ maxLength: 4 }));

test('generated fold ids equal the per-row keys and groupId, and fail where they fail', () => {
  let failures = 0;
  fc.assert(
    fc.property(
      fc.array(fc.tuple(cell, textCell, cell), { maxLength: 40 }),
      fc.integer({ min: 0, max: KEY_SETS.length - 1 }),
      (rows, which) => {
        const keys = KEY_SETS[which] as readonly ScalarExpr[];
        const cols: Value[][] = [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])];
        const expected = referenceIds(keys, cols, rows.length);
        const ids: Value[] = [];
        let actual: Value[] | 'error';
        try {
          foldIdsFunction(keys)(cols, rows.length, ids);
          actual = ids.slice(0, rows.length);
        } catch {
          actual = 'error';
        }
        if (expected === 'error') failures++;
        assert.deepEqual(actual, expected);
      },
    ),
    { numRuns: 400, seed: 4711 },
  );
  assert.ok(failures > 0, 'some runs divide by zero');
});

test('fold ids read the columns a key uses, from typed arrays too, and only the first n changes', () => {
  const ids: Value[] = ['stale', 'stale', 'stale'];
  const floor = foldIdsFunction([call('floor', call('div', int(2), lit(10)))]);
  floor([null as unknown as ArrayLike<Value>, [], Float64Array.of(5, 19, 20, 999)], 2, ids);
  assert.deepEqual(ids, [0, 1, 'stale']);
});
