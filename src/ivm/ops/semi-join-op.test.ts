// Unit tests of the SemiJoin operator without SQL: what its output batch promises. A step whose left
// delta alone passes rows says they are consolidated (each row once, so Output need not consolidate
// them again), and so does a step whose right side alone flips keys (each held row of each flipped
// key once); a step in which both emit rows may hold a row twice (a left row deleted while its key
// flips), so it must not say so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import { SemiJoinOp } from './semi-join-op.ts';

const COLUMNS = [
  { name: 'id', type: T.int32 },
  { name: 'k', type: T.int32 },
];

/**
 * `SELECT id, k FROM l WHERE k IN (SELECT k FROM r)`: left rows [id, k], right rows [k]; with
 * `keyedRight`, right rows [k, tag] whose key column is read in place (the selection fused in).
 */
function semiJoin(keyedRight = false): SemiJoinOp {
  const node: Extract<DataflowNode, { kind: 'semijoin' }> = {
    id: 2,
    kind: 'semijoin',
    inputs: [0, 1],
    mode: 'in',
    leftKey: [{ kind: 'col', index: 1, name: 'k', type: T.int32 }],
    ...(keyedRight ? { rightKey: [{ kind: 'col', index: 0, name: 'k', type: T.int32 }] } : {}),
    correlated: 0,
    columns: COLUMNS,
    stateId: 'v/semijoin2',
  };
  return new SemiJoinOp(node, COLUMNS);
}

const NO_ERRORS: RowErrorSink = {
  report: (error) => {
    throw error;
  },
};

function batch(rows: (readonly Value[])[], weights: number[]): ZBatch {
  return { rows, weights, consolidated: true };
}

const EMPTY = batch([], []);

function net(out: ZBatch): string[] {
  const c = consolidate(out);
  return c.rows.map((r, i) => `${(c.weights[i] ?? 0) > 0 ? '+' : '-'}${r.join(',')}`).sort();
}

test('a left delta alone or a flip alone emits each row once and says so; both together do not', () => {
  const op = semiJoin();
  // k = 1 exists on the right; rows of k = 1 pass, of k = 2 and NULL do not.
  assert.deepEqual(net(op.step([EMPTY, batch([[1]], [1])], NO_ERRORS)), []);
  const passed = op.step(
    [
      batch(
        [
          [10, 1],
          [11, 1],
          [12, 2],
          [13, null],
        ],
        [1, 1, 1, 1],
      ),
      EMPTY,
    ],
    NO_ERRORS,
  );
  assert.equal(passed.consolidated, true);
  assert.deepEqual(passed.rows, [
    [10, 1],
    [11, 1],
  ]);
  // k = 2 arrives on the right (row 12 comes in) while row 12 is deleted: +12 by the flip, -12 by
  // the left delta. The batch holds the row twice, so it must not claim to be consolidated.
  const flipped = op.step([batch([[12, 2]], [-1]), batch([[2]], [1])], NO_ERRORS);
  assert.equal(flipped.consolidated, false);
  assert.equal(flipped.rows.length, 2);
  assert.deepEqual(net(flipped), []);
  // k = 1 leaves the right: rows 10 and 11 go, each once, with nothing else in the step.
  const left = op.step([EMPTY, batch([[1]], [-1])], NO_ERRORS);
  assert.equal(left.consolidated, true);
  assert.deepEqual(left.rows, [
    [10, 1],
    [11, 1],
  ]);
  assert.deepEqual(left.weights, [-1, -1]);
  // A flip and left rows that pass nothing (k = 3 is not held on the right) together: still once.
  const flipOnly = op.step([batch([[14, 3]], [1]), batch([[1]], [1])], NO_ERRORS);
  assert.equal(flipOnly.consolidated, true);
  assert.deepEqual(net(flipOnly), ['+10,1', '+11,1']);
});

