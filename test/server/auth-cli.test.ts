// Authentication as a user meets it, against real `sluice start` processes: the bootstrap operator
// token from SLUICE_BOOTSTRAP_TOKEN (never printed) or generated and printed exactly once, a
// non-loopback bind refused without a way in, `sluice token` and `sluice sql` with a token, no token
// in any log line even at trace level, and HTTPS/WSS with a certificate made for the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { removeDir, tempDir } from './helpers.ts';
import { OPERATOR_TOKEN, WsClient, call, runCli, spawnSluice } from './auth-helpers.ts';

const TOKEN_LINE = /sluice: (sluice_[0-9a-f]{16}_[A-Za-z0-9_-]{43})\n/;

test(
  'SLUICE_BOOTSTRAP_TOKEN: the operator token, never printed; sluice token and sluice sql use tokens; no token in the logs',
  { timeout: 180_000 },
  async () => {
    const dir = tempDir();
    const server = await spawnSluice(['--data-dir', dir, '--log-level', 'trace'], {
      SLUICE_AUTH: '1',
      SLUICE_BOOTSTRAP_TOKEN: OPERATOR_TOKEN,
    });
    const base = `http://127.0.0.1:${server.port}`;
    const url = ['--url', base];
    let writer = '';
    try {
      assert.match(server.output(), /authentication on: every request needs a bearer token/);
      assert.doesNotMatch(server.output(), /shown only now/);
      assert.equal((await call(base, 'GET', '/v1/views')).status, 401);
      assert.equal((await call(base, 'GET', '/v1/views', { token: OPERATOR_TOKEN })).status, 200);

      const created = await runCli(['token', 'create', '--role', 'writer', ...url], {
        SLUICE_TOKEN: OPERATOR_TOKEN,
      });
      assert.equal(created.status, 0, created.stderr);
      writer = created.stdout.trim();
      assert.match(writer, /^sluice_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      assert.match(created.stderr, /created token [0-9a-f]{16} \(role writer, tenant default\)/);
      const id = writer.split('_')[1] as string;

      const noToken = await runCli(['sql', ...url, '-c', 'SHOW TABLES']);
      assert.equal(noToken.status, 1);
      assert.match(noToken.stdout + noToken.stderr, /UNAUTHENTICATED/);
      const subscribe = await runCli([
        'subscribe',
        'nothing',
        ...url,
        '--token',
        'sluice_0123456789abcdef_' + 'q'.repeat(43),
      ]);
      assert.equal(subscribe.status, 1);
      assert.match(subscribe.stderr, /UNAUTHENTICATED/);
      const setup = await runCli(['sql', ...url, '--token', OPERATOR_TOKEN, '-c', 'CREATE TABLE t (x INT)']);
      assert.equal(setup.status, 0, setup.stderr);
      const insert = await runCli(['sql', ...url, '-c', 'INSERT INTO t VALUES (7)'], {
        SLUICE_TOKEN: writer,
      });
      assert.equal(insert.status, 0, insert.stderr);
      const ddl = await runCli(['sql', ...url, '-c', 'DROP TABLE t'], { SLUICE_TOKEN: writer });
      assert.equal(ddl.status, 1);
      assert.match(ddl.stdout + ddl.stderr, /FORBIDDEN/);

      // A wrong token and a WebSocket with a first auth message, so the log has seen every path.
      assert.equal(
        (await call(base, 'GET', '/v1/views', { token: 'sluice_0123456789abcdef_' + 'w'.repeat(43) })).status,
        401,
      );
      await runCli([
        'sql',
        ...url,
        '--token',
        OPERATOR_TOKEN,
        '-c',
        'CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM t',
      ]);
      const ws = new WsClient(`ws://127.0.0.1:${server.port}/v1/views/v/subscribe`);
      await ws.open();
      ws.socket.send(JSON.stringify({ type: 'auth', token: writer }));
      await ws.waitFor((m) => m.type === 'subscribed');
      ws.close();

      const list = await runCli(['token', 'list', ...url], { SLUICE_TOKEN: OPERATOR_TOKEN });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`${id} +\\| writer`));
      assert.ok(!list.stdout.includes(writer));
      const revoke = await runCli(['token', 'revoke', id, ...url], { SLUICE_TOKEN: OPERATOR_TOKEN });
      assert.equal(revoke.status, 0, revoke.stderr);
      assert.equal((await call(base, 'GET', '/v1/views', { token: writer })).status, 401);
      const forbidden = await runCli(['token', 'list', ...url], { SLUICE_TOKEN: writer });
      assert.equal(forbidden.status, 1);
      assert.match(forbidden.stderr, /UNAUTHENTICATED/);
    } finally {
      assert.equal(await server.stop(), 0);
      removeDir(dir);
    }
    const log = server.output();
    assert.match(log, /"level":10|"level":20|"level":30/, 'the log was written');
    assert.notEqual(writer, '');
    for (const secret of [OPERATOR_TOKEN, OPERATOR_TOKEN.split('_')[2] as string, writer])
      assert.ok(!log.includes(secret), 'no token in the server output');
  },
);

