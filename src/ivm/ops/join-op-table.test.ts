// The join reading one side from a keyed table's rows (join-table-side.ts), without SQL: the side is
// the table as it is after the epoch's batch, the join adds none of its rows, and the delta rule
// still gives exactly ΔL⋈R_old + L_new⋈ΔR when both sides change in one step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import type { DataflowNode, JoinKind } from '../dataflow-plan.ts';
import type { ZBatch } from '../zset.ts';
import { JoinOp } from './join-op.ts';
import { SlotRowMap } from '../slot-row-map.ts';
import { TableJoinSide } from '../join-table-side.ts';
import { batch, changes, failOnRowError, none, stepChanges } from '../../../test/support/zbatches.ts';

// Left [k, v] (k: a key into the table); the table's rows [id, name].
const LEFT = [
  { name: 'k', type: T.int32 },
  { name: 'v', type: T.int32 },
];
const TABLE = [
  { name: 'id', type: T.int32 },
  { name: 'name', type: T.text },
];
const col = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.int32 });
/** A join of left rows with a table (the right side) read by its key, and the table's rows. */
function setup(joinKind: JoinKind): { op: JoinOp; table: SlotRowMap<Value>; apply: (d: ZBatch) => ZBatch } {
  const table = new SlotRowMap<Value>(2, 1, (row) => row[0] as Value);
  const node: Extract<DataflowNode, { kind: 'join' }> = {
    id: 2,
    kind: 'join',
    inputs: [0, 1],
    joinKind,
    leftKey: [col(0)],
    rightKey: [col(0)],
    residual: null,
    columns: [...LEFT, ...TABLE],
    stateId: 'v/join2',
    shared: { side: 1, arrangement: 't(0)', table: true },
    fused: null,
  };
  const op = new JoinOp(node, LEFT, TABLE, null, new TableJoinSide(() => table, 'R'));
  // The table applies its batch (deletes first) before the join steps, as the engine does.
  const apply = (d: ZBatch): ZBatch => {
    d.rows.forEach((r, i) => {
      if ((d.weights[i] as number) < 0) table.delete(r[0] as Value);
    });
    d.rows.forEach((r, i) => {
      if ((d.weights[i] as number) > 0) table.set(r[0] as Value, r);
    });
    if (table.wantsCompaction) table.compact();
    return d;
  };
  return { op, table, apply };
}

test('the table side is read, never arranged: the join holds only the left rows', () => {
  const { op, apply } = setup('inner');
  assert.deepEqual(
    stepChanges(op, [
      none,
      apply(
        batch([
          [[1, 'a'], 1],
          [[2, 'b'], 1],
        ]),
      ),
    ]),
    [],
  );
  assert.deepEqual(op.ownRows(), [0, 0]);
  assert.deepEqual(
    stepChanges(op, [
      batch([
        [[1, 10], 1],
        [[3, 30], 1],
      ]),
      none,
    ]),
    ['+[1,10,1,"a"]×1'],
  );
  assert.deepEqual(op.ownRows(), [2, 0]);
  assert.deepEqual(op.arrangedRows(), [2, 2]);
});

test('both sides in one step, the table updated and deleted: ΔL⋈R_old + L_new⋈ΔR', () => {
  const { op, apply } = setup('inner');
  op.step(
    [
      batch([
        [[1, 10], 1],
        [[2, 20], 1],
      ]),
      apply(
        batch([
          [[1, 'a'], 1],
          [[2, 'b'], 1],
        ]),
      ),
    ],
    failOnRowError,
  );
  // Key 1 renamed, key 2 deleted, key 3 added; on the left a row of key 3 arrives, one of key 1 leaves.
  const out = op.step(
    [
      batch([
        [[3, 31], 1],
        [[1, 10], -1],
      ]),
      apply(
        batch([
          [[1, 'a'], -1],
          [[1, 'z'], 1],
          [[2, 'b'], -1],
          [[3, 'c'], 1],
        ]),
      ),
    ],
    failOnRowError,
  );
  assert.deepEqual(changes(out), ['+[3,31,3,"c"]×1', '-[1,10,1,"a"]×1', '-[2,20,2,"b"]×1']);
  assert.deepEqual(op.ownRows(), [2, 0]);
});

test('outer joins pad against the table as it was before the step', () => {
  const { op, apply } = setup('full');
  assert.deepEqual(stepChanges(op, [batch([[[1, 10], 1]]), none]), ['+[1,10,null,null]×1']);
  // The table's row and a second left row of its key in one step: the padding goes once.
  const out = op.step([batch([[[1, 11], 1]]), apply(batch([[[1, 'a'], 1]]))], failOnRowError);
  assert.deepEqual(changes(out), ['+[1,10,1,"a"]×1', '+[1,11,1,"a"]×1', '-[1,10,null,null]×1']);
  const gone = op.step(
    [
      batch([
        [[1, 10], -1],
        [[1, 11], -1],
      ]),
      apply(batch([[[1, 'a'], -1]])),
    ],
    failOnRowError,
  );
  assert.deepEqual(changes(gone), ['-[1,10,1,"a"]×1', '-[1,11,1,"a"]×1']);
});

test('kept columns are written from the slots the table took, and rebuilt when its slots start over', () => {
  const table = new SlotRowMap<Value>(2, 1, (row) => row[0] as Value);
  const side = new TableJoinSide(() => table, 'R');
  const keyOf = (row: readonly Value[]): number => row[0] as number;
  const kept = (key: number): Value => (side.keptColumns[0] as readonly Value[])[side.slotOf(key)] as Value;
  table.set(1, [1, 'a']);
  assert.deepEqual(side.keepColumns([1]), [0]);
  table.delete(1);
  table.set(1, [1, 'a']); // put back unchanged: a new slot, and no change the join sees
  table.set(2, [2, 'b']);
  side.sync(batch([[[2, 'b'], 1]]), keyOf);
  assert.deepEqual([kept(1), kept(2)], ['a', 'b']);
  table.clear();
  table.set(2, [2, 'c']);
  side.sync(batch([[[2, 'c'], 1]]), keyOf);
  assert.equal(kept(2), 'c');
});
