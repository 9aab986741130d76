// The Reduce's change buffer (reduce-changes.ts): small steps are lent in columns of exactly their
// length, written in place when a step makes as many changes as the one before, and a lent batch
// expires when the next step writes. Counts the steps lent without a copy, not time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import type { ZBatch } from '../zset.ts';
import { ChangeBuffer } from './reduce-changes.ts';

const records = { data: new Float64Array(16), stride: 4 };

function rowsOf(batch: { cols: readonly (readonly Value[])[]; weights: readonly number[] }): string[] {
  return batch.weights.map(
    (w, i) => `${w > 0 ? '+' : '-'}[${batch.cols.map((c) => String(c[i])).join(',')}]`,
  );
}

/** A group's -old/+new, the old row given as an object (flags 0: nothing held in the record). */
function pair(buffer: ChangeBuffer, key: number, old: number, now: number): void {
  buffer.retract(records, 0, [key, old], 0, 1);
  buffer.insert([key, now]);
}

test('steps of the same few changes are written in place and lent with no copy', () => {
  const buffer = new ChangeBuffer(2);
  pair(buffer, 1, 10, 11);
  const first = buffer.take();
  assert.deepEqual(rowsOf(first), ['-[1,10]', '+[1,11]']);
  assert.equal(buffer.uncopiedSteps, 0, 'the first step of its length is copied into the kept columns');
  pair(buffer, 2, 20, 21);
  assert.throws(() => first.weights.length, /read after its producer reused it/);
  const second = buffer.take();
  assert.deepEqual(rowsOf(second), ['-[2,20]', '+[2,21]']);
  for (let k = 0; k < 10; k++) {
    pair(buffer, k, k, k + 1);
    assert.deepEqual(rowsOf(buffer.take()), [`-[${k},${k}]`, `+[${k},${k + 1}]`]);
  }
  assert.equal(buffer.uncopiedSteps, 11, 'every step after the first wrote its changes in place');
});

test('a step of another count spills, and its batch still holds exactly its changes', () => {
  const buffer = new ChangeBuffer(2);
  pair(buffer, 1, 10, 11);
  buffer.take();
  // more than the kept two: the two written so far move to the columns of four, lent as they are
  pair(buffer, 1, 11, 12);
  pair(buffer, 2, 20, 21);
  const four = buffer.take();
  assert.deepEqual(rowsOf(four), ['-[1,11]', '+[1,12]', '-[2,20]', '+[2,21]']);
  assert.equal(four.weights.length, 4);
  assert.equal(buffer.uncopiedSteps, 1);
  // fewer: one insert, copied into columns of one
  buffer.insert([3, 30]);
  const one = buffer.take();
  assert.deepEqual(rowsOf(one), ['+[3,30]']);
  assert.throws(() => four.cols.length, /read after its producer reused it/);
  // many: past four, to the scratch, trimmed to the step's length
  for (let k = 0; k < 10; k++) pair(buffer, k, k, k + 1);
  const twenty = buffer.take();
  assert.equal(twenty.weights.length, 20);
  assert.deepEqual(rowsOf(twenty).slice(18), ['-[9,9]', '+[9,10]']);
  // none, then two again
  assert.equal(buffer.take().weights.length, 0);
  pair(buffer, 5, 50, 51);
  assert.deepEqual(rowsOf(buffer.take()), ['-[5,50]', '+[5,51]']);
  assert.equal(buffer.uncopiedSteps, 1, 'the others were copied into the columns of their count');
});

test('a two-column change pair written in one call holds what retract and insert would', () => {
  const random = (() => {
    let s = 9;
    return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  })();
  const byPairs = new ChangeBuffer(2);
  const byRows = new ChangeBuffer(2);
  let taken = 0;
  // steps of 0 to 300 changes: the kept columns of one to four, the spills, the scratch and its trim
  for (const pairs of [1, 1, 2, 0, 1, 3, 1, 1, 150, 2, 1, 0, 40, 1, 1]) {
    for (let p = 0; p < pairs; p++) {
      const key = Math.floor(random() * 50);
      const old = Math.floor(random() * 1000);
      if (random() < 0.2) {
        // a new group: +new alone (odd counts: the columns of one and three)
        byPairs.put2(1, key, old);
        byRows.insert([key, old]);
      } else {
        byPairs.replace2(key, old, old + 1);
        pair(byRows, key, old, old + 1);
      }
    }
    const a = byPairs.take();
    const b = byRows.take();
    assert.deepEqual(rowsOf(a), rowsOf(b));
    assert.equal(a.cols[0]?.length, a.weights.length);
    taken += a.weights.length;
  }
  assert.ok(taken > 300);
  assert.equal(byPairs.uncopiedSteps, byRows.uncopiedSteps, 'lent in place as often');
});

