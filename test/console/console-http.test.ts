// The console as the server serves it, without a browser: the page, its bundled script and styles
// (built in-process, no network), and the dataflow endpoint the graph is drawn from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { MetricsHistory } from '../../src/console/metrics-history.ts';
import { acceptsGzip } from '../../src/console/plugin.ts';
import { dataflowOf } from '../../src/console/dataflow-route.ts';
import type { DataflowJson } from '../../src/console/shared/dataflow-json.ts';
import { api, startConsoleServer, type ConsoleServer } from './harness.ts';

describe('console over HTTP', () => {
  // The views created below, and the node kinds their plans hold between them.
  const VIEWS = [
    'seller_totals',
    'total_histogram',
    'big_sellers',
    'seller_regions',
    'same_seller',
    'top_orders',
  ];
  const KINDS = ['distinct', 'input', 'join', 'map', 'output', 'reduce', 'topn'];
  let server: ConsoleServer;
  before(async () => {
    server = await startConsoleServer();
    const created = await api(server.base, 'POST', '/v1/sql', {
      sql: `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
            CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
            CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);
            CREATE MATERIALIZED VIEW big_sellers AS SELECT DISTINCT seller_id FROM orders WHERE amount > 100;
            CREATE TABLE sellers (seller_id INTEGER PRIMARY KEY, region_id INTEGER);
            CREATE TABLE regions (region_id INTEGER PRIMARY KEY, name TEXT);
            CREATE MATERIALIZED VIEW seller_regions AS SELECT r.name, SUM(o.amount) AS revenue
              FROM orders o JOIN sellers s ON o.seller_id = s.seller_id LEFT JOIN regions r ON s.region_id = r.region_id
              GROUP BY r.name;
            CREATE MATERIALIZED VIEW same_seller AS SELECT a.order_id AS first, b.order_id AS second
              FROM orders a JOIN orders b ON a.seller_id = b.seller_id AND a.order_id < b.order_id;
            CREATE MATERIALIZED VIEW top_orders AS SELECT order_id, amount FROM orders ORDER BY amount DESC LIMIT 3;`,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
  });
  after(async () => server.close());

  test('GET / serves the console page with a strict content security policy', async () => {
    const res = await fetch(`${server.base}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const policy = res.headers.get('content-security-policy') ?? '';
    assert.match(policy, /default-src 'self'/);
    const html = await res.text();
    assert.match(html, /<script type="module" src="\/console\/console.js" nonce="[^"]+"><\/script>/);
    assert.match(html, /<main id="main"/);
    // Styles: the console's own files, and <style> elements with this response's nonce only (the
    // editor mounts its base styles so); the script element carries the nonce for the editor.
    const nonce = /nonce="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/, 'a fresh 128-bit nonce');
    assert.match(policy, new RegExp(`style-src 'self' 'nonce-${nonce.replace(/[+/]/g, '\\$&')}';`));
    assert.doesNotMatch(policy, /unsafe-inline/);
    const again = await (await fetch(`${server.base}/`)).text();
    assert.notEqual(/nonce="([^"]+)"/.exec(again)?.[1], nonce, 'a nonce is never reused');
  });

  /** GET with an explicit Accept-Encoding, the body as sent (not decoded). */
  const raw = (path: string, encoding: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = request(`${server.base}${path}`, { headers: { 'accept-encoding': encoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  test('the bundle (with the editor) is minified, sent gzip-compressed to clients that accept it, and within budget', async () => {
    const plain = await raw('/console/console.js', 'identity');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'accept-encoding');
    const packed = await raw('/console/console.js', 'gzip, deflate, br');
    assert.equal(packed.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(packed.body), plain.body, 'the same script');
    const code = plain.body.toString('utf8');
    assert.match(code, /cm-editor|cm-content/, 'CodeMirror is bundled');
    // Measured: about 390 kB, 132 kB compressed (CodeMirror's view and state are most of it).
    assert.ok(plain.body.length < 600_000, `bundle ${plain.body.length} B`);
    assert.ok(packed.body.length < 200_000, `gzip bundle ${packed.body.length} B`);
    assert.ok(plain.body.length > 2.5 * packed.body.length, 'compression pays');
    assert.ok(code.split('\n').length < 200, 'minified: a few long lines');
  });

  test('Accept-Encoding: gzip is used when listed or admitted by *, never with q=0', () => {
    assert.equal(acceptsGzip('gzip, deflate, br'), true);
    assert.equal(acceptsGzip('br;q=1.0, gzip;q=0.8'), true);
    assert.equal(acceptsGzip('*'), true);
    assert.equal(acceptsGzip(['deflate', 'GZIP']), true);
    assert.equal(acceptsGzip(undefined), false);
    assert.equal(acceptsGzip(''), false);
    assert.equal(acceptsGzip('identity'), false);
    assert.equal(acceptsGzip('gzip;q=0'), false);
    assert.equal(acceptsGzip('gzip;q=0, *'), false);
    assert.equal(acceptsGzip('*;q=0'), false);
    assert.equal(acceptsGzip('x-gzip'), false);
  });

  test('the client bundle and styles are served without a build step', async () => {
    const js = await fetch(`${server.base}/console/console.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    const code = await js.text();
    assert.ok(code.length > 10_000, 'bundle looks complete');
    assert.doesNotMatch(code, /^import\s/m, 'bundle has no unresolved imports');
    const css = await fetch(`${server.base}/console/console.css`);
    assert.equal(css.status, 200);
    assert.match(await css.text(), /--bg:/);
  });

  test('GET /v1/views/{name}/dataflow returns the MRM graph with live counts', async () => {
    const ingest = await api(server.base, 'POST', '/v1/tables/orders/rows', [
      { order_id: 1, seller_id: 11, amount: 5 },
      { order_id: 2, seller_id: 11, amount: 16 },
    ]);
    assert.equal(ingest.status, 200);
    const res = await api(server.base, 'GET', '/v1/views/total_histogram/dataflow');
    assert.equal(res.status, 200);
    const flow = res.body as unknown as DataflowJson;
    assert.equal(flow.view, 'total_histogram');
    assert.equal(flow.epoch, ingest.body.epoch);
    assert.match(flow.text, /^Dataflow for total_histogram \(fingerprint [0-9a-f]+\)/);
    assert.ok(flow.text.includes(flow.fingerprint));
    // The plan as lowered: the Map stage computing the bucket is fused into the Reduce (no node of
    // its own), and the Output reads the Reduce's groups instead of holding a copy.
    assert.deepEqual(
      flow.nodes.map((n) => [n.kind, n.title, n.inputs, n.stateful, n.state]),
      [
        ['input', 'Input', [], false, null],
        ['reduce', 'Reduce+Merge', [0], true, 'total_histogram/reduce1'],
        ['output', 'Output', [1], false, null],
      ],
    );
    const [input, reduce, output] = flow.nodes;
    assert.ok(input?.kind === 'input' && reduce?.kind === 'reduce' && output?.kind === 'output');
    assert.equal(flow.output, output.id);
    assert.deepEqual(
      [input.source, input.sourceKind, input.columns],
      ['seller_totals', 'view', ['seller_id', 'total']],
    );
    assert.deepEqual(reduce.key, ['bucket']);
    assert.deepEqual(reduce.aggregates, [{ text: 'count(*)', strategy: 'invertible' }]);
    assert.deepEqual(reduce.fused, {
      filter: null,
      keys: ['floor(cast(div(#1:total, 10) as double precision))'],
      arguments: [],
    });
    assert.deepEqual(reduce.columns, ['bucket', 'sellers']);
    assert.ok((reduce.stats?.rowsIn ?? 0) > 0, 'the reduce saw rows');
    assert.ok((reduce.stats?.stateBytes ?? 0) > 0, 'the reduce holds the state');
    assert.deepEqual(output.key, ['bucket']);
    assert.equal(output.sharesStateWith, reduce.id);
    assert.equal(output.stats?.stateBytes, 0, 'the sharing Output holds no copy');
  });

  test('a join view: Join nodes with [left, right] inputs, key pairs, state and counts', async () => {
    const ingest = await api(server.base, 'POST', '/v1/sql', {
      sql: "INSERT INTO sellers VALUES (11, 1), (12, 2); INSERT INTO regions VALUES (1, 'north');",
    });
    assert.equal(ingest.status, 200, JSON.stringify(ingest.body));
    const res = await api(server.base, 'GET', '/v1/views/seller_regions/dataflow');
    assert.equal(res.status, 200);
    const flow = res.body as unknown as DataflowJson;
    assert.deepEqual(
      flow.nodes.map((n) => [n.id, n.kind, n.inputs]),
      [
        [0, 'input', []],
        [1, 'input', []],
        [2, 'join', [0, 1]],
        [3, 'input', []],
        [4, 'join', [2, 3]],
        [5, 'reduce', [4]],
        [6, 'output', [5]],
      ],
    );
    assert.deepEqual(
      flow.nodes.flatMap((n) => (n.kind === 'input' ? [n.source] : [])),
      ['orders', 'sellers', 'regions'],
    );
    const joins = flow.nodes.flatMap((n) => (n.kind === 'join' ? [n] : []));
    assert.deepEqual(
      joins.map((j) => [j.title, j.joinKind, j.on, j.residual, j.state, j.stateful]),
      [
        ['Join', 'inner', ['#1:seller_id = right.#0:seller_id'], null, 'seller_regions/join2', true],
        ['Join', 'left', ['#4:region_id = right.#0:region_id'], null, 'seller_regions/join4', true],
      ],
    );
    for (const j of joins) {
      assert.ok(flow.text.includes(j.on[0] as string), 'the key pair as EXPLAIN prints it');
      assert.ok((j.stats?.rowsIn ?? 0) > 0, JSON.stringify(j.stats));
    }
    // The inner join holds nothing of its own (sellers read from the table's rows, orders from the
    // shared arrangement); the left join arranges its left input, the inner join's rows.
    assert.deepEqual(
      joins.map((j) => (j.stats?.stateBytes ?? 0) > 0),
      [false, true],
      JSON.stringify(joins.map((j) => j.stats)),
    );
    // A self-join reads one table through two Input nodes, and keeps its residual.
    const self = (await api(server.base, 'GET', '/v1/views/same_seller/dataflow'))
      .body as unknown as DataflowJson;
    const [left, right, join] = self.nodes;
    assert.ok(left?.kind === 'input' && right?.kind === 'input' && join?.kind === 'join');
    assert.deepEqual([left.source, right.source, join.inputs], ['orders', 'orders', [left.id, right.id]]);
    assert.equal(join.residual, 'lt(#0:order_id, #3:order_id)');
  });

  test('the dataflow JSON loses nothing on the way (every field of every node kind is in the schema)', async () => {
    const kinds = new Set<string>();
    for (const view of VIEWS) {
      const res = await api(server.base, 'GET', `/v1/views/${view}/dataflow`);
      assert.equal(res.status, 200);
      const direct = dataflowOf(server.app.sluice, view);
      assert.deepEqual({ ...res.body, epoch: 0 }, { ...JSON.parse(JSON.stringify(direct)), epoch: 0 }, view);
      for (const n of direct.nodes) kinds.add(n.kind);
    }
    assert.deepEqual([...kinds].sort(), KINDS);
  });

  test('a Top-N view: one TopN node, its ranking and kept range as EXPLAIN prints them', async () => {
    const flow = (await api(server.base, 'GET', '/v1/views/top_orders/dataflow'))
      .body as unknown as DataflowJson;
    const topn = flow.nodes.find((n) => n.kind === 'topn');
    assert.ok(topn?.kind === 'topn', JSON.stringify(flow.nodes));
    assert.equal(topn.title, 'Top-N');
    assert.match(
      topn.text,
      /^row_number partition \[\] order \[#1:amount desc nulls first\] keep 0 < rank <= 3$/,
    );
    assert.ok(flow.text.includes(topn.text));
    assert.deepEqual([topn.stateful, topn.state], [true, 'top_orders/topn2']);
  });

  test('the dataflow of an unknown view is a 404 with a code', async () => {
    const res = await api(server.base, 'GET', '/v1/views/nope/dataflow');
    assert.equal(res.status, 404);
    assert.equal((res.body.error as { code: string }).code, 'UNKNOWN_VIEW');
  });

  test('the dataflow endpoint is documented in the OpenAPI document', async () => {
    const res = await api(server.base, 'GET', '/openapi.json');
    const paths = res.body.paths as Record<string, unknown>;
    assert.ok(paths['/v1/views/{name}/dataflow'] !== undefined);
  });

  test("the plots' history: one reading a second of the server's counters, oldest first", async () => {
    await api(server.base, 'POST', '/v1/tables/orders/rows?wait=true', [
      { order_id: 77_000_001, seller_id: 1, amount: 5 },
    ]);
    type Reading = { at: number; rowsIn: number; batches: number; batchSeconds: number };
    const read = async (): Promise<{ intervalMs: number; readings: Reading[] }> =>
      (await api(server.base, 'GET', '/console/metrics-history')).body as {
        intervalMs: number;
        readings: Reading[];
      };
    // Wait (bounded) until two readings were taken after the ingest.
    const deadline = Date.now() + 20_000;
    let history = await read();
    while (history.readings.filter((r) => r.rowsIn >= 1).length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      history = await read();
    }
    assert.equal(history.intervalMs, 1000);
    const last = history.readings.at(-1);
    assert.ok(last !== undefined && last.rowsIn >= 1 && last.batches >= 1, JSON.stringify(last));
    for (let i = 1; i < history.readings.length; i++) {
      const [a, b] = [history.readings[i - 1] as Reading, history.readings[i] as Reading];
      assert.ok(b.at > a.at && b.rowsIn >= a.rowsIn, 'oldest first, counters never go back');
    }
  });

  test('the history keeps only its last readings (bounded memory)', () => {
    const history = new MetricsHistory(3);
    assert.deepEqual(history.readings(), []);
    for (let at = 1; at <= 7; at++) history.record({ at, rowsIn: at, batches: at, batchSeconds: 0 });
    assert.deepEqual(
      history.readings().map((r) => r.at),
      [5, 6, 7],
    );
  });
});
