import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRows } from '../../common/top-n.ts';
import { keyImage } from './topn-key-image.ts';
import { randomBoundaryText as randomText } from '../../../test/support/boundary-text.ts';

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