test('a step started by clear expires the batch lent before, and its pair is written in place', () => {
  const buffer = new ChangeBuffer(2);
  buffer.replace2(1, 10, 11);
  const first = buffer.take();
  assert.deepEqual(rowsOf(first), ['-[1,10]', '+[1,11]']);
  for (let k = 0; k < 5; k++) {
    buffer.clear();
    assert.throws(() => first.weights.length, /read after its producer reused it/);
    buffer.replace2(k, k, k + 1);
    assert.deepEqual(rowsOf(buffer.take()), [`-[${k},${k}]`, `+[${k},${k + 1}]`]);
  }
  assert.equal(buffer.uncopiedSteps, 5, 'every step after the first wrote its pair in place');
});

test("the sum of a taken batch's weights is counted as its changes are written, and a cleared step's is dropped", () => {
  const buffer = new ChangeBuffer(2);
  let seed = 7;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  let previous: ZBatch | null = null;
  for (let step = 0; step < 200; step++) {
    buffer.clear();
    // the batch lent before has expired: its count with it
    if (previous !== null) assert.equal(buffer.netWeightOf(previous), null);
    // a step that threw: its changes are dropped by the next clear, and so is their count
    if (step % 17 === 3) {
      buffer.put2(1, 9, 9);
      buffer.clear();
    }
    const n = [0, 1, 2, 3, 4, 5, 100, 300][next(8)] as number;
    for (let i = 0; i < n; i++) {
      const kind = next(4);
      if (kind === 0) buffer.put2(next(2) === 0 ? -1 : 1, i, i);
      else if (kind === 1) buffer.replace2(i, i, i + 1);
      else if (kind === 2) buffer.insert([i, i]);
      else buffer.retract(records, 0, [i, i], 0, 1);
    }
    const taken = buffer.take();
    const sum = taken.weights.reduce((a, w) => a + w, 0);
    assert.equal(buffer.netWeightOf(taken), sum, `step ${step} of ${n} changes`);
    assert.equal(buffer.netWeightOf({ rows: [], weights: [], consolidated: true }), null);
    previous = taken;
  }
});

test('values the SQL allows come back exactly at every step size, numeric columns or not', () => {
  const big = 2n ** 60n + 1n;
  const odd: Value[] = [-0, null, big, 'text', 0.1, Number.MAX_SAFE_INTEGER + 2, -1.5];
  const buffer = new ChangeBuffer(2);
  // numbers alone first (the columns stay numeric), then every kind of value in both columns
  const steps = [1, 2, 4, 3, 200, 2, 1, 2, 4, 200, 2, 0, 1];
  for (let s = 0; s < steps.length; s++) {
    const n = steps[s] as number;
    const expected: [number, Value, Value][] = [];
    for (let i = 0; i < n; i++) {
      const key: Value = s < 5 ? i * 0.5 : (odd[(i + s) % odd.length] as Value);
      const value: Value = s < 5 ? -i : (odd[(i * 3 + s) % odd.length] as Value);
      if (i % 3 === 0) buffer.put2(1, key, value);
      else if (i % 3 === 1) buffer.insert([key, value]);
      else buffer.retract(records, 0, [key, value], 0, 1);
      expected.push([i % 3 === 2 ? -1 : 1, key, value]);
    }
    const batch = buffer.take();
    assert.equal(batch.weights.length, n);
    for (let i = 0; i < n; i++) {
      const [w, key, value] = expected[i] as [number, Value, Value];
      assert.equal(batch.weights[i], w);
      assert.ok(Object.is(batch.cols[0]?.[i], key), `step ${s}, change ${i}: key ${String(key)}`);
      assert.ok(Object.is(batch.cols[1]?.[i], value), `step ${s}, change ${i}: value ${String(value)}`);
    }
  }
});

