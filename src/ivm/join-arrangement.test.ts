// JoinArrangement against a simple model (key → rows in arrival order, found by sameRow) under random
// adds and retractions: every key's rows, counts, order, totals and match sums must agree, and its
// checkpoint deltas, replayed into a store, must reload (into it and into an `Arrangement`) as the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../common/types.ts';
import { Arrangement, sameRow } from './arrangement.ts';
import { JoinArrangement, joinArrangementWork, NO_ROW } from './join-arrangement.ts';
import { NO_SLOT } from './group-index.ts';
import { keyEntryId, type JoinKey } from './join-key.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface ModelRow {
  row: readonly Value[];
  count: number;
  matches: number;
}

type Model = Map<JoinKey, ModelRow[]>;

/** Keys of every kind the index handles: dense ints, sparse and negative ints, -0, others. */
const KEYS: JoinKey[] = [
  0,
  -0,
  1,
  2,
  3,
  7,
  40,
  1000,
  -5,
  2 ** 31 - 1,
  2 ** 40,
  1.5,
  NaN,
  'a',
  '',
  'b;',
  true,
  10n ** 20n,
];
/** Values of rows: 0 and -0 are two rows of one hash; 1 and 1n one row (they print alike). */
const VALUES: Value[] = [0, -0, 1, 1n, 2, 'x', 'y', null, 2.5, true];

/** Every row under every key, in the arrangement's order, as [key, row, count, matches, seq]. */
function contents(
  a: JoinArrangement,
  keys: readonly JoinKey[],
): [JoinKey, readonly Value[], number, number][] {
  const out: [JoinKey, readonly Value[], number, number][] = [];
  for (const key of keys) {
    const slot = a.slotOf(key);
    if (slot === NO_SLOT) continue;
    for (let id = a.head(slot); id !== NO_ROW; id = a.next(id))
      out.push([key, a.row(id), a.count(id), a.matches(id)]);
  }
  return out;
}

function modelContents(
  model: Model,
  keys: readonly JoinKey[],
): [JoinKey, readonly Value[], number, number][] {
  const out: [JoinKey, readonly Value[], number, number][] = [];
  for (const key of keys) for (const r of model.get(key) ?? []) out.push([key, r.row, r.count, r.matches]);
  return out;
}

/** A full delta of `a`, loaded into a new arrangement, holds what the model holds. */
function assertReloads(
  a: JoinArrangement,
  model: Model,
  all: readonly JoinKey[],
  keyId: (k: JoinKey) => string,
): void {
  const store = new Map<string, unknown>();
  for (const [id, v] of a.takeDelta(true).upserts) store.set(id, v);
  const restored = new JoinArrangement('restored', 'S', keyId);
  const keys = new Map<readonly Value[], JoinKey>();
  for (const [k, rows] of model) for (const r of rows) keys.set(r.row, k);
  restored.load([...store.values()], (r) => keys.get(r) as JoinKey);
  assert.deepEqual(contents(restored, all), modelContents(model, all), 'reloaded');
}

/** The distinct keys of KEYS as a Map sees them (0 and -0 are one key, as in the arrangement). */
const DISTINCT_KEYS = [...new Map(KEYS.map((k) => [k, k])).keys()];

/** Kept columns (`keepColumns`, at `at` in `keptColumns`) agree with every held row's values. */
function checkKept(
  a: JoinArrangement,
  columns: readonly number[],
  at: readonly number[],
  step: number,
): void {
  for (const key of DISTINCT_KEYS) {
    const slot = a.slotOf(key);
    if (slot === NO_SLOT) continue;
    for (let id = a.head(slot); id !== NO_ROW; id = a.next(id))
      columns.forEach((c, i) =>
        assert.equal(
          a.keptColumns[at[i] as number]?.[id],
          a.row(id)[c],
          `kept column ${c} of row ${id} at step ${step}`,
        ),
      );
  }
}

