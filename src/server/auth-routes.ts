// Where authentication meets the HTTP server (docs/security.md): one onRequest hook decides, per route,
// whether a token is needed and which role; `/v1/sql` scripts are checked statement by statement before
// any statement runs; WebSocket subscriptions authenticate by header or by a first `auth` message; and
// the admin API manages tokens. Open without a token: /healthz, /readyz and the console's static shell
// (it holds no data); everything else needs one.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import { stringifyWire } from '../common/json-codec.ts';
import type { Statement } from '../parser/ast.ts';
import { parseInSlices } from '../parser/parse.ts';
import {
  Authenticator,
  DEFAULT_TENANT,
  LOOPBACK_PRINCIPAL,
  ROLES,
  forbidden,
  isRole,
  roleAtLeast,
  type Principal,
  type Role,
} from './auth.ts';
import type { TokenInfo } from '../storage/token-store.ts';
import type { Tenant, TenantRegistry } from './tenants.ts';
import { QUOTA_NAMES, type Quotas } from '../storage/tenant-store.ts';

/** The WebSocket close code of a failed authentication (after an `error` message). */
export const UNAUTHENTICATED_CLOSE = 4401;
/** How long a WebSocket without an Authorization header may take to send its `auth` message. */
export const WS_AUTH_TIMEOUT_MS = 10_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts as (set by the auth hook; null on open routes). */
    principal: Principal | null;
    /** A WebSocket upgrade's header outcome, settled in the socket's handler (auth-routes.ts). */
    wsAuth: Principal | SluiceError | null;
  }
}

/** Routes anyone may read: health probes and the console's shell, which carry no data. */
const OPEN_ROUTES: ReadonlySet<string> = new Set([
  '/healthz',
  '/readyz',
  '/',
  '/console/console.js',
  '/console/console.css',
  '/console/favicon.svg',
]);

type Access = 'open' | 'script' | Role;

/** What a route needs; `script` is /v1/sql (a reader, then each statement's own role). */
export function accessOf(method: string, url: string | undefined): Access {
  if (url !== undefined && OPEN_ROUTES.has(url) && (method === 'GET' || method === 'HEAD')) return 'open';
  if (url === '/v1/sql') return 'script';
  if (url === '/v1/tables/:name/rows' && method === 'POST') return 'writer';
  // The admin API checks its tenant and role itself (a reader gets a 403 there, not here).
  return 'reader';
}

/** The role a statement needs and its name in an error. */
export function statementAccess(s: Statement): { role: Role; name: string } {
  switch (s.kind) {
    case 'select':
      return { role: 'reader', name: 'SELECT' };
    case 'explain':
      return { role: 'reader', name: 'EXPLAIN' };
    case 'setClock':
      return { role: 'admin', name: 'SET CLOCK' };
    case 'show':
      return { role: 'reader', name: 'SHOW' };
    case 'insert':
      return { role: 'writer', name: 'INSERT' };
    case 'update':
      return { role: 'writer', name: 'UPDATE' };
    case 'delete':
      return { role: 'writer', name: 'DELETE' };
    case 'createTable':
      return { role: 'admin', name: 'CREATE TABLE' };
    case 'createView':
      return { role: 'admin', name: 'CREATE MATERIALIZED VIEW' };
    case 'createSource':
      return { role: 'admin', name: 'CREATE SOURCE' };
    case 'createSink':
      return { role: 'admin', name: 'CREATE SINK' };
    case 'createFunction':
      return { role: 'admin', name: 'CREATE FUNCTION' };
    case 'drop':
      return {
        role: 'admin',
        name: `DROP ${s.objectKind === 'view' ? 'MATERIALIZED VIEW' : s.objectKind.toUpperCase()}`,
      };
  }
}

/**
 * The first statement of `sql` above `role`, as FORBIDDEN, or null. Parsed in slices (a long script
 * does not hold the loop); a script that does not parse is left to the engine, which refuses it whole
 * with its parse error, so nothing runs either way.
 */
