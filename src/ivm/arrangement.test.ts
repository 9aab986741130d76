// Unit tests of the three arrangement modes: what each holds, their checkpoint deltas (first delta
// replaces all, then only the changed entries, a delta is a copy, a clear replaces all again),
// reloading what a delta wrote, and negative multiplicities refused without changing the state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../common/types.ts';
import { encodeOne, encodeValues } from '../common/values.ts';
import type { StateDelta } from './state.ts';
import { Decimal, parseDecimal } from '../common/decimal.ts';
import { Arrangement, hashRow } from './arrangement.ts';
import { CountedArrangement } from './counted-arrangement.ts';
import { UniqueArrangement } from './unique-arrangement.ts';

const ids = (d: StateDelta): string[] => d.upserts.map(([id]) => id).sort();

test('unique mode: one row a key, deltas of changed keys only, entries under the key encoding', () => {
  const a = new UniqueArrangement<Value>();
  a.trackChanges(true);
  a.set(1, [1, 'a']);
  a.set('x', ['x', 'b']);
  assert.equal(a.size, 2);
  assert.deepEqual(a.get(1), [1, 'a']);
  const first = a.takeDelta(false);
  assert.equal(first.replaceAll, true, 'the first delta replaces every stored entry');
  assert.deepEqual(ids(first), [encodeOne(1), encodeOne('x')].sort());
  assert.deepEqual(a.takeDelta(false), { replaceAll: false, upserts: [], deletes: [] });
  a.set(1, [1, 'c']);
  assert.deepEqual(a.delete('x'), ['x', 'b']);
  assert.equal(a.delete('missing'), undefined);
  const next = a.takeDelta(false);
  assert.equal(next.replaceAll, false);
  assert.deepEqual(next.upserts, [[encodeOne(1), [1, 'c']]]);
  assert.deepEqual(next.deletes, [encodeOne('x')]);

  const b = new UniqueArrangement<Value>();
  b.load(
    a.takeDelta(true).upserts.map(([, row]) => row),
    (row) => row[0] as Value,
  );
  assert.deepEqual([...b.values()], [[1, 'c']]);
  assert.deepEqual(
    b.takeDelta(false),
    { replaceAll: false, upserts: [], deletes: [] },
    'loaded: nothing to write back',
  );
  b.clear();
  assert.equal(b.takeDelta(false).replaceAll, true, 'after a clear the store copy no longer applies');
});

test('unique mode: without tracking nothing is remembered', () => {
  const a = new UniqueArrangement<Value>();
  a.takeDelta(false);
  a.set(1, [1]);
  assert.deepEqual(a.takeDelta(false).upserts, []);
});

test('counted mode: multiplicities, deltas as {r, c} copies, negative refused unchanged', () => {
  const a = new CountedArrangement('distinct n3');
  a.trackChanges(true);
  const row = [1, 'a'];
  assert.equal(a.add(row, 2).count, 2);
  assert.equal(a.add([2, 'b'], 1).count, 1);
  assert.equal(a.total, 3);
  assert.equal(a.size, 2);
  const first = a.takeDelta(false);
  assert.equal(first.replaceAll, true);
  const stored = first.upserts.find(([id]) => id === encodeValues(row));
  assert.deepEqual(stored?.[1], { r: row, c: 2 });
  a.add(row, 1);
  assert.deepEqual(stored?.[1], { r: row, c: 2 }, 'a delta keeps the counts of its epoch');
  assert.throws(() => a.add([9], -1), /distinct n3 saw a negative multiplicity/);
  assert.throws(() => a.add(row, -4), /distinct n3 saw a negative multiplicity/);
  assert.equal(a.count(row), 3, 'a refused change changes nothing');
  assert.equal(a.total, 4);
  const gone = a.add([2, 'b'], -1);
  assert.equal(gone.count, 0);
  assert.deepEqual(gone.row, [2, 'b'], 'the entry of a row that left holds the row stored');
  const next = a.takeDelta(false);
  assert.deepEqual(next.deletes, [encodeValues([2, 'b'])]);
  assert.deepEqual(next.upserts, [[encodeValues(row), { r: row, c: 3 }]]);

  const b = new CountedArrangement('copy');
  b.load(a.takeDelta(true).upserts.map(([, v]) => v));
  assert.equal(b.total, 3);
  assert.deepEqual(
    [...b.entries()].map((e) => [e.row, e.count]),
    [[row, 3]],
  );
});

test('indexed mode: buckets of counted rows, restored in arrival order, whole keys dropped', () => {
  const a = new Arrangement('join n1 left arrangement', 'L', (k) => encodeOne(k));
  a.trackChanges(true);
  const rows: Value[][] = [
    [1, 'z'],
    [1, 'a'],
    [2, 'q'],
  ];
  for (const r of rows) a.addRow(r[0] as number, r, 1, 0);
  a.addRow(1, [1, 'a'], 2, 0);
  assert.equal(a.size, 3);
  assert.equal(a.get(1)?.total, 4);
  const delta = a.takeDelta(false);
  assert.equal(delta.upserts.length, 3);
  assert.ok(delta.upserts.every(([, e]) => a.owns(e)));
  assert.equal(new Arrangement('other', 'R').owns(delta.upserts[0]?.[1]), false);

  assert.ok(
    delta.upserts.some(([id]) => id === `L3:n1;${encodeValues([1, 'a'])}`),
    'ids keep the encoded form',
  );
  const b = new Arrangement('copy', 'L');
  b.load(delta.upserts.map(([, e]) => e).reverse(), (r) => r[0] as number);
  assert.deepEqual(
    [...(b.get(1)?.rows.values() ?? [])].map((e) => [e.row, e.count]),
    [
      [[1, 'z'], 1],
      [[1, 'a'], 3],
    ],
    'a restored bucket lists its rows in the original order',
  );
  assert.throws(() => b.addRow(2, [2, 'q'], -2, 0), /copy saw a negative/);
  assert.equal(b.addRow(2, [2n, 'q'], -1, 0), null, 'rows are found by value: 2n is the 2 arranged');

  a.deleteKey(1);
  assert.equal(a.size, 1);
  assert.equal(a.get(1), undefined);
  const after = a.takeDelta(false);
  assert.equal(after.deletes.length, 2, 'both rows of the dropped key leave the checkpoint');
  a.clear();
  assert.equal(a.stateBytes, 0);
  assert.equal(a.takeDelta(false).replaceAll, true);
});

