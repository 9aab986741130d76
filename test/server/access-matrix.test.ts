// Every route of the server, and every WebSocket path, against every kind of credential: none, a
// malformed token, a revoked one, each role, and the admin of another tenant. The routes are read
// from the server itself, so a route added without a row here fails this test. Each cell is the
// documented status (401 without a valid token, 403 below the route's role, the success otherwise);
// another tenant's token gets exactly what a name nobody has gets (same status and code, nothing
// of the other tenant in a body), and refused writes change nothing. The table is printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_TOKEN, WsClient, call, createToken, startAuthServer } from './auth-helpers.ts';

type Who = 'none' | 'garbage' | 'revoked' | 'reader' | 'writer' | 'admin' | 'operator' | 'other';
const WHO: readonly Who[] = ['none', 'garbage', 'revoked', 'reader', 'writer', 'admin', 'operator', 'other'];
type Least = 'open' | 'reader' | 'writer' | 'admin' | 'operator';
const RANK = { reader: 0, writer: 1, admin: 2, operator: 3 } as const;

/** The names a case uses: the default tenant's objects, or names nobody has. */
interface Names {
  readonly view: string;
  readonly table: string;
  readonly source: string;
  readonly sink: string;
  readonly tenant: string;
  readonly tokenId: string;
}

interface Outcome {
  /** The HTTP status, or for a WebSocket 'subscribed' or its close code. */
  readonly result: string;
  /** The error code, if any. */
  readonly code: string | null;
  /** The body (HTTP) or the messages (WebSocket), for leak checks. */
  readonly text: string;
}

interface Case {
  /** METHOD and route pattern, as the server lists it. */
  readonly route: string;
  readonly label?: string;
  readonly least: Least;
  /** The outcome of a success. */
  readonly ok: string;
  readonly run: (token: string | null, names: Names) => Promise<Outcome>;
}

const SETUP = `CREATE TABLE orders (id INT PRIMARY KEY, amount INT NOT NULL);
CREATE MATERIALIZED VIEW totals AS SELECT COUNT(*) AS n, SUM(amount) AS total FROM orders;
CREATE SOURCE src_s (id INT, PRIMARY KEY (id)) FROM KAFKA (brokers '127.0.0.1:1', topic 'matrix', format 'upsert');
CREATE SINK snk_k FROM totals INTO KAFKA (brokers '127.0.0.1:1', topic 'matrix_out', format 'changelog')`;

/** Every METHOD route the server serves (HEAD aside: it runs the GET handler), from its route tree. */
function serverRoutes(tree: string): string[] {
  const routes: string[] = [];
  const stack: { depth: number; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)(?:[└├]── )?(\S+) \(([^)]+)\)$/.exec(line.replace(/\s+$/, ''));
    if (m === null) continue;
    const depth = (m[1] ?? '').length;
    while (stack.length > 0 && (stack.at(-1) as { depth: number }).depth >= depth) stack.pop();
    const parent = stack.at(-1)?.path ?? '';
    const path = parent === '' ? (m[2] as string) : `${parent}${m[2]}`;
    stack.push({ depth, path });
    for (const method of (m[3] as string).split(', '))
      if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