function check(a: JoinArrangement, model: Model, step: number): void {
  assert.deepEqual(
    contents(a, DISTINCT_KEYS),
    modelContents(model, DISTINCT_KEYS),
    `contents at step ${step}`,
  );
  let rows = 0;
  for (const [key, list] of model) {
    const slot = a.slotOf(key);
    assert.notEqual(slot, NO_SLOT, `key ${String(key)} held at step ${step}`);
    assert.equal(
      a.total(slot),
      list.reduce((t, r) => t + r.count, 0),
      `total of ${String(key)}`,
    );
    assert.equal(a.rowsUnder(key), list.length);
    assert.equal(a.rowsAt(slot), list.length, `rows at the slot of ${String(key)}`);
    rows += list.length;
  }
  for (const key of DISTINCT_KEYS) if (!model.has(key)) assert.equal(a.slotOf(key), NO_SLOT);
  assert.equal(a.size, rows, `size at step ${step}`);
  assert.equal(a.keyCount, model.size, `keys at step ${step}`);
}

test('agrees with a model under random adds, retractions and match updates, and its deltas reload', () => {
  const random = rng(11);
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  const a = new JoinArrangement('test arrangement', 'S', keyId);
  a.trackChanges(true);
  const model: Model = new Map();
  const store = new Map<string, unknown>();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  let keptAt: number[] = [];
  for (let step = 0; step < 20_000; step++) {
    // Columns kept by column from the middle on (filled from the rows held then), kept again idempotently.
    if (step === 5_000) keptAt = a.keepColumns([1, 0]) ?? assert.fail('two columns can be kept');
    if (step === 6_000) assert.deepEqual(a.keepColumns([0]), [keptAt[1]]);
    const key = pick(KEYS);
    const list = model.get(key) ?? [];
    const held = list.length > 0 && random() < 0.5 ? pick(list) : null;
    const row = held?.row ?? [pick(VALUES), pick(VALUES)];
    // A copy of a held row (another array, and 1 for 1n): found by value, not by identity.
    const given = held !== null && random() < 0.5 ? row.map((v) => (v === 1n ? 1 : v)) : row;
    const at = list.findIndex((r) => sameRow(r.row, given));
    const current = at < 0 ? 0 : (list[at] as ModelRow).count;
    if (held !== null && at >= 0 && random() < 0.1) {
      // Matches of an arranged row (outer joins with a residual).
      let id = NO_ROW;
      for (let i = a.head(a.slotOf(key)); i !== NO_ROW; i = a.next(i)) if (sameRow(a.row(i), given)) id = i;
      const w = random() < 0.5 ? 1 : -1;
      assert.equal(a.addMatches(id, w), (list[at] as ModelRow).matches + w);
      (list[at] as ModelRow).matches += w;
    } else {
      const w =
        current > 0 && random() < 0.6 ? -(1 + Math.floor(random() * current)) : 1 + Math.floor(random() * 3);
      const matches = Math.floor(random() * 3);
      a.add(key, given, w, matches);
      if (at < 0) list.push({ row: given, count: w, matches });
      else if (current + w === 0) list.splice(at, 1);
      else (list[at] as ModelRow).count = current + w;
      if (list.length === 0) model.delete(key);
      else model.set(key, list);
    }
    if (step % 53 === 0) {
      check(a, model, step);
      if (keptAt.length > 0) checkKept(a, [1, 0], keptAt, step);
    }
    if (step % 401 === 0) {
      const delta = a.takeDelta(random() < 0.1);
      if (delta.replaceAll) store.clear();
      for (const id of delta.deletes) store.delete(id);
      for (const [id, v] of delta.upserts) store.set(id, v);
      const restored = new JoinArrangement('restored', 'S', keyId);
      const keyOf = (r: readonly Value[]): JoinKey => r[0] as JoinKey;
      // The stored rows carry their key only as text: reload through a side map from row to key.
      const keys = new Map<readonly Value[], JoinKey>();
      for (const [k, rows] of model) for (const r of rows) keys.set(r.row, k);
      const entries = [...store.values()];
      if (random() < 0.5) restored.keepColumns([1]);
      restored.load(entries, (r) => keys.get(r) ?? keyOf(r));
      check(restored, model, step);
      checkKept(restored, [1], restored.keepColumns([1]) ?? [], step);
      const old = new Arrangement<JoinKey>('old', 'S', keyId);
      old.load(entries, (r) => keys.get(r) ?? keyOf(r));
      const oldContents: [JoinKey, readonly Value[], number, number][] = [];
      for (const key of DISTINCT_KEYS)
        for (const e of old.get(key)?.rows.values() ?? []) oldContents.push([key, e.row, e.count, e.matches]);
      assert.deepEqual(
        oldContents,
        modelContents(model, DISTINCT_KEYS),
        `an Arrangement reads the entries at ${step}`,
      );
    }
  }
  check(a, model, -1);
  checkKept(a, [1, 0], keptAt, -1);
});

