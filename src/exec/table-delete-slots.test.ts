// A keyed table's deletes are looked up once: `prepare` finds each deleted row's slot and `apply`
// takes the rows from those slots, unless the rows changed in between so a slot may no longer hold
// its key (then `apply` looks the keys up again, as a replay does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { T, type Value } from '../common/types.ts';
import { TableStore } from './table-store.ts';
import type { SlotRowMap } from '../ivm/slot-row-map.ts';

function keyedTable(): TableStore {
  return new TableStore({
    kind: 'table',
    name: 't',
    columns: [
      { name: 'id', type: T.int64, nullable: false },
      { name: 'v', type: T.text, nullable: true },
    ],
    primaryKey: [0],
    sql: 'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)',
  });
}

function slotsOf(t: TableStore): SlotRowMap<Value> {
  const slots = t.keyedSlots();
  assert.ok(slots !== null);
  return slots;
}

/** Ids 1..n (and a few not serial: negative, past int32, a bigint past 2^53) with text values. */
function filled(n: number): { t: TableStore; ids: Value[] } {
  const t = keyedTable();
  const ids: Value[] = [-3, 2 ** 40, 2n ** 60n + 1n];
  for (let i = 1; i <= n; i++) ids.push(i);
  t.apply(t.prepare({ insert: ids.map((id) => ({ id, v: `v${String(id)}` })) }));
  return { t, ids };
}

test('a delete batch looks each key up once, in prepare, and apply takes the rows where it found them', () => {
  const { t, ids } = filled(1000);
  const gone = ids.filter((_, i) => i % 3 === 0);
  const map = slotsOf(t);
  const before = map.keysLookedUp;
  const change = t.apply(t.prepare({ delete: gone.map((id) => ({ id })) }));
  assert.equal(map.keysLookedUp - before, gone.length);
  assert.deepEqual(
    change.rows.map((r) => r[0]),
    gone,
  );
  assert.deepEqual(
    change.weights,
    gone.map(() => -1),
  );
  assert.equal(t.rowCount(), ids.length - gone.length);
  for (const id of gone) assert.equal(t.rowWithKey([id]), undefined);
});

test('an update batch looks the replaced rows up once', () => {
  const { t } = filled(500);
  const map = slotsOf(t);
  const before = map.keysLookedUp;
  const change = t.apply(
    t.prepare({
      delete: [{ id: 7 }, { id: 2 ** 40 }],
      insert: [
        { id: 8, v: 'new' },
        { id: 9, v: 'v9' }, // put back as it was: left out of the change
        { id: 2n ** 60n + 1n, v: 'big' },
      ],
    }),
  );
  // Two deletes, then three inserts' stored rows: nothing looked up again by the apply.
  assert.equal(map.keysLookedUp - before, 5);
  assert.deepEqual(
    change.rows.map((r) => [r[0], r[1]]),
    [
      [7, 'v7'],
      [2 ** 40, `v${String(2 ** 40)}`],
      [8, 'v8'],
      [2n ** 60n + 1n, `v${String(2n ** 60n + 1n)}`],
      [8, 'new'],
      [2n ** 60n + 1n, 'big'],
    ],
  );
  assert.deepEqual(change.weights, [-1, -1, -1, -1, 1, 1]);
});

test('slots found by prepare are not used once rows were taken in between: the keys are looked up again', () => {
  const { t } = filled(100);
  const first = t.prepare({ delete: [{ id: 4 }, { id: 5 }, { id: 6 }] });
  // Another batch deletes 5 and sets it again (a new slot), before the first is applied.
  t.apply(t.prepare({ delete: [{ id: 5 }] }));
  t.apply(t.prepare({ insert: [{ id: 5, v: 'again' }] }));
  const change = t.apply(first);
  assert.deepEqual(
    change.rows.map((r) => [r[0], r[1]]),
    [
      [4, 'v4'],
      [5, 'again'],
      [6, 'v6'],
    ],
  );
  assert.equal(t.rowWithKey([5]), undefined);
  assert.equal(t.rowCount(), 100 + 3 - 3);
});

test('slots found by prepare are not used after the rows were compacted in between', () => {
  const { t } = filled(20_000);
  const first = t.prepare({ delete: [{ id: 19_999 }, { id: 20_000 }] });
  const map = slotsOf(t);
  const compactions = map.compactions;
  // Enough deletes to squeeze the empty slots out, renumbering the rest.
  const many: { id: number }[] = [];
  for (let id = 1; id <= 15_000; id++) many.push({ id });
  t.apply(t.prepare({ delete: many }));
  assert.ok(map.compactions > compactions);
  const change = t.apply(first);
  assert.deepEqual(
    change.rows.map((r) => r[0]),
    [19_999, 20_000],
  );
  assert.equal(t.rowCount(), 3 + 20_000 - 15_000 - 2);
});
