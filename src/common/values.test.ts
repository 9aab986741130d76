// exactKeyOf, the shortcut DISTINCT and set operations take to a row's exact key: it must give
// encodeExactValues' string for every row, plain or not, since checkpoint entries are named by it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from './types.ts';
import { encodeExactValues, encodeValues, exactKeyOf } from './values.ts';
import { parseDecimal } from './decimal.ts';
import { Interval } from './time/interval.ts';
import { parseJsonb } from './json/jsonb.ts';

const VALUES: readonly Value[] = [
  null,
  0,
  -0,
  1,
  -1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2n ** 70n,
  '',
  'n0;',
  'a;b',
  true,
  false,
  parseDecimal('1.5'),
  parseDecimal('1.50'),
  Interval.of(0, 1, 0),
  Interval.of(0, 0, 86_400_000_000),
  parseJsonb('1'),
  parseJsonb('1.0'),
];

test('exactKeyOf agrees with encodeExactValues on every row', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...VALUES), { maxLength: 5 }), (row) => {
      assert.equal(exactKeyOf(row, encodeValues(row)), encodeExactValues(row));
    }),
    { numRuns: 2000 },
  );
});

test('a row of plain values is encoded once: its value key is its exact key', () => {
  const row: Value[] = [1, 'x', true, null];
  const valueKey = encodeValues(row);
  assert.equal(exactKeyOf(row, valueKey), valueKey);
  // SQL-equal rows of other texts keep distinct exact keys
  assert.notEqual(exactKeyOf([-0], encodeValues([-0])), exactKeyOf([0], encodeValues([0])));
  const a = [parseDecimal('1.5')];
  const b = [parseDecimal('1.50')];
  assert.equal(encodeValues(a), encodeValues(b));
  assert.notEqual(exactKeyOf(a, encodeValues(a)), exactKeyOf(b, encodeValues(b)));
});
