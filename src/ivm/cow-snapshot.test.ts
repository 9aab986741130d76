// The copy-on-write snapshot of a keyed arrangement: read one entry at a time while keys are
// updated, deleted, re-inserted and newly inserted between reads (a seeded, count-driven schedule),
// it yields exactly the entries at the snapshot; it keeps no before-images once read, and a newer
// snapshot or a clear leaves the older one correct or failing loudly, never wrong; read raw, it makes
// no key text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';
import type { Value } from '../common/types.ts';
import { encodeOne } from '../common/values.ts';
import { entryReader } from '../common/state-delta.ts';
import { UniqueArrangement } from './unique-arrangement.ts';
import { CowSnapshot, isValueKeyReader } from './cow-snapshot.ts';
import { SlotRowMap } from './slot-row-map.ts';

/** One random change: update, delete, re-insert a deleted key, or insert a new one. */
function mutate(
  a: UniqueArrangement<number>,
  rnd: () => number,
  deleted: number[],
  next: { id: number },
): void {
  const r = rnd();
  const k = Math.floor(rnd() * next.id);
  if (r < 0.35) {
    if (a.has(k)) a.set(k, [k, `u${Math.floor(rnd() * 1000)}`]);
  } else if (r < 0.6) {
    if (a.delete(k) !== undefined) deleted.push(k);
  } else if (r < 0.85 && deleted.length > 0) {
    const back = deleted.splice(Math.floor(rnd() * deleted.length), 1)[0] as number;
    if (!a.has(back)) a.set(back, [back, `r${Math.floor(rnd() * 1000)}`]);
  } else {
    const id = next.id++;
    a.set(id, [id, 'new']);
  }
}

/** Keys changed since the last delta (the arrangement's private set, read for the test). */
function countDirty(a: UniqueArrangement<number>): number {
  return (a as unknown as { dirty: Set<number> }).dirty.size;
}

/** Keys of a snapshot deleted while it was read and not put back (the case its last pass reads). */
let stayedDeleted = 0;

/**
 * A delta's entries one at a time: through its iterator, or (`batch`) through its batch reader as
 * the checkpoint writers read it, in batches of 1 to 40 read ahead of the changes made while each
 * batch's entries are taken (a writer may wait for its thread mid-batch while epochs run).
 */
function* entriesOf(
  upserts: readonly (readonly [string, unknown])[],
  batch: boolean,
  rnd: () => number,
): Generator<readonly [string, unknown]> {
  if (!batch) {
    yield* upserts;
    return;
  }
  const reader = entryReader(upserts);
  const keys: string[] = [];
  const values: unknown[] = [];
  try {
    for (let got = reader.read(keys, values, 1 + Math.floor(rnd() * 40)); got > 0;) {
      const read = Array.from({ length: got }, (_, i) => [keys[i] as string, values[i]] as const);
      yield* read;
      got = reader.read(keys, values, 1 + Math.floor(rnd() * 40));
    }
  } finally {
    reader.close();
  }
}

