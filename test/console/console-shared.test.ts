// The console's pure pieces: folding a changelog into rows, a view's DataflowPlan as the console's
// graph JSON (with expressions printed as EXPLAIN prints them), reading /metrics, and choosing
// which views get a chart; the SQL editor's bounded statement history.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LiveRows, compareValues } from '../../src/console/shared/changelog-state.ts';
import { pickChart } from '../../src/console/shared/chart-pick.ts';
import { parsePrometheus, rates, readMetrics } from '../../src/console/shared/prom-text.ts';
import type { DataflowJson, DataflowNodeJson } from '../../src/console/shared/dataflow-json.ts';
import { dataflowJson } from '../../src/console/dataflow-route.ts';
import {
  layoutDataflow,
  type Layout,
  type LayoutEdge,
  type LayoutInput,
  type PlacedBox,
} from '../../src/console/shared/dataflow-layout.ts';
import { Engine } from '../../src/exec/engine.ts';
import {
  HISTORY_KEY,
  HistoryWalk,
  StatementHistory,
  type HistoryStorage,
} from '../../src/console/shared/sql-history.ts';

describe('LiveRows', () => {
  test('a keyed view: updates in place, reports the changed cells, deletes', () => {
    const rows = new LiveRows(['bucket', 'sellers'], ['bucket']);
    rows.load([
      { bucket: 0, sellers: 10 },
      { bucket: 7, sellers: 1 },
    ]);
    const deltas = rows.apply([
      { op: '-U', row: { bucket: 0, sellers: 10 } },
      { op: '+U', row: { bucket: 0, sellers: 9 } },
      { op: '+I', row: { bucket: 2, sellers: 1 } },
      { op: '-D', row: { bucket: 7, sellers: 1 } },
    ]);
    assert.deepEqual(
      deltas.map((d) => [d.id, d.kind, d.changedColumns]),
      [
        ['[0]', 'update', ['sellers']],
        ['[2]', 'insert', ['bucket', 'sellers']],
        ['[7]', 'delete', ['bucket', 'sellers']],
      ],
    );
    assert.deepEqual(
      rows.sorted().map((e) => e.row),
      [
        { bucket: 0, sellers: 9 },
        { bucket: 2, sellers: 1 },
      ],
    );
  });

  test('a view without a key: multiplicities with n', () => {
    const rows = new LiveRows(['x'], null);
    rows.apply([{ op: '+I', row: { x: 'a' }, n: 3 }]);
    rows.apply([{ op: '-D', row: { x: 'a' } }]);
    assert.equal(rows.get('["a"]')?.count, 2);
    const gone = rows.apply([{ op: '-D', row: { x: 'a' }, n: 2 }]);
    assert.equal(gone[0]?.kind, 'delete');
    assert.equal(rows.size, 0);
  });

  test('an update that changes nothing visible reports no changed cells', () => {
    const rows = new LiveRows(['k', 'v'], ['k']);
    rows.load([{ k: 1, v: 5 }]);
    const d = rows.apply([
      { op: '-U', row: { k: 1, v: 5 } },
      { op: '+U', row: { k: 1, v: 5 } },
    ]);
    assert.deepEqual(d[0]?.changedColumns, []);
  });

  test('values order numerically, big integers sent as strings included', () => {
    assert.ok(compareValues(2, 10) < 0);
    assert.ok(compareValues('9007199254740993', 5) > 0);
    assert.ok(compareValues(null, 0) < 0);
    assert.ok(compareValues('b', 'a') > 0);
  });
});

