// The HTTP/WebSocket contract's limits (API.md) against a real server: an oversize body applies
// nothing, retention by epochs and by time (RESUME_TOO_OLD), and a slow consumer cut off with its last
// epoch that resumes without a gap.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Message, WsClient, request, sqlOk, startServer, waitUntil } from './helpers.ts';
describe('limits: body size, retention, slow consumers', () => {
  test('an oversize body is 413 PAYLOAD_TOO_LARGE and applies nothing', async () => {
    const server = await startServer({ bodyLimit: 2048 });
    try {
      await sqlOk(server.base, 'CREATE TABLE t (id INTEGER NOT NULL, s TEXT, PRIMARY KEY (id))');
      const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, s: 'x'.repeat(50) }));
      const r = await request(server.base, 'POST', '/v1/tables/t/rows', rows);
      assert.equal(r.status, 413);
      assert.equal(r.body.error?.code, 'PAYLOAD_TOO_LARGE');
      const count = await sqlOk(server.base, 'SELECT COUNT(*) AS n FROM t');
      assert.equal((count.body.results as { rows: { n: number }[] }[])[0]?.rows[0]?.n, 0);
      assert.equal(server.app.sluice.committedEpoch, 0);
    } finally {
      await server.close();
    }
  });

  test('retention by epochs: resuming before it is RESUME_TOO_OLD (4409 / HTTP 410)', async () => {
    const server = await startServer({ retention: { epochs: 3, ms: null } });
    const clients: WsClient[] = [];
    try {
      await sqlOk(
        server.base,
        'CREATE TABLE t (id INTEGER NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n FROM t',
      );
      for (let i = 0; i < 10; i++) await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: i }]);
      const old = new WsClient(`${server.wsBase}/v1/views/c/subscribe?resumeFrom=5`);
      clients.push(old);
      assert.equal(await old.waitClosed(), 4409);
      assert.equal(old.messages[0]?.code, 'RESUME_TOO_OLD');
      const http = await request(server.base, 'GET', '/v1/views/c/changes?resumeFrom=2');
      assert.equal(http.status, 410);
      assert.equal(http.body.error?.code, 'RESUME_TOO_OLD');
      const recent = new WsClient(`${server.wsBase}/v1/views/c/subscribe?resumeFrom=7`);
      clients.push(recent);
      await recent.waitEpoch(10);
      assert.deepEqual(
        recent.of('changes').map((m) => m.epoch),
        [8, 9, 10],
      );
    } finally {
      for (const c of clients) c.close();
      await server.close();
    }
  });

  test('retention by time: old changes expire', async () => {
    const server = await startServer({ retention: { epochs: null, ms: 200 }, pruneIntervalMs: 20 });
    const clients: WsClient[] = [];
    try {
      await sqlOk(
        server.base,
        'CREATE TABLE t (id INTEGER NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW c AS SELECT COUNT(*) AS n FROM t',
      );
      for (let i = 0; i < 3; i++) await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: i }]);
      const fresh = new WsClient(`${server.wsBase}/v1/views/c/subscribe?resumeFrom=1`);
      clients.push(fresh);
      await fresh.waitEpoch(3);
      // once an epoch after 1 has aged out, resuming from 1 is refused (wait on the condition)
      await waitUntil(
        async () => {
          // a 200 is a live stream: read the status only, then drop the stream
          const controller = new AbortController();
          const res = await fetch(`${server.base}/v1/views/c/changes?resumeFrom=1`, {
            signal: controller.signal,
          });
          controller.abort();
          return res.status === 410;
        },
        10_000,
        'the changelog to age out',
      );
    } finally {
      for (const c of clients) c.close();
      await server.close();
    }
  });

  test('a slow consumer gets SLOW_CONSUMER with its last epoch, 4429, and can resume without a gap', async () => {
    const server = await startServer({
      subscriberLimits: { maxBufferedBytes: 256 * 1024, maxBufferedMessages: 1000 },
      closeGraceMs: 20_000,
    });
    const clients: WsClient[] = [];
    try {
      await sqlOk(
        server.base,
        'CREATE TABLE blobs (id INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW blob_view AS SELECT id, payload FROM blobs',
      );
      const slow = new WsClient(`${server.wsBase}/v1/views/blob_view/subscribe?snapshot=false`);
      clients.push(slow);
      await slow.waitFor((m) => m.type === 'subscribed');
      slow.pause();
      const payload = 'p'.repeat(10_000);
      let id = 0;
      let closedServerSide = false;
      // Bounded: at most 400 batches of ~1 MB; the server must give up on the subscriber long before.
      for (let batch = 0; batch < 400 && !closedServerSide; batch++) {
        const rows = Array.from({ length: 100 }, () => ({ id: id++, payload }));
        const r = await request(server.base, 'POST', '/v1/tables/blobs/rows', rows);
        assert.equal(r.status, 200);
        closedServerSide = server.app.sluice.subscriberCount('blob_view') === 0;
      }
      assert.ok(closedServerSide, 'the slow subscriber was cut off');
      const metrics = await request(server.base, 'GET', '/metrics');
      assert.match(
        metrics.text,
        /sluice_slow_consumer_disconnects_total\{view="blob_view",tenant="default"\} 1/,
      );
      slow.resume();
      assert.equal(await slow.waitClosed(30_000), 4429);
      const error = slow.of('error')[0] as Message;
      assert.equal(error.code, 'SLOW_CONSUMER');
      const delivered = slow.of('changes').map((m) => m.epoch as number);
      assert.equal(
        error.epoch,
        delivered[delivered.length - 1] ?? 0,
        'the error names the last epoch delivered',
      );
      delivered.forEach((e, i) => assert.equal(e, i + 1, 'delivered epochs have no gap'));
      const last = server.app.sluice.committedEpoch;
      const resumed = new WsClient(
        `${server.wsBase}/v1/views/blob_view/subscribe?resumeFrom=${String(error.epoch)}`,
      );
      clients.push(resumed);
      await resumed.waitEpoch(last, 30_000);
      const rest = resumed.of('changes').map((m) => m.epoch as number);
      assert.deepEqual(
        [...delivered, ...rest],
        Array.from({ length: last }, (_, i) => i + 1),
      );
    } finally {
      for (const c of clients) c.close();
      await server.close();
    }
  });
});