test('a buffer that first writes a NULL or text mid-step keeps every change written before it', () => {
  // Numbers first (held in the numeric buffer's columns), then a value of another kind by each write
  // path, at a kept size, a spill and the scratch: the buffer moves to other columns mid-step.
  const others: Value[] = [null, 'text', 2n ** 60n + 1n];
  for (const n of [1, 3, 4, 150]) {
    for (let path = 0; path < 4; path++) {
      const buffer = new ChangeBuffer(2);
      buffer.put2(1, 7, -0);
      const lent = buffer.take();
      const expected: string[] = [];
      for (let i = 0; i < n; i++) {
        buffer.put2(1, i, i + 0.5);
        expected.push(`+[${i},${i + 0.5}]`);
      }
      const odd = others[path % others.length] as Value;
      if (path === 0) buffer.put2(-1, odd, 1);
      else if (path === 1) buffer.insert([2, odd]);
      else if (path === 2) buffer.retract(records, 0, [odd, 3], 0, 1);
      else buffer.replace2(4, 5, odd);
      if (path === 0) expected.push(`-[${String(odd)},1]`);
      else if (path === 1) expected.push(`+[2,${String(odd)}]`);
      else if (path === 2) expected.push(`-[${String(odd)},3]`);
      else expected.push('-[4,5]', `+[4,${String(odd)}]`);
      buffer.put2(1, 9, 9);
      expected.push('+[9,9]');
      assert.throws(() => lent.weights.length, /read after its producer reused it/);
      const batch = buffer.take();
      assert.deepEqual(rowsOf(batch), expected, `n ${n}, path ${path}`);
      // and the steps after it, numbers again, as written (-0 kept)
      buffer.put2(-1, -0, 2 ** 53 + 2);
      const after = buffer.take();
      assert.ok(Object.is(after.cols[0]?.[0], -0));
      assert.equal(after.cols[1]?.[0], 2 ** 53 + 2);
    }
  }
});

test('a step a few changes shorter than the last is trimmed by pops, not the length setter', () => {
  const odd: Value[] = [-0, null, 2n ** 60n + 1n, 'text', 0.1, 2 ** 53 + 2];
  for (const numeric of [true, false]) {
    const buffer = new ChangeBuffer(2);
    // step sizes near one another (a batch of 100 orders' changes), drops by far more than the
    // pops' limit, and growth after them
    const sizes = [200, 196, 204, 203, 130, 150, 211, 200, 5000, 120, 190, 6, 200, 137];
    let setterExpected = 0;
    let scratchLength = 0;
    for (let s = 0; s < sizes.length; s++) {
      const n = sizes[s] as number;
      if (scratchLength - n > 64) setterExpected += 3; // two columns and the weights
      const expected: [number, Value, Value][] = [];
      while (expected.length < n) {
        const i = expected.length;
        const key: Value = numeric ? i * 0.5 : (odd[(i + s) % odd.length] as Value);
        const value: Value = numeric ? -i : (odd[(i * 5 + s) % odd.length] as Value);
        if (i % 3 === 0 && n - i >= 2) {
          buffer.replace2(key, value, s);
          expected.push([-1, key, value], [1, key, s]);
        } else {
          buffer.put2(1, key, value);
          expected.push([1, key, value]);
        }
      }
      const batch = buffer.take();
      scratchLength = n;
      assert.equal(batch.weights.length, n, `step ${s}`);
      assert.equal(batch.cols[0]?.length, n);
      assert.equal(batch.cols[1]?.length, n);
      for (let i = 0; i < n; i++) {
        const [w, key, value] = expected[i] as [number, Value, Value];
        assert.equal(batch.weights[i], w);
        assert.ok(Object.is(batch.cols[0]?.[i], key), `step ${s}, change ${i}: key ${String(key)}`);
        assert.ok(Object.is(batch.cols[1]?.[i], value), `step ${s}, change ${i}: value ${String(value)}`);
      }
    }
    // at base every one of these steps set the three lengths; here only the three large drops
    assert.equal(buffer.lengthSets, setterExpected, numeric ? 'numbers' : 'values');
    assert.equal(setterExpected, 9);
  }
});
