// Unit tests of Reduce+Merge without SQL: multiset MIN/MAX under deletes, COUNT DISTINCT, group
// disappearance, eviction (HOP panes), the global group, one net change per epoch, and errors on overflow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { AggregateSpec, DataflowNode } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { ReduceOp } from './reduce-op.ts';
import { batch } from '../../../test/support/zbatches.ts';

const agg = (
  fn: AggregateSpec['fn'],
  argColumn: number | null,
  strategy: AggregateSpec['strategy'],
  distinct = false,
): AggregateSpec => ({
  fn,
  distinct,
  argColumn,
  // integer arguments (SUM(integer) is a bigint; SUM(bigint) is numeric: decimal-sum.test.ts)
  argType: argColumn === null ? null : T.int32,
  outputType: T.int64,
  strategy,
});

function reduce(keyCount: number, aggregates: AggregateSpec[]): ReduceOp {
  const node: Extract<DataflowNode, { kind: 'reduce' }> = {
    id: 1,
    kind: 'reduce',
    inputs: [0],
    fused: null,
    keyCount,
    aggregates,
    columns: [...Array(keyCount + aggregates.length)].map((_, i) => ({ name: `c${i}`, type: T.int64 })),
    stateId: 'v/reduce1',
  };
  return new ReduceOp(
    node,
    [
      { name: 'k', type: T.int64 },
      { name: 'x', type: T.int64 },
    ],
    null,
  );
}

const reported: { message: string; weight: number }[] = [];
const sink: RowErrorSink = {
  report(error, _row, _columns, weight) {
    reported.push({ message: error instanceof Error ? error.message : String(error), weight });
  },
};

function changes(out: ZBatch): string[] {
  return out.rows.map(
    (r, i) =>
      `${(out.weights[i] as number) > 0 ? '+' : '-'}${JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`,
  );
}

test('MIN/MAX keep a multiset so deleting the minimum reveals the next one', () => {
  const op = reduce(1, [agg('min', 1, 'multiset'), agg('max', 1, 'multiset')]);
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, 5], 1],
            [[1, 3], 1],
            [[1, 9], 1],
          ]),
        ],
        sink,
      ),
    ),
    ['+[1,3,9]'],
  );
  assert.deepEqual(changes(op.step([batch([[[1, 3], -1]])], sink)), ['-[1,3,9]', '+[1,5,9]']);
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, 9], -1],
            [[1, 7], 1],
          ]),
        ],
        sink,
      ),
    ),
    ['-[1,5,9]', '+[1,5,7]'],
  );
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, 5], -1],
            [[1, 7], -1],
          ]),
        ],
        sink,
      ),
    ),
    ['-[1,5,7]'],
  );
});

test('a batch that changes a group and changes it back emits nothing', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible')]);
  op.step([batch([[[1, 5], 1]])], sink);
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, 5], -1],
            [[1, 2], 1],
            [[1, 3], 1],
            [[1, 2], -1],
            [[1, 3], -1],
            [[1, 5], 1],
          ]),
        ],
        sink,
      ),
    ),
    [],
  );
});

test('COUNT DISTINCT counts values, not rows, and ignores NULL', () => {
  const op = reduce(1, [agg('count', 1, 'multiset', true), agg('count_star', null, 'invertible')]);
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, 5], 1],
            [[1, 5], 1],
            [[1, null], 1],
          ]),
        ],
        sink,
      ),
    ),
    ['+[1,1,3]'],
  );
  assert.deepEqual(changes(op.step([batch([[[1, 5], -1]])], sink)), ['-[1,1,3]', '+[1,1,2]']);
  assert.deepEqual(changes(op.step([batch([[[1, 5], -1]])], sink)), ['-[1,1,2]', '+[1,0,1]']);
});

