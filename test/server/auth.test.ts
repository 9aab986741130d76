// Authentication and roles against the real in-process server: every role (and no token, a wrong one,
// a revoked one) against every class of endpoint, the 401/403 bodies, scripts refused whole,
// WebSocket header and first-message authentication, revocation, the token cache's bounds, and what
// the token file holds (a KDF hash, never a token).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startServer, tempDir, waitUntil } from './helpers.ts';
import { OPERATOR_TOKEN, WsClient, call, createToken, startAuthServer } from './auth-helpers.ts';
import { tokenId } from '../../src/storage/token-store.ts';

const SETUP = `CREATE TABLE orders (id INT PRIMARY KEY, amount INT NOT NULL);
CREATE MATERIALIZED VIEW totals AS SELECT COUNT(*) AS n, SUM(amount) AS total FROM orders`;

type Who = 'none' | 'garbage' | 'revoked' | 'reader' | 'writer' | 'admin' | 'operator';
const WHO: readonly Who[] = ['none', 'garbage', 'revoked', 'reader', 'writer', 'admin', 'operator'];

test('every role against every endpoint class: the documented status, and refused requests change nothing', async () => {
  const server = await startAuthServer();
  try {
    const tokens: Partial<Record<Who, string | null>> = {
      none: null,
      garbage: 'sluice_0000000000000000_' + 'x'.repeat(40),
      operator: OPERATOR_TOKEN,
    };
    for (const role of ['reader', 'writer', 'admin'] as const)
      tokens[role] = (await createToken(server.base, OPERATOR_TOKEN, role)).token;
    const revoked = await createToken(server.base, OPERATOR_TOKEN, 'admin');
    assert.equal(
      (
        await call(server.base, 'DELETE', `/v1/tenants/default/tokens/${revoked.id}`, {
          token: OPERATOR_TOKEN,
        })
      ).status,
      200,
    );
    tokens.revoked = revoked.token;
    assert.equal(
      (await call(server.base, 'POST', '/v1/sql', { token: OPERATOR_TOKEN, body: { sql: SETUP } })).status,
      200,
    );

    let nextId = 1;
    // Each case: the request, and the least role that may make it (open: no token needed).
    const cases: {
      name: string;
      least: 'open' | 'reader' | 'writer' | 'admin' | 'operator';
      ok: number;
      run: (t: string | null) => Promise<number>;
    }[] = [
      {
        name: 'GET /healthz',
        least: 'open',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/healthz', { token: t })).status,
      },
      {
        name: 'GET / (console shell)',
        least: 'open',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/', { token: t })).status,
      },
      {
        name: 'GET /v1/views',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/v1/views', { token: t })).status,
      },
      {
        name: 'GET /v1/views/totals/rows',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/v1/views/totals/rows', { token: t })).status,
      },
      {
        name: 'GET /v1/tables/orders',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/v1/tables/orders', { token: t })).status,
      },
      {
        name: 'GET /metrics',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/metrics', { token: t })).status,
      },
      {
        name: 'GET /openapi.json',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/openapi.json', { token: t })).status,
      },
      {
        name: 'GET /docs (API reference)',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/docs/static/index.html', { token: t })).status,
      },
      {
        name: 'GET /console/metrics-history',
        least: 'reader',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/console/metrics-history', { token: t })).status,
      },
      {
        name: 'GET /v1/nope (unknown route)',
        least: 'reader',
        ok: 404,
        run: async (t) => (await call(server.base, 'GET', '/v1/nope', { token: t })).status,
      },
      {
        name: 'SQL SELECT',
        least: 'reader',
        ok: 200,
        run: async (t) =>
          (await call(server.base, 'POST', '/v1/sql', { token: t, body: { sql: 'SELECT * FROM totals' } }))
            .status,
      },
      {
        name: 'SQL SHOW / EXPLAIN',
        least: 'reader',
        ok: 200,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/sql', {
              token: t,
              body: { sql: 'SHOW VIEWS; EXPLAIN SELECT * FROM orders' },
            })
          ).status,
      },
      {
        name: 'SQL INSERT',
        least: 'writer',
        ok: 200,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/sql', {
              token: t,
              body: { sql: `INSERT INTO orders VALUES (${nextId++}, 1)` },
            })
          ).status,
      },
      {
        name: 'POST /v1/tables/orders/rows',
        least: 'writer',
        ok: 200,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/tables/orders/rows', {
              token: t,
              body: [{ id: nextId++, amount: 1 }],
            })
          ).status,
      },
      {
        name: 'SQL CREATE + DROP TABLE',
        least: 'admin',
        ok: 200,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/sql', {
              token: t,
              body: { sql: 'CREATE TABLE scratch (x INT); DROP TABLE scratch' },
            })
          ).status,
      },
      {
        name: 'GET tenant tokens',
        least: 'admin',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/v1/tenants/default/tokens', { token: t })).status,
      },
      {
        name: 'POST tenant token (reader)',
        least: 'admin',
        ok: 201,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/tenants/default/tokens', {
              token: t,
              body: { role: 'reader' },
            })
          ).status,
      },
      {
        name: 'POST tenant token (operator)',
        least: 'operator',
        ok: 201,
        run: async (t) =>
          (
            await call(server.base, 'POST', '/v1/tenants/default/tokens', {
              token: t,
              body: { role: 'operator' },
            })
          ).status,
      },
      {
        name: 'GET /v1/tenants',
        least: 'operator',
        ok: 200,
        run: async (t) => (await call(server.base, 'GET', '/v1/tenants', { token: t })).status,
      },
      {
        name: 'POST /v1/tenants',
        least: 'operator',
        ok: 201,
        run: async (t) =>
          (await call(server.base, 'POST', '/v1/tenants', { token: t, body: { name: 'acme' } })).status,
      },
    ];
    const rank = { reader: 0, writer: 1, admin: 2, operator: 3 } as const;
    const table: string[] = [`${'endpoint'.padEnd(32)} ${WHO.map((w) => w.padStart(8)).join(' ')}`];
    const wrong: string[] = [];
    let writes = 0;
    for (const c of cases) {
      const row: string[] = [];
      for (const who of WHO) {
        const status = await c.run(tokens[who] ?? null);
        const expected =
          c.least === 'open'
            ? c.ok
            : who === 'none' || who === 'garbage' || who === 'revoked'
              ? 401
              : rank[who as keyof typeof rank] >= rank[c.least]
                ? c.ok
                : 403;
        if (status !== expected) wrong.push(`${c.name} as ${who}: ${status}, expected ${expected}`);
        if ((c.name === 'SQL INSERT' || c.name.startsWith('POST /v1/tables')) && status === 200) writes += 1;
        row.push(String(status).padStart(8));
      }
      table.push(`${c.name.padEnd(32)} ${row.join(' ')}`);
    }
    console.log(table.join('\n'));
    assert.deepEqual(wrong, []);
    // Only the accepted writes took effect: a refused INSERT or ingest changed nothing.
    const rows = await call(server.base, 'GET', '/v1/views/totals/rows', { token: OPERATOR_TOKEN });
    assert.equal((rows.body.rows as { n: number }[])[0]?.n, writes);
    assert.equal(writes, 6); // writer, admin, operator × (SQL INSERT, ingest)
  } finally {
    await server.close();
  }
});