describe('the dataflow JSON of a plan', () => {
  test('a temporal join: its own kind and title, its state, its key as text', () => {
    const engine = new Engine();
    engine.execute(`CREATE TABLE bid (id INTEGER PRIMARY KEY, auction INTEGER NOT NULL);
      CREATE TABLE side_input (key INTEGER PRIMARY KEY, value TEXT);
      CREATE MATERIALIZED VIEW q13 AS SELECT B.id, S.value FROM bid B
        LEFT JOIN side_input FOR SYSTEM_TIME AS OF PROCTIME() S ON mod(B.auction, 10) = S.key;`);
    const flow = dataflowJson(
      engine.viewPlan('q13'),
      engine.viewNodeStats('q13'),
      engine.explainView('q13'),
      1,
    );
    const join = flow.nodes.find((n) => n.kind === 'temporalJoin');
    assert.ok(join?.kind === 'temporalJoin');
    assert.deepEqual(
      [join.title, join.inputs, join.stateful, join.state],
      ['Temporal join', [0, 1], true, 'q13/temporaljoin2'],
    );
    assert.equal(
      join.text,
      "left join, right as of each left row's arrival; on mod(#1:auction, 10) = right.#0:key",
    );
  });

  test('an aggregate view: the Reduce carries its fused Map, the Output reads its state', () => {
    const engine = new Engine();
    engine.execute(`CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, region TEXT, PRIMARY KEY (order_id));
      CREATE MATERIALIZED VIEW v AS SELECT seller_id, SUM(amount) AS total, MAX(amount) AS top, COUNT(DISTINCT region) AS regions, COUNT(*) AS n
        FROM orders WHERE region <> 'it''s' GROUP BY seller_id;
      INSERT INTO orders VALUES (1, 7, 10, 'eu'), (2, 7, 5, 'us');`);
    const text = engine.explainView('v');
    const flow = dataflowJson(engine.viewPlan('v'), engine.viewNodeStats('v'), text, 3);
    assert.equal(flow.view, 'v');
    assert.equal(flow.epoch, 3);
    assert.equal(flow.text, text);
    assert.equal(flow.fingerprint, engine.viewPlan('v').fingerprint);
    assert.deepEqual(
      flow.nodes.map((n) => [n.id, n.kind, n.title, n.inputs, n.stateful]),
      [
        [0, 'input', 'Input', [], false],
        [1, 'reduce', 'Reduce+Merge', [0], true],
        [2, 'output', 'Output', [1], false],
      ],
    );
    assert.equal(flow.output, 2);
    const [input, reduce, output] = flow.nodes;
    assert.ok(input?.kind === 'input' && reduce?.kind === 'reduce' && output?.kind === 'output');
    assert.deepEqual([input.source, input.sourceKind], ['orders', 'table']);
    assert.deepEqual(input.columns, ['order_id', 'seller_id', 'amount', 'region']);
    assert.deepEqual(reduce.key, ['seller_id']);
    assert.deepEqual(reduce.aggregates, [
      { text: 'sum(#2:amount)', strategy: 'invertible' },
      { text: 'max(#2:amount)', strategy: 'multiset' },
      { text: 'count(distinct #3:region)', strategy: 'multiset' },
      { text: 'count(*)', strategy: 'invertible' },
    ]);
    assert.deepEqual(reduce.fused, {
      filter: "ne(#3:region, 'it''s')",
      keys: ['#1:seller_id'],
      arguments: ['#2:amount', '#3:region'],
    });
    assert.equal(reduce.state, 'v/reduce1');
    assert.deepEqual(reduce.columns, ['seller_id', 'total', 'top', 'regions', 'n']);
    assert.equal(reduce.stats?.rowsIn, 2);
    assert.deepEqual(output.key, ['seller_id']);
    assert.equal(output.sharesStateWith, 1);
    assert.equal(output.state, null, 'a sharing Output holds no state of its own');
    // What the console shows is what EXPLAIN shows.
    for (const e of [reduce.fused?.filter, ...(reduce.fused?.keys ?? []), ...(reduce.fused?.arguments ?? [])])
      assert.ok(e !== null && e !== undefined && text.includes(e), `${String(e)} in the EXPLAIN text`);
  });

  test('Map, Distinct and keyless Outputs', () => {
    const engine = new Engine();
    engine.execute(`CREATE TABLE t (id INT PRIMARY KEY, amount INT, region TEXT);
      CREATE MATERIALIZED VIEW regions AS SELECT DISTINCT region FROM t WHERE amount > 3;
      CREATE MATERIALIZED VIEW doubled AS SELECT amount * 2 AS d, region FROM t;`);
    const flow = (view: string): DataflowJson =>
      dataflowJson(engine.viewPlan(view), engine.viewNodeStats(view), engine.explainView(view), 0);
    const regions = flow('regions');
    assert.deepEqual(
      regions.nodes.map((n) => [n.kind, n.inputs, n.state]),
      [
        ['input', [], null],
        ['map', [0], null],
        ['distinct', [1], 'regions/distinct2'],
        ['output', [2], 'regions/output'],
      ],
    );
    const map = regions.nodes[1];
    assert.ok(map?.kind === 'map');
    assert.equal(map.filter, 'gt(#1:amount, 3)');
    assert.deepEqual(map.project, ['#2:region']);
    const out = outputOf(flow('doubled'));
    assert.equal(out.key, null);
    assert.equal(out.sharesStateWith, null);
    assert.equal(out.stateful, true);
  });

  function outputOf(flow: DataflowJson): Extract<DataflowNodeJson, { kind: 'output' }> {
    const out = flow.nodes.find((n) => n.id === flow.output);
    assert.ok(out?.kind === 'output');
    return out;
  }

  describe('joins', () => {
    const engine = new Engine();
    engine.execute(`CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, customer_id INT, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
      CREATE TABLE customers (id INT PRIMARY KEY, name TEXT, region_id INT);
      CREATE TABLE regions (id INT PRIMARY KEY, rname TEXT);
      CREATE TABLE sellers (id INT PRIMARY KEY, sname TEXT);
      CREATE MATERIALIZED VIEW pairs AS SELECT a.order_id AS a_id, b.order_id AS b_id
        FROM orders a JOIN orders b ON a.seller_id = b.seller_id AND a.amount < b.amount;
      CREATE MATERIALIZED VIEW revenue AS SELECT r.rname, s.sname, SUM(o.amount) AS total
        FROM orders o JOIN customers c ON o.customer_id = c.id LEFT JOIN regions r ON c.region_id = r.id
        JOIN sellers s ON s.id = o.seller_id GROUP BY r.rname, s.sname;
      CREATE MATERIALIZED VIEW everyone AS SELECT o.order_id, s.sname FROM orders o CROSS JOIN sellers s;
      INSERT INTO orders VALUES (1, 1, 1, 10), (2, 1, 1, 20);`);
    const flow = (view: string): DataflowJson =>
      dataflowJson(engine.viewPlan(view), engine.viewNodeStats(view), engine.explainView(view), 0);
    const joinsOf = (f: DataflowJson): Extract<DataflowNodeJson, { kind: 'join' }>[] =>
      f.nodes.flatMap((n) => (n.kind === 'join' ? [n] : []));

    test('a self-join: two Inputs of one table, a Join with [left, right], key pairs and residual', () => {
      const pairs = flow('pairs');
      assert.deepEqual(
        pairs.nodes.map((n) => [n.id, n.kind, n.inputs]),
        [
          [0, 'input', []],
          [1, 'input', []],
          [2, 'join', [0, 1]],
          [3, 'output', [2]],
        ],
      );
      assert.deepEqual(
        pairs.nodes.slice(0, 2).map((n) => (n.kind === 'input' ? n.source : null)),
        ['orders', 'orders'],
      );
      const [join] = joinsOf(pairs);
      assert.ok(join !== undefined);
      assert.equal(join.title, 'Join');
      assert.equal(join.joinKind, 'inner');
      assert.deepEqual(join.on, ['#1:seller_id = right.#1:seller_id']);
      assert.equal(join.residual, 'lt(#3:amount, #7:amount)');
      assert.equal(join.state, 'pairs/join2');
      assert.equal(join.stateful, true);
      // The view's projection runs inside the join, on each row it emits.
      assert.deepEqual(join.fused, { filter: null, project: ['#0:order_id', '#4:order_id'] });
      assert.deepEqual(join.columns, ['a_id', 'b_id']);
      assert.ok(
        (join.stats?.rowsIn ?? 0) > 0 && (join.stats?.stateBytes ?? 0) > 0,
        JSON.stringify(join.stats),
      );
      for (const e of [...join.on, join.residual ?? ''])
        assert.ok(pairs.text.includes(e), `${e} in the EXPLAIN text`);
    });

    test('a four-way join tree under an aggregate, and a cross product', () => {
      const revenue = flow('revenue');
      assert.deepEqual(
        joinsOf(revenue).map((j) => [j.id, j.inputs, j.joinKind, j.on, j.residual]),
        [
          [2, [0, 1], 'inner', ['#2:customer_id = right.#0:id'], null],
          [4, [2, 3], 'left', ['#6:region_id = right.#0:id'], null],
          [6, [4, 5], 'inner', ['#1:seller_id = right.#0:id'], null],
        ],
      );
      const reduce = revenue.nodes.find((n) => n.kind === 'reduce');
      assert.ok(reduce?.kind === 'reduce');
      assert.deepEqual(reduce.inputs, [6]);
      assert.deepEqual(reduce.fused, {
        filter: null,
        // The join under the Reduce emits only the columns the Reduce reads (lower-join-columns.ts).
        keys: ['#1:rname', '#2:sname'],
        arguments: ['#0:amount'],
      });
      assert.equal(outputOf(revenue).sharesStateWith, reduce.id);
      const [cross] = joinsOf(flow('everyone'));
      assert.deepEqual(cross?.on, [], 'no equi key: a cross product');
      assert.equal(outputOf(flow('everyone')).key, null);
    });
  });
});

