// An insert-only TopN (its input never retracts) keeps only the rows that can still rank inside its
// kept range: on random insert-only input — ties, copies, OFFSET, each rank kind, one row or many per
// step — it emits exactly what the TopN that keeps every row emits, holds per partition no more than
// the rows ranked ≤ `to` (RANK/DENSE_RANK: with their peers), reports the rows it drops to its
// checkpoint (a state loaded from its deltas goes on alike), keeps all under an unbounded ranking,
// and treats a retraction as a broken invariant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SluiceError } from '../../common/errors.ts';
import { compareByKeys, compareRows, type RankKind } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import { TopNOp } from './topn-op.ts';
import { mulberry32 } from '../../../test/support/checkpoint-workload.ts';

type TopNNode = Extract<DataflowNode, { kind: 'topn' }>;

/** Rows [partition, score, id]: by score descending, then id. */
function node(
  rank: RankKind,
  emitRank: boolean,
  from: number,
  to: number | null,
  insertOnly: boolean,
): TopNNode {
  return {
    id: 1,
    kind: 'topn',
    inputs: [0],
    partitionBy: [0],
    orderBy: [
      { index: 1, desc: true, nullsFirst: true },
      { index: 2, desc: false, nullsFirst: false },
    ],
    rank,
    emitRank,
    from,
    to,
    columns: [
      { name: 'p', type: T.int32 },
      { name: 'score', type: T.int32 },
      { name: 'id', type: T.int32 },
      ...(emitRank ? [{ name: 'r', type: T.int64 }] : []),
    ],
    stateId: 'v/topn1',
    ...(insertOnly ? { insertOnly: true as const } : {}),
  };
}

/** A step's output as sorted text lines (consolidated: the two operators may order rows apart). */
function text(out: ZBatch): string[] {
  const c = consolidate(out);
  return c.rows.map((r, i) => `${c.weights[i]}x${r.join(',')}`).sort();
}

/** Distinct rows ranked ≤ `to` per partition in `all` (the most an insert-only TopN may hold). */
function ranksWithin(all: readonly (readonly Value[])[], n: TopNNode): number {
  const compare = compareRows(n.orderBy);
  const peers = compareByKeys(n.orderBy);
  const byPart = new Map<Value, (readonly Value[])[]>();
  for (const row of all) {
    const list = byPart.get(row[0] as Value) ?? [];
    list.push(row);
    byPart.set(row[0] as Value, list);
  }
  let held = 0;
  for (const list of byPart.values()) {
    list.sort(compare);
    let position = 0;
    let rank = 0;
    let dense = 0;
    for (let i = 0; i < list.length; i++) {
      const row = list[i] as readonly Value[];
      const copies = i > 0 && compare(list[i - 1] as readonly Value[], row) === 0;
      if (i === 0 || peers(list[i - 1] as readonly Value[], row) !== 0) {
        rank = position + 1;
        dense++;
      }
      const r = n.rank === 'row_number' ? position + 1 : n.rank === 'rank' ? rank : dense;
      if (r > (n.to ?? Infinity)) break;
      if (!copies) held++;
      position++;
    }
  }
  return held;
}

const shapes: { rank: RankKind; emitRank: boolean; from: number; to: number | null }[] = [
  { rank: 'row_number', emitRank: false, from: 0, to: 3 },
  { rank: 'row_number', emitRank: false, from: 0, to: 1 },
  { rank: 'row_number', emitRank: true, from: 0, to: 4 },
  { rank: 'row_number', emitRank: false, from: 2, to: 5 },
  { rank: 'row_number', emitRank: false, from: 0, to: 70 },
  { rank: 'rank', emitRank: true, from: 0, to: 3 },
  { rank: 'rank', emitRank: false, from: 1, to: 4 },
  { rank: 'dense_rank', emitRank: true, from: 0, to: 2 },
  { rank: 'dense_rank', emitRank: false, from: 1, to: 3 },
];

