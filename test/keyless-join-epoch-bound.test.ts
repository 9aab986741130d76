// One small write into a view that multiplies it: a join with no equality between its sides pairs
// each written row with every row of the other side, so a write of a few thousand rows against a
// side of ten thousand builds tens of millions of rows in one epoch (seconds of the server's loop,
// gigabytes). Such a write is refused with EPOCH_TOO_LARGE, counted before the epoch runs, and
// changes nothing: no epoch, no table row, no view row. Replayed batches are never refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 1000;

/** What a refused write must leave as it was. */
function stateOf(e: Engine, views: readonly string[]): string {
  return JSON.stringify({
    epoch: e.epoch,
    a: sorted(e.tableRows('a')),
    b: sorted(e.tableRows('b')),
    views: views.map((v) => sorted(e.viewSnapshot(v).rows)),
  });
}

function engineWith(views: Record<string, string>, aRows: number): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (x BIGINT, s TEXT); CREATE TABLE b (y BIGINT)');
  for (const [name, sql] of Object.entries(views)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  e.applyChanges('a', { insert: rowsOf(aRows, (i) => ({ x: i, s: `r${i}` })) });
  return e;
}

test('a cross join: a write whose pairs stay within the bound applies; one past it is refused and changes nothing', () => {
  const e = engineWith({ v: 'SELECT * FROM a, b', w: 'SELECT x, count(*) AS n FROM v GROUP BY x' }, 100);
  // 10 rows × 100 rows of a: exactly the bound.
  e.applyChanges('b', { insert: rowsOf(10, (i) => ({ y: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 1000);
  const before = stateOf(e, ['v', 'w']);
  // 11 rows × 100: 1,100 pairs.
  const error = refusal(() => e.applyChanges('b', { insert: rowsOf(11, (i) => ({ y: 100 + i })) }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.match(error.message, /11 rows to "b".*1100 rows in one epoch, more than 1000/);
  assert.equal(stateOf(e, ['v', 'w']), before);
  // Deletes count as much as inserts; a write through SQL is refused the same way.
  const mixed = { insert: [{ y: 500 }], delete: rowsOf(10, (i) => ({ y: i })) };
  assert.equal(refusal(() => e.applyChanges('b', mixed)).code, 'EPOCH_TOO_LARGE');
  const values = rowsOf(11, (i) => ({ y: 100 + i }))
    .map((r) => `(${String(r.y)})`)
    .join(', ');
  assert.equal(refusal(() => e.execute(`INSERT INTO b VALUES ${values}`)).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, ['v', 'w']), before);
  // Smaller writes still go through, and the views stay what a one-off SELECT gives.
  e.applyChanges('b', { delete: rowsOf(5, (i) => ({ y: i })) });
  e.applyChanges('a', { insert: [{ x: -1, s: 'new' }] });
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute('SELECT * FROM a, b')[0]?.rows ?? []));
  assert.equal(e.viewSnapshot('w').rows.length, 101);
});

test('a theta join over a filtered side counts the rows the other side holds, not the table', () => {
  const e = engineWith({ v: 'SELECT a.x, b.y FROM a JOIN b ON a.x < b.y WHERE a.x >= 50' }, 100);
  // Side a holds the 50 rows its filter keeps: 20 rows of b × 50 = the bound.
  e.applyChanges('b', { insert: rowsOf(20, (i) => ({ y: 1000 + i })) });
  const before = stateOf(e, ['v']);
  assert.equal(e.viewSnapshot('v').rows.length, 1000);
  assert.equal(
    refusal(() => e.applyChanges('b', { insert: rowsOf(21, (i) => ({ y: 2000 + i })) })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(stateOf(e, ['v']), before);
});

test('a table joined with itself without a key counts both sides and the pairs of the write itself', () => {
  const e = engineWith({ v: 'SELECT a1.x AS x1, a2.x AS x2 FROM a a1, a a2' }, 20);
  // 10 new rows: 10 × 20 on each side + 10 × 10 among themselves = 500.
  e.applyChanges('a', { insert: rowsOf(10, (i) => ({ x: 100 + i, s: 'n' })) });
  assert.equal(e.viewSnapshot('v').rows.length, 900);
  const before = stateOf(e, ['v']);
  // 13 new rows against 30: 13 × 30 × 2 + 13 × 13 = 949.
  e.applyChanges('a', { insert: rowsOf(13, (i) => ({ x: 200 + i, s: 'n' })) });
  assert.notEqual(stateOf(e, ['v']), before);
  assert.equal(e.viewSnapshot('v').rows.length, 43 * 43);
  const after = stateOf(e, ['v']);
  // 11 new rows against 43: 11 × 43 × 2 + 11 × 11 = 1067.
  const eleven = rowsOf(11, (i) => ({ x: 300 + i, s: 'n' }));
  assert.equal(refusal(() => e.applyChanges('a', { insert: eleven })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, ['v']), after);
});

test('a keyed join counts the rows under each written key, and replayed batches are never refused', () => {
  const e = engineWith({ k: 'SELECT a.x, b.y FROM a JOIN b ON a.x = b.y' }, 5000);
  // Each row of b meets one row of a: 5,000 pairs are refused at once, accepted a thousand at a time
  // (keyed-join-epoch-bound.test.ts has the rest).
  assert.equal(
    refusal(() => e.applyChanges('b', { insert: rowsOf(5000, (i) => ({ y: i })) })).code,
    'EPOCH_TOO_LARGE',
  );
  for (let from = 0; from < 5000; from += 1000)
    e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ y: from + i })) });
  assert.equal(e.viewSnapshot('k').rows.length, 5000);
  e.execute('CREATE MATERIALIZED VIEW v AS SELECT * FROM a, b WHERE a.x < 1');
  // Replay passes the journaled positions: the batch was accepted when it was written.
  e.applyChanges(
    'b',
    { insert: rowsOf(2000, (i) => ({ y: 10_000 + i })) },
    { positions: { b: { offset: 7 } } },
  );
  assert.equal(e.viewSnapshot('v').rows.length, 7000);
});
