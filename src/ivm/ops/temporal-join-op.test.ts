// Unit tests of the temporal join operator without SQL: right changes emit nothing, a left row's
// retraction retracts what it met on arrival (copies oldest first, right rows with their counts,
// rows of one hash apart), residual errors retract with their pairs, and the state survives a
// checkpoint round trip (incremental deltas, then a reload).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import { T, type Value } from '../../common/types.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { hashRow } from '../arrangement.ts';
import { TemporalJoinOp } from './temporal-join-op.ts';

type Node = Extract<DataflowNode, { kind: 'temporalJoin' }>;

const left = [
  { name: 'id', type: T.int32 },
  { name: 'k', type: T.int32 },
];
const right = [
  { name: 'k', type: T.int32 },
  { name: 'v', type: T.int32 },
];
const col = (index: number, name: string): ScalarExpr => ({ kind: 'col', index, name, type: T.int32 });

function node(joinKind: 'inner' | 'left', residual: ScalarExpr | null = null): Node {
  return {
    id: 2,
    kind: 'temporalJoin',
    inputs: [0, 1],
    joinKind,
    leftKey: [col(1, 'k')],
    rightKey: [col(0, 'k')],
    residual,
    columns: [...left, ...right],
    stateId: 'v/temporaljoin2',
  };
}

const batch = (rows: Value[][], weights: number[]): ZBatch => ({ rows, weights, consolidated: false });
const none = batch([], []);

function sink(): RowErrorSink & { reported: [string, number][] } {
  const reported: [string, number][] = [];
  return {
    reported,
    report: (error, row, _columns, weight) =>
      reported.push([`${JSON.stringify(row)}: ${(error as Error).message}`, weight]),
  };
}

/** The output as sorted `weight × row` lines. */
function lines(b: ZBatch): string[] {
  return b.rows.map((r, i) => `${b.weights[i]} × ${JSON.stringify(r)}`).sort();
}

test('right changes emit nothing; a left retraction takes back what the row met on arrival', () => {
  const op = new TemporalJoinOp(node('inner'), left, right);
  const errors = sink();
  assert.deepEqual(lines(op.step([none, batch([[1, 'a']], [1])], errors)), []);
  assert.deepEqual(lines(op.step([batch([[10, 1]], [1]), none], errors)), ['1 × [10,1,1,"a"]']);
  // The right row changes: nothing is emitted.
  assert.deepEqual(
    lines(
      op.step(
        [
          none,
          batch(
            [
              [1, 'a'],
              [1, 'b'],
            ],
            [-1, 1],
          ),
        ],
        errors,
      ),
    ),
    [],
  );
  // A new left row meets "b"; the first one's retraction retracts "a".
  assert.deepEqual(
    lines(
      op.step(
        [
          batch(
            [
              [11, 1],
              [10, 1],
            ],
            [1, -1],
          ),
          none,
        ],
        errors,
      ),
    ),
    ['-1 × [10,1,1,"a"]', '1 × [11,1,1,"b"]'],
  );
  assert.deepEqual(op.heldRows(), { right: 1, arrivals: 1 });
});

test('copies of a left row are retracted oldest first, each with what it met', () => {
  const op = new TemporalJoinOp(node('left'), left, right);
  const errors = sink();
  // Copy 1 meets nothing (padded), copy 2 meets v=5.
  assert.deepEqual(lines(op.step([batch([[7, 3]], [1]), none], errors)), ['1 × [7,3,null,null]']);
  op.step([none, batch([[3, 5]], [1])], errors);
  assert.deepEqual(lines(op.step([batch([[7, 3]], [2]), none], errors)), ['2 × [7,3,3,5]']);
  // Retracting one copy takes the padded one; the next two take the two that met v=5.
  assert.deepEqual(lines(op.step([batch([[7, 3]], [-1]), none], errors)), ['-1 × [7,3,null,null]']);
  assert.deepEqual(lines(op.step([batch([[7, 3]], [-2]), none], errors)), ['-2 × [7,3,3,5]']);
  assert.deepEqual(op.heldRows(), { right: 1, arrivals: 0 });
  assert.throws(() => op.step([batch([[7, 3]], [-1]), none], errors), /retracted a row it does not hold/);
});

test('a residual that fails reports an error on arrival and retracts it with the row', () => {
  // residual: 10 / (v - 5) > 0, which fails for v = 5
  const residual: ScalarExpr = {
    kind: 'call',
    fn: 'gt',
    args: [
      {
        kind: 'call',
        fn: 'div',
        args: [
          { kind: 'const', value: 10, type: T.int32 },
          {
            kind: 'call',
            fn: 'sub',
            args: [col(3, 'v'), { kind: 'const', value: 5, type: T.int32 }],
            type: T.int32,
          },
        ],
        type: T.int32,
      },
      { kind: 'const', value: 0, type: T.int32 },
    ],
    type: T.bool,
  };
  const op = new TemporalJoinOp(node('left', residual), left, right);
  const errors = sink();
  op.step([none, batch([[1, 5]], [1])], errors);
  assert.deepEqual(lines(op.step([batch([[9, 1]], [1]), none], errors)), ['1 × [9,1,null,null]']);
  assert.equal(errors.reported.length, 1);
  assert.equal(errors.reported[0]?.[1], 1);
  op.step([none, batch([[1, 5]], [-1])], errors);
  assert.deepEqual(lines(op.step([batch([[9, 1]], [-1]), none], errors)), ['-1 × [9,1,null,null]']);
  assert.deepEqual(
    errors.reported.map(([, w]) => w),
    [1, -1],
  );
});