test('keeps at most MAX_KEPT_COLUMNS columns, all asked or none', () => {
  const a = new JoinArrangement('test arrangement', 'S', String);
  a.add(1, [1, 2, 3, 4, 5, 6], 1, 0);
  assert.deepEqual(a.keepColumns([0, 1, 2]), [0, 1, 2]);
  assert.equal(a.keepColumns([3, 4]), null);
  assert.deepEqual(a.keepColumns([3, 1]), [3, 1]);
  assert.equal(a.keepColumns([5]), null);
  assert.deepEqual(
    a.keptColumns.map((c) => c[0]),
    [1, 2, 3, 4],
  );
});

test('a negative multiplicity is an internal error naming the arrangement', () => {
  const a = new JoinArrangement('join n3 left arrangement', 'L', String);
  a.add(1, [1, 'a'], 1, 0);
  assert.throws(() => a.add(1, [1, 'a'], -2, 0), /join n3 left arrangement saw a negative multiplicity/);
  assert.throws(() => a.add(2, [2, 'a'], -1, 0), /join n3 left arrangement saw a negative multiplicity/);
  assert.equal(a.size, 1);
});

test('a key total past the int32 range is kept exactly, and comes back into the record', () => {
  const a = new JoinArrangement('t', 'S', String);
  const big = 2 ** 31 + 5;
  a.add(1, [1, 'a'], big, 0);
  a.add(1, [2, 'b'], 3, 0);
  a.add(2, [3, 'c'], 2 ** 31 - 1, 0);
  a.add(2, [4, 'd'], 1, 0);
  assert.equal(a.total(a.slotOf(1)), big + 3);
  assert.equal(a.total(a.slotOf(2)), 2 ** 31);
  // -2 ** 31 itself marks a wide total in the record: a total of that value is wide too.
  a.add(3, [5, 'e'], 2 ** 31, 0);
  assert.equal(a.total(a.slotOf(3)), 2 ** 31);
  a.add(1, [1, 'a'], -big, 0);
  assert.equal(a.total(a.slotOf(1)), 3);
  a.add(1, [2, 'b'], -3, 0);
  assert.equal(a.slotOf(1), NO_SLOT);
  // The freed slot, reused by a new key, starts from zero.
  a.add(4, [6, 'f'], 7, 0);
  assert.equal(a.total(a.slotOf(4)), 7);
  assert.equal(a.total(a.slotOf(2)), 2 ** 31);
});

test('many rows under one key and many keys of one row each stay found after growth and churn', () => {
  const a = new JoinArrangement('t', 'S', String);
  for (let i = 0; i < 5000; i++) a.add(i % 3, [i, i % 3], 1, 0);
  for (let i = 0; i < 5000; i += 2) a.add(i % 3, [i, i % 3], -1, 0);
  assert.equal(a.size, 2500);
  const seen: number[] = [];
  for (let id = a.head(a.slotOf(1)); id !== NO_ROW; id = a.next(id)) seen.push(a.row(id)[0] as number);
  assert.deepEqual(
    seen,
    Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 3 === 1 && i % 2 === 1),
  );
  for (let i = 0; i < 5000; i++) a.add(i % 3, [i, i % 3], i % 2 === 0 ? 1 : -1, 0);
  // The rows under a key are listed in the order they (last) came.
  seen.length = 0;
  for (let id = a.head(a.slotOf(0)); id !== NO_ROW; id = a.next(id)) seen.push(a.row(id)[0] as number);
  assert.deepEqual(
    seen,
    Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 3 === 0 && i % 2 === 0),
  );
  assert.equal(a.keyCount, 3);
});

