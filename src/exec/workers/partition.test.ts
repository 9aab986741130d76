// Unit tests of the partitioned Reduce's pieces: the partition of a group id, which Reduces may be
// partitioned, how a column crosses to a worker, and how a step's changes come back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { T, type Value } from '../../common/types.ts';
import type { DataflowNode } from '../../ivm/dataflow-plan.ts';
import { groupId, hashGroupId, hashPartition, partitionOf } from './partition-hash.ts';
import { partitioningOf } from './partition-eligibility.ts';
import { columnValue, encodeColumn } from './partition-protocol.ts';
import { PartitionPool, validWorkers } from './partition-pool.ts';
import { PartitionedReduce } from './partitioned-reduce.ts';
import { IntEntryIndex, NOT_FOUND } from './int-entry-index.ts';
import { ReduceOp } from '../../ivm/ops/reduce-op.ts';
import type { RowErrorSink } from '../../ivm/operator.ts';
import { ColumnBatch } from '../../ivm/zset.ts';

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

test('values one group holds land in one partition', () => {
  assert.equal(hashGroupId(groupId([0])), hashGroupId(groupId([-0])));
  assert.equal(hashGroupId(groupId([NaN])), hashGroupId(groupId([0 / 0])));
  assert.equal(hashGroupId(groupId(['a', 1])), hashGroupId(groupId(['a', 1])));
  assert.equal(partitionOf(groupId([null]), 4), partitionOf(groupId([null]), 4));
});

test('consecutive ids spread over the partitions', () => {
  for (const partitions of [2, 4]) {
    const counts = new Array<number>(partitions).fill(0);
    for (let i = 0; i < 10_000; i++) counts[partitionOf(groupId([i]), partitions)]! += 1;
    for (const c of counts) assert.ok(c > 10_000 / partitions / 1.2, `${counts.join(',')}`);
    const text = new Array<number>(partitions).fill(0);
    for (let i = 0; i < 10_000; i++) text[partitionOf(groupId([`seller-${i}`, i % 3]), partitions)]! += 1;
    for (const c of text) assert.ok(c > 10_000 / partitions / 1.2, `${text.join(',')}`);
  }
});

function reduceNode(over: Partial<ReduceNode> = {}): ReduceNode {
  const node: ReduceNode = {
    id: 1,
    kind: 'reduce',
    inputs: [0],
    fused: {
      filter: null,
      project: [
        { kind: 'col', index: 1, name: 'k', type: T.int32 },
        { kind: 'col', index: 2, name: 'v', type: T.int32 },
      ],
      columns: [
        { name: 'k', type: T.int32 },
        { name: 'arg0', type: T.int32 },
      ],
    },
    keyCount: 1,
    aggregates: [
      {
        fn: 'sum',
        distinct: false,
        argColumn: 1,
        argType: T.int32,
        outputType: T.int64,
        strategy: 'invertible',
      },
    ],
    columns: [
      { name: 'k', type: T.int32 },
      { name: 's', type: T.int64 },
    ],
    stateId: 'v/reduce1',
  };
  return { ...node, ...over };
}

const INPUT = [
  { name: 'id', type: T.int64 },
  { name: 'k', type: T.int32 },
  { name: 'v', type: T.int32 },
];

test('a plain GROUP BY of columns with COUNT/SUM/AVG is partitioned; the rest say why not', () => {
  assert.deepEqual(partitioningOf(reduceNode(), INPUT), {
    partitioned: true,
    layout: { keyColumns: [1], usedColumns: [1, 2] },
  });
  const reason = (node: ReduceNode): string => {
    const p = partitioningOf(node, INPUT);
    return p.partitioned ? 'partitioned' : p.reason;
  };
  assert.match(reason(reduceNode({ keyCount: 0 })), /global aggregate/);
  const agg = reduceNode().aggregates[0]!;
  assert.match(reason(reduceNode({ aggregates: [{ ...agg, fn: 'max', strategy: 'multiset' }] })), /MAX/);
  assert.match(reason(reduceNode({ aggregates: [{ ...agg, distinct: true }] })), /DISTINCT/);
  const fused = reduceNode().fused!;
  const filtered = { ...fused, filter: { kind: 'col' as const, index: 0, name: 'b', type: T.bool } };
  assert.match(reason(reduceNode({ fused: filtered })), /filter/);
  const numeric = [
    { name: 'k', type: T.int32 },
    { name: 's', type: T.numeric },
  ];
  assert.match(reason(reduceNode({ columns: numeric })), /numeric/);
});

