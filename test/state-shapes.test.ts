// The checkpoint entries tables and operators write, pinned as literals: every keyed state now sits
// on src/ivm/arrangement.ts, and a checkpoint written before that move must still load (same entry
// ids, same values), so a stored state survives an upgrade without a rebuild. Each case loads the
// older entries, checks the contents, changes one thing and checks the delta's ids and values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../src/common/types.ts';
import { T } from '../src/common/types.ts';
import { TableStore } from '../src/exec/table-store.ts';
import { DistinctOp } from '../src/ivm/ops/distinct-op.ts';
import { OutputOp } from '../src/ivm/ops/output-op.ts';
import { ReduceOp } from '../src/ivm/ops/reduce-op.ts';
import type { RowErrorSink } from '../src/ivm/operator.ts';
import type { ZBatch } from '../src/ivm/zset.ts';

const sink: RowErrorSink = { report: () => assert.fail('no row error expected') };
const batch = (entries: [Value[], number][]): ZBatch => ({
  rows: entries.map((e) => e[0]),
  weights: entries.map((e) => e[1]),
  consolidated: false,
});

function table(primaryKey: number[] | null): TableStore {
  return new TableStore({
    kind: 'table',
    name: 't',
    columns: [
      { name: 'id', type: T.int32, nullable: false },
      { name: 'v', type: T.text, nullable: true },
    ],
    primaryKey,
    sql: 'CREATE TABLE t (id INT, v TEXT)',
  });
}

test('a keyed table loads key → row entries and writes them under the key encoding', () => {
  const t = table([0]);
  t.trackChanges(true);
  t.loadState([
    [1, 'a'],
    [2, 'b'],
  ]);
  assert.deepEqual(
    [...t.entries()],
    [
      [[1, 'a'], 1],
      [[2, 'b'], 1],
    ],
  );
  assert.deepEqual(t.rowWithKey([2]), [2, 'b']);
  t.apply(t.prepare({ insert: [{ id: 2, v: 'c' }], delete: [{ id: 1 }] }));
  const d = t.takeStateDelta(false);
  assert.equal(d.replaceAll, false, 'a loaded table writes only what changed');
  assert.deepEqual(d.upserts, [['n2;', [2, 'c']]]);
  assert.deepEqual(d.deletes, ['n1;']);
});

test('a keyless table with deletes loads {r, c} entries under the row encoding', () => {
  const t = table(null);
  t.trackChanges(true);
  t.loadState([
    { r: [1, 'a'], c: 2 },
    { r: [2, null], c: 1 },
  ]);
  assert.equal(t.rowCount(), 3);
  t.apply(t.prepare({ delete: [{ id: 1, v: 'a' }] }));
  const d = t.takeStateDelta(false);
  assert.equal(d.replaceAll, false);
  assert.deepEqual(d.upserts, [['n1;s1:a', { r: [1, 'a'], c: 1 }]]);
  t.apply(t.prepare({ delete: [{ id: 2, v: null }] }));
  assert.deepEqual(t.takeStateDelta(false).deletes, ['n2;_']);
});

test('an insert-only keyless table loads its append list and its first delete replaces it', () => {
  const t = table(null);
  t.trackChanges(true);
  t.loadState([
    [1, 'a'],
    [1, 'a'],
  ]);
  t.apply(t.prepare({ insert: [{ id: 3, v: 'x' }] }));
  assert.deepEqual(t.takeStateDelta(false), { replaceAll: false, upserts: [['a2', [3, 'x']]], deletes: [] });
  t.apply(t.prepare({ delete: [{ id: 1, v: 'a' }] }));
  const d = t.takeStateDelta(false);
  assert.equal(d.replaceAll, true, 'the list became a multiset: its entries replace the list');
  assert.deepEqual(
    d.upserts.slice().sort(([a], [b]) => a.localeCompare(b)),
    [
      ['n1;s1:a', { r: [1, 'a'], c: 1 }],
      ['n3;s1:x', { r: [3, 'x'], c: 1 }],
    ],
  );
});

test('view outputs load keyed rows and keyless {r, c} entries', () => {
  const keyed = new OutputOp(3, 'v/output3', [0], 2);
  keyed.trackChanges(true);
  keyed.loadState([[7, 'x']]);
  keyed.step([
    batch([
      [[7, 'x'], -1],
      [[7, 'y'], 1],
    ]),
  ]);
  assert.deepEqual(keyed.lastChanges().toArray(), [
    { op: '-U', row: [7, 'x'], n: 1 },
    { op: '+U', row: [7, 'y'], n: 1 },
  ]);
  assert.deepEqual(keyed.takeStateDelta(false), {
    replaceAll: false,
    upserts: [['n7;', [7, 'y']]],
    deletes: [],
  });

  const keyless = new OutputOp(3, 'v/output3', null, 2);
  keyless.trackChanges(true);
  keyless.loadState([{ r: [7, 'x'], c: 2 }]);
  assert.equal(keyless.size(), 2);
  keyless.step([batch([[[7, 'x'], -2]])]);
  assert.equal(keyless.size(), 0);
  assert.deepEqual(keyless.takeStateDelta(false), { replaceAll: false, upserts: [], deletes: ['n7;s1:x'] });
  assert.throws(() => keyless.step([batch([[[7, 'x'], -1]])]), /negative multiplicity/);
});

test('distinct loads {r, c} entries: the last copy of a loaded row retracts it', () => {
  const op = new DistinctOp(2, 'v/distinct2');
  op.trackChanges(true);
  op.loadState([{ r: [5], c: 2 }]);
  assert.deepEqual(op.step([batch([[[5], -1]])]).rows, []);
  const out = op.step([batch([[[5], -1]])]);
  assert.deepEqual([out.rows, out.weights], [[[5]], [-1]]);
  assert.deepEqual(op.takeStateDelta(false).deletes, ['n5;']);
});

test('a MIN group loads its stored value counts: retracting the minimum reveals the next', () => {
  const op = new ReduceOp(
    {
      id: 1,
      kind: 'reduce',
      inputs: [0],
      fused: null,
      keyCount: 1,
      aggregates: [
        {
          fn: 'min',
          distinct: false,
          argColumn: 1,
          argType: T.int64,
          outputType: T.int64,
          strategy: 'multiset',
        },
      ],
      columns: [
        { name: 'k', type: T.int64 },
        { name: 'm', type: T.int64 },
      ],
      stateId: 'v/reduce1',
    },
    [
      { name: 'k', type: T.int64 },
      { name: 'x', type: T.int64 },
    ],
    null,
  );
  op.loadState([
    {
      k: [1],
      c: 3,
      a: [
        {
          n: 0,
          s: 0,
          v: [
            [4, 1],
            [2, 2],
          ],
        },
      ],
      o: [1, 2],
      e: null,
    },
  ]);
  const out = op.step([batch([[[1, 2], -2]])], sink);
  assert.deepEqual(
    [out.rows, out.weights],
    [
      [
        [1, 2],
        [1, 4],
      ],
      [-1, 1],
    ],
  );
  op.trackChanges(true);
  op.step([batch([[[1, 9], 1]])], sink);
  const [[id, group]] = op.takeStateDelta(true).upserts as [[string, { a: { v: unknown }[] }]];
  assert.equal(id, 'n1;');
  assert.deepEqual(group.a[0]?.v, [
    [4, 1],
    [9, 1],
  ]);
});
