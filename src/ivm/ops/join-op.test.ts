// Unit tests of the join operator without SQL: the delta rule's exact output, outer-join padding
// and un-padding, NULL keys, residual conditions counted per row, a checkpoint round trip, and the
// row budget of one-off evaluations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { T } from '../../common/types.ts';
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import type { ColumnSpec, DataflowNode, JoinKind } from '../dataflow-plan.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import { JoinOp, type JoinBudget } from './join-op.ts';
import { keyValue } from '../join-key.ts';
import { batch, changes, failOnRowError, none, stepChanges } from '../../../test/support/zbatches.ts';

// Both inputs are [k, v]; the output row is [lk, lv, rk, rv].
const COLS = [
  { name: 'k', type: T.int32 },
  { name: 'v', type: T.int32 },
];
const col = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.int32 });

function join(
  joinKind: JoinKind,
  residual: ScalarExpr | null = null,
  budget: JoinBudget | null = null,
): JoinOp {
  const node: Extract<DataflowNode, { kind: 'join' }> = {
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind,
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual,
    columns: [...COLS, ...COLS],
    stateId: 'v/join2',
    shared: null,
    fused: null,
  };
  return new JoinOp(node, COLS, COLS, budget);
}

test('inner join: each side probes the other, and both deltas of one step meet once', () => {
  const op = join('inner');
  assert.deepEqual(stepChanges(op, [batch([[[1, 10], 1]]), none]), []);
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 20], 2]])]), ['+[1,10,1,20]×2']);
  // Both sides change in one step (a self-join, or a view and its input): ΔL⋈R_old + L_new⋈ΔR.
  assert.deepEqual(stepChanges(op, [batch([[[1, 11], 1]]), batch([[[1, 21], 1]])]).sort(), [
    '+[1,10,1,21]×1',
    '+[1,11,1,20]×2',
    '+[1,11,1,21]×1',
  ]);
  // Deleting retracts exactly what the row contributed.
  assert.deepEqual(stepChanges(op, [batch([[[1, 10], -1]]), none]), ['-[1,10,1,20]×2', '-[1,10,1,21]×1']);
  assert.deepEqual(op.arrangedRows(), [1, 2]);
});

test('NULL keys never match, and an outer join pads them', () => {
  const inner = join('inner');
  inner.step([batch([[[null, 1], 1]]), none], failOnRowError);
  assert.deepEqual(stepChanges(inner, [none, batch([[[null, 2], 1]])]), []);
  const full = join('full');
  assert.deepEqual(stepChanges(full, [batch([[[null, 1], 1]]), batch([[[null, 2], 1]])]), [
    '+[null,1,null,null]×1',
    '+[null,null,null,2]×1',
  ]);
  assert.deepEqual(stepChanges(full, [batch([[[null, 1], -1]]), none]), ['-[null,1,null,null]×1']);
});

test('left join: the padded row goes when the first match comes and returns when the last leaves', () => {
  const op = join('left');
  assert.deepEqual(stepChanges(op, [batch([[[1, 10], 1]]), none]), ['+[1,10,null,null]×1']);
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 20], 1]])]), ['+[1,10,1,20]×1', '-[1,10,null,null]×1']);
  // A second match changes nothing about the padding.
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 21], 1]])]), ['+[1,10,1,21]×1']);
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 20], -1]])]), ['-[1,10,1,20]×1']);
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 21], -1]])]), [
    '+[1,10,null,null]×1',
    '-[1,10,1,21]×1',
  ]);
  // A right row without a left match is not padded in a LEFT join.
  assert.deepEqual(stepChanges(op, [none, batch([[[2, 30], 1]])]), []);
});

test('right and full joins pad the right side symmetrically, in the same step as the match', () => {
  const op = join('full');
  assert.deepEqual(
    stepChanges(op, [
      batch([[[1, 10], 1]]),
      batch([
        [[1, 20], 1],
        [[2, 30], 1],
      ]),
    ]),
    ['+[1,10,1,20]×1', '+[null,null,2,30]×1'],
  );
  assert.deepEqual(
    stepChanges(op, [
      batch([
        [[2, 11], 1],
        [[1, 10], -1],
      ]),
      none,
    ]),
    ['+[2,11,2,30]×1', '+[null,null,1,20]×1', '-[1,10,1,20]×1', '-[null,null,2,30]×1'].sort(),
  );
});

