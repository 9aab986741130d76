// Unit tests of the keyed Output's helpers: consolidating by key gives exactly what `consolidate`
// gives (rows, weights, order) over random batches with exact duplicates, cancelling rows and values
// that are equal but print differently; pairing gives exactly the changes the Map-based pairing gave;
// and the keyed Output computes each row's key once a step and pairs a Reduce's adjacent -old/+new
// without a lookup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal } from '../../common/decimal.ts';
import type { Value } from '../../common/types.ts';
import { encodeExactValues, singleKey } from '../../common/values.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import type { RawChange } from '../../common/raw-changes.ts';
import { consolidateByKey, pairKeyedChanges, sameExactRow } from './output-keyed.ts';
import { OutputOp } from './output-op.ts';
import { mulberry32 as random } from '../../../test/support/checkpoint-workload.ts';

const keyOf = (row: readonly Value[]): Value => singleKey(row[0] as Value);

/** Values of one column that are equal in SQL but print differently, and a few plain ones. */
const CELLS: readonly Value[] = [
  0,
  -0,
  1,
  1n,
  2,
  NaN,
  'a',
  'b',
  null,
  true,
  Decimal.fromInt(1),
  Decimal.fromInt(2),
];

test('sameExactRow is encodeExactValues equality', () => {
  for (const a of CELLS)
    for (const b of CELLS)
      assert.equal(
        sameExactRow([a], [b]),
        encodeExactValues([a]) === encodeExactValues([b]),
        `${String(a)} vs ${String(b)}`,
      );
});

test('consolidating by key gives consolidate’s rows, weights and order', () => {
  const rnd = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  for (let round = 0; round < 500; round++) {
    const n = 1 + Math.floor(rnd() * 12);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (let i = 0; i < n; i++) {
      // Reuse an earlier row (same object or a copy) often, so rows cancel and add up.
      const again = rows.length > 0 && rnd() < 0.5;
      const row = again
        ? rnd() < 0.5
          ? pick(rows)
          : pick(rows).slice()
        : [pick([1, 2, 3, 'k']), pick(CELLS)];
      rows.push(row);
      weights.push(pick([-2, -1, 1, 1, 2]));
    }
    const batch: ZBatch = { rows, weights, consolidated: false };
    const keys: Value[] = [99];
    const got = consolidateByKey(batch, keyOf, keys);
    const want = consolidate(batch);
    assert.deepEqual(
      got.rows.map((r) => encodeExactValues(r)),
      want.rows.map((r) => encodeExactValues(r)),
    );
    assert.deepEqual(got.weights, want.weights);
    assert.equal(got.consolidated, true);
    assert.deepEqual(
      keys,
      got.rows.map((r) => keyOf(r)),
    );
  }
});

/** The pairing the Output did before (a Map of the retracted keys, a Set of the updated ones). */
function pairWithMaps(delta: ZBatch): RawChange[] {
  const out: RawChange[] = [];
  const removed = new Map<Value, readonly Value[]>();
  for (let i = 0; i < delta.rows.length; i++)
    if ((delta.weights[i] as number) < 0)
      removed.set(keyOf(delta.rows[i] as Value[]), delta.rows[i] as Value[]);
  const updated = new Set<Value>();
  for (let i = 0; i < delta.rows.length; i++) {
    if ((delta.weights[i] as number) < 0) continue;
    const row = delta.rows[i] as readonly Value[];
    const k = keyOf(row);
    const old = removed.get(k);
    if (old !== undefined) {
      out.push({ op: '-U', row: old, n: 1 }, { op: '+U', row, n: 1 });
      updated.add(k);
    } else out.push({ op: '+I', row, n: 1 });
  }
  for (const [k, row] of removed) if (!updated.has(k)) out.push({ op: '-D', row, n: 1 });
  return out;
}

test('pairing gives the Map-based pairing’s changes, adjacent or not', () => {
  const rnd = random(11);
  for (let round = 0; round < 500; round++) {
    // Each key at most once retracted and once inserted, in a random order (NaN is a key too).
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const ids: Value[] = [1, 2, 3, 4, 5, 6, NaN, 'x'];
    for (const id of ids) {
      const shape = Math.floor(rnd() * 4); // none, insert, delete, update
      if (shape === 0) continue;
      if (shape !== 1) {
        rows.push([id, 'old']);
        weights.push(-1);
      }
      if (shape !== 2) {
        rows.push([id, 'new']);
        weights.push(1);
      }
    }
    if (rnd() < 0.5)
      for (let i = rows.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [rows[i], rows[j]] = [rows[j] as Value[], rows[i] as Value[]];
        [weights[i], weights[j]] = [weights[j] as number, weights[i] as number];
      }
    const delta: ZBatch = { rows, weights, consolidated: true };
    const keys = rows.map((r) => keyOf(r));
    const retractions = weights.filter((w) => w < 0).length;
    const work = { keysComputed: 0, pairedByLookup: 0 };
    assert.deepEqual(pairKeyedChanges(delta, keys, retractions, work).toArray(), pairWithMaps(delta));
  }
});

test('a keyed Output computes each key once a step and pairs adjacent -old/+new without a lookup', () => {
  const out = new OutputOp(1, 'v/output1', [0], 2);
  const n = 100;
  const inserts: ZBatch = {
    rows: Array.from({ length: n }, (_, i) => [i, 'a']),
    weights: Array.from({ length: n }, () => 1),
    consolidated: false,
  };
  out.step([inserts]);
  assert.equal(out.lastChanges().length, n);
  assert.equal(out.work.keysComputed, n, 'consolidating, storing and pairing read each key once');
  // A Reduce's changed groups: -old then +new, next to each other.
  const rows: Value[][] = [];
  const weights: number[] = [];
  for (let i = 0; i < n; i++) {
    rows.push([i, 'a'], [i, 'b']);
    weights.push(-1, 1);
  }
  out.step([{ rows, weights, consolidated: true }]);
  const changes = out.lastChanges().toArray();
  assert.equal(changes.length, 2 * n);
  assert.deepEqual(changes.slice(0, 2), [
    { op: '-U', row: [0, 'a'], n: 1 },
    { op: '+U', row: [0, 'b'], n: 1 },
  ]);
  assert.equal(out.work.keysComputed, 3 * n);
  assert.equal(out.work.pairedByLookup, 0, 'adjacent pairs need no lookup');
  // Retractions apart from their insertions are found through the lookup.
  out.step([
    {
      rows: [
        [0, 'b'],
        [1, 'b'],
        [0, 'c'],
        [1, 'c'],
      ],
      weights: [-1, -1, 1, 1],
      consolidated: true,
    },
  ]);
  assert.deepEqual(out.lastChanges().toArray(), [
    { op: '-U', row: [0, 'b'], n: 1 },
    { op: '+U', row: [0, 'c'], n: 1 },
    { op: '-U', row: [1, 'b'], n: 1 },
    { op: '+U', row: [1, 'c'], n: 1 },
  ]);
  assert.equal(out.work.pairedByLookup, 2, 'neither insertion is next to its retraction');
});
