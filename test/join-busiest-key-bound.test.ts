// A write's join count first bounds each join by counts alone (no row read): per written row, the
// most rows the other side can hold under one key. That bound was the side's rows less its other
// keys, so rows spread over many keys (bids over auctions) bounded each written auction by nearly
// every bid, and every auction write went on to the exact pass, a probe per written row (the join
// bench's mutations phase: 295 of its 600 writes). The side now also keeps a high-water mark of the
// most rows one key has held (it only grows, so it stays a bound), and a write whose keys can only
// meet the busiest key's rows is cleared with no probe. Refusals stay: a key that does hold many
// rows still goes to the exact pass, which counts what the write builds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import { joinProbeWork } from '../src/ivm/ops/join-op.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 10_000;
const AUCTIONS = 2_000;
const BIDS_PER_AUCTION = 10;

/** Auctions `a` (one row per key), bids `b` spread evenly over them, and a count per category. */
function auctionsAndBids(): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute(
    'CREATE TABLE a (id BIGINT, category BIGINT); CREATE TABLE b (auction BIGINT, price BIGINT);' +
      'CREATE MATERIALIZED VIEW v AS SELECT a.category, count(*) AS n FROM a JOIN b ON b.auction = a.id GROUP BY a.category',
  );
  e.applyChanges('a', { insert: rowsOf(AUCTIONS, (i) => ({ id: i, category: i % 10 })) });
  for (let from = 0; from < AUCTIONS * BIDS_PER_AUCTION; from += 1000)
    e.applyChanges('b', {
      insert: rowsOf(1000, (i) => ({ auction: (from + i) % AUCTIONS, price: from + i })),
    });
  return e;
}

/** A write of `n` auctions moved to another category (each row retracted and inserted). */
function moveAuctions(e: Engine, ids: readonly number[]): void {
  e.applyChanges('a', {
    delete: ids.map((id) => ({ id, category: id % 10 })),
    insert: ids.map((id) => ({ id, category: (id % 10) + 100 })),
  });
}

test('auction writes whose keys hold few bids are cleared with no probe, counted by the busiest key', () => {
  const e = auctionsAndBids();
  // 200 rows × the busiest auction's 10 bids = 2,000 ≤ 10,000; the old bound was 200 × (20,000 −
  // 2,000 + 1) = 3.6M, past the limit, so each such write probed its 200 rows.
  const ids = rowsOf(100, (i) => ({ id: i * 7 })).map((r) => r.id as number);
  const before = joinProbeWork.probes;
  moveAuctions(e, ids);
  assert.equal(joinProbeWork.probes - before, 0);
  const moved = e.viewSnapshot('v').rows.filter((r) => Number(r.category) >= 100);
  assert.equal(
    moved.reduce((sum, r) => sum + Number(r.n), 0),
    100 * BIDS_PER_AUCTION,
  );
});

test('a busy key still goes to the exact pass: refused past the limit, accepted when the write builds less', () => {
  const e = auctionsAndBids();
  // Auction 0 takes 6,000 more bids: the high-water mark is 6,010.
  for (let from = 0; from < 6000; from += 1000)
    e.applyChanges('b', { insert: rowsOf(1000, (i) => ({ auction: 0, price: 1_000_000 + from + i })) });
  const view = sorted(e.viewSnapshot('v').rows);
  const epoch = e.epoch;
  // Auction 0 moved: 6,010 bids retracted and 6,010 inserted, 12,020 > 10,000.
  const error = refusal(() => moveAuctions(e, [0]));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.equal(e.epoch, epoch);
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), view);
  // Two quiet auctions: the row-free bound (4 rows × 6,010) passes the limit, so the exact pass
  // probes the 4 written rows and finds 40 rows: accepted.
  const before = joinProbeWork.probes;
  moveAuctions(e, [1, 2]);
  assert.equal(joinProbeWork.probes - before, 4);
  // Auction 0's bids deleted: the mark stays (a bound), and the exact pass still decides.
  for (let from = 0; from < 6000; from += 1000)
    e.applyChanges('b', { delete: rowsOf(1000, (i) => ({ auction: 0, price: 1_000_000 + from + i })) });
  const probes = joinProbeWork.probes;
  moveAuctions(e, [0, 3]);
  assert.equal(joinProbeWork.probes - probes, 4);
  assert.equal(
    e.viewSnapshot('v').rows.reduce((sum, r) => sum + (Number(r.category) >= 100 ? Number(r.n) : 0), 0),
    4 * BIDS_PER_AUCTION,
  );
});