test('rows found by a unique first column agree with a model, and a shared or odd first value moves them to the table', () => {
  const random = rng(5);
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  // Each run leaves the first-column index at another point: a first value held by another row, a
  // -0 beside 0, a bigint, an object; and one run never leaves it.
  type Held = { key: JoinKey; row: readonly Value[] }[];
  const breakers: (((held: Held) => Value[][]) | null)[] = [
    (held) => [[(held[0] as Held[number]).row[0] as Value, 'dup']],
    (held) => (held.some((h) => Object.is(h.row[0], 0)) ? [] : [[0, 'zero']]).concat([[-0, 'neg']]),
    () => [[7n, 'big']],
    () => [[true, 'bool']],
    null,
  ];
  for (const breaker of breakers) {
    const a = new JoinArrangement('test arrangement', 'S', keyId);
    const model: Model = new Map();
    const held: Held = [];
    let next = 0;
    for (let step = 0; step < 6_000; step++) {
      if (step === 3_000 && breaker !== null) {
        for (const row of breaker(held)) {
          a.add(1, row, 1, 0);
          held.push({ key: 1, row });
          const list = model.get(1) ?? [];
          list.push({ row, count: 1, matches: 0 });
          model.set(1, list);
        }
        assert.equal(a.findsByFirstColumn, false, 'the index is left');
      }
      const key = Math.floor(random() * 40);
      if (held.length > 0 && random() < 0.4) {
        // A retraction: of a held row (as another array, with 1n for a key column of 1).
        const [gone] = held.splice(Math.floor(random() * held.length), 1) as [{ key: JoinKey; row: Value[] }];
        const given = gone.row.map((v, c) => (c === 1 && v === 1 ? 1n : v));
        a.add(gone.key, given, -1, 0);
        const list = model.get(gone.key) as ModelRow[];
        list.splice(
          list.findIndex((r) => r.row === gone.row),
          1,
        );
        if (list.length === 0) model.delete(gone.key);
      } else if (held.length > 0 && random() < 0.1) {
        // A held row again: its count grows, in either mode.
        const again = held[Math.floor(random() * held.length)] as { key: JoinKey; row: Value[] };
        a.add(again.key, again.row.slice(), 1, 0);
        held.push(again);
        const list = model.get(again.key) as ModelRow[];
        const at = list.findIndex((r) => r.row === again.row);
        (list[at] as ModelRow).count += 1;
        held.pop();
        a.add(again.key, again.row, -1, 0);
        (list[at] as ModelRow).count -= 1;
      } else {
        const first = random() < 0.2 ? `s${next++}` : next++;
        const row: Value[] = [first, key];
        a.add(key, row, 1, 0);
        held.push({ key, row });
        const list = model.get(key) ?? [];
        list.push({ row, count: 1, matches: 0 });
        model.set(key, list);
      }
      // Retracting a row not held fails in either mode, whatever row holds its first value.
      if (step % 500 === 0 && held.length > 0) {
        const some = (held[0] as { key: JoinKey; row: Value[] }).row;
        assert.throws(() => a.add(0, [some[0] as Value, 'other'], -1, 0), /negative multiplicity/);
      }
      if (step % 97 === 0) {
        const keys = [...model.keys()];
        assert.deepEqual(contents(a, keys), modelContents(model, keys), `contents at ${step}`);
        assert.equal(a.size, held.length);
      }
    }
    assert.equal(a.findsByFirstColumn, breaker === null);
    // A retraction naming a held first value 5 as 5n (one row, by value) finds it through the table.
    const five = held.find((h) => h.row[0] === 5);
    if (five !== undefined) {
      a.add(five.key, [5n, five.row[1] as Value], -1, 0);
      assert.equal(a.findsByFirstColumn, false);
      assert.equal(a.size, held.length - 1);
    }
  }
});

