// The admin API (docs/security.md): tenants with their quotas, and their tokens — create, list, revoke.
// The auth hook (auth-routes.ts) only asks for a token here: each route checks its tenant and role.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SluiceError } from '../common/errors.ts';
import {
  Authenticator,
  DEFAULT_TENANT,
  ROLES,
  forbidden,
  isRole,
  roleAtLeast,
  type Principal,
} from './auth.ts';
import type { TokenInfo } from '../storage/token-store.ts';
import type { Tenant, TenantRegistry } from './tenants.ts';
import type { TokenLimits } from './token-limits.ts';
import { QUOTA_NAMES, type Quotas } from '../storage/tenant-store.ts';

const tokenJson = (t: TokenInfo): Record<string, unknown> => ({
  id: t.id,
  tenant: t.tenant,
  role: t.role,
  createdAt: new Date(t.createdAt).toISOString(),
  lastUsedAt: t.lastUsedAt === null ? null : new Date(t.lastUsedAt).toISOString(),
  revoked: t.revokedAt !== null,
  ...(t.revokedAt !== null ? { revokedAt: new Date(t.revokedAt).toISOString() } : {}),
});

const notOperator = (t: TokenInfo): boolean => t.role !== 'operator';

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
  limits: TokenLimits,
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
          403: {
            ...errorRef,
            description:
              'FORBIDDEN: the role does not allow it; QUOTA_EXCEEDED: the tenant holds its most live tokens',
          },
          429: {
            ...errorRef,
            description: "RATE_LIMITED: the tenant's admins created their most tokens this minute",
          },
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
      const created = await limits.admit(tenant, principal.role === 'operator', () =>
        auth.store.create(tenant, role),
      );
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...tokenJson(created.info), token: created.token });
    },
  );

  app.get<{ Params: { tenant: string } }>(
    '/v1/tenants/:tenant/tokens',
    {
      schema: {
        tags: ['admin'],
        summary:
          "List the tenant's tokens, without secrets (its admin, or the operator); revoked ones for 30 days, operator tokens to the operator only",
        params: tenantParam,
        response: {
          200: { type: 'object', properties: { tokens: { type: 'array', items: tokenSchema } } },
          ...authErrors,
        },
      },
    },
    async (request) => {
      const tenant = tenantFor(request, request.params.tenant, 'manage tokens');
      // An admin of default is not shown the operator's tokens: their ids are how a flood of wrong
      // secrets is aimed at a token, and an admin may neither create nor revoke them anyway.
      const visible = principalOf(request).role === 'operator' ? () => true : notOperator;
      return { tokens: auth.store.list(tenant).filter(visible).map(tokenJson) };
    },
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
      const principal = principalOf(request);
      // An operator token is not there for an admin: the same answer as a missing one, so that its
      // id cannot be confirmed by trying it.
      const hidden = token !== null && principal.role !== 'operator' && !notOperator(token);
      if (token === null || token.tenant !== tenant || hidden)
        throw new SluiceError('NOT_FOUND', `token "${request.params.id}" does not exist`);
      auth.revoke(token.id);
      return tokenJson(auth.store.get(token.id) ?? token);
    },
  );
}