test('indexed mode keyed by numbers with scalar rows (the multiset aggregates’ form)', () => {
  const a = new Arrangement<number, Value, Value>('min state', '');
  a.add(7, 5, 5, 1, 0);
  a.add(7, 3, 3, 2, 0);
  a.add(8, 3, 3, 1, 0);
  assert.equal(a.keyCount, 2);
  assert.equal(a.add(7, 3, 3, -2, 0), null, 'the last copy leaves');
  assert.deepEqual([...(a.get(7)?.rows.keys() ?? [])], [5]);
  assert.throws(() => a.add(8, 4, 4, -1, 0), /min state saw a negative multiplicity/);
});

test('rows whose hashes collide in one bucket are kept apart, found again, and checkpointed', () => {
  // Two one-column rows of one hash, found by search (32-bit hashes of strings meet by ~80,000).
  const seen = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let i = 0; pair === null && i < 2_000_000; i++) {
    const h = hashRow([`s${i}`]);
    const other = seen.get(h);
    if (other !== undefined) pair = [other, `s${i}`];
    else seen.set(h, `s${i}`);
  }
  assert.ok(pair !== null);
  const [x, y] = pair;
  assert.notEqual(x, y);
  const a = new Arrangement('collisions', 'L');
  a.trackChanges(true);
  a.takeDelta(false);
  a.addRow('k', [x], 1, 0);
  a.addRow('k', [y], 2, 0);
  assert.equal(a.size, 2);
  assert.equal(a.get('k')?.total, 3);
  a.addRow('k', [x], -1, 0); // frees the hash the second row does not hold
  assert.equal(a.addRow('k', [y], 1, 0)?.count, 3, 'the row stored under its encoding is found again');
  a.addRow('k', [x], 1, 0); // takes the free hash
  assert.deepEqual(
    [...(a.get('k')?.rows.values() ?? [])].map((e) => [e.row, e.count]).sort(),
    [
      [[x], 1],
      [[y], 3],
    ].sort(),
  );
  const d = a.takeDelta(false);
  assert.deepEqual(d.deletes, []);
  assert.deepEqual(
    d.upserts.map(([id]) => id).sort(),
    [`L1:k${encodeValues([x])}`, `L1:k${encodeValues([y])}`].sort(),
  );
  a.addRow('k', [y], -3, 0);
  assert.deepEqual(a.takeDelta(false).deletes, [`L1:k${encodeValues([y])}`]);
  assert.throws(() => a.addRow('k', [y], -1, 0), /negative multiplicity/);
  const b = new Arrangement('copy', 'L');
  b.load(
    a.takeDelta(true).upserts.map(([, e]) => e),
    () => 'k',
  );
  assert.equal(b.addRow('k', [x], -1, 0), null);
  assert.equal(b.size, 0);
});

test('a row of equal decimals held in other objects is the same row (a checkpoint decodes new ones)', () => {
  const a = new Arrangement('decimals', 'L');
  const stored = parseDecimal('1.5000') as Decimal;
  const again = parseDecimal('1.5000') as Decimal;
  assert.notEqual(stored, again);
  a.addRow('k', [1, stored], 1, 0);
  // The retraction of the row as another operator instance computes it: no negative multiplicity.
  assert.equal(a.addRow('k', [1, again], -1, 0), null);
  assert.equal(a.size, 0);
});

test('indexed mode: a numeric retracted as another object of the same text finds its row, not one of another text', () => {
  // A Window recomputes an AVG into a new Decimal each time; downstream retracts by its text.
  const a = new Arrangement<Value>('test', 't', (k) => encodeOne(k));
  const row = (v: Decimal): Value[] => [1, v];
  a.addRow(1, row(new Decimal(15, 1)), 2, 0);
  assert.equal(a.addRow(1, row(new Decimal(15, 1)), -1, 0)?.count, 1);
  // 1.50 is another row than 1.5 (equal values that print differently are two rows)
  assert.throws(() => a.addRow(1, row(new Decimal(150, 2)), -1, 0), /negative multiplicity/);
  a.addRow(1, row(new Decimal(150, 2)), 1, 0);
  assert.equal(a.size, 2);
  assert.equal(a.addRow(1, row(new Decimal(15, 1)), -1, 0), null);
  assert.equal(a.size, 1);
  assert.deepEqual(
    [...(a.get(1)?.rows.values() ?? [])].map((e) => String(e.row[1])),
    ['1.50'],
  );
});
