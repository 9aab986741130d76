// Top-N and MIN/MAX views over APPEND ONLY tables against SQLite: random insert-only batches (ties,
// copies in a keyless table, new keys only in a keyed one), every view compared after every batch.
// Their TopN nodes are insert-only, so each keeps only the rows that can still rank, and their
// MIN/MAX keep only the extreme value per group; the answers must not notice. Midway the engine is checkpointed and a fresh one restored from it (the TopN state is the
// trimmed one, loaded, not rebuilt), and both go on, each compared with SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { Engine } from '../src/exec/engine.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { SqliteOracle, assertViewMatchesOracle, type TableSpec } from './support/sqlite-oracle.ts';
import { mulberry32 } from './support/checkpoint-workload.ts';

const TABLES: readonly TableSpec[] = [
  {
    name: 'bid',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'auction', sqlType: 'integer', nullable: false },
      { name: 'price', sqlType: 'integer', nullable: true },
    ],
    primaryKey: ['id'],
  },
  {
    name: 'tick',
    columns: [
      { name: 'sym', sqlType: 'text', nullable: false },
      { name: 'price', sqlType: 'integer', nullable: false },
    ],
    primaryKey: null,
  },
  {
    name: 'auction',
    columns: [
      { name: 'id', sqlType: 'integer', nullable: false },
      { name: 'category', sqlType: 'integer', nullable: false },
    ],
    primaryKey: ['id'],
  },
];

const DDL = [
  'CREATE TABLE bid (id INTEGER NOT NULL, auction INTEGER NOT NULL, price INTEGER, PRIMARY KEY (id)) APPEND ONLY',
  'CREATE TABLE tick (sym TEXT NOT NULL, price INTEGER NOT NULL) APPEND ONLY',
  'CREATE TABLE auction (id INTEGER NOT NULL, category INTEGER NOT NULL, PRIMARY KEY (id)) APPEND ONLY',
];

/** Views (name → SELECT); ROW_NUMBER orders end on a unique column, so SQLite's numbering agrees. */
const VIEWS: Record<string, string> = {
  top3: 'SELECT auction, id, price, rn FROM (SELECT auction, id, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC NULLS LAST, id) AS rn FROM bid) r WHERE rn <= 3',
  ranked:
    'SELECT auction, id, price, rk FROM (SELECT auction, id, price, RANK() OVER (PARTITION BY auction ORDER BY price NULLS LAST) AS rk FROM bid) r WHERE rk <= 2',
  dense_page:
    'SELECT auction, id, price, dr FROM (SELECT auction, id, price, DENSE_RANK() OVER (PARTITION BY auction ORDER BY price DESC NULLS FIRST) AS dr FROM bid) r WHERE dr > 1 AND dr <= 3',
  cheap: 'SELECT id, auction, price FROM bid WHERE price < 40',
  extremes: 'SELECT auction, MIN(price) AS lo, MAX(price) AS hi, COUNT(*) AS n FROM bid GROUP BY auction',
  tick_extremes: 'SELECT sym, MIN(price) AS lo, MAX(DISTINCT price) AS hi FROM tick GROUP BY sym',
  // semi-joins: IN and a correlated EXISTS over insert-only sides are insert-only (the auctions
  // often come after their bids, so rows pass when a match arrives); NOT IN is not
  listed_top:
    'SELECT auction, id, price, rn FROM (SELECT auction, id, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC NULLS LAST, id) AS rn FROM bid WHERE auction IN (SELECT id FROM auction WHERE category = 0)) r WHERE rn <= 2',
  exists_page:
    'SELECT * FROM (SELECT id, price FROM bid b WHERE EXISTS (SELECT 1 FROM auction a WHERE a.id = b.auction AND a.category = 1) ORDER BY price DESC NULLS LAST, id LIMIT 3) t',
  unlisted_top:
    'SELECT auction, id, price, rn FROM (SELECT auction, id, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC NULLS LAST, id) AS rn FROM bid WHERE auction NOT IN (SELECT id FROM auction)) r WHERE rn <= 2',
  cheap_page: 'SELECT * FROM (SELECT id, price FROM cheap ORDER BY price, id LIMIT 3 OFFSET 2) t',
  cheap_rank:
    'SELECT auction, id, rk FROM (SELECT auction, id, RANK() OVER (PARTITION BY auction ORDER BY price) AS rk FROM cheap) r WHERE rk <= 1',
  ticks_top:
    'SELECT sym, price, rn FROM (SELECT sym, price, ROW_NUMBER() OVER (PARTITION BY sym ORDER BY price DESC) AS rn FROM tick) r WHERE rn <= 2',
  ticks_rank:
    'SELECT sym, price, rk FROM (SELECT sym, price, RANK() OVER (ORDER BY price DESC) AS rk FROM tick) r WHERE rk <= 3',
  by_category:
    'SELECT category, id, price, rn FROM (SELECT a.category, b.id, b.price, ROW_NUMBER() OVER (PARTITION BY a.category ORDER BY b.price DESC NULLS LAST, b.id) AS rn FROM bid b JOIN auction a ON a.id = b.auction) r WHERE rn <= 2',
};

