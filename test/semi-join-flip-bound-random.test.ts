// Random writes into the tables of a subquery over a GROUP BY, a HAVING, an EXCEPT, an INTERSECT,
// a DISTINCT of a GROUP BY's keys (and a join behind one, each view row it changes a join row):
// whatever the epoch count accepts flips at most the bound's outer rows (each write here goes into
// a subquery's table, so every row the view changes is a flip), a refused write changes nothing,
// and the view stays what its SELECT gives. Rows into a group that exists, or out of one that keeps
// others, are accepted (its retraction and insertion move no key); a row into an EXCEPT's right
// side is a retraction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { drawFrom, sorted } from './support/epoch-bound.ts';

const LIMIT = 40;

const VIEWS = [
  'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k)',
  'SELECT * FROM big WHERE k NOT IN (SELECT k FROM s GROUP BY k)',
  'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k HAVING count(*) < 3)',
  'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k EXCEPT SELECT k FROM t)',
  'SELECT * FROM big WHERE k IN (SELECT k FROM t EXCEPT SELECT k FROM s GROUP BY k)',
  'SELECT * FROM big WHERE k NOT IN (SELECT k FROM s GROUP BY k, y)',
  'SELECT * FROM big WHERE EXISTS (SELECT 1 FROM (SELECT k, sum(y) AS n FROM s GROUP BY k) g WHERE g.k = big.k AND g.n > 2)',
  'SELECT * FROM big WHERE k IN (SELECT DISTINCT k FROM s INTERSECT SELECT k FROM t)',
  // A DISTINCT over a GROUP BY's keys: a group's old and new rows are one value there.
  'SELECT * FROM big WHERE k IN (SELECT DISTINCT k FROM (SELECT k, y FROM s GROUP BY k, y) g)',
  'SELECT * FROM big WHERE k NOT IN (SELECT DISTINCT k FROM (SELECT k, y FROM s GROUP BY k, y) g)',
  'SELECT * FROM big WHERE k IN (SELECT DISTINCT k FROM s GROUP BY k)',
  // Not a semi-join: each view row a write to s changes is a join row built.
  'SELECT big.k, big.x FROM big JOIN (SELECT DISTINCT k FROM (SELECT k, y FROM s GROUP BY k, y) g) d ON big.k = d.k',
];

const text = (row: object): string =>
  JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

type Row = Record<string, number | null>;

for (const view of VIEWS) {
  test(`accepted writes flip at most the bound: ${view}`, () => {
    const draw = drawFrom(7);
    const e = new Engine({ maxEpochJoinRows: LIMIT });
    e.execute(
      'CREATE TABLE big (k BIGINT, x BIGINT); CREATE TABLE s (k BIGINT, y BIGINT); CREATE TABLE t (k BIGINT)',
    );
    e.execute(`CREATE MATERIALIZED VIEW v AS ${view}`);
    const held: Record<'s' | 't', Row[]> = {
      s: Array.from({ length: 12 }, (_, i) => ({ k: i % 4, y: draw(3) })),
      t: [{ k: 0 }, { k: 2 }, { k: 4 }],
    };
    // The subquery's rows first: big's rows then pass the semi-join one by one, whatever the bound.
    e.applyChanges('s', { insert: held.s });
    e.applyChanges('t', { insert: held.t });
    // 100 outer rows under k = 0, 30 under k = 1, about 12 under each other key; in writes of 20
    // (the join's rows: at most one a row).
    const outer = Array.from({ length: 200 }, (_, i) => ({ k: i < 100 ? 0 : i < 130 ? 1 : i % 6, x: i }));
    for (let at = 0; at < outer.length; at += 20) e.applyChanges('big', { insert: outer.slice(at, at + 20) });
    let accepted = 0;
    for (let step = 0; step < 300; step++) {
      const table = draw(3) === 0 ? 't' : 's';
      const rows = held[table];
      const inserts: Row[] = [];
      const deletes: Row[] = [];
      for (let j = 1 + draw(3); j > 0; j--) {
        const row = rows[draw(Math.max(rows.length, 1))];
        if (draw(2) === 0 && row !== undefined && !deletes.includes(row)) deletes.push(row);
        else {
          const k = draw(10) === 0 ? null : draw(6);
          inserts.push(table === 's' ? { k, y: draw(3) } : { k });
        }
      }
      const before = new Set(e.viewSnapshot('v').rows.map(text));
      const epoch = e.epoch;
      try {
        e.applyChanges(table, { insert: inserts, delete: deletes.map((r) => ({ ...r })) });
      } catch (error) {
        assert.equal((error as { code?: string }).code, 'EPOCH_TOO_LARGE');
        assert.equal(e.epoch, epoch);
        assert.deepEqual(new Set(e.viewSnapshot('v').rows.map(text)), before);
        continue;
      }
      accepted++;
      for (const row of deletes) rows.splice(rows.indexOf(row), 1);
      rows.push(...inserts);
      const after = new Set(e.viewSnapshot('v').rows.map(text));
      let flipped = 0;
      for (const row of before) if (!after.has(row)) flipped++;
      for (const row of after) if (!before.has(row)) flipped++;
      assert.ok(flipped <= LIMIT, `step ${step}: accepted, ${flipped} outer rows flipped`);
      assert.deepEqual([...after].sort(), (e.execute(view)[0]?.rows ?? []).map(text).sort());
    }
    // Not every write refused: the bound is exercised both ways.
    assert.ok(accepted > 100 && accepted < 300, `${accepted} of 300 accepted`);
  });
}