test('401 and 403 answers: code, message, WWW-Authenticate; a malformed header is 401 too', async () => {
  const server = await startAuthServer();
  try {
    const none = await call(server.base, 'GET', '/v1/views');
    assert.equal(none.status, 401);
    assert.equal(none.body.error?.code, 'UNAUTHENTICATED');
    assert.match(none.body.error?.message ?? '', /no bearer token/);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="sluice"');
    const bad = await call(server.base, 'GET', '/v1/views', {
      token: 'sluice_0123456789abcdef_' + 'y'.repeat(43),
    });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.get('www-authenticate'), 'Bearer realm="sluice", error="invalid_token"');
    const basic = await call(server.base, 'GET', '/v1/views', { authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(basic.status, 401);
    assert.match(basic.body.error?.message ?? '', /not a bearer token/);
    const reader = await createToken(server.base, OPERATOR_TOKEN, 'reader');
    const ingest = await call(server.base, 'POST', '/v1/tables/x/rows', { token: reader.token, body: [] });
    assert.equal(ingest.status, 403);
    assert.equal(ingest.body.error?.code, 'FORBIDDEN');
    assert.match(ingest.body.error?.message ?? '', /role "reader" may not ingest rows/);
  } finally {
    await server.close();
  }
});

test('a script with one statement above the role is refused whole, before any statement runs', async () => {
  const server = await startAuthServer();
  try {
    await call(server.base, 'POST', '/v1/sql', { token: OPERATOR_TOKEN, body: { sql: SETUP } });
    const writer = await createToken(server.base, OPERATOR_TOKEN, 'writer');
    const script =
      'INSERT INTO orders VALUES (1, 10);\nINSERT INTO orders VALUES (2, 20);\n  DROP MATERIALIZED VIEW totals';
    const r = await call(server.base, 'POST', '/v1/sql', { token: writer.token, body: { sql: script } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error?.code, 'FORBIDDEN');
    assert.match(r.body.error?.message ?? '', /role "writer" may not run DROP MATERIALIZED VIEW/);
    assert.deepEqual(r.body.error?.position, { line: 3, column: 3 });
    assert.deepEqual(r.body.results, []);
    const rows = await call(server.base, 'GET', '/v1/tables/orders/rows', { token: writer.token });
    assert.deepEqual(rows.body.rows, []);
    const views = await call(server.base, 'GET', '/v1/views', { token: writer.token });
    assert.equal((views.body.views as unknown[]).length, 1);
    // The same script's DML alone runs.
    const ok = await call(server.base, 'POST', '/v1/sql', {
      token: writer.token,
      body: { sql: script.split('\n').slice(0, 2).join('\n') },
    });
    assert.equal(ok.status, 200);
  } finally {
    await server.close();
  }
});

test('WebSocket: the Authorization header, a first auth message, and 4401 after an error message', async () => {
  const server = await startAuthServer({ auth: { enabled: true, wsAuthTimeoutMs: 300 } });
  try {
    await call(server.base, 'POST', '/v1/sql', { token: OPERATOR_TOKEN, body: { sql: SETUP } });
    const reader = await createToken(server.base, OPERATOR_TOKEN, 'reader');
    const url = `${server.wsBase}/v1/views/totals/subscribe?snapshot=true`;

    const byHeader = new WsClient(url, { headers: { authorization: `Bearer ${reader.token}` } });
    await byHeader.waitFor((m) => m.type === 'snapshot_end');
    byHeader.close();

    const byMessage = new WsClient(url);
    await byMessage.open();
    byMessage.socket.send(JSON.stringify({ type: 'auth', token: reader.token }));
    await byMessage.waitFor((m) => m.type === 'snapshot_end');
    byMessage.close();

    const refusals: [string, (c: WsClient) => void, Record<string, string>][] = [
      [
        'a wrong token in the message',
        (c) => c.socket.send(JSON.stringify({ type: 'auth', token: 'nope' })),
        {},
      ],
      ['a first message that is not auth', (c) => c.socket.send('{"type":"hello"}'), {}],
      ['no message in time', () => undefined, {}],
      [
        'a wrong token in the header',
        () => undefined,
        { authorization: 'Bearer sluice_0123456789abcdef_' + 'z'.repeat(43) },
      ],
    ];
    for (const [what, act, headers] of refusals) {
      const c = new WsClient(url, { headers });
      await c.open();
      act(c);
      assert.equal(await c.waitClosed(), 4401, what);
      assert.equal(c.messages.length, 1, what);
      assert.equal(c.messages[0]?.type, 'error', what);
      assert.equal(c.messages[0]?.code, 'UNAUTHENTICATED', what);
    }
  } finally {
    await server.close();
  }
});

test('revocation takes effect at once: cached requests, open subscriptions and NDJSON streams end', async () => {
  const server = await startAuthServer({ auth: { enabled: true, cacheTtlMs: 600_000 } });
  try {
    await call(server.base, 'POST', '/v1/sql', { token: OPERATOR_TOKEN, body: { sql: SETUP } });
    const reader = await createToken(server.base, OPERATOR_TOKEN, 'reader');
    assert.equal((await call(server.base, 'GET', '/v1/views', { token: reader.token })).status, 200);
    const sub = new WsClient(`${server.wsBase}/v1/views/totals/subscribe`, {
      headers: { authorization: `Bearer ${reader.token}` },
    });
    await sub.waitFor((m) => m.type === 'subscribed');
    const stream = await fetch(`${server.base}/v1/views/totals/changes`, {
      headers: { authorization: `Bearer ${reader.token}` },
    });
    assert.equal(stream.status, 200);
    const reading = (async () => {
      try {
        for await (const _chunk of stream.body ?? []) void _chunk;
        return 'ended';
      } catch {
        return 'ended';
      }
    })();

    const list = await call(server.base, 'GET', '/v1/tenants/default/tokens', { token: OPERATOR_TOKEN });
    const listed = (list.body.tokens as { id: string; revoked: boolean; lastUsedAt: string | null }[]).find(
      (t) => t.id === reader.id,
    );
    assert.equal(listed?.revoked, false);
    assert.notEqual(listed?.lastUsedAt, null);
    assert.ok(!list.text.includes(reader.token), 'a listing holds no secret');

    const revoked = await call(server.base, 'DELETE', `/v1/tenants/default/tokens/${reader.id}`, {
      token: OPERATOR_TOKEN,
    });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.revoked, true);
    assert.equal((await call(server.base, 'GET', '/v1/views', { token: reader.token })).status, 401);
    assert.equal(await sub.waitClosed(), 4401);
    assert.equal(sub.messages.at(-1)?.code, 'UNAUTHENTICATED');
    assert.equal(await reading, 'ended');
    assert.equal(
      (
        await call(server.base, 'DELETE', `/v1/tenants/default/tokens/${reader.id}`, {
          token: OPERATOR_TOKEN,
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await call(server.base, 'DELETE', '/v1/tenants/default/tokens/ffffffffffffffff', {
          token: OPERATOR_TOKEN,
        })
      ).status,
      404,
    );
    assert.equal(
      (await call(server.base, 'GET', '/v1/tenants/acme/tokens', { token: OPERATOR_TOKEN })).status,
      404,
    );
  } finally {
    await server.close();
  }
});

test('an admin manages its tenant tokens but not operator ones', async () => {
  const server = await startAuthServer();
  try {
    const admin = await createToken(server.base, OPERATOR_TOKEN, 'admin');
    const list = await call(server.base, 'GET', '/v1/tenants/default/tokens', { token: admin.token });
    const roles = (list.body.tokens as { id: string; role: string }[]).map((t) => t.role);
    assert.deepEqual(roles, ['admin'], 'operator tokens are not listed to an admin');
    // An operator token's id is not there for an admin: revoking it is NOT_FOUND, as a missing id.
    const r = await call(server.base, 'DELETE', `/v1/tenants/default/tokens/${tokenId(OPERATOR_TOKEN)}`, {
      token: admin.token,
    });
    assert.equal(r.status, 404);
    const asOperator = await call(server.base, 'POST', '/v1/tenants/default/tokens', {
      token: admin.token,
      body: { role: 'operator' },
    });
    assert.equal(asOperator.status, 403);
    assert.equal((await call(server.base, 'GET', '/v1/views', { token: OPERATOR_TOKEN })).status, 200);
    const bad = await call(server.base, 'POST', '/v1/tenants/default/tokens', {
      token: admin.token,
      body: { role: 'root' },
    });
    assert.equal(bad.status, 400);
  } finally {
    await server.close();
  }
});

test('the token cache: one KDF run per token while cached, bounded in size', async () => {
  const server = await startAuthServer({ auth: { enabled: true, cacheSize: 3 } });
  try {
    const auth = server.app.sluiceAuth.authenticator;
    const reader = await createToken(server.base, OPERATOR_TOKEN, 'reader');
    const before = auth.verifications;
    await Promise.all(
      Array.from({ length: 20 }, () => call(server.base, 'GET', '/v1/views', { token: reader.token })),
    );
    assert.equal(auth.verifications - before, 1);
    const many = [];
    for (let i = 0; i < 6; i++) many.push(await createToken(server.base, OPERATOR_TOKEN, 'reader'));
    for (const t of many)
      assert.equal((await call(server.base, 'GET', '/v1/views', { token: t.token })).status, 200);
    assert.ok(auth.cachedTokens <= 3, `cache holds ${auth.cachedTokens}`);
  } finally {
    await server.close();
  }
});

test('the token file holds scrypt hashes, never a token, and tokens survive a restart', async () => {
  const dir = tempDir();
  try {
    let server = await startServer({ dataDir: dir, auth: { enabled: true, bootstrapToken: OPERATOR_TOKEN } });
    const reader = await createToken(server.base, OPERATOR_TOKEN, 'reader');
    assert.equal((await call(server.base, 'GET', '/v1/views', { token: reader.token })).status, 200);
    await server.close();
    const bytes = Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))));
    for (const token of [reader.token, OPERATOR_TOKEN]) {
      // Everything after the id: a base64url secret may itself hold '_' (a short piece of it could
      // occur in any file by chance).
      const secret = token.split('_').slice(2).join('_');
      assert.equal(bytes.indexOf(token), -1);
      assert.equal(bytes.indexOf(secret), -1, 'the secret part is not stored either');
    }
    assert.ok(bytes.indexOf(`scrypt$16384$8$1$`) >= 0, 'stored as an scrypt hash at the default cost');
    assert.ok(bytes.indexOf(reader.id) >= 0, 'the id is stored in clear (it is not secret)');
    server = await startServer({ dataDir: dir, auth: { enabled: true } });
    assert.equal((await call(server.base, 'GET', '/v1/views', { token: reader.token })).status, 200);
    assert.equal(server.app.sluiceAuth.generatedToken, null, 'no second bootstrap token');
    await server.close();
  } finally {
    removeDir(dir);
  }
});

