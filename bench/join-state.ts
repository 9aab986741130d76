// Heap held by join views as more views join the same relation on the same key: K views (1..4)
// over `orders JOIN sellers ON seller_id`, each with its own projection or aggregate, after loading
// the rows. Run it on this checkout and on an older one (`--root DIR`) for before/after figures; a
// process per K, so heaps do not mix. Prints one JSON line per K: heap growth after a full GC per
// order row, and the engine's own accounting (views' state bytes plus shared arrangements').
//   node --import tsx bench/join-state.ts [--orders 200000] [--sellers 2000] [--root DIR]
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '200000' },
    sellers: { type: 'string', default: '2000' },
    root: { type: 'string', default: new URL('..', import.meta.url).pathname },
    views: { type: 'string' },
  },
});
const ORDERS = Number(values.orders);
const SELLERS = Number(values.sellers);
const root = resolve(String(values.root));

const VIEWS = [
  'SELECT o.order_id, s.region FROM orders o JOIN sellers s ON o.seller_id = s.seller_id',
  'SELECT s.region, SUM(o.amount) AS total FROM orders o JOIN sellers s ON o.seller_id = s.seller_id GROUP BY s.region',
  'SELECT o.seller_id, COUNT(*) AS n FROM orders o JOIN sellers s ON o.seller_id = s.seller_id GROUP BY o.seller_id',
  'SELECT o.order_id, o.amount, s.region FROM orders o LEFT JOIN sellers s ON o.seller_id = s.seller_id',
];

if (values.views === undefined) {
  for (let k = 1; k <= VIEWS.length; k++) {
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        new URL(import.meta.url).pathname,
        ...process.argv.slice(2),
        '--views',
        String(k),
      ],
      { encoding: 'utf8' },
    );
    process.stdout.write(out);
  }
} else {
  const k = Number(values.views);
  const { Engine } = (await import(`${root}/src/index.ts`)) as typeof import('../src/index.ts');
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  const engine = new Engine();
  engine.execute(`
    CREATE TABLE orders (order_id INTEGER PRIMARY KEY, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL);
    CREATE TABLE sellers (seller_id INTEGER PRIMARY KEY, region TEXT NOT NULL);
  `);
  engine.applyChanges('sellers', {
    insert: Array.from({ length: SELLERS }, (_, i) => ({ seller_id: i, region: `r${i % 16}` })),
  });
  for (let i = 0; i < ORDERS; i += 10_000) {
    const n = Math.min(10_000, ORDERS - i);
    engine.applyChanges('orders', {
      insert: Array.from({ length: n }, (_, j) => ({
        order_id: i + j,
        seller_id: (i + j) % SELLERS,
        amount: j % 100,
      })),
    });
  }
  gc();
  const before = process.memoryUsage().heapUsed;
  VIEWS.slice(0, k).forEach((select, i) => engine.execute(`CREATE MATERIALIZED VIEW v${i} AS ${select}`));
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  const catalog = engine.catalog();
  const viewBytes = catalog.views.reduce((sum, v) => sum + v.stateBytes, 0);
  const sharedBytes =
    typeof (engine as { sharedArrangements?: unknown }).sharedArrangements === 'function'
      ? engine.sharedArrangements().reduce((sum, a) => sum + a.stateBytes, 0)
      : 0;
  console.log(
    JSON.stringify({
      bench: 'join-state',
      root,
      views: k,
      orders: ORDERS,
      sellers: SELLERS,
      heap_mb: +(heap / 2 ** 20).toFixed(1),
      heap_bytes_per_order: Math.round(heap / ORDERS),
      engine_state_mb: +((viewBytes + sharedBytes) / 2 ** 20).toFixed(1),
      shared_state_mb: +(sharedBytes / 2 ** 20).toFixed(1),
    }),
  );
}
