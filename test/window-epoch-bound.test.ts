// One row into a long partition of a window function renumbers it: a `row_number()`, `rank()` or a
// running `sum` re-emits every row after the new one (a retraction and an insertion each), so one
// small write can rebuild a whole view in one epoch. Such a write is counted before its epoch (the
// slots the window would recompute, WindowOp.slotsTouched) and refused with EPOCH_TOO_LARGE past the
// bound, changing nothing; a write that reaches few slots (at a partition's end, a short partition,
// LAG) is accepted, and the view stays what a one-off SELECT gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';

const LIMIT = 400;
/** Rows of table a: g = i % 2, so each partition holds 500 of them; t = i, unique. */
const HELD = 1000;

function engineWith(select: string): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT); CREATE TABLE b (g BIGINT, n BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  e.applyChanges('a', { insert: rowsOf(HELD, (i) => ({ g: i % 2, t: i })) });
  return e;
}

function stateOf(e: Engine): string {
  return JSON.stringify({ epoch: e.epoch, a: sorted(e.tableRows('a')), v: sorted(e.viewSnapshot('v').rows) });
}

function assertMatchesSelect(e: Engine, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
}

for (const fn of ['row_number()', 'rank()', 'sum(t)']) {
  const select = `SELECT g, t, ${fn} OVER (PARTITION BY g ORDER BY t) AS w FROM a`;

  test(`${fn} over a partition of 500: one row at its head is refused, one past its end accepted`, () => {
    const e = engineWith(select);
    const before = stateOf(e);
    // At the head: the partition's 500 slots, each retracted and put back.
    const error = refusal(() => e.applyChanges('a', { insert: [{ g: 0, t: -1 }] }));
    assert.equal(error.code, 'EPOCH_TOO_LARGE');
    assert.match(error.message, /1 rows to "a".* 1000 rows in one epoch, more than 400 \(most in view "v"\)/);
    assert.equal(stateOf(e), before);
    // So is its deletion of the head row, and a write through SQL.
    assert.equal(refusal(() => e.applyChanges('a', { delete: [{ g: 0, t: 0 }] })).code, 'EPOCH_TOO_LARGE');
    assert.equal(refusal(() => e.execute('INSERT INTO a VALUES (1, -5)')).code, 'EPOCH_TOO_LARGE');
    assert.equal(stateOf(e), before);
    // Past its end, and a new partition: a few slots each.
    e.applyChanges('a', { insert: [{ g: 0, t: 5000 }] });
    e.applyChanges('a', { insert: rowsOf(150, (i) => ({ g: 7, t: i })) });
    e.applyChanges('a', { insert: [{ g: 7, t: -1 }] });
    assertMatchesSelect(e, select);
  });
}

test('LAG reaches one slot past the row: a row at the head of a long partition is accepted', () => {
  const select = 'SELECT g, t, lag(t) OVER (PARTITION BY g ORDER BY t) AS p FROM a';
  const e = engineWith(select);
  e.applyChanges('a', { insert: [{ g: 0, t: -1 }] });
  e.applyChanges('a', { delete: [{ g: 1, t: 1 }] });
  assertMatchesSelect(e, select);
});

test('a window over a GROUP BY counts the groups its write moves, whatever their aggregates', () => {
  // Ordered by an aggregate's value: the touched group's new place is not known, so its whole
  // partition counts (one group of b's 300 moving to the head renumbers them all).
  const select =
    'SELECT g, c, row_number() OVER (PARTITION BY g ORDER BY c DESC, n) AS r FROM (SELECT g, n, count(*) AS c FROM b GROUP BY g, n) s';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT); CREATE TABLE b (g BIGINT, n BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  e.applyChanges('b', { insert: rowsOf(300, (i) => ({ g: 0, n: i })) });
  e.applyChanges('b', { insert: rowsOf(10, (i) => ({ g: 1 + i, n: 0 })) });
  const before = JSON.stringify(sorted(e.viewSnapshot('v').rows));
  // A row of partition 0: its 300 groups, each retracted and put back.
  const error = refusal(() => e.applyChanges('b', { insert: [{ g: 0, n: 299 }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.equal(JSON.stringify(sorted(e.viewSnapshot('v').rows)), before);
  // A row of a short partition: accepted.
  e.applyChanges('b', { insert: [{ g: 3, n: 0 }] });
  assertMatchesSelect(e, select);
});

test('a window restored from a checkpoint counts its partitions as before', () => {
  const select = 'SELECT g, t, row_number() OVER (PARTITION BY g ORDER BY t) AS w FROM a';
  const from = engineWith(select);
  from.setStateTracking(true);
  const store = new MemoryCheckpointStore();
  store.write(from.takeCheckpoint());
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.setStateTracking(true);
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT); CREATE TABLE b (g BIGINT, n BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  assert.deepEqual(e.loadCheckpoint(store.read()).rebuilt, []);
  const before = stateOf(e);
  assert.equal(refusal(() => e.applyChanges('a', { insert: [{ g: 1, t: -1 }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  e.applyChanges('a', { insert: [{ g: 1, t: 5000 }] });
  assertMatchesSelect(e, select);
});

test('a window over a join reads the rows the join lists: a write at a partition end is accepted', () => {
  // The join's output is listed for the window (its partitions and places), not only counted: a
  // count alone would charge every held slot and refuse every write into a large windowed join.
  const select =
    'SELECT a.g, a.t, c.name, row_number() OVER (PARTITION BY c.name ORDER BY a.t) AS w FROM a JOIN c ON a.g = c.g';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT); CREATE TABLE c (g BIGINT PRIMARY KEY, name TEXT)');
  e.applyChanges('c', {
    insert: [
      { g: 0, name: 'even' },
      { g: 1, name: 'odd' },
    ],
  });
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  // In writes of 100 (a join builds a row per written row here), each past its partitions' ends.
  for (let at = 0; at < HELD; at += 100) {
    e.applyChanges('a', { insert: rowsOf(100, (i) => ({ g: (at + i) % 2, t: at + i })) });
  }
  e.applyChanges('a', { insert: [{ g: 0, t: 5000 }] });
  e.applyChanges('a', { delete: [{ g: 1, t: 999 }] });
  assertMatchesSelect(e, select);
  const before = JSON.stringify(sorted(e.viewSnapshot('v').rows));
  assert.equal(refusal(() => e.applyChanges('a', { insert: [{ g: 1, t: -1 }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(JSON.stringify(sorted(e.viewSnapshot('v').rows)), before);
});
