// The slot map against a Map under seeded random sets, deletes and re-inserts: the same rows, the same
// iteration order (also after compaction), and iterators opened mid-way that see later changes as a
// Map's iterator does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';
import type { Value } from '../common/types.ts';
import { groupIndexWork } from './group-index.ts';
import { SlotRowMap } from './slot-row-map.ts';

/** Keys of every kind a table key can be: small and large ints, -0, doubles, text, bigint text. */
function randomKey(rnd: () => number): Value {
  const r = rnd();
  const n = Math.floor(rnd() * 200);
  if (r < 0.4) return n;
  if (r < 0.5) return n * 1_000_003; // hashed ints (beyond the dense direct table)
  if (r < 0.55) return n === 0 ? -0 : -n;
  if (r < 0.65) return n + 0.5;
  if (r < 0.7) return 2 ** 40 + n; // beyond int32
  return `s${n}`;
}

type Op = (m: Map<Value, readonly Value[]> | SlotRowMap<Value>, k: Value, v: number) => unknown;
const set: Op = (m, k, v) => m.set(k, [k, v]) === m;
const del: Op = (m, k) => m.delete(k);
/** `add` (set only an absent key) and `take` (delete, returning the row): a Map's has+set, get+delete. */
const add: Op = (m, k, v) =>
  m instanceof SlotRowMap ? m.add(k, [k, v]) : !m.has(k) && m.set(k, [k, v]) === m;
const take: Op = (m, k) => {
  if (m instanceof SlotRowMap) return m.take(k);
  const row = m.get(k);
  m.delete(k);
  return row;
};
const OPS: readonly Op[] = [set, set, add, del, take];

// Each row is [key, value]: a map that reads its keys from the rows (a keyed table's) is run too.
for (const [seed, keyOf] of [1, 2, 3, 4, 5].flatMap(
  (s) =>
    [
      [s, null],
      [s, (row: readonly Value[]) => row[0] as Value],
    ] as const,
)) {
  test(`a slot map holds and orders rows as a Map does (seed ${seed}${keyOf === null ? '' : ', keys read from rows'})`, () => {
    const rnd = mulberry32(seed);
    const map = new Map<Value, readonly Value[]>();
    const slots = new SlotRowMap<Value>(16, 1, keyOf);
    // An iterator of each, opened part-way and advanced one step after every change.
    let mapIt: Iterator<[Value, readonly Value[]]> | null = null;
    let slotIt: Iterator<[Value, readonly Value[]]> | null = null;
    let compactions = 0;
    for (let i = 0; i < 5000; i++) {
      const k = randomKey(rnd);
      const op = OPS[Math.floor(rnd() * OPS.length)] as Op;
      assert.deepEqual(op(slots, k, i), op(map, k, i));
      assert.equal(slots.size, map.size);
      assert.deepEqual(slots.get(k), map.get(k));
      assert.equal(slots.has(k), map.has(k));
      if (mapIt === null && i % 500 === 100) {
        mapIt = map[Symbol.iterator]();
        slotIt = slots[Symbol.iterator]();
      }
      if (mapIt !== null && slotIt !== null) {
        const x: IteratorResult<[Value, readonly Value[]]> = mapIt.next();
        const y: IteratorResult<[Value, readonly Value[]]> = slotIt.next();
        assert.deepEqual(y, x);
        if (x.done === true) mapIt = slotIt = null;
      } else if (slots.wantsCompaction) {
        // Only with no iterator open, as the arrangement does it.
        slots.compact();
        compactions++;
      }
      if (i % 250 === 0) {
        assert.deepEqual([...slots], [...map]);
        assert.deepEqual([...slots.values()], [...map.values()]);
      }
    }
    assert.deepEqual([...slots], [...map]);
    assert.ok(compactions > 0, 'the schedule compacts');
    slots.clear();
    assert.equal(slots.size, 0);
    assert.deepEqual([...slots], []);
  });
}

test('-0 and 0 are one key, NaN is one key', () => {
  const slots = new SlotRowMap<Value>();
  slots.set(0, [0]);
  slots.set(-0, [1]);
  slots.set(NaN, [2]);
  slots.set(NaN, [3]);
  assert.equal(slots.size, 2);
  assert.deepEqual([...slots.values()], [[1], [3]]);
});

test('a compaction sizes its new index for the live keys: sparse keys in ascending order go direct, none moved later', () => {
  // A view's keyed rows: ids spread over a range ten times their number, in ascending slot order.
  const map = new SlotRowMap<Value>(16, 1);
  for (let i = 0; i < 20_000; i++) map.set(10 * i, [i]);
  for (let i = 0; i < 20_000; i++) if (i % 3 !== 0) map.delete(10 * i);
  assert.equal(map.wantsCompaction, true);
  const moved = groupIndexWork.movedToDirect;
  map.compact();
  // Keys the direct table covers once sized for 6,667 ids (it was left small, all of them hashed,
  // and the next set of a key past it moved the hashed ones it then covered).
  map.set(1_501, [-1]);
  map.set(20_001, [-2]);
  assert.equal(groupIndexWork.movedToDirect - moved, 0);
  for (let i = 0; i < 20_000; i += 3) assert.deepEqual(map.get(10 * i), [i]);
  assert.equal(map.get(10), undefined);
  assert.deepEqual(map.get(1_501), [-1]);
  assert.deepEqual(map.get(20_001), [-2]);
  assert.equal(map.size, 6_669);
});

test('takeMany takes as takes one by one do: absent and repeated keys, then the same rows and order', () => {
  for (const seed of [6, 7, 8]) {
    const rnd = mulberry32(seed);
    const map = new Map<Value, readonly Value[]>();
    const slots = new SlotRowMap<Value>(16, 1);
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 20; i++) {
        const k = randomKey(rnd);
        map.set(k, [k, round]);
        slots.set(k, [k, round]);
      }
      // A batch of keys to take: some held, some absent, some given twice.
      const keys: Value[] = [];
      for (let i = 0, n = Math.floor(rnd() * 12); i < n; i++) keys.push(randomKey(rnd));
      if (keys.length > 0) keys.push(keys[0] as Value);
      const out: (readonly Value[] | undefined)[] = [];
      slots.takeMany(keys, keys.length, out);
      const expected = keys.map((k) => {
        const row = map.get(k);
        map.delete(k);
        return row;
      });
      assert.deepEqual(out, expected);
      assert.equal(slots.size, map.size);
      if (slots.wantsCompaction) slots.compact();
    }
    assert.deepEqual([...slots], [...map]);
  }
});
