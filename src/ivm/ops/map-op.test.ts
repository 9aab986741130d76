// Unit tests of the Map operator's promise about its output: a projection that keeps the input's
// key passes a batch on as consolidated unless a key is both deleted and inserted; an update (a
// delete and an insert of one key) projected without its changed column is one row twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { RowErrorSink } from '../operator.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import { MapOp } from './map-op.ts';

const COLUMNS = [
  { name: 'id', type: T.int32 },
  { name: 'a', type: T.int32 },
  { name: 'b', type: T.int32 },
];
const NO_ERRORS: RowErrorSink = {
  report: (error) => {
    throw error;
  },
};

/** SELECT id, a FROM t, over t (id PRIMARY KEY, a, b): the projection keeps the key. */
const keepsKey = new MapOp(
  1,
  null,
  [
    { kind: 'col', index: 0, name: 'id', type: T.int32 },
    { kind: 'col', index: 1, name: 'a', type: T.int32 },
  ],
  COLUMNS,
  [0],
);

function batch(rows: (readonly Value[])[], weights: number[]): ZBatch {
  return { rows, weights, consolidated: true };
}

test('a projection keeping the key passes batches on consolidated, updates not', () => {
  const inserts = keepsKey.step(
    [
      batch(
        [
          [1, 10, 100],
          [2, 10, 100],
        ],
        [1, 1],
      ),
    ],
    NO_ERRORS,
  );
  assert.equal(inserts.consolidated, true);
  assert.equal(keepsKey.step([batch([[1, 10, 100]], [-1])], NO_ERRORS).consolidated, true);
  // UPDATE t SET b = 200 WHERE id = 1: -[1, 10, 100] +[1, 10, 200] project to [1, 10] twice.
  const update = keepsKey.step(
    [
      batch(
        [
          [1, 10, 100],
          [1, 10, 200],
        ],
        [-1, 1],
      ),
    ],
    NO_ERRORS,
  );
  assert.equal(update.consolidated, false);
  assert.equal(consolidate(update).rows.length, 0);
  // A delete of one key and an insert of another (a Top-N's row pushed out by a new one): distinct.
  const swap = keepsKey.step(
    [
      batch(
        [
          [1, 10, 100],
          [2, 10, 100],
        ],
        [-1, 1],
      ),
    ],
    NO_ERRORS,
  );
  assert.equal(swap.consolidated, true);
  // Without the key the same projection never claims it.
  const noKey = new MapOp(1, null, [{ kind: 'col', index: 1, name: 'a', type: T.int32 }], COLUMNS);
  assert.equal(noKey.step([batch([[1, 10, 100]], [1])], NO_ERRORS).consolidated, false);
});

test('a projection without a filter passes every row but those whose expression fails, in order', () => {
  // SELECT id, 10 / a FROM t: a row with a = 0 fails and is reported, the rest come out in order.
  const divides = new MapOp(
    2,
    null,
    [
      { kind: 'col', index: 0, name: 'id', type: T.int32 },
      {
        kind: 'call',
        fn: 'div',
        args: [
          { kind: 'const', value: 10, type: T.int32 },
          { kind: 'col', index: 1, name: 'a', type: T.int32 },
        ],
        type: T.int32,
      },
    ],
    COLUMNS,
    [0],
  );
  const failed: number[] = [];
  const sink: RowErrorSink = { report: (_error, row) => void failed.push(row[0] as number) };
  const out = divides.step(
    [
      batch(
        [
          [1, 5, 0],
          [2, 0, 0],
          [3, 2, 0],
        ],
        [1, -1, 2],
      ),
    ],
    sink,
  );
  assert.deepEqual(failed, [2]);
  assert.deepEqual(out.rows, [
    [1, 2],
    [3, 5],
  ]);
  assert.deepEqual(out.weights, [1, 2]);
  assert.equal(out.rows.length, 2);
});
