// The per-epoch path at batch size 1 (engine-epochs.ts, view-graph.ts, table-store.ts): a plain write's
// positions are built only when read but read the same, the graph's reused list of stepped views
// survives a listener that writes, and one-row epochs give the same views and changes as batches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from './engine.ts';
import type { EpochDeltas } from './epoch-deltas.ts';
import type { ViewChangeSet } from './api.ts';
import { rawChangesOf } from '../common/raw-changes.ts';
import { CANONICAL_DDL } from '../../test/support/canonical-pipeline.ts';

const DDL = `${CANONICAL_DDL}CREATE TABLE audit (epoch INT NOT NULL);\n`;

function rowsOf(engine: Engine, view: string): string[] {
  return engine
    .viewSnapshot(view)
    .rows.map((r) => JSON.stringify(r))
    .sort();
}

test('a plain write reports its table and epoch as the positions, however they are read', () => {
  const engine = new Engine();
  engine.execute(DDL);
  const seen: ViewChangeSet[] = [];
  engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 1, amount: 5 }] });
  assert.deepEqual(engine.positions, { orders: { epoch: 1 } });
  engine.subscribe('seller_totals', (c) => seen.push(c));
  engine.applyChanges('orders', { insert: [{ order_id: 2, seller_id: 1, amount: 7 }] });
  engine.applyChanges('audit', { insert: [{ epoch: 3 }] });
  assert.deepEqual(engine.positions, { audit: { epoch: 3 } });
  assert.deepEqual(
    seen.map((c) => [c.epoch, c.positions]),
    [[2, { orders: { epoch: 2 } }]],
  );
  assert.deepEqual(engine.takeCheckpoint(true).positions, { audit: { epoch: 3 } });
});

test('a listener that writes during an epoch does not disturb the views the epoch stepped', () => {
  const engine = new Engine();
  engine.execute(DDL);
  engine.execute('CREATE MATERIALIZED VIEW audits AS SELECT COUNT(*) AS n FROM audit');
  const seen: [string, number][] = [];
  // The first view's listener runs a nested epoch that steps another view only, while the outer
  // epoch still has a view to report.
  engine.subscribe('seller_totals', (c) => {
    seen.push(['seller_totals', c.epoch]);
    if (c.epoch === 1) engine.applyChanges('audit', { insert: [{ epoch: 1 }] });
  });
  engine.subscribe('total_histogram', (c) => seen.push(['total_histogram', c.epoch]));
  engine.subscribe('audits', (c) => seen.push(['audits', c.epoch]));
  engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 1, amount: 5 }] });
  // The nested epoch's change sets come after the outer epoch's.
  assert.deepEqual(seen, [
    ['seller_totals', 1],
    ['total_histogram', 1],
    ['audits', 2],
  ]);
});

test('a listener that writes to the same table: every view hears each epoch, in order, with its own changes', () => {
  const first = { order_id: 1, seller_id: 1, amount: 5 };
  const second = { order_id: 2, seller_id: 1, amount: 20 };
  const heard = (nested: boolean): string[] => {
    const engine = new Engine();
    engine.execute(DDL);
    const log: string[] = [];
    let epochs = 0;
    engine.onEpoch((epoch) => log.push(`epoch ${epoch} ended`));
    engine.subscribe('seller_totals', (c) => {
      log.push(`seller_totals ${c.epoch} ${JSON.stringify(c.changes)} ${JSON.stringify(c.positions)}`);
      // The second write from inside the first epoch's delivery.
      if (nested && epochs++ === 0) engine.applyChanges('orders', { insert: [second] });
    });
    engine.subscribe('total_histogram', (c) =>
      log.push(`total_histogram ${c.epoch} ${JSON.stringify(c.changes)} ${JSON.stringify(c.positions)}`),
    );
    engine.applyChanges('orders', { insert: [first] });
    if (!nested) engine.applyChanges('orders', { insert: [second] });
    return log;
  };
  const sequential = heard(false);
  assert.equal(sequential.length, 6);
  assert.deepEqual(heard(true), sequential);
});

test('one-row epochs end in the same views as one batch of the same rows', () => {
  const rows = Array.from({ length: 500 }, (_, i) => ({
    order_id: i + 1,
    seller_id: (i * 7919) % 37,
    amount: 1 + ((i * 104729) % 100),
  }));
  const single = new Engine();
  single.execute(DDL);
  for (const r of rows) single.applyChanges('orders', { insert: [r] });
  const whole = new Engine();
  whole.execute(DDL);
  whole.applyChanges('orders', { insert: rows });
  assert.equal(single.epoch, 500);
  for (const view of ['seller_totals', 'total_histogram'])
    assert.deepEqual(rowsOf(single, view), rowsOf(whole, view), view);
  assert.deepEqual(single.tableRows('orders'), whole.tableRows('orders'));
});

