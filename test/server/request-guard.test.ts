// A web page must never drive the server: bodies only as application/json (415 otherwise), a foreign
// Origin on a state-changing request or a WebSocket upgrade is refused (403 FORBIDDEN_ORIGIN), a Host
// that is not one of the server's names is refused (403 FORBIDDEN_HOST, against DNS rebinding), CORS
// preflights are answered for allowed origins only, and an upgrade of a route that is not a WebSocket
// route is an HTTP error, never a 101. Real server, raw HTTP and WebSocket clients.
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { type TestServer, request, sqlOk, startServer } from './helpers.ts';

interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: { error?: { code: string; message: string } } & Record<string, unknown>;
}

/** One HTTP request with exactly these headers (node's client sets Host only when not given). */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: RawResponse['body'] = {};
          try {
            parsed = JSON.parse(text) as RawResponse['body'];
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A WebSocket handshake: 101 and the first message, or the refusing status and body. */
function handshake(
  url: string,
  options: { origin?: string; host?: string } = {},
): Promise<{ status: number; body: string; first?: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      ...(options.origin !== undefined ? { origin: options.origin } : {}),
      ...(options.host !== undefined ? { headers: { host: options.host } } : {}),
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    ws.once('open', () => {
      // Upgraded: report the first message (if one comes soon), then hang up.
      const timer = setTimeout(() => {
        ws.terminate();
        resolve({ status: 101, body: '' });
      }, 2000);
      ws.once('message', (data) => {
        clearTimeout(timer);
        ws.terminate();
        resolve({ status: 101, body: '', first: JSON.parse(String(data)) as Record<string, unknown> });
      });
    });
    ws.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

const json = { 'content-type': 'application/json' };

describe('request admission: content types, Origin, Host, CORS, upgrades', () => {
  let server: TestServer;
  let base: string;
  let port: number;
  const tables = async (): Promise<string[]> =>
    ((await request(base, 'GET', '/v1/tables')).body.tables as { name: string }[]).map((t) => t.name);

  before(async () => {
    server = await startServer({ admission: { allowedOrigins: ['http://dash.example:3000'] } });
    base = server.base;
    port = Number(new URL(base).port);
    await sqlOk(
      base,
      'CREATE TABLE t (a INTEGER); CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM t',
    );
  });
  after(async () => {
    await server.close();
  });

  test('a text/plain POST /v1/sql (a cross-site form can send one) is 415 and runs nothing', async () => {
    const r = await raw(
      base,
      'POST',
      '/v1/sql',
      { 'content-type': 'text/plain' },
      JSON.stringify({ sql: 'CREATE TABLE csrf (a INTEGER)' }),
    );
    assert.equal(r.status, 415);
    assert.equal(r.body.error?.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.ok(!(await tables()).includes('csrf'));
  });

  test('form-urlencoded, multipart and untyped ingest bodies are 415 and apply nothing', async () => {
    const before = (await request(base, 'GET', '/readyz')).body.epoch;
    const cases: Record<string, string>[] = [
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'content-type': 'application/json; charset=utf-16' },
      {},
    ];
    for (const headers of cases) {
      const r = await raw(base, 'POST', '/v1/tables/t/rows', headers, '[{"a": 1}]');
      assert.equal(r.status, 415, JSON.stringify(headers));
      assert.equal(r.body.error?.code, 'UNSUPPORTED_MEDIA_TYPE');
    }
    assert.equal((await request(base, 'GET', '/readyz')).body.epoch, before);
    const ok = await raw(
      base,
      'POST',
      '/v1/tables/t/rows',
      { 'content-type': 'application/json; charset=UTF-8' },
      '[{"a": 1}]',
    );
    assert.equal(ok.status, 200);
  });

  test('a foreign Origin on a POST is 403 FORBIDDEN_ORIGIN and has no effect; own and absent pass', async () => {
    for (const origin of [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${port + 1}`,
      `https://evil.example:${port}`,
    ]) {
      const r = await raw(
        base,
        'POST',
        '/v1/sql',
        { ...json, origin },
        JSON.stringify({ sql: 'CREATE TABLE evil (a INTEGER)' }),
      );
      assert.equal(r.status, 403, origin);
      assert.equal(r.body.error?.code, 'FORBIDDEN_ORIGIN');
      assert.equal(r.headers['access-control-allow-origin'], undefined);
      const ingest = await raw(base, 'POST', '/v1/tables/t/rows', { ...json, origin }, '[{"a": 2}]');
      assert.equal(ingest.status, 403);
    }
    assert.ok(!(await tables()).includes('evil'));
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      'http://dash.example:3000',
      undefined,
    ]) {
      const r = await raw(
        base,
        'POST',
        '/v1/sql',
        { ...json, ...(origin !== undefined ? { origin } : {}) },
        JSON.stringify({ sql: 'SELECT 1 AS one' }),
      );
      assert.equal(r.status, 200, String(origin));
    }
  });

  test('a WebSocket upgrade from a foreign Origin is refused with our error, never 101', async () => {
    const url = `${server.wsBase}/v1/views/v/subscribe?snapshot=true`;
    const evil = await handshake(url, { origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal((JSON.parse(evil.body) as { error: { code: string } }).error.code, 'FORBIDDEN_ORIGIN');
    const own = await handshake(url, { origin: `http://127.0.0.1:${port}` });
    assert.equal(own.status, 101);
    assert.equal(own.first?.type, 'subscribed');
    const noOrigin = await handshake(url);
    assert.equal(noOrigin.status, 101);
  });

  test('a Host that is not a name of this server is 403 FORBIDDEN_HOST (DNS rebinding), for HTTP and WebSocket', async () => {
    for (const host of [
      `evil.example:${port}`,
      `attacker.127.0.0.1.nip.io:${port}`,
      `127.0.0.1:${port + 1}`,
      `localhost`,
    ]) {
      const r = await raw(base, 'GET', '/v1/views/v/rows', { host });
      assert.equal(r.status, 403, host);
      assert.equal(r.body.error?.code, 'FORBIDDEN_HOST');
      const ws = await handshake(`${server.wsBase}/v1/views/v/subscribe`, { host });
      assert.equal(ws.status, 403, `ws ${host}`);
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `127.0.0.2:${port}`,
      `[::1]:${port}`,
    ]) {
      const r = await raw(base, 'GET', '/v1/views/v/rows', { host });
      assert.equal(r.status, 200, host);
    }
  });

  test('CORS preflights: allowed origins get exactly what they may send, others 403 without CORS headers', async () => {
    const preflight = (origin: string) =>
      raw(base, 'OPTIONS', '/v1/sql', {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      });
    const dash = await preflight('http://dash.example:3000');
    assert.equal(dash.status, 204);
    assert.equal(dash.headers['access-control-allow-origin'], 'http://dash.example:3000');
    assert.match(String(dash.headers['access-control-allow-methods']), /POST/);
    assert.match(String(dash.headers['access-control-allow-headers']), /content-type/);
    assert.match(String(dash.headers.vary), /Origin/);
    const evil = await preflight('http://evil.example');
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error?.code, 'FORBIDDEN_ORIGIN');
    assert.equal(evil.headers['access-control-allow-origin'], undefined);
    // The allowed origin's real request carries the header the browser needs to read the answer.
    const post = await raw(
      base,
      'POST',
      '/v1/sql',
      { ...json, origin: 'http://dash.example:3000' },
      '{"sql":"SELECT 1 AS one"}',
    );
    assert.equal(post.headers['access-control-allow-origin'], 'http://dash.example:3000');
    // A foreign page's GET is answered without it, so the browser does not let the page read it.
    const get = await raw(base, 'GET', '/v1/tables', { origin: 'http://evil.example' });
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    assert.equal((await raw(base, 'OPTIONS', '/v1/sql', {})).status, 204);
  });

  test('a WebSocket upgrade of a route that is not a WebSocket route is an HTTP error, not 101', async () => {
    for (const path of ['/v1/views', '/v1/views/v/rows', '/healthz', '/no/such/route']) {
      const r = await handshake(server.wsBase + path);
      assert.notEqual(r.status, 101, path);
      assert.ok(r.status === 400 || r.status === 404, `${path}: ${r.status}`);
      const body = JSON.parse(r.body) as { error: { code: string } };
      assert.ok(['INVALID_REQUEST', 'NOT_FOUND'].includes(body.error.code), r.body);
    }
  });
});

