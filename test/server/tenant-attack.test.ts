// What an outside attack on tenants and credentials found, each probe kept as a test that counts work
// (sockets, KDF runs, answers), never time: WebSockets that never authenticate must not take the
// subscriptions' places; a flood of wrong tokens must neither push a tenant's verified token out of
// the cache nor, through one tenant's (non-secret) token ids, fill every verification slot; the open
// /readyz must not show the default tenant's epoch to whoever asks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { SluiceError } from '../../src/common/errors.ts';
import { Authenticator } from '../../src/server/auth.ts';
import { isTemporaryView } from '../../src/server/query-subscriptions.ts';
import { TokenStore } from '../../src/storage/token-store.ts';
import { waitUntil } from './helpers.ts';
import { call, OPERATOR_TOKEN, startAuthServer, tenantAdmin, TEST_KDF, WsClient } from './auth-helpers.ts';

/** A token of the format with this id (or a random one) and a random secret: never a valid token. */
function wrongToken(id = randomBytes(8).toString('hex')): string {
  return `sluice_${id}_${randomBytes(32).toString('base64url')}`;
}

test('WebSockets that never authenticate have a pool of their own: a tenant with a token still subscribes', async () => {
  const server = await startAuthServer({
    maxSubscribers: 3,
    // The server-wide cap is what this test fills: a default share above it (quotas.test.ts tests the share).
    maxSubscribersPerTenant: 4,
    auth: { enabled: true, wsAuthTimeoutMs: 60_000 },
  });
  const idle: WebSocket[] = [];
  const clients: WsClient[] = [];
  try {
    const acme = await tenantAdmin(server.base, 'acme');
    const ddl = await call(server.base, 'POST', '/v1/sql', {
      token: acme,
      body: { sql: 'CREATE TABLE t (id INT PRIMARY KEY); CREATE MATERIALIZED VIEW v AS SELECT id FROM t' },
    });
    assert.equal(ddl.status, 200, ddl.text);
    // An unauthenticated client fills the pool of sockets waiting for their auth message...
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`${server.wsBase}/v1/views/v/subscribe`);
      idle.push(ws);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
    }
    // ...and the next one is refused at once, so they stay bounded.
    const extra = new WsClient(`${server.wsBase}/v1/views/v/subscribe`);
    clients.push(extra);
    assert.equal(await extra.waitClosed(), 4503);
    assert.equal(extra.messages[0]?.code, 'TOO_MANY_SUBSCRIBERS');
    // A tenant's subscriptions are not refused for them: by header over WebSocket, and over NDJSON.
    const ws = new WsClient(`${server.wsBase}/v1/views/v/subscribe`, {
      headers: { authorization: `Bearer ${acme}` },
    });
    clients.push(ws);
    await ws.waitFor((m) => m.type === 'snapshot_end' || m.type === 'error', 'the subscription');
    assert.equal(ws.messages[0]?.type, 'subscribed', JSON.stringify(ws.messages[0]));
    const controller = new AbortController();
    const ndjson = await fetch(`${server.base}/v1/views/v/changes`, {
      headers: { authorization: `Bearer ${acme}` },
      signal: controller.signal,
    });
    assert.equal(ndjson.status, 200);
    controller.abort();
    // The subscriptions' own cap still holds: with the WebSocket and two more, a fourth is refused.
    const runtime = server.app.sluiceTenants.get('acme')?.runtime;
    await waitUntil(() => runtime?.subscriberMemory().subscribers === 1, 10_000, 'the NDJSON stream to end');
    const more = Array.from(
      { length: 3 },
      () =>
        new WsClient(`${server.wsBase}/v1/views/v/subscribe`, {
          headers: { authorization: `Bearer ${acme}` },
        }),
    );
    clients.push(...more);
    for (const c of more.slice(0, 2)) await c.waitFor((m) => m.type === 'snapshot_end', 'a subscription');
    assert.equal(await (more[2] as WsClient).waitClosed(), 4503);
    assert.equal((more[2] as WsClient).messages[0]?.code, 'TOO_MANY_SUBSCRIBERS');
  } finally {
    for (const c of clients) c.close();
    for (const ws of idle) ws.terminate();
    await server.close();
  }
});

test('wrong tokens: refusals never evict a verified token, and one tenant’s ids hold at most a share of the KDF slots', async () => {
  const store = new TokenStore(null, TEST_KDF);
  const auth = new Authenticator(store, { enabled: true, cacheSize: 16, maxVerifications: 8 });
  try {
    const acme = (await store.create('acme', 'reader')).token;
    const acmeLater = (await store.create('acme', 'reader')).token;
    const beta = await store.create('beta', 'reader');
    const ok = await auth.fromToken(acme);
    assert.ok(!(ok instanceof SluiceError));
    assert.equal(store.verifications, 1);

    // A flood of tokens with unknown ids: no KDF run, and acme's verified token stays remembered.
    for (let i = 0; i < 200; i++) assert.ok((await auth.fromToken(wrongToken())) instanceof SluiceError);
    assert.equal(store.verifications, 1, 'unknown ids cost no KDF run');
    assert.ok(!((await auth.fromToken(acme)) instanceof SluiceError));
    assert.equal(store.verifications, 1, "acme's token was still remembered");
    // So do known ids with wrong secrets, once each (a repeated wrong token is remembered as refused).
    const wrong = Array.from({ length: 40 }, () => wrongToken(beta.info.id));
    for (const t of wrong.slice(0, 20)) assert.ok((await auth.fromToken(t)) instanceof SluiceError);
    assert.equal(store.verifications, 21);
    assert.ok((await auth.fromToken(wrong[19] as string)) instanceof SluiceError);
    assert.equal(store.verifications, 21, 'a refused token is remembered');
    assert.ok(!((await auth.fromToken(acme)) instanceof SluiceError));
    assert.equal(store.verifications, 21, "acme's token was still remembered after 20 refusals");

    // Wrong secrets of beta's id, all at once: beta's ids get a quarter of the slots (2 of 8), the
    // rest are UNAVAILABLE without a KDF run, and a token of another tenant is verified meanwhile.
    const outcomes = wrong.slice(20).map((t) =>
      auth.fromToken(t).then(
        (r) => (r instanceof SluiceError ? r.code : 'ok'),
        (e: unknown) => (e instanceof SluiceError ? e.code : String(e)),
      ),
    );
    const other = await auth.fromToken(acmeLater).catch((e: unknown) => e);
    assert.ok(!(other instanceof SluiceError), `acme's token was refused: ${String(other)}`);
    const codes = await Promise.all(outcomes);
    assert.equal(codes.filter((c) => c === 'UNAUTHENTICATED').length, 2);
    assert.equal(codes.filter((c) => c === 'UNAVAILABLE').length, 18);
    assert.equal(store.verifications, 21 + 2 + 1);
  } finally {
    store.close();
  }
});