test('a one-row insert that breaks a constraint is refused and changes nothing', () => {
  const engine = new Engine();
  engine.execute(DDL);
  assert.throws(
    () => engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: null, amount: 1 }] }),
    /seller_id/,
  );
  assert.equal(engine.epoch, 0);
  assert.deepEqual(engine.tableRows('orders'), []);
  assert.deepEqual(rowsOf(engine, 'seller_totals'), []);
});

test('views whose steps chain several operators, or join two branches, match the rows they are over', () => {
  // A longer chain (filter and group, HAVING, top-N) steps operator to operator without the
  // outputs scratch; a UNION ALL's two branches meet at the union (the scratch path).
  const engine = new Engine();
  engine.execute(`
    CREATE TABLE t (k INT NOT NULL, v INT NOT NULL);
    CREATE MATERIALIZED VIEW top3 AS
      SELECT k, SUM(v) AS s FROM t WHERE v > 2 GROUP BY k HAVING SUM(v) > 10 ORDER BY s DESC, k LIMIT 3;
    CREATE MATERIALIZED VIEW both_ends AS
      SELECT k, v FROM t WHERE v > 12 UNION ALL SELECT k, v FROM t WHERE v < 3;
  `);
  const rows = Array.from({ length: 300 }, (_, i) => ({ k: (i * 7) % 11, v: (i * 13) % 17 }));
  for (const r of rows) engine.applyChanges('t', { insert: [r] });
  const sums = new Map<number, number>();
  for (const r of rows) if (r.v > 2) sums.set(r.k, (sums.get(r.k) ?? 0) + r.v);
  const top = [...sums]
    .filter(([, s]) => s > 10)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, 3)
    .map(([k, s]) => JSON.stringify({ k, s }))
    .sort();
  assert.deepEqual(rowsOf(engine, 'top3'), top);
  const ends = rows
    .filter((r) => r.v > 12 || r.v < 3)
    .map((r) => JSON.stringify({ k: r.k, v: r.v }))
    .sort();
  assert.deepEqual(rowsOf(engine, 'both_ends'), ends);
});

test('an epoch passes over views that read nothing it changed, and still reaches views over views', () => {
  // Twelve tables with a count view each, a view over two of those views, and one over that: each
  // one-row write wakes its table's view and, through it, the views built on it.
  const n = 12;
  const ddl: string[] = [];
  for (let i = 0; i < n; i++) {
    ddl.push(`CREATE TABLE t${i} (v INT NOT NULL);`);
    ddl.push(`CREATE MATERIALIZED VIEW c${i} AS SELECT COUNT(*) AS n, SUM(v) AS s FROM t${i};`);
  }
  ddl.push('CREATE MATERIALIZED VIEW pair AS SELECT a.s + b.s AS s FROM c3 a CROSS JOIN c8 b;');
  ddl.push('CREATE MATERIALIZED VIEW twice AS SELECT s * 2 AS d FROM pair;');
  const engine = new Engine();
  engine.execute(ddl.join('\n'));
  const sums = new Array<number>(n).fill(0);
  const counts = new Array<number>(n).fill(0);
  for (let k = 0; k < 400; k++) {
    const i = (k * 5) % n;
    const v = (k * 37) % 23;
    engine.applyChanges(`t${i}`, { insert: [{ v }] });
    sums[i] = (sums[i] as number) + v;
    counts[i] = (counts[i] as number) + 1;
    if (k % 50 === 49 || k === 0) {
      for (let j = 0; j < n; j++) {
        const expected = counts[j] === 0 ? { n: 0, s: null } : { n: counts[j], s: sums[j] };
        assert.deepEqual(engine.viewSnapshot(`c${j}`).rows, [expected], `c${j} after ${k + 1} writes`);
      }
      const both = (counts[3] as number) > 0 && (counts[8] as number) > 0;
      const d = both ? 2 * ((sums[3] as number) + (sums[8] as number)) : null;
      assert.deepEqual(engine.viewSnapshot('twice').rows, [{ d }]);
    }
  }
});

