// Unit tests of the join operator's by-column emission (a join under a GROUP BY): the staged probe
// and the kept columns give the row path's rows, in its order; what a probe reads of the arranged
// side (counted, not timed); and when a step emits by column rather than by row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { ZBatch } from '../zset.ts';
import type { JoinArrangement } from '../join-arrangement.ts';
import { JoinOp } from './join-op.ts';
import { batch, changes, failOnRowError, none } from '../../../test/support/zbatches.ts';

// Both inputs are [k, v]; the joined row is [lk, lv, rk, rv].
const COLS = [
  { name: 'k', type: T.int32 },
  { name: 'v', type: T.int32 },
];
const col = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.int32 });

test('emitting by column from kept columns gives the rows the row path gives, through churn', () => {
  const node = (byColumn: boolean): Extract<DataflowNode, { kind: 'join' }> => ({
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind: 'inner',
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [
      { name: 'rv', type: T.int32 },
      { name: 'lv', type: T.int32 },
    ],
    stateId: 'v/join2',
    shared: null,
    fused: {
      filter: null,
      project: [col(3), col(1)],
      joined: [...COLS, ...COLS],
      ...(byColumn ? { byColumn: true as const } : {}),
    },
  });
  const byColumn = new JoinOp(node(true), COLS, COLS, null);
  const byRow = new JoinOp(node(false), COLS, COLS, null);
  let seed = 7;
  const random = (n: number): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed % n;
  };
  const held: [Value[][], Value[][]] = [[], []];
  for (let step = 0; step < 40; step++) {
    // Steps with one side only (each probes the other's arrangement) and with both.
    const sides = step % 3 === 0 ? [0, 1] : [step % 3 === 1 ? 0 : 1];
    // 100 changes a side: retractions of held rows (freeing arranged ids) and new rows reusing them.
    const inputs = held.map((rows, side) => {
      if (!sides.includes(side)) return none;
      const entries: [Value[], number][] = [];
      for (let i = 0; i < 100; i++) {
        if (rows.length > 0 && random(3) === 0) {
          const [row] = rows.splice(random(rows.length), 1) as [Value[]];
          entries.push([row, -1]);
        } else {
          const row = [random(30), side * 1000 + step * 100 + i];
          rows.push(row);
          entries.push([row, 1]);
        }
      }
      return batch(entries);
    });
    const a = byColumn.step(inputs, failOnRowError);
    const b = byRow.step(inputs, failOnRowError);
    assert.ok('cols' in a, 'emitted by column');
    assert.deepEqual(changes(a), changes(b), `step ${step}`);
  }
});

test('a by-column step probes in passes and emits the row path’s rows in its order: NULL keys, unique and shared keys, absent keys', () => {
  const node = (byColumn: boolean): Extract<DataflowNode, { kind: 'join' }> => ({
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind: 'inner',
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [
      { name: 'lv', type: T.int32 },
      { name: 'rv', type: T.int32 },
    ],
    stateId: 'v/join2',
    shared: null,
    fused: {
      filter: null,
      project: [col(1), col(3)],
      joined: [...COLS, ...COLS],
      ...(byColumn ? { byColumn: true as const } : {}),
    },
  });
  // Keys 0..79 are their own slots in the arrangement; spread apart, they go through its index.
  for (const spread of [1, 100_003]) {
    const byColumn = new JoinOp(node(true), COLS, COLS, null);
    const byRow = new JoinOp(node(false), COLS, COLS, null);
    // Right: keys 0..49 once each (unique), 50..59 two to five times each (chains of unlike
    // lengths, walked side by side: each ends in another round), some with weight 2.
    const right: [Value[], number][] = [];
    for (let k = 0; k < 60; k++)
      for (let r = 0; r < (k < 50 ? 1 : 2 + (k % 4)); r++)
        right.push([[k * spread, 100 * k + r], 1 + (k % 2)]);
    // Left: keys over 0..79 (60..79 absent on the right), every seventh NULL, in a scrambled order;
    // then half of them retracted while right rows come and go in the same step.
    const left: [Value[], number][] = [];
    for (let i = 0; i < 200; i++)
      left.push([[i % 7 === 0 ? null : ((i * 37) % 80) * spread, i], i % 5 === 0 ? 2 : 1]);
    const steps: [ZBatch, ZBatch][] = [
      [none, batch(right)],
      [batch(left), none],
      [batch(left.map(([r]) => [r, -1] as [Value[], number]).slice(0, 100)), batch(right.slice(0, 70))],
    ];
    for (const [s, inputs] of steps.entries()) {
      const a = byColumn.step(inputs, failOnRowError);
      const b = byRow.step(inputs, failOnRowError);
      if (s === 1) assert.ok('cols' in a, 'emitted by column');
      assert.deepEqual(a.rows, b.rows, `spread ${spread}, step ${s}: rows in order`);
      assert.deepEqual([...a.weights], [...b.weights], `spread ${spread}, step ${s}: weights in order`);
    }
  }
});

