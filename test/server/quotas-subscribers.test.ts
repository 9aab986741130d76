// Per-tenant subscriber quotas against the real in-process server with real WebSocket clients: a
// tenant's subscribers quota, its default share of --max-subscribers when it has none, WebSockets
// still waiting for their `auth` message counted against --max-subscribers, one subscriber memory
// budget, and --max-query-subscriptions over all tenants (counted, not timed). The other quotas:
// quotas.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { waitUntil } from './helpers.ts';
import { OPERATOR_TOKEN, WsClient, call, startAuthServer, tenantAdmin, type Answer } from './auth-helpers.ts';

const patch = (base: string, tenant: string, body: unknown, token = OPERATOR_TOKEN): Promise<Answer> =>
  call(base, 'PATCH', `/v1/tenants/${tenant}`, { token, body });
const sqlAs = (base: string, token: string, sql: string): Promise<Answer> =>
  call(base, 'POST', '/v1/sql', { token, body: { sql } });

test('subscribers: the tenant quota refuses the next subscription; WebSockets waiting to authenticate are bounded by --max-subscribers in a pool of their own', async () => {
  const server = await startAuthServer({
    maxSubscribers: 4,
    auth: { enabled: true, wsAuthTimeoutMs: 60_000 },
  });
  const open: WsClient[] = [];
  const raw: WebSocket[] = [];
  try {
    const base = server.base;
    const acme = await tenantAdmin(base, 'acme');
    assert.equal(
      (
        await sqlAs(
          base,
          acme,
          'CREATE TABLE t (id INT PRIMARY KEY); CREATE MATERIALIZED VIEW v AS SELECT id FROM t',
        )
      ).status,
      200,
    );
    assert.equal((await patch(base, 'acme', { subscribers: 1 })).status, 200);
    const first = new WsClient(`${server.wsBase}/v1/views/v/subscribe`, {
      headers: { authorization: `Bearer ${acme}` },
    });
    open.push(first);
    await first.waitFor((m) => m.type === 'snapshot_end', 'the first subscriber');
    const second = new WsClient(`${server.wsBase}/v1/views/v/subscribe`, {
      headers: { authorization: `Bearer ${acme}` },
    });
    open.push(second);
    assert.equal(await second.waitClosed(), 4403);
    assert.equal(second.messages[0]?.code, 'QUOTA_EXCEEDED');
    const ndjson = await call(base, 'GET', '/v1/views/v/changes', { token: acme });
    assert.equal(ndjson.status, 403);
    assert.equal(ndjson.body.error?.code, 'QUOTA_EXCEEDED');

    // Four sockets that never authenticate fill their pool of 4 (the one subscriber is not in it).
    for (let i = 0; i < 4; i++) {
      const ws = new WebSocket(`${server.wsBase}/v1/views/v/subscribe`);
      raw.push(ws);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
    }
    // A fifth that would wait to authenticate is refused at once.
    const fourth = new WsClient(`${server.wsBase}/v1/views/v/subscribe`);
    open.push(fourth);
    assert.equal(await fourth.waitClosed(), 4503);
    assert.equal(fourth.messages[0]?.code, 'TOO_MANY_SUBSCRIBERS');
    // Once they go, there is room again: one more authenticates by message and is answered (the
    // default tenant has no view v, so as unknown).
    for (const ws of raw) ws.terminate();
    await waitUntil(
      async () => {
        const c = new WsClient(`${server.wsBase}/v1/views/v/subscribe`);
        open.push(c);
        await c.open().catch(() => undefined);
        if (c.socket.readyState === c.socket.OPEN)
          c.socket.send(JSON.stringify({ type: 'auth', token: OPERATOR_TOKEN }));
        await c.waitClosed();
        return c.messages[0]?.code === 'UNKNOWN_VIEW';
      },
      15_000,
      'room after the authenticating sockets closed',
    );
  } finally {
    for (const c of open) c.close();
    for (const ws of raw) ws.terminate();
    await server.close();
  }
});