describe('layoutDataflow', () => {
  const options = { boxWidth: 100, gapX: 10, gapY: 20, margin: 5 };
  const node = (id: number, ...inputs: number[]): LayoutInput => ({ id, inputs, height: 50 });
  const check = (nodes: LayoutInput[], output: number): Layout => {
    const layout = layoutDataflow(nodes, output, options);
    assert.equal(layout.boxes.size, nodes.length);
    const boxes = [...layout.boxes.values()];
    for (const a of boxes)
      for (const b of boxes)
        if (a.id < b.id && a.row === b.row)
          assert.ok(Math.abs(a.x - b.x) >= 110, `n${a.id} and n${b.id} overlap`);
    for (const b of boxes) {
      assert.ok(b.x >= 5 && b.x + 100 <= layout.width - 5, `n${b.id} inside the drawing`);
      assert.ok(b.y >= 5 && b.y + b.height <= layout.height - 5);
    }
    for (const e of layout.edges) assert.ok(e.y2 > e.y1, `edge n${e.from} → n${e.to} flows down`);
    const out = layout.boxes.get(output);
    assert.ok(out !== undefined && boxes.every((b) => b.row <= out.row), 'the output is at the bottom');
    return layout;
  };
  const at = (layout: Layout, id: number): PlacedBox => layout.boxes.get(id) as PlacedBox;

  test('a chain is one column', () => {
    const layout = check([node(0), node(1, 0), node(2, 1)], 2);
    assert.deepEqual(
      [0, 1, 2].map((id) => [at(layout, id).x, at(layout, id).row]),
      [
        [5, 0],
        [5, 1],
        [5, 2],
      ],
    );
    assert.deepEqual(
      layout.edges.map((e) => e.side),
      [null, null],
    );
    assert.equal(layout.width, 110);
  });

  test('a self-join: two inputs side by side, left before right, two labelled edges', () => {
    const layout = check([node(0), node(1), node(2, 0, 1), node(3, 2)], 3);
    assert.ok(at(layout, 0).x < at(layout, 1).x);
    assert.equal(at(layout, 0).row, at(layout, 1).row);
    const into = layout.edges.filter((e) => e.to === 2);
    assert.deepEqual(
      into.map((e) => [e.from, e.side]),
      [
        [0, 'left'],
        [1, 'right'],
      ],
    );
    assert.ok((into[0] as LayoutEdge).x2 < (into[1] as LayoutEdge).x2, 'the two arrows end apart');
    // The join sits centred between its inputs.
    assert.equal(at(layout, 2).x, (at(layout, 0).x + at(layout, 1).x) / 2);
  });

  test('a left-deep four-way join: each table sits beside the join it feeds, left inputs left', () => {
    // ((a ⋈ b) ⋈ c) ⋈ d → reduce → output
    const nodes = [
      node(0),
      node(1),
      node(2, 0, 1),
      node(3),
      node(4, 2, 3),
      node(5),
      node(6, 4, 5),
      node(7, 6),
      node(8, 7),
    ];
    const layout = check(nodes, 8);
    for (const [join, left, right] of [
      [2, 0, 1],
      [4, 2, 3],
      [6, 4, 5],
    ] as const) {
      assert.ok(at(layout, left).x < at(layout, right).x, `n${join}: left input drawn left`);
      assert.equal(at(layout, left).row, at(layout, join).row - 1, `n${join}: left input just above`);
      assert.equal(at(layout, right).row, at(layout, join).row - 1, `n${join}: right input just above`);
    }
  });

  test('a bushy join tree and a node feeding two others (a DAG)', () => {
    // (a ⋈ b) ⋈ (c ⋈ d)
    const bushy = check(
      [node(0), node(1), node(2, 0, 1), node(3), node(4), node(5, 3, 4), node(6, 2, 5), node(7, 6)],
      7,
    );
    assert.equal(at(bushy, 0).row, at(bushy, 4).row, 'all four tables in the top row');
    assert.ok(at(bushy, 2).x < at(bushy, 5).x);
    // One Input read by both sides of a join (a plan may share it): two edges from it.
    const shared = check([node(0), node(1, 0), node(2, 0, 1), node(3, 2)], 3);
    assert.deepEqual(
      shared.edges.filter((e) => e.from === 0).map((e) => [e.to, e.side]),
      [
        [1, null],
        [2, 'left'],
      ],
    );
  });
});

