// An ad-hoc SELECT runs in slices between other requests; one whose client disconnected kept
// running to its end, for no one. The route now stops the script at its next slice once the
// response closed unfinished. Work is counted (rows the SELECT read, from /metrics), not timed:
// the client goes away long before the script could have read its input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { request, startServer, type TestServer } from './helpers.ts';

const ROWS = 200_000;
const STATEMENTS = 50;

async function selectRowsExamined(server: TestServer): Promise<number> {
  const text = (await request(server.base, 'GET', '/metrics')).text;
  const m = /^sluice_read_rows_examined_total\{kind="select",tenant="default"\} (\d+)/m.exec(text);
  assert.ok(m !== null, '/metrics counts the rows SELECTs read');
  return Number(m[1]);
}

test('an ad-hoc SELECT stops when its client disconnects', async () => {
  const server = await startServer();
  try {
    assert.equal(
      (
        await request(server.base, 'POST', '/v1/sql', {
          sql: 'CREATE TABLE t (k bigint PRIMARY KEY, v bigint)',
        })
      ).status,
      200,
    );
    for (let at = 0; at < ROWS; at += 50_000) {
      const rows = Array.from({ length: 50_000 }, (_, i) => ({ k: at + i, v: ((at + i) * 7919) % 100_003 }));
      assert.equal((await request(server.base, 'POST', '/v1/tables/t/rows', rows)).status, 200);
    }
    const url = new URL(`${server.base}/v1/sql`);
    // 50 SELECTs over all the rows: seconds of slices, each statement a fraction of a second
    const script = Array.from({ length: STATEMENTS }, () => 'SELECT count(DISTINCT v) AS d FROM t;').join(
      ' ',
    );
    const body = JSON.stringify({ sql: script });
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => undefined); // the socket is destroyed on purpose
    req.end(body);
    // gone once the request is in (half a second), long before its 50 statements could have run
    await new Promise((r) => setTimeout(r, 500));
    req.destroy();
    // scripts run one at a time: a trivial one answers once the script ended (stopped, or at its
    // end on a server that does not stop it), and its rows are counted by then
    assert.equal((await request(server.base, 'POST', '/v1/sql', { sql: 'SELECT 1 AS one' })).status, 200);
    const read = await selectRowsExamined(server);
    assert.ok(read > 0, 'the script ran before its client went away');
    const total = STATEMENTS * ROWS;
    assert.ok(read < total / 2, `the script read ${read} of ${total} rows after its client disconnected`);
  } finally {
    await server.close();
  }
});