// Where the count is exact: an IN subquery over a GROUP BY, or a DISTINCT of its keys, under writes
// that never delete a group's last row (whether a DISTINCT's other groups keep a value, the count
// does not read). A write is refused exactly when it flips more than the bound, as an engine with
// no bound shows; a row deleted out of a group that keeps others flips nothing and is accepted
// (the count took its retraction for a key that may lose its last match: all 100 outer rows of
// k = 0, refused), and so is a row into a DISTINCT's value that is there.
const EXACT = [
  'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k)',
  'SELECT * FROM big WHERE EXISTS (SELECT 1 FROM (SELECT k, count(*) AS n FROM s GROUP BY k) g WHERE g.k = big.k)',
  'SELECT * FROM big WHERE k IN (SELECT DISTINCT k FROM (SELECT k, y FROM s GROUP BY k, y) g)',
  'SELECT * FROM big WHERE k IN (SELECT DISTINCT k FROM s GROUP BY k)',
];

for (const view of EXACT) {
  test(`refused exactly when the write flips more than the bound: ${view}`, () => {
    const draw = drawFrom(11);
    const bounded = new Engine({ maxEpochJoinRows: LIMIT });
    const free = new Engine({ maxEpochJoinRows: Number.MAX_SAFE_INTEGER });
    for (const e of [bounded, free]) {
      e.execute('CREATE TABLE big (k BIGINT, x BIGINT); CREATE TABLE s (k BIGINT, y BIGINT)');
      e.execute(`CREATE MATERIALIZED VIEW v AS ${view}`);
    }
    // Groups (k, y) of two rows or more for k = 0 … 3; none of k = 5, whose 60 outer rows a first
    // row flips (refused), nor of k = 4.
    const held: Row[] = Array.from({ length: 16 }, (_, i) => ({ k: i % 4, y: (i >> 2) % 2 }));
    const outer = Array.from({ length: 200 }, (_, i) => ({ k: i < 100 ? 0 : i < 160 ? 5 : i % 5, x: i }));
    for (const e of [bounded, free]) {
      e.applyChanges('s', { insert: held });
      for (let at = 0; at < outer.length; at += 20)
        e.applyChanges('big', { insert: outer.slice(at, at + 20) });
    }
    const group = (row: Row): string => `${row.k},${row.y}`;
    let accepted = 0;
    let refused = 0;
    let outOfHeavyGroup = 0;
    for (let step = 0; step < 200; step++) {
      const inserts: Row[] = [];
      const deletes: Row[] = [];
      for (let j = 1 + draw(3); j > 0; j--) {
        const row = held[draw(held.length)] as Row;
        const left = held.filter((r) => group(r) === group(row) && !deletes.includes(r)).length;
        if (draw(2) === 0 && !deletes.includes(row) && left > 1) deletes.push(row);
        else inserts.push({ k: draw(8) === 0 ? null : draw(6), y: draw(2) });
      }
      const changes = { insert: inserts, delete: deletes.map((r) => ({ ...r })) };
      const before = new Set(free.viewSnapshot('v').rows.map(text));
      free.applyChanges('s', changes);
      const after = new Set(free.viewSnapshot('v').rows.map(text));
      let flipped = 0;
      for (const row of before) if (!after.has(row)) flipped++;
      for (const row of after) if (!before.has(row)) flipped++;
      try {
        bounded.applyChanges('s', changes);
      } catch (error) {
        assert.equal((error as { code?: string }).code, 'EPOCH_TOO_LARGE');
        assert.ok(flipped > LIMIT, `step ${step}: refused, ${flipped} outer rows flipped`);
        refused++;
        free.applyChanges('s', { insert: deletes.map((r) => ({ ...r })), delete: inserts });
        continue;
      }
      assert.ok(flipped <= LIMIT, `step ${step}: accepted, ${flipped} outer rows flipped`);
      accepted++;
      if (deletes.some((r) => r.k === 0)) outOfHeavyGroup++;
      for (const row of deletes) held.splice(held.indexOf(row), 1);
      held.push(...inserts);
      assert.deepEqual(sorted(bounded.viewSnapshot('v').rows), sorted(free.viewSnapshot('v').rows));
    }
    assert.ok(refused > 0 && accepted > 100, `${accepted} accepted, ${refused} refused`);
    assert.ok(outOfHeavyGroup > 10, `${outOfHeavyGroup} writes out of k = 0's groups accepted`);
  });
}