describe('metrics', () => {
  const scrape = (rows: number, batches: number, seconds: number, changes: number): string =>
    [
      '# HELP sluice_rows_in_total Rows ingested',
      '# TYPE sluice_rows_in_total counter',
      `sluice_rows_in_total{table="orders"} ${rows}`,
      `sluice_batch_duration_seconds_sum ${seconds}`,
      `sluice_batch_duration_seconds_count ${batches}`,
      `sluice_view_changes_out_total{view="v"} ${changes}`,
      `sluice_view_changes_out_total{view="w"} 1000`,
    ].join('\n');

  test('parses labels and values', () => {
    const s = parsePrometheus('m{a="x",b="q\\"uote"} 4.5\n# comment\nn 7');
    assert.deepEqual(s, [
      { name: 'm', labels: { a: 'x', b: 'q"uote' }, value: 4.5 },
      { name: 'n', labels: {}, value: 7 },
    ]);
  });

  test('rates between two scrapes: rows/s, changes/s of one view, mean epoch latency', () => {
    const a = readMetrics(scrape(100, 10, 0.01, 50), 0, 'v');
    const b = readMetrics(scrape(300, 20, 0.03, 90), 2000, 'v');
    const r = rates(a, b);
    assert.equal(r.rowsPerSecond, 100);
    assert.equal(r.epochsPerSecond, 5);
    assert.equal(r.changesPerSecond, 20);
    assert.ok(r.latencyMs !== null && Math.abs(r.latencyMs - 2) < 1e-9);
    assert.equal(rates(b, b).latencyMs, null);
  });
});