test('subscriber places: a tenant without a subscribers quota holds at most its default share of --max-subscribers, so a flood of its subscriptions leaves the other tenants room', async () => {
  // 8 places: a tenant without a quota takes at most 4 of them once the server serves two tenants.
  const server = await startAuthServer({ maxSubscribers: 8, auth: { enabled: true } });
  const open: WsClient[] = [];
  try {
    const base = server.base;
    const tokens: Record<string, string> = {};
    for (const name of ['flood', 'calm']) {
      tokens[name] = await tenantAdmin(base, name);
      const made = await sqlAs(
        base,
        tokens[name] as string,
        'CREATE TABLE t (id INT PRIMARY KEY); CREATE MATERIALIZED VIEW v AS SELECT id FROM t',
      );
      assert.equal(made.status, 200, made.text);
    }
    const subscribe = (name: string, path = '/v1/views/v/subscribe'): WsClient => {
      const c = new WsClient(`${server.wsBase}${path}`, {
        headers: { authorization: `Bearer ${tokens[name] as string}` },
      });
      open.push(c);
      return c;
    };
    const settled = (c: WsClient): Promise<'subscribed' | string> =>
      waitUntil(
        () => c.messages.some((m) => m.type === 'snapshot_end') || c.closeCode !== null,
        15_000,
        'a subscription answered',
      ).then(() =>
        c.messages.some((m) => m.type === 'snapshot_end') ? 'subscribed' : String(c.messages[0]?.code),
      );
    // Twelve at once, views and queries both: four get places, the rest QUOTA_EXCEEDED (close 4403).
    const flood = Array.from({ length: 12 }, (_, i) =>
      subscribe('flood', i % 3 === 0 ? '/v1/subscribe?sql=SELECT%20id%20FROM%20t' : '/v1/views/v/subscribe'),
    );
    const outcomes = await Promise.all(flood.map(settled));
    assert.equal(outcomes.filter((o) => o === 'subscribed').length, 4, outcomes.join());
    assert.deepEqual(
      [...new Set(outcomes.filter((o) => o !== 'subscribed'))],
      ['QUOTA_EXCEEDED'],
      outcomes.join(),
    );
    for (const c of flood.filter((c) => c.closeCode !== null)) assert.equal(c.closeCode, 4403);
    const ndjson = await call(base, 'GET', '/v1/views/v/changes', { token: tokens.flood as string });
    assert.equal(ndjson.status, 403);
    assert.equal(ndjson.body.error?.code, 'QUOTA_EXCEEDED');
    // The other tenant still subscribes, to the last place of the server.
    const calm = Array.from({ length: 4 }, () => subscribe('calm'));
    assert.deepEqual(await Promise.all(calm.map(settled)), [
      'subscribed',
      'subscribed',
      'subscribed',
      'subscribed',
    ]);
    // A subscribers quota set by the operator replaces the default share (here, a larger one): the
    // server-wide cap then still holds (TOO_MANY_SUBSCRIBERS, close 4503).
    assert.equal((await patch(base, 'flood', { subscribers: 6 })).status, 200);
    const more = subscribe('flood');
    assert.equal(await settled(more), 'TOO_MANY_SUBSCRIBERS');
    assert.equal(await more.waitClosed(), 4503);
    // Once a place is free (a client of the other tenant left), the fifth is admitted.
    calm[0]?.close();
    await waitUntil(
      async () => (await settled(subscribe('flood'))) === 'subscribed',
      15_000,
      'the place left counted free',
    );
  } finally {
    for (const c of open) c.close();
    await server.close();
  }
});

test('subscriber memory: one budget for the whole server, every tenant an account of it (test/server/subscriber.test.ts counts the bytes)', async () => {
  const BUDGET = 3 * 1024 * 1024;
  const server = await startAuthServer({ subscriberMemory: BUDGET });
  try {
    const base = server.base;
    const acme = await tenantAdmin(base, 'acme');
    await tenantAdmin(base, 'beta');
    const tenants = server.app.sluiceTenants.list();
    assert.equal(tenants.length, 3);
    const shared = tenants[0]?.runtime.subscriberBudget.shared;
    assert.ok(shared !== undefined && shared.limit === BUDGET);
    for (const t of tenants)
      assert.equal(
        t.runtime.subscriberBudget.shared,
        shared,
        `${t.name} accounts against the server's budget`,
      );
    // The operator sees the one budget; a tenant sees the limit and its own bytes only.
    const operator = (await call(base, 'GET', '/metrics', { token: OPERATOR_TOKEN })).text;
    assert.match(
      operator,
      new RegExp(`^sluice_server_subscriber_memory_bytes\\{kind="limit"\\} ${BUDGET}$`, 'm'),
    );
    const own = (await call(base, 'GET', '/metrics', { token: acme })).text;
    assert.doesNotMatch(own, /sluice_server_subscriber_memory_bytes/);
    assert.match(
      own,
      new RegExp(`^sluice_subscriber_memory_bytes\\{kind="limit",tenant="acme"\\} ${BUDGET}$`, 'm'),
    );
  } finally {
    await server.close();
  }
});

test('query subscriptions: --max-query-subscriptions bounds the temporary views of all tenants together', async () => {
  const server = await startAuthServer({ querySubscriptions: { maxViews: 2, lingerMs: 60_000 } });
  const streams: AbortController[] = [];
  try {
    const base = server.base;
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
    for (const t of [acme, beta])
      assert.equal((await sqlAs(base, t, 'CREATE TABLE t (id INT PRIMARY KEY, g INT)')).status, 200);
    const subscribe = async (token: string, sql: string): Promise<Answer | 'streaming'> => {
      const controller = new AbortController();
      const res = await fetch(`${base}/v1/changes?sql=${encodeURIComponent(sql)}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      if (res.status === 200) {
        streams.push(controller);
        return 'streaming';
      }
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: JSON.parse(text) as Answer['body'], text };
    };
    assert.equal(await subscribe(acme, 'SELECT id FROM t'), 'streaming');
    assert.equal(await subscribe(acme, 'SELECT g FROM t'), 'streaming');
    // Acme holds the server's two; beta's first is refused, though beta holds none.
    const refused = await subscribe(beta, 'SELECT id FROM t');
    assert.notEqual(refused, 'streaming');
    if (refused !== 'streaming') {
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.body.error?.code, 'TOO_MANY_SUBSCRIBERS');
    }
    // Subscribing to a named view is not a query subscription: beta goes on.
    assert.equal((await sqlAs(base, beta, 'CREATE MATERIALIZED VIEW v AS SELECT id FROM t')).status, 200);
    const named = await fetch(`${base}/v1/views/v/changes`, {
      headers: { authorization: `Bearer ${beta}` },
      signal: AbortSignal.timeout(5000),
    }).catch(() => null);
    assert.equal(named?.status, 200);
    await named?.body?.cancel();
  } finally {
    for (const c of streams) c.abort();
    await server.close();
  }
});