test('the global group always has its row; keyed groups disappear when empty', () => {
  const global = reduce(0, [agg('count_star', null, 'invertible'), agg('sum', 1, 'invertible')]);
  assert.deepEqual(changes(global.step([batch([])], sink)), ['+[0,null]']);
  assert.deepEqual(changes(global.step([batch([[[1, 4], 1]])], sink)), ['-[0,null]', '+[1,4]']);
  assert.deepEqual(changes(global.step([batch([[[1, 4], -1]])], sink)), ['-[1,4]', '+[0,null]']);
  const keyed = reduce(1, [agg('count_star', null, 'invertible')]);
  keyed.step([batch([[[7, 1], 1]])], sink);
  assert.deepEqual(changes(keyed.step([batch([[[7, 1], -1]])], sink)), ['-[7,1]']);
  assert.equal(keyed.groupCount(), 0);
});

test("a view borrowing the rows counts a step by the Reduce's net weight of the batch it returned, no other", () => {
  const keyed = reduce(1, [agg('count_star', null, 'invertible')]);
  const first = keyed.step(
    [
      batch([
        [[7, 1], 1],
        [[8, 1], 1],
        [[9, 1], 1],
      ]),
    ],
    sink,
  );
  assert.equal(keyed.netWeightOf(first), 3, 'three groups appeared');
  const second = keyed.step(
    [
      batch([
        [[7, 1], -1],
        [[8, 1], 1],
        [[10, 1], 1],
      ]),
    ],
    sink,
  );
  assert.deepEqual(changes(second), ['-[7,1]', '-[8,1]', '+[8,2]', '+[10,1]']);
  assert.equal(keyed.netWeightOf(second), 0, 'one group gone, one changed, one new');
  assert.equal(keyed.netWeightOf(first), null, 'a batch of an earlier step is not counted');
  assert.equal(keyed.netWeightOf(batch([[[1, 1], 1]])), null);
});

test('integer SUM is exact beyond 2^53 and an int64 overflow is a retractable group error', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible')]);
  const big = 2n ** 62n;
  assert.deepEqual(
    changes(
      op.step(
        [
          batch([
            [[1, big], 1],
            [[1, 1], 1],
          ]),
        ],
        sink,
      ),
    ),
    [`+[1,"${big + 1n}n"]`],
  );
  reported.length = 0;
  assert.deepEqual(changes(op.step([batch([[[1, big], 1]])], sink)), [`-[1,"${big + 1n}n"]`]);
  assert.deepEqual(reported, [{ message: 'bigint out of range', weight: 1 }]);
  assert.deepEqual(changes(op.step([batch([[[1, big], -1]])], sink)), [`+[1,"${big + 1n}n"]`]);
  assert.deepEqual(reported.slice(1), [{ message: 'bigint out of range', weight: -1 }]);
});

test('a Reduce over a Reduce reads its input column by column, never its row objects', () => {
  const totals = reduce(1, [agg('sum', 1, 'invertible')]);
  const counts = reduce(1, [agg('count_star', null, 'invertible')]);
  let rowReads = 0;
  const watched = (b: ZBatch): ZBatch => ({
    get rows() {
      rowReads++;
      return b.rows;
    },
    weights: b.weights,
    consolidated: b.consolidated,
    ...(b.cols === undefined ? {} : { cols: b.cols }),
  });
  const first = totals.step(
    [
      batch([
        [[1, 5], 1],
        [[2, 7], 1],
      ]),
    ],
    sink,
  );
  assert.notEqual(first.cols, undefined);
  // Keyed by the total (column 1 of the first Reduce's rows): -old and +new move between groups.
  const byTotal = (b: ZBatch): ZBatch => {
    const cols = b.cols as readonly (readonly Value[])[];
    return watched({
      rows: [],
      weights: b.weights,
      consolidated: true,
      cols: [cols[1] as Value[], cols[0] as Value[]],
    });
  };
  assert.deepEqual(changes(counts.step([byTotal(first)], sink)), ['+[5,1]', '+[7,1]']);
  const second = totals.step([batch([[[1, 2], 1]])], sink);
  assert.deepEqual(changes(second), ['-[1,5]', '+[1,7]']);
  assert.deepEqual(changes(counts.step([byTotal(second)], sink)), ['-[5,1]', '-[7,1]', '+[7,2]']);
  assert.equal(rowReads, 0);
});