test('a residual condition decides matches per pair, and padding follows each row’s own matches', () => {
  // ON l.k = r.k AND l.v < r.v
  const lessThan: ScalarExpr = { kind: 'call', fn: 'lt', args: [col(1), col(3)], type: T.bool };
  const op = join('left', lessThan);
  assert.deepEqual(
    stepChanges(op, [
      batch([
        [[1, 5], 1],
        [[1, 50], 1],
      ]),
      none,
    ]),
    ['+[1,5,null,null]×1', '+[1,50,null,null]×1'],
  );
  // r.v = 10 matches l.v = 5 only: only that row loses its padding.
  assert.deepEqual(stepChanges(op, [none, batch([[[1, 10], 1]])]), ['+[1,5,1,10]×1', '-[1,5,null,null]×1']);
  // Moving the right row to v = 100 (delete + insert) now matches both.
  assert.deepEqual(
    stepChanges(op, [
      none,
      batch([
        [[1, 10], -1],
        [[1, 100], 1],
      ]),
    ]),
    ['+[1,50,1,100]×1', '+[1,5,1,100]×1', '-[1,50,null,null]×1', '-[1,5,1,10]×1'].sort(),
  );
});

test('a checkpoint round trip restores both arrangements and the per-row match counts', () => {
  const lessThan: ScalarExpr = { kind: 'call', fn: 'lt', args: [col(1), col(3)], type: T.bool };
  const a = join('full', lessThan);
  a.trackChanges(true);
  a.step(
    [
      batch([
        [[1, 5], 2],
        [[2, 7], 1],
      ]),
      batch([
        [[1, 10], 1],
        [[3, 1], 1],
      ]),
    ],
    failOnRowError,
  );
  const delta = a.takeStateDelta(true);
  // The delta is a value: later steps do not change what was taken.
  const frozen = JSON.stringify(delta);
  a.step([none, batch([[[1, 10], 1]])], failOnRowError);
  assert.equal(JSON.stringify(delta), frozen);
  const b = join('full', lessThan);
  b.trackChanges(true);
  b.loadState(delta.upserts.map(([, v]) => v));
  assert.deepEqual(b.arrangedRows(), [2, 2]);
  // What was loaded is what the store holds: the next incremental delta has nothing to rewrite.
  assert.deepEqual(b.takeStateDelta(false), { replaceAll: false, upserts: [], deletes: [] });
  // Same continuation on the restored operator as on a fresh replay of the same history.
  const replay = join('full', lessThan);
  replay.step(
    [
      batch([
        [[1, 5], 2],
        [[2, 7], 1],
      ]),
      batch([
        [[1, 10], 1],
        [[3, 1], 1],
      ]),
    ],
    failOnRowError,
  );
  const next: ZBatch[] = [
    batch([[[1, 5], -2]]),
    batch([
      [[1, 10], -1],
      [[2, 9], 1],
    ]),
  ];
  assert.deepEqual(stepChanges(b, next), stepChanges(replay, next));
});

test('an incremental checkpoint delta holds changed rows and deletions only', () => {
  const op = join('inner');
  op.trackChanges(true);
  op.step(
    [
      batch([
        [[1, 1], 1],
        [[2, 2], 1],
      ]),
      none,
    ],
    failOnRowError,
  );
  op.takeStateDelta(false);
  op.step([batch([[[1, 1], -1]]), batch([[[2, 5], 1]])], failOnRowError);
  const d = op.takeStateDelta(false);
  assert.equal(d.replaceAll, false);
  assert.equal(d.upserts.length, 1);
  assert.equal(d.deletes.length, 1);
});

test('a join budget stops a one-off evaluation that multiplies its inputs', () => {
  const budget: JoinBudget = { remaining: 100, limit: 100 };
  const op = join('inner', null, budget);
  const many = (v: number, n: number): ZBatch => batch(Array.from({ length: n }, (_, i) => [[1, v + i], 1]));
  op.step([many(0, 20), none], failOnRowError);
  assert.throws(
    () => op.step([none, many(1000, 20)], failOnRowError),
    (e: unknown) => (e as { code?: string }).code === 'RESULT_TOO_LARGE',
  );
  // It stopped near the budget, not after the whole product.
  assert.ok(budget.remaining >= -20, `charged ${100 - budget.remaining} rows`);
});

test('one-column keys are raw Map keys with SQL equality: 1 meets 1n and 1.0, 0 meets -0, never "1"', () => {
  const op = join('inner');
  const out = op.step(
    [
      batch([
        [[1, 10], 1],
        [[0, 20], 1],
        [[2 ** 60, 30], 1],
        [['1', 40], 1],
        [[NaN, 50], 1],
      ]),
      batch([
        [[1n, 1], 1],
        [[-0, 2], 1],
        [[2n ** 60n, 3], 1],
        [[2n ** 64n, 4], 1],
        [[NaN, 5], 1],
      ]),
    ],
    failOnRowError,
  );
  const pairs = consolidate(out)
    .rows.map((r) => `${String(r[1])}-${String(r[3])}`)
    .sort();
  assert.deepEqual(pairs, ['10-1', '20-2', '30-3', '50-5']);
  assert.deepEqual(keyValue(2n ** 64n), 2 ** 64, 'a bigint a double holds exactly is that number');
  assert.deepEqual(keyValue(2n ** 64n + 1n), 2n ** 64n + 1n, 'one it does not stays a bigint');
});

