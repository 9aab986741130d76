// TableStore.apply's change is a Z-set the graph can skip consolidating: a keyed table's batch is
// consolidated by construction, and an insert that puts back the very row it deletes is left out of
// the change with that delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { T, type Row, type Value } from '../common/types.ts';
import { ColumnBatch, consolidate } from '../ivm/zset.ts';
import { TableStore } from './table-store.ts';
import { RequestKeys } from './table-request-keys.ts';
import { lookupsSkipped } from './table-resolve.ts';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';

function table(primaryKey: number[] | null): TableStore {
  return new TableStore({
    kind: 'table',
    name: 't',
    columns: [
      { name: 'id', type: T.int32, nullable: false },
      { name: 'v', type: T.float64, nullable: true },
    ],
    primaryKey,
    sql: 'CREATE TABLE t (id INT, v DOUBLE)',
  });
}

test('a keyed table marks its change consolidated, leaving out a row put back as it was', () => {
  const t = table([0]);
  const first = t.apply(
    t.prepare({
      insert: [
        { id: 1, v: 1 },
        { id: 2, v: 0 },
      ],
    }),
  );
  assert.equal(first.consolidated, true);
  const update = t.apply(
    t.prepare({
      insert: [
        { id: 1, v: 5 },
        { id: 3, v: 1 },
      ],
      delete: [{ id: 2 }],
    }),
  );
  assert.equal(update.consolidated, true);
  assert.deepEqual(consolidate({ ...update, consolidated: false }).rows.length, update.rows.length);
  // Putting back the same row nets to nothing: the change leaves out the pair.
  t.apply(t.prepare({ insert: [{ id: 2, v: 0 }] }));
  const same = t.apply(t.prepare({ insert: [{ id: 2, v: 0 }] }));
  assert.equal(same.consolidated, true);
  assert.equal(same.rows.length, 0);
  assert.equal(t.rowCount(), 3);
  // Beside other changes (deleted and put back in one request, a replaced row, a delete, a new
  // row): what consolidating the whole change would give, in its order.
  const mixed = t.apply(
    t.prepare({
      insert: [
        { id: 4, v: 2 },
        { id: 2, v: 0 },
        { id: 1, v: 6 },
      ],
      delete: [{ id: 2 }, { id: 3 }],
    }),
  );
  assert.equal(mixed.consolidated, true);
  assert.deepEqual(mixed.rows, [
    [3, 1],
    [1, 5],
    [4, 2],
    [1, 6],
  ]);
  assert.deepEqual(mixed.weights, [-1, -1, 1, 1]);
  assert.deepEqual(t.rowWithKey([2]), [2, 0]);
  // -0 is not 0 to a Z-set (row identity is exact): replacing one by the other is a change.
  const signed = t.apply(t.prepare({ insert: [{ id: 2, v: -0 }] }));
  assert.equal(signed.consolidated, true);
  assert.equal(consolidate(signed).rows.length, 2);
});

test('a keyless table leaves its change to be consolidated', () => {
  const t = table(null);
  const b = t.apply(
    t.prepare({
      insert: [
        { id: 1, v: 1 },
        { id: 1, v: 1 },
      ],
    }),
  );
  assert.equal(b.consolidated, false);
  assert.deepEqual(consolidate(b).weights, [2]);
});

