// One small write whose join sits behind a GROUP BY, a DISTINCT, another join, or in a view over a
// view: a row into `a` changes one group of `g`, and that group meets every row of `b` under its
// key — a million rows of b under one key make a one-row write build two million rows in one epoch.
// Such a write is refused with EPOCH_TOO_LARGE before the journal or any state changes: the written
// rows go down the views as a bound of each node's delta (a group changed emits at most a
// retraction and an insertion, its key known), and each join probes the other side by key, once
// per row of that bound: a cost of the write, not of the state. Replayed batches are never refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import type { EngineJournal, JournalBatch } from '../src/common/journal.ts';
import { joinProbeWork } from '../src/ivm/ops/join-op.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 1000;

/** A journal that keeps the epochs of the batches it was given. */
class EpochJournal implements EngineJournal {
  readonly batches: number[] = [];
  appendBatch(entry: JournalBatch): Record<string, never> {
    this.batches.push(entry.epoch);
    return {};
  }
  appendDdl(): void {}
  appendTick(): void {}
}

function engineWith(views: Record<string, string>): { e: Engine; journal: EpochJournal } {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute(
    'CREATE TABLE a (k BIGINT, i BIGINT); CREATE TABLE b (k BIGINT, j BIGINT); CREATE TABLE c (k BIGINT, m BIGINT)',
  );
  for (const [name, sql] of Object.entries(views)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  const journal = new EpochJournal();
  e.setJournal(journal);
  return { e, journal };
}

/** What a refused write must leave as it was: epoch, journal, tables, views. */
function stateOf(e: Engine, journal: EpochJournal, views: readonly string[]): string {
  return JSON.stringify({
    epoch: e.epoch,
    journal: journal.batches,
    tables: ['a', 'b', 'c'].map((t) => sorted(e.tableRows(t))),
    views: views.map((v) => sorted(e.viewSnapshot(v).rows)),
  });
}

/** The view's rows equal the same SELECT run now (the refusals left no half-applied state). */
function assertFresh(e: Engine, view: string, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot(view).rows), sorted(e.execute(select)[0]?.rows ?? []));
}

const GROUPED = 'SELECT k, count(*) AS c FROM a GROUP BY k';
const OVER_GROUPED = 'SELECT g.k, g.c, b.j FROM g JOIN b ON g.k = b.k';

test('a join over an aggregate view: a write that changes a large group is refused and changes nothing', () => {
  const { e, journal } = engineWith({ g: GROUPED, j: OVER_GROUPED });
  e.applyChanges('b', { insert: rowsOf(400, (i) => ({ k: 0, j: i })) });
  e.applyChanges('b', { insert: rowsOf(10, (i) => ({ k: 1, j: i })) });
  // Group 0 appears, then changes: each time at most a retraction and an insertion of it, each
  // meeting the 400 rows of b under k = 0 (800 ≤ 1000).
  e.applyChanges('a', { insert: [{ k: 0, i: 1 }] });
  e.applyChanges('a', { insert: [{ k: 0, i: 2 }] });
  assert.equal(e.viewSnapshot('j').rows.length, 400);
  // b grows to 600 under k = 0: a row into a is now 1200 rows past the bound.
  e.applyChanges('b', { insert: rowsOf(200, (i) => ({ k: 0, j: 1000 + i })) });
  const before = stateOf(e, journal, ['g', 'j']);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 0, i: 3 }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.match(
    error.message,
    /1 rows to "a".*build 1200 rows in one epoch, more than 1000 \(most in view "j"\)/,
  );
  assert.equal(stateOf(e, journal, ['g', 'j']), before);
  // Many rows of one group are one group changed: still 1200. A delete counts as an insert does.
  assert.equal(
    refusal(() => e.applyChanges('a', { insert: rowsOf(50, (i) => ({ k: 0, i })) })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(refusal(() => e.applyChanges('a', { delete: [{ k: 0, i: 1 }] })).code, 'EPOCH_TOO_LARGE');
  assert.equal(refusal(() => e.execute('INSERT INTO a VALUES (0, 9)')).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, journal, ['g', 'j']), before);
  // Other groups go through: 50 rows of k = 1 and 2 are two groups, 2 × 10 + 0 rows.
  e.applyChanges('a', { insert: rowsOf(50, (i) => ({ k: 1 + (i % 2), i })) });
  assert.equal(journal.batches.length, 6);
  // A new group has no old row to retract (g's side of the join holds none under its key): 700
  // rows of b under k = 3 are 700 rows built, accepted; once it exists, 1400.
  e.applyChanges('b', { insert: rowsOf(700, (i) => ({ k: 3, j: i })) });
  e.applyChanges('a', { insert: [{ k: 3, i: 1 }] });
  assert.equal(refusal(() => e.applyChanges('a', { insert: [{ k: 3, i: 2 }] })).code, 'EPOCH_TOO_LARGE');
  assertFresh(e, 'j', `SELECT g.k, g.c, b.j FROM (${GROUPED}) g JOIN b ON g.k = b.k`);
});

