// A tenant's size quotas against concurrent requests (real server, real HTTP clients). Each request
// was checked against its tenant's counts when it arrived, but a script runs only at its turn (one at
// a time per tenant) and a query subscription first waits for its view to be created: requests that
// arrived together were all admitted against the same count, so a tenant with an objects quota of 8
// held 35 tables, and one with a subscribers quota of 2 held 20 subscriptions; large ingest batches
// (their journal text written over several turns) all passed the state quota the first one filled.
// A query subscription also created its view past the state quota. The first tests hold the
// tenant's script queue closed while the requests arrive — the order a busy server gives them — so
// they count answers and objects, never time; with the fixes every count is exact however the
// requests interleave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScriptResult } from '../../src/exec/api.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { isTemporaryView } from '../../src/server/query-subscriptions.ts';
import { removeDir, tempDir, waitUntil } from './helpers.ts';
import { INSERTS_AHEAD_MIN_ROWS } from '../../src/exec/engine-writes.ts';
import { call, OPERATOR_TOKEN, startAuthServer, tenantAdmin, WsClient } from './auth-helpers.ts';

/**
 * Closes the runtime's script queue until `open` is called, as a long script ahead of them would,
 * and counts the scripts that arrive at it. The queue is the runtime's own (a private field).
 */
function holdScripts(runtime: SluiceRuntime): { queued: () => number; open: () => void } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const queue = runtime as unknown as { scripts: Promise<void> };
  queue.scripts = queue.scripts.then(() => gate);
  let queued = 0;
  const executeSql = runtime.executeSql.bind(runtime);
  runtime.executeSql = (...args: Parameters<SluiceRuntime['executeSql']>): Promise<ScriptResult> => {
    queued += 1;
    return executeSql(...args);
  };
  return { queued: () => queued, open };
}

test('scripts that arrive together are held to the objects quota when their turn comes', async () => {
  const server = await startAuthServer();
  try {
    const beta = await tenantAdmin(server.base, 'beta');
    const acme = await tenantAdmin(server.base, 'acme');
    const quota = await call(server.base, 'PATCH', '/v1/tenants/beta', {
      token: OPERATOR_TOKEN,
      body: { objects: 3 },
    });
    assert.equal(quota.status, 200, quota.text);
    const runtime = server.app.sluiceTenants.get('beta')!.runtime;
    const held = holdScripts(runtime);
    const answers = Array.from({ length: 10 }, (_, i) =>
      call(server.base, 'POST', '/v1/sql', { token: beta, body: { sql: `CREATE TABLE t${i} (id INT)` } }),
    );
    await waitUntil(() => held.queued() === 10, 10_000, 'the ten scripts to reach the queue');
    held.open();
    const statuses = (await Promise.all(answers)).map((a) => a.status);
    assert.deepEqual(
      statuses.filter((s) => s === 200).length,
      3,
      `three creates fit the quota: ${JSON.stringify(statuses)}`,
    );
    const refused = (await Promise.all(answers)).filter((a) => a.status !== 200);
    for (const r of refused) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error?.code, 'QUOTA_EXCEEDED');
      assert.deepEqual(r.body.results, []);
    }
    const tables = await call(server.base, 'GET', '/v1/tables', { token: beta });
    assert.equal((tables.body.tables as unknown[]).length, 3, tables.text);
    // The neighbour without a quota is not touched by it.
    const other = await call(server.base, 'POST', '/v1/sql', {
      token: acme,
      body: {
        sql: 'CREATE TABLE a1 (id INT); CREATE TABLE a2 (id INT); CREATE TABLE a3 (id INT); CREATE TABLE a4 (id INT)',
      },
    });
    assert.equal(other.status, 200, other.text);
  } finally {
    await server.close();
  }
});

