// GroupIndex against a Map under random churn: int32 ids (the open-addressing half, with
// backward-shift deletes and growth) and other ids (the Map half) must answer exactly as a Map would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../common/types.ts';
import { GroupIndex, groupIndexWork, NO_SLOT } from './group-index.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('answers like a Map under random inserts and deletes of int and other ids', () => {
  const random = rng(7);
  const index = new GroupIndex();
  const model = new Map<Value, number>();
  // A small id space so deletes hit live ids and probe chains collide and wrap.
  const ids: Value[] = [];
  for (let i = 0; i < 300; i++) ids.push(i * 4096 - 600_000);
  // Small non-negative ids: the direct table, grown while dense, taking over hashed ids as it grows.
  for (let i = 0; i < 400; i++) ids.push(i * 7);
  for (let i = 0; i < 40; i++) ids.push(3000 + i * 1500);
  ids.push(-1, 2 ** 31 - 1, -(2 ** 31), 0.5, 2 ** 31, 'a', 'n5;', '');
  let slot = 0;
  for (let step = 0; step < 200_000; step++) {
    const id = ids[Math.floor(random() * ids.length)] as Value;
    if (model.has(id)) {
      if (random() < 0.6) {
        index.delete(id);
        model.delete(id);
      }
    } else if (random() < 0.7) {
      index.set(id, slot);
      model.set(id, slot);
      slot++;
    }
    if (step % 97 === 0) {
      for (const probe of ids)
        assert.equal(index.get(probe), model.get(probe) ?? NO_SLOT, `id ${String(probe)}`);
      assert.equal(index.size, model.size);
    }
  }
  // Grow past many resizes, then empty it again.
  for (let i = 0; i < 50_000; i++) {
    if (model.has(i)) continue;
    index.set(i, slot);
    model.set(i, slot++);
  }
  for (const [id, s] of model) assert.equal(index.get(id), s);
  for (const id of [...model.keys()]) {
    index.delete(id);
    model.delete(id);
  }
  assert.equal(index.size, 0);
  for (const probe of ids) assert.equal(index.get(probe), NO_SLOT);
});

test('-0 and 0 are one id, as in a Map', () => {
  const index = new GroupIndex();
  index.set(-0, 3);
  assert.equal(index.get(0), 3);
  index.delete(0);
  assert.equal(index.get(-0), NO_SLOT);
  assert.equal(index.size, 0);
});

test('an id past any direct table its ids allow is hashed without looking for a length', () => {
  const index = new GroupIndex();
  for (let i = 0; i < 10; i++) index.set(i, i);
  const tries = groupIndexWork.growthTries;
  // Sparse ids far past the direct table (a view's keys among a million ids): each used to look for
  // a length by doubling, then give up.
  for (let i = 0; i < 1_000; i++) index.set(1_000_000 + 7 * i, 10 + i);
  assert.equal(groupIndexWork.growthTries - tries, 0);
  for (let i = 0; i < 1_000; i++) assert.equal(index.get(1_000_000 + 7 * i), 10 + i);
  // Dense ids still grow it.
  for (let i = 10; i < 5_000; i++) index.set(i, 2_000 + i);
  assert.ok(groupIndexWork.growthTries - tries > 0);
  for (let i = 0; i < 5_000; i++) assert.equal(index.get(i), i < 10 ? i : 2_000 + i);
});

test('readAhead sums the direct cells of the ids in the direct table, and changes nothing', () => {
  const index = new GroupIndex();
  for (let i = 0; i < 100; i++) index.set(i, 3 * i);
  index.set(-5, 7);
  index.set(1_000_000, 8);
  index.set('a', 9);
  // a cell holds slot + 1; an absent direct id reads 0; hashed, Map and non-int ids are skipped
  const ids: Value[] = [0, 1, 99, -5, 1_000_000, 'a', null, 500, 2.5, 2];
  assert.equal(index.readAhead(ids, ids.length), 1 + 4 + 298 + 0 + 7);
  assert.equal(index.readAhead(ids, 2), 1 + 4);
  assert.equal(index.get(-5), 7);
  assert.equal(index.get(1_000_000), 8);
  assert.equal(index.size, 103);
});
