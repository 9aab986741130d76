// Tenants against the real in-process server and a real child process: two tenants holding objects
// of the same names are two sets of objects; every endpoint class tried with a tenant's own object,
// another tenant's and a missing one, where the other tenant's answer must be byte for byte the
// missing one's; tenants, their tokens and their data survive a restart; a data directory from
// before tenants starts as the default tenant's; a crash in the middle of creating a tenant leaves
// no half tenant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openRuntime, removeDir, tempDir } from './helpers.ts';
import { OPERATOR_TOKEN, WsClient, call, spawnSluice, startAuthServer, type Answer } from './auth-helpers.ts';

async function tenantToken(base: string, tenant: string, role: string): Promise<string> {
  const r = await call(base, 'POST', `/v1/tenants/${tenant}/tokens`, {
    token: OPERATOR_TOKEN,
    body: { role },
  });
  if (r.status !== 201) throw new Error(`token create failed (${r.status}): ${r.text}`);
  return r.body.token as string;
}

async function createTenant(base: string, name: string): Promise<Answer> {
  return call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } });
}

async function sqlAs(base: string, token: string, sql: string): Promise<Answer> {
  return call(base, 'POST', '/v1/sql', { token, body: { sql } });
}

/** The first messages of a WebSocket subscription until it closes, and its close code. */
async function wsOutcome(url: string, token: string): Promise<string> {
  const ws = new WsClient(url, { headers: { authorization: `Bearer ${token}` } });
  await ws.open().catch(() => undefined);
  const code = await ws.waitClosed();
  return JSON.stringify({ code, messages: ws.messages });
}

