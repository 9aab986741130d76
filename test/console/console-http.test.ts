// The console as the server serves it, without a browser: the page, its bundled script and styles
// (built in-process, no network), and the dataflow endpoint the graph is drawn from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MetricsHistory } from '../../src/console/metrics-history.ts';
import { api, startConsoleServer, type ConsoleServer } from './harness.ts';

describe('console over HTTP', () => {
  let server: ConsoleServer;
  before(async () => {
    server = await startConsoleServer();
    const created = await api(server.base, 'POST', '/v1/sql', {
      sql: `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
            CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
            CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);`,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
  });
  after(async () => server.close());

  test('GET / serves the console page with a strict content security policy', async () => {
    const res = await fetch(`${server.base}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const html = await res.text();
    assert.match(html, /<script type="module" src="\/console\/console.js"><\/script>/);
    assert.match(html, /<main id="main"/);
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
    const flow = res.body as {
      view: string;
      epoch: number;
      output: number;
      text: string;
      nodes: {
        id: number;
        kind: string;
        inputs: number[];
        source?: string;
        sourceKind?: string;
        key?: string[];
        aggregates?: { strategy: string }[];
        stats: { rowsIn: number; rowsOut: number } | null;
        fusedInto: number | null;
      }[];
    };
    assert.equal(flow.view, 'total_histogram');
    assert.equal(flow.epoch, ingest.body.epoch);
    assert.match(flow.text, /^Dataflow for total_histogram/);
    const kinds = flow.nodes.map((n) => n.kind);
    assert.deepEqual(kinds[0], 'input');
    assert.equal(kinds.at(-1), 'output');
    const input = flow.nodes[0];
    assert.equal(input?.source, 'seller_totals');
    assert.equal(input?.sourceKind, 'view');
    const reduce = flow.nodes.find((n) => n.kind === 'reduce');
    assert.deepEqual(reduce?.key, ['bucket']);
    assert.equal(reduce?.aggregates?.[0]?.strategy, 'invertible');
    assert.ok((reduce?.stats?.rowsIn ?? 0) > 0, 'the reduce saw rows');
    const output = flow.nodes.find((n) => n.id === flow.output);
    assert.equal(output?.kind, 'output');
    assert.ok(output !== undefined && output.inputs.length === 1);
    assert.equal((output as { sharesStateWith?: number | null }).sharesStateWith, reduce?.id);
    // The Map stage computing the bucket is fused into the Reduce by lowering: no node of its own.
    assert.equal(
      flow.nodes.find((n) => n.kind === 'map'),
      undefined,
    );
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