test('small int keys are their own slots through churn, and the first that does not fit indexes them where they are', () => {
  const random = rng(23);
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  const a = new JoinArrangement('test arrangement', 'S', keyId);
  a.trackChanges(true);
  const model: Model = new Map();
  const dense: JoinKey[] = Array.from({ length: 64 }, (_, i) => i);
  const odd: JoinKey[] = [1_000_000, -3, 'k', 2.5, 70];
  const all = [...dense, ...odd];
  const step = (keys: readonly JoinKey[]): void => {
    const key = keys[Math.floor(random() * keys.length)] as JoinKey;
    const list = model.get(key) ?? [];
    const row: Value[] = [Math.floor(random() * 4), key === 0 && random() < 0.5 ? -0 : 1];
    const at = list.findIndex((r) => sameRow(r.row, row));
    const current = at < 0 ? 0 : (list[at] as ModelRow).count;
    const w = current > 0 && random() < 0.5 ? -current : 1;
    // -0 is key 0 (SameValueZero), as the index has it.
    a.add(key === 0 && random() < 0.5 ? -0 : key, row, w, 0);
    if (at < 0) list.push({ row, count: w, matches: 0 });
    else if (current + w === 0) list.splice(at, 1);
    else (list[at] as ModelRow).count = current + w;
    if (list.length === 0) model.delete(key);
    else model.set(key, list);
  };
  const agree = (label: string): void => {
    assert.deepEqual(contents(a, all), modelContents(model, all), label);
    assert.equal(a.keyCount, model.size, label);
    for (const key of all)
      assert.equal(a.slotOf(key) === NO_SLOT, !model.has(key), `${label}: ${String(key)}`);
  };
  for (let i = 0; i < 5_000; i++) {
    step(dense);
    if (i % 97 === 0) agree(`dense step ${i}`);
  }
  agree('dense');
  assert.equal(a.keysAreSlots, true, 'small dense int keys stay their own slots');
  for (const key of model.keys()) assert.equal(a.slotOf(key), key, 'a key is its slot');
  assert.equal(a.slotOf(-0), model.has(0) ? 0 : NO_SLOT);
  const slots = new Map([...model.keys()].map((k) => [k, a.slotOf(k)]));
  const far: Value[] = [0, 0];
  a.add(1_000_000, far, 1, 0);
  model.set(1_000_000, [{ row: far, count: 1, matches: 0 }]);
  assert.equal(a.keysAreSlots, false, 'a key far past the keys held is indexed, with every other');
  for (const [key, slot] of slots) assert.equal(a.slotOf(key), slot, 'the slots stay put');
  agree('indexed');
  for (let i = 0; i < 5_000; i++) {
    step(all);
    if (i % 97 === 0) agree(`indexed step ${i}`);
  }
  agree('indexed, churned');
  assertReloads(a, model, all, keyId);
});

test('int keys too sparse for slots of their own are indexed from the first', () => {
  const a = new JoinArrangement('test arrangement', 'S', String);
  for (let k = 0; k < 1000; k++) a.add(k * 5000, [k], 1, 0);
  assert.equal(a.keysAreSlots, false);
  for (let k = 0; k < 1000; k++) assert.equal(a.rowsUnder(k * 5000), 1);
  const serial = new JoinArrangement('test arrangement', 'S', String);
  for (let k = 1; k <= 100_000; k++) serial.add(k, [k], 1, 0);
  assert.equal(serial.keysAreSlots, true, 'serial ids 1..n are their own slots');
  assert.equal(serial.slotOf(100_000), 100_000);
  assert.equal(serial.slotOf(100_001), NO_SLOT);
  assert.equal(serial.slotOf(-1), NO_SLOT);
  assert.equal(serial.slotOf('1'), NO_SLOT);
});

