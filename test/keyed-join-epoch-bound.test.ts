// One small write into a keyed join on a key that few values repeat: each written row meets every
// row of the other side under its key, so a thousand rows of one key against a thousand held build
// millions of rows in one epoch (seconds of the server's loop, a view that takes gigabytes to
// restart). Such a write is refused with EPOCH_TOO_LARGE, counted before the epoch runs by probing
// the other side once per written row (a cost of the write, not of the state), and changes nothing:
// no journal entry, no epoch, no table row, no view row. Replayed batches are never refused.
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

/** What a refused write must leave as it was. */
function stateOf(e: Engine, journal: EpochJournal, views: readonly string[]): string {
  return JSON.stringify({
    epoch: e.epoch,
    journal: journal.batches,
    a: sorted(e.tableRows('a')),
    b: sorted(e.tableRows('b')),
    views: views.map((v) => sorted(e.viewSnapshot(v).rows)),
  });
}

function engineWith(views: Record<string, string>): { e: Engine; journal: EpochJournal } {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, i BIGINT); CREATE TABLE b (k BIGINT, j BIGINT)');
  for (const [name, sql] of Object.entries(views)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  const journal = new EpochJournal();
  e.setJournal(journal);
  return { e, journal };
}

test('a self-join on a key of two values: the attack is refused and changes nothing; a write at the bound applies', () => {
  const { e, journal } = engineWith({
    v: 'SELECT a1.i AS i1, a2.i AS i2 FROM a a1 JOIN a a2 ON a1.k = a2.k',
    n: 'SELECT count(*) AS n FROM v',
  });
  // 40 rows, 20 per key: each side's 40 rows pair among themselves, 2 × 20 × 20 = 800 ≤ 1000.
  e.applyChanges('a', { insert: rowsOf(40, (i) => ({ k: i % 2, i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 800);
  const before = stateOf(e, journal, ['v', 'n']);
  // 10 rows of k = 0: 10 × 20 on each side + 10 × 10 among themselves = 500 — but 20 more is
  // 20 × 20 × 2 + 20 × 20 = 1200.
  const error = refusal(() => e.applyChanges('a', { insert: rowsOf(20, (i) => ({ k: 0, i: 100 + i })) }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.match(
    error.message,
    /20 rows to "a".*build 1200 rows in one epoch, more than 1000 \(most in view "v"\)/,
  );
  assert.equal(stateOf(e, journal, ['v', 'n']), before);
  // Through SQL, the same.
  const values = Array.from({ length: 20 }, (_, i) => `(0, ${200 + i})`).join(', ');
  assert.equal(refusal(() => e.execute(`INSERT INTO a VALUES ${values}`)).code, 'EPOCH_TOO_LARGE');
  // Deletes count as much as inserts: 15 rows of k = 0 out is 15 × 20 × 2 − … ≥ 15 × 5 × 2 + 225 > 1000.
  const out = rowsOf(15, (i) => ({ k: 0, i: 2 * i }));
  const mixed = { delete: out, insert: rowsOf(10, (i) => ({ k: 0, i: 300 + i })) };
  assert.equal(refusal(() => e.applyChanges('a', mixed)).code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, journal, ['v', 'n']), before);
  // Just under: 9 rows of k = 0 build 9 × 20 × 2 + 81 = 441; the view is then a one-off SELECT's.
  e.applyChanges('a', { insert: rowsOf(9, (i) => ({ k: 0, i: 400 + i })) });
  assert.equal(journal.batches.length, 2);
  const select = 'SELECT a1.i AS i1, a2.i AS i2 FROM a a1 JOIN a a2 ON a1.k = a2.k';
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
});

test('the count probes once per written row, however large the other side', () => {
  const { e } = engineWith({ v: 'SELECT a.i, b.j FROM a JOIN b ON a.k = b.k' });
  // 3,000 rows of b on 1,000 keys (3 each), and 1,500 under a key no write of a touches; a holds
  // nothing.
  for (let from = 0; from < 3000; from += 1000)
    e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ k: i, j: from + i })) });
  e.applyChanges('b', { insert: rowsOf(1500, (i) => ({ k: -1, j: 5000 + i })) });
  let next = 0;
  for (const write of [1, 10, 100, 300]) {
    // Past the row-free bound (write × 1,500 > 1000: the busiest key of b holds 1,500 rows, and a
    // bound that reads no row cannot tell which keys the write has) but within the count: write × 3.
    const probes = joinProbeWork.probes;
    e.applyChanges('a', { insert: rowsOf(write, (i) => ({ k: next + i, i: next + i })) });
    next += write;
    assert.equal(joinProbeWork.probes - probes, write, `probes for a write of ${write} rows`);
  }
  // Writes to b meet a, which holds one row per key: at most 3 rows per written row with padding,
  // a bound that reads no row (300 × 3 ≤ 1000), so nothing is probed.
  const before = joinProbeWork.probes;
  e.applyChanges('b', { insert: rowsOf(300, (i) => ({ k: i, j: 10_000 + i })) });
  assert.equal(joinProbeWork.probes, before);
  // 334 rows, each meeting 3 or 4 rows of b: more than 1000 pairs, refused after as many probes as rows.
  const probes = joinProbeWork.probes;
  assert.equal(
    refusal(() => e.applyChanges('a', { insert: rowsOf(334, (i) => ({ k: i, i })) })).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(joinProbeWork.probes - probes, 334);
});

test('NULL keys match nothing, an expression key is evaluated as the join does, a filtered row is not counted', () => {
  const { e } = engineWith({
    v: 'SELECT a.i, b.j FROM a JOIN b ON a.k + 1 = b.k WHERE a.i >= 0',
  });
  e.applyChanges('b', { insert: rowsOf(100, (i) => ({ k: 1, j: i })) });
  // 2,000 rows with a NULL key, and 2,000 whose key + 1 is 0: no pair, accepted.
  e.applyChanges('a', { insert: rowsOf(2000, (i) => ({ k: null, i })) });
  e.applyChanges('a', { insert: rowsOf(2000, (i) => ({ k: -1, i })) });
  // 2,000 rows of k = 0 that the filter drops: no pair either.
  e.applyChanges('a', { insert: rowsOf(2000, () => ({ k: 0, i: -1 })) });
  assert.equal(e.viewSnapshot('v').rows.length, 0);
  // k = 0 meets b.k = 1: 10 rows × 100 = 1000, the bound; 11 rows are past it.
  e.applyChanges('a', { insert: rowsOf(10, (i) => ({ k: 0, i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 1000);
  assert.equal(
    refusal(() => e.applyChanges('a', { insert: rowsOf(11, (i) => ({ k: 0, i })) })).code,
    'EPOCH_TOO_LARGE',
  );
});

test('an outer join counts its padded rows: one per unmatched row, and those it retracts', () => {
  const { e, journal } = engineWith({ v: 'SELECT a.i, b.j FROM a LEFT JOIN b ON a.k = b.k' });
  // 1,000 unmatched rows of a: 1,000 padded rows, the bound.
  e.applyChanges('a', { insert: rowsOf(1000, (i) => ({ k: i % 2, i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 1000);
  const before = stateOf(e, journal, ['v']);
  // One row of b under k = 0 pairs with 500 rows and retracts their 500 padded rows: 1000 rows.
  // Two rows (k = 0 and 1): 2000.
  assert.equal(
    refusal(() =>
      e.applyChanges('b', {
        insert: [
          { k: 0, j: 1 },
          { k: 1, j: 2 },
        ],
      }),
    ).code,
    'EPOCH_TOO_LARGE',
  );
  assert.equal(stateOf(e, journal, ['v']), before);
  e.applyChanges('b', { insert: [{ k: 0, j: 1 }] });
  assert.equal(e.viewSnapshot('v').rows.length, 1000);
});

test('replayed batches and source batches are never refused', () => {
  const { e } = engineWith({ v: 'SELECT a1.i AS i1, a2.i AS i2 FROM a a1 JOIN a a2 ON a1.k = a2.k' });
  // Replay passes the journaled positions: the batch was accepted when it was written.
  e.applyChanges('a', { insert: rowsOf(40, (i) => ({ k: 0, i })) }, { positions: { a: { offset: 7 } } });
  assert.equal(e.viewSnapshot('v').rows.length, 1600);
});
