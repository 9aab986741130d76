// Unit tests of a long Top-N partition: a change costs work bounded by the unordered tail and one
// chunk of the far rows, not by the partition (counted, not timed), and random changes with copies,
// ties and refills leave the emitted Top-N equal to a plain sort of the rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRows } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { ZBatch } from '../zset.ts';
import { topNWork } from './topn-far-rows.ts';
import { TopNOp } from './topn-op.ts';
import { keyImage } from './topn-key-image.ts';
import { SortedPartition } from './topn-partition.ts';

const ORDER = [
  { index: 1, desc: true, nullsFirst: true },
  { index: 2, desc: false, nullsFirst: false },
];

/** Rows [partition, score, id], the top `to` by score descending, then id. */
function topN(to: number, distinctRows: boolean): TopNOp {
  const node: Extract<DataflowNode, { kind: 'topn' }> = {
    id: 1,
    kind: 'topn',
    inputs: [0],
    partitionBy: [0],
    orderBy: ORDER,
    rank: 'row_number',
    emitRank: false,
    from: 0,
    to,
    columns: [
      { name: 'p', type: T.int32 },
      { name: 'score', type: T.int32 },
      { name: 'id', type: T.int32 },
    ],
    stateId: 'v/topn1',
    ...(distinctRows ? { distinctRows: true as const } : {}),
  };
  return new TopNOp(node);
}

function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

function batchOf(rows: (readonly Value[])[], weights: number[]): ZBatch {
  return { rows, weights, consolidated: false };
}