test("a view's per-node row counts are the same whether its step is a plain chain or not", () => {
  // `seller_totals` and `total_histogram` step as chains (input → Reduce → Output); the UNION ALL's
  // branches meet at the union, which takes the general path. Each node counts the rows it read and
  // the rows it produced, over inserts, a delete and one-row and many-row epochs.
  const engine = new Engine();
  engine.execute(CANONICAL_DDL);
  engine.execute(`CREATE MATERIALIZED VIEW ends AS
    SELECT seller_id FROM orders WHERE amount > 50 UNION ALL SELECT seller_id FROM orders WHERE amount < 3`);
  const counts = (view: string): [string, number, number][] =>
    engine.viewNodeStats(view).map((s) => [s.kind, s.rowsIn, s.rowsOut]);
  engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 1, amount: 60 }] });
  engine.applyChanges('orders', { insert: [{ order_id: 2, seller_id: 1, amount: 2 }] });
  engine.applyChanges('orders', {
    insert: [
      { order_id: 3, seller_id: 2, amount: 10 },
      { order_id: 4, seller_id: 3, amount: 70 },
    ],
  });
  engine.applyChanges('orders', { delete: [{ order_id: 1, seller_id: 1, amount: 60 }] });
  // seller_totals: 5 input rows; the Reduce emits +1, then −1 +1, then +1 +1, then −1 +1.
  assert.deepEqual(counts('seller_totals'), [
    ['input', 0, 5],
    ['reduce', 5, 7],
    ['output', 7, 7],
  ]);
  // total_histogram reads those 7: bucket 6 (+1), then 6 → 6 (the seller's total 62, −1 +1 in the
  // Reduce's input, nothing out), then buckets 1 and 7 (+1 +1), then 6 → 0 (−1 +1).
  assert.deepEqual(counts('total_histogram'), [
    ['input', 0, 7],
    ['reduce', 7, 5],
    ['output', 5, 5],
  ]);
  const ends = counts('ends');
  assert.deepEqual(ends[0], ['input', 0, 5]);
  assert.deepEqual(ends.at(-1), ['output', 4, 4]);
});

test('a chain view is handed the delta that woke it: only a delta some reader looks up by name is written', () => {
  const engine = new Engine();
  engine.execute(CANONICAL_DDL);
  // The engine's own deltas, with their writes and look-ups counted (they still do what they did).
  const deltas = (engine as unknown as { readonly deltas: EpochDeltas }).deltas;
  const written: string[] = [];
  let lookups = 0;
  const set = deltas.set.bind(deltas);
  const get = deltas.get.bind(deltas);
  deltas.set = (name, batch) => {
    written.push(name);
    set(name, batch);
  };
  deltas.get = (name) => {
    lookups++;
    return get(name);
  };
  // Both views are plain chains, each over one relation: the graph hands them their input, the
  // table's delta included.
  engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 5, amount: 60 }] });
  assert.deepEqual(written, []);
  assert.equal(lookups, 0);
  assert.deepEqual(engine.viewSnapshot('total_histogram').rows, [{ bucket: 6, sellers: 1 }]);
  // A UNION ALL over seller_totals steps by the general path, which reads its input by name.
  engine.execute(`CREATE MATERIALIZED VIEW ends AS
    SELECT seller_id FROM seller_totals WHERE total > 50 UNION ALL SELECT seller_id FROM seller_totals WHERE total < 3`);
  written.length = 0;
  lookups = 0;
  engine.applyChanges('orders', { insert: [{ order_id: 2, seller_id: 7, amount: 2 }] });
  assert.deepEqual(written, ['seller_totals']);
  assert.ok(lookups > 0);
  assert.deepEqual(rowsOf(engine, 'ends'), ['{"seller_id":5}', '{"seller_id":7}']);
  assert.deepEqual(rowsOf(engine, 'total_histogram'), [
    '{"bucket":0,"sellers":1}',
    '{"bucket":6,"sellers":1}',
  ]);
  // A UNION ALL straight over the table reads the table's delta by name.
  engine.execute(`CREATE MATERIALIZED VIEW big AS
    SELECT order_id FROM orders WHERE amount > 50 UNION ALL SELECT order_id FROM orders WHERE amount > 90`);
  written.length = 0;
  engine.applyChanges('orders', { insert: [{ order_id: 3, seller_id: 8, amount: 95 }] });
  assert.deepEqual(written, ['orders', 'seller_totals']);
  assert.deepEqual(rowsOf(engine, 'big'), ['{"order_id":1}', '{"order_id":3}', '{"order_id":3}']);
});

test("every epoch's change set of a view hands its encoders one array of the view's column names", () => {
  const engine = new Engine();
  engine.execute(DDL);
  const columns: (readonly string[] | undefined)[] = [];
  engine.subscribe('seller_totals', (c) => columns.push(rawChangesOf(c)?.columns));
  for (let i = 1; i <= 3; i++)
    engine.applyChanges('orders', { insert: [{ order_id: i, seller_id: i, amount: 5 }] });
  assert.equal(columns.length, 3);
  assert.deepEqual(columns[0], ['seller_id', 'total']);
  assert.ok(columns.every((c) => c === columns[0]));
});