test('the open /readyz shows no epoch without a token, and a token its own tenant’s epoch', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const acme = await tenantAdmin(base, 'acme');
    const write = async (token: string, rows: number): Promise<void> => {
      const ddl = await call(base, 'POST', '/v1/sql', {
        token,
        body: { sql: 'CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)' },
      });
      assert.equal(ddl.status, 200, ddl.text);
      for (let i = 0; i < rows; i++) {
        const r = await call(base, 'POST', '/v1/tables/t/rows?wait=true', { token, body: [{ id: i }] });
        assert.equal(r.status, 200, r.text);
      }
    };
    await write(OPERATOR_TOKEN, 5); // the default tenant's writes
    await write(acme, 2);
    const anonymous = await call(base, 'GET', '/readyz');
    assert.equal(anonymous.status, 200);
    assert.deepEqual(anonymous.body, { status: 'ready' });
    const wrong = await call(base, 'GET', '/readyz', { token: wrongToken() });
    assert.deepEqual(wrong.body, { status: 'ready' });
    assert.deepEqual((await call(base, 'GET', '/readyz', { token: acme })).body, {
      status: 'ready',
      epoch: 2,
    });
    assert.deepEqual((await call(base, 'GET', '/readyz', { token: OPERATOR_TOKEN })).body, {
      status: 'ready',
      epoch: 5,
    });
  } finally {
    await server.close();
  }
});

test('query subscriptions: one tenant’s abandoned queries make room at the cap instead of refusing the others', async () => {
  const server = await startAuthServer({ querySubscriptions: { maxViews: 3, lingerMs: 60_000 } });
  try {
    const base = server.base;
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
    for (const token of [acme, beta]) {
      const r = await call(base, 'POST', '/v1/sql', {
        token,
        body: { sql: 'CREATE TABLE t (id INT PRIMARY KEY)' },
      });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(
      (await call(base, 'PATCH', '/v1/tenants/beta', { token: OPERATOR_TOKEN, body: { subscribers: 1 } }))
        .status,
      200,
    );
    const tenants = server.app.sluiceTenants;
    const held = (name: string): number =>
      tenants
        .get(name)
        ?.runtime.viewNames()
        .filter((v) => isTemporaryView(v)).length ?? -1;
    /** Opens a query subscription over NDJSON, then leaves it (its view lingers); the status. */
    const subscribeAndLeave = async (token: string, sql: string, tenant: string): Promise<number> => {
      const controller = new AbortController();
      const res = await fetch(`${base}/v1/changes?sql=${encodeURIComponent(sql)}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      controller.abort();
      const runtime = tenants.get(tenant)?.runtime;
      await waitUntil(() => runtime?.subscriberMemory().subscribers === 0, 10_000, 'the stream to end');
      return res.status;
    };
    // Within its quota of one subscriber, beta leaves three queries behind: the server's cap.
    for (let i = 0; i < 3; i++)
      assert.equal(await subscribeAndLeave(beta, `SELECT id + ${i} AS x FROM t`, 'beta'), 200);
    assert.equal(held('beta'), 3);
    // Acme's query subscription is served: one of beta's idle views made room.
    assert.equal(await subscribeAndLeave(acme, 'SELECT id FROM t', 'acme'), 200);
    assert.deepEqual([held('acme'), held('beta')], [1, 2]);
    // Views with a subscriber are never dropped for room: three held by acme's live streams fill the
    // cap, and beta's new query is refused.
    const live: AbortController[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const controller = new AbortController();
        live.push(controller);
        const res = await fetch(
          `${base}/v1/changes?sql=${encodeURIComponent(`SELECT id * ${i + 2} AS y FROM t`)}`,
          {
            headers: { authorization: `Bearer ${acme}` },
            signal: controller.signal,
          },
        );
        assert.equal(res.status, 200);
      }
      assert.deepEqual([held('acme'), held('beta')], [3, 0]);
      const refused = await call(
        base,
        'GET',
        `/v1/changes?sql=${encodeURIComponent('SELECT 1 AS one FROM t')}`,
        {
          token: beta,
        },
      );
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error?.code, 'TOO_MANY_SUBSCRIBERS');
    } finally {
      for (const c of live) c.abort();
    }
  } finally {
    await server.close();
  }
});