test('a keyed request resolves deletes and inserts of one key to exact row changes', () => {
  const t = table([0]);
  t.apply(
    t.prepare({
      insert: [
        { id: 1, v: 1 },
        { id: 2, v: 2 },
      ],
    }),
  );
  // Deleting a key and inserting it again deletes the stored row once.
  const back = t.prepare({ delete: [{ id: 1 }], insert: [{ id: 1, v: 10 }] });
  assert.deepEqual([back.deletes, back.inserts], [[[1, 1]], [[1, 10]]]);
  // Two inserts of one key: the later wins, and the stored row is deleted once.
  const twice = t.prepare({
    insert: [
      { id: 2, v: 20 },
      { id: 3, v: 3 },
      { id: 2, v: 21 },
    ],
  });
  assert.deepEqual(
    [twice.deletes, twice.inserts],
    [
      [[2, 2]],
      [
        [2, 21],
        [3, 3],
      ],
    ],
  );
  // A key deleted twice in one request, or one never stored, is refused; nothing changes.
  assert.throws(() => t.prepare({ delete: [{ id: 1 }, { id: 1 }] }), { code: 'ROW_NOT_FOUND' });
  assert.throws(() => t.prepare({ delete: [{ id: 9 }] }), { code: 'ROW_NOT_FOUND' });
  t.apply(back);
  assert.deepEqual(t.prepare({ delete: [{ id: 1, v: 10 }] }).deletes, [[1, 10]]);
  // A whole row to delete must be the stored one.
  assert.throws(() => t.prepare({ delete: [{ id: 1, v: 11 }] }), /differs from the one to delete/);
  assert.throws(() => t.prepare({ delete: [{ id: 1, v: null }] }), /differs from the one to delete/);
  // The stored rows are looked up a pass at a time, yet the first bad delete is the one named: a
  // key never stored before a row that cannot be read, a repeated key before a whole-row mismatch.
  assert.throws(() => t.prepare({ delete: [{ id: 1 }, { id: 9 }, { id: 'x' }] }), /delete row 2: no row/);
  assert.throws(() => t.prepare({ delete: [{ id: 1 }, { id: 1 }, { id: 2, v: 5 }] }), /delete row 2: no row/);
  assert.throws(
    () => t.prepare({ delete: [{ id: 1 }, { id: 2, v: 5 }, { id: 9 }] }),
    /delete row 2: the row/,
  );
  assert.throws(
    () => t.prepare({ delete: [{ id: 1 }, { nope: 1 }] }),
    (e: Error) => !/delete row 1/.test(e.message),
  );
  // A request that threw leaves the next one unaffected.
  assert.deepEqual(t.prepare({ delete: [{ id: 1 }] }).deletes, [[1, 10]]);
});

test('a whole row to delete matches the stored one by value, not by object', () => {
  const t = new TableStore({
    kind: 'table',
    name: 'n',
    columns: [
      { name: 'id', type: T.int32, nullable: false },
      { name: 'x', type: T.numeric, nullable: true },
    ],
    primaryKey: [0],
    sql: '',
  });
  t.apply(t.prepare({ insert: [{ id: 1, x: 1.5 }] }));
  // Each normalized row holds its own decimal object: equal by value, not the same object.
  const del = t.prepare({ delete: [{ id: 1, x: 1.5 }] });
  assert.equal(del.deletes.length, 1);
  assert.throws(() => t.prepare({ delete: [{ id: 1, x: 2.5 }] }), /differs from the one to delete/);
});

test("a table's state bytes: rows times the estimated size of a sample, 0 when empty", () => {
  const t = table([0]);
  assert.equal(t.stateBytes(), 0);
  t.apply(t.prepare({ insert: Array.from({ length: 100 }, (_, i) => ({ id: i, v: i + 0.5 })) }));
  const hundred = t.stateBytes();
  assert.ok(hundred > 100 * 100, `${hundred} B for 100 rows`);
  t.apply(t.prepare({ insert: Array.from({ length: 100 }, (_, i) => ({ id: 100 + i, v: i + 0.5 })) }));
  assert.equal(t.stateBytes(), 2 * hundred, 'rows of one shape: twice the rows, twice the bytes');
  t.apply(t.prepare({ delete: Array.from({ length: 200 }, (_, i) => ({ id: i })) }));
  assert.equal(t.stateBytes(), 0);
});

test('a column named like an Object.prototype member is NULL when a row omits it', () => {
  const t = new TableStore({
    kind: 'table',
    name: 't',
    columns: [
      { name: 'a', type: T.int32, nullable: true },
      { name: 'constructor', type: T.int32, nullable: true },
      { name: 'toString', type: T.text, nullable: true },
    ],
    primaryKey: null,
    sql: '',
  });
  t.apply(t.prepare({ insert: [{ a: 1 }] })); // threw "expected an integer, got undefined" before
  t.apply(t.prepare({ delete: [{ a: 1 }] }));
  assert.deepEqual([...t.entries()], []);
  assert.deepEqual(t.normalizeRowGeneral({ a: 2 }, 'insert', 0), [2, null, null]);
});