test('groups kept in their records survive a checkpoint and retract exactly after it', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible'), agg('count_star', null, 'invertible')]);
  const big = 2n ** 60n;
  op.step(
    [
      batch([
        [[1, 5], 1],
        [[1, 6], 1],
        [[-0, 1], 1],
        [[2.5, 3], 1],
        [['t', 4], 1],
        [[3, big], 1],
      ]),
    ],
    sink,
  );
  const delta = op.takeStateDelta(true);
  const restored = reduce(1, [agg('sum', 1, 'invertible'), agg('count_star', null, 'invertible')]);
  restored.loadState(delta.upserts.map(([, v]) => v));
  const rowsOf = (r: ReduceOp): string[] =>
    changes({
      rows: [...r.outputRows()],
      weights: [...r.outputRows()].map(() => 1),
      consolidated: true,
    }).sort();
  assert.deepEqual(rowsOf(restored), rowsOf(op));
  assert.deepEqual(rowsOf(op), ['+["t",4,1]', '+[0,1,1]', '+[1,11,2]', '+[2.5,3,1]', `+[3,"${big}n",1]`]);
  const next = batch([
    [[1, 5], -1],
    [[0, 1], -1],
    [[2.5, 3], -1],
    [['t', 1], 1],
    [[3, big], 1],
  ]);
  const expected = changes(op.step([next], sink));
  assert.deepEqual(changes(restored.step([next], sink)), expected);
  assert.deepEqual(expected, [
    '-[1,11,2]',
    '+[1,6,1]',
    '-[0,1,1]',
    '-[2.5,3,1]',
    '-["t",4,1]',
    '+["t",5,2]',
    `-[3,"${big}n",1]`,
    `+[3,"${2n * big}n",2]`,
  ]);
});

test('evict drops groups without output; the checkpoint delta deletes them; a later row starts fresh', () => {
  const r = reduce(1, [agg('count_star', null, 'invertible'), agg('max', 1, 'multiset')]);
  r.trackChanges(true);
  r.step(
    [
      batch([
        [[1, 5], 1],
        [[1, 7], 1],
        [[2, 3], 1],
      ]),
    ],
    sink,
  );
  r.takeStateDelta(true);
  assert.equal(
    r.evict((key) => key[0] === 1),
    1,
  );
  assert.equal(r.groupCount(), 1);
  const delta = r.takeStateDelta(false);
  assert.deepEqual(delta.upserts, []);
  assert.equal(delta.deletes.length, 1);
  // The evicted group's multiset is gone: a new row for key 1 is a new group (an insert only).
  assert.deepEqual(changes(r.step([batch([[[1, 2], 1]])], sink)), ['+[1,1,2]']);
});

test('partials are kept by touch order: each step touches groups in its own order, changes leave in it', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible'), agg('count', 1, 'invertible')]);
  op.step(
    [
      batch([
        [[1, 10], 1],
        [[2, 20], 1],
        [[3, 30], 1],
      ]),
    ],
    sink,
  );
  // group 3 first, then 1 (two rows, the second after group 2's), then 2; group 2 nets to nothing
  const out = op.step(
    [
      batch([
        [[3, 1], 1],
        [[1, 2], 1],
        [[2, 5], 1],
        [[1, 4], 1],
        [[2, 5], -1],
      ]),
    ],
    sink,
  );
  assert.deepEqual(changes(out), ['-[3,30,1]', '+[3,31,2]', '-[1,10,1]', '+[1,16,3]']);
  // the next step's touch indexes start again at 0, whatever groups were touched before
  assert.deepEqual(changes(op.step([batch([[[2, -20], 1]])], sink)), ['-[2,20,1]', '+[2,0,2]']);
});

