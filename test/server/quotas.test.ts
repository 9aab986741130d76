// Per-tenant quotas against the real in-process server with real WebSocket clients: set by the
// operator and kept across a restart; each size quota refuses a request whole (403 QUOTA_EXCEEDED,
// nothing applied) and each rate one with 429 RATE_LIMITED and Retry-After; a tenant held at its
// limit does not take work from its neighbour (counted in requests served and rows admitted, not
// timed); WebSockets still waiting for their `auth` message count against --max-subscribers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { removeDir, tempDir, waitUntil } from './helpers.ts';
import { OPERATOR_TOKEN, WsClient, call, startAuthServer, type Answer } from './auth-helpers.ts';

async function tenantWithAdmin(base: string, name: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } });
  assert.equal(created.status, 201, created.text);
  const r = await call(base, 'POST', `/v1/tenants/${name}/tokens`, {
    token: OPERATOR_TOKEN,
    body: { role: 'admin' },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.token as string;
}

const patch = (base: string, tenant: string, body: unknown, token = OPERATOR_TOKEN): Promise<Answer> =>
  call(base, 'PATCH', `/v1/tenants/${tenant}`, { token, body });
const sqlAs = (base: string, token: string, sql: string): Promise<Answer> =>
  call(base, 'POST', '/v1/sql', { token, body: { sql } });
const names = async (base: string, token: string, what: string): Promise<string[]> =>
  ((await call(base, 'GET', `/v1/${what}`, { token })).body[what] as { name: string }[]).map((x) => x.name);

test('PATCH /v1/tenants/{t}: operator only, validated, merged, and kept across a restart', async () => {
  const dir = tempDir();
  try {
    let server = await startAuthServer({ dataDir: dir });
    let admin: string;
    try {
      admin = await tenantWithAdmin(server.base, 'acme');
      const set = await patch(server.base, 'acme', { objects: 3, ingestRowsPerSecond: 100 });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body.quotas, {
        objects: 3,
        stateBytes: null,
        ingestRowsPerSecond: 100,
        ingestBytesPerSecond: null,
        subscribers: null,
        connectors: null,
      });
      // Merged: only the fields sent change; null removes a limit.
      const merged = await patch(server.base, 'acme', { ingestRowsPerSecond: null, subscribers: 2 });
      assert.deepEqual(merged.body.quotas, {
        objects: 3,
        stateBytes: null,
        ingestRowsPerSecond: null,
        ingestBytesPerSecond: null,
        subscribers: 2,
        connectors: null,
      });
      for (const bad of [{ objects: -1 }, { objects: 'ten' }, { objects: 1.5 }, { rows: 3 }, {}]) {
        const r = await patch(server.base, 'acme', bad);
        assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
        assert.equal(r.body.error?.code, 'INVALID_REQUEST');
      }
      const byAdmin = await patch(server.base, 'acme', { objects: 1000 }, admin);
      assert.equal(byAdmin.status, 403);
      assert.equal(byAdmin.body.error?.code, 'FORBIDDEN');
      assert.equal((await patch(server.base, 'nope', { objects: 1 })).status, 404);
      // The admin reads its own quotas.
      assert.equal(
        (
          (await call(server.base, 'GET', '/v1/tenants/acme', { token: admin })).body.quotas as {
            objects: number;
          }
        ).objects,
        3,
      );
    } finally {
      await server.close();
    }
    server = await startAuthServer({ dataDir: dir });
    try {
      const r = await call(server.base, 'GET', '/v1/tenants/acme', { token: admin });
      assert.deepEqual(r.body.quotas, {
        objects: 3,
        stateBytes: null,
        ingestRowsPerSecond: null,
        ingestBytesPerSecond: null,
        subscribers: 2,
        connectors: null,
      });
      // Enforced after the restart too.
      assert.equal(
        (
          await sqlAs(
            server.base,
            admin,
            'CREATE TABLE a (x INT); CREATE TABLE b (x INT); CREATE TABLE c (x INT); CREATE TABLE d (x INT)',
          )
        ).body.error?.code,
        'QUOTA_EXCEEDED',
      );
    } finally {
      await server.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('objects and connectors: a script that would pass a quota is refused whole, and the neighbour is not limited', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const acme = await tenantWithAdmin(base, 'acme');
    const beta = await tenantWithAdmin(base, 'beta');
    assert.equal((await patch(base, 'acme', { objects: 2, connectors: 0 })).status, 200);
    assert.equal(
      (
        await sqlAs(
          base,
          acme,
          'CREATE TABLE t (id INT PRIMARY KEY); CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM t',
        )
      ).status,
      200,
    );
    const over = await sqlAs(
      base,
      acme,
      'INSERT INTO t VALUES (1); CREATE TABLE u (id INT); CREATE TABLE w (id INT)',
    );
    assert.equal(over.status, 403);
    assert.equal(over.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(over.body.error?.message ?? '', /quota exceeded: objects \(at most 2\)/);
    assert.deepEqual(over.body.results, []);
    // Nothing of the script ran: not the INSERT before the CREATEs either.
    assert.deepEqual(await names(base, acme, 'tables'), ['t']);
    assert.equal((await call(base, 'GET', '/v1/tables/t/rows', { token: acme })).body.total, 0);
    // A source is refused by the connectors quota before any broker is asked (drops in the same
    // script make no room: the count is of what the script creates).
    assert.equal((await patch(base, 'acme', { objects: 10 })).status, 200);
    const source = await sqlAs(
      base,
      acme,
      "DROP MATERIALIZED VIEW v; CREATE SOURCE s (id INT) FROM KAFKA (brokers '127.0.0.1:1', topic 'x')",
    );
    assert.equal(source.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(source.body.error?.message ?? '', /connectors \(at most 0\)/);
    assert.deepEqual(await names(base, acme, 'views'), ['v'], 'the DROP before it did not run');
    // Reads and DML within the quota go on; the neighbour has no quota and creates freely.
    assert.equal((await sqlAs(base, acme, 'INSERT INTO t VALUES (1)')).status, 200);
    const many = Array.from({ length: 10 }, (_, i) => `CREATE TABLE t${i} (id INT)`).join('; ');
    assert.equal((await sqlAs(base, beta, many)).status, 200);
    assert.equal((await names(base, beta, 'tables')).length, 10);
  } finally {
    await server.close();
  }
});

test('state bytes: writes are refused once the state reaches the quota; reads go on; the neighbour writes on', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const acme = await tenantWithAdmin(base, 'acme');
    const beta = await tenantWithAdmin(base, 'beta');
    for (const t of [acme, beta]) {
      assert.equal(
        (
          await sqlAs(
            base,
            t,
            'CREATE TABLE t (id INT PRIMARY KEY, s TEXT); CREATE MATERIALIZED VIEW v AS SELECT id, s FROM t',
          )
        ).status,
        200,
      );
    }
    const rows = Array.from({ length: 200 }, (_, i) => ({ id: i, s: 'x'.repeat(100) }));
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows?wait=true', { token: acme, body: rows })).status,
      200,
    );
    const held = (await call(base, 'GET', '/v1/views/v', { token: acme })).body.stateBytes as number;
    assert.ok(held > 0);
    assert.equal((await patch(base, 'acme', { stateBytes: held })).status, 200);
    const refused = await call(base, 'POST', '/v1/tables/t/rows', {
      token: acme,
      body: [{ id: 1000, s: 'y' }],
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.error?.message ?? '', /state bytes/);
    const dml = await sqlAs(base, acme, "INSERT INTO t VALUES (1001, 'z')");
    assert.equal(dml.body.error?.code, 'QUOTA_EXCEEDED');
    assert.equal(
      (await call(base, 'GET', '/v1/views/v/rows?limit=1', { token: acme })).body.total,
      200,
      'nothing applied',
    );
    assert.equal((await sqlAs(base, acme, 'SELECT COUNT(*) AS n FROM t')).status, 200, 'reads go on');
    assert.equal((await call(base, 'POST', '/v1/tables/t/rows', { token: beta, body: rows })).status, 200);
    // Deletes make room and are not refused.
    assert.equal((await sqlAs(base, acme, 'DELETE FROM t WHERE id < 10')).status, 200);
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: { delete: [{ id: 10 }] } })).status,
      200,
    );
    // Raised, the tenant writes again.
    assert.equal((await patch(base, 'acme', { stateBytes: null })).status, 200, 'the limit removed');
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: [{ id: 1000, s: 'y' }] })).status,
      200,
    );
    // A table no view reads holds state too: it counts against the same quota.
    assert.equal((await sqlAs(base, acme, 'CREATE TABLE log (id INT, s TEXT)')).status, 200);
    const total = async (): Promise<number> =>
      (await call(base, 'GET', '/v1/tenants/acme/usage', { token: OPERATOR_TOKEN })).body
        .stateBytes as number;
    assert.equal((await patch(base, 'acme', { stateBytes: (await total()) + 20_000 })).status, 200);
    const lines = Array.from({ length: 100 }, (_, i) => ({ id: i, s: 'x'.repeat(100) }));
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      const r = await call(base, 'POST', '/v1/tables/log/rows?wait=true', { token: acme, body: lines });
      if (r.status !== 200) {
        assert.equal(r.body.error?.code, 'QUOTA_EXCEEDED');
        break;
      }
      admitted++;
    }
    assert.ok(
      admitted > 0 && admitted < 20,
      `the table filled up to its quota (${admitted} batches admitted)`,
    );
  } finally {
    await server.close();
  }
});

