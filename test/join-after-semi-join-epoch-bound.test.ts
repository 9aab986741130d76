// A join after a semi-join: one row into an `IN`/`EXISTS` subquery's table flips the outer rows of
// its key into the semi-join's output, and a join after it pairs each of them with the other side's
// rows under their key — one row into b built 1,000,000 rows (1,000 outer rows × 1,000) in one epoch,
// uncounted, since the count named the flipped rows by number only. The flipped rows are now listed
// (up to 100,000) for the join after to probe, as a join's own rows are: such a write is refused with
// EPOCH_TOO_LARGE, changing nothing; one whose flipped rows meet few rows is accepted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 1000;

const VIEWS: Record<string, string> = {
  // The semi-join in a view, the join in a view over it.
  s: 'SELECT * FROM a WHERE k IN (SELECT k FROM b)',
  v: 'SELECT s.x, c.z FROM s JOIN c ON s.k = c.k',
  // Both in one view: the semi-join in a subquery of FROM.
  w: 'SELECT a.x, c.z FROM (SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)) a JOIN c ON a.k = c.k',
};

/** a: 40 rows of k = 0, 2 rows of k = 1; c: 30 rows of k = 0, 3 of k = 1; b empty. */
function engine(): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute(
    'CREATE TABLE a (k BIGINT, x BIGINT); CREATE TABLE b (k BIGINT); CREATE TABLE c (k BIGINT, z BIGINT)',
  );
  for (const [name, sql] of Object.entries(VIEWS)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  e.applyChanges('a', { insert: rowsOf(42, (i) => ({ k: i < 40 ? 0 : 1, x: i })) });
  e.applyChanges('c', { insert: rowsOf(33, (i) => ({ k: i < 30 ? 0 : 1, z: i })) });
  return e;
}

function stateOf(e: Engine): string {
  return JSON.stringify({
    epoch: e.epoch,
    b: sorted(e.tableRows('b')),
    views: Object.keys(VIEWS).map((v) => sorted(e.viewSnapshot(v).rows)),
  });
}

test('one row into the subquery flips 40 outer rows that meet 30 rows each: refused, nothing changed', () => {
  const e = engine();
  const before = stateOf(e);
  const error = refusal(() => e.applyChanges('b', { insert: [{ k: 0 }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  // v: 40 flips in s, 1,200 pairs in v; w: 40 flips and 1,200 pairs.
  assert.match(error.message, /1 rows to "b".* 2480 rows in one epoch, more than 1000/);
  assert.equal(stateOf(e), before);
  assert.equal(refusal(() => e.execute('INSERT INTO b VALUES (0)')).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
});

test('a key whose flipped rows meet few rows is accepted, and the views stay what a SELECT gives', () => {
  const e = engine();
  e.applyChanges('b', { insert: [{ k: 1 }] });
  // A second row of a key already held flips nothing.
  e.applyChanges('b', { insert: [{ k: 1 }, { k: 7 }] });
  assert.equal(e.viewSnapshot('v').rows.length, 6);
  for (const [name, sql] of Object.entries(VIEWS)) {
    assert.deepEqual(sorted(e.viewSnapshot(name).rows), sorted(e.execute(sql)[0]?.rows ?? []), name);
  }
});
