// The ordered index against a plain sorted-array model: random inserts/deletes (keyed and counted),
// seeks by key and position, range counts, sliced builds, and frozen snapshots that keep their
// contents while the live index changes under them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Value } from '../common/types.ts';
import { FrozenIndex, IndexBuild, OrderedIndex, type IndexView } from './ordered-index.ts';
import { compareValues } from '../common/values.ts';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';

/** Every copy in order, as JSON (a row with count 3 appears three times). */
function flatten(index: IndexView): string[] {
  const out: string[] = [];
  for (const [row, n] of index.entries()) for (let i = 0; i < n; i++) out.push(JSON.stringify(row));
  return out;
}

function modelOf(rows: Map<string, { row: Value[]; count: number }>, order: readonly number[]): string[] {
  const sorted = [...rows.values()].sort((a, b) => {
    for (const c of order) {
      const d = compareValues(a.row[c] as Value, b.row[c] as Value);
      if (d !== 0) return d;
    }
    return 0;
  });
  const out: string[] = [];
  for (const e of sorted) for (let i = 0; i < e.count; i++) out.push(JSON.stringify(e.row));
  return out;
}

test('keyed: random inserts, updates and deletes keep the rows in key order', () => {
  const rand = mulberry32(7);
  const index = new OrderedIndex([0], false, 64);
  const model = new Map<string, { row: Value[]; count: number }>();
  for (let step = 0; step < 20_000; step++) {
    const k = Math.floor(rand() * 3000);
    const key = String(k);
    const existing = model.get(key);
    if (existing !== undefined && rand() < 0.5) {
      index.remove(existing.row, 1);
      model.delete(key);
    } else if (existing !== undefined) {
      const next: Value[] = [k, Math.floor(rand() * 100)];
      index.apply([existing.row, next], [-1, 1]);
      model.set(key, { row: next, count: 1 });
    } else {
      const row: Value[] = [k, step];
      index.insert(row, 1);
      model.set(key, { row, count: 1 });
    }
  }
  assert.deepEqual(flatten(index), modelOf(model, [0]));
  assert.equal(index.size, model.size);
  const all = modelOf(model, [0]);
  for (const offset of [0, 1, 511, 512, 1000, all.length - 1, all.length]) {
    const c = index.cursorAt(offset);
    assert.equal(c.done, offset >= all.length);
    if (!c.done) assert.equal(JSON.stringify(c.row), all[offset]);
    assert.equal(c.offset(), Math.min(offset, all.length));
  }
});

test('counted: multiplicities, cursors inside a row and prefix counts', () => {
  const rand = mulberry32(11);
  const index = new OrderedIndex([0, 1], true, 64);
  const model = new Map<string, { row: Value[]; count: number }>();
  for (let step = 0; step < 10_000; step++) {
    const row: Value[] = [Math.floor(rand() * 40), rand() < 0.1 ? null : Math.floor(rand() * 40)];
    const key = JSON.stringify(row);
    const e = model.get(key);
    if (e !== undefined && rand() < 0.4) {
      const n = 1 + Math.floor(rand() * e.count);
      index.remove(e.row, n);
      if (n === e.count) model.delete(key);
      else e.count -= n;
    } else {
      const n = 1 + Math.floor(rand() * 3);
      index.insert(e?.row ?? row, n);
      if (e === undefined) model.set(key, { row, count: n });
      else e.count += n;
    }
  }
  const all = modelOf(model, [0, 1]);
  assert.deepEqual(flatten(index), all);
  assert.equal(index.size, all.length);
  // After two copies of a row that has several, the next copy is the third.
  const many = [...model.values()].find((e) => e.count >= 3);
  assert.ok(many !== undefined);
  const after = index.cursorAfter(many.row, 2);
  assert.equal(after.dup, 2);
  assert.equal(JSON.stringify(after.row), JSON.stringify(many.row));
  assert.equal(after.offset(), all.indexOf(JSON.stringify(many.row)) + 2);
  // Prefix counts against the model.
  for (let g = 0; g < 40; g += 7) {
    const want = [...model.values()].filter((e) => e.row[0] === g).reduce((s, e) => s + e.count, 0);
    assert.equal(index.countPrefix([g]), want);
  }
  // NULL sorts last within its prefix.
  const withNull = [...model.values()].find((e) => e.row[1] === null);
  if (withNull !== undefined) {
    const c = index.seek([withNull.row[0] as Value, null]);
    assert.deepEqual(c.row, withNull.row);
  }
});

test('a frozen snapshot keeps its contents while the live index changes', () => {
  const rand = mulberry32(3);
  const index = new OrderedIndex([0], false, 64);
  const rows = new Map<number, Value[]>();
  for (let k = 0; k < 5000; k++) {
    const row: Value[] = [k, 0];
    rows.set(k, row);
    index.insert(row, 1);
  }
  const before = flatten(index);
  const frozen = index.freeze();
  assert.equal(index.freeze(), frozen, 'no change since: the same snapshot');
  frozen.release();
  for (let step = 0; step < 5000; step++) {
    const k = Math.floor(rand() * 6000);
    const old = rows.get(k);
    if (old !== undefined) {
      const next: Value[] = [k, step];
      index.apply([old, next], [-1, 1]);
      rows.set(k, next);
    } else {
      const row: Value[] = [k, step];
      index.insert(row, 1);
      rows.set(k, row);
    }
  }
  assert.deepEqual(flatten(frozen), before);
  assert.equal(frozen.size, 5000);
  assert.ok(index.retainedBytes > 0, 'copies made for the snapshot are accounted');
  const second = index.freeze();
  assert.notEqual(second, frozen);
  assert.deepEqual(flatten(second), flatten(index));
  frozen.release();
  second.release();
  assert.equal(index.snapshots, 0);
  assert.equal(index.retainedBytes, 0);
  assert.ok(second instanceof FrozenIndex);
});

test('a sliced build gives the same index as inserting row by row, whatever the slice size', () => {
  const rand = mulberry32(5);
  const rows: Value[][] = [];
  const seen = new Set<number>();
  while (rows.length < 30_000) {
    const k = Math.floor(rand() * 1_000_000);
    if (seen.has(k)) continue;
    seen.add(k);
    rows.push([k, `s${k}`]);
  }
  const build = new IndexBuild([0], 64, rows.slice(), null);
  let slices = 0;
  while (!build.work(performance.now() - 1)) slices += 1;
  assert.ok(slices > 3, 'work stops at its deadline');
  const sorted = rows.slice().sort((a, b) => (a[0] as number) - (b[0] as number));
  assert.deepEqual(
    flatten(build.index),
    sorted.map((r) => JSON.stringify(r)),
  );
  const counted = new IndexBuild(
    [0, 1],
    64,
    rows.slice(0, 1000),
    rows.slice(0, 1000).map((_, i) => 1 + (i % 3)),
  );
  assert.equal(counted.work(Infinity), true);
  assert.equal(
    counted.index.size,
    rows.slice(0, 1000).reduce((s, _, i) => s + 1 + (i % 3), 0),
  );
  const empty = new IndexBuild([0], 64, [], null);
  assert.equal(empty.work(Infinity), true);
  assert.equal(empty.index.size, 0);
  assert.equal(empty.index.cursorAt(0).done, true);
});
