// A Top-N with ties (`rank() <= n`, `dense_rank() <= n`) or with its rank shown: one row above a long
// tie group at the cut pushes the whole group out of the view in one epoch, and its delete brings
// the group back; with the rank shown, one row at the head re-ranks every kept row. Such a write is
// counted before its epoch (the held rows it would move across the kept range's ends, or re-rank:
// TopNOp.heldRowsMovedBy) and refused with EPOCH_TOO_LARGE past the bound, changing nothing; a row
// below the cut, into the tie group, into a short partition, or a ROW_NUMBER Top-N's row is accepted,
// and the view stays what a one-off SELECT gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Row } from '../src/common/types.ts';
import { Engine } from '../src/index.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';

const LIMIT = 400;
/** Rows tied at one place of partition 0 (at the cut, or just past it). */
const TIED = 500;

/** Partition 0: t = 0 … before-1, then TIED rows of t = 100, then 50 rows after; partition 1: 5 rows. */
function rowsWith(before: number): Row[] {
  return [
    ...rowsOf(before, (i) => ({ g: 0, t: i, id: i })),
    ...rowsOf(TIED, (i) => ({ g: 0, t: 100, id: 1000 + i })),
    ...rowsOf(50, (i) => ({ g: 0, t: 200 + i, id: 5000 + i })),
    ...rowsOf(5, (i) => ({ g: 1, t: i, id: 9000 + i })),
  ];
}

function engineWith(select: string, before: number, tracking = false): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.setStateTracking(tracking);
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT, id BIGINT PRIMARY KEY)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  // In writes of 100: each past the cut, or into a partition whose Top-N holds fewer than the bound.
  const rows = rowsWith(before);
  for (let at = 0; at < rows.length; at += 100) e.applyChanges('a', { insert: rows.slice(at, at + 100) });
  return e;
}

function stateOf(e: Engine): string {
  return JSON.stringify({ epoch: e.epoch, a: sorted(e.tableRows('a')), v: sorted(e.viewSnapshot('v').rows) });
}

function assertMatchesSelect(e: Engine, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
}

const ranked = (fn: string, shown: boolean): string =>
  `SELECT ${shown ? '*' : 'g, t, id'} FROM (SELECT g, t, id, ${fn} OVER (PARTITION BY g ORDER BY t) AS r FROM a) s WHERE r <= 10`;

for (const fn of ['rank()', 'dense_rank()']) {
  const select = ranked(fn, false);

  test(`${fn} <= 10 with ${TIED} rows tied at the cut: a row above it is refused, below or into it accepted`, () => {
    // t = 0 … 8, then the tie at place 10: all of it kept.
    const e = engineWith(select, 9);
    assert.equal(e.viewSnapshot('v').rows.length, 9 + TIED + 5);
    const before = stateOf(e);
    const error = refusal(() => e.applyChanges('a', { insert: [{ g: 0, t: -1, id: -1 }] }));
    assert.equal(error.code, 'EPOCH_TOO_LARGE');
    assert.match(
      error.message,
      new RegExp(
        `1 rows to "a" would make the .*Top-Ns.* ${TIED} rows in one epoch, more than ${LIMIT} \\(most in view "v"\\)`,
      ),
    );
    assert.equal(refusal(() => e.execute('INSERT INTO a VALUES (0, 50, -2)')).code, 'EPOCH_TOO_LARGE');
    assert.equal(stateOf(e), before);
    // Below the cut, into the tie, a delete above it (the tie stays kept), a short partition.
    e.applyChanges('a', { insert: [{ g: 0, t: 150, id: -3 }] });
    e.applyChanges('a', { insert: [{ g: 0, t: 100, id: -4 }] });
    e.applyChanges('a', { delete: [{ g: 0, t: 100, id: 1000 }] });
    e.applyChanges('a', { delete: [{ g: 0, t: 3, id: 3 }] });
    e.applyChanges('a', { insert: [{ g: 1, t: -1, id: -5 }] });
    assertMatchesSelect(e, select);
  });

  test(`${fn} <= 10 with ${TIED} rows tied just past the cut: a delete above it is refused`, () => {
    // t = 0 … 9 kept, the tie at place 11: out; deleting a kept row would bring all of it in.
    const e = engineWith(select, 10);
    assert.equal(e.viewSnapshot('v').rows.length, 10 + 5);
    const before = stateOf(e);
    assert.equal(
      refusal(() => e.applyChanges('a', { delete: [{ g: 0, t: 4, id: 4 }] })).code,
      'EPOCH_TOO_LARGE',
    );
    assert.equal(refusal(() => e.execute('DELETE FROM a WHERE id = 0')).code, 'EPOCH_TOO_LARGE');
    assert.equal(stateOf(e), before);
    // An insert above it pushes one kept row out; a row of the tie leaves, out of the view.
    e.applyChanges('a', { insert: [{ g: 0, t: -1, id: -1 }] });
    e.applyChanges('a', { delete: [{ g: 0, t: 100, id: 1001 }] });
    assertMatchesSelect(e, select);
  });
}

