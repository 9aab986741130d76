import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codePointUnit, compareText, compareTextByUnits } from './text-order.ts';
import { compareValues } from './values.ts';
import { randomBoundaryText as randomText } from '../../test/support/boundary-text.ts';

/** The reference: code points one by one, then the shorter first (UTF-8 memcmp's order). */
function byCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number) ? -1 : 1;
  }
  return Math.sign(x.length - y.length);
}

test('compareText is code point order: a character above U+FFFF after U+E000–U+FFFF', () => {
  assert.equal(compareText('\u{1f600}', '\ue000'), 1);
  assert.equal(compareText('\ue000', '\u{1f600}'), -1);
  assert.equal(compareText('a\u{10000}', 'a\uffff'), 1);
  assert.equal(compareText('\u{1f600}', '\u{1f601}'), -1);
  assert.equal(compareText('\u{1f600}a', '\u{1f600}'), 1);
  assert.equal(compareText('', 'a'), -1);
  assert.equal(compareText('abc', 'abc'), 0);
  assert.equal(compareValues('\u{1f600}', '\uffff'), 1);
  const seed = { s: 7 };
  for (let i = 0; i < 20000; i++) {
    const a = randomText(seed);
    const b = randomText(seed);
    const want = byCodePoints(a, b);
    assert.equal(compareText(a, b), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(compareTextByUnits(a, b), want, `walk: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(Math.sign(compareValues(a, b)), want);
  }
});

test('codePointUnit keeps the BMP below U+D800 and moves surrogates above U+E000–U+FFFF', () => {
  assert.equal(codePointUnit(0x41), 0x41);
  assert.equal(codePointUnit(0xd7ff), 0xd7ff);
  assert.equal(codePointUnit(0xe000), 0xd800);
  assert.equal(codePointUnit(0xffff), 0xf7ff);
  assert.equal(codePointUnit(0xd800), 0xf800);
  assert.equal(codePointUnit(0xdfff), 0xffff);
});
