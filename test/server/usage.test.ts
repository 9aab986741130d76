// Metering against the real in-process server: a tenant's usage (rows and bytes in and out, state
// bytes and byte-hours, CPU of its epochs) equals what the test sent and received, byte for byte,
// is its own (a neighbour's stays at zero), is readable only by its admin and the operator, and is
// exported to Prometheus with the tenant's label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_TOKEN, call, startAuthServer, type Answer } from './auth-helpers.ts';
import { removeDir, tempDir } from './helpers.ts';

test('usage equals what was sent and answered; per tenant; on REST and in /metrics', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    for (const name of ['acme', 'beta'])
      assert.equal(
        (await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } })).status,
        201,
      );
    const token = async (tenant: string): Promise<string> =>
      (
        await call(base, 'POST', `/v1/tenants/${tenant}/tokens`, {
          token: OPERATOR_TOKEN,
          body: { role: 'admin' },
        })
      ).body.token as string;
    const acme = await token('acme');
    const beta = await token('beta');

    // Every request acme makes, with its body and answer counted here.
    let bytesIn = 0;
    let bytesOut = 0;
    const as = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      if (body !== undefined) bytesIn += Buffer.byteLength(JSON.stringify(body));
      const r = await call(base, method, path, { token: acme, ...(body !== undefined ? { body } : {}) });
      bytesOut += Buffer.byteLength(r.text);
      return r;
    };
    assert.equal(
      (
        await as('POST', '/v1/sql', {
          sql: 'CREATE TABLE t (id INT PRIMARY KEY, s TEXT); CREATE MATERIALIZED VIEW v AS SELECT id, s FROM t',
        })
      ).status,
      200,
    );
    let rows = 0;
    for (const n of [1000, 500, 250]) {
      const batch = Array.from({ length: n }, (_, i) => ({ id: rows + i, s: `row ${rows + i}` }));
      assert.equal((await as('POST', '/v1/tables/t/rows?wait=true', batch)).status, 200);
      rows += n;
    }
    // A delete is a row in (and a change out) too; a refused batch applies nothing.
    assert.equal((await as('POST', '/v1/tables/t/rows?wait=true', { delete: [{ id: 0 }] })).status, 200);
    assert.equal((await as('POST', '/v1/tables/t/rows', [{ id: 'x' }])).status, 400);
    const view = (await as('GET', '/v1/views/v')).body;
    const table = (await as('GET', '/v1/tables/t')).body;
    assert.ok((table.stateBytes as number) > rows * 50, 'the table holds its rows');

    const usage = (await call(base, 'GET', '/v1/tenants/acme/usage', { token: acme })).body;
    assert.equal(usage.tenant, 'acme');
    assert.equal(usage.rowsIn, rows + 1, 'every row ingested and the one delete');
    assert.equal(usage.rowsOut, rows + 1, "the view's changelog rows: one per insert, one for the delete");
    assert.equal(usage.bytesIn, bytesIn, 'the request bodies, byte for byte');
    assert.equal(usage.bytesOut, bytesOut, 'the answers, byte for byte');
    assert.equal(
      usage.stateBytes,
      (view.stateBytes as number) + (table.stateBytes as number),
      'views and tables',
    );
    assert.ok((usage.cpuMs as number) > 0, 'the epochs took CPU time');
    // Byte-hours accrue between readings.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = (await call(base, 'GET', '/v1/tenants/acme/usage', { token: OPERATOR_TOKEN })).body;
    assert.ok((later.stateByteHours as number) > 0);
    assert.ok((later.stateByteHours as number) >= (usage.stateByteHours as number));

    // The neighbour's meters are its own; another tenant's usage is not there for an admin.
    const other = (await call(base, 'GET', '/v1/tenants/beta/usage', { token: beta })).body;
    assert.equal(other.rowsIn, 0);
    assert.equal(other.bytesIn, 0);
    assert.equal(other.stateBytes, 0);
    const refused = await call(base, 'GET', '/v1/tenants/beta/usage', { token: acme });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error?.code, 'NOT_FOUND');

    const metrics = (await call(base, 'GET', '/metrics', { token: OPERATOR_TOKEN })).text;
    assert.match(metrics, new RegExp(`^sluice_tenant_rows_in_total\\{tenant="acme"\\} ${rows + 1}$`, 'm'));
    assert.match(metrics, /^sluice_tenant_rows_in_total\{tenant="beta"\} 0$/m);
    assert.match(metrics, /^sluice_tenant_epoch_cpu_seconds_total\{tenant="acme"\} [0-9.e-]+$/m);
    assert.doesNotMatch(
      (await call(base, 'GET', '/metrics', { token: beta })).text,
      /tenant="acme"/,
      "a tenant's metrics name no other tenant",
    );
  } finally {
    await server.close();
  }
});