// Over a Map, and over a slot map that compacts early (a keyed table's rows: slot-row-map.ts); read
// an entry at a time and in batches.
for (const [seed, kind, batch] of [1, 2, 3, 4, 5, 6, 7, 8].flatMap((s) => [
  [s, 'Map', false] as const,
  [s, 'slots', false] as const,
  [s, 'Map', true] as const,
  [s, 'slots', true] as const,
])) {
  const how = batch ? ', in batches' : '';
  test(`a snapshot read between changes yields the entries at the snapshot (seed ${seed}, ${kind}${how})`, () => {
    const rnd = mulberry32(seed);
    const a =
      kind === 'Map'
        ? new UniqueArrangement<number>()
        : new UniqueArrangement<number>(() => new SlotRowMap<number>(8, 0));
    a.trackChanges(true);
    const next = { id: 0 };
    const deleted: number[] = [];
    for (let i = 0; i < 300; i++) a.set(next.id, [next.id++, 'v0']);
    for (let i = 0; i < 200; i++) mutate(a, rnd, deleted, next);
    a.takeDelta(false); // the first delta: exported
    const expected = new Map<string, unknown>();
    for (const row of a.values()) expected.set(encodeOne(row[0] as Value), row);

    const delta = a.takeDelta(true);
    assert.equal(delta.replaceAll, true);
    assert.equal(delta.upserts.length, expected.size);
    // Up to 4 changes after each of the first entries read (the schedule is by count, not time);
    // none near the end, so that some keys deleted before the walk reached them stay deleted (a
    // re-inserted key is read again at the end, which would set off more changes).
    const got = new Map<string, unknown>();
    let read = 0;
    for (const [key, value] of entriesOf(delta.upserts, batch, rnd)) {
      const seen = got.get(key);
      // Over a slot map every key is read once; over a Map a key read and changed later can come
      // again, with the same value.
      if (kind === 'slots') assert.equal(seen, undefined, `${key} read once`);
      else if (seen !== undefined) assert.deepEqual(value, seen, 'a key read twice has one value');
      got.set(key, value);
      read++;
      const changes = read < expected.size - 40 ? Math.floor(rnd() * 5) : 0;
      for (let c = 0; c < changes; c++) mutate(a, rnd, deleted, next);
    }
    stayedDeleted += deleted.filter((k) => expected.has(encodeOne(k))).length;
    assert.deepEqual(new Map([...got].sort()), new Map([...expected].sort()));
    assert.ok(read <= expected.size + deleted.length + 300, 'duplicates are few');
    assert.equal(a.snapshotChangedKeys, 0, 'a snapshot read to its end keeps no before-images');

    // Enough changes for an incremental delta read through a snapshot of its changed keys, read
    // with changes between its entries too: stored + delta = the state when it was taken.
    const model = new Map(got);
    while (a.snapshotChangedKeys === 0 && countDirty(a) < 2500) mutate(a, rnd, deleted, next);
    const atIncremental = new Map<string, unknown>();
    for (const row of a.values()) atIncremental.set(encodeOne(row[0] as Value), row);
    const incremental = a.takeDelta(false);
    assert.equal(incremental.replaceAll, false);
    for (const k of incremental.deletes) model.delete(k);
    let n = 0;
    for (const [k, v] of entriesOf(incremental.upserts, batch, rnd)) {
      model.set(k, v);
      if (++n < incremental.upserts.length - 40)
        for (let c = Math.floor(rnd() * 4); c > 0; c--) mutate(a, rnd, deleted, next);
    }
    assert.equal(n, incremental.upserts.length);
    assert.deepEqual(new Map([...model].sort()), new Map([...atIncremental].sort()));
    assert.equal(a.snapshotChangedKeys, 0);

    // The changes made while it was read are the next delta.
    const current = new Map<string, unknown>();
    for (const row of a.values()) current.set(encodeOne(row[0] as Value), row);
    const after = a.takeDelta(false);
    for (const k of after.deletes) model.delete(k);
    for (const [k, v] of after.upserts) model.set(k, v);
    assert.deepEqual(new Map([...model].sort()), new Map([...current].sort()));
  });
}

test('the seeded schedules delete keys of the snapshot for good', () => {
  assert.ok(stayedDeleted > 0, `${stayedDeleted} keys stayed deleted`);
});

test('an indexed snapshot is read whole once, without duplicates, still as of the snapshot', () => {
  const a = new UniqueArrangement<number>();
  for (let i = 0; i < 10; i++) a.set(i, [i, 'a']);
  const delta = a.takeDelta(true);
  a.set(3, [3, 'changed']);
  a.delete(4);
  a.set(4, [4, 'back']);
  a.set(99, [99, 'new']);
  assert.equal(delta.upserts.length, 10);
  assert.deepEqual(
    delta.upserts.map(([, row]) => row).sort((x, y) => (x as number[])[0]! - (y as number[])[0]!),
    Array.from({ length: 10 }, (_, i) => [i, 'a']),
  );
  assert.equal(a.snapshotChangedKeys, 0);
});

test('a clear while a snapshot is read leaves it the old rows; a newer snapshot makes the older fail', () => {
  const a = new UniqueArrangement<number>();
  for (let i = 0; i < 5; i++) a.set(i, [i, 'a']);
  const first = a.takeDelta(true).upserts[Symbol.iterator]();
  assert.deepEqual(first.next().value, [encodeOne(0), [0, 'a']]);
  a.clear();
  a.set(7, [7, 'x']);
  const rest: unknown[] = [];
  for (let r = first.next(); r.done !== true; r = first.next()) rest.push(r.value);
  assert.deepEqual(
    rest,
    [1, 2, 3, 4].map((i) => [encodeOne(i), [i, 'a']]),
  );

  const older = a.takeDelta(true).upserts[Symbol.iterator]();
  older.next();
  const newer = a.takeDelta(true).upserts;
  assert.throws(() => older.next(), /read after a newer one was taken/);
  assert.deepEqual([...newer], [[encodeOne(7), [7, 'x']]]);
});