test('a step that throws in its merge leaves no group marked as touched in the next one', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible')]);
  op.step(
    [
      batch([
        [[1, 1], 1],
        [[2, 2], 1],
        [[3, 3], 1],
      ]),
    ],
    sink,
  );
  // group 1 merges, group 2 goes negative and throws: group 3 (after it) keeps its mark
  assert.throws(
    () =>
      op.step(
        [
          batch([
            [[1, 1], 1],
            [[2, 2], -2],
            [[3, 3], 1],
          ]),
        ],
        sink,
      ),
    /negative row count/,
  );
  // groups 2 and 3 touched again: a stale mark would put group 3's partial at the previous step's
  // index, past this step's touched groups, and its change would be lost
  const out = op.step(
    [
      batch([
        [[1, 1], 1],
        [[2, 2], 3],
        [[3, 3], 1],
      ]),
    ],
    sink,
  );
  assert.deepEqual(changes(out), ['-[1,2]', '+[1,3]', '-[2,2]', '+[2,4]', '-[3,3]', '+[3,6]']);
});

test('a large step lends its change columns to its batch until the next step writes a change', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible')]);
  const groups = 2000; // at least the buffer's LEND_FROM changes
  const rows = (x: number): ZBatch =>
    batch(Array.from({ length: groups }, (_, k): [Value[], number] => [[k, x], 1]));
  const first = op.step([rows(1)], sink);
  assert.equal(first.weights.length, groups);
  const keys = (first.cols as readonly (readonly Value[])[])[0];
  const firstRows = first.rows; // built before the next step: arrays of their own
  const second = op.step([rows(2)], sink);
  // -old/+new per group, written into the same memory: no array of the step's size allocated
  assert.equal(second.weights.length, 2 * groups);
  assert.equal((second.cols as readonly (readonly Value[])[])[0], keys);
  assert.deepEqual(changes(second).slice(0, 2), ['-[0,1]', '+[0,3]']);
  // the first batch expired: a read of its columns throws instead of showing the second's changes
  assert.throws(() => first.weights.length, /read after its producer reused it/);
  assert.throws(() => (first.cols as readonly (readonly Value[])[])[0], /read after its producer reused it/);
  assert.deepEqual(firstRows[groups - 1], [groups - 1, 1]);
  // a step of a few changes (an epoch of one event) is lent too, in columns kept for its length
  const small = op.step([batch([[[0, 1], 1]])], sink);
  assert.deepEqual(changes(small), ['-[0,3]', '+[0,4]']);
  const smallKeys = (small.cols as readonly (readonly Value[])[])[0];
  const smallWeights = small.weights;
  const next = op.step([batch([[[0, 1], 1]])], sink);
  assert.equal((next.cols as readonly (readonly Value[])[])[0], smallKeys);
  assert.equal(next.weights, smallWeights);
  assert.deepEqual(changes(next), ['-[0,4]', '+[0,5]']);
  assert.throws(() => small.weights.length, /read after its producer reused it/);
  // a step with no change expires the batch lent before it as well
  const unchanged = op.step([batch([])], sink);
  assert.equal(unchanged.weights.length, 0);
  assert.throws(() => next.weights.length, /read after its producer reused it/);
});

test('a step of a hundred changes lends its columns too: no copy per step', () => {
  const op = reduce(1, [agg('sum', 1, 'invertible')]);
  const rows = (x: number): ZBatch =>
    batch(Array.from({ length: 50 }, (_, k): [Value[], number] => [[k, x], 1]));
  const first = op.step([rows(1)], sink);
  const keys = (first.cols as readonly (readonly Value[])[])[0];
  const weights = first.weights;
  assert.equal(weights.length, 50);
  const second = op.step([rows(2)], sink);
  assert.equal((second.cols as readonly (readonly Value[])[])[0], keys);
  assert.equal(second.weights, weights);
  assert.equal(second.weights.length, 100);
  assert.deepEqual(changes(second).slice(98), ['-[49,1]', '+[49,3]']);
  assert.throws(() => first.weights.length, /read after its producer reused it/);
});