test("apply reads the keys prepare found, never a deleted row's key; same change as without them", () => {
  const rnd = mulberry32(11);
  const withFacts = table([0]);
  const without = table([0]);
  const values: (number | null)[] = [1, 2, -0, 0, null, 0.5];
  let keyReads = 0;
  const keyOf = withFacts.keyOf.bind(withFacts);
  withFacts.keyOf = (row) => {
    keyReads++;
    return keyOf(row);
  };
  let putBack = 0;
  for (let request = 0; request < 400; request++) {
    const stored = [...withFacts.entries()].map(([row]) => row);
    const deleted = new Set<number>();
    const del: Row[] = [];
    for (const row of stored) {
      if (rnd() > 0.3) continue;
      deleted.add(row[0] as number);
      // By key, or by the whole stored row.
      const [id, v] = row as [Value, Value];
      del.push(rnd() < 0.7 ? { id } : { id, v });
    }
    const ins: Row[] = [];
    const n = Math.floor(rnd() * 6);
    for (let i = 0; i < n; i++) {
      // A stored row put back as it was, now and then; a key twice in one request, now and then.
      const again = stored[Math.floor(rnd() * stored.length)];
      if (again !== undefined && rnd() < 0.2) ins.push({ id: again[0] as Value, v: again[1] as Value });
      else ins.push({ id: Math.floor(rnd() * 12), v: values[Math.floor(rnd() * values.length)] as Value });
    }
    const prepared = withFacts.prepare({ delete: del, insert: ins });
    assert.ok(prepared.keyed !== undefined);
    if (prepared.keyed.putsBack === true) putBack++;
    keyReads = 0;
    const a = withFacts.apply(prepared);
    // Only the inserted rows' keys are read (each row just built); never a deleted row's.
    if (prepared.keyed.putsBack !== null) assert.equal(keyReads, prepared.inserts.length, 'apply read a key');
    // The same rows without the facts: what a batch another way built would give.
    const b = without.apply({ deletes: prepared.deletes, inserts: prepared.inserts });
    assert.deepEqual([a.rows, a.weights, a.consolidated], [b.rows, b.weights, b.consolidated]);
    assert.deepEqual([...withFacts.entries()], [...without.entries()]);
  }
  assert.ok(putBack > 10, `${putBack} requests put a row back`);
});

test('an append-only table lends its insert batches the same arrays each epoch, expiring the last', () => {
  const t = table(null);
  const rowsOf = (from: number, n: number): Row[] =>
    Array.from({ length: n }, (_, i) => ({ id: from + i, v: (from + i) % 3 === 0 ? null : (from + i) / 2 }));
  const first = t.apply(t.prepare({ insert: rowsOf(0, 100) })) as ColumnBatch;
  assert.ok(first instanceof ColumnBatch);
  const [ids, vs] = first.cols as Value[][];
  const weights = first.weights;
  assert.deepEqual(weights, new Array<number>(100).fill(1));
  assert.deepEqual(
    ids,
    rowsOf(0, 100).map((r) => r.id),
  );
  // A smaller batch: the same arrays, cut to its length; the batch lent before expires.
  const second = t.apply(t.prepare({ insert: rowsOf(100, 70) })) as ColumnBatch;
  assert.equal(second.cols[0], ids);
  assert.equal(second.cols[1], vs);
  assert.equal(second.weights, weights);
  assert.equal(second.weights.length, 70);
  assert.throws(() => first.weights.length, /read after its producer reused it/);
  assert.deepEqual(
    second.rows,
    rowsOf(100, 70).map((r) => [r.id, r.v]),
  );
  // A request refused at its last row changes nothing (it wrote only into the scratch columns).
  const bad: unknown[] = [...rowsOf(170, 99), { id: 'x' }];
  assert.throws(() => t.prepare({ insert: bad as Row[] }), /id/);
  assert.equal(t.rowCount(), 170);
  // A larger one grows them (packed, by writes at their end), and the table holds every row.
  const third = t.apply(t.prepare({ insert: rowsOf(170, 130) })) as ColumnBatch;
  assert.equal(third.cols[0], ids);
  assert.equal(third.weights.length, 130);
  assert.deepEqual(
    [...t.entries()].map(([row]) => row),
    rowsOf(0, 300).map((r) => [r.id, r.v]),
  );
});

test('a large batch travels in the scratch too; the table keeps a copy of its values', () => {
  const t = table(null);
  const rowsOf = (from: number, n: number): Row[] =>
    Array.from({ length: n }, (_, i) => ({ id: from + i, v: (from + i) % 3 === 0 ? null : (from + i) / 2 }));
  const small = t.apply(t.prepare({ insert: rowsOf(0, 100) })) as ColumnBatch;
  const scratch = small.cols[0];
  // Large enough for a chunk of its own (2000 rows): the views read it in the scratch, grown.
  const large = t.apply(t.prepare({ insert: rowsOf(100, 2000) })) as ColumnBatch;
  assert.equal(large.cols[0], scratch);
  assert.equal((large.cols[0] as Value[]).length, 2000);
  // The next batches rewrite the scratch: the table's chunk keeps the values it copied.
  const next = t.apply(t.prepare({ insert: rowsOf(2100, 100) })) as ColumnBatch;
  assert.equal(next.cols[0], scratch);
  t.apply(t.prepare({ insert: rowsOf(2200, 1500) }));
  assert.deepEqual(
    [...t.entries()].map(([row]) => row),
    rowsOf(0, 3700).map((r) => [r.id, r.v]),
  );
});