test('ingest rates: beyond the quota 429 RATE_LIMITED with Retry-After and nothing applied; the neighbour is served in full', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const acme = await tenantWithAdmin(base, 'acme');
    const beta = await tenantWithAdmin(base, 'beta');
    for (const t of [acme, beta])
      assert.equal((await sqlAs(base, t, 'CREATE TABLE t (id INT PRIMARY KEY)')).status, 200);
    const RATE = 50;
    assert.equal((await patch(base, 'acme', { ingestRowsPerSecond: RATE })).status, 200);
    const batch = (n: number) => Array.from({ length: 10 }, (_, i) => ({ id: n * 10 + i }));
    const started = Date.now();
    let acmeAccepted = 0;
    let acmeLimited = 0;
    let betaAccepted = 0;
    const BATCHES = 40;
    // The two tenants send at the same time, each request after the last answer.
    await Promise.all([
      (async () => {
        for (let n = 0; n < BATCHES; n++) {
          const r = await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: batch(n) });
          if (r.status === 200) acmeAccepted += 1;
          else {
            assert.equal(r.status, 429, r.text);
            assert.equal(r.body.error?.code, 'RATE_LIMITED');
            assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
            acmeLimited += 1;
          }
        }
      })(),
      (async () => {
        for (let n = 0; n < BATCHES; n++) {
          const r = await call(base, 'POST', '/v1/tables/t/rows', { token: beta, body: batch(n) });
          assert.equal(r.status, 200, r.text);
          betaAccepted += 1;
        }
      })(),
    ]);
    const seconds = (Date.now() - started) / 1000;
    // What acme got in is bounded by its rate (one second's burst, plus one batch of debt) however
    // slow or fast the machine; what was refused left nothing behind.
    assert.ok(acmeLimited > 0, 'acme was limited');
    assert.ok(
      acmeAccepted * 10 <= RATE * (seconds + 1) + 10,
      `acme admitted ${acmeAccepted * 10} rows in ${seconds} s at ${RATE} rows/s`,
    );
    const acmeRows = (await call(base, 'GET', '/v1/tables/t/rows?limit=1', { token: acme })).body.total;
    assert.equal(acmeRows, acmeAccepted * 10, 'exactly the admitted batches were applied');
    // Beta, without a quota, was served every request.
    assert.equal(betaAccepted, BATCHES);
    assert.equal(
      (await call(base, 'GET', '/v1/tables/t/rows?limit=1', { token: beta })).body.total,
      BATCHES * 10,
    );

    // The byte rate, on its own.
    assert.equal(
      (await patch(base, 'acme', { ingestRowsPerSecond: null, ingestBytesPerSecond: 100 })).status,
      200,
    );
    const big = Array.from({ length: 20 }, (_, i) => ({ id: 10_000 + i }));
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: big })).status,
      200,
      'a full bucket admits one big batch',
    );
    const second = await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: [{ id: 20_000 }] });
    assert.equal(second.status, 429);
    assert.match(second.body.error?.message ?? '', /100 bytes per second/);
  } finally {
    await server.close();
  }
});

