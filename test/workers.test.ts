// The `workers` setting (src/exec/workers/): the same seeded insert/update/delete workload run with
// 1, 2 and 4 workers gives byte-identical changelogs for every view, and every view equals SQLite
// after every epoch; a checkpoint taken with 2 workers restores into 1 and 4 (re-partitioned, no view
// rebuilt) and the restored engines go on exactly as the uninterrupted one. SLUICE_SEED=<n> replays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import type { Row } from '../src/common/types.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { mulberry32 } from './support/checkpoint-workload.ts';
import {
  SqliteOracle,
  assertViewMatchesOracle,
  createTableSql,
  type TableSpec,
} from './support/sqlite-oracle.ts';

const ORDERS: TableSpec = {
  name: 'orders',
  columns: [
    { name: 'id', sqlType: 'BIGINT', nullable: false },
    { name: 'seller_id', sqlType: 'INT', nullable: false },
    { name: 'region', sqlType: 'TEXT', nullable: true },
    { name: 'amount', sqlType: 'INT', nullable: true },
    { name: 'price', sqlType: 'DOUBLE PRECISION', nullable: true },
  ],
  primaryKey: ['id'],
};

/** Views over partitioned Reduces (and ones that stay on the main thread), name → SELECT. */
const VIEWS: readonly (readonly [string, string])[] = [
  // partitioned; its Output reads the groups off the worker threads
  ['seller_totals', 'SELECT seller_id, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller_id'],
  // main thread (an expression key) over the partitioned one: sees its changes in their merged order
  ['buckets', 'SELECT total / 10 AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY total / 10'],
  // partitioned on two keys, one of them text with NULLs
  [
    'region_stats',
    'SELECT region, seller_id, AVG(price) AS avg_price, COUNT(amount) AS c, SUM(price) AS s FROM orders GROUP BY region, seller_id',
  ],
  // partitioned, with HAVING after it (a Map over the Reduce: the Output keeps its own rows)
  ['busy_sellers', 'SELECT seller_id, SUM(price) AS s FROM orders GROUP BY seller_id HAVING COUNT(*) > 2'],
  // partitioned on one nullable number column: a batch's key column may turn NULL after numbers
  ['amount_counts', 'SELECT amount, COUNT(*) AS n, SUM(price) AS s FROM orders GROUP BY amount'],
  // main thread (MAX is a multiset aggregate)
  ['region_max', 'SELECT region, MAX(amount) AS top, COUNT(*) AS n FROM orders GROUP BY region'],
];

interface Batch {
  readonly insert: Row[];
  readonly delete: Row[];
}

/** Seeded batches of inserts, updates (a new row for a live id) and deletes; some of 64+ inserts. */
function workload(seed: number, batches: number): Batch[] {
  const rnd = mulberry32(seed);
  const live = new Map<number, Row>();
  let nextId = 1;
  const out: Batch[] = [];
  const row = (id: number): Row => ({
    id,
    seller_id: Math.floor(rnd() * 40),
    region: rnd() < 0.15 ? null : `r${Math.floor(rnd() * 5)}`,
    amount: rnd() < 0.1 ? null : Math.floor(rnd() * 100),
    price: rnd() < 0.1 ? null : rnd() < 0.05 ? -0 : Math.floor(rnd() * 40) / 4,
  });
  for (let b = 0; b < batches; b++) {
    const insert: Row[] = [];
    const del: Row[] = [];
    const touched = new Set<number>();
    const size = rnd() < 0.25 ? 64 + Math.floor(rnd() * 100) : 1 + Math.floor(rnd() * 12);
    const insertOnly = size >= 64 && rnd() < 0.7;
    for (let i = 0; i < size; i++) {
      const ids = [...live.keys()];
      const r = rnd();
      if (!insertOnly && ids.length > 0 && r < 0.25) {
        const id = ids[Math.floor(rnd() * ids.length)] as number;
        if (touched.has(id)) continue;
        touched.add(id);
        del.push(live.get(id) as Row);
        live.delete(id);
      } else if (!insertOnly && ids.length > 0 && r < 0.45) {
        const id = ids[Math.floor(rnd() * ids.length)] as number;
        if (touched.has(id)) continue;
        touched.add(id);
        const next = row(id);
        insert.push(next); // a primary key replacement: an update
        live.set(id, next);
      } else {
        const id = nextId++;
        touched.add(id);
        const next = row(id);
        insert.push(next);
        live.set(id, next);
      }
    }
    out.push({ insert, delete: del });
  }
  return out;
}