test('inserts of ascending keys are not recorded one by one; once one is not, the later wins as before', () => {
  let claims = 0;
  const claim = RequestKeys.prototype.claim;
  RequestKeys.prototype.claim = function (this: RequestKeys, key: Value, value: number): number {
    claims++;
    return claim.call(this, key, value);
  };
  try {
    const t = table([0]);
    const serial = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, v: i }));
    t.apply(t.prepare({ insert: serial }));
    assert.equal(claims, 0, 'serial ids recorded');
    // 101..150, then 120 again (the 50 before it are recorded then), then 151.
    const rows: Row[] = Array.from({ length: 50 }, (_, i) => ({ id: 101 + i, v: 0 }));
    rows.push({ id: 120, v: 1 }, { id: 151, v: 0 });
    const p = t.prepare({ insert: rows });
    assert.equal(claims, 52);
    assert.equal(p.inserts.length, 51);
    assert.deepEqual(p.inserts[19], [120, 1]);
    assert.deepEqual(p.deletes, []);
  } finally {
    RequestKeys.prototype.claim = claim;
  }
  // Against a Map under seeded requests of ascending runs, repeats and stored keys: each key's
  // first place, its last row, and the stored rows it replaces, in that order.
  const rnd = mulberry32(5);
  const t = table([0]);
  const stored = new Map<number, Value[]>();
  for (let request = 0; request < 300; request++) {
    const rows: Row[] = [];
    let id = Math.floor(rnd() * 60);
    for (let i = Math.floor(rnd() * 12); i > 0; i--) {
      id = rnd() < 0.8 ? id + 1 + Math.floor(rnd() * 3) : Math.floor(rnd() * 60);
      rows.push({ id, v: Math.floor(rnd() * 4) });
    }
    const last = new Map<number, Value[]>();
    for (const r of rows) last.set(r.id as number, [r.id as number, r.v as number]);
    const p = t.prepare({ insert: rows });
    assert.deepEqual(
      { inserts: p.inserts, deletes: p.deletes },
      {
        inserts: [...last.values()],
        deletes: [...last.keys()].filter((k) => stored.has(k)).map((k) => stored.get(k)),
      },
    );
    t.apply(p);
    // A replaced row is deleted, then inserted: it moves to the end.
    for (const k of last.keys()) stored.delete(k);
    for (const [k, r] of last) stored.set(k, r);
  }
  assert.deepEqual(
    [...t.entries()].map(([r]) => r),
    [...stored.values()],
  );
});

test('ascending inserts above every key held are not looked up; below or overlapping, they are', () => {
  const t = table([0]);
  const rows = (from: number, to: number, v: number): Row[] =>
    Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, v }));
  let skipped = lookupsSkipped.count;
  const skippedNow = (): number => {
    const n = lookupsSkipped.count - skipped;
    skipped = lookupsSkipped.count;
    return n;
  };
  t.apply(t.prepare({ insert: rows(1, 100, 0) }));
  assert.equal(skippedNow(), 100, 'an empty table holds no key');
  t.apply(t.prepare({ insert: rows(101, 150, 0) }));
  assert.equal(skippedNow(), 50);
  // Overlapping the keys held: looked up, the stored rows replaced.
  const p = t.prepare({ insert: rows(140, 160, 1) });
  assert.equal(skippedNow(), 0);
  assert.deepEqual(
    p.deletes,
    rows(140, 150, 0).map((r) => [r.id, r.v]),
  );
  t.apply(p);
  // A deleted top key leaves the bound where it was: 160 is looked up (and found absent).
  t.apply(t.prepare({ delete: [{ id: 160 }] }));
  const q = t.prepare({ insert: rows(160, 161, 2) });
  assert.equal(skippedNow(), 0);
  assert.deepEqual(q.deletes, []);
  t.apply(q);
  // Deletes in the request come first: the key deleted and inserted back is no lookup, the rest are
  // above every key held.
  const r = t.prepare({ delete: [{ id: 161 }], insert: rows(161, 170, 3) });
  assert.equal(skippedNow(), 9);
  assert.deepEqual(r.deletes, [[161, 2]]);
  t.apply(r);
  assert.equal(t.prepare({ insert: rows(171, 171, 4) }).deletes.length, 0);
  assert.equal(skippedNow(), 1);
});

