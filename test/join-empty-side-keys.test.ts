// A table's new rows probing a join side that holds nothing yet (auctions arriving before any bid):
// the table side reads its own rows, nothing is folded by key and nothing can match, so no join key
// of a plain column is computed. A key that can fail is still computed, its errors reported; and
// the views stay what a one-off SELECT gives once the other side fills.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import type { Row, Value } from '../src/common/types.ts';
import { JoinArrangement } from '../src/ivm/join-arrangement.ts';
import { keyCannotFail, keyEntryId, type KeyFn } from '../src/ivm/join-key.ts';
import { StagedProbe, stagedProbeWork } from '../src/ivm/ops/join-staged-probe.ts';
import { T } from '../src/common/types.ts';
import type { ScalarExpr } from '../src/common/scalar-expr.ts';

const DDL = `
  CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INTEGER NOT NULL, category TEXT NOT NULL);
  CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, amount INTEGER NOT NULL);
`;
const AGG =
  'SELECT a.category, SUM(b.amount) AS total, COUNT(*) AS n FROM bids b JOIN auctions a ON b.auction = a.id GROUP BY a.category';

const auctions = (from: number, n: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, seller: i % 7, category: `c${i % 5}` }));
const bids = (from: number, n: number, auctionCount: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, auction: 1 + ((i * 31) % auctionCount), amount: i }));

function keysComputedBy(run: () => void): number {
  const before = stagedProbeWork.keysComputed;
  run();
  return stagedProbeWork.keysComputed - before;
}

function sorted(rows: readonly object[]): string[] {
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
}

test('auctions inserted while no bid exists compute no join key; once bids exist they do', () => {
  const e = new Engine();
  e.execute(DDL);
  e.execute(`CREATE MATERIALIZED VIEW agg AS ${AGG}`);
  assert.match(e.explainView('agg'), /right input reads the table's own rows by primary key auctions\(0\)/);
  const empty = keysComputedBy(() => {
    e.applyChanges('auctions', { insert: auctions(1, 100), delete: [] });
    e.applyChanges('auctions', { insert: auctions(101, 100), delete: [] });
  });
  assert.equal(empty, 0, 'nothing to match, nothing to fold: no key');
  // Bids probe the auctions by key: each bid's key is computed.
  const probing = keysComputedBy(() => e.applyChanges('bids', { insert: bids(1, 100, 200), delete: [] }));
  assert.equal(probing, 100);
  // Now the bids side holds keys: new auctions probe it, their keys computed.
  const matching = keysComputedBy(() =>
    e.applyChanges('auctions', { insert: auctions(201, 100), delete: [] }),
  );
  assert.equal(matching, 100);
  e.applyChanges('bids', { insert: bids(101, 100, 300), delete: [] });
  assert.deepEqual(sorted(e.viewSnapshot('agg').rows), sorted(e.execute(AGG)[0]?.rows ?? []));
});

test('only a plain column key counts as one that cannot fail; a failing key is probed and reported', () => {
  assert.equal(keyCannotFail([{ kind: 'col', index: 0, name: 'k', type: T.int32 }]), true);
  assert.equal(keyCannotFail([]), true);
  const cast: ScalarExpr = {
    kind: 'cast',
    operand: { kind: 'col', index: 0, name: 'k', type: T.int32 },
    type: T.int64,
  };
  assert.equal(keyCannotFail([cast]), false, 'an expression may fail: the join still computes it');
  const failing: KeyFn = (row) => {
    if (row[0] === 2) throw new Error('bad key');
    return row[0] as number;
  };
  // What the join then does with such a key against an empty side: each computed, the failure reported.
  const empty = new JoinArrangement('empty', 'S', (key) => keyEntryId(key, 1));
  const delta = { rows: [[1], [2], [3]] as Value[][], weights: [1, 1, 1], consolidated: true };
  const probe = new StagedProbe();
  const reported: Value[][] = [];
  assert.equal(
    probe.probe(
      delta,
      failing,
      empty,
      () => undefined,
      [[]],
      [],
      (_e, row) => reported.push([...row]),
    ),
    0,
  );
  assert.deepEqual(reported, [[2]]);
  assert.deepEqual(probe.keys, [1, null, 3]);
});