test('rows under their own first column need no first-column index, and one under another key fills it from the slots', () => {
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  // Each run leaves the keyed-by-first state differently: a row under a key other than its first
  // value (the index then holds every earlier row), a second row under a held key (the table), a
  // first value the index cannot hold; one run never leaves it.
  const breakers: (((held: readonly JoinKey[]) => [JoinKey, Value[]]) | null)[] = [
    () => [3, [9_999, 'other key']],
    (held) => [held[0] as JoinKey, [held[0] as Value, 'second row']],
    () => [2n, [2n, 'bigint']],
    null,
  ];
  for (const [run, breaker] of breakers.entries()) {
    const random = rng(31 + run);
    const a = new JoinArrangement('test arrangement', 'S', keyId);
    a.trackChanges(true);
    const model: Model = new Map();
    const pool: JoinKey[] = [...Array.from({ length: 300 }, (_, i) => i), 100_000, -7, 'a', 'b', 'c'];
    const all: JoinKey[] = [...pool, 3, 2n];
    const agree = (label: string): void => {
      assert.deepEqual(contents(a, all), modelContents(model, all), label);
      assert.equal(
        a.size,
        [...model.values()].reduce((n, l) => n + l.length, 0),
        label,
      );
    };
    for (let step = 0; step < 4_000; step++) {
      if (step === 2_000 && breaker !== null) {
        const [key, row] = breaker([...model.keys()]);
        a.add(key, row, 1, 0);
        model.set(key, [...(model.get(key) ?? []), { row, count: 1, matches: 0 }]);
        assert.equal(a.firstColumnIsKey, false, 'left');
        assert.equal(a.findsByFirstColumn, run === 0, 'the first-column index stands only after another key');
        agree('after the breaker');
      }
      const key = pool[Math.floor(random() * pool.length)] as JoinKey;
      const list = model.get(key);
      const mine = list?.find((r) => r.row[0] === key || Object.is(r.row[0], key));
      if (mine === undefined) {
        // A new row whose first value is its key (-0 for key 0 now and then: the same key).
        const row: Value[] = [key === 0 && random() < 0.3 ? -0 : (key as Value), Math.floor(random() * 5)];
        a.add(key, row, 1, 0);
        model.set(key, [...(list ?? []), { row, count: 1, matches: 0 }]);
      } else {
        // The held row again (as another array) or retracted, all of its copies or one.
        const w = random() < 0.4 ? 1 : random() < 0.5 ? -mine.count : -1;
        a.add(key, mine.row.slice(), w, 0);
        mine.count += w;
        if (mine.count === 0) {
          const rest = (list as ModelRow[]).filter((r) => r !== mine);
          if (rest.length === 0) model.delete(key);
          else model.set(key, rest);
        }
      }
      if (step % 250 === 0) {
        // A row not held under a held key is not found: its retraction fails.
        const held = [...model.keys()].find((k) => typeof k === 'number') as number | undefined;
        if (held !== undefined) assert.throws(() => a.add(held, [held, 'not held'], -1, 0), /negative/);
        agree(`step ${step}`);
      }
    }
    agree('end');
    assert.equal(a.firstColumnIsKey, breaker === null);
    assertReloads(a, model, all, keyId);
  }
});