/** An NDJSON changelog's status and body (a refused one ends at once; an accepted one is cut). */
async function ndjsonOutcome(base: string, path: string, token: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(base + path, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (res.status === 200) {
    controller.abort();
    return 'streaming';
  }
  return JSON.stringify({ status: res.status, body: await res.text() });
}

test('the same names in two tenants are two objects; another tenant’s object answers exactly as a missing one', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    assert.equal((await createTenant(base, 'acme')).status, 201);
    assert.equal((await createTenant(base, 'beta')).status, 201);
    const acme = await tenantToken(base, 'acme', 'admin');
    const beta = await tenantToken(base, 'beta', 'admin');

    // The same names, other columns and other rows.
    assert.equal(
      (
        await sqlAs(
          base,
          acme,
          'CREATE TABLE orders (id INT PRIMARY KEY, amount INT NOT NULL); CREATE MATERIALIZED VIEW totals AS SELECT COUNT(*) AS n FROM orders',
        )
      ).status,
      200,
    );
    assert.equal(
      (
        await sqlAs(
          base,
          beta,
          'CREATE TABLE orders (k TEXT PRIMARY KEY); CREATE MATERIALIZED VIEW totals AS SELECT k FROM orders',
        )
      ).status,
      200,
    );
    assert.equal(
      (
        await call(base, 'POST', '/v1/tables/orders/rows?wait=true', {
          token: acme,
          body: [{ id: 1, amount: 5 }],
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await call(base, 'POST', '/v1/tables/orders/rows?wait=true', {
          token: beta,
          body: [{ k: 'x' }, { k: 'y' }],
        })
      ).status,
      200,
    );
    assert.deepEqual((await call(base, 'GET', '/v1/views/totals/rows', { token: acme })).body.rows, [
      { n: 1 },
    ]);
    assert.deepEqual((await call(base, 'GET', '/v1/views/totals/rows', { token: beta })).body.rows, [
      { k: 'x' },
      { k: 'y' },
    ]);
    // Each tenant's epochs are its own.
    assert.equal((await call(base, 'GET', '/v1/views/totals', { token: acme })).body.epoch, 1);

    // Every endpoint class, for a name: beta's answer is recorded before acme has an object of that
    // name (missing), then after (another tenant's) — they must be identical — and acme's own
    // answer must be a success.
    const NAME = 'secret_acme';
    type Probe = { name: string; run: (token: string) => Promise<string> };
    const status = (a: Answer): string => JSON.stringify({ status: a.status, body: a.body });
    const probes: Probe[] = [
      {
        name: 'GET /v1/tables/{t}',
        run: async (t) => status(await call(base, 'GET', `/v1/tables/${NAME}`, { token: t })),
      },
      {
        name: 'GET /v1/tables/{t}/rows',
        run: async (t) => status(await call(base, 'GET', `/v1/tables/${NAME}/rows`, { token: t })),
      },
      {
        name: 'POST /v1/tables/{t}/rows',
        run: async (t) =>
          status(
            await call(base, 'POST', `/v1/tables/${NAME}/rows`, { token: t, body: [{ id: 9, amount: 1 }] }),
          ),
      },
      {
        name: 'GET /v1/views/{v}',
        run: async (t) => status(await call(base, 'GET', `/v1/views/${NAME}_v`, { token: t })),
      },
      {
        name: 'GET /v1/views/{v}/rows',
        run: async (t) => status(await call(base, 'GET', `/v1/views/${NAME}_v/rows?n=1`, { token: t })),
      },
      {
        name: 'GET /v1/views/{v}/rows?asOf',
        run: async (t) => status(await call(base, 'GET', `/v1/views/${NAME}_v/rows?asOf=1`, { token: t })),
      },
      {
        name: 'GET /v1/views/{v}/errors',
        run: async (t) => status(await call(base, 'GET', `/v1/views/${NAME}_v/errors`, { token: t })),
      },
      {
        name: 'GET /v1/views/{v}/dataflow (console)',
        run: async (t) => status(await call(base, 'GET', `/v1/views/${NAME}_v/dataflow`, { token: t })),
      },
      {
        name: 'NDJSON /v1/views/{v}/changes',
        run: (t) => ndjsonOutcome(base, `/v1/views/${NAME}_v/changes?snapshot=true`, t),
      },
      {
        name: 'NDJSON /v1/views/{v}/changes?resumeFrom',
        run: (t) => ndjsonOutcome(base, `/v1/views/${NAME}_v/changes?resumeFrom=1`, t),
      },
      {
        name: 'NDJSON /v1/tables/{t}/changes',
        run: (t) => ndjsonOutcome(base, `/v1/tables/${NAME}/changes`, t),
      },
      {
        name: 'NDJSON /v1/changes?sql',
        run: (t) => ndjsonOutcome(base, `/v1/changes?sql=${encodeURIComponent(`SELECT id FROM ${NAME}`)}`, t),
      },
      {
        name: 'WS /v1/views/{v}/subscribe',
        run: async (t) =>
          (await ndjsonOutcome(base, `/v1/views/${NAME}_v/changes`, t)) === 'streaming'
            ? 'streaming'
            : wsOutcome(`${server.wsBase}/v1/views/${NAME}_v/subscribe`, t),
      },
      {
        name: 'WS /v1/tables/{t}/subscribe',
        run: async (t) =>
          (await ndjsonOutcome(base, `/v1/tables/${NAME}/changes`, t)) === 'streaming'
            ? 'streaming'
            : wsOutcome(`${server.wsBase}/v1/tables/${NAME}/subscribe`, t),
      },
      { name: 'SQL SELECT', run: async (t) => status(await sqlAs(base, t, `SELECT * FROM ${NAME}`)) },
      {
        name: 'SQL SELECT (join, WHERE)',
        run: async (t) =>
          status(
            await sqlAs(
              base,
              t,
              `SELECT o.id FROM orders o JOIN ${NAME} s ON o.id = s.id WHERE s.amount > 0`,
            ),
          ),
      },
      {
        name: 'SQL EXPLAIN',
        run: async (t) => status(await sqlAs(base, t, `EXPLAIN SELECT * FROM ${NAME}`)),
      },
      {
        name: 'SQL EXPLAIN DATAFLOW',
        run: async (t) => status(await sqlAs(base, t, `EXPLAIN DATAFLOW SELECT * FROM ${NAME}_v`)),
      },
      {
        name: 'SQL INSERT',
        run: async (t) => status(await sqlAs(base, t, `INSERT INTO ${NAME} VALUES (7, 7)`)),
      },
      { name: 'SQL UPDATE', run: async (t) => status(await sqlAs(base, t, `UPDATE ${NAME} SET amount = 1`)) },
      {
        name: 'SQL DELETE',
        run: async (t) => status(await sqlAs(base, t, `DELETE FROM ${NAME} WHERE id = 1`)),
      },
      {
        name: 'SQL CREATE VIEW over it',
        run: async (t) =>
          status(await sqlAs(base, t, `CREATE MATERIALIZED VIEW spy AS SELECT COUNT(*) AS c FROM ${NAME}`)),
      },
      {
        name: 'SQL CREATE SINK from it',
        run: async (t) =>
          status(
            await sqlAs(
              base,
              t,
              `CREATE SINK spy_sink FROM ${NAME}_v INTO KAFKA (brokers '127.0.0.1:1', topic 'x', format 'changelog')`,
            ),
          ),
      },
      { name: 'SQL DROP TABLE', run: async (t) => status(await sqlAs(base, t, `DROP TABLE ${NAME}`)) },
      {
        name: 'SQL DROP VIEW',
        run: async (t) => status(await sqlAs(base, t, `DROP MATERIALIZED VIEW ${NAME}_v`)),
      },
      {
        name: 'GET /v1/sources/{s}',
        run: async (t) => status(await call(base, 'GET', `/v1/sources/${NAME}`, { token: t })),
      },
      {
        name: 'GET /v1/sinks/{s}',
        run: async (t) => status(await call(base, 'GET', `/v1/sinks/${NAME}`, { token: t })),
      },
      {
        name: 'GET /v1/tenants/{t}/tokens of another tenant',
        run: async (t) =>
          status(await call(base, 'GET', `/v1/tenants/${NAME.replace('_', '-')}/tokens`, { token: t })),
      },
    ];
    const missing = new Map<string, string>();
    for (const p of probes) missing.set(p.name, await p.run(beta));
    // Beta's probes changed nothing of its own (they were all refused): still its two rows.
    assert.deepEqual((await call(base, 'GET', '/v1/views/totals/rows', { token: beta })).body.total, 2);

    // Now acme has objects of that name (and a tenant of that name exists).
    assert.equal((await createTenant(base, NAME.replace('_', '-'))).status, 201);
    assert.equal(
      (
        await sqlAs(
          base,
          acme,
          `CREATE TABLE ${NAME} (id INT PRIMARY KEY, amount INT NOT NULL); CREATE MATERIALIZED VIEW ${NAME}_v AS SELECT COUNT(*) AS n FROM ${NAME}`,
        )
      ).status,
      200,
    );
    assert.equal(
      (
        await call(base, 'POST', `/v1/tables/${NAME}/rows?wait=true`, {
          token: acme,
          body: [{ id: 1, amount: 5 }],
        })
      ).status,
      200,
    );
    const table = [`${'endpoint class'.padEnd(44)} another tenant's object vs a missing one`];
    const differing: string[] = [];
    for (const p of probes) {
      const other = await p.run(beta);
      const same = other === missing.get(p.name);
      if (!same) differing.push(`${p.name}:\n  other:   ${other}\n  missing: ${missing.get(p.name)}`);
      const missingStatus = /"status":(\d+)/.exec(missing.get(p.name) ?? '')?.[1] ?? 'ws/stream';
      table.push(`${p.name.padEnd(44)} ${same ? 'identical' : 'DIFFERENT'} (${missingStatus})`);
    }
    console.log(table.join('\n'));
    assert.deepEqual(differing, [], 'another tenant’s object answers exactly as a missing one');
    // Each refused probe was refused with the body of a missing object, never a success.
    for (const [name, answer] of missing) {
      assert.ok(answer !== 'streaming', `${name} was served from another tenant`);
      assert.doesNotMatch(answer, /"status":20\d/, `${name} succeeded`);
    }

    // The owner reaches its objects through the same endpoints.
    assert.equal((await call(base, 'GET', `/v1/views/${NAME}_v/rows`, { token: acme })).body.total, 1);
    assert.equal(await ndjsonOutcome(base, `/v1/views/${NAME}_v/changes`, acme), 'streaming');
    assert.equal((await sqlAs(base, acme, `SELECT * FROM ${NAME}`)).status, 200);
    assert.equal((await call(base, 'GET', `/v1/views/${NAME}_v/dataflow`, { token: acme })).status, 200);

    // Listings hold only the tenant's own objects; metrics name only its own.
    const names = async (t: string, what: string): Promise<string[]> =>
      ((await call(base, 'GET', `/v1/${what}`, { token: t })).body[what] as { name: string }[]).map(
        (x) => x.name,
      );
    assert.deepEqual(await names(beta, 'tables'), ['orders']);
    assert.deepEqual(await names(beta, 'views'), ['totals']);
    assert.deepEqual((await names(acme, 'tables')).sort(), ['orders', NAME]);
    assert.doesNotMatch(
      JSON.stringify((await sqlAs(base, beta, 'SHOW TABLES; SHOW VIEWS')).body),
      new RegExp(NAME),
    );
    const betaMetrics = (await call(base, 'GET', '/metrics', { token: beta })).text;
    assert.doesNotMatch(betaMetrics, new RegExp(NAME));
    assert.doesNotMatch(betaMetrics, /tenant="acme"/);
    assert.match(betaMetrics, /sluice_rows_in_total\{table="orders",tenant="beta"\} 2/);
    const operatorMetrics = (await call(base, 'GET', '/metrics', { token: OPERATOR_TOKEN })).text;
    assert.match(operatorMetrics, /sluice_rows_in_total\{table="orders",tenant="acme"\} 1/);
    assert.match(operatorMetrics, /sluice_rows_in_total\{table="orders",tenant="beta"\} 2/);

    // Tenant admin API: a tenant's admin sees its own tenant and tokens, another's is missing.
    assert.equal((await call(base, 'GET', '/v1/tenants/beta', { token: beta })).status, 200);
    const otherTenant = await call(base, 'GET', '/v1/tenants/acme', { token: beta });
    const noTenant = await call(base, 'GET', '/v1/tenants/nope', { token: beta });
    assert.equal(otherTenant.status, 404);
    assert.deepEqual(otherTenant.body.error?.code, noTenant.body.error?.code);
    assert.equal((await call(base, 'GET', '/v1/tenants', { token: beta })).status, 403);
    assert.deepEqual(
      (
        (await call(base, 'GET', '/v1/tenants', { token: OPERATOR_TOKEN })).body.tenants as { name: string }[]
      ).map((t) => t.name),
      ['default', 'acme', 'beta', 'secret-acme'],
    );
  } finally {
    await server.close();
  }
});

test('tenant creation: names checked, a taken name is TENANT_EXISTS, operator only, operator tokens stay in default', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    assert.equal((await createTenant(base, 'acme')).status, 201);
    const again = await createTenant(base, 'acme');
    assert.equal(again.status, 409);
    assert.equal(again.body.error?.code, 'TENANT_EXISTS');
    assert.equal((await createTenant(base, 'default')).body.error?.code, 'TENANT_EXISTS');
    for (const bad of ['', 'Acme', '../x', 'a/b', '1abc', 'x'.repeat(64), '.hidden']) {
      const r = await createTenant(base, bad);
      assert.equal(r.status, 400, `name ${JSON.stringify(bad)}`);
      assert.equal(r.body.error?.code, 'INVALID_REQUEST');
    }
    const admin = await tenantToken(base, 'acme', 'admin');
    const refused = await call(base, 'POST', '/v1/tenants', { token: admin, body: { name: 'mine' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'FORBIDDEN');
    const op = await call(base, 'POST', '/v1/tenants/acme/tokens', {
      token: OPERATOR_TOKEN,
      body: { role: 'operator' },
    });
    assert.equal(op.status, 400);
    // Nothing of the refused requests exists.
    assert.deepEqual(
      (
        (await call(base, 'GET', '/v1/tenants', { token: OPERATOR_TOKEN })).body.tenants as { name: string }[]
      ).map((t) => t.name),
      ['default', 'acme'],
    );
  } finally {
    await server.close();
  }
});

test('tenants, their tokens and their data survive a restart; a data directory from before tenants is the default tenant', async () => {
  const dir = tempDir();
  try {
    // A data directory written before tenants existed (no auth.db, no tenants/).
    const old = openRuntime(dir);
    assert.equal(old.executeScript('CREATE TABLE legacy (id INT PRIMARY KEY)').error, undefined);
    await old.ingestGrouped('legacy', { insert: [{ id: 1 }, { id: 2 }] });
    old.close();
    assert.ok(!existsSync(join(dir, 'tenants')));

    let server = await startAuthServer({ dataDir: dir });
    let acme: string;
    try {
      const base = server.base;
      assert.equal(
        (await call(base, 'GET', '/v1/tables/legacy/rows', { token: OPERATOR_TOKEN })).body.total,
        2,
        "the old data is the default tenant's",
      );
      assert.equal((await createTenant(base, 'acme')).status, 201);
      acme = await tenantToken(base, 'acme', 'admin');
      assert.equal((await sqlAs(base, acme, 'CREATE TABLE legacy (v TEXT PRIMARY KEY)')).status, 200);
      assert.equal(
        (await call(base, 'POST', '/v1/tables/legacy/rows', { token: acme, body: [{ v: 'a' }] })).status,
        200,
      );
      // The default tenant kept the top level; acme lives in a subdirectory of its own.
      assert.ok(existsSync(join(dir, 'sluice.db')));
      assert.ok(existsSync(join(dir, 'tenants', 'acme', 'sluice.db')));
    } finally {
      await server.close();
    }

    server = await startAuthServer({ dataDir: dir });
    try {
      const base = server.base;
      assert.deepEqual(
        (
          (await call(base, 'GET', '/v1/tenants', { token: OPERATOR_TOKEN })).body.tenants as {
            name: string;
          }[]
        ).map((t) => t.name),
        ['default', 'acme'],
      );
      assert.deepEqual((await call(base, 'GET', '/v1/tables/legacy/rows', { token: acme })).body.rows, [
        { v: 'a' },
      ]);
      assert.equal(
        (await call(base, 'GET', '/v1/tables/legacy/rows', { token: OPERATOR_TOKEN })).body.total,
        2,
      );
    } finally {
      await server.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a crash while a tenant is being created leaves no half tenant; the name can be created again', async () => {
  const dir = tempDir();
  const env = { SLUICE_BOOTSTRAP_TOKEN: OPERATOR_TOKEN };
  try {
    const crashing = await spawnSluice(['--auth', '--data-dir', dir], {
      ...env,
      SLUICE_CRASH_POINT: 'tenant-before-listed',
    });
    const base = `http://127.0.0.1:${crashing.port}`;
    await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: 'acme' } }).catch(
      () => undefined,
    );
    assert.equal(await crashing.exited.then(() => 'exited'), 'exited');
    // The directory was made (the crash came after the runtime opened), the row was not.
    assert.deepEqual(readdirSync(join(dir, 'tenants')), ['acme']);

    const server = await spawnSluice(['--auth', '--data-dir', dir], env);
    try {
      const base2 = `http://127.0.0.1:${server.port}`;
      const listed = await call(base2, 'GET', '/v1/tenants', { token: OPERATOR_TOKEN });
      assert.deepEqual(
        (listed.body.tenants as { name: string }[]).map((t) => t.name),
        ['default'],
      );
      assert.deepEqual(readdirSync(join(dir, 'tenants')), [], 'the half tenant was removed at start');
      const r = await call(base2, 'POST', '/v1/tenants/acme/tokens', {
        token: OPERATOR_TOKEN,
        body: { role: 'admin' },
      });
      assert.equal(r.status, 404, 'no token for a tenant that does not exist');
      assert.equal(
        (await call(base2, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: 'acme' } })).status,
        201,
      );
    } finally {
      await server.stop();
    }
  } finally {
    removeDir(dir);
  }
});