function freshEngine(): Engine {
  const e = new Engine();
  e.setStateTracking(true); // incremental checkpoints record what changed
  e.executeScript(DDL.join(';\n'));
  for (const [name, select] of Object.entries(VIEWS))
    e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${select}`);
  return e;
}

for (const seed of [1, 2, 3, 4]) {
  test(`Top-N over APPEND ONLY tables equals SQLite after every batch, across a restore (seed ${seed})`, () => {
    const rnd = mulberry32(seed * 7919);
    const oracle = new SqliteOracle();
    for (const t of TABLES) oracle.createTable(t);
    for (const [name, select] of Object.entries(VIEWS)) oracle.createView(name, select);
    const engines: Engine[] = [freshEngine()];
    const insertOnly = (view: string): boolean | undefined =>
      (engines[0] as Engine)
        .execute(`EXPLAIN DATAFLOW ${VIEWS[view] as string}`)[0]
        ?.rows?.some((r) => String(r['plan']).includes('its top rows only'));
    for (const view of ['top3', 'listed_top', 'exists_page'])
      assert.ok(insertOnly(view), `the TopN of ${view} is insert-only`);
    assert.ok(!insertOnly('unlisted_top'), 'NOT IN retracts: its TopN keeps every row');
    const explained = (engines[0] as Engine)
      .execute(`EXPLAIN DATAFLOW ${VIEWS['tick_extremes'] as string}`)[0]
      ?.rows?.map((r) => String(r['plan']))
      .join('\n');
    assert.match(explained ?? '', /min\(#1\) \[extreme: /);
    assert.match(explained ?? '', /max\(#1\) \[extreme: /);
    let nextBid = 1;
    let nextAuction = 1;
    const store = new MemoryCheckpointStore();
    for (let epoch = 0; epoch < 150; epoch++) {
      const pick = rnd();
      let table: string;
      const rows: Row[] = [];
      const n = rnd() < 0.6 ? 1 : 1 + Math.floor(rnd() * 30);
      if (pick < 0.6) {
        table = 'bid';
        for (let i = 0; i < n; i++) {
          const price = rnd() < 0.05 ? null : Math.floor(rnd() * 60);
          rows.push({ id: nextBid++, auction: 1 + Math.floor(rnd() * 6), price });
        }
      } else if (pick < 0.85) {
        table = 'tick';
        for (let i = 0; i < n; i++)
          rows.push({ sym: 'abc'.charAt(Math.floor(rnd() * 3)), price: Math.floor(rnd() * 8) });
      } else {
        table = 'auction';
        for (let i = 0; i < Math.min(n, 2) && nextAuction <= 6; i++)
          rows.push({ id: nextAuction++, category: Math.floor(rnd() * 2) });
        if (rows.length === 0) continue;
      }
      oracle.apply(table, { insert: rows });
      for (const e of engines) e.applyChanges(table, { insert: rows });
      engines.forEach((e, k) => {
        for (const view of Object.keys(VIEWS)) {
          assertViewMatchesOracle(e, oracle, view, `seed ${seed} epoch ${epoch} view ${view} engine ${k}`);
        }
      });
      if (epoch % 10 === 0) store.write((engines[0] as Engine).takeCheckpoint());
      if (epoch === 75) {
        store.write((engines[0] as Engine).takeCheckpoint());
        const restored = freshEngine();
        const { rebuilt } = restored.loadCheckpoint(store.read());
        assert.deepEqual(rebuilt, [], 'every view restored from its checkpointed state');
        engines.push(restored);
      }
    }
    oracle.close();
  });
}
