// Unit tests of the columnar Top-N partition: the key image is monotone in the ORDER BY (so a search
// over doubles agrees with the full compare) for every kind of value, and random inserts and deletes
// (copies, ties, NULLs, NaN, -0, text, numerics, bigints) leave the partition equal to a plain sort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal } from '../../common/decimal.ts';
import { Interval } from '../../common/time/interval.ts';
import { compareRows, type SortKey } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { keyImage } from './topn-key-image.ts';
import { SortedPartition } from './topn-partition.ts';

function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

/** Value pools of one type each (a column holds one type), with the edge cases of their order. */
const POOLS: Record<string, readonly Value[]> = {
  int: [null, 0, -0, 1, -1, 2, 3, 7, 100, -100, 2 ** 40, 2 ** 53 + 2],
  float: [null, NaN, Infinity, -Infinity, 0, -0, 0.5, -0.5, 1e-300, 1.5, 2, 1e300],
  bigint: [null, 0, 5, 2n ** 60n, 2n ** 60n + 1n, -(2n ** 60n), -(2n ** 60n) - 1n, 9007199254740993n],
  numeric: [
    null,
    new Decimal(15, 1),
    new Decimal(150, 2),
    new Decimal(-15, 1),
    new Decimal(0, 0),
    new Decimal(1n, 30),
    new Decimal(2n, 30),
    new Decimal(10n ** 25n + 1n, 0),
    new Decimal(10n ** 25n, 0),
  ],
  text: [
    null,
    '',
    'a',
    'a\u0000',
    'ab',
    'abc',
    'abcd',
    'abce',
    'b',
    'B',
    '\uffff\uffff\uffff',
    '\uffff\uffff\uffff!',
  ],
  bool: [null, false, true],
  interval: [null, new Interval(0, 1, 0), new Interval(0, 0, 86_400_000_000), new Interval(1, 0, 0)],
};

const ORDERS: readonly SortKey[][] = [
  [{ index: 1, desc: false, nullsFirst: false }],
  [{ index: 1, desc: true, nullsFirst: true }],
  [{ index: 1, desc: true, nullsFirst: false }],
  [
    { index: 1, desc: false, nullsFirst: true },
    { index: 2, desc: true, nullsFirst: false },
  ],
];

test('the key image never orders two rows against the full compare', () => {
  for (const [type, pool] of Object.entries(POOLS)) {
    for (const order of ORDERS) {
      const compare = compareRows(order);
      const image = keyImage(order);
      for (const x of pool)
        for (const y of pool) {
          const a = [0, x, 1];
          const b = [0, y, 2];
          const c = compare(a, b);
          const fa = image(a);
          const fb = image(b);
          if (type === 'interval' && x !== null) assert.ok(Number.isNaN(fa), 'an interval has no image');
          if (Number.isNaN(fa) || Number.isNaN(fb)) continue;
          if (c < 0)
            assert.ok(
              fa <= fb,
              `${type} ${JSON.stringify(order)}: ${String(x)} before ${String(y)}, ${fa} > ${fb}`,
            );
        }
    }
  }
});

/** One step the way TopNOp applies it: search, then a new row or more/fewer copies of a kept one. */
function apply(
  part: SortedPartition,
  row: readonly Value[],
  w: number,
  compare: (a: readonly Value[], b: readonly Value[]) => number,
  image: (row: readonly Value[]) => number,
): void {
  let f = image(row);
  if (f !== f) part.dropImages(compare);
  if (part.keys === null) f = NaN;
  const at = part.search(row, f, compare);
  if (part.holds(at, row, f, compare)) part.addCopies(at, w);
  else {
    assert.ok(w > 0, 'a retraction of an absent row');
    part.insertAt(at, row, f, w);
  }
}