test(
  'a generated operator token is printed on the first start with authentication only',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    try {
      const first = await spawnSluice(['--data-dir', dir, '--auth', '--log-level', 'info']);
      const m = TOKEN_LINE.exec(first.output());
      assert.ok(m !== null, first.output());
      const token = m[1] as string;
      assert.equal(first.output().split(token).length, 2, 'printed exactly once');
      assert.equal(
        (await call(`http://127.0.0.1:${first.port}`, 'GET', '/v1/tenants', { token })).status,
        200,
      );
      assert.equal(await first.stop(), 0);
      const second = await spawnSluice(['--data-dir', dir, '--auth', '--log-level', 'info']);
      assert.doesNotMatch(second.output(), /shown only now/);
      assert.equal(TOKEN_LINE.exec(second.output()), null);
      assert.equal(
        (await call(`http://127.0.0.1:${second.port}`, 'GET', '/v1/tenants', { token })).status,
        200,
      );
      assert.equal(await second.stop(), 0);
    } finally {
      removeDir(dir);
    }
  },
);

test(
  'a non-loopback address: refused without a way in, or with SLUICE_AUTH=0; with a token it starts with authentication',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    try {
      const refused = await runCli(['start', '--host', '0.0.0.0', '--port', '0', '--data-dir', dir]);
      assert.equal(refused.status, 2);
      assert.match(
        refused.stderr,
        /--host 0\.0\.0\.0 is not a loopback address, so every request will need a token, and there is none yet/,
      );
      const off = await runCli(['start', '--host', '0.0.0.0', '--port', '0', '--data-dir', dir, '--auth'], {
        SLUICE_AUTH: '0',
      });
      assert.equal(off.status, 2);
      assert.match(off.stderr, /authentication cannot be off/);
      const server = await spawnSluice(['--host', '0.0.0.0', '--data-dir', dir, '--log-level', 'silent'], {
        SLUICE_BOOTSTRAP_TOKEN: OPERATOR_TOKEN,
      });
      try {
        assert.match(server.output(), /authentication on/);
        const base = `http://127.0.0.1:${server.port}`;
        assert.equal((await call(base, 'GET', '/v1/views')).status, 401);
        assert.equal((await call(base, 'GET', '/v1/views', { token: OPERATOR_TOKEN })).status, 200);
      } finally {
        assert.equal(await server.stop(), 0);
      }
      // Tokens exist now: the same bind starts without --auth or the bootstrap variable.
      const again = await spawnSluice(['--host', '0.0.0.0', '--data-dir', dir, '--log-level', 'silent']);
      try {
        assert.equal((await call(`http://127.0.0.1:${again.port}`, 'GET', '/v1/views')).status, 401);
      } finally {
        await again.stop();
      }
    } finally {
      removeDir(dir);
    }
  },
);

function httpsGet(
  port: number,
  path: string,
  ca: string,
  token: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        ca,
        servername: 'localhost',
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test(
  'TLS: HTTPS and WSS with a certificate made for the test, trusted by real clients',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const ca = readFileSync(cert, 'utf8');
    const server = await spawnSluice(
      ['--data-dir', join(dir, 'data'), '--tls-cert', cert, '--tls-key', key, '--log-level', 'silent'],
      {
        SLUICE_AUTH: '1',
        SLUICE_BOOTSTRAP_TOKEN: OPERATOR_TOKEN,
      },
    );
    try {
      assert.equal(server.scheme, 'https');
      const health = await httpsGet(server.port, '/v1/views', ca, OPERATOR_TOKEN);
      assert.equal(health.status, 200);
      assert.deepEqual(JSON.parse(health.body), { views: [] });
      // An untrusted client is refused by the handshake; plain HTTP gets no API answer.
      await assert.rejects(
        new Promise((resolve, reject) => {
          const r = httpsRequest({ host: '127.0.0.1', port: server.port, path: '/healthz' }, resolve);
          r.on('error', reject);
          r.end();
        }),
        /self[- ]signed|unable to verify/i,
      );
      await assert.rejects(fetch(`http://127.0.0.1:${server.port}/healthz`));
      const created = await runCli(
        [
          'sql',
          '--url',
          `https://localhost:${server.port}`,
          '-c',
          'CREATE TABLE t (x INT); CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM t',
        ],
        { SLUICE_TOKEN: OPERATOR_TOKEN, NODE_EXTRA_CA_CERTS: cert },
      );
      assert.equal(created.status, 0, created.stderr);
      const ws = new WsClient(`wss://localhost:${server.port}/v1/views/v/subscribe?snapshot=true`, {
        ca,
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      });
      await ws.waitFor((m) => m.type === 'snapshot_end');
      ws.close();
    } finally {
      await server.stop();
      removeDir(dir);
    }
  },
);