test('SQL writes are metered, and a restart goes on from the stored meters', async () => {
  const dir = tempDir();
  try {
    let server = await startAuthServer({ dataDir: dir });
    const base = (): string => server.base;
    assert.equal(
      (await call(base(), 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: 'acme' } })).status,
      201,
    );
    const acme = (
      await call(base(), 'POST', '/v1/tenants/acme/tokens', {
        token: OPERATOR_TOKEN,
        body: { role: 'admin' },
      })
    ).body.token as string;
    const sql = async (text: string): Promise<Answer> => {
      const r = await call(base(), 'POST', '/v1/sql', { token: acme, body: { sql: text } });
      assert.equal(r.status, 200, r.text);
      return r;
    };
    await sql('CREATE TABLE t (id INT PRIMARY KEY, n INT)');
    // Rows written by SQL count as rows in: 3 inserted, 2 updated, 1 deleted.
    await sql('INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)');
    await sql('UPDATE t SET n = n + 1 WHERE id >= 2');
    await sql('DELETE FROM t WHERE id = 1');
    assert.equal(
      (await call(base(), 'POST', '/v1/tables/t/rows?wait=true', { token: acme, body: [{ id: 9, n: 9 }] }))
        .status,
      200,
    );
    const usage = async (): Promise<Record<string, unknown>> =>
      (await call(base(), 'GET', '/v1/tenants/acme/usage', { token: OPERATOR_TOKEN })).body;
    const before = await usage();
    assert.equal(before.rowsIn, 3 + 2 + 1 + 1);
    assert.ok((before.cpuMs as number) > 0);

    await server.close();
    server = await startAuthServer({ dataDir: dir });
    const after = await usage();
    for (const k of ['rowsIn', 'rowsOut', 'bytesIn', 'cpuMs', 'since'] as const)
      assert.equal(after[k], before[k], `${k} kept across the restart`);
    // Answers sent before the restart are kept too; the usage reading itself was answered after them.
    assert.ok((after.bytesOut as number) >= (before.bytesOut as number));
    assert.ok((after.stateByteHours as number) >= (before.stateByteHours as number));
    await sql('INSERT INTO t VALUES (4, 40)');
    assert.equal((await usage()).rowsIn, (before.rowsIn as number) + 1, 'and counting goes on from them');
    await server.close();
  } finally {
    removeDir(dir);
  }
});

test('the bytes of changelog streams count as bytes out', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: 'acme' } });
    const acme = (
      await call(base, 'POST', '/v1/tenants/acme/tokens', { token: OPERATOR_TOKEN, body: { role: 'admin' } })
    ).body.token as string;
    const created = await call(base, 'POST', '/v1/sql', {
      token: acme,
      body: {
        sql: 'CREATE TABLE t (id INT PRIMARY KEY, s TEXT); CREATE MATERIALIZED VIEW v AS SELECT id, s FROM t',
      },
    });
    assert.equal(created.status, 200);
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, s: `row number ${i}` }));
    assert.equal(
      (await call(base, 'POST', '/v1/tables/t/rows?wait=true', { token: acme, body: rows })).status,
      200,
    );
    // Read by the operator: its answers are the default tenant's, not acme's.
    const bytesOut = async (): Promise<number> =>
      (await call(base, 'GET', '/v1/tenants/acme/usage', { token: OPERATOR_TOKEN })).body.bytesOut as number;
    const before = await bytesOut();

    const controller = new AbortController();
    const res = await fetch(`${base}/v1/views/v/changes?snapshot=true`, {
      headers: { authorization: `Bearer ${acme}` },
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    // The complete lines received (the snapshot first), newlines included.
    const received = Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1));
    assert.ok(received > 500 * 10, `the snapshot arrived (${received} B)`);
    controller.abort();
    const delta = (await bytesOut()) - before;
    assert.ok(delta >= received && delta < 2 * received, `${delta} B metered for ${received} B received`);
  } finally {
    await server.close();
  }
});