test('one-row steps touch their group without marks and agree with a step of the same rows', () => {
  const oneByOne = reduce(1, [agg('sum', 1, 'invertible'), agg('count_star', null, 'invertible')]);
  const together = reduce(1, [agg('sum', 1, 'invertible'), agg('count_star', null, 'invertible')]);
  const rows: [Value[], number][] = [
    [[1, 5], 1],
    [[2, 7], 1],
    [[1, 5], -1],
    [[1, 3], 1],
    [[2, 7], -1],
  ];
  const seen: string[] = [];
  for (const r of rows) seen.push(...changes(oneByOne.step([batch([r])], sink)));
  assert.deepEqual(seen, ['+[1,5,1]', '+[2,7,1]', '-[1,5,1]', '+[1,3,1]', '-[2,7,1]']);
  // the same group twice in one step after one-row steps: one partial, one change (no stale mark)
  const a = changes(
    oneByOne.step(
      [
        batch([
          [[1, 1], 1],
          [[1, 1], 1],
        ]),
      ],
      sink,
    ),
  );
  assert.deepEqual(a, ['-[1,3,1]', '+[1,5,3]']);
  const all = together.step([batch([...rows, [[1, 1], 1], [[1, 1], 1]])], sink);
  assert.deepEqual(changes(all), ['+[1,5,3]']);
});

test('text-keyed groups with numeric aggregates keep no row object; the generated merge takes them', () => {
  // GROUP BY a text column, COUNT(*) and SUM: the join bench's view (GROUP BY a.category). Such a
  // group's row is its key array and its record: a change copies no row, and the generated merge
  // (which took only numeric keys before) handles it without the interpreted merge.
  const textReduce = (generated: boolean): ReduceOp =>
    new ReduceOp(
      {
        id: 1,
        kind: 'reduce',
        inputs: [0],
        fused: null,
        keyCount: 1,
        aggregates: [agg('count_star', null, 'invertible'), agg('sum', 1, 'invertible')],
        columns: [
          { name: 'k', type: T.text },
          { name: 'n', type: T.int64 },
          { name: 's', type: T.int64 },
        ],
        stateId: 'v/reduce1',
        ...(generated ? { kernel: 'generated' as const } : {}),
      },
      [
        { name: 'k', type: T.text },
        { name: 'x', type: T.int32 },
      ],
      null,
    );
  const steps: [Value[], number][][] = [
    [
      [['a', 1], 1],
      [['b', 2], 1],
      [['a', 3], 1],
    ],
    [
      [['a', 1], -1],
      [['b', 5], 1],
      [['c', 7], 1],
    ],
    [
      [['b', 2], -1],
      [['b', 5], -1],
      [['a', 3], -1],
      [['a', 4], 1],
    ],
    [[['c', 7], 1]],
  ];
  const ops = [textReduce(true), textReduce(false)];
  const outs = ops.map((op) => steps.map((s) => changes(op.step([batch(s)], sink))));
  assert.deepEqual(outs[0], outs[1]);
  assert.deepEqual(outs[0], [
    ['+["a",2,4]', '+["b",1,2]'],
    ['-["a",2,4]', '+["a",1,3]', '-["b",1,2]', '+["b",2,7]', '+["c",1,7]'],
    ['-["b",2,7]', '-["a",1,3]', '+["a",1,4]'],
    ['-["c",1,7]', '+["c",2,14]'],
  ]);
  for (const op of ops) {
    assert.equal(op.mergeCounts.rowCopies, 0, 'no row object per group change');
    const delta = op.takeStateDelta(true);
    const restored = textReduce(true);
    restored.loadState(delta.upserts.map(([, v]) => v));
    const rows = (r: ReduceOp): string[] => [...r.outputRows()].map((row) => JSON.stringify(row)).sort();
    assert.deepEqual(rows(restored), ['["a",1,4]', '["c",2,14]']);
    assert.deepEqual(rows(op), rows(restored));
    assert.deepEqual(changes(restored.step([batch([[['c', 7], -1]])], sink)), ['-["c",2,14]', '+["c",1,7]']);
  }
  // A group leaving (its count at zero, "b" in the third step) is released by the generated merge
  // too: no group goes to the interpreted merge.
  assert.equal((ops[0] as ReduceOp).mergeCounts.slowMerges, 0);
  assert.equal((ops[0] as ReduceOp).mergeCounts.mergeReleases, 1);
});