describe('pickChart', () => {
  test('a numeric single-column key with numeric values is charted', () => {
    assert.deepEqual(
      pickChart(
        [
          { name: 'bucket', type: 'double precision' },
          { name: 'sellers', type: 'bigint' },
        ],
        ['bucket'],
      ),
      { keyColumn: 'bucket', valueColumns: ['sellers'] },
    );
  });
  test('text keys, composite keys, keyless views and no numeric values are not', () => {
    assert.equal(
      pickChart(
        [
          { name: 'k', type: 'text' },
          { name: 'v', type: 'integer' },
        ],
        ['k'],
      ),
      null,
    );
    assert.equal(
      pickChart(
        [
          { name: 'a', type: 'integer' },
          { name: 'b', type: 'integer' },
          { name: 'v', type: 'integer' },
        ],
        ['a', 'b'],
      ),
      null,
    );
    assert.equal(pickChart([{ name: 'a', type: 'integer' }], null), null);
    assert.equal(
      pickChart(
        [
          { name: 'a', type: 'integer' },
          { name: 't', type: 'text' },
        ],
        ['a'],
      ),
      null,
    );
  });
});

/** A Web Storage over a Map (Node has no localStorage), optionally refusing writes as a full one does. */
class MapStorage implements HistoryStorage {
  readonly items = new Map<string, string>();
  full = false;
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    if (this.full) throw new Error('QuotaExceededError');
    this.items.set(key, value);
  }
}