export async function checkScript(sql: string, role: Role, limits: SqlLimits): Promise<SluiceError | null> {
  if (roleAtLeast(role, 'admin')) return null; // an admin may run every statement
  const statements = await parseInSlices(sql, limits);
  if (statements === null) return null;
  for (const s of statements) {
    const needed = statementAccess(s);
    if (!roleAtLeast(role, needed.role)) {
      return new SluiceError('FORBIDDEN', `permission denied: role "${role}" may not run ${needed.name}`, {
        position: s.pos,
        detail: 'no statement of the script was run',
        hint: `${needed.name} needs the ${needed.role} role or higher (docs/security.md)`,
      });
    }
  }
  return null;
}

export interface AuthWiring {
  readonly websocketRoutes: ReadonlySet<string>;
  readonly sendError: (reply: FastifyReply, error: SluiceError) => FastifyReply;
  /** The engine's SQL limits (for parsing scripts to check them). */
  readonly limits: () => SqlLimits;
}

function challenge(reply: FastifyReply, error: SluiceError): void {
  if (error.code === 'UNAUTHENTICATED') {
    reply.header(
      'www-authenticate',
      error.message.startsWith('invalid token')
        ? 'Bearer realm="sluice", error="invalid_token"'
        : 'Bearer realm="sluice"',
    );
  }
}

/**
 * Adds the auth hook (after the request guard: register it second) and the script check, and marks
 * open routes as such in the OpenAPI document. The token routes are added by registerTokenRoutes.
 */
export function registerAuth(app: FastifyInstance, auth: Authenticator, wiring: AuthWiring): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('wsAuth', null);
  app.addHook('onRoute', (route) => {
    const url = route.url;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((m) => accessOf(m, url) === 'open')) {
      route.schema = { ...(route.schema ?? {}), security: [] } as typeof route.schema;
    }
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.routeOptions.url;
    const access = accessOf(request.method, url);
    if (access === 'open') return;
    if (!auth.enabled) {
      request.principal = LOOPBACK_PRINCIPAL;
      return;
    }
    const upgrade = (request.raw as IncomingMessage & { upgrade?: boolean }).upgrade === true;
    const header = request.headers.authorization;
    if (upgrade && url !== undefined && wiring.websocketRoutes.has(url)) {
      // Settled once the socket is open: an error message and close 4401, or a first `auth` message.
      request.wsAuth = header === undefined ? null : await auth.fromHeader(header);
      return;
    }
    const outcome = await auth.fromHeader(header);
    if (outcome instanceof SluiceError) {
      challenge(reply, outcome);
      reply.header('connection', 'close');
      return wiring.sendError(reply, outcome);
    }
    if (access !== 'script' && !roleAtLeast(outcome.role, access)) {
      return wiring.sendError(reply, forbidden(outcome, describe(request.method, url), access));
    }
    request.principal = outcome;
    // A changelog stream lives on: it ends when its token is revoked.
    if (url !== undefined && url.endsWith('/changes')) {
      const untrack = auth.track(outcome, () => request.raw.destroy());
      reply.raw.once('close', untrack);
    }
  });

  app.addHook('preHandler', async (request: FastifyRequest<{ Body: unknown }>, reply: FastifyReply) => {
    if (request.routeOptions.url !== '/v1/sql' || request.method !== 'POST') return;
    const principal = request.principal;
    const body = request.body as { sql?: unknown } | undefined;
    if (principal === null || typeof body?.sql !== 'string') return;
    const error = await checkScript(body.sql, principal.role, wiring.limits());
    if (error === null) return;
    // The API's script error shape: the results before the failing statement (none ran).
    return reply.code(403).send({ error: error.toJSON(), results: [] });
  });
}

function describe(method: string, url: string | undefined): string {
  if (url === '/v1/tables/:name/rows') return 'ingest rows';
  return `${method} ${url ?? 'this route'}`;
}

/**
 * Settles a WebSocket's authentication once it is open: the Authorization header's outcome, or else
 * the first message, which must be `{"type":"auth","token":"..."}` within WS_AUTH_TIMEOUT_MS. On
 * failure it sends an `error` message and closes with 4401, and resolves null. A subscription whose
 * token is revoked later is closed the same way.
 */
