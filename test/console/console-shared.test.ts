// The console's pure pieces: folding a changelog into rows, reading the EXPLAIN DATAFLOW print
// back into a graph, reading /metrics, and choosing which views get a chart.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LiveRows, compareValues } from '../../src/console/shared/changelog-state.ts';
import { pickChart } from '../../src/console/shared/chart-pick.ts';
import { parseDataflowText } from '../../src/console/shared/dataflow-text.ts';
import { parsePrometheus, rates, readMetrics } from '../../src/console/shared/prom-text.ts';

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

describe('parseDataflowText', () => {
  const text = `Dataflow for total_histogram (fingerprint 86bfa0dc9288eae2)
  n3 Output total_histogram key [bucket] state total_histogram/output [bucket:double precision, sellers:bigint]
    n2 Reduce+Merge key [#0:bucket] aggregates [count(*) [invertible: O(1) per group]] state total_histogram/reduce2 → [bucket:double precision, sellers:bigint]
      n1 Map (stateless) project [floor(cast(div(#1:total, 10) as double precision))] → [bucket:double precision]
        n0 Input view seller_totals [seller_id:integer, total:bigint]`;

  test('reads nodes, edges, keys, strategies and state ids', () => {
    const g = parseDataflowText(text);
    assert.equal(g.view, 'total_histogram');
    assert.equal(g.fingerprint, '86bfa0dc9288eae2');
    assert.equal(g.output, 3);
    assert.deepEqual(
      g.nodes.map((n) => [n.id, n.kind, n.inputs]),
      [
        [0, 'input', []],
        [1, 'map', [0]],
        [2, 'reduce', [1]],
        [3, 'output', [2]],
      ],
    );
    const [input, map, reduce, output] = g.nodes;
    assert.equal(input?.source, 'seller_totals');
    assert.equal(input?.sourceKind, 'view');
    assert.deepEqual(input?.columns, ['seller_id', 'total']);
    assert.deepEqual(map?.project, ['floor(cast(div(#1:total, 10) as double precision))']);
    assert.deepEqual(map?.columns, ['bucket']);
    assert.deepEqual(reduce?.key, ['bucket']);
    assert.deepEqual(reduce?.aggregates, [{ text: 'count(*)', strategy: 'invertible' }]);
    assert.equal(reduce?.state, 'total_histogram/reduce2');
    assert.deepEqual(output?.key, ['bucket']);
    assert.deepEqual(output?.columns, ['bucket', 'sellers']);
    assert.equal(output?.stateful, true);
  });

  test('filters, multiset aggregates, distinct and keyless outputs', () => {
    const g = parseDataflowText(`Dataflow for q (fingerprint x)
  n4 Output q key none (multiset) state q/output [seller_id:integer, m:bigint]
    n3 Distinct state q/distinct3 (row → count)
      n2 Reduce+Merge key [#0:seller_id] aggregates [count(distinct #1) [multiset: value→count per group], max(#1) [multiset: value→count per group]] state q/reduce2 → [seller_id:integer, m:bigint]
        n1 Map (stateless) filter gt(#2:amount, 3); project [#1:seller_id, #2:amount] → [seller_id:integer, arg0:integer]
          n0 Input table orders [order_id:bigint, seller_id:integer, amount:integer]`);
    const byKind = new Map(g.nodes.map((n) => [n.kind, n]));
    assert.equal(byKind.get('map')?.filter, 'gt(#2:amount, 3)');
    assert.deepEqual(byKind.get('map')?.project, ['#1:seller_id', '#2:amount']);
    assert.deepEqual(
      byKind.get('reduce')?.aggregates?.map((a) => a.strategy),
      ['multiset', 'multiset'],
    );
    assert.equal(byKind.get('distinct')?.state, 'q/distinct3');
    assert.equal(byKind.get('output')?.key, undefined);
    assert.deepEqual(byKind.get('output')?.inputs, [3]);
  });

  test('an unknown operator keeps its printed text', () => {
    const g = parseDataflowText(
      'Dataflow for v\n  n1 Output v key [k] state v/o [k:integer]\n    n0 Shuffle hash [k]',
    );
    assert.equal(g.nodes[0]?.kind, 'shuffle');
    assert.equal(g.nodes[0]?.text, 'n0 Shuffle hash [k]');
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