test('a probe reads no count where a key’s rows are each held once, and a small step reads kept cells, not rows', () => {
  const node = (byColumn: boolean): Extract<DataflowNode, { kind: 'join' }> => ({
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind: 'inner',
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [
      { name: 'lv', type: T.int32 },
      { name: 'rv', type: T.int32 },
    ],
    stateId: 'v/join2',
    shared: null,
    fused: {
      filter: null,
      project: [col(1), col(3)],
      joined: [...COLS, ...COLS],
      ...(byColumn ? { byColumn: true as const } : {}),
    },
  });
  const byColumn = new JoinOp(node(true), COLS, COLS, null);
  const byRow = new JoinOp(node(false), COLS, COLS, null);
  // Right: keys 0..9 with three rows each, held once; key 10 with two rows, one held twice.
  const right: [Value[], number][] = [];
  for (let k = 0; k < 10; k++) for (let r = 0; r < 3; r++) right.push([[k, 100 * k + r], 1]);
  right.push([[10, 1000], 1], [[10, 1001], 2]);
  for (const op of [byColumn, byRow]) op.step([none, batch(right)], failOnRowError);
  // The reads of the right arrangement the left deltas' probes make.
  const arranged = (byColumn as unknown as { arranged: readonly JoinArrangement[] })
    .arranged[1] as JoinArrangement;
  const reads = { count: 0, row: 0 };
  const count = arranged.count.bind(arranged);
  const row = arranged.row.bind(arranged);
  arranged.count = (id) => (reads.count++, count(id));
  arranged.row = (id) => (reads.row++, row(id));
  const step = (left: [Value[], number][]): ZBatch => {
    const inputs = [batch(left), none];
    const a = byColumn.step(inputs, failOnRowError);
    assert.deepEqual(a.rows, byRow.step(inputs, failOnRowError).rows);
    return a;
  };
  // A step of 100 rows probes in passes: keys held once read no count.
  const once: [Value[], number][] = [];
  for (let i = 0; i < 100; i++) once.push([[i % 10, i], 1]);
  assert.ok('cols' in step(once), 'emitted by column');
  assert.deepEqual(reads, { count: 0, row: 0 });
  // Key 10's rows are read with their counts.
  const twice: [Value[], number][] = [];
  for (let i = 0; i < 100; i++) twice.push([[i % 11, 200 + i], 1]);
  step(twice);
  assert.deepEqual(reads, { count: 2 * 9, row: 0 });
  // A step of a few rows emits rows, built from the kept cells.
  const small = step([
    [[3, 500], 1],
    [[10, 210], -1],
  ]);
  assert.ok(!('cols' in small), 'emitted by row');
  assert.equal(small.rows.length, 5);
  assert.deepEqual(reads, { count: 2 * 9 + 2, row: 0 });
});

test('a step of a few rows that meet many rows each emits by column, as a large step does', () => {
  const node = (byColumn: boolean): Extract<DataflowNode, { kind: 'join' }> => ({
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind: 'inner',
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [
      { name: 'lv', type: T.int32 },
      { name: 'rv', type: T.int32 },
    ],
    stateId: 'v/join2',
    shared: null,
    fused: {
      filter: null,
      project: [col(1), col(3)],
      joined: [...COLS, ...COLS],
      ...(byColumn ? { byColumn: true as const } : {}),
    },
  });
  const byColumn = new JoinOp(node(true), COLS, COLS, null);
  const byRow = new JoinOp(node(false), COLS, COLS, null);
  // Right: two keys with 40 rows each (80 rows, 40 a key).
  const right: [Value[], number][] = [];
  for (let r = 0; r < 80; r++) right.push([[r % 2, r], 1]);
  for (const op of [byColumn, byRow]) op.step([none, batch(right)], failOnRowError);
  // Two left rows meet 80 right rows: by column. One meets 40: by row.
  for (const [left, expectColumns] of [
    [
      [
        [[0, 1], 1],
        [[1, 2], 1],
      ],
      true,
    ],
    [[[[0, 3], 1]], false],
  ] as [[Value[], number][], boolean][]) {
    const inputs = [batch(left), none];
    const a = byColumn.step(inputs, failOnRowError);
    assert.equal('cols' in a, expectColumns);
    assert.deepEqual(a.rows, byRow.step(inputs, failOnRowError).rows);
  }
});

test('a by-column step against an empty side looks up no slot there, and still arranges its rows', () => {
  const node = (byColumn: boolean): Extract<DataflowNode, { kind: 'join' }> => ({
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind: 'inner',
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [
      { name: 'lv', type: T.int32 },
      { name: 'rv', type: T.int32 },
    ],
    stateId: 'v/join2',
    shared: null,
    fused: {
      filter: null,
      project: [col(1), col(3)],
      joined: [...COLS, ...COLS],
      ...(byColumn ? { byColumn: true as const } : {}),
    },
  });
  const byColumn = new JoinOp(node(true), COLS, COLS, null);
  const byRow = new JoinOp(node(false), COLS, COLS, null);
  const right = (byColumn as unknown as { arranged: readonly JoinArrangement[] })
    .arranged[1] as JoinArrangement;
  let lookups = 0;
  const slotOf = right.slotOf.bind(right);
  right.slotOf = (key) => (lookups++, slotOf(key));
  // 100 left rows (NULL keys among them) while the right side is empty: nothing emitted, no lookup.
  const left: [Value[], number][] = [];
  for (let i = 0; i < 100; i++) left.push([[i % 7 === 0 ? null : i % 20, i], 1]);
  for (const op of [byColumn, byRow])
    assert.equal(op.step([batch(left), none], failOnRowError).weights.length, 0);
  assert.equal(lookups, 0);
  // The right rows then meet the left rows arranged (not the NULL keys), as on the row path.
  const later: [Value[], number][] = [];
  for (let k = 0; k < 20; k++) later.push([[k, 1000 + k], 1]);
  const a = byColumn.step([none, batch(later)], failOnRowError);
  assert.deepEqual(changes(a), changes(byRow.step([none, batch(later)], failOnRowError)));
  assert.equal(a.weights.length, 100 - 15);
});
