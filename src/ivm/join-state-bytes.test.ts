// The join arrangement's row estimate counts a value as boxed exactly when it is not an integer in
// the small-integer range: its int32 test must agree with Number.isInteger and Math.abs at the
// edges (-0, NaN, the infinities, ±2^30, fractions, non-numbers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../common/types.ts';
import { rowBytes } from './join-state-bytes.ts';

function boxedByDefinition(v: Value): boolean {
  return typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= 2 ** 30;
}

test('rowBytes boxes a value exactly when it is not an integer below 2^30 in magnitude', () => {
  const values: Value[] = [
    0,
    -0,
    1,
    -1,
    2 ** 30 - 1,
    2 ** 30,
    -(2 ** 30) + 1,
    -(2 ** 30),
    2 ** 31,
    -(2 ** 31),
    2 ** 53,
    1.5,
    -0.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.MIN_VALUE,
    'text',
    '',
    null,
    true,
    10n,
  ];
  for (const v of values) {
    const expected = 76 + 8 + (boxedByDefinition(v) ? 16 : 0);
    assert.equal(rowBytes([v]), expected, `value ${String(v)}`);
  }
  assert.equal(rowBytes([]), 76);
  assert.equal(rowBytes([1, 'a', 2 ** 30, null]), 76 + 32 + 48);
});