test('a column crosses as doubles with a null mask, or as its values', () => {
  const values: Value[] = [1, null, -0, 2.5, NaN];
  const numeric = encodeColumn(values.length, (i) => values[i] as Value, true);
  assert.ok('f64' in numeric && numeric.f64.buffer instanceof SharedArrayBuffer);
  assert.deepEqual(
    values.map((_, i) => columnValue(numeric, i)),
    values,
  );
  assert.ok(Object.is(columnValue(numeric, 2), -0));
  const mixed: Value[] = [1, 'a', null, 2n];
  const plain = encodeColumn(mixed.length, (i) => mixed[i] as Value, false);
  assert.ok('values' in plain);
  assert.deepEqual(
    mixed.map((_, i) => columnValue(plain, i)),
    mixed,
  );
});

test('the worker count is an integer from 1 to 64', () => {
  assert.equal(validWorkers(2), 2);
  assert.equal(validWorkers('4'), 4);
  for (const bad of [0, 65, 1.5, 'two', null])
    assert.throws(() => validWorkers(bad), /workers must be an integer from 1 to 64/);
});

test(
  'a thread that ends fails the call waiting for it, and every later call, with a clear error',
  { timeout: 60_000 },
  () => {
    const pool = new PartitionPool(2);
    try {
      // A request for a Reduce the threads do not hold: answered (an error), so the threads are serving.
      assert.throws(() => pool.callAll({ t: 'size', h: 99 }), /partition worker holds no reduce 99/);
      // Thread 1 ends while the main thread waits for it (its exit handler raises the flag; without it
      // the call would wait out its 120 s timeout, past this test's).
      assert.throws(
        () => pool.callEach([{ t: 'size', h: 99 }, { t: 'exit' }]),
        /partition worker 1 has ended: its partition's state is lost/,
      );
      assert.throws(() => pool.callAll({ t: 'size', h: 99 }), /partition worker 1 has ended/);
      assert.throws(() => pool.callEach([null, { t: 'size', h: 1 }]), /partition worker 1 has ended/);
    } finally {
      pool.close();
    }
  },
);

test(
  'a partitioned step gives the single Reduce’s changes; a thread answers numbers in its reply buffers, text as a message',
  { timeout: 60_000 },
  () => {
    const text = reduceNode({
      fused: {
        filter: null,
        project: [
          { kind: 'col', index: 3, name: 'r', type: T.text },
          { kind: 'col', index: 2, name: 'v', type: T.int32 },
        ],
        columns: [
          { name: 'r', type: T.text },
          { name: 'arg0', type: T.int32 },
        ],
      },
      columns: [
        { name: 'r', type: T.text },
        { name: 's', type: T.int64 },
      ],
      stateId: 'v/reduce2',
    });
    const input = [...INPUT, { name: 'r', type: T.text }];
    const pool = new PartitionPool(2);
    try {
      for (const [node, viaBuffers] of [
        [reduceNode(), true],
        [text, false],
      ] as const) {
        const layout = partitioningOf(node, input);
        assert.ok(layout.partitioned);
        const fused = node.fused!;
        const single = new ReduceOp(node, fused.columns, {
          filter: fused.filter,
          project: fused.project,
          inputColumns: input,
        });
        const parted = new PartitionedReduce(node, input, layout.layout, pool);
        const sink: RowErrorSink = { report: () => assert.fail('no row errors') };
        const before = { ...pool.answers };
        for (let b = 0; b < 4; b++) {
          // 200 rows over 50 keys (some NULL amounts): both partitions get rows and change groups.
          const ids: Value[] = [];
          const keys: Value[] = [];
          const amounts: Value[] = [];
          const regions: Value[] = [];
          for (let i = 0; i < 200; i++) {
            ids.push(b * 1000 + i);
            keys.push((i * 7 + b) % 50);
            amounts.push(i % 13 === 0 ? null : i - b);
            regions.push(`r${(i * 7 + b) % 50}`);
          }
          const batch = (): ColumnBatch =>
            new ColumnBatch([ids, keys, amounts, regions], new Array<number>(200).fill(b === 3 ? -1 : 1));
          const want = single.step([batch()], sink);
          const got = parted.step([batch()], sink);
          assert.ok(want.weights.length > 0);
          assert.deepEqual(
            { cols: got.cols, weights: got.weights },
            { cols: want.cols, weights: want.weights },
          );
        }
        const inBuffers = pool.answers.inBuffers - before.inBuffers;
        const asMessages = pool.answers.asMessages - before.asMessages;
        // Every step of the numeric Reduce (the first one too, which hands the thread its buffers in a
        // message) is answered in the reply buffers; the text key's come as messages.
        assert.deepEqual(
          { inBuffers, asMessages },
          viaBuffers ? { inBuffers: 4, asMessages: 0 } : { inBuffers: 0, asMessages: 4 },
        );
        parted.close();
      }
    } finally {
      pool.close();
    }
  },
);