// NOT IN over a subquery that holds a NULL no write takes away: every outer row is UNKNOWN or FALSE
// before and after any write, so none flips and every write is accepted. The count charged each
// written key's outer rows as if the NULL were not there (a first row of k = 0 was charged its 100
// outer rows and refused). Taking the NULLs away does flip rows, and is refused.
test('NOT IN with a NULL held: writes that leave it flip nothing and are accepted', () => {
  const draw = drawFrom(13);
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  const view = 'SELECT * FROM big WHERE k NOT IN (SELECT k FROM s)';
  e.execute('CREATE TABLE big (k BIGINT, x BIGINT); CREATE TABLE s (k BIGINT, y BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${view}`);
  e.applyChanges('s', { insert: [{ k: null, y: 99 }] });
  // 100 outer rows under k = 0, 60 under k = 10 (never in s), 40 over k = 1 … 5.
  const outer = Array.from({ length: 200 }, (_, i) => ({
    k: i < 100 ? 0 : i < 160 ? 10 : 1 + (i % 5),
    x: i,
  }));
  for (let at = 0; at < outer.length; at += 20) e.applyChanges('big', { insert: outer.slice(at, at + 20) });
  const held: Row[] = [];
  for (let step = 0; step < 150; step++) {
    const inserts: Row[] = [];
    const deletes: Row[] = [];
    for (let j = 1 + draw(3); j > 0; j--) {
      const row = held[draw(Math.max(held.length, 1))];
      if (draw(2) === 0 && row !== undefined && !deletes.includes(row)) deletes.push(row);
      else inserts.push({ k: draw(6) === 0 ? null : draw(6), y: draw(3) });
    }
    e.applyChanges('s', { insert: inserts, delete: deletes.map((r) => ({ ...r })) });
    for (const row of deletes) held.splice(held.indexOf(row), 1);
    held.push(...inserts);
    assert.deepEqual(e.viewSnapshot('v').rows, []);
  }
  assert.deepEqual(e.execute(view)[0]?.rows, []);
  // Every NULL taken away: the 60 outer rows of k = 10 at least come in.
  const nulls = [{ k: null, y: 99 }, ...held.filter((r) => r.k === null)];
  const epoch = e.epoch;
  assert.throws(() => e.applyChanges('s', { delete: nulls }), { code: 'EPOCH_TOO_LARGE' });
  assert.equal(e.epoch, epoch);
});