test('the state survives a checkpoint round trip: incremental deltas, then a reload', () => {
  const op = new TemporalJoinOp(node('inner'), left, right);
  op.trackChanges(true);
  const errors = sink();
  const stored = new Map<string, unknown>();
  const save = (full: boolean): void => {
    const d = op.takeStateDelta(full);
    if (d.replaceAll) stored.clear();
    for (const id of d.deletes) stored.delete(id);
    for (const [id, v] of d.upserts) stored.set(id, structuredClone(v));
  };
  op.step(
    [
      none,
      batch(
        [
          [1, 100],
          [2, 200],
        ],
        [1, 1],
      ),
    ],
    errors,
  );
  op.step(
    [
      batch(
        [
          [10, 1],
          [11, 2],
        ],
        [1, 1],
      ),
      none,
    ],
    errors,
  );
  save(false);
  op.step(
    [
      batch([[12, 1]], [2]),
      batch(
        [
          [1, 100],
          [1, 101],
        ],
        [-1, 1],
      ),
    ],
    errors,
  );
  op.step(
    [
      batch(
        [
          [12, 1],
          [11, 2],
        ],
        [-1, -1],
      ),
      none,
    ],
    errors,
  );
  save(false);
  const restored = new TemporalJoinOp(node('inner'), left, right);
  restored.loadState(stored.values());
  assert.deepEqual(restored.heldRows(), op.heldRows());
  // Both retract the same rows from here on.
  const next = (o: TemporalJoinOp): string[] =>
    lines(
      o.step(
        [
          batch(
            [
              [10, 1],
              [12, 1],
              [13, 1],
            ],
            [-1, -1, 1],
          ),
          batch([[2, 200]], [-1]),
        ],
        errors,
      ),
    );
  const [a, b] = [next(restored), next(op)];
  assert.deepEqual(a, b);
  // 10 met 100 before the change; the copies of 12 arrived with it, in its epoch, and met 101.
  assert.deepEqual(a, ['-1 × [10,1,1,100]', '-1 × [12,1,1,101]', '1 × [13,1,1,101]']);
});

test('a right row held twice is met twice, and retracted twice after it changed', () => {
  const op = new TemporalJoinOp(node('inner'), left, right);
  const errors = sink();
  op.step(
    [
      none,
      batch(
        [
          [1, 100],
          [1, 7],
        ],
        [2, 1],
      ),
    ],
    errors,
  );
  assert.deepEqual(lines(op.step([batch([[10, 1]], [1]), none], errors)), [
    '1 × [10,1,1,7]',
    '2 × [10,1,1,100]',
  ]);
  op.step([none, batch([[1, 100]], [-1])], errors);
  assert.deepEqual(lines(op.step([batch([[10, 1]], [-1]), none], errors)), [
    '-1 × [10,1,1,7]',
    '-2 × [10,1,1,100]',
  ]);
});

test('left rows of one hash are kept apart, retracted each with its own matches, and checkpointed', () => {
  // Two rows of one hash, found by search (32-bit hashes meet by some 80,000 rows).
  const seen = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let i = 0; pair === null && i < 2_000_000; i++) {
    const h = hashRow([`s${i}`, 1]);
    const other = seen.get(h);
    if (other !== undefined) pair = [other, `s${i}`];
    else seen.set(h, `s${i}`);
  }
  assert.ok(pair !== null);
  const [x, y] = pair;
  const op = new TemporalJoinOp(node('left'), left, right);
  op.trackChanges(true);
  const errors = sink();
  op.step([batch([[y, 1]], [2]), none], errors); // y: padded
  op.step([none, batch([[1, 100]], [1])], errors);
  op.step([batch([[x, 1]], [1]), none], errors); // x, at y's hash: meets 100
  // x's retraction takes x's arrival, not the older one of y at the same hash.
  assert.deepEqual(lines(op.step([batch([[x, 1]], [-1]), none], errors)), [`-1 × ["${x}",1,1,100]`]);
  op.step([batch([[x, 1]], [1]), none], errors);
  const stored = new Map<string, unknown>();
  for (const [id, v] of op.takeStateDelta(true).upserts) stored.set(id, structuredClone(v));
  const restored = new TemporalJoinOp(node('left'), left, right);
  restored.loadState(stored.values());
  for (const o of [op, restored]) {
    assert.deepEqual(
      lines(
        o.step(
          [
            batch(
              [
                [y, 1],
                [x, 1],
              ],
              [-2, -1],
            ),
            none,
          ],
          errors,
        ),
      ),
      [`-1 × ["${x}",1,1,100]`, `-2 × ["${y}",1,null,null]`],
    );
    assert.deepEqual(o.heldRows(), { right: 1, arrivals: 0 });
  }
});