test('SQL DML counts against the same ingest rates: a script over them is refused whole with 429 and Retry-After', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const acme = await tenantWithAdmin(base, 'acme');
    const beta = await tenantWithAdmin(base, 'beta');
    for (const t of [acme, beta])
      assert.equal((await sqlAs(base, t, 'CREATE TABLE t (id INT PRIMARY KEY, v INT)')).status, 200);
    const RATE = 50;
    assert.equal((await patch(base, 'acme', { ingestRowsPerSecond: RATE })).status, 200);
    const insert = (n: number): string =>
      `INSERT INTO t VALUES ${Array.from({ length: 10 }, (_, i) => `(${n * 10 + i}, 0)`).join(', ')}`;
    const count = async (token: string): Promise<number> =>
      (await call(base, 'GET', '/v1/tables/t/rows?limit=1', { token })).body.total as number;
    const started = Date.now();
    let accepted = 0;
    let limited = 0;
    const SCRIPTS = 40;
    await Promise.all([
      (async () => {
        for (let n = 0; n < SCRIPTS; n++) {
          // Two statements: the first would fit on its own, so "nothing applied" is tested whole.
          const r = await sqlAs(base, acme, `INSERT INTO t VALUES (${100_000 + n}, 1); ${insert(n)}`);
          if (r.status === 200) accepted += 1;
          else {
            assert.equal(r.status, 429, r.text);
            assert.equal(r.body.error?.code, 'RATE_LIMITED');
            assert.deepEqual(r.body.results, []);
            assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
            limited += 1;
          }
        }
      })(),
      (async () => {
        for (let n = 0; n < SCRIPTS; n++) assert.equal((await sqlAs(base, beta, insert(n))).status, 200);
      })(),
    ]);
    const seconds = (Date.now() - started) / 1000;
    assert.ok(limited > 0, 'acme was limited');
    assert.ok(
      accepted * 11 <= RATE * (seconds + 1) + 11,
      `acme admitted ${accepted * 11} rows in ${seconds} s at ${RATE} rows/s`,
    );
    assert.equal(await count(acme), accepted * 11, 'exactly the admitted scripts were applied, each whole');
    assert.equal(await count(beta), SCRIPTS * 10, 'the neighbour was served every script');

    // An UPDATE's rows are known once it ran: it is admitted from a bucket that is not empty, and
    // what it wrote beyond it is a debt that refuses the next writes, ingest included (one limiter).
    assert.equal((await patch(base, 'acme', { ingestRowsPerSecond: null })).status, 200);
    assert.equal((await sqlAs(base, acme, 'DELETE FROM t')).status, 200);
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, v: 0 }));
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows?wait=true', { token: acme, body: rows })).status,
      200,
    );
    assert.equal((await patch(base, 'acme', { ingestRowsPerSecond: RATE })).status, 200);
    const update = await sqlAs(base, acme, 'UPDATE t SET v = 1');
    assert.equal(update.status, 200, update.text);
    const after = await call(base, 'POST', '/v1/tables/t/rows', { token: acme, body: [{ id: 999, v: 0 }] });
    assert.equal(after.status, 429, 'the UPDATE’s 300 rows are a debt of about 250');
    assert.ok(
      Number(after.headers.get('retry-after')) >= 4,
      `Retry-After ${after.headers.get('retry-after')}`,
    );
    const dml = await sqlAs(base, acme, 'DELETE FROM t WHERE id = 1');
    assert.equal(dml.status, 429);
    assert.equal(
      (await sqlAs(base, acme, 'SELECT COUNT(*) AS n FROM t WHERE v = 1')).body.results !== undefined,
      true,
      'reads are not rate-limited',
    );
    assert.equal(await count(acme), 300, 'the refused DELETE deleted nothing');
    // The byte rate counts a script's body.
    assert.equal(
      (await patch(base, 'acme', { ingestRowsPerSecond: null, ingestBytesPerSecond: 100 })).status,
      200,
    );
    assert.equal((await sqlAs(base, acme, `${insert(500)}; -- ${'x'.repeat(200)}`)).status, 200);
    const second = await sqlAs(base, acme, 'INSERT INTO t VALUES (7000, 0)');
    assert.equal(second.status, 429);
    assert.match(second.body.error?.message ?? '', /100 bytes per second/);
    // DDL and reads are not ingest: they go on.
    assert.equal((await sqlAs(base, acme, 'CREATE TABLE u (x INT); SELECT 1 AS one')).status, 200);
    // The OpenAPI document says so.
    const doc = (await call(base, 'GET', '/openapi.json', { token: acme })).body as {
      paths: Record<string, { post: { responses: Record<string, { headers?: object }> } }>;
    };
    for (const path of ['/v1/sql', '/v1/tables/{name}/rows'])
      assert.ok(doc.paths[path]?.post.responses['429']?.headers !== undefined, `${path} documents 429`);
  } finally {
    await server.close();
  }
});

test('subscribers: the tenant quota refuses the next subscription; WebSockets waiting to authenticate are bounded by --max-subscribers in a pool of their own', async () => {
  const server = await startAuthServer({
    maxSubscribers: 4,
    auth: { enabled: true, wsAuthTimeoutMs: 60_000 },
  });
  const open: WsClient[] = [];
  const raw: WebSocket[] = [];
  try {
    const base = server.base;
    const acme = await tenantWithAdmin(base, 'acme');
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
      tokens[name] = await tenantWithAdmin(base, name);
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
    const acme = await tenantWithAdmin(base, 'acme');
    await tenantWithAdmin(base, 'beta');
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
    const acme = await tenantWithAdmin(base, 'acme');
    const beta = await tenantWithAdmin(base, 'beta');
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