test('a right delta folded while no left row is held evaluates no key for a flip', () => {
  const op = semiJoin();
  // 100 subquery keys before any left row: nothing to flip, nothing looked up on the left.
  const keys = Array.from({ length: 100 }, (_, i) => [i]);
  const out = op.step(
    [
      EMPTY,
      batch(
        keys,
        keys.map(() => 1),
      ),
    ],
    NO_ERRORS,
  );
  assert.deepEqual(out.rows, []);
  assert.equal(op.keysEvaluated, 0);
  // Left rows pass by those keys; then key 7 leaves and key 100 arrives: both evaluated, 7's row goes.
  assert.deepEqual(
    net(
      op.step(
        [
          batch(
            [
              [1, 7],
              [2, 100],
            ],
            [1, 1],
          ),
          EMPTY,
        ],
        NO_ERRORS,
      ),
    ),
    ['+1,7'],
  );
  assert.deepEqual(net(op.step([EMPTY, batch([[7], [100]], [-1, 1])], NO_ERRORS)), ['+2,100', '-1,7']);
  assert.equal(op.keysEvaluated, 2);
});

test('a right delta the relation hands over unconsolidated is counted without consolidating its rows', () => {
  // The key read from the relation's own rows [k, tag] (its column selection fused in).
  const op = semiJoin(true);
  const loose = (rows: (readonly Value[])[], weights: number[]): ZBatch => ({
    rows,
    weights,
    consolidated: false,
  });
  assert.deepEqual(net(op.step([EMPTY, batch([[1, 'a']], [1])], NO_ERRORS)), []);
  assert.deepEqual(net(op.step([batch([[10, 1]], [1]), EMPTY], NO_ERRORS)), ['+10,1']);
  // Key 1's row replaced, its deletion listed last and first; key 2 comes and goes; nothing flips.
  const replaced = loose(
    [
      [1, 'b'],
      [2, 'x'],
      [1, 'a'],
      [2, 'x'],
    ],
    [1, 1, -1, -1],
  );
  assert.deepEqual(net(op.step([EMPTY, replaced], NO_ERRORS)), []);
  // A deletion listed before the insertion of the same key (the count would dip below zero if
  // folded in order): key 1 stays, key 3 arrives and its left row passes.
  assert.deepEqual(net(op.step([batch([[30, 3]], [1]), EMPTY], NO_ERRORS)), []);
  const dip = loose(
    [
      [1, 'b'],
      [3, 'y'],
      [1, 'c'],
    ],
    [-1, 1, 1],
  );
  assert.deepEqual(net(op.step([EMPTY, dip], NO_ERRORS)), ['+30,3']);
  // The last row of key 1 leaves: its held left row is retracted.
  assert.deepEqual(net(op.step([EMPTY, loose([[1, 'c']], [-1])], NO_ERRORS)), ['-10,1']);
});

test('a flip and left rows under other keys together still say they are consolidated', () => {
  const op = semiJoin();
  // k = 1 exists on the right; row 10 (k = 1) passes, row 12 (k = 2) is held without passing.
  op.step([EMPTY, batch([[1]], [1])], NO_ERRORS);
  op.step(
    [
      batch(
        [
          [10, 1],
          [12, 2],
        ],
        [1, 1],
      ),
      EMPTY,
    ],
    NO_ERRORS,
  );
  // k = 2 arrives on the right (row 12 comes in) while row 15 arrives under k = 1 and row 16 under
  // k = 3 (not held): no passing left row is under the flipped key, so no row is in the batch twice.
  const both = op.step(
    [
      batch(
        [
          [15, 1],
          [16, 3],
        ],
        [1, 1],
      ),
      batch([[2]], [1]),
    ],
    NO_ERRORS,
  );
  assert.equal(both.consolidated, true);
  assert.deepEqual(both.rows, [
    [12, 2],
    [15, 1],
  ]);
  assert.deepEqual(both.weights, [1, 1]);
  // k = 1 leaves while row 17 arrives under it (it does not pass) and row 12 is deleted under k = 2,
  // which stays: rows 10 and 15 go, row 12 goes, each once.
  const again = op.step(
    [
      batch(
        [
          [17, 1],
          [12, 2],
        ],
        [1, -1],
      ),
      batch([[1]], [-1]),
    ],
    NO_ERRORS,
  );
  assert.equal(again.consolidated, true);
  assert.deepEqual(net(again), ['-10,1', '-12,2', '-15,1']);
  // The next step's mark is its own: a left row under a key flipped in an earlier step is not met.
  const later = op.step([batch([[18, 2]], [1]), EMPTY], NO_ERRORS);
  assert.equal(later.consolidated, true);
  assert.deepEqual(net(later), ['+18,2']);
});