test('rank() <= 10 with the rank shown: a row at the head re-ranks the kept tie and is refused', () => {
  const select = ranked('rank()', true);
  const e = engineWith(select, 9);
  const before = stateOf(e);
  // Deleting a kept row keeps the tie in, but every one of its rows is re-ranked (10 → 9).
  assert.equal(
    refusal(() => e.applyChanges('a', { delete: [{ g: 0, t: 0, id: 0 }] })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(
    refusal(() => e.applyChanges('a', { insert: [{ g: 0, t: -1, id: -1 }] })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(stateOf(e), before);
  e.applyChanges('a', { insert: [{ g: 0, t: 300, id: -2 }] });
  e.applyChanges('a', { insert: [{ g: 0, t: 100, id: -3 }] });
  e.applyChanges('a', { delete: [{ g: 1, t: 0, id: 9000 }] });
  assertMatchesSelect(e, select);
});

test('row_number() <= 10 moves one row per row: a row at the head of a long partition is accepted', () => {
  const select = ranked('row_number()', false);
  const e = engineWith(select, 9);
  e.applyChanges('a', { insert: [{ g: 0, t: -1, id: -1 }] });
  e.applyChanges('a', { delete: [{ g: 0, t: 0, id: 0 }] });
  assertMatchesSelect(e, select);
});

test('a Top-N with ties restored from a checkpoint counts its tie group as before', () => {
  const select = ranked('rank()', false);
  const from = engineWith(select, 9, true);
  const store = new MemoryCheckpointStore();
  store.write(from.takeCheckpoint());
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.setStateTracking(true);
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT, id BIGINT PRIMARY KEY)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  assert.deepEqual(e.loadCheckpoint(store.read()).rebuilt, []);
  const before = stateOf(e);
  assert.equal(
    refusal(() => e.applyChanges('a', { insert: [{ g: 0, t: -1, id: -1 }] })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(stateOf(e), before);
  e.applyChanges('a', { insert: [{ g: 0, t: 150, id: -2 }] });
  assertMatchesSelect(e, select);
});

test('a Top-N with ties over a GROUP BY ordered by an aggregate counts the tie near its cut', () => {
  // Groups of b ranked by their count: 500 groups tied at count 1 at place 2; one more row of a
  // group that then leads pushes them all out (its place is not known: the whole window is counted).
  const select =
    'SELECT g, n, c FROM (SELECT g, n, c, rank() OVER (PARTITION BY g ORDER BY c DESC) AS r FROM (SELECT g, n, count(*) AS c FROM b GROUP BY g, n) s) q WHERE r <= 2';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE b (g BIGINT, n BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  e.applyChanges('b', {
    insert: [...rowsOf(3, () => ({ g: 0, n: -1 })), ...rowsOf(500, (i) => ({ g: 0, n: i }))],
  });
  e.applyChanges('b', { insert: rowsOf(3, (i) => ({ g: 1, n: i })) });
  const before = JSON.stringify(sorted(e.viewSnapshot('v').rows));
  assert.equal(
    refusal(() => e.applyChanges('b', { insert: rowsOf(4, () => ({ g: 0, n: 7 })) })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(JSON.stringify(sorted(e.viewSnapshot('v').rows)), before);
  e.applyChanges('b', { insert: [{ g: 1, n: 0 }] });
  assertMatchesSelect(e, select);
});