test('a batch reader closed early stops the snapshot recording before-images', () => {
  const a = new UniqueArrangement<number>(() => new SlotRowMap<number>());
  for (let i = 0; i < 100; i++) a.set(i, [i, 'a']);
  const reader = entryReader(a.takeDelta(true).upserts);
  const keys: string[] = [];
  const values: unknown[] = [];
  assert.equal(reader.read(keys, values, 10), 10);
  assert.deepEqual(
    values.slice(0, 10),
    Array.from({ length: 10 }, (_, i) => [i, 'a']),
  );
  a.set(50, [50, 'b']);
  assert.equal(a.snapshotChangedKeys, 1);
  reader.close();
  assert.equal(a.snapshotChangedKeys, 0);
  a.set(60, [60, 'b']);
  assert.equal(a.snapshotChangedKeys, 0);
  assert.equal(reader.read(keys, values, 10), 0);
});

test('over a slot map, a key read and then changed is read once, as it was at the snapshot', () => {
  for (const change of ['delete', 'update', 'delete and set again'] as const) {
    const map = new SlotRowMap<number>();
    for (let k = 1; k <= 5; k++) map.set(k, [k, k * 10]);
    const snapshot = new CowSnapshot<number>(
      map,
      map.size,
      (k) => String(k),
      () => {},
    );
    const keys: string[] = [];
    const values: unknown[] = [];
    const read: string[] = [];
    const take = (n: number): void => {
      for (let i = 0; i < n; i++) read.push(`${keys[i]}=${JSON.stringify(values[i])}`);
    };
    take(snapshot.read(keys, values, 2));
    // Keys 1 and 2 were read; change 1, insert a new key (the walk stops there), change 2 as well.
    for (const k of [1, 2]) {
      snapshot.beforeChange(k, map.get(k));
      if (change === 'update') map.set(k, [k, -1]);
      else map.delete(k);
      if (change === 'delete and set again') {
        snapshot.beforeChange(k, undefined);
        map.set(k, [k, -2]);
      }
      if (k === 1) {
        snapshot.beforeChange(6, undefined);
        map.set(6, [6, 60]);
      }
    }
    for (let n = snapshot.read(keys, values, 2); n > 0; n = snapshot.read(keys, values, 2)) take(n);
    assert.deepEqual(read, ['1=[1,10]', '2=[2,20]', '3=[3,30]', '4=[4,40]', '5=[5,50]'], change);
  }
});

test("readRaw hands a snapshot's keys over unencoded: no key text is made for them", () => {
  const map = new SlotRowMap<number>();
  for (let k = 0; k < 1_000; k++) map.set(k, [k, k * 10]);
  let encoded = 0;
  const counting = (k: number): string => {
    encoded++;
    return encodeOne(k);
  };
  const raw = new CowSnapshot<number>(map, map.size, counting, () => {});
  const text = new CowSnapshot<number>(map, map.size, counting, () => {});
  const rawKeys: Value[] = [];
  const keys: string[] = [];
  const values: unknown[] = [];
  const fromRaw: string[] = [];
  const fromText: string[] = [];
  for (let n = raw.readRaw(rawKeys, values, 64); n > 0; n = raw.readRaw(rawKeys, values, 64))
    for (let i = 0; i < n; i++)
      fromRaw.push(`${encodeOne(rawKeys[i] as Value)}=${JSON.stringify(values[i])}`);
  assert.equal(encoded, 0, 'readRaw encodes no key');
  for (let n = text.read(keys, values, 64); n > 0; n = text.read(keys, values, 64))
    for (let i = 0; i < n; i++) fromText.push(`${keys[i]}=${JSON.stringify(values[i])}`);
  assert.equal(encoded, 1_000, 'read encodes each key once');
  assert.deepEqual(fromRaw, fromText);
  // A writer hands keys over only where they are encodeOne's: a table's (an arrangement's) are.
  assert.equal(isValueKeyReader(raw), false, 'another encoder: keys are read as text');
  const a = new UniqueArrangement<number>(() => new SlotRowMap<number>());
  for (let i = 0; i < 10; i++) a.set(i, [i, 'a']);
  const reader = entryReader(a.takeDelta(true).upserts);
  assert.equal(isValueKeyReader(reader), true);
  reader.close();
});