test('indexed int keys become their own slots once dense, keeping rows, order, totals and deltas', () => {
  const random = rng(31);
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  const a = new JoinArrangement('test arrangement', 'S', keyId);
  a.trackChanges(true);
  const model: Model = new Map();
  const all: JoinKey[] = [...Array.from({ length: 3000 }, (_, i) => i), 'k'];
  const renumbered = joinArrangementWork.keysToSlots;
  const agree = (label: string): void => {
    assert.deepEqual(contents(a, all), modelContents(model, all), label);
    assert.equal(a.keyCount, model.size, label);
    for (const [key, list] of model)
      assert.equal(
        a.total(a.slotOf(key)),
        list.reduce((t, r) => t + r.count, 0),
        `${label}: total of ${String(key)}`,
      );
  };
  // Rows [id, n] under random keys 0..2999 (a bid under its auction), a fifth of the steps
  // retracting one; key 2999 first, so they are indexed from the start; one total past int32.
  let id = 0;
  const live: [JoinKey, Value[]][] = [];
  const add = (key: JoinKey, row: Value[], w: number): void => {
    a.add(key, row, w, 0);
    const list = model.get(key) ?? [];
    const at = list.findIndex((r) => sameRow(r.row, row));
    if (at < 0) {
      list.push({ row, count: w, matches: 0 });
      live.push([key, row]);
    } else list.splice(at, 1);
    if (list.length === 0) model.delete(key);
    else model.set(key, list);
  };
  add(2999, [id++, 0], 2 ** 31);
  assert.equal(a.keysAreSlots, false);
  for (let i = 0; i < 12_000; i++) {
    if (live.length > 1 && random() < 0.2) {
      const [key, row] = live.splice(1 + Math.floor(random() * (live.length - 1)), 1)[0] as [
        JoinKey,
        Value[],
      ];
      add(key, row, -1);
    } else add(Math.floor(random() * 3000), [id++, i], 1);
    if (i % 499 === 0) agree(`step ${i}`);
  }
  agree('dense');
  assert.equal(a.keysAreSlots, true, 'dense int keys are their own slots again');
  assert.equal(joinArrangementWork.keysToSlots - renumbered, 1, 'renumbered once');
  for (const key of model.keys()) assert.equal(a.slotOf(key), key, 'a key is its slot');
  assertReloads(a, model, all, keyId);
  // A text key indexes them again, where they are; still the same rows.
  add('k', ['t', 0], 1);
  assert.equal(a.keysAreSlots, false);
  agree('indexed again');
  assertReloads(a, model, all, keyId);
});

test('reading records ahead (`warm`) over keys of every kind changes nothing, in slot mode and indexed', () => {
  const a = new JoinArrangement('warm', 'S', (k) => keyEntryId(k, 1));
  for (let k = 0; k < 20; k++) a.add(k, [k, 'r'], 1, 0);
  const before = contents(a, DISTINCT_KEYS);
  const odd: (JoinKey | null)[] = [...KEYS, null, 3, 19, 20, 1 << 20, -1, 0.5];
  assert.ok(a.keysAreSlots);
  a.warm(odd, odd.length);
  a.warm(odd, 0);
  assert.ok(a.keysAreSlots);
  assert.deepEqual(contents(a, DISTINCT_KEYS), before);
  // Indexed keys: nothing read, nothing changed.
  a.add('a', ['a', 'r'], 1, 0);
  assert.ok(!a.keysAreSlots);
  const indexed = contents(a, DISTINCT_KEYS);
  a.warm(odd, odd.length);
  assert.deepEqual(contents(a, DISTINCT_KEYS), indexed);
});

test('a key past the last slot ever held has no slot, and freed or re-added keys at the end are found', () => {
  const a = new JoinArrangement('ends', 'S', (k) => keyEntryId(k, 1));
  // A table's ids, ascending, batch after batch: each new key lies past every slot held so far.
  for (let k = 0; k < 300; k++) {
    assert.equal(a.slotOf(k), NO_SLOT, `new key ${k}`);
    a.warm([k, k + 1, k + 1000], 3);
    a.add(k, [k, 'r'], 1, 0);
    assert.equal(a.slotOf(k), k);
  }
  assert.ok(a.keysAreSlots);
  for (const k of [300, 301, 511, 512, 4096, 1 << 20])
    assert.equal(a.slotOf(k), NO_SLOT, `past the end ${k}`);
  // The last keys freed: their slots stay past the keys held, without rows.
  for (let k = 290; k < 300; k++) a.add(k, [k, 'r'], -1, 0);
  for (let k = 285; k < 310; k++) assert.equal(a.slotOf(k), k < 290 ? k : NO_SLOT, `after frees ${k}`);
  a.add(295, [295, 'again'], 1, 0);
  assert.equal(a.slotOf(295), 295);
  assert.equal(a.slotOf(294), NO_SLOT);
  assert.equal(a.slotOf(296), NO_SLOT);
  assert.equal(a.size, 291);
  assert.equal(a.rowsUnder(295), 1);
});