export function authorizeWebSocket(
  auth: Authenticator,
  socket: WebSocket,
  request: FastifyRequest,
  timeoutMs = WS_AUTH_TIMEOUT_MS,
): Promise<Principal | null> {
  const refuse = (error: SluiceError): null => {
    if (socket.readyState === socket.OPEN) {
      socket.send(stringifyWire({ type: 'error', code: error.code, message: error.message }));
      socket.close(UNAUTHENTICATED_CLOSE, error.code);
      setTimeout(() => socket.terminate(), 2000).unref();
    }
    return null;
  };
  const accepted = (principal: Principal): Principal => {
    const untrack = auth.track(principal, () =>
      refuse(new SluiceError('UNAUTHENTICATED', 'the token of this subscription was revoked')),
    );
    socket.once('close', untrack);
    return principal;
  };
  if (request.principal !== null) return Promise.resolve(request.principal); // authentication off
  const fromHeader = request.wsAuth;
  if (fromHeader instanceof SluiceError) return Promise.resolve(refuse(fromHeader));
  if (fromHeader !== null) return Promise.resolve(accepted(fromHeader));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.off('message', onMessage);
      resolve(
        refuse(
          new SluiceError(
            'UNAUTHENTICATED',
            `authentication required: send {"type":"auth","token":"..."} first (within ${timeoutMs} ms) or the Authorization header`,
          ),
        ),
      );
    }, timeoutMs);
    timer.unref();
    const onMessage = (data: unknown): void => {
      clearTimeout(timer);
      let token: unknown;
      try {
        const m = JSON.parse(String(data)) as { type?: unknown; token?: unknown };
        token = m.type === 'auth' ? m.token : undefined;
      } catch {
        token = undefined;
      }
      if (typeof token !== 'string') {
        resolve(
          refuse(
            new SluiceError(
              'UNAUTHENTICATED',
              'authentication required: the first message must be {"type":"auth","token":"..."}',
            ),
          ),
        );
        return;
      }
      auth.fromToken(token).then(
        (outcome) => resolve(outcome instanceof SluiceError ? refuse(outcome) : accepted(outcome)),
        (error: unknown) =>
          resolve(
            refuse(error instanceof SluiceError ? error : new SluiceError('UNAVAILABLE', String(error))),
          ),
      );
    };
    socket.once('message', onMessage);
    socket.once('close', () => clearTimeout(timer));
  });
}

// ---- the admin API: tenants and their tokens -----------------------------------------------------

const tokenJson = (t: TokenInfo): Record<string, unknown> => ({
  id: t.id,
  tenant: t.tenant,
  role: t.role,
  createdAt: new Date(t.createdAt).toISOString(),
  lastUsedAt: t.lastUsedAt === null ? null : new Date(t.lastUsedAt).toISOString(),
  revoked: t.revokedAt !== null,
  ...(t.revokedAt !== null ? { revokedAt: new Date(t.revokedAt).toISOString() } : {}),
});

const tokenSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'Not secret: names the token in lists and revocation' },
    tenant: { type: 'string' },
    role: { type: 'string', enum: [...ROLES] },
    createdAt: { type: 'string', format: 'date-time' },
    lastUsedAt: { type: 'string', format: 'date-time', nullable: true },
    revoked: { type: 'boolean' },
    revokedAt: { type: 'string', format: 'date-time' },
  },
} as const;
const errorRef = { $ref: 'SluiceError#' } as const;
const quotaValue = { type: 'integer', minimum: 0, nullable: true } as const;
const quotasSchema = {
  type: 'object',
  description: 'Per-tenant limits; null: unlimited',
  properties: {
    objects: { ...quotaValue, description: 'Tables, views, sources and sinks together' },
    stateBytes: { ...quotaValue, description: 'State of its tables and views, in bytes' },
    ingestRowsPerSecond: {
      ...quotaValue,
      description: 'Rows written per second: table ingest, SQL INSERT/UPDATE/DELETE, Kafka sources (paced)',
    },
    ingestBytesPerSecond: {
      ...quotaValue,
      description: 'Bytes written per second: ingest and DML request bodies, Kafka record keys and values',
    },
    subscribers: { ...quotaValue, description: 'Open subscriptions, those still authenticating included' },
    connectors: { ...quotaValue, description: 'Kafka sources and sinks together' },
  },
} as const;
const tenantSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time', nullable: true },
    quotas: quotasSchema,
  },
} as const;
const tenantJson = (t: Tenant): Record<string, unknown> => ({
  name: t.name,
  createdAt: t.createdAt === 0 ? null : new Date(t.createdAt).toISOString(),
  quotas: t.quotas,
});
const authErrors = {
  401: { ...errorRef, description: 'UNAUTHENTICATED: no token, or an unknown or revoked one' },
  403: { ...errorRef, description: 'FORBIDDEN: the role does not allow it' },
  404: { ...errorRef, description: 'NOT_FOUND: no such tenant or token' },
} as const;
const tenantParam = {
  type: 'object',
  required: ['tenant'],
  properties: { tenant: { type: 'string', maxLength: 100 } },
} as const;