test('query and table subscriptions that arrive together are held to the subscribers quota', async () => {
  const server = await startAuthServer();
  const streams: AbortController[] = [];
  try {
    const beta = await tenantAdmin(server.base, 'beta');
    const ddl = await call(server.base, 'POST', '/v1/sql', {
      token: beta,
      body: { sql: 'CREATE TABLE bt (id INT PRIMARY KEY)' },
    });
    assert.equal(ddl.status, 200, ddl.text);
    const quota = await call(server.base, 'PATCH', '/v1/tenants/beta', {
      token: OPERATOR_TOKEN,
      body: { subscribers: 2 },
    });
    assert.equal(quota.status, 200, quota.text);
    const runtime = server.app.sluiceTenants.get('beta')!.runtime;
    const held = holdScripts(runtime);
    const paths = [
      ...Array.from({ length: 6 }, () => `/v1/changes?sql=${encodeURIComponent('SELECT id FROM bt')}`),
      ...Array.from({ length: 6 }, () => '/v1/tables/bt/changes'),
    ];
    const answers = paths.map((path) => {
      const controller = new AbortController();
      streams.push(controller);
      return fetch(server.base + path, {
        headers: { authorization: `Bearer ${beta}` },
        signal: controller.signal,
      }).then(async (r) => ({ status: r.status, body: r.status === 200 ? '' : await r.text() }));
    });
    await waitUntil(
      () => held.queued() === paths.length,
      10_000,
      'the subscriptions to wait for their views',
    );
    held.open();
    const results = await Promise.all(answers);
    const admitted = results.filter((r) => r.status === 200).length;
    assert.equal(
      admitted,
      2,
      `two subscriptions fit the quota: ${JSON.stringify(results.map((r) => r.status))}`,
    );
    for (const r of results.filter((x) => x.status !== 200)) {
      assert.equal(r.status, 403, r.body);
      assert.match(r.body, /QUOTA_EXCEEDED/);
    }
    assert.equal(runtime.subscriberMemory().subscribers, 2);
  } finally {
    for (const s of streams) s.abort();
    await server.close();
  }
});

test('query subscriptions that arrive together are held to the server-wide cap on their views', async () => {
  const server = await startAuthServer({ querySubscriptions: { maxViews: 3 } });
  const streams: AbortController[] = [];
  try {
    const beta = await tenantAdmin(server.base, 'beta');
    const ddl = await call(server.base, 'POST', '/v1/sql', {
      token: beta,
      body: { sql: 'CREATE TABLE bt (id INT PRIMARY KEY)' },
    });
    assert.equal(ddl.status, 200, ddl.text);
    const runtime = server.app.sluiceTenants.get('beta')!.runtime;
    const held = holdScripts(runtime);
    // Six different queries: six views to create, each passing the cap on arrival.
    const answers = Array.from({ length: 6 }, (_, i) => {
      const controller = new AbortController();
      streams.push(controller);
      const sql = encodeURIComponent(`SELECT id FROM bt WHERE id <> ${i}`);
      return fetch(`${server.base}/v1/changes?sql=${sql}`, {
        headers: { authorization: `Bearer ${beta}` },
        signal: controller.signal,
      }).then(async (r) => ({ status: r.status, body: r.status === 200 ? '' : await r.text() }));
    });
    await waitUntil(() => held.queued() === 6, 10_000, 'the six queries to wait for their views');
    held.open();
    const results = await Promise.all(answers);
    assert.equal(
      results.filter((r) => r.status === 200).length,
      3,
      JSON.stringify(results.map((r) => r.status)),
    );
    for (const r of results.filter((x) => x.status !== 200)) assert.match(r.body, /TOO_MANY_SUBSCRIBERS/);
    assert.equal(runtime.viewNames().filter((v) => isTemporaryView(v)).length, 3);
  } finally {
    for (const s of streams) s.abort();
    await server.close();
  }
});

