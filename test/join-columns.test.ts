// A join whose only consumer is a Reduce emits just the columns the Reduce reads, by column
// (src/ivm/lower-join-columns.ts): what EXPLAIN shows for which plans, and that the rows so emitted
// — matched, NULL-padded and filtered ones — aggregate as the SQL says through inserts, updates
// and deletes. (The differential suites check the same against SQLite on random workloads.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

const DDL = `
  CREATE TABLE orders (order_id INTEGER PRIMARY KEY, seller_id INTEGER, amount INTEGER NOT NULL);
  CREATE TABLE sellers (seller_id INTEGER PRIMARY KEY, region TEXT NOT NULL);
`;

function joinLine(engine: Engine, view: string): string {
  return (
    engine
      .explainView(view)
      .split('\n')
      .find((l) => l.includes(' Join ')) ?? ''
  );
}

function rows(engine: Engine, view: string): string[] {
  return engine
    .viewSnapshot(view)
    .rows.map((r) => JSON.stringify(r))
    .sort();
}

test('a join under a GROUP BY emits only the columns its Reduce reads, by column; others are left alone', () => {
  const engine = new Engine();
  engine.execute(DDL);
  engine.execute(`
    CREATE MATERIALIZED VIEW per_region AS
      SELECT s.region, SUM(o.amount) AS total FROM orders o JOIN sellers s ON o.seller_id = s.seller_id GROUP BY s.region;
    CREATE MATERIALIZED VIEW every_column AS
      SELECT o.order_id, o.seller_id, o.amount, s.seller_id AS s_id, s.region, COUNT(*) AS n
      FROM orders o JOIN sellers s ON o.seller_id = s.seller_id
      GROUP BY o.order_id, o.seller_id, o.amount, s.seller_id, s.region;
    CREATE MATERIALIZED VIEW detail AS
      SELECT o.order_id, s.region FROM orders o JOIN sellers s ON o.seller_id = s.seller_id;
  `);
  const narrowed = joinLine(engine, 'per_region');
  assert.match(narrowed, /project \[#2:amount, #4:region\]\) \(rows emitted by column\)/);
  assert.match(narrowed, /→ \[amount:integer, region:text\]$/);
  assert.match(engine.explainView('per_region'), /keys \[#1:region\]; arguments \[#0:amount\]/);
  // Every joined column read: nothing to drop, the rows still go out by column.
  const every = joinLine(engine, 'every_column');
  assert.doesNotMatch(every, /project/);
  assert.match(every, /\(rows emitted by column\)/);
  // The view's output reads rows: the join keeps its own projection and emits rows.
  assert.doesNotMatch(joinLine(engine, 'detail'), /by column/);
});

test('matched, padded and filtered rows emitted by column aggregate as the SQL says', () => {
  const engine = new Engine();
  engine.execute(DDL);
  engine.execute(`
    CREATE MATERIALIZED VIEW per_region AS
      SELECT s.region, COUNT(o.order_id) AS n, SUM(o.amount) AS total
      FROM sellers s LEFT JOIN orders o ON o.seller_id = s.seller_id
      WHERE o.amount IS NULL OR o.amount < 100
      GROUP BY s.region;
  `);
  assert.match(joinLine(engine, 'per_region'), /filter .*project .*\(rows emitted by column\)/);
  engine.applyChanges('sellers', {
    insert: [
      { seller_id: 1, region: 'north' },
      { seller_id: 2, region: 'south' },
      { seller_id: 3, region: 'north' },
    ],
  });
  // Sellers without orders: NULL-padded rows.
  assert.deepEqual(rows(engine, 'per_region'), [
    '{"region":"north","n":0,"total":null}',
    '{"region":"south","n":0,"total":null}',
  ]);
  engine.applyChanges('orders', {
    insert: [
      { order_id: 1, seller_id: 1, amount: 5 },
      { order_id: 2, seller_id: 3, amount: 7 },
      { order_id: 3, seller_id: 2, amount: 500 },
      { order_id: 4, seller_id: null, amount: 9 },
    ],
  });
  // Order 3 is filtered out (seller 2 then has a match but no row passes: no padded row either).
  assert.deepEqual(rows(engine, 'per_region'), ['{"region":"north","n":2,"total":12}']);
  engine.applyChanges('orders', {
    insert: [{ order_id: 3, seller_id: 2, amount: 50 }],
    delete: [{ order_id: 2 }],
  });
  engine.applyChanges('sellers', { insert: [{ seller_id: 1, region: 'south' }] });
  assert.deepEqual(rows(engine, 'per_region'), [
    '{"region":"north","n":0,"total":null}',
    '{"region":"south","n":2,"total":55}',
  ]);
});