/**
 * `SELECT id, k, d FROM l WHERE k / d [NOT] EXISTS-or-IN (SELECT x FROM r)` as a node: left rows
 * [id, k, d] keyed by k / d, which fails where d = 0 (a row error), right rows [x].
 */
function dividedKey(mode: 'in' | 'exists' | 'notExists'): SemiJoinOp {
  const int = T.int32;
  const columns = [
    { name: 'id', type: int },
    { name: 'k', type: int },
    { name: 'd', type: int },
  ];
  const node: Extract<DataflowNode, { kind: 'semijoin' }> = {
    id: 2,
    kind: 'semijoin',
    inputs: [0, 1],
    mode,
    leftKey: [
      {
        kind: 'call',
        fn: 'div',
        args: [
          { kind: 'col', index: 1, name: 'k', type: int },
          { kind: 'col', index: 2, name: 'd', type: int },
        ],
        type: int,
      },
    ],
    correlated: mode === 'in' ? 0 : 1,
    columns,
    stateId: 'v/semijoin2',
  };
  return new SemiJoinOp(node, columns);
}

test('a batch passes, holds and reports its rows as the same rows a step each do', () => {
  for (const mode of ['in', 'exists', 'notExists'] as const) {
    // 300 rows in one step and the same rows a step each: keys 0..39 and NULL, every seventh row's
    // key failing; then a second batch deleting some and adding more.
    const rows: Value[][] = Array.from({ length: 300 }, (_, i) => [
      i,
      i % 11 === 0 ? null : i % 40,
      i % 7 === 3 ? 0 : 1,
    ]);
    const later: [Value[], number][] = rows.filter((_, i) => i % 5 === 0).map((r) => [r, -1]);
    for (let i = 300; i < 400; i++) later.push([[i, i % 40, 1], 1]);
    const whole = dividedKey(mode);
    const single = dividedKey(mode);
    const reported: Record<'whole' | 'single', string[]> = { whole: [], single: [] };
    const sink = (side: 'whole' | 'single'): RowErrorSink => ({
      report: (_error, row, _columns, w) =>
        reported[side].push(`${w}:${(row as readonly Value[]).join(',')}`),
    });
    const subquery = batch(
      Array.from({ length: 20 }, (_, x) => [x]),
      Array.from({ length: 20 }, () => 1),
    );
    whole.step([EMPTY, subquery], NO_ERRORS);
    single.step([EMPTY, subquery], NO_ERRORS);
    for (const changes of [rows.map((r): [Value[], number] => [r, 1]), later]) {
      const out = whole.step(
        [
          batch(
            changes.map((c) => c[0]),
            changes.map((c) => c[1]),
          ),
          EMPTY,
        ],
        sink('whole'),
      );
      const one: ZBatch[] = changes.map(([r, w]) => single.step([batch([r], [w]), EMPTY], sink('single')));
      assert.equal(out.consolidated, true);
      const joined = {
        rows: one.flatMap((b) => b.rows),
        weights: one.flatMap((b) => b.weights),
        consolidated: false,
      };
      assert.deepEqual(net(out), net(joined), mode);
      assert.ok(out.rows.length > 0, mode);
    }
    assert.deepEqual(reported.whole, reported.single, mode);
    // 43 rows divide by zero, 4 of them with a NULL k (NULL / 0 is NULL); 8 of those 39 are deleted.
    assert.equal(reported.whole.length, 39 + 8, mode);
    // The rows held are the same: the subquery's keys 0..9 leave and 20..29 arrive, flipping them.
    const flip = batch(
      Array.from({ length: 20 }, (_, i) => [i < 10 ? i : i + 10]),
      Array.from({ length: 20 }, (_, i) => (i < 10 ? -1 : 1)),
    );
    const a = whole.step([EMPTY, flip], NO_ERRORS);
    assert.ok(a.rows.length > 0, mode);
    assert.deepEqual(net(a), net(single.step([EMPTY, flip], NO_ERRORS)), mode);
  }
});