test('a delete in a 100,000-row partition visits far fewer rows than the partition holds', () => {
  const n = 100_000;
  const op = topN(10, true);
  const rand = rng(7);
  const score = (id: number): number => (id * 7919) % 1_000_003;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(i);
  for (let i = n - 1; i > 0; i--) {
    const j = rand(i + 1);
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  for (let i = 0; i < n; i += 1000) {
    const rows = ids.slice(i, i + 1000).map((id) => [1, score(id), id]);
    op.step([
      batchOf(
        rows,
        rows.map(() => 1),
      ),
    ]);
  }
  // 1,000 scattered deletes (one batch), then 1,000 deletes of the current top, 10 at a time.
  let visited = topNWork.visited;
  const scattered = ids.slice(0, 1000).map((id) => [1, score(id), id]);
  op.step([
    batchOf(
      scattered,
      scattered.map(() => -1),
    ),
  ]);
  const perScattered = (topNWork.visited - visited) / 1000;
  const live = ids.slice(1000).sort((a, b) => score(b) - score(a) || a - b);
  visited = topNWork.visited;
  for (let k = 0; k < 100; k++) {
    const top = live.slice(k * 10, k * 10 + 10).map((id) => [1, score(id), id]);
    const out = op.step([
      batchOf(
        top,
        top.map(() => -1),
      ),
    ]);
    const added = out.rows.filter((_, i) => (out.weights[i] as number) > 0).map((r) => r[2] as number);
    assert.deepEqual(
      added.sort((a, b) => a - b),
      live.slice(k * 10 + 10, k * 10 + 20).sort((a, b) => a - b),
      `top after ${k + 1} batches`,
    );
  }
  const perTop = (topNWork.visited - visited) / 1000;
  assert.ok(perScattered < n / 20, `${perScattered} rows visited per scattered delete`);
  assert.ok(perTop < n / 20, `${perTop} rows visited per delete of a top row`);
});

test('random changes to a long partition (copies, ties, refills, general path) keep the top exact', () => {
  for (const distinct of [true, false]) {
    const to = 5;
    const op = topN(to, distinct);
    const rand = rng(distinct ? 11 : 12);
    const compare = compareRows(ORDER);
    const model = new Map<number, { row: readonly Value[]; count: number }>();
    const shown = new Map<string, number>();
    let nextId = 0;
    // The ids of the model's first rows after the last step: deletes there bring rows in (refills).
    let topIds: number[] = [];
    for (let step = 0; step < 3000; step++) {
      const rows: (readonly Value[])[] = [];
      const weights: number[] = [];
      const size = rand(4) === 0 ? 1 + rand(300) : 1;
      const inBatch = new Set<number>();
      const live = [...model.keys()];
      for (let k = 0; k < size; k++) {
        const r = rand(10);
        if (r < 6 || live.length === 0) {
          const id = nextId++;
          // Few scores: many rows of one image, told apart by the full compare; a rare NULL (first).
          const row = [1, rand(300) === 0 ? null : rand(400), id];
          const copies = !distinct && rand(20) === 0 ? 2 : 1;
          model.set(id, { row, count: copies });
          rows.push(row);
          weights.push(copies);
          inBatch.add(id);
        } else {
          const id =
            r === 6 && topIds.length > 0
              ? (topIds[rand(topIds.length)] as number)
              : (live[rand(live.length)] as number);
          if (!model.has(id)) continue;
          if (inBatch.has(id)) continue;
          inBatch.add(id);
          const held = model.get(id) as { row: readonly Value[]; count: number };
          // A copy of an equal row object (a delete by value), or one more copy without a key.
          const add = !distinct && rand(8) === 0;
          rows.push([...held.row]);
          weights.push(add ? 1 : -held.count);
          if (add) held.count++;
          else model.delete(id);
        }
      }
      const out = op.step([batchOf(rows, weights)]);
      out.rows.forEach((row, i) => {
        const key = JSON.stringify(row);
        const w = (shown.get(key) ?? 0) + (out.weights[i] as number);
        if (w === 0) shown.delete(key);
        else shown.set(key, w);
      });
      // The first `to` rows of the model by selection (a sort per step would dominate the test).
      const first: { row: readonly Value[]; count: number }[] = [];
      for (const e of model.values()) {
        if (first.length === to && compare(e.row, (first[to - 1] as { row: readonly Value[] }).row) >= 0)
          continue;
        let at = first.length;
        while (at > 0 && compare(e.row, (first[at - 1] as { row: readonly Value[] }).row) < 0) at--;
        first.splice(at, 0, e);
        if (first.length > to) first.pop();
      }
      topIds = first.map((e) => e.row[2] as number);
      const expected = new Map<string, number>();
      let left = to;
      for (const { row, count } of first) {
        if (left === 0) break;
        expected.set(JSON.stringify(row), Math.min(left, count));
        left -= Math.min(left, count);
      }
      assert.deepEqual(shown, expected, `step ${step} (distinct ${distinct})`);
    }
    assert.ok(model.size > 1500, `the partition grew to ${model.size} rows only`);
  }
});

test('a partition with far rows settles in full order (a row without an image, a checkpoint)', () => {
  const compare = compareRows(ORDER);
  const image = keyImage(ORDER);
  const part = new SortedPartition(true);
  const rows: (readonly Value[])[] = [];
  for (let i = 0; i < 3000; i++) rows.push([1, (i * 37) % 500, i]);
  rows.sort(compare);
  part.fill(
    rows,
    rows.map(() => 1),
    image,
  );
  part.spill(12, compare);
  assert.ok(part.far !== null && part.far.size > 2000, 'the sorted end moved to the far rows');
  const rand = rng(3);
  const model = [...rows];
  for (let i = 0; i < 2000; i++) {
    const row = [1, rand(600), 3000 + i];
    if (compare(row, model[part.sorted - 1] as readonly Value[]) <= 0) continue;
    part.pushTail(row, image(row), compare);
    model.push(row);
  }
  for (let i = 0; i < 1000; i++) {
    const row = model[part.sorted + rand(model.length - part.sorted)] as readonly Value[];
    const taken = part.takeTail([...row], image(row), compare);
    assert.equal(taken, row);
    model.splice(model.indexOf(row), 1);
  }
  assert.equal(part.length, model.length);
  assert.equal(part.find([...(model[2999] as Value[])], image(model[2999] as Value[]), compare)?.count, 1);
  part.dropImages(compare);
  model.sort(compare);
  assert.equal(part.far, null);
  assert.deepEqual(part.rows, model);
  assert.equal(part.sorted, model.length);
});