function big(_k: string, x: unknown): unknown {
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'number' && Object.is(x, -0)) return 'num:-0';
  return x;
}

function engineWith(workers: number): Engine {
  const e = new Engine({ workers });
  e.setStateTracking(true);
  e.execute(createTableSql(ORDERS));
  return e;
}

function createViews(e: Engine): void {
  for (const [name, select] of VIEWS) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${select}`);
}

function recordChanges(e: Engine): ViewChangeSet[] {
  const out: ViewChangeSet[] = [];
  for (const [name] of VIEWS) e.subscribe(name, (c) => out.push(c));
  return out;
}

/** The changelog as text: every change set of every view, in delivery order, values exact. */
function changelogText(changes: readonly ViewChangeSet[]): string {
  return changes.map((c) => JSON.stringify(c, big)).join('\n');
}

const seeds = process.env.SLUICE_SEED !== undefined ? [Number(process.env.SLUICE_SEED)] : [1, 2];

for (const seed of seeds) {
  test(`workers 1, 2 and 4 give byte-identical changelogs equal to SQLite (seed ${seed})`, () => {
    const batches = workload(seed, 60);
    const logs: string[] = [];
    for (const workers of [1, 2, 4]) {
      const engine = engineWith(workers);
      const oracle = new SqliteOracle();
      oracle.createTable(ORDERS);
      try {
        // Half the rows before the views exist: their backfill runs partitioned too.
        const split = 20;
        for (const b of batches.slice(0, split)) {
          engine.applyChanges('orders', b);
          oracle.apply('orders', b);
        }
        createViews(engine);
        for (const [name, select] of VIEWS) oracle.createView(name, select);
        const changes = recordChanges(engine);
        batches.slice(split).forEach((b, i) => {
          engine.applyChanges('orders', b);
          oracle.apply('orders', b);
          for (const [name] of VIEWS)
            assertViewMatchesOracle(
              engine,
              oracle,
              name,
              `seed ${seed}, ${workers} workers, batch ${split + i}`,
            );
        });
        logs.push(changelogText(changes));
      } finally {
        engine.close();
        oracle.close();
      }
    }
    assert.ok((logs[0] as string).length > 1000, 'the workload changes the views');
    assert.equal(logs[1], logs[0], `seed ${seed}: the changelog with 2 workers differs from 1 worker's`);
    assert.equal(logs[2], logs[0], `seed ${seed}: the changelog with 4 workers differs from 1 worker's`);
  });
}

