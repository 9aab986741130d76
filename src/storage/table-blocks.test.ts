// TableBlocks builds a table's column blocks from live rows as they arrive: each block is byte for
// byte what encodeColumnBlock makes of the same rows (numbers, NULLs, -0, a column that turns to JSON
// part way through a block, bigints and decimals), blocks end at BLOCK_ENTRIES rows or at the size
// bound, a value that is not a row of the part's width is refused (the caller writes it alone), and
// a key handed over as its value is stored as the text encodeOne gives it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDecimal } from '../common/decimal.ts';
import type { Value } from '../common/types.ts';
import { encodeOne } from '../common/value-key.ts';
import { BLOCK_CHARS, BLOCK_ENTRIES } from './checkpoint-format.ts';
import { COLUMN_BLOCKS, decodeColumnBlock, encodeColumnBlock } from './column-block.ts';
import { TableBlocks, type TableBlock } from './table-blocks.ts';

function blocksOf(entries: readonly (readonly [string, unknown])[]): TableBlock[] {
  const blocks = TableBlocks.of('table:t', true) ?? assert.fail('column blocks');
  const out: TableBlock[] = [];
  for (const [key, row] of entries) {
    assert.equal(blocks.add(key, row), true);
    const block = blocks.ready();
    if (block !== null) out.push(block);
  }
  const last = blocks.finish();
  if (last !== null) out.push(last);
  return out;
}

test('each block holds the bytes encodeColumnBlock makes of its rows', { skip: !COLUMN_BLOCKS }, () => {
  const entries: (readonly [string, unknown[]])[] = [];
  for (let i = 0; i < 5_000; i++) {
    entries.push([
      `n${i};`,
      [
        i, // numbers only
        i % 7 === 0 ? null : i / 3, // numbers and NULLs
        i === 3_000 ? 'text' : i % 5 === 0 ? null : -0, // turns to JSON in the second block's middle
        i % 11 === 0 ? 2n ** 60n + BigInt(i) : i, // bigints among numbers: JSON
        i % 2 === 0 ? parseDecimal(`${i}.50`) : null,
        `s${i}`,
        i % 3 === 0,
      ],
    ]);
  }
  const blocks = blocksOf(entries);
  // Seven columns: the size bound ends each block before BLOCK_ENTRIES rows.
  assert.ok(blocks.length > 2);
  assert.equal(
    blocks.reduce((sum, b) => sum + b.n, 0),
    entries.length,
  );
  let at = 0;
  for (const block of blocks) {
    const slice = entries.slice(at, at + block.n);
    const expected = encodeColumnBlock(
      JSON.stringify(slice.map((e) => e[0])),
      slice.map((e) => e[1]),
    );
    assert.deepEqual(block.bytes, expected);
    assert.equal(block.bytes.byteOffset, 0);
    assert.equal(block.bytes.byteLength, block.bytes.buffer.byteLength, 'a buffer of its own');
    assert.equal(decodeColumnBlock(block.bytes, block.n).width, 7);
    at += block.n;
  }
});

test(
  'a block ends at the size bound; a value not a row of the width is refused',
  { skip: !COLUMN_BLOCKS },
  () => {
    const wide = 'x'.repeat(1_000);
    const blocks = blocksOf(Array.from({ length: 200 }, (_, i) => [`n${i};`, [i, wide]] as const));
    assert.ok(blocks.length > 1);
    for (const b of blocks) assert.ok(b.n < BLOCK_ENTRIES && b.n * 1_000 < BLOCK_CHARS + 1_100);

    const part = TableBlocks.of('table:t', true) ?? assert.fail('column blocks');
    assert.equal(part.add('a', [1, 2]), true);
    assert.equal(part.add('b', [1]), false);
    assert.equal(part.add('c', { not: 'a row' }), false);
    assert.equal(part.finish()?.n, 1);
    assert.equal(part.finish(), null);
    assert.equal(TableBlocks.of('table:t', false), null, 'an incremental delta is written by key');
    assert.equal(TableBlocks.of('view:v:0', true), null, 'only tables go by column');
  },
);

test(
  "a block's keys are the bytes of their JSON list, whatever characters they hold",
  { skip: !COLUMN_BLOCKS },
  () => {
    const odd = ['s1:"', 's1:\\', 's2:a\n', 's1:\u0001', 's1:é', 's2:😀', 's1:\ud800', 's5:x/y\u007f', 'n1;'];
    const long = `s5000:${'é"'.repeat(2_500)}`;
    const keys = Array.from({ length: 3_000 }, (_, i) =>
      i === 1_500 ? long : (odd[i % odd.length] as string) + i,
    );
    const blocks = blocksOf(keys.map((k, i) => [k, [i]] as const));
    let at = 0;
    for (const block of blocks) {
      const slice = keys.slice(at, at + block.n);
      const expected = encodeColumnBlock(
        JSON.stringify(slice),
        slice.map((_, i) => [at + i]),
      );
      assert.deepEqual(block.bytes, expected);
      at += block.n;
    }
    assert.equal(at, keys.length);
  },
);

test(
  "a key given as its value (addValueKey) is stored as its encodeOne text, a safe integer's written digit by digit",
  { skip: !COLUMN_BLOCKS },
  () => {
    const values: Value[] = [0, -0, 1, -1, 9, 10, 99, 100, -100, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53];
    values.push(-(2 ** 53), 1.5, -0.25, 1e21, 1e-7, NaN, Infinity, -Infinity, 12n, -(2n ** 70n));
    values.push(999_999_999, 1e9, 1e9 + 1, -1_000_000_007, 2 ** 31, 123_456_789_012, 9_007_199_000_000_001);
    values.push('text', 'q"uote', '', null, true, false, parseDecimal('1.50'));
    for (let i = 0; i < 4_000; i++) values.push(i * 7_919 - 20_000_000);
    const byText = blocksOf(values.map((k, i) => [encodeOne(k), [i]] as const));
    const part = TableBlocks.of('table:t', true) ?? assert.fail('column blocks');
    const byValue: TableBlock[] = [];
    values.forEach((k, i) => {
      assert.equal(part.addValueKey(k, [i]), true);
      const block = part.ready();
      if (block !== null) byValue.push(block);
    });
    const last = part.finish();
    if (last !== null) byValue.push(last);
    assert.ok(byValue.length > 1);
    assert.deepEqual(byValue, byText);
    assert.equal(part.addValueKey(1, { not: 'a row' }), false);
  },
);