describe('request admission settings', () => {
  test('--allowed-hosts adds names; * turns the Host check off', async () => {
    const named = await startServer({ admission: { allowedHosts: ['sluice.internal'] } });
    const any = await startServer({ admission: { allowedHosts: ['*'] } });
    try {
      assert.equal((await raw(named.base, 'GET', '/healthz', { host: 'sluice.internal' })).status, 200);
      assert.equal((await raw(named.base, 'GET', '/healthz', { host: 'sluice.internal:1234' })).status, 200);
      assert.equal((await raw(named.base, 'GET', '/healthz', { host: 'evil.example' })).status, 403);
      // A name of this server is also an origin of its own (the console served through it).
      const fromNamed = await raw(
        named.base,
        'POST',
        '/v1/sql',
        { ...json, origin: 'https://sluice.internal' },
        '{"sql":"SELECT 1 AS one"}',
      );
      assert.equal(fromNamed.status, 200);
      assert.equal((await raw(any.base, 'GET', '/healthz', { host: 'whatever.example' })).status, 200);
      // `*` for hosts does not make every origin an own one.
      const evil = await raw(
        any.base,
        'POST',
        '/v1/sql',
        { ...json, origin: 'http://whatever.example' },
        '{"sql":"SELECT 1 AS one"}',
      );
      assert.equal(evil.status, 403);
    } finally {
      await named.close();
      await any.close();
    }
  });

  test('bound to 0.0.0.0: the interface addresses are own names, other names are not', async () => {
    const { buildApp } = await import('../../src/server/app.ts');
    const { networkInterfaces } = await import('node:os');
    const app = await buildApp({ dataDir: null });
    await app.listen({ port: 0, host: '0.0.0.0' });
    try {
      const address = app.server.address();
      assert.ok(address !== null && typeof address === 'object');
      const base = `http://127.0.0.1:${address.port}`;
      const addresses = Object.values(networkInterfaces())
        .flatMap((l) => l ?? [])
        .filter((i) => i.family === 'IPv4')
        .map((i) => i.address);
      for (const a of addresses) {
        assert.equal((await raw(base, 'GET', '/healthz', { host: `${a}:${address.port}` })).status, 200, a);
      }
      assert.equal(
        (await raw(base, 'GET', '/healthz', { host: `rebound.example:${address.port}` })).status,
        403,
      );
      assert.equal((await raw(base, 'GET', '/healthz', { host: `203.0.113.9:${address.port}` })).status, 403);
    } finally {
      await app.close();
    }
  });

  test('invalid settings are refused at start', async () => {
    const { buildApp } = await import('../../src/server/app.ts');
    await assert.rejects(
      buildApp({ dataDir: null, admission: { allowedOrigins: ['evil.example'] } }),
      /invalid origin/,
    );
    await assert.rejects(buildApp({ dataDir: null, admission: { allowedHosts: ['a b'] } }), /invalid host/);
  });
});
