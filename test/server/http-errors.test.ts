// The HTTP layer's own answers are in the API's error shape ({"error": {"code", "message"}}) — a
// malformed request, headers too large, an undecodable or too long URL — and slow or stalled clients
// cannot hold a connection: headers, whole requests and idle keep-alive connections have timeouts.
// Raw TCP clients against a real server.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DEFAULTS } from '../../src/server/defaults.ts';
import { type TestServer, request, startServer } from './helpers.ts';

interface Exchange {
  /** Everything the server sent before it closed (or the wait ended). */
  readonly text: string;
  readonly status: number;
  readonly body: { error?: { code: string; message: string } };
  /** Milliseconds from connecting to the server closing the connection (null: still open). */
  readonly closedAfterMs: number | null;
}

/** Writes `chunks` on a raw connection and collects the answer until the server closes or `waitMs`. */
function exchange(port: number, chunks: readonly (string | Buffer)[], waitMs = 5000): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    let closedAfterMs: number | null = null;
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      let body: Exchange['body'] = {};
      try {
        body = JSON.parse(bodyText) as Exchange['body'];
      } catch {
        // not JSON
      }
      resolve({ text, status, body, closedAfterMs });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closedAfterMs = Date.now() - started;
      finish();
    });
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
  });
}

describe('HTTP-level errors in our shape', () => {
  let server: TestServer;
  let port: number;

  before(async () => {
    server = await startServer();
    port = Number(new URL(server.base).port);
  });
  after(async () => {
    await server.close();
  });

  const assertOurs = (r: Exchange, status: number, code: string): void => {
    assert.equal(r.status, status, r.text.slice(0, 300));
    assert.equal(r.body.error?.code, code, r.text.slice(0, 300));
    assert.equal(typeof r.body.error?.message, 'string');
    assert.ok(!('statusCode' in r.body), "not fastify's shape");
  };

  test('a malformed request line is 400 INVALID_REQUEST', async () => {
    assertOurs(await exchange(port, ['GARBAGE\r\n\r\n']), 400, 'INVALID_REQUEST');
    assertOurs(
      await exchange(port, ['GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n']),
      400,
      'INVALID_REQUEST',
    );
  });

  test('headers larger than the limit are 431 HEADERS_TOO_LARGE', async () => {
    const big = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    assertOurs(await exchange(port, [big]), 431, 'HEADERS_TOO_LARGE');
    const longUrl = `GET /v1/views?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    assertOurs(await exchange(port, [longUrl]), 431, 'HEADERS_TOO_LARGE');
  });

  test('a URL the router cannot decode is 400, a too long name 414, both our shape', async () => {
    const bad = await request(server.base, 'GET', '/v1/views/%E0%A4%A');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.code, 'INVALID_REQUEST');
    const long = await request(server.base, 'GET', `/v1/views/${'v'.repeat(300)}`);
    assert.equal(long.status, 414);
    assert.equal(long.body.error?.code, 'URI_TOO_LONG');
    assert.ok(!('statusCode' in long.body));
  });
});

describe('connection timeouts', () => {
  test('the defaults are short: headers 10 s, whole request 30 s, idle keep-alive 5 s', () => {
    assert.deepEqual(DEFAULTS.timeouts, { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 });
  });

  test('a partial body, partial headers and an idle keep-alive connection are cut in time', async () => {
    const server = await startServer({ timeouts: { headersMs: 400, requestMs: 800, keepAliveMs: 300 } });
    const port = Number(new URL(server.base).port);
    try {
      const head = `POST /v1/sql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
      const [body, headers, idle] = await Promise.all([
        // Headers complete, 10 of 100 body bytes, then nothing.
        exchange(port, [head, '{"sql": "S'], 5000),
        // Half a header block, then nothing.
        exchange(port, [`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `], 5000),
        // A complete request, answered; then the connection sits idle.
        exchange(port, [`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`], 5000),
      ]);
      assert.ok(
        body.closedAfterMs !== null && body.closedAfterMs < 3000,
        `partial body held ${body.closedAfterMs} ms`,
      );
      assert.equal(body.status, 408, body.text);
      assert.equal(body.body.error?.code, 'REQUEST_TIMEOUT');
      assert.ok(
        headers.closedAfterMs !== null && headers.closedAfterMs < 3000,
        `partial headers held ${headers.closedAfterMs} ms`,
      );
      assert.equal(headers.status, 408, headers.text);
      assert.equal(headers.body.error?.code, 'REQUEST_TIMEOUT');
      assert.match(idle.text, /^HTTP\/1\.1 200/);
      assert.ok(
        idle.closedAfterMs !== null && idle.closedAfterMs < 3000,
        `idle keep-alive held ${idle.closedAfterMs} ms`,
      );
      // The server still serves.
      assert.equal((await request(server.base, 'GET', '/healthz')).status, 200);
    } finally {
      await server.close();
    }
  });

  test('a headers timeout above the request timeout is refused', async () => {
    const { buildApp } = await import('../../src/server/app.ts');
    await assert.rejects(
      buildApp({ dataDir: null, timeouts: { headersMs: 5000, requestMs: 1000 } }),
      /headers timeout/,
    );
  });
});