test('a hash beyond the int32 range picks the partition `%` would', () => {
  for (const partitions of [1, 2, 3, 7, 64])
    for (const hash of [0, 1, 255, 256, 0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff])
      assert.equal(hashPartition(hash, partitions), hash % partitions, `${hash} % ${partitions}`);
});

test(
  'a large step’s merged weights are lent to its batch: the next step reuses the array, and the old batch refuses reads',
  { timeout: 60_000 },
  () => {
    const node = reduceNode();
    const layout = partitioningOf(node, INPUT);
    assert.ok(layout.partitioned);
    const fused = node.fused!;
    const single = new ReduceOp(node, fused.columns, {
      filter: fused.filter,
      project: fused.project,
      inputColumns: INPUT,
    });
    const pool = new PartitionPool(2);
    try {
      const parted = new PartitionedReduce(node, INPUT, layout.layout, pool);
      const sink: RowErrorSink = { report: () => assert.fail('no row errors') };
      // 6,000 rows over 5,000 keys: ≈ 5,000 changes in the first step, ≈ 10,000 in the second.
      const batch = (b: number): ColumnBatch => {
        const ids: Value[] = [];
        const keys: Value[] = [];
        const amounts: Value[] = [];
        for (let i = 0; i < 6000; i++) {
          ids.push(b * 10_000 + i);
          keys.push((i * 7919 + b) % 5000);
          amounts.push(i % 100);
        }
        return new ColumnBatch([ids, keys, amounts], new Array<number>(6000).fill(1));
      };
      const first = parted.step([batch(0)], sink);
      assert.deepEqual(first.weights, single.step([batch(0)], sink).weights);
      const lent = first.weights;
      const second = parted.step([batch(1)], sink);
      assert.deepEqual(second.weights, single.step([batch(1)], sink).weights);
      assert.equal(second.weights, lent, 'the second step wrote into the first step’s array');
      assert.throws(() => first.weights.length, /weights were read after its next step/);
      parted.close();
    } finally {
      pool.close();
    }
  },
);

test('the fold’s int32 index finds what a Map finds, across growth and steps', () => {
  const index = new IntEntryIndex();
  let seed = 7;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) | 0);
  for (let step = 0; step < 5; step++) {
    index.clear();
    const want = new Map<number, number>();
    // From a few ids to thousands (several doublings), negatives and int32 extremes among them.
    const ids = 10 ** (step % 4) * 3;
    for (let e = 0; e < 4 * ids; e++) {
      const id = e % 7 === 0 ? [0, -1, 2 ** 31 - 1, -(2 ** 31)][e % 4]! : next() % ids;
      const got = index.entryOrAdd(id, e);
      const had = want.get(id);
      if (had === undefined) want.set(id, e);
      assert.equal(got, had ?? NOT_FOUND, `step ${step}, id ${id}`);
    }
  }
});