test('without authentication nothing changes: loopback clients act as the admin of default', async () => {
  const server = await startServer();
  try {
    assert.equal((await call(server.base, 'POST', '/v1/sql', { body: { sql: SETUP } })).status, 200);
    const created = await call(server.base, 'POST', '/v1/tenants/default/tokens', {
      body: { role: 'writer' },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.token as string, /^sluice_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    assert.equal((await call(server.base, 'GET', '/v1/tenants')).status, 403);
    const sub = new WsClient(`${server.wsBase}/v1/views/totals/subscribe`);
    await sub.waitFor((m) => m.type === 'subscribed');
    sub.close();
    await waitUntil(() => sub.closeCode !== null);
  } finally {
    await server.close();
  }
});

test('the OpenAPI document declares the bearer scheme, the open routes and the admin routes', async () => {
  const server = await startAuthServer();
  try {
    const doc = (await call(server.base, 'GET', '/openapi.json', { token: OPERATOR_TOKEN })).body as {
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
      security: unknown[];
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    assert.deepEqual(doc.components.securitySchemes.bearer?.scheme, 'bearer');
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.deepEqual(doc.paths['/healthz']?.get?.security, []);
    assert.equal(doc.paths['/v1/views']?.get?.security, undefined, 'the global scheme applies');
    for (const path of ['/v1/tenants', '/v1/tenants/{tenant}/tokens', '/v1/tenants/{tenant}/tokens/{id}'])
      assert.ok(doc.paths[path] !== undefined, path);
  } finally {
    await server.close();
  }
});
