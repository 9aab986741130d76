// The lookup-and-mark pass: a middling step marks its groups in its own small table and leaves the
// by-slot marks untouched, with the same touch indexes and first-touch order as the by-slot marks;
// a small group set marks by slot at every size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import { lookupAndMark, StepTouches, type GroupLookup, type StepRows } from './reduce-lookup.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function lookup(touchSlots = 1 << 16): GroupLookup {
  const index = new GroupIndex();
  let slots = 0;
  const g: GroupLookup = {
    index,
    keyCount: 1,
    keyTexts: null,
    zeroSign: null,
    touched: [],
    count: 0,
    touches: new Int32Array(touchSlots),
    allocate: (id) => {
      const slot = slots++;
      index.set(id, slot);
      return slot;
    },
    stepTouches: new StepTouches(),
    sink: 0,
  };
  return g;
}

function rows(ids: readonly Value[], dropped: ReadonlySet<number>): StepRows {
  const n = ids.length;
  const rowSlots = new Int32Array(n);
  for (const i of dropped) rowSlots[i] = NO_SLOT;
  return {
    n,
    weights: ids.map(() => 1),
    rowSlots,
    rowTouches: new Int32Array(n),
    rowIds: [...ids],
    rowKeys: [...ids],
  };
}

/** What every step must produce: touch indexes by first appearance, groups in that order. */
function check(g: GroupLookup, s: StepRows, dropped: ReadonlySet<number>): void {
  const order = new Map<number, number>();
  for (let i = 0; i < s.n; i++) {
    if (dropped.has(i)) {
      assert.equal(s.rowSlots[i], NO_SLOT);
      continue;
    }
    const slot = s.rowSlots[i] as number;
    assert.equal(slot, g.index.get(s.rowIds[i] as Value));
    if (!order.has(slot)) order.set(slot, order.size);
    assert.equal(s.rowTouches[i], order.get(slot));
  }
  assert.equal(g.count, order.size);
  assert.deepEqual(g.touched.slice(0, g.count), [...order.keys()]);
}

test('a middling step marks in its own table: the by-slot marks are never written', () => {
  const random = rng(11);
  const g = lookup();
  for (const n of [64, 100, 333, 1024]) {
    for (let step = 0; step < 30; step++) {
      // repeats within a step (a small id space at times), and rows filtered out
      const space = step % 3 === 0 ? 40 : 50_000;
      const ids = Array.from({ length: n }, () => Math.floor(random() * space));
      const dropped = new Set<number>();
      for (let i = 0; i < n; i += 7 + (step % 5)) dropped.add(i);
      const before = g.stepTouches.steps;
      const s = rows(ids, dropped);
      assert.equal(lookupAndMark(g, s), false, 'no by-slot marks to clear');
      assert.equal(g.stepTouches.steps, before + 1);
      check(g, s, dropped);
      assert.ok(
        g.touches.every((t) => t === 0),
        'by-slot marks untouched',
      );
      g.count = 0;
    }
  }
});

test('small and large steps still mark by slot, with the same touch order', () => {
  const random = rng(5);
  const g = lookup();
  for (const n of [10, 63, 1025, 4000]) {
    const ids = Array.from({ length: n }, () => Math.floor(random() * (n / 2)));
    const s = rows(ids, new Set([3]));
    assert.equal(lookupAndMark(g, s), true);
    assert.equal(g.stepTouches.steps, 0);
    check(g, s, new Set([3]));
    for (let t = 0; t < g.count; t++) g.touches[g.touched[t] as number] = 0;
    g.count = 0;
  }
});

test('a small group set marks a middling step by slot, with the same touch order', () => {
  // marks of ≤ 4,096 slots (a histogram's buckets) are in L1: no step table, no read-ahead
  const random = rng(3);
  const g = lookup(4096);
  for (const n of [64, 200, 1024, 3000]) {
    for (let step = 0; step < 10; step++) {
      const ids = Array.from({ length: n }, () => Math.floor(random() * (step % 2 === 0 ? 150 : 4000)));
      const dropped = new Set([1, n - 1]);
      const s = rows(ids, dropped);
      assert.equal(lookupAndMark(g, s), true, 'by-slot marks to clear');
      check(g, s, dropped);
      for (let t = 0; t < g.count; t++) g.touches[g.touched[t] as number] = 0;
      g.count = 0;
    }
  }
  assert.equal(g.stepTouches.steps, 0);
});

test('by-slot steps of new groups and of repeats alternate loops, with the same touch order', () => {
  // a step whose rows nearly all touch a group first sets `mostlyNew`: the next marks with the branch
  for (const slots of [4096, 1 << 16]) {
    const random = rng(slots);
    const g = lookup(slots);
    let next = 0;
    const seen: boolean[] = [];
    for (let step = 0; step < 12; step++) {
      const n = step % 4 < 2 ? 100 + step : 1100 + step;
      const fresh = step % 3 !== 2;
      const ids = Array.from({ length: n }, () => (fresh ? next++ % 4000 : Math.floor(random() * 30)));
      const s = rows(ids, new Set([0]));
      lookupAndMark(g, s);
      check(g, s, new Set([0]));
      seen.push(g.stepTouches.mostlyNew);
      for (let t = 0; t < g.count; t++) g.touches[g.touched[t] as number] = 0;
      g.count = 0;
    }
    assert.ok(seen.includes(true) && seen.includes(false), 'both loops ran');
  }
});

test('a keyed step of two rows sets no by-slot marks, with the same touch order', () => {
  const g = lookup();
  // one group twice, two groups, new groups, a row filtered out on either side
  const cases: [Value[], number[]][] = [
    [[7, 7], []],
    [[7, 8], []],
    [[9, 10], []],
    [[11, 11], []],
    [[7, 12], [0]],
    [[13, 7], [1]],
    [
      [7, 8],
      [0, 1],
    ],
  ];
  for (const [ids, drop] of cases) {
    const dropped = new Set(drop);
    const s = rows(ids, dropped);
    assert.equal(lookupAndMark(g, s), false, 'no by-slot marks to clear');
    check(g, s, dropped);
    assert.ok(
      g.touches.every((t) => t === 0),
      'by-slot marks untouched',
    );
    g.count = 0;
  }
});