test('a tenant at its state quota may not add state through a query or table subscription', async () => {
  const server = await startAuthServer();
  const streams: AbortController[] = [];
  try {
    const beta = await tenantAdmin(server.base, 'beta');
    const ddl = await call(server.base, 'POST', '/v1/sql', {
      token: beta,
      body: {
        sql:
          'CREATE TABLE bt (id INT PRIMARY KEY); CREATE TABLE other (id INT PRIMARY KEY); ' +
          'CREATE MATERIALIZED VIEW kept AS SELECT id FROM bt',
      },
    });
    assert.equal(ddl.status, 200, ddl.text);
    const rows = Array.from({ length: 200 }, (_, i) => ({ id: i }));
    assert.equal(
      (await call(server.base, 'POST', '/v1/tables/bt/rows', { token: beta, body: rows })).status,
      200,
    );
    const quota = await call(server.base, 'PATCH', '/v1/tenants/beta', {
      token: OPERATOR_TOKEN,
      body: { stateBytes: 1000 },
    });
    assert.equal(quota.status, 200, quota.text);
    const runtime = server.app.sluiceTenants.get('beta')!.runtime;
    const viewsBefore = runtime.viewNames().length;
    // A query that would hold 200 × 200 joined rows, and a table's own view: both refused whole.
    const join = encodeURIComponent('SELECT a.id AS x, b.id AS y FROM bt a CROSS JOIN bt b');
    for (const path of [`/v1/changes?sql=${join}`, '/v1/tables/other/changes']) {
      const controller = new AbortController();
      streams.push(controller);
      const r = await fetch(server.base + path, {
        headers: { authorization: `Bearer ${beta}` },
        signal: controller.signal,
      });
      const text = r.status === 200 ? '' : await r.text();
      assert.equal(r.status, 403, `${path}: ${r.status} ${text}`);
      assert.match(text, /QUOTA_EXCEEDED/);
    }
    assert.equal(runtime.viewNames().length, viewsBefore, 'no temporary view was created');
    // Over WebSocket the same, as an error and close 4403.
    const ws = new WsClient(`${server.wsBase}/v1/subscribe?sql=${join}`, {
      headers: { authorization: `Bearer ${beta}` },
    });
    assert.equal(await ws.waitClosed(), 4403);
    assert.equal(ws.messages[0]?.code, 'QUOTA_EXCEEDED');
    assert.equal(runtime.viewNames().length, viewsBefore);
    // Following a view that exists adds no state: still served.
    const controller = new AbortController();
    streams.push(controller);
    const kept = await fetch(`${server.base}/v1/views/kept/changes`, {
      headers: { authorization: `Bearer ${beta}` },
      signal: controller.signal,
    });
    assert.equal(kept.status, 200);
  } finally {
    for (const s of streams) s.abort();
    await server.close();
  }
});

test('large ingest batches that arrive together are held to the state quota when they are applied', async () => {
  // A data directory: a large batch's journal text is written ahead over several turns (ingest-ahead.ts).
  const dataDir = tempDir();
  const server = await startAuthServer({ dataDir });
  try {
    const beta = await tenantAdmin(server.base, 'beta');
    const ddl = await call(server.base, 'POST', '/v1/sql', {
      token: beta,
      body: { sql: 'CREATE TABLE kl (id INT, s TEXT)' },
    });
    assert.equal(ddl.status, 200, ddl.text);
    const usage = await call(server.base, 'GET', '/v1/tenants/beta/usage', { token: OPERATOR_TOKEN });
    const quota = await call(server.base, 'PATCH', '/v1/tenants/beta', {
      token: OPERATOR_TOKEN,
      body: { stateBytes: (usage.body.stateBytes as number) + 1 },
    });
    assert.equal(quota.status, 200, quota.text);
    const rows = Array.from({ length: INSERTS_AHEAD_MIN_ROWS + 100 }, (_, i) => ({ id: i, s: 'abcdefgh' }));
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(server.base, 'POST', '/v1/tables/kl/rows', { token: beta, body: rows }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    // The first batch applied passes the quota; every other one finds it passed, at the door or when
    // its own turn to be applied comes.
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    for (const a of answers.filter((x) => x.status !== 200))
      assert.equal(a.body.error?.code, 'QUOTA_EXCEEDED', a.text);
    const count = await call(server.base, 'POST', '/v1/sql', {
      token: beta,
      body: { sql: 'SELECT count(*) AS n FROM kl' },
    });
    assert.deepEqual((count.body.results as { rows: unknown[] }[])[0]?.rows, [{ n: rows.length }]);
  } finally {
    await server.close();
    removeDir(dataDir);
  }
});