/** A checkpoint's entries, canonical: per object and state id, its entries sorted. */
function checkpointText(store: MemoryCheckpointStore): string {
  const cp = store.read();
  const lines: string[] = [];
  for (const [name, o] of [...cp.objects].sort(([a], [b]) => a.localeCompare(b)))
    for (const [id, entries] of [...o.parts].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(
        `${name} ${o.fingerprint} ${id}: ${JSON.stringify(
          [...entries].map((e) => JSON.stringify(e, big)).sort(),
        )}`,
      );
  return lines.join('\n');
}

test('a checkpoint taken with 2 workers restores into 1 and 4 workers, which go on as before', () => {
  const seed = seeds[0] as number;
  const batches = workload(seed + 100, 70);
  const at = 40;
  // The uninterrupted reference: 1 worker throughout.
  const reference = engineWith(1);
  createViews(reference);
  const refStore = new MemoryCheckpointStore();
  const refChanges: ViewChangeSet[] = [];
  const two = engineWith(2);
  createViews(two);
  const store = new MemoryCheckpointStore();
  try {
    for (let i = 0; i < at; i++) {
      reference.applyChanges('orders', batches[i] as Batch);
      two.applyChanges('orders', batches[i] as Batch);
      // incremental checkpoints along the way: deltas of the partitions' dirty groups
      if (i % 7 === 3) {
        store.write(two.takeCheckpoint());
        refStore.write(reference.takeCheckpoint());
      }
    }
    store.write(two.takeCheckpoint());
    refStore.write(reference.takeCheckpoint());
    // The same entries, ids and form as the single Reduce's.
    assert.equal(checkpointText(store), checkpointText(refStore));
    for (const [name] of VIEWS) recordInto(reference, name, refChanges);
    for (let i = at; i < batches.length; i++) reference.applyChanges('orders', batches[i] as Batch);
    const oracle = new SqliteOracle();
    oracle.createTable(ORDERS);
    for (const [name, select] of VIEWS) oracle.createView(name, select);
    for (const b of batches) oracle.apply('orders', b);
    for (const workers of [1, 4]) {
      const restored = engineWith(workers);
      try {
        createViews(restored);
        const { rebuilt } = restored.loadCheckpoint(store.read());
        assert.deepEqual(rebuilt, [], `${workers} workers: views rebuilt instead of restored`);
        const changes: ViewChangeSet[] = [];
        for (const [name] of VIEWS) recordInto(restored, name, changes);
        for (let i = at; i < batches.length; i++) restored.applyChanges('orders', batches[i] as Batch);
        assert.equal(changelogText(changes), changelogText(refChanges), `${workers} workers after restore`);
        for (const [name] of VIEWS)
          assertViewMatchesOracle(restored, oracle, name, `restored into ${workers} workers`);
      } finally {
        restored.close();
      }
    }
    oracle.close();
  } finally {
    reference.close();
    two.close();
  }
});

function recordInto(e: Engine, view: string, out: ViewChangeSet[]): void {
  e.subscribe(view, (c) => out.push(c));
}

test('EXPLAIN DATAFLOW says which Reduces run partitioned, and why the others do not', () => {
  const e = engineWith(2);
  try {
    createViews(e);
    assert.match(e.explainView('seller_totals'), /Workers: 2\n {2}n1 runs in 2 hash partitions/);
    assert.match(
      e.explainView('buckets'),
      /n\d runs on the main thread \(not partitioned: a key or argument is an expression\)/,
    );
    assert.match(e.explainView('region_max'), /not partitioned: MAX/);
    // One worker: the plan's print is unchanged.
    const one = engineWith(1);
    createViews(one);
    assert.doesNotMatch(one.explainView('seller_totals'), /Workers/);
    one.close();
  } finally {
    e.close();
  }
});

test('the workers setting is validated', () => {
  for (const bad of [0, -1, 1.5, 65, Number.NaN])
    assert.throws(() => new Engine({ workers: bad }), /workers must be an integer from 1 to 64/);
});

test('a partitioned view dropped and created again is built afresh; snapshots and SELECT read its threads’ rows', () => {
  const e = engineWith(2);
  try {
    createViews(e);
    e.applyChanges('orders', { insert: [{ id: 1, seller_id: 7, region: 'r1', amount: 5, price: 1 }] });
    e.execute('DROP MATERIALIZED VIEW buckets; DROP MATERIALIZED VIEW seller_totals');
    e.applyChanges('orders', { insert: [{ id: 2, seller_id: 8, region: 'r1', amount: 6, price: 2 }] });
    e.execute(`CREATE MATERIALIZED VIEW seller_totals AS ${VIEWS[0]![1]}`);
    // An ad-hoc SELECT and a snapshot read the rows the Output borrows from the partitions.
    const rows = e.viewSnapshot('seller_totals').rows.map((r) => JSON.stringify(r, big));
    assert.deepEqual(rows.sort(), ['{"seller_id":7,"total":5,"n":1}', '{"seller_id":8,"total":6,"n":1}']);
    const selected = e.execute('SELECT seller_id, total FROM seller_totals WHERE seller_id = 8');
    assert.deepEqual((selected[0] as { rows?: unknown }).rows, [{ seller_id: 8, total: 6 }]);
  } finally {
    e.close();
  }
});

test('row errors of a partitioned Reduce (a float SUM out of range) are the single Reduce’s', () => {
  const run = (workers: number): string => {
    const e = new Engine({ workers });
    try {
      e.execute(
        'CREATE TABLE m (id INT PRIMARY KEY, g INT NOT NULL, v DOUBLE PRECISION); ' +
          'CREATE MATERIALIZED VIEW sums AS SELECT g, SUM(v) AS s, COUNT(*) AS n FROM m GROUP BY g',
      );
      assert.match(e.explainView('sums'), workers > 1 ? /runs in \d hash partitions/ : /^Dataflow/);
      const log: string[] = [];
      e.subscribe('sums', (c) => log.push(JSON.stringify(c, big)));
      const rows = Array.from({ length: 12 }, (_, i) => ({ id: i, g: i % 6, v: i % 3 === 0 ? 1e308 : i }));
      e.applyChanges('m', { insert: rows });
      // two groups overflow (1e308 twice), then one of them recovers
      e.applyChanges('m', {
        insert: [
          { id: 20, g: 0, v: 1e308 },
          { id: 21, g: 3, v: 1e308 },
        ],
      });
      const errors = JSON.stringify(e.viewErrors('sums'), big);
      e.applyChanges('m', { delete: [{ id: 20 }] });
      return [...log, errors, JSON.stringify(e.viewErrors('sums'), big)].join('\n');
    } finally {
      e.close();
    }
  };
  const one = run(1);
  assert.match(one, /out of range/);
  assert.equal(run(2), one);
  assert.equal(run(4), one);
});

test('batches that outgrow the shared input buffers (several times, some while a partition idles) give the same changes', () => {
  // The buffers start at 64 rows and double: a 1-row batch, 3,000 rows of one group (one partition
  // busy: the idle one must be handed the regrown buffers with its next rows, the 40-row batch's),
  // 20,000 rows over many groups (text and NULLs: the value and null-mask forms), then smaller ones.
  const batches: Batch[] = [];
  let id = 1;
  const rows = (n: number, seller: (i: number) => number): Row[] =>
    Array.from({ length: n }, (_, i) => ({
      id: id++,
      seller_id: seller(i),
      region: i % 7 === 0 ? null : `r${i % 3}`,
      amount: i % 11 === 0 ? null : i % 100,
      price: i % 13 === 0 ? null : (i % 40) / 4,
    }));
  batches.push({ insert: rows(1, () => 5), delete: [] });
  batches.push({ insert: rows(3000, () => 5), delete: [] });
  batches.push({ insert: rows(40, (i) => i), delete: [] });
  batches.push({ insert: rows(20_000, (i) => (i * 7919) % 997), delete: [] });
  batches.push({ insert: rows(3, (i) => i), delete: [] });
  batches.push({ insert: rows(5000, (i) => i % 50), delete: batches[1]!.insert.slice(0, 100) });
  const logs = [1, 2].map((workers) => {
    const engine = engineWith(workers);
    try {
      createViews(engine);
      const changes = recordChanges(engine);
      for (const b of batches) engine.applyChanges('orders', b);
      return changelogText(changes);
    } finally {
      engine.close();
    }
  });
  assert.ok((logs[0] as string).includes('"seller_id":996'), 'the large batch reaches the views');
  assert.equal(logs[1], logs[0], 'the changelog with 2 workers differs from 1 worker’s');
});
