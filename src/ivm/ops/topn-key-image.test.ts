import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRows } from '../../common/top-n.ts';
import { keyImage } from './topn-key-image.ts';

/** Characters on both sides of U+D800–U+FFFF: code unit and code point order disagree there. */
const CHARS = ['a', 'é', '\ud7ff', '\ue000', '\uff21', '\uffff', '\u{10000}', '\u{1f600}', '\u{10ffff}'];

function randomText(seed: { s: number }): string {
  let out = '';
  const n = (seed.s = (seed.s * 1103515245 + 12345) % 2147483648) % 5;
  for (let i = 0; i < n; i++) {
    seed.s = (seed.s * 1103515245 + 12345) % 2147483648;
    out += CHARS[seed.s % CHARS.length] as string;
  }
  return out;
}

test("Top-N's text image never puts a row after one the full compare puts after it", () => {
  const image = keyImage([{ index: 0, desc: false, nullsFirst: false }]);
  const compare = compareRows([{ index: 0, desc: false, nullsFirst: false }]);
  const seed = { s: 11 };
  for (let i = 0; i < 20000; i++) {
    const a = [randomText(seed)];
    const b = [randomText(seed)];
    const c = compare(a, b);
    if (c < 0) assert.ok(image(a) <= image(b), `${JSON.stringify(a)} before ${JSON.stringify(b)}`);
    if (c > 0) assert.ok(image(a) >= image(b), `${JSON.stringify(a)} after ${JSON.stringify(b)}`);
  }
});