test('the same join with the aggregate in the view itself, and a DISTINCT in front of the join', () => {
  const { e, journal } = engineWith({
    j: `SELECT g.k, g.c, b.j FROM (${GROUPED}) g JOIN b ON g.k = b.k`,
    d: 'SELECT DISTINCT k FROM a',
    jd: 'SELECT d.k, b.j FROM d JOIN b ON d.k = b.k',
  });
  e.applyChanges('b', { insert: rowsOf(300, (i) => ({ k: 0, j: i })) });
  // A new group: g's insertion × 300 (no old row to retract), and d's one row × 300: 600.
  e.applyChanges('a', { insert: rowsOf(5, (i) => ({ k: 0, i })) });
  e.applyChanges('b', { insert: rowsOf(100, (i) => ({ k: 0, j: 300 + i })) });
  // 400 under k = 0: 800 in j, none in jd — the DISTINCT holds k = 0 and shows the same row after
  // (its held rows read): accepted. Counting one row of the DISTINCT, 1200 refused it.
  const shown = sorted(e.viewSnapshot('jd').rows);
  e.applyChanges('a', { insert: rowsOf(5, (i) => ({ k: 0, i: 10 + i })) });
  assert.deepEqual(sorted(e.viewSnapshot('jd').rows), shown);
  e.applyChanges('b', { insert: rowsOf(101, (i) => ({ k: 0, j: 400 + i })) });
  const before = stateOf(e, journal, ['j', 'd', 'jd']);
  // 501 under k = 0: 1002 in j.
  const error = refusal(() => e.applyChanges('a', { insert: rowsOf(5, (i) => ({ k: 0, i: 20 + i })) }));
  assert.match(error.message, /build 1002 rows in one epoch.*\(most in view "j"\)/);
  assert.equal(stateOf(e, journal, ['j', 'd', 'jd']), before);
  assertFresh(e, 'jd', 'SELECT d.k, b.j FROM (SELECT DISTINCT k FROM a) d JOIN b ON d.k = b.k');
});

test('a join whose side is another join: the first join lists its rows and the second probes them by key', () => {
  const { e, journal } = engineWith({
    jj: 'SELECT a.i, b.j, c.m FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k',
  });
  // b: 3 rows under k = 5; c: 10 keys × 50 rows. The most c holds under one key, as far as a bound
  // reading no row knows, is 491: 3 × 491 is past the bound, but the 3 rows' keys meet 150 rows.
  e.applyChanges('b', { insert: rowsOf(3, (i) => ({ k: 5, j: i })) });
  e.applyChanges('b', { insert: rowsOf(30, (i) => ({ k: 7, j: i })) });
  e.applyChanges('c', { insert: rowsOf(500, (i) => ({ k: i % 10, m: i })) });
  const probes = joinProbeWork.probes;
  e.applyChanges('a', { insert: [{ k: 5, i: 1 }] });
  // One probe of b for the written row, one of c per row the first join built.
  assert.equal(joinProbeWork.probes - probes, 1 + 3);
  assert.equal(e.viewSnapshot('jj').rows.length, 150);
  // k = 7: 30 rows of b, each meeting 50 of c: 1530 rows, refused.
  const before = stateOf(e, journal, ['jj']);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 7, i: 2 }] }));
  assert.match(error.message, /build 1530 rows in one epoch/);
  assert.equal(stateOf(e, journal, ['jj']), before);
  assertFresh(e, 'jj', 'SELECT a.i, b.j, c.m FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k');
});

