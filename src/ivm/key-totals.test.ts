// Unit tests of KeyTotals: totals per join key, keys forgotten at zero and their slots reused, and
// keys that compare as a Map's do (0 and -0 one key, NaN one key, '1' not 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyTotals } from './key-totals.ts';

test('totals add up per key and a key at zero is forgotten', () => {
  const t = new KeyTotals();
  t.add(7, 2);
  t.add(7, 1);
  t.add('7', 5);
  t.add(2n ** 70n, 4);
  assert.equal(t.get(7), 3);
  assert.equal(t.get('7'), 5);
  assert.equal(t.get(2n ** 70n), 4);
  assert.equal(t.get(8), 0);
  t.add(7, -3);
  assert.equal(t.get(7), 0);
  assert.equal(t.stateBytes, 32);
  // The freed slot is reused by the next key, which starts from zero.
  t.add(9, 1);
  assert.equal(t.get(9), 1);
  assert.equal(t.get(7), 0);
  assert.equal(t.stateBytes, 48);
});

test('keys compare like Map keys: 0 and -0 are one, NaN is NaN', () => {
  const t = new KeyTotals();
  t.add(0, 1);
  t.add(-0, 1);
  t.add(NaN, 2);
  assert.equal(t.get(0), 2);
  assert.equal(t.get(NaN), 2);
  t.add(true, 1);
  assert.equal(t.get(true), 1);
  assert.equal(t.get(1), 0);
});

test('many keys grow the totals and clear empties them', () => {
  const t = new KeyTotals();
  for (let k = 0; k < 5000; k++) t.add(k * 7919, k + 1);
  for (let k = 0; k < 5000; k++) assert.equal(t.get(k * 7919), k + 1);
  t.clear();
  assert.equal(t.get(7919), 0);
  assert.equal(t.stateBytes, 0);
});
