// Unit tests of RetractedKeys: its table of numeric keys answers as the Set of SQL key identities it
// stands for (random batches, -0, NaN, bigints, text, several columns, a batch past the kept size),
// and it is allocated once per larger batch, not per epoch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import { RetractedKeys } from './retracted-keys.ts';

/** The answer of a Set of the keys' SQL identities, written plainly. */
function expected(
  rows: readonly (readonly Value[])[],
  weights: readonly number[],
  key: readonly number[],
): boolean {
  const id = (row: readonly Value[]): Value =>
    key.length === 1 ? singleKey(row[key[0] as number] as Value) : encodeValues(row, key);
  const out = new Set<Value>();
  rows.forEach((row, i) => {
    if ((weights[i] as number) < 0) out.add(id(row));
  });
  return rows.every((row, i) => (weights[i] as number) <= 0 || !out.has(id(row)));
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

test('the numeric table answers as the Set of key identities, on random batches', () => {
  const probe = new RetractedKeys();
  const next = random(7);
  const pools: (() => Value)[] = [
    () => Math.floor(next() * 200) - 100,
    () => Math.floor(next() * 40) / 4,
    () => Math.floor(next() * 3e9) * 4096,
    () => [0, -0, 1, -1][Math.floor(next() * 4)] as Value,
  ];
  let collisions = 0;
  for (let round = 0; round < 2000; round++) {
    const pool = pools[round % pools.length] as () => Value;
    const n = 1 + Math.floor(next() * 40);
    const rows: Value[][] = [];
    const weights: number[] = [];
    for (let i = 0; i < n; i++) {
      rows.push([pool(), i]);
      weights.push(next() < 0.5 ? -1 : 1);
    }
    const want = expected(rows, weights, [0]);
    if (!want) collisions++;
    assert.equal(probe.noKeyBothWays(rows, weights, [0]), want, `round ${round}`);
  }
  // Both answers occurred, and the table grew a few times, never once per batch.
  assert.ok(collisions > 100 && collisions < 1900, `collisions ${collisions}`);
  assert.ok(probe.allocations <= 3, `allocations ${probe.allocations}`);
});

test('keys the table does not hold answer as the Set does, a doubt counting as a collision', () => {
  const probe = new RetractedKeys();
  // -0 and 0 are one key; NaN is one key with itself.
  assert.equal(probe.noKeyBothWays([[-0], [0]], [-1, 1], [0]), false);
  assert.equal(probe.noKeyBothWays([[NaN], [NaN]], [-1, 1], [0]), false);
  assert.equal(probe.noKeyBothWays([[NaN], [1]], [-1, 1], [0]), true);
  // Text and bigint keys, and several columns, go through the Set.
  assert.equal(probe.noKeyBothWays([['a'], ['a']], [-1, 1], [0]), false);
  assert.equal(probe.noKeyBothWays([['a'], ['b']], [-1, 1], [0]), true);
  assert.equal(probe.noKeyBothWays([[1n], [1n]], [-1, 1], [0]), false);
  assert.equal(
    probe.noKeyBothWays(
      [
        [1, 'x'],
        [1, 'y'],
      ],
      [-1, 1],
      [0, 1],
    ),
    true,
  );
  assert.equal(
    probe.noKeyBothWays(
      [
        [1, 'x'],
        [1, 'x'],
      ],
      [-1, 1],
      [0, 1],
    ),
    false,
  );
  // A number retracted, another type inserted: not told apart here, so a collision.
  assert.equal(probe.noKeyBothWays([[1], ['1']], [-1, 1], [0]), false);
  // Only inserts, or no inserts: nothing to collide.
  assert.equal(probe.noKeyBothWays([[1], [1]], [1, 1], [0]), true);
  assert.equal(probe.noKeyBothWays([[1], [1]], [-1, -1], [0]), true);
});

test('a batch past the kept size is answered by a Set made for it, the table not grown', () => {
  const probe = new RetractedKeys();
  const n = 40_000;
  const rows: Value[][] = [];
  const weights: number[] = [];
  for (let i = 0; i < n; i++) {
    rows.push([i]);
    weights.push(-1);
  }
  rows.push([n - 1]);
  weights.push(1);
  assert.equal(probe.noKeyBothWays(rows, weights, [0]), false);
  rows[n] = [n];
  assert.equal(probe.noKeyBothWays(rows, weights, [0]), true);
  assert.equal(probe.bytes(), 0);
  assert.equal(probe.allocations, 0);
});
