// Views joining one relation on one key share one arrangement of it: the graph keeps it (folding the
// relation's delta in once per epoch), each join probes it, it goes with its last user, it is
// stored with its relation in a checkpoint, and the views' own state no longer holds a copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';

const DDL = `
  CREATE TABLE orders (order_id INTEGER PRIMARY KEY, seller_id INTEGER, amount INTEGER NOT NULL);
  CREATE TABLE sellers (seller_id INTEGER PRIMARY KEY, region TEXT NOT NULL);
`;

function rows(engine: Engine, view: string): string[] {
  return engine
    .viewSnapshot(view)
    .rows.map((r) => JSON.stringify(r))
    .sort();
}

test('two views joining orders on seller_id share one arrangement of it, which goes with its last user', () => {
  const engine = new Engine();
  engine.execute(DDL);
  engine.applyChanges('sellers', {
    insert: [
      { seller_id: 1, region: 'north' },
      { seller_id: 2, region: 'south' },
    ],
  });
  engine.applyChanges('orders', {
    insert: [
      { order_id: 1, seller_id: 1, amount: 5 },
      { order_id: 2, seller_id: 2, amount: 7 },
      { order_id: 3, seller_id: null, amount: 9 },
    ],
  });
  engine.execute(`
    CREATE MATERIALIZED VIEW detail AS SELECT o.order_id, s.region FROM orders o JOIN sellers s ON o.seller_id = s.seller_id;
    CREATE MATERIALIZED VIEW per_region AS
      SELECT s.region, SUM(o.amount) AS total FROM orders o JOIN sellers s ON o.seller_id = s.seller_id GROUP BY s.region;
  `);
  const shared = (): { name: string; users: number; rows: number }[] =>
    engine.sharedArrangements().map(({ name, users, rows: n }) => ({ name, users, rows: n }));
  // The NULL-keyed order is not arranged (it can match nothing).
  assert.deepEqual(shared(), [{ name: 'orders(1)', users: 2, rows: 2 }]);
  // The sellers, joined on their primary key, are read from their table (join-table-side.ts).
  assert.match(
    engine.explainView('detail'),
    /right input reads the table's own rows by primary key sellers\(0\), the other probes the shared arrangement orders\(1\)/,
  );

  engine.applyChanges('orders', {
    insert: [{ order_id: 4, seller_id: 2, amount: 1 }],
    delete: [{ order_id: 1 }],
  });
  engine.applyChanges('sellers', { insert: [{ seller_id: 2, region: 'east' }] });
  assert.deepEqual(rows(engine, 'detail'), [
    '{"order_id":2,"region":"east"}',
    '{"order_id":4,"region":"east"}',
  ]);
  assert.deepEqual(rows(engine, 'per_region'), ['{"region":"east","total":8}']);
  assert.deepEqual(shared(), [{ name: 'orders(1)', users: 2, rows: 2 }]);

  engine.execute('DROP MATERIALIZED VIEW detail');
  assert.deepEqual(shared(), [{ name: 'orders(1)', users: 1, rows: 2 }]);
  engine.applyChanges('orders', { insert: [{ order_id: 5, seller_id: 1, amount: 2 }] });
  assert.deepEqual(rows(engine, 'per_region'), [
    '{"region":"east","total":8}',
    '{"region":"north","total":2}',
  ]);
  engine.execute('DROP MATERIALIZED VIEW per_region');
  assert.deepEqual(shared(), []);
});

test("a view's state no longer counts the shared side; a checkpoint stores the arrangement once, with its relation", () => {
  const make = (): Engine => {
    const e = new Engine();
    e.execute(DDL);
    e.execute(`
      CREATE MATERIALIZED VIEW a AS SELECT o.order_id, s.region FROM orders o JOIN sellers s ON o.seller_id = s.seller_id;
      CREATE MATERIALIZED VIEW b AS SELECT o.order_id, o.amount, s.region FROM orders o LEFT JOIN sellers s ON o.seller_id = s.seller_id;
    `);
    return e;
  };
  const engine = make();
  engine.setStateTracking(true);
  const orders = Array.from({ length: 200 }, (_, i) => ({ order_id: i, seller_id: i % 7, amount: i }));
  engine.applyChanges('sellers', {
    insert: Array.from({ length: 5 }, (_, i) => ({ seller_id: i, region: `r${i}` })),
  });
  engine.applyChanges('orders', { insert: orders });
  const [arrangement] = engine.sharedArrangements();
  assert.equal(arrangement?.rows, 200);
  assert.ok(arrangement.stateBytes > 200 * 100, 'the shared arrangement holds the 200 orders');
  const checkpoint = engine.takeCheckpoint(true);
  const sharedParts = checkpoint.objects.flatMap((o) =>
    o.parts.filter((p) => p.stateId.startsWith('shared:')).map((p) => `${o.name}/${p.stateId}`),
  );
  assert.deepEqual(sharedParts, ['orders/shared:orders(1)'], 'stored once, with its relation');
  // The inner join reads the sellers from their table: it stores nothing. The LEFT JOIN shares the
  // orders (arranging the sellers itself, a smaller side than the orders it would arrange instead).
  for (const [view, stored] of [
    ['a', 0],
    ['b', 5],
  ] as const) {
    const parts = checkpoint.objects.find((o) => o.name === view)?.parts ?? [];
    const joinEntries = parts.filter((p) => p.stateId.includes('/join')).flatMap((p) => p.delta.upserts);
    assert.equal(joinEntries.length, stored, `view ${view}'s join stores ${stored} rows of its own`);
  }
  // Restored, the views go on exactly like the original.
  const store = new MemoryCheckpointStore();
  store.write(checkpoint);
  const restored = make();
  restored.loadCheckpoint(store.read());
  assert.equal(restored.sharedArrangements()[0]?.rows, 200);
  for (const e of [engine, restored]) {
    e.applyChanges('orders', {
      insert: [{ order_id: 999, seller_id: 3, amount: 1 }],
      delete: [{ order_id: 0 }],
    });
    e.applyChanges('sellers', { delete: [{ seller_id: 3 }] });
  }
  for (const view of ['a', 'b']) assert.deepEqual(rows(restored, view), rows(engine, view));
});
