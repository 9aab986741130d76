// The per-request key table against a fresh Map per request: the same answers over many requests
// (the generation stamp forgets the last request's keys without clearing), across growth, for int,
// -0, large, fractional and text keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';
import type { Value } from '../common/types.ts';
import { ABSENT, RequestKeys } from './table-request-keys.ts';

function randomKey(rnd: () => number, spread: number): Value {
  const r = rnd();
  const n = Math.floor(rnd() * spread);
  if (r < 0.6) return n;
  if (r < 0.7) return -n;
  if (r < 0.75) return n === 0 ? -0 : n * 7919;
  if (r < 0.8) return n + 0.25;
  if (r < 0.85) return 2 ** 33 + n;
  return `k${n}`;
}

test('a request sees exactly the keys it set, whatever earlier requests set', () => {
  const rnd = mulberry32(7);
  const keys = new RequestKeys();
  for (let request = 0; request < 300; request++) {
    keys.begin();
    const model = new Map<Value, number>();
    const size = Math.floor(rnd() * (request % 10 === 0 ? 3000 : 60));
    for (let i = 0; i < size; i++) {
      const k = randomKey(rnd, 4 * size + 1);
      assert.equal(keys.get(k), model.get(k) ?? ABSENT);
      if (rnd() < 0.5) {
        keys.set(k, i);
        model.set(k, i);
      } else {
        // claim: the earlier value stays; an absent key takes this one.
        assert.equal(keys.claim(k, i), model.get(k) ?? ABSENT);
        if (!model.has(k)) model.set(k, i);
      }
    }
    for (let i = 0; i < 50; i++) {
      const k = randomKey(rnd, 4 * size + 1);
      assert.equal(keys.get(k), model.get(k) ?? ABSENT);
    }
  }
});

test('-0 is the key 0', () => {
  const keys = new RequestKeys();
  keys.begin();
  keys.set(-0, 3);
  assert.equal(keys.get(0), 3);
  assert.equal(keys.claim(0, 4), 3);
  keys.begin();
  assert.equal(keys.get(0), ABSENT);
});