test("a batch the generated normaliser typed goes into the table by the integer columns' range test alone", () => {
  const t = new TableStore({
    kind: 'table',
    name: 'o',
    columns: [
      { name: 'id', type: T.int64, nullable: true },
      { name: 'n', type: T.int32, nullable: false },
      { name: 'd', type: T.int32, nullable: false },
      { name: 'x', type: T.float64, nullable: true },
    ],
    primaryKey: null,
    defaults: [null, null, { sql: '7', value: 7 }, null],
    sql: 'CREATE TABLE o (id BIGINT, n INT NOT NULL, d INT NOT NULL DEFAULT 7, x DOUBLE)',
  });
  const runs = (): number => (t as unknown as { appendOnly: { intRuns: number } }).appendOnly.intRuns;
  const insert: Row[] = Array.from({ length: 100 }, (_, i): Row =>
    i === 3
      ? { id: null, n: -0, x: -0 }
      : i === 4
        ? { id: 2 ** 40, n: 2 ** 31 - 1, d: -1, x: 1.5 }
        : { id: i, n: i % 256, d: i, x: i },
  );
  const b = t.apply(t.prepare({ insert }));
  assert.equal(b.weights.length, 100);
  // id and n took the range test alone; d has a DEFAULT, which the normaliser does not test.
  assert.equal(runs(), 2);
  const rows = t.rowsRange(0, 100);
  assert.deepStrictEqual(rows[3], [null, 0, 7, -0]);
  assert.deepStrictEqual(rows[4], [2 ** 40, 2 ** 31 - 1, -1, 1.5]);
  assert.deepStrictEqual(rows[99], [99, 99, 99, 99]);
  assert.ok(Object.is(rows[3]?.[1], 0), 'an integer -0 is stored as 0');
  // Rows given already typed (a source's decoder) are tested in full.
  t.apply(
    t.prepare(
      {},
      0,
      Array.from({ length: 64 }, (_, i) => [i, i, i, i]),
    ),
  );
  assert.equal(runs(), 2);
  assert.equal(t.rowCount(), 164);
});

test("a keyed batch's change reads its prepared deletes' own list, and the rows taken when they differ", () => {
  const t = table([0]);
  t.apply(t.prepare({ insert: [0, 1, 2, 3].map((id) => ({ id, v: id / 2 })) }));
  const prepared = t.prepare({ delete: [{ id: 1 }, { id: 3 }] });
  const change = t.apply(prepared);
  // The rows prepare read are the ones taken: the change is the batch's list, not a copy of it.
  assert.equal(change.rows, prepared.deletes);
  assert.deepEqual(change.weights, [-1, -1]);
  // Prepared against rows that a later batch replaced before it applies: the change holds the rows
  // actually taken (the replacing ones), as a batch without prepare's facts would.
  const stale = t.prepare({ delete: [{ id: 0 }, { id: 2 }] });
  t.apply(t.prepare({ insert: [{ id: 2, v: 9 }] }));
  const late = t.apply(stale);
  assert.notEqual(late.rows, stale.deletes);
  assert.deepEqual(late.rows, [
    [0, 0],
    [2, 9],
  ]);
  assert.deepEqual([...t.entries()], []);
});

test("a keyed change's weights are its own array, whatever its size", () => {
  const t = table([0]);
  const seen = new Set<number[]>();
  for (const n of [3, 70_000, 5]) {
    const ids = Array.from({ length: n }, (_, i) => i);
    const added = t.apply(t.prepare({ insert: ids.map((id) => ({ id, v: 1 })) }));
    // Upserts of every key but the first: a delete and an insert each, -1s before +1s.
    const upserted = t.apply(t.prepare({ insert: ids.slice(1).map((id) => ({ id, v: 2 })) }));
    const removed = t.apply(t.prepare({ delete: ids.map((id) => ({ id })) }));
    assert.deepEqual(added.weights, new Array<number>(n).fill(1));
    assert.deepEqual(upserted.weights, [
      ...new Array<number>(n - 1).fill(-1),
      ...new Array<number>(n - 1).fill(1),
    ]);
    assert.deepEqual(removed.weights, new Array<number>(n).fill(-1));
    for (const w of [added.weights, upserted.weights, removed.weights]) {
      assert.ok(!seen.has(w), 'two changes share a weights array');
      seen.add(w);
    }
    // A consumer writing one change's weights changes no later change's.
    added.weights.fill(7);
    removed.weights.fill(7);
  }
});