/** The admin API's routes (after the OpenAPI plugin, so that it documents them). */
export function registerTokenRoutes(
  app: FastifyInstance,
  auth: Authenticator,
  tenants: TenantRegistry,
): void {
  const principalOf = (request: FastifyRequest): Principal => {
    if (request.principal === null)
      throw new SluiceError('INTERNAL_ERROR', 'a token route ran without a principal');
    return request.principal;
  };
  /** The tenant of the URL, for a principal that may manage its tokens (admin of it, or operator). */
  const tenantFor = (request: FastifyRequest, name: string, what: string): string => {
    const principal = principalOf(request);
    if (!roleAtLeast(principal.role, 'admin')) throw forbidden(principal, what, 'admin');
    // Another tenant is not there for a tenant's admin: the same answer as a missing one.
    if ((name !== principal.tenant && principal.role !== 'operator') || tenants.get(name) === undefined)
      throw new SluiceError('NOT_FOUND', `tenant "${name}" does not exist`);
    return name;
  };

  app.get(
    '/v1/tenants',
    {
      schema: {
        tags: ['admin'],
        summary: 'List tenants with their quotas (operator)',
        response: {
          200: { type: 'object', properties: { tenants: { type: 'array', items: tenantSchema } } },
          ...authErrors,
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.role !== 'operator') throw forbidden(principal, 'list tenants', 'operator');
      return { tenants: tenants.list().map(tenantJson) };
    },
  );

  app.post<{ Body: { name: string } }>(
    '/v1/tenants',
    {
      schema: {
        tags: ['admin'],
        summary:
          'Create a tenant (operator): a namespace of its own for tables, views, sources and sinks, with its own journal, changelogs and checkpoints',
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: {
              type: 'string',
              maxLength: 100,
              description: '1 to 63 lowercase letters, digits, "_" or "-", starting with a letter',
            },
          },
          examples: [{ name: 'acme' }],
        },
        response: {
          201: tenantSchema,
          400: errorRef,
          409: { ...errorRef, description: 'TENANT_EXISTS' },
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.role !== 'operator') throw forbidden(principal, 'create tenants', 'operator');
      const tenant = tenants.create(request.body.name);
      return reply.code(201).send(tenantJson(tenant));
    },
  );

  app.get<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant',
    {
      schema: {
        tags: ['admin'],
        summary: 'A tenant and its quotas (the operator, or an admin of the tenant)',
        params: tenantParam,
        response: { 200: tenantSchema, ...authErrors },
      },
    },
    async (request) => {
      const name = tenantFor(request, request.params.tenant, 'read the tenant');
      return tenantJson(tenants.of(name));
    },
  );

  app.get<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant/usage',
    {
      schema: {
        tags: ['admin'],
        summary: "A tenant's metering since the server started (its admin, or the operator)",
        params: tenantParam,
        response: {
          200: {
            type: 'object',
            properties: {
              tenant: { type: 'string' },
              rowsIn: {
                type: 'integer',
                description:
                  'Rows written, as applied: ingest (inserts plus deletes), SQL DML, Kafka sources',
              },
              bytesIn: { type: 'integer', description: "Request body bytes of the tenant's requests" },
              rowsOut: { type: 'integer', description: "Changelog rows the tenant's views emitted" },
              bytesOut: {
                type: 'integer',
                description:
                  "Response body bytes of the tenant's HTTP answers and its changelog streams' messages",
              },
              stateBytes: {
                type: 'integer',
                description: 'State held now (tables, views and shared arrangements)',
              },
              stateByteHours: { type: 'number', description: 'State held over time since `since`' },
              cpuMs: {
                type: 'number',
                description: "CPU time of the tenant's writes (ingest, SQL scripts, Kafka batches)",
              },
              since: { type: 'string', format: 'date-time' },
            },
          },
          ...authErrors,
        },
      },
    },
    async (request) => {
      const name = tenantFor(request, request.params.tenant, 'read usage');
      return { tenant: name, ...tenants.of(name).usage.report() };
    },
  );

  app.patch<{ Params: { tenant: string }; Body: Partial<Record<keyof Quotas, number | null>> }>(
    '/v1/tenants/:tenant',
    {
      schema: {
        tags: ['admin'],
        summary: "Set a tenant's quotas (operator): the fields sent change, null removes a limit",
        params: tenantParam,
        body: {
          ...quotasSchema,
          additionalProperties: false,
          minProperties: 1,
          examples: [{ objects: 100, ingestRowsPerSecond: 5000, subscribers: 50 }],
        },
        response: { 200: tenantSchema, 400: errorRef, ...authErrors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.role !== 'operator') throw forbidden(principal, 'set quotas', 'operator');
      const tenant = tenants.get(request.params.tenant);
      if (tenant === undefined)
        throw new SluiceError('NOT_FOUND', `tenant "${request.params.tenant}" does not exist`);
      const quotas: Record<string, number | null> = { ...tenant.quotas };
      for (const name of QUOTA_NAMES) {
        const value = request.body[name];
        if (value !== undefined) quotas[name] = value;
      }
      tenants.setQuotas(tenant, quotas as unknown as Quotas);
      return tenantJson(tenant);
    },
  );

  app.post<{ Params: { tenant: string }; Body: { role: unknown } }>(
    '/v1/tenants/:tenant/tokens',
    {
      schema: {
        tags: ['admin'],
        summary: 'Create a token of the tenant (its admin, or the operator); the secret is shown once',
        params: tenantParam,
        body: {
          type: 'object',
          required: ['role'],
          additionalProperties: false,
          properties: { role: { type: 'string', enum: [...ROLES] } },
          examples: [{ role: 'reader' }],
        },
        response: {
          201: {
            type: 'object',
            properties: {
              ...tokenSchema.properties,
              token: { type: 'string', description: 'The secret: shown only in this answer' },
            },
          },
          400: errorRef,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const tenant = tenantFor(request, request.params.tenant, 'manage tokens');
      const role = request.body.role;
      if (!isRole(role))
        throw new SluiceError('INVALID_REQUEST', `invalid request: unknown role "${String(role)}"`);
      const principal = principalOf(request);
      if (role === 'operator' && principal.role !== 'operator')
        throw forbidden(principal, 'create operator tokens', 'operator');
      if (role === 'operator' && tenant !== DEFAULT_TENANT) {
        throw new SluiceError(
          'INVALID_REQUEST',
          'invalid request: operator tokens belong to the default tenant',
          {
            hint: `create it with POST /v1/tenants/${DEFAULT_TENANT}/tokens`,
          },
        );
      }
      const created = await auth.store.create(tenant, role);
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...tokenJson(created.info), token: created.token });
    },
  );

  app.get<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant/tokens',
    {
      schema: {
        tags: ['admin'],
        summary: "List the tenant's tokens, without secrets (its admin, or the operator)",
        params: tenantParam,
        response: {
          200: { type: 'object', properties: { tokens: { type: 'array', items: tokenSchema } } },
          ...authErrors,
        },
      },
    },
    async (request) => ({
      tokens: auth.store.list(tenantFor(request, request.params.tenant, 'manage tokens')).map(tokenJson),
    }),
  );

  app.delete<{ Params: { tenant: string; id: string } }>(
    '/v1/tenants/:tenant/tokens/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'Revoke a token at once: its requests and open subscriptions are refused from now on',
        params: {
          type: 'object',
          required: ['tenant', 'id'],
          properties: { tenant: { type: 'string', maxLength: 100 }, id: { type: 'string', maxLength: 100 } },
        },
        response: { 200: tokenSchema, ...authErrors },
      },
    },
    async (request) => {
      const tenant = tenantFor(request, request.params.tenant, 'manage tokens');
      const token = auth.store.get(request.params.id);
      if (token === null || token.tenant !== tenant)
        throw new SluiceError('NOT_FOUND', `token "${request.params.id}" does not exist`);
      const principal = principalOf(request);
      if (token.role === 'operator' && principal.role !== 'operator')
        throw forbidden(principal, 'revoke operator tokens', 'operator');
      auth.revoke(token.id);
      return tokenJson(auth.store.get(token.id) ?? token);
    },
  );
}
