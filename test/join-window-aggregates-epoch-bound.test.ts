// A write's join count through HOP windows and through two aggregates of the same write joined by
// window (Nexmark q5: a count per auction and window joined with the window's maximum count). The
// written rows go through HOP's expansion as rows, so a GROUP BY window_start after it knows its
// groups and the join probes by them: a cost of the write. A side whose groups may come out
// unchanged (a MAX a new row does not pass) is known only as a bound and is not counted: charging it
// the most rows the other side holds under one key refused writes that build a few rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import type { EngineJournal, JournalBatch } from '../src/common/journal.ts';
import { joinProbeWork } from '../src/ivm/ops/join-op.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 1000;
const T0 = '2026-12-06 10:00:01';

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

const hop = (table: string): string => `HOP(${table}, t, INTERVAL '2' SECOND, INTERVAL '10' SECOND)`;

const Q5 =
  `SELECT AuctionBids.auction, AuctionBids.num FROM (` +
  `SELECT bid.auction, count(*) AS num, window_start AS starttime FROM ${hop('bid')} GROUP BY window_start, bid.auction` +
  `) AS AuctionBids JOIN (` +
  `SELECT max(CountBids.num) AS maxn, CountBids.starttime_c FROM (` +
  `SELECT count(*) AS num, window_start AS starttime_c FROM ${hop('bid')} GROUP BY bid.auction, window_start` +
  `) AS CountBids GROUP BY CountBids.starttime_c` +
  `) AS MaxBids ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`;

function assertFresh(e: Engine, view: string, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot(view).rows), sorted(e.execute(select)[0]?.rows ?? []));
}

test('Nexmark q5: bids into a busy window are probed by their groups and accepted', () => {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE bid (auction BIGINT, t TIMESTAMP)');
  e.execute(`CREATE MATERIALIZED VIEW q5 AS ${Q5}`);
  // 150 auctions with a bid each: the five windows holding T0 each hold 150 rows of AuctionBids. A
  // bound reading no row puts 746 of them under one window: ten group rows of one bid × 746 is past
  // the bound, though a bid builds a few rows.
  e.applyChanges('bid', { insert: rowsOf(150, (i) => ({ auction: BigInt(i), t: T0 })) });
  let next = 150;
  for (const bids of [1, 10, 50]) {
    const probes = joinProbeWork.probes;
    e.applyChanges('bid', { insert: rowsOf(bids, (i) => ({ auction: BigInt(next + i), t: T0 })) });
    next += bids;
    // Per bid, five groups of AuctionBids: each one's old row looked for on its side (the window is
    // there), then its old and new rows probe MaxBids by window: 15 probes, whatever the window holds.
    assert.equal(joinProbeWork.probes - probes, 15 * bids, `probes for ${bids} bids`);
  }
  // A second bid on an auction moves the window's maximum: MaxBids is a MAX, not counted; accepted.
  e.applyChanges('bid', { insert: [{ auction: 0n, t: T0 }] });
  assert.equal(e.viewSnapshot('q5').rows.length, 5);
  assertFresh(e, 'q5', Q5);
});

test('a join over a GROUP BY of HOP windows: the groups a row opens are probed, and a large one refused', () => {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, t TIMESTAMP); CREATE TABLE b (k BIGINT, j BIGINT)');
  const windows = `SELECT k, window_start, count(*) AS c FROM ${hop('a')} GROUP BY k, window_start`;
  const joined = `SELECT w.k, w.window_start, w.c, b.j FROM (${windows}) w JOIN b ON w.k = b.k`;
  e.execute(`CREATE MATERIALIZED VIEW wj AS ${joined}`);
  const journal = new EpochJournal();
  e.setJournal(journal);
  e.applyChanges('b', { insert: rowsOf(150, (i) => ({ k: 0, j: i })) });
  e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ k: i, j: i })) });
  // One row of k = 0 opens five windows: 5 × 150 rows of b built (≤ 1000). Per window, a look for
  // its old row on its side, and a probe of b: ten probes.
  let probes = joinProbeWork.probes;
  e.applyChanges('a', { insert: [{ k: 0n, t: T0 }] });
  assert.equal(joinProbeWork.probes - probes, 10);
  // A second row moves each window's count: a retraction and an insertion of each, 1500 rows.
  const before = JSON.stringify([e.epoch, journal.batches, sorted(e.viewSnapshot('wj').rows)]);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 0n, t: T0 }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.match(error.message, /build 1500 rows in one epoch, more than 1000 \(most in view "wj"\)/);
  assert.equal(JSON.stringify([e.epoch, journal.batches, sorted(e.viewSnapshot('wj').rows)]), before);
  // 100 rows on 100 other keys: 100 × 5 windows, each meeting one row of b; 1000 probes.
  probes = joinProbeWork.probes;
  e.applyChanges('a', { insert: rowsOf(100, (i) => ({ k: BigInt(1 + i), t: T0 })) });
  assert.equal(joinProbeWork.probes - probes, 1000);
  assertFresh(e, 'wj', joined);
});

test('a join without a key over an aggregate of the whole table: its old and new row each meet the other side', () => {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE a (k BIGINT, t TIMESTAMP); CREATE TABLE b (k BIGINT, j BIGINT)');
  const total = 'SELECT g.c, b.j FROM (SELECT count(*) AS c FROM a) g, b';
  e.execute(`CREATE MATERIALIZED VIEW tb AS ${total}`);
  e.applyChanges('b', { insert: rowsOf(400, (i) => ({ k: i, j: i })) });
  // The count's old and new rows × 400 rows of b: 800, accepted; at 600 rows of b, 1200 refused.
  e.applyChanges('a', { insert: [{ k: 0n, t: T0 }] });
  e.applyChanges('b', { insert: rowsOf(200, (i) => ({ k: i, j: 400 + i })) });
  const before = JSON.stringify([e.epoch, sorted(e.viewSnapshot('tb').rows)]);
  const error = refusal(() => e.applyChanges('a', { insert: [{ k: 1n, t: T0 }] }));
  assert.match(error.message, /build 1200 rows in one epoch, more than 1000 \(most in view "tb"\)/);
  assert.equal(JSON.stringify([e.epoch, sorted(e.viewSnapshot('tb').rows)]), before);
  assertFresh(e, 'tb', total);
});