test('every route and WebSocket path against every credential: the documented status, another tenant as missing, no effect', async () => {
  const server = await startAuthServer({
    auth: { enabled: true, wsAuthTimeoutMs: 300 },
    connectorConnectTimeoutMs: 500,
  });
  const base = server.base;
  try {
    const tokens: Record<Who, string | null> = {
      none: null,
      garbage: 'sluice_0000000000000000_' + 'x'.repeat(43),
      revoked: null,
      reader: (await createToken(base, OPERATOR_TOKEN, 'reader')).token,
      writer: (await createToken(base, OPERATOR_TOKEN, 'writer')).token,
      admin: (await createToken(base, OPERATOR_TOKEN, 'admin')).token,
      operator: OPERATOR_TOKEN,
      other: null,
    };
    const revoked = await createToken(base, OPERATOR_TOKEN, 'admin');
    assert.equal(
      (await call(base, 'DELETE', `/v1/tenants/default/tokens/${revoked.id}`, { token: OPERATOR_TOKEN }))
        .status,
      200,
    );
    tokens.revoked = revoked.token;
    assert.equal(
      (await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: 'acme' } })).status,
      201,
    );
    const acme = await call(base, 'POST', '/v1/tenants/acme/tokens', {
      token: OPERATOR_TOKEN,
      body: { role: 'admin' },
    });
    tokens.other = acme.body.token as string;
    const setup = await call(base, 'POST', '/v1/sql', { token: OPERATOR_TOKEN, body: { sql: SETUP } });
    assert.equal(setup.status, 200, setup.text);
    const real: Names = {
      view: 'totals',
      table: 'orders',
      source: 'src_s',
      sink: 'snk_k',
      tenant: 'default',
      tokenId: (await createToken(base, OPERATOR_TOKEN, 'reader')).id,
    };
    const missing: Names = {
      view: 'nope_v',
      table: 'nope_t',
      source: 'nope_s',
      sink: 'nope_k',
      tenant: 'nope-tenant',
      tokenId: 'ffffffffffffffff',
    };

    const http =
      (method: string, path: (n: Names) => string, body?: (n: Names) => unknown) =>
      async (token: string | null, n: Names): Promise<Outcome> => {
        const a = await call(base, method, path(n), {
          token,
          ...(body !== undefined ? { body: body(n) } : {}),
        });
        return { result: String(a.status), code: a.body.error?.code ?? null, text: a.text };
      };
    const ndjson =
      (path: (n: Names) => string) =>
      async (token: string | null, n: Names): Promise<Outcome> => {
        const controller = new AbortController();
        const res = await fetch(base + path(n), {
          headers: token === null ? {} : { authorization: `Bearer ${token}` },
          signal: controller.signal,
        });
        if (res.status === 200) {
          controller.abort();
          return { result: '200', code: null, text: '' };
        }
        const text = await res.text();
        const code = (JSON.parse(text) as { error?: { code: string } }).error?.code ?? null;
        return { result: String(res.status), code, text };
      };
    const ws =
      (path: (n: Names) => string) =>
      async (token: string | null, n: Names): Promise<Outcome> => {
        const c = new WsClient(
          `${server.wsBase}${path(n)}`,
          token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
        );
        try {
          await c.open().catch(() => undefined);
          const end = Date.now() + 10_000;
          while (c.closeCode === null && !c.messages.some((m) => m.type === 'subscribed')) {
            if (Date.now() > end) throw new Error(`no answer on ${path(n)}`);
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          const subscribed = c.messages.some((m) => m.type === 'subscribed');
          const error = c.messages.find((m) => m.type === 'error');
          return {
            result: subscribed ? 'subscribed' : String(c.closeCode),
            code: error === undefined ? null : String(error.code),
            text: JSON.stringify(c.messages),
          };
        } finally {
          c.close();
        }
      };
    let nextId = 1;
    let nextTenant = 1;
    const sql = (text: (n: Names) => string) =>
      http(
        'POST',
        () => '/v1/sql',
        (n) => ({ sql: text(n) }),
      );
    const cases: Case[] = [
      { route: 'GET /', least: 'open', ok: '200', run: http('GET', () => '/') },
      { route: 'GET /healthz', least: 'open', ok: '200', run: http('GET', () => '/healthz') },
      { route: 'GET /readyz', least: 'open', ok: '200', run: http('GET', () => '/readyz') },
      {
        route: 'GET /console/console.js',
        least: 'open',
        ok: '200',
        run: http('GET', () => '/console/console.js'),
      },
      {
        route: 'GET /console/console.css',
        least: 'open',
        ok: '200',
        run: http('GET', () => '/console/console.css'),
      },
      {
        route: 'GET /console/favicon.svg',
        least: 'open',
        ok: '200',
        run: http('GET', () => '/console/favicon.svg'),
      },
      {
        route: 'GET /console/metrics-history',
        least: 'reader',
        ok: '200',
        run: http('GET', () => '/console/metrics-history'),
      },
      { route: 'GET /docs', least: 'reader', ok: '200', run: http('GET', () => '/docs') },
      {
        route: 'GET /docs/static/index.html',
        least: 'reader',
        ok: '200',
        run: http('GET', () => '/docs/static/index.html'),
      },
      {
        route: 'GET /docs/static/swagger-initializer.js',
        least: 'reader',
        ok: '200',
        run: http('GET', () => '/docs/static/swagger-initializer.js'),
      },
      {
        route: 'GET /docs*',
        least: 'reader',
        ok: '200',
        run: http('GET', () => '/docs/static/swagger-ui.css'),
      },
      { route: 'GET /docs/json', least: 'reader', ok: '200', run: http('GET', () => '/docs/json') },
      { route: 'GET /docs/yaml', least: 'reader', ok: '200', run: http('GET', () => '/docs/yaml') },
      { route: 'GET /openapi.json', least: 'reader', ok: '200', run: http('GET', () => '/openapi.json') },
      { route: 'GET /metrics', least: 'reader', ok: '200', run: http('GET', () => '/metrics') },
      {
        route: 'POST /v1/sql',
        label: 'POST /v1/sql SELECT',
        least: 'reader',
        ok: '200',
        run: sql((n) => `SELECT * FROM ${n.view}`),
      },
      {
        route: 'POST /v1/sql',
        label: 'POST /v1/sql EXPLAIN',
        least: 'reader',
        ok: '200',
        run: sql((n) => `EXPLAIN SELECT * FROM ${n.table}`),
      },
      {
        route: 'POST /v1/sql',
        label: 'POST /v1/sql INSERT',
        least: 'writer',
        ok: '200',
        run: (t, n) => sql((m) => `INSERT INTO ${m.table} VALUES (${nextId++}, 1)`)(t, n),
      },
      {
        route: 'POST /v1/sql',
        label: 'POST /v1/sql CREATE VIEW + DROP',
        least: 'admin',
        ok: '200',
        run: sql(
          (n) =>
            `CREATE MATERIALIZED VIEW scratch AS SELECT n FROM ${n.view}; DROP MATERIALIZED VIEW scratch`,
        ),
      },
      {
        route: 'POST /v1/sql',
        label: 'POST /v1/sql DROP SINK (refused: missing)',
        least: 'admin',
        ok: '400',
        run: sql((n) => `DROP SINK ${n.sink}_gone`),
      },
      { route: 'GET /v1/tables', least: 'reader', ok: '200', run: http('GET', () => '/v1/tables') },
      {
        route: 'GET /v1/tables/:name',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/tables/${n.table}`),
      },
      {
        route: 'GET /v1/tables/:name/rows',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/tables/${n.table}/rows`),
      },
      {
        route: 'POST /v1/tables/:name/rows',
        least: 'writer',
        ok: '200',
        run: (t, n) =>
          http(
            'POST',
            (m) => `/v1/tables/${m.table}/rows`,
            () => [{ id: nextId++, amount: 1 }],
          )(t, n),
      },
      {
        route: 'GET /v1/tables/:name/changes',
        least: 'reader',
        ok: '200',
        run: ndjson((n) => `/v1/tables/${n.table}/changes`),
      },
      {
        route: 'GET /v1/tables/:name/subscribe',
        least: 'reader',
        ok: 'subscribed',
        run: ws((n) => `/v1/tables/${n.table}/subscribe`),
      },
      { route: 'GET /v1/views', least: 'reader', ok: '200', run: http('GET', () => '/v1/views') },
      {
        route: 'GET /v1/views/:name',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/views/${n.view}`),
      },
      {
        route: 'GET /v1/views/:name/rows',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/views/${n.view}/rows?n=0`),
      },
      {
        route: 'GET /v1/views/:name/errors',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/views/${n.view}/errors`),
      },
      {
        route: 'GET /v1/views/:name/dataflow',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/views/${n.view}/dataflow`),
      },
      {
        route: 'GET /v1/views/:name/changes',
        least: 'reader',
        ok: '200',
        run: ndjson((n) => `/v1/views/${n.view}/changes?resumeFrom=1`),
      },
      {
        route: 'GET /v1/views/:name/subscribe',
        least: 'reader',
        ok: 'subscribed',
        run: ws((n) => `/v1/views/${n.view}/subscribe?snapshot=true`),
      },
      {
        route: 'GET /v1/changes',
        least: 'reader',
        ok: '200',
        run: ndjson((n) => `/v1/changes?sql=${encodeURIComponent(`SELECT n FROM ${n.view}`)}`),
      },
      {
        route: 'GET /v1/subscribe',
        least: 'reader',
        ok: 'subscribed',
        run: ws((n) => `/v1/subscribe?sql=${encodeURIComponent(`SELECT id FROM ${n.table}`)}`),
      },
      { route: 'GET /v1/sources', least: 'reader', ok: '200', run: http('GET', () => '/v1/sources') },
      {
        route: 'GET /v1/sources/:name',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/sources/${n.source}`),
      },
      {
        route: 'GET /v1/sources/:name/errors',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/sources/${n.source}/errors`),
      },
      { route: 'GET /v1/sinks', least: 'reader', ok: '200', run: http('GET', () => '/v1/sinks') },
      {
        route: 'GET /v1/sinks/:name',
        least: 'reader',
        ok: '200',
        run: http('GET', (n) => `/v1/sinks/${n.sink}`),
      },
      { route: 'GET /v1/tenants', least: 'operator', ok: '200', run: http('GET', () => '/v1/tenants') },
      {
        route: 'POST /v1/tenants',
        least: 'operator',
        ok: '201',
        run: (t, n) =>
          http(
            'POST',
            () => '/v1/tenants',
            () => ({ name: `t${nextTenant++}` }),
          )(t, n),
      },
      {
        route: 'GET /v1/tenants/:tenant',
        least: 'admin',
        ok: '200',
        run: http('GET', (n) => `/v1/tenants/${n.tenant}`),
      },
      {
        route: 'PATCH /v1/tenants/:tenant',
        least: 'operator',
        ok: '200',
        run: http(
          'PATCH',
          (n) => `/v1/tenants/${n.tenant}`,
          () => ({ objects: null }),
        ),
      },
      {
        route: 'GET /v1/tenants/:tenant/usage',
        least: 'admin',
        ok: '200',
        run: http('GET', (n) => `/v1/tenants/${n.tenant}/usage`),
      },
      {
        route: 'GET /v1/tenants/:tenant/tokens',
        least: 'admin',
        ok: '200',
        run: http('GET', (n) => `/v1/tenants/${n.tenant}/tokens`),
      },
      {
        route: 'POST /v1/tenants/:tenant/tokens',
        least: 'admin',
        ok: '201',
        run: http(
          'POST',
          (n) => `/v1/tenants/${n.tenant}/tokens`,
          () => ({ role: 'reader' }),
        ),
      },
      {
        route: 'DELETE /v1/tenants/:tenant/tokens/:id',
        least: 'admin',
        ok: '200',
        // A fresh token for each attempt, so every success revokes one of its own.
        run: async (t, n) => {
          const id = n === real ? (await createToken(base, OPERATOR_TOKEN, 'reader')).id : n.tokenId;
          return http('DELETE', (m) => `/v1/tenants/${m.tenant}/tokens/${id}`)(t, n);
        },
      },
    ];

    // Every route the server has is a case here (a new route must be added to this table).
    const served = serverRoutes(server.app.printRoutes({ commonPrefix: false }));
    const covered = new Set(cases.map((c) => c.route));
    assert.deepEqual(
      served.filter((r) => !covered.has(r)),
      [],
      'routes the access matrix does not try',
    );
    assert.ok(served.length >= 44, `${served.length} routes read from the server`);

    const realNames = [real.view, real.table, real.source, real.sink];
    const normal = (o: Outcome, n: Names): string => {
      let text = o.text;
      for (const [k, v] of Object.entries(n)) text = text.replaceAll(v, `<${k}>`);
      return text;
    };
    const table: string[] = [`${'route'.padEnd(44)} ${WHO.map((w) => w.padStart(10)).join(' ')}`];
    const wrong: string[] = [];
    let writes = 0;
    for (const c of cases) {
      const row: string[] = [];
      for (const who of WHO) {
        const got = await c.run(tokens[who], real);
        let expected: string;
        if (c.least === 'open') expected = c.ok;
        else if (who === 'none' || who === 'garbage' || who === 'revoked')
          expected = c.route.endsWith('/subscribe') ? '4401' : '401';
        else if (who === 'other') {
          // Another tenant's admin: as for names nobody has, and nothing of the default tenant shown.
          const asMissing = await c.run(tokens.other, missing);
          expected = asMissing.result;
          if (got.code !== asMissing.code)
            wrong.push(
              `${c.label ?? c.route} as other: code ${got.code}, for a missing name ${asMissing.code}`,
            );
          // The answers about the API's own data (not static pages or creations) must be the same,
          // byte for byte once the names are put back, and a success must show none of its names.
          const dataRoute =
            c.route.includes(' /v1/') &&
            !c.route.startsWith('POST /v1/tenants') &&
            !c.route.startsWith('DELETE');
          if (dataRoute && normal(got, real) !== normal(asMissing, missing))
            wrong.push(
              `${c.label ?? c.route} as other: ${normal(got, real).slice(0, 300)}\n   missing: ${normal(asMissing, missing).slice(0, 300)}`,
            );
          if (
            dataRoute &&
            !c.route.includes('/v1/sql') &&
            (got.result === '200' || got.result === 'subscribed')
          ) {
            for (const name of realNames)
              if (got.text.includes(`"${name}"`))
                wrong.push(`${c.label ?? c.route} as other shows "${name}"`);
          }
          if (c.route === 'GET /metrics') assert.doesNotMatch(got.text, /tenant="default"/);
        } else {
          expected = RANK[who] >= RANK[c.least] ? c.ok : c.route.endsWith('/subscribe') ? '4403' : '403';
        }
        if (got.result !== expected)
          wrong.push(`${c.label ?? c.route} as ${who}: ${got.result}, expected ${expected}`);
        if (
          who !== 'other' &&
          (c.label === 'POST /v1/sql INSERT' || c.route === 'POST /v1/tables/:name/rows') &&
          got.result === '200'
        )
          writes += 1;
        row.push(got.result.padStart(10));
      }
      table.push(`${(c.label ?? c.route).padEnd(44)} ${row.join(' ')}`);
    }
    console.log(table.join('\n'));
    assert.deepEqual(wrong, []);
    // Only the writes a role allows took effect: refused INSERTs and ingest (and every attempt of
    // the other tenant's admin) changed nothing here.
    const rows = await call(base, 'GET', '/v1/views/totals/rows', { token: OPERATOR_TOKEN });
    assert.equal((rows.body.rows as { n: number }[])[0]?.n, writes);
    assert.equal(writes, 6, 'writer, admin and operator, through SQL and ingest');
  } finally {
    await server.close();
  }
});