function checkAgainstSort(
  part: SortedPartition,
  live: Map<string, { row: readonly Value[]; count: number }>,
  compare: (a: readonly Value[], b: readonly Value[]) => number,
  image: (row: readonly Value[]) => number,
  what: string,
): void {
  const expected = [...live.values()].sort((a, b) => compare(a.row, b.row));
  assert.equal(part.length, expected.length, `${what}: rows`);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as { row: readonly Value[]; count: number };
    assert.equal(compare(part.rows[i] as readonly Value[], e.row), 0, `${what}: row ${i}`);
    assert.equal(part.count(i), e.count, `${what}: copies of row ${i}`);
    if (part.keys !== null) assert.equal(part.keys[i], image(e.row), `${what}: image of row ${i}`);
  }
  assert.ok(
    part.singleCopiesUpTo(expected.length) === expected.every((e) => e.count === 1),
    `${what}: copies`,
  );
}

test('random inserts and deletes keep a partition equal to a plain sort, for every type and order', () => {
  let steps = 0;
  for (const [type, pool] of Object.entries(POOLS)) {
    for (let o = 0; o < ORDERS.length; o++) {
      const order = ORDERS[o] as SortKey[];
      const compare = compareRows(order);
      const image = keyImage(order);
      const rnd = rng(7 + o * 31 + type.length * 977);
      const part = new SortedPartition(true);
      const live = new Map<string, { row: readonly Value[]; count: number }>();
      const idOf = (row: readonly Value[]): string =>
        row
          .map((v) =>
            typeof v === 'object' && v !== null ? `o${v.toString()}` : Object.is(v, -0) ? '-0' : String(v),
          )
          .join('|');
      for (let step = 0; step < 1_500; step++) {
        const existing = [...live.values()];
        const remove = existing.length > 0 && rnd(100) < 40;
        let row: readonly Value[];
        let w: number;
        if (remove) {
          const e = existing[rnd(existing.length)] as { row: readonly Value[]; count: number };
          // An equal row of another array: found by value, not by reference.
          row = rnd(2) === 0 ? e.row : [...e.row];
          w = -(1 + rnd(e.count));
        } else {
          row = [0, pool[rnd(pool.length)] as Value, rnd(6)];
          w = rnd(10) === 0 ? 2 : 1;
        }
        const id = idOf(row);
        const count = (live.get(id)?.count ?? 0) + w;
        if (count === 0) live.delete(id);
        else live.set(id, { row: live.get(id)?.row ?? row, count });
        apply(part, row, w, compare, image);
        checkAgainstSort(part, live, compare, image, `${type} order ${o} step ${step}`);
        steps++;
      }
      if (type !== 'interval') assert.ok(part.keys !== null, `${type}: images kept`);
      else assert.equal(part.keys, null, 'intervals: searched by compare');
    }
  }
  assert.ok(steps > 40_000);
});

test('a partition grows to 1,000 rows, shrinks to 10 and refills from sorted rows', () => {
  const order: SortKey[] = [{ index: 1, desc: true, nullsFirst: false }];
  const compare = compareRows(order);
  const image = keyImage(order);
  const part = new SortedPartition(true);
  const rows: (readonly Value[])[] = [];
  for (let i = 0; i < 1_000; i++) rows.push([0, (i * 7919) % 1_000, i]);
  for (const row of rows) apply(part, row, 1, compare, image);
  assert.equal(part.keys?.length, 1_000);
  for (let i = 0; i < 990; i++) apply(part, rows[i] as readonly Value[], -1, compare, image);
  assert.equal(part.length, 10);
  assert.equal(part.keys?.length, 10);
  const live = new Map(rows.slice(990).map((row) => [String(row), { row, count: 1 }]));
  checkAgainstSort(part, live, compare, image, 'after shrinking');
  const refill = new SortedPartition(true);
  const sorted = rows.slice().sort(compare);
  refill.fill(
    sorted,
    sorted.map((_, i) => (i % 3 === 0 ? 2 : 1)),
    image,
  );
  assert.equal(refill.length, 1_000);
  assert.equal(refill.singleCopiesUpTo(1), false);
  assert.equal(
    refill.search(sorted[500] as readonly Value[], image(sorted[500] as readonly Value[]), compare),
    500,
  );
});
