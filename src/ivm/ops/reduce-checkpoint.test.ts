// A Reduce's checkpoint delta is taken without serialising its record-held groups: their records
// are copied at the take and each entry is built when read (the writer reads in bounded slices), so
// the take's work does not grow with the groups' serialisation and later epochs do not leak into it.
// Work is counted (groups serialised at the take and on read), never timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SqlType, Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { AggregateSpec, DataflowNode } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { encodeValues } from '../../common/values.ts';
import { ReduceOp } from './reduce-op.ts';
import { batch } from '../../../test/support/zbatches.ts';

const agg = (
  fn: AggregateSpec['fn'],
  argColumn: number | null,
  argType: SqlType = T.int32,
): AggregateSpec => ({
  fn,
  distinct: false,
  argColumn,
  argType: argColumn === null ? null : argType,
  outputType: argType === T.float64 ? T.float64 : T.int64,
  strategy: fn === 'max' ? 'multiset' : 'invertible',
});

function reduce(aggregates: AggregateSpec[], x: SqlType = T.int64): ReduceOp {
  const node: Extract<DataflowNode, { kind: 'reduce' }> = {
    id: 1,
    kind: 'reduce',
    inputs: [0],
    fused: null,
    keyCount: 1,
    aggregates,
    columns: [...Array(1 + aggregates.length)].map((_, i) => ({ name: `c${i}`, type: T.int64 })),
    stateId: 'v/reduce1',
  };
  return new ReduceOp(
    node,
    [
      { name: 'k', type: T.int64 },
      { name: 'x', type: x },
    ],
    null,
  );
}

const sink: RowErrorSink = { report() {} };

/** Rows for `groups` groups: number keys, and every tenth a text key (a key array per group). */
function rows(groups: number, x: (g: number) => Value, weight = 1): [Value[], number][] {
  return Array.from({ length: groups }, (_, g) => [[g % 10 === 0 ? `k${g}` : g, x(g)], weight]);
}

function sumCountAvg(): ReduceOp {
  return reduce([agg('sum', 1), agg('count_star', null), agg('count', 1)]);
}

test('a full take copies records only; entries are serialised one per read, as of the take', () => {
  const op = sumCountAvg();
  const twin = sumCountAvg();
  op.trackChanges(true);
  for (const r of [op, twin]) r.step([batch(rows(1000, (g) => g))], sink);
  const delta = op.takeStateDelta(true);
  assert.equal(delta.replaceAll, true);
  assert.equal(delta.upserts.length, 1000);
  assert.deepEqual(op.checkpointCounts, { atTake: 0, onRead: 0 });
  // Later epochs change every group and drop some before the writer reads the entries.
  op.step([batch(rows(1000, (g) => 7 * g))], sink);
  op.step([batch(rows(100, (g) => g, -1))], sink);
  // A slice of the writer's reads builds exactly that many entries.
  const slice = Array.from({ length: 100 }, (_, i) => delta.upserts[i]);
  assert.equal(slice.length, 100);
  assert.equal(op.checkpointCounts.onRead, 100);
  const expected = [...twin.takeStateDelta(true).upserts];
  assert.deepEqual([...delta.upserts], expected);
  assert.equal(op.checkpointCounts.onRead, 1100);
  assert.equal(op.checkpointCounts.atTake, 0);
  const entries = [...delta.upserts];
  // The stored shape is `serialize`'s: key, row count, each aggregate's state (COUNT(*) keeps no n
  // of its own), the output row.
  assert.deepEqual(
    entries.find(([k]) => k === encodeValues([5])),
    [
      encodeValues([5]),
      {
        k: [5],
        c: 1,
        a: [
          { n: 1, s: 5 },
          { n: 0, s: 0 },
          { n: 1, s: 0 },
        ],
        o: [5, 5, 1, 1],
        e: null,
      },
    ],
  );
  assert.deepEqual(
    entries.find(([k]) => k === encodeValues(['k10'])),
    [
      encodeValues(['k10']),
      {
        k: ['k10'],
        c: 1,
        a: [
          { n: 1, s: 10 },
          { n: 0, s: 0 },
          { n: 1, s: 0 },
        ],
        o: ['k10', 10, 1, 1],
        e: null,
      },
    ],
  );
});

