// One small write into a subquery's table can flip the membership of every outer row of a view:
// one NULL into a `NOT IN` subquery retracts them all, one row of a key that many outer rows share
// puts them all into an `IN` or `EXISTS` view. Such a write is counted before its epoch (the held
// outer rows whose key the write can move across zero matches, semi-join-flips.ts) and refused
// with EPOCH_TOO_LARGE past the bound, changing nothing; writes that flip few rows are accepted,
// and the count's look-ups are the write's keys, not the view's rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import { semiJoinFlipWork } from '../src/ivm/ops/semi-join-flips.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 400;
/** Outer rows: k = i % 2, so each key holds 500 of them; x = i, unique. */
const OUTER = 1000;

function engineWith(view: string): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, x BIGINT); CREATE TABLE b (k BIGINT, x BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${view}`);
  e.applyChanges('a', { insert: rowsOf(OUTER, (i) => ({ k: i % 2, x: i })) });
  return e;
}

function stateOf(e: Engine): string {
  return JSON.stringify({
    epoch: e.epoch,
    a: sorted(e.tableRows('a')),
    b: sorted(e.tableRows('b')),
    v: sorted(e.viewSnapshot('v').rows),
  });
}

/** The view as a one-off SELECT of its query gives it. */
function assertMatchesSelect(e: Engine, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
}

test('one NULL into a NOT IN subquery would retract every outer row: refused, nothing changed', () => {
  const select = 'SELECT * FROM a WHERE x NOT IN (SELECT x FROM b)';
  const e = engineWith(select);
  // The first values into the empty subquery flip only the rows they name (and NULL-valued ones).
  e.applyChanges('b', { insert: rowsOf(100, (i) => ({ k: 0, x: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, OUTER - 100);
  const before = stateOf(e);
  const error = refusal(() => e.applyChanges('b', { insert: [{ k: 0, x: null }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  // Every outer row is counted: the fold evaluates the 100 already failing too (a bound, not exact).
  assert.match(error.message, /1 rows to "b".*1000 rows in one epoch, more than 400 \(most in view "v"\)/);
  assert.equal(refusal(() => e.execute('INSERT INTO b VALUES (5, NULL)')).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  // More values, and deleting some, flip their own rows only: accepted.
  e.applyChanges('b', { insert: rowsOf(100, (i) => ({ k: 1, x: 100 + i })) });
  e.applyChanges('b', { delete: rowsOf(50, (i) => ({ k: 0, x: i })) });
  assertMatchesSelect(e, select);
  assert.equal(e.viewSnapshot('v').rows.length, OUTER - 150);
});

test('NOT IN: a second NULL flips nothing and is accepted; deleting the last NULL would put every row back', () => {
  const select = 'SELECT * FROM a WHERE x NOT IN (SELECT x FROM b)';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, x BIGINT); CREATE TABLE b (k BIGINT, x BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  // The NULL first: the outer rows then arrive failing (UNKNOWN), each passed once.
  e.applyChanges('b', { insert: [{ k: 0, x: null }] });
  e.applyChanges('a', { insert: rowsOf(OUTER, (i) => ({ k: i % 2, x: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 0);
  // Known insertions cannot take the group's NULL count to zero.
  e.applyChanges('b', { insert: [{ k: 1, x: null }] });
  e.applyChanges('b', { delete: [{ k: 1, x: null }] });
  const before = stateOf(e);
  assert.equal(refusal(() => e.applyChanges('b', { delete: [{ k: 0, x: null }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  assertMatchesSelect(e, select);
});

test('a NULL into a correlated NOT IN flips only its own group', () => {
  const select = 'SELECT * FROM a WHERE x NOT IN (SELECT b.x FROM b WHERE b.k = a.k)';
  const e = engineWith(select);
  e.applyChanges('b', { insert: [{ k: 0, x: -1 }] });
  // Group 7 holds no outer row: nothing flips.
  e.applyChanges('b', { insert: [{ k: 7, x: null }] });
  const before = stateOf(e);
  // Group 0 holds 500 outer rows, all passing until a NULL arrives.
  assert.equal(refusal(() => e.applyChanges('b', { insert: [{ k: 0, x: null }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  assertMatchesSelect(e, select);
});

test('IN and EXISTS: one subquery row of a key 500 outer rows share is refused; other keys apply', () => {
  for (const select of [
    'SELECT * FROM a WHERE k IN (SELECT k FROM b)',
    'SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)',
  ]) {
    const e = engineWith(select);
    const before = stateOf(e);
    assert.equal(refusal(() => e.applyChanges('b', { insert: [{ k: 0, x: 1 }] })).code, 'EPOCH_TOO_LARGE');
    assert.equal(stateOf(e), before, select);
    // Keys no outer row holds: counted by their keys (the row-free bound, 500 a row, is past the
    // limit), none flips, accepted.
    for (const n of [1, 10, 100]) {
      const lookups = semiJoinFlipWork.lookups;
      e.applyChanges('b', { insert: rowsOf(n, (i) => ({ k: 1000 + n + i, x: i })) });
      assert.equal(semiJoinFlipWork.lookups - lookups, n, `look-ups for a write of ${n} rows`);
    }
    assertMatchesSelect(e, select);
    assert.equal(e.viewSnapshot('v').rows.length, 0);
  }
});

test('NOT EXISTS: deleting the one subquery row of a busy key is refused', () => {
  const select = 'SELECT * FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, x BIGINT); CREATE TABLE b (k BIGINT, x BIGINT)');
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  // The subquery's row first: the outer rows then arrive already failing (a write into a, passed once).
  e.applyChanges('b', { insert: [{ k: 0, x: 1 }] });
  e.applyChanges('a', { insert: rowsOf(OUTER, (i) => ({ k: i % 2, x: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 500);
  const before = stateOf(e);
  assert.equal(refusal(() => e.applyChanges('b', { delete: [{ k: 0, x: 1 }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  // A second row of the key, then deleting one of the two, moves no outer row: accepted.
  e.applyChanges('b', { insert: [{ k: 0, x: 2 }] });
  e.applyChanges('b', { delete: [{ k: 0, x: 1 }] });
  assertMatchesSelect(e, select);
  assert.equal(e.viewSnapshot('v').rows.length, 500);
});

test('IN over an EXCEPT: a row into its right side takes a busy key out of the subquery: refused', () => {
  // The written row is an insertion into c, but a retraction of k = 0 from the EXCEPT's output: it
  // was counted as a key gaining a match, and the 500 flipped rows were accepted past the bound.
  const select = 'SELECT * FROM a WHERE k IN (SELECT k FROM b EXCEPT SELECT k FROM c)';
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute(
    'CREATE TABLE a (k BIGINT, x BIGINT); CREATE TABLE b (k BIGINT, x BIGINT); CREATE TABLE c (k BIGINT)',
  );
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  e.applyChanges('b', { insert: [{ k: 0, x: 1 }] });
  e.applyChanges('a', { insert: rowsOf(OUTER, (i) => ({ k: i % 2, x: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 500);
  const before = stateOf(e);
  assert.equal(refusal(() => e.applyChanges('c', { insert: [{ k: 0 }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e), before);
  // A key no outer row holds is accepted.
  e.applyChanges('c', { insert: [{ k: 7 }] });
  assertMatchesSelect(e, select);
  assert.equal(e.viewSnapshot('v').rows.length, 500);
});
