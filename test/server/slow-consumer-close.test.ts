// A subscriber closed as a slow consumer while a large message is still queued for it: the peer keeps
// reading, slowly, and must get to the end of that message and then the whole `error` message before
// the stream ends (API.md: the close is always preceded by an `error`). It used to be cut off one
// close grace period after the close, in the middle of the message: a truncated NDJSON line and no
// error. A peer that reads nothing is still cut off after the grace period.
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { test } from 'node:test';
import { type TestServer, request, sqlOk, startServer, waitUntil } from './helpers.ts';

const ROWS = 3_000;
const PAYLOAD = 'p'.repeat(4_000);

async function setUp(): Promise<TestServer> {
  const server = await startServer({
    closeGraceMs: 200,
    subscriberLimits: { maxBufferedBytes: 256 * 1024, maxBufferedMessages: 1_000, stallTimeoutMs: 60_000 },
  });
  await sqlOk(
    server.base,
    'CREATE TABLE blobs (id INTEGER NOT NULL, payload TEXT, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW blob_view AS SELECT id, payload FROM blobs',
  );
  for (let from = 0; from < ROWS; from += 500) {
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: from + i, payload: PAYLOAD }));
    const r = await request(server.base, 'POST', '/v1/tables/blobs/rows', rows);
    assert.equal(r.status, 200, r.text);
  }
  return server;
}

/**
 * An NDJSON subscriber that reads one chunk every `pauseMs` once `slow` is set (far faster than the
 * close grace period, far slower than the server writes), collecting what arrives until the end.
 */
function slowReader(url: string): {
  readonly text: () => string;
  readonly ended: Promise<void>;
  readonly subscribed: Promise<void>;
  startReading(pauseMs: number): void;
  stopReading(): void;
} {
  const chunks: Buffer[] = [];
  let pauseMs: number | null = null;
  let onSubscribed: () => void = () => undefined;
  let isSubscribed = false;
  const subscribed = new Promise<void>((resolve) => (onSubscribed = resolve));
  let response: import('node:http').IncomingMessage | null = null;
  const ended = new Promise<void>((resolve, reject) => {
    get(url, (res) => {
      response = res;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!isSubscribed && chunk.includes('"snapshot_end"')) {
          isSubscribed = true;
          onSubscribed();
        }
        if (pauseMs !== null) {
          res.pause();
          setTimeout(() => {
            if (pauseMs !== null) res.resume();
          }, pauseMs);
        }
      });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
      res.on('close', () => resolve());
    }).on('error', reject);
  });
  return {
    text: () => Buffer.concat(chunks).toString('utf8'),
    ended,
    subscribed,
    startReading(ms: number) {
      pauseMs = ms;
      response?.resume();
    },
    stopReading() {
      pauseMs = null;
      response?.pause();
    },
  };
}

test(
  'a slow consumer still reading a large message gets its end, then the error, then the close',
  {
    timeout: 120_000,
  },
  async () => {
    const server = await setUp();
    try {
      const reader = slowReader(`${server.base}/v1/views/blob_view/changes`);
      await reader.subscribed;
      reader.stopReading();
      // One epoch of 2 × ROWS changes (about 24 MB, more than the kernel's socket buffers take here:
      // about 20 MB), then a small one that finds it still queued.
      await sqlOk(server.base, "UPDATE blobs SET payload = payload || 'x'");
      const big = server.app.sluice.committedEpoch;
      const r = await request(server.base, 'POST', '/v1/tables/blobs/rows', [{ id: ROWS, payload: 'y' }]);
      assert.equal(r.status, 200);
      await waitUntil(() => server.app.sluice.subscriberCount('blob_view') === 0, 10_000, 'the close');
      reader.startReading(10);
      await reader.ended;
      const text = reader.text();
      // Checked without printing the 24 MB on failure.
      assert.ok(text.endsWith('\n'), `the stream ends with a whole line (${text.length} characters arrived)`);
      const lines = text.slice(0, -1).split('\n');
      const last = JSON.parse(lines[lines.length - 1] ?? '') as {
        type: string;
        code?: string;
        epoch?: number;
      };
      assert.deepEqual(
        { type: last.type, code: last.code, epoch: last.epoch },
        {
          type: 'error',
          code: 'SLOW_CONSUMER',
          epoch: big,
        },
      );
      const before = JSON.parse(lines[lines.length - 2] ?? '') as { type: string; epoch?: number };
      assert.deepEqual({ type: before.type, epoch: before.epoch }, { type: 'changes', epoch: big });
    } finally {
      await server.close();
    }
  },
);