describe('StatementHistory', () => {
  test('newest first, trimmed, a rerun moves to the front once, and it survives a new page', () => {
    const storage = new MapStorage();
    const history = new StatementHistory(storage);
    assert.deepEqual(history.entries(), []);
    assert.equal(history.add('  SELECT 1;\n'), true);
    history.add('SHOW VIEWS;');
    history.add('SELECT 1;');
    assert.equal(history.add('   '), false, 'blank text is not kept');
    assert.deepEqual(history.entries(), ['SELECT 1;', 'SHOW VIEWS;']);
    assert.deepEqual(new StatementHistory(storage).entries(), ['SELECT 1;', 'SHOW VIEWS;']);
  });

  test('bounded: entries, characters per entry, characters in all', () => {
    const storage = new MapStorage();
    const history = new StatementHistory(storage, { entries: 3, entryChars: 10, totalChars: 12 });
    assert.equal(history.add('x'.repeat(11)), false, 'too long to keep');
    for (const s of ['a1', 'b2', 'c3', 'd4']) history.add(s);
    assert.deepEqual(history.entries(), ['d4', 'c3', 'b2'], 'the oldest goes first');
    history.add('e'.repeat(10));
    assert.deepEqual(history.entries(), ['e'.repeat(10), 'd4'], '12 characters in all');
    const stored = storage.getItem(HISTORY_KEY) ?? '';
    assert.deepEqual(JSON.parse(stored), history.entries());
  });

  test('what another tab stored is kept; damaged or foreign storage reads as empty', () => {
    const storage = new MapStorage();
    const one = new StatementHistory(storage);
    const two = new StatementHistory(storage);
    one.add('SELECT 1;');
    two.add('SELECT 2;');
    assert.deepEqual(two.entries(), ['SELECT 2;', 'SELECT 1;']);
    for (const junk of ['{not json', '{"a":1}', '42', 'null']) {
      storage.items.set(HISTORY_KEY, junk);
      assert.deepEqual(new StatementHistory(storage).entries(), [], junk);
    }
    storage.items.set(HISTORY_KEY, JSON.stringify(['SELECT 3;', 7, '', 'SELECT 3;', 'x'.repeat(30_000)]));
    assert.deepEqual(new StatementHistory(storage).entries(), ['SELECT 3;']);
  });

  test('a full or missing storage keeps the history for the page', () => {
    const storage = new MapStorage();
    storage.full = true;
    const history = new StatementHistory(storage);
    assert.equal(history.add('SELECT 1;'), true);
    assert.deepEqual(history.entries(), ['SELECT 1;']);
    const none = new StatementHistory(null);
    none.add('SELECT 2;');
    none.add('SELECT 3;');
    assert.deepEqual(none.entries(), ['SELECT 3;', 'SELECT 2;']);
  });

  test('HistoryWalk: older from the draft, newer back to it, stops at both ends', () => {
    const history = new StatementHistory(new MapStorage());
    const walk = new HistoryWalk(history);
    assert.equal(walk.older('draft'), null, 'nothing to recall');
    history.add('first');
    history.add('second');
    assert.equal(walk.newer(), null, 'not walking yet');
    assert.equal(walk.older('draft'), 'second');
    assert.equal(walk.older('second'), 'first');
    assert.equal(walk.older('first'), null, 'the oldest');
    assert.equal(walk.newer(), 'second');
    assert.equal(walk.newer(), 'draft');
    assert.equal(walk.newer(), null);
    walk.older('edited');
    walk.reset();
    assert.equal(walk.older('edited again'), 'second', 'a reset walk starts at the newest');
    assert.equal(walk.newer(), 'edited again');
  });
});
