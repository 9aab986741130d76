// Per-tenant quotas against the real in-process server with real WebSocket clients: set by the
// operator and kept across a restart; each size quota refuses a request whole (403 QUOTA_EXCEEDED,
// nothing applied) and each rate one with 429 RATE_LIMITED and Retry-After; a tenant held at its
// limit does not take work from its neighbour (counted in requests served and rows admitted, not
// timed). Subscriber places and query subscriptions: quotas-subscribers.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, tempDir } from './helpers.ts';
import { OPERATOR_TOKEN, call, startAuthServer, tenantAdmin, type Answer } from './auth-helpers.ts';

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
      admin = await tenantAdmin(server.base, 'acme');
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
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
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
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
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
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
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
    const acme = await tenantAdmin(base, 'acme');
    const beta = await tenantAdmin(base, 'beta');
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