test('checkpoint entries keep the encoded key form, and load keys rows again', () => {
  const op = join('inner');
  op.trackChanges(true);
  op.step([batch([[[7, 1], 1]]), none], failOnRowError);
  const delta = op.takeStateDelta(true);
  // The stored key and the entry id are the key's encoding (as before keys were raw values).
  assert.deepEqual(
    delta.upserts.map(([id, v]) => [id, (v as { k: unknown }).k]),
    [['L3:n7;n7;n1;', 'n7;']],
  );
  const restored = join('inner');
  restored.loadState(delta.upserts.map(([, v]) => v));
  assert.deepEqual(stepChanges(restored, [none, batch([[[7, 2], 1]])]), ['+[7,1,7,2]×1']);
});

test('a fused Map: rows are built projected, and a one-sided step of an inner join says its rows are distinct', () => {
  const fused = (
    joinKind: JoinKind,
    project: ScalarExpr[],
    filter: ScalarExpr | null = null,
    cols: readonly ColumnSpec[] = COLS,
  ): JoinOp => {
    const node: Extract<DataflowNode, { kind: 'join' }> = {
      id: 2,
      kind: 'join',
      inputs: [0, 1],
      joinKind,
      leftKey: [col(0)],
      rightKey: [col(0)],
      residual: null,
      columns: project.map((_, i) => ({ name: `p${i}`, type: T.int32 })),
      stateId: 'v/join2',
      shared: null,
      fused: { filter, project, joined: [...cols, ...cols] },
    };
    return new JoinOp(node, cols, cols, null);
  };
  const raw = (out: ZBatch): string[] =>
    out.rows.map((r, i) => `${JSON.stringify(r)}×${out.weights[i]}`).sort();
  // Every column is kept but the right key, which the key equates with the left one (an integer).
  const op = fused('inner', [col(0), col(1), col(3)]);
  op.step(
    [
      batch([
        [[1, 10], 1],
        [[1, 11], 1],
      ]),
      none,
    ],
    failOnRowError,
  );
  op.step([none, batch([[[1, 21], 1]])], failOnRowError);
  const out = op.step(
    [
      none,
      batch([
        [[1, 20], 1],
        [[1, 21], -1],
      ]),
    ],
    failOnRowError,
  );
  assert.deepEqual(raw(out), ['[1,10,20]×1', '[1,10,21]×-1', '[1,11,20]×1', '[1,11,21]×-1']);
  assert.equal(out.consolidated, true);
  // Both sides in one step may emit one row twice (ΔL⋈R_old and L_new⋈ΔR): not claimed.
  assert.equal(op.step([batch([[[1, 12], 1]]), batch([[[1, 22], 1]])], failOnRowError).consolidated, false);
  // Dropping a column nothing else determines makes two pairs one row.
  const lossy = fused('inner', [col(0), col(3)]);
  lossy.step(
    [
      batch([
        [[1, 10], 1],
        [[1, 11], 1],
      ]),
      none,
    ],
    failOnRowError,
  );
  const merged = lossy.step([none, batch([[[1, 20], 1]])], failOnRowError);
  assert.equal(merged.consolidated, false);
  assert.deepEqual(changes(merged), ['+[1,20]×2']);
  // A float key: 0 and -0 are one key but two rows, so its column is not recoverable from the other.
  const FLOATS = [
    { name: 'k', type: T.float64 },
    { name: 'v', type: T.int32 },
  ];
  const floats = fused('inner', [col(0), col(1), col(3)], null, FLOATS);
  floats.step([batch([[[0, 10], 1]]), none], failOnRowError);
  const zeros = floats.step(
    [
      none,
      batch([
        [[0, 20], 1],
        [[-0, 20], 1],
      ]),
    ],
    failOnRowError,
  );
  assert.equal(zeros.consolidated, false);
  assert.deepEqual(changes(zeros), ['+[0,10,20]×2']);
  // Outer joins pad and unpad: never claimed. The padded row goes through the projection too.
  const left = fused('left', [col(0), col(1), col(3)]);
  const padded = left.step([batch([[[5, 50], 1]]), none], failOnRowError);
  assert.deepEqual(raw(padded), ['[5,50,null]×1']);
  assert.equal(padded.consolidated, false);
  // A fused filter reads the joined row; an expression projection is computed from it.
  const gt = (a: ScalarExpr, b: ScalarExpr): ScalarExpr => ({
    kind: 'call',
    fn: 'gt',
    args: [a, b],
    type: T.bool,
  });
  const add = (a: ScalarExpr, b: ScalarExpr): ScalarExpr => ({
    kind: 'call',
    fn: 'add',
    args: [a, b],
    type: T.int32,
  });
  const filtered = fused('inner', [add(col(1), col(3))], gt(col(3), col(1)));
  filtered.step([batch([[[1, 10], 1]]), none], failOnRowError);
  assert.deepEqual(
    raw(
      filtered.step(
        [
          none,
          batch([
            [[1, 5], 1],
            [[1, 15], 1],
          ]),
        ],
        failOnRowError,
      ),
    ),
    ['[25]×1'],
  );
});