for (const shape of shapes) {
  const name = `${shape.rank}${shape.emitRank ? ' (rank shown)' : ''} ${shape.from} < r <= ${shape.to}`;
  test(`insert-only ${name}: same output as keeping every row, holding only what can rank`, () => {
    for (let seed = 1; seed <= 6; seed++) {
      const rnd = mulberry32(seed * 131 + shape.from * 7 + (shape.to ?? 0));
      const trimmed = new TopNOp(node(shape.rank, shape.emitRank, shape.from, shape.to, true));
      const full = new TopNOp(node(shape.rank, shape.emitRank, shape.from, shape.to, false));
      trimmed.trackChanges(true);
      const checkpoint = new Map<string, unknown>();
      const all: (readonly Value[])[] = [];
      let restored: TopNOp | null = null;
      for (let step = 0; step < 120; step++) {
        // Mostly one row (the direct path), sometimes many (the general path); few scores: ties,
        // and ids from a small range: copies of one row, across steps and within one.
        const size = rnd() < 0.7 ? 1 : 1 + Math.floor(rnd() * 40);
        const rows: (readonly Value[])[] = [];
        const weights: number[] = [];
        for (let i = 0; i < size; i++) {
          const row = [Math.floor(rnd() * 3), Math.floor(rnd() * 12), Math.floor(rnd() * 30)];
          const w = rnd() < 0.1 ? 2 : 1;
          rows.push(row);
          weights.push(w);
          for (let c = 0; c < w; c++) all.push(row);
        }
        const input: ZBatch = { rows, weights, consolidated: false };
        const expected = text(full.step([input]));
        assert.deepEqual(text(trimmed.step([input])), expected, `${name} seed ${seed} step ${step}`);
        if (restored !== null) {
          assert.deepEqual(
            text(restored.step([input])),
            expected,
            `${name} restored, seed ${seed} step ${step}`,
          );
        }
        const held = trimmed.rowsHeld;
        const bound = ranksWithin(all, trimmed['node']);
        assert.ok(held <= bound, `${name} seed ${seed} step ${step}: holds ${held} rows, ${bound} can rank`);
        // The checkpoint follows the trims: a state loaded from the deltas so far goes on alike.
        const delta = trimmed.takeStateDelta(false);
        if (delta.replaceAll) checkpoint.clear();
        for (const id of delta.deletes) checkpoint.delete(id);
        for (const [id, value] of delta.upserts) checkpoint.set(id, value);
        if (step === 60) {
          restored = new TopNOp(node(shape.rank, shape.emitRank, shape.from, shape.to, true));
          restored.loadState(checkpoint.values());
          assert.equal(restored.rowsHeld, held);
        }
      }
      assert.ok(trimmed.rowsHeld < full.rowsHeld || full.rowsHeld === 0, `${name}: something was dropped`);
    }
  });
}

test('a top 10 per partition over 100,000 inserts holds 10 rows per partition', () => {
  const trimmed = new TopNOp(node('row_number', false, 0, 10, true));
  const full = new TopNOp(node('row_number', false, 0, 10, false));
  const rnd = mulberry32(7);
  for (let b = 0; b < 100; b++) {
    const rows: (readonly Value[])[] = [];
    for (let i = 0; i < 1000; i++) rows.push([Math.floor(rnd() * 50), Math.floor(rnd() * 1e6), b * 1000 + i]);
    const input: ZBatch = { rows, weights: rows.map(() => 1), consolidated: true };
    assert.deepEqual(text(trimmed.step([input])), text(full.step([input])));
  }
  assert.equal(full.rowsHeld, 100_000);
  assert.equal(trimmed.rowsHeld, 50 * 10);
  // each row past its partition's top 10 was dropped: passed over on arrival, or trimmed later
  assert.equal(trimmed.rowsTrimmed + trimmed.rowsPassedOver, 100_000 - 500);
  assert.ok(trimmed.rowsPassedOver > 90_000, `passed over ${trimmed.rowsPassedOver}`);
});

test('an unbounded ranking over an insert-only input keeps every row', () => {
  const op = new TopNOp(node('row_number', true, 2, null, true));
  op.step([
    {
      rows: [
        [1, 5, 1],
        [1, 6, 2],
        [1, 7, 3],
        [1, 8, 4],
      ],
      weights: [1, 1, 1, 1],
      consolidated: true,
    },
  ]);
  assert.equal(op.rowsHeld, 4);
  assert.equal(op.rowsTrimmed, 0);
});

test('a retraction reaching an insert-only TopN is an internal error, not a wrong answer', () => {
  const op = new TopNOp(node('row_number', false, 0, 2, true));
  op.step([
    {
      rows: [
        [1, 5, 1],
        [1, 6, 2],
        [1, 7, 3],
      ],
      weights: [1, 1, 1],
      consolidated: true,
    },
  ]);
  assert.throws(
    () =>
      op.step([
        {
          rows: [
            [1, 9, 9],
            [1, 7, 3],
          ],
          weights: [1, -1],
          consolidated: true,
        },
      ]),
    (error: unknown) => error instanceof SluiceError && error.code === 'INTERNAL_ERROR',
  );
});