test('a chain of views: a join over a view of a join over an aggregate', () => {
  const { e, journal } = engineWith({
    g: GROUPED,
    j: OVER_GROUPED,
    jc: 'SELECT j.k, j.j, c.m FROM j JOIN c ON j.j % 2 = c.k',
  });
  e.applyChanges('b', { insert: rowsOf(20, (i) => ({ k: 0, j: i })) });
  e.applyChanges('c', { insert: rowsOf(40, (i) => ({ k: i % 2, m: i })) });
  // Group 0 appears: j builds 2 × 20 rows (its bound), each with j % 2 ∈ {0, 1} meeting 20 rows of c.
  e.applyChanges('a', { insert: [{ k: 0, i: 1 }] });
  assert.equal(e.viewSnapshot('jc').rows.length, 400);
  const before = stateOf(e, journal, ['g', 'j', 'jc']);
  // Group 0 changes: 40 rows of j, 2 × 20 × 20 = 800 of jc: 840 ≤ 1000, accepted. c doubles: 1640.
  e.applyChanges('a', { insert: [{ k: 0, i: 2 }] });
  e.applyChanges('c', { insert: rowsOf(40, (i) => ({ k: i % 2, m: 100 + i })) });
  const after = stateOf(e, journal, ['g', 'j', 'jc']);
  assert.notEqual(after, before);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 0, i: 3 }] }));
  assert.match(error.message, /build 1640 rows in one epoch.*\(most in view "jc"\)/);
  assert.equal(stateOf(e, journal, ['g', 'j', 'jc']), after);
  assertFresh(
    e,
    'jc',
    `SELECT j.k, j.j, c.m FROM (${OVER_GROUPED.replace('FROM g', `FROM (${GROUPED}) g`)}) j JOIN c ON j.j % 2 = c.k`,
  );
});

test('the count costs the write: probes per group changed, however large the other side', () => {
  const { e } = engineWith({ g: GROUPED, j: OVER_GROUPED });
  // 4,000 rows of b on 1,000 keys, and 1,000 under a key no write of a touches: a bound reading no
  // row allows up to 1,000 under one key (the busiest key's), so these writes reach the probes.
  for (let from = 0; from < 4000; from += 1000)
    e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ k: i, j: from + i })) });
  e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ k: -1, j: 5000 + i })) });
  let next = 0;
  for (const groups of [1, 10, 100]) {
    const probes = joinProbeWork.probes;
    // Three rows per new group: its old row is looked for on g's side of the join (not there: not
    // counted), its new row probes b: two probes a group, however many rows b holds.
    e.applyChanges('a', { insert: rowsOf(3 * groups, (i) => ({ k: next + (i % groups), i })) });
    next += groups;
    assert.equal(joinProbeWork.probes - probes, 2 * groups, `probes for ${groups} groups`);
  }
  // Writes to b meet g, which holds one row per key: within a bound that reads no row, no probe.
  const probes = joinProbeWork.probes;
  e.applyChanges('b', { insert: rowsOf(300, (i) => ({ k: i, j: 10_000 + i })) });
  assert.equal(joinProbeWork.probes, probes);
});

test('replayed and source batches are never refused; shapes the bound cannot see are not refused', () => {
  const { e } = engineWith({ g: GROUPED, j: OVER_GROUPED });
  e.applyChanges('b', { insert: rowsOf(600, (i) => ({ k: 0, j: i })) });
  e.applyChanges('a', { insert: [{ k: 0, i: 1 }] }, { positions: { a: { offset: 1 } } });
  e.applyChanges('a', { insert: [{ k: 0, i: 2 }] }, { positions: { a: { offset: 2 } } });
  assert.equal(e.viewSnapshot('j').rows.length, 600);
});

test("a DISTINCT of a GROUP BY's keys in front of the join: a new key meets its rows and is refused", () => {
  // g's old and new rows of a group are one value at the DISTINCT, which emits the new one (the
  // count kept the old one, retracted only if held, and the join holding no row under a new key
  // dropped it: a first row of k = 0 was accepted and built 1200 rows).
  const select =
    'SELECT d.k, b.j FROM (SELECT DISTINCT k FROM (SELECT k, i FROM a GROUP BY k, i) g) d JOIN b ON d.k = b.k';
  const { e, journal } = engineWith({ jd: select });
  e.applyChanges('b', { insert: rowsOf(2400, (i) => ({ k: i % 2 === 0 ? 0 : 1, j: i })) });
  e.applyChanges('b', { insert: rowsOf(10, (i) => ({ k: 2, j: i })) });
  const before = stateOf(e, journal, ['jd']);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 0, i: 1 }] }));
  assert.match(error.message, /build 1200 rows in one epoch/);
  assert.equal(refusal(() => e.execute('INSERT INTO a VALUES (1, 1), (1, 2)')).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, journal, ['jd']), before);
  // A key with few rows of b, then more rows into its value: accepted.
  e.applyChanges('a', { insert: [{ k: 2, i: 1 }] });
  e.applyChanges('a', { insert: [{ k: 2, i: 2 }] });
  assert.equal(e.viewSnapshot('jd').rows.length, 10);
  assertFresh(e, 'jd', select);
});