test('an incremental take copies the changed groups; deletes are listed at the take', () => {
  const op = sumCountAvg();
  const twin = sumCountAvg();
  op.trackChanges(true);
  for (const r of [op, twin]) r.step([batch(rows(1000, (g) => g))], sink);
  op.takeStateDelta(true);
  const change = [...rows(50, (g) => g, -1), ...rows(200, (g) => g + 1).slice(100)];
  for (const r of [op, twin]) r.step([batch(change)], sink);
  const before = { ...op.checkpointCounts };
  const delta = op.takeStateDelta(false);
  assert.equal(delta.replaceAll, false);
  assert.equal(delta.deletes.length, 50);
  assert.equal(delta.upserts.length, 100);
  assert.equal(op.checkpointCounts.atTake, before.atTake);
  assert.equal(op.checkpointCounts.onRead, before.onRead);
  op.step([batch(rows(1000, (g) => -g))], sink);
  const twinAll = new Map(
    [...twin.takeStateDelta(true).upserts]
      .map(([k, v]) => [k, v] as const)
      .filter(([, v]) => v !== undefined),
  );
  for (const [k, v] of delta.upserts) assert.deepEqual(v, twinAll.get(k), k);
  assert.equal(op.checkpointCounts.onRead, before.onRead + 100);
});

test('groups not held by their record are serialised at the take; a restore equals the source', () => {
  const big = 2n ** 60n;
  const op = reduce([agg('sum', 1), agg('count_star', null)]);
  op.step([batch([...rows(20, (g) => g), [[3, big], 1]])], sink);
  const delta = op.takeStateDelta(true);
  // Group 3's sum is a bigint (a side table, not the record): built at the take.
  assert.deepEqual(op.checkpointCounts, { atTake: 1, onRead: 0 });
  op.step([batch([[[3, big], 1]])], sink);
  const restored = reduce([agg('sum', 1), agg('count_star', null)]);
  restored.loadState([...delta.upserts].map(([, v]) => v));
  const sorted = (r: ReduceOp): string[] =>
    [...r.outputRows()].map((row) => JSON.stringify(row, (_k, v: unknown) => String(v))).sort();
  const twin = reduce([agg('sum', 1), agg('count_star', null)]);
  twin.step([batch([...rows(20, (g) => g), [[3, big], 1]])], sink);
  assert.deepEqual(sorted(restored), sorted(twin));

  // Float sums keep their fractions in the record; non-finite counts are a side table.
  const floats = (): ReduceOp => reduce([agg('sum', 1, T.float64)], T.float64);
  const f = floats();
  f.step([batch([...rows(10, (g) => g + 0.25), [[4, Infinity], 1]])], sink);
  const fd = f.takeStateDelta(true);
  assert.deepEqual(f.checkpointCounts, { atTake: 1, onRead: 0 });
  const fr = floats();
  fr.loadState([...fd.upserts].map(([, v]) => v));
  assert.deepEqual(sorted(fr), sorted(f));

  // MIN/MAX keep a multiset: every group serialised at the take, as before.
  const m = reduce([agg('max', 1)]);
  m.step([batch(rows(10, (g) => g))], sink);
  m.takeStateDelta(true);
  assert.deepEqual(m.checkpointCounts, { atTake: 10, onRead: 0 });
});

test('changes are marked by slot: a released slot reused, a group back in another slot, a group gone', () => {
  const op = reduce([agg('sum', 1), agg('count_star', null)]);
  const twin = reduce([agg('sum', 1), agg('count_star', null)]);
  op.trackChanges(true);
  const first = batch([
    [[1, 10], 1],
    [[2, 20], 1],
    [[3, 30], 1],
    [['t', 40], 1],
  ]);
  for (const r of [op, twin]) r.step([first], sink);
  op.takeStateDelta(true);
  const steps = [
    // 1 and 't' are released; 4 takes a freed slot
    batch([
      [[1, 10], -1],
      [['t', 40], -1],
    ]),
    batch([[[4, 5], 1]]),
    // 't' comes back in another slot; 2 is gone for good
    batch([
      [['t', 7], 1],
      [[2, 20], -1],
    ]),
  ];
  for (const b of steps) for (const r of [op, twin]) r.step([b], sink);
  const delta = op.takeStateDelta(false);
  const all = new Map([...twin.takeStateDelta(true).upserts]);
  const upserts = new Map([...delta.upserts]);
  assert.deepEqual([...upserts.keys()].sort(), [encodeValues([4]), encodeValues(['t'])].sort());
  for (const [k, v] of upserts) assert.deepEqual(v, all.get(k));
  assert.equal(delta.deletes.length, 2);
  for (const k of delta.deletes) assert.equal(all.has(k), false);
  // Applied to the last full state, the delta gives the twin's state.
  const restored = reduce([agg('sum', 1), agg('count_star', null)]);
  const base = new Map([...reduceFull(first)]);
  for (const k of delta.deletes) assert.equal(base.delete(k), true);
  for (const [k, v] of upserts) base.set(k, v);
  restored.loadState(base.values());
  assert.deepEqual(new Map([...restored.takeStateDelta(true).upserts]), all);
  assert.equal(op.takeStateDelta(false).upserts.length, 0);
});

function reduceFull(b: ZBatch): (readonly [string, unknown])[] {
  const r = reduce([agg('sum', 1), agg('count_star', null)]);
  r.step([b], sink);
  return [...r.takeStateDelta(true).upserts];
}
