// The changelog routes: a view's, a query's (SUBSCRIBE) and a table's, each over a WebSocket (one
// message per frame) and as NDJSON over HTTP (one per line), with the same messages and parameters.
// A query or table subscription is served by a temporary view (query-subscriptions.ts), so resume,
// snapshots, slow-consumer handling and the subscriber caps are those of views.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { SluiceError } from '../common/errors.ts';
import { stringifyWire } from '../common/json-codec.ts';
import type { SubscribeParams } from './runtime/types.ts';
import type { Principal } from './auth.ts';
import type { Tenant } from './tenants.ts';
import { closeCodeOf } from './runtime/subscriptions.ts';
import * as S from './changelog-schemas.ts';
import { NdjsonTransport, WsTransport } from './transports.ts';
import { epochParam } from './epoch-param.ts';
import { checkState } from './quotas.ts';

/** Routes that take a WebSocket upgrade (the request guard lets upgrades through on these only). */
export const WEBSOCKET_ROUTES: ReadonlySet<string> = new Set([
  '/v1/views/:name/subscribe',
  '/v1/subscribe',
  '/v1/tables/:name/subscribe',
]);

export interface SubscribeRouteDeps {
  /** The runtime and query subscriptions of a principal's tenant (tenants.ts). */
  readonly tenantOf: (principal: Principal) => Tenant;
  /** Throws the tenant's QUOTA_EXCEEDED when it holds its most subscribers. */
  readonly admitSubscriber: (tenant: Tenant) => void;
  /**
   * `--max-subscribers`: subscriptions of all tenants together; WebSockets still authenticating have a
   * pool of the same size of their own (they must not take an authenticated subscriber's place).
   */
  readonly maxSubscribers: number;
  readonly subscribersInAll: () => number;
  readonly closeGraceMs: number;
  readonly countError: (request: FastifyRequest, code: string) => void;
  readonly sendError: (reply: FastifyReply, error: SluiceError) => FastifyReply;
  readonly toSluiceError: (error: unknown) => SluiceError;
  /** Settles the socket's authentication (auth-routes.ts); null: refused, and closed already. */
  readonly authorize: (socket: WebSocket, request: FastifyRequest) => Promise<Principal | null>;
}

type TenantParts = Pick<Tenant, 'runtime' | 'queries' | 'usage' | 'quotas'>;

type Query = Record<string, string | undefined>;

/** Which view serves a request, once known (a query's may have to be created first). */
type Target = (parts: TenantParts, params: { name?: string }, query: Query) => Promise<string> | string;

export function registerSubscribeRoutes(app: FastifyInstance, deps: SubscribeRouteDeps): void {
  // WebSockets open but not yet authenticated (waiting for their `auth` message) hold a socket and a
  // timer, so they are bounded too — but in a pool of their own: anyone can open them without a token,
  // and when they counted against the subscriptions' cap, 2,000 idle sockets from one unauthenticated
  // client (renewed every WS_AUTH_TIMEOUT_MS) refused every tenant's subscriptions.
  let authenticating = 0;
  const overServerCap = (): SluiceError | null =>
    deps.subscribersInAll() >= deps.maxSubscribers
      ? new SluiceError(
          'TOO_MANY_SUBSCRIBERS',
          `too many subscribers: the server holds its most (${deps.maxSubscribers})`,
          { hint: 'retry later, or raise --max-subscribers' },
        )
      : null;
  const overAuthenticatingCap = (): SluiceError | null =>
    authenticating >= deps.maxSubscribers
      ? new SluiceError(
          'TOO_MANY_SUBSCRIBERS',
          `too many WebSockets waiting to authenticate (${deps.maxSubscribers})`,
          {
            hint: 'retry later, or send the Authorization header on the upgrade request (it needs no wait)',
          },
        )
      : null;
  const view: Target = (_parts, params) => params.name as string;
  // A temporary view holds state like any view: a tenant at its state quota may not add one (a reader
  // of a tenant over its quota created a 40,041-row view this way), though it may follow existing ones.
  const stateQuota = (parts: TenantParts) => (): SluiceError | null =>
    checkState(parts.runtime, parts.quotas);
  const query: Target = (parts, _params, q) => {
    const { queries } = parts;
    const sql = q.sql;
    if (sql === undefined || sql.trim() === '') {
      throw new SluiceError('INVALID_REQUEST', 'invalid request: the sql parameter (a SELECT) is required', {
        hint: 'e.g. /v1/subscribe?sql=SELECT%20region%2C%20count(*)%20FROM%20orders%20GROUP%20BY%20region',
      });
    }
    return queries.viewFor(sql, stateQuota(parts));
  };
  const table: Target = (parts, params) => {
    const { runtime, queries } = parts;
    const name = params.name as string;
    const info = runtime.engine.catalog().tables.find((t) => t.name === name);
    if (info === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    return queries.viewFor(`SELECT * FROM "${name.replaceAll('"', '""')}"`, stateQuota(parts));
  };
  const routes: {
    url: string;
    changesUrl: string;
    target: Target;
    extra: readonly string[];
    schemas: S.ChangelogSchemas;
  }[] = [
    {
      url: '/v1/views/:name/subscribe',
      changesUrl: '/v1/views/:name/changes',
      target: view,
      extra: [],
      schemas: S.viewChangelog,
    },
    {
      url: '/v1/subscribe',
      changesUrl: '/v1/changes',
      target: query,
      extra: ['sql'],
      schemas: S.queryChangelog,
    },
    {
      url: '/v1/tables/:name/subscribe',
      changesUrl: '/v1/tables/:name/changes',
      target: table,
      extra: [],
      schemas: S.tableChangelog,
    },
  ];

  for (const route of routes) {
    /**
     * The view to follow and the parameters; throws the client's error. Not yet checked against the
     * view's history: the caller runs checkSubscription in the synchronous block that subscribes, so
     * no DROP and CREATE of the name can land between the check and the subscription.
     */
    const resolve = async (
      parts: TenantParts,
      params: { name?: string },
      q: Query,
    ): Promise<{ name: string; params: SubscribeParams }> => {
      const parsed = subscribeParams(q, route.extra);
      const name = await route.target(parts, params, q);
      return { name, params: parsed };
    };

    app.route<{ Params: { name?: string }; Querystring: Query }>({
      method: 'GET',
      url: route.url,
      schema: route.schemas.subscribe,
      handler: async (_request, reply) =>
        deps.sendError(
          reply,
          new SluiceError(
            'INVALID_REQUEST',
            `this endpoint needs a WebSocket upgrade; use ${route.changesUrl} for NDJSON over HTTP`,
          ),
        ),
      wsHandler: (socket, request) => {
        const transport = new WsTransport(socket, deps.closeGraceMs, request.raw.socket);
        const fail = (error: SluiceError): void => {
          deps.countError(request, error.code);
          socket.send(
            stringifyWire({
              type: 'error',
              code: error.code,
              message: error.message,
              ...(error.position !== undefined ? { position: error.position } : {}),
              ...(error.hint !== undefined ? { hint: error.hint } : {}),
            }),
          );
          transport.close(closeCodeOf(error), error.code);
        };
        // Incoming frames are not part of the protocol (but a first `auth` message, read by
        // authorize); ignore them (ping/pong is handled by ws).
        socket.on('message', () => undefined);
        void (async () => {
          // One that will wait for its `auth` message is refused up front when their pool is full.
          const waits = request.principal === null && request.wsAuth === null;
          const full = waits ? overAuthenticatingCap() : null;
          if (full !== null) {
            fail(full);
            return;
          }
          // Counted until it authenticates, fails to, or closes (a closed one never settles). One
          // with a header settles at once and is counted only for that moment.
          authenticating += 1;
          let counted = true;
          const uncount = (): void => {
            if (counted) authenticating -= 1;
            counted = false;
          };
          socket.once('close', uncount);
          let principal: Principal | null;
          try {
            principal = await deps.authorize(socket, request);
          } finally {
            uncount();
          }
          if (principal === null) return;
          let target: { name: string; params: SubscribeParams };
          let parts: TenantParts;
          try {
            const tenant = deps.tenantOf(principal);
            deps.admitSubscriber(tenant);
            parts = tenant;
            target = await resolve(parts, request.params, request.query);
            // Again after the wait: a query's or table's view may first be created (a script's turn),
            // and subscriptions admitted meanwhile count now (20 concurrent ones passed a quota of 2).
            deps.admitSubscriber(tenant);
            parts.runtime.checkSubscription(target.name, target.params);
            // After the tenant's own caps (per view, per runtime): all tenants together.
            const over = overServerCap();
            if (over !== null) throw over;
          } catch (error) {
            fail(deps.toSluiceError(error));
            return;
          }
          // In the block that resolved and checked the target: a view (a temporary one too) is
          // neither dropped nor created again in between.
          transport.meterBytes((bytes) => (parts.usage.bytesOut += bytes));
          try {
            await parts.runtime.subscribe(target.name, target.params, transport);
          } catch (error) {
            fail(deps.toSluiceError(error));
          }
        })();
      },
    });

    app.get<{ Params: { name?: string }; Querystring: Query }>(
      route.changesUrl,
      { schema: route.schemas.changes },
      async (request, reply) => {
        if (request.principal === null)
          throw new SluiceError('INTERNAL_ERROR', 'a changelog ran without a principal');
        const parts = deps.tenantOf(request.principal);
        deps.admitSubscriber(parts);
        const target = await resolve(parts, request.params, request.query);
        // In the block that subscribes (below): nothing can drop or re-create the view in between,
        // and no other subscription of the tenant is admitted (the quota is asked again after the wait).
        deps.admitSubscriber(parts);
        parts.runtime.checkSubscription(target.name, target.params);
        const full = overServerCap();
        if (full !== null) throw full;
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'application/x-ndjson; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        const transport = new NdjsonTransport(res, deps.closeGraceMs);
        transport.meterBytes((bytes) => (parts.usage.bytesOut += bytes));
        await parts.runtime.subscribe(target.name, target.params, transport);
      },
    );
  }
}

function subscribeParams(query: Query, extra: readonly string[]): SubscribeParams {
  for (const key of Object.keys(query)) {
    if (key !== 'snapshot' && key !== 'resumeFrom' && key !== 'maxMessageBytes' && !extra.includes(key)) {
      throw new SluiceError('INVALID_REQUEST', `invalid request: unknown parameter "${key}"`, {
        hint: `the parameters are ${[...extra.map((e) => `${e}=…`), 'snapshot=true|false', 'resumeFrom=<epoch>', 'maxMessageBytes=<bytes>'].join(', ')}`,
      });
    }
  }
  const rawSnapshot = query.snapshot;
  if (rawSnapshot !== undefined && rawSnapshot !== 'true' && rawSnapshot !== 'false') {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: snapshot must be true or false, not "${rawSnapshot}"`,
    );
  }
  const resumeFrom = epochParam('resumeFrom', query.resumeFrom);
  if (resumeFrom !== undefined) {
    if (rawSnapshot === 'true') {
      throw new SluiceError(
        'INVALID_REQUEST',
        'invalid request: resumeFrom and snapshot=true exclude each other',
        {
          hint: 'resume continues a client that already holds the state; a snapshot starts a new one',
        },
      );
    }
  }
  return {
    snapshot: resumeFrom === undefined && rawSnapshot !== 'false',
    resumeFrom,
    maxMessageBytes: maxMessageBytesParam(query.maxMessageBytes),
  };
}

/** Smallest accepted `maxMessageBytes`: a part repeats the message's head (positions, clock). */
export const MIN_MESSAGE_BYTES = 4096;

/**
 * `maxMessageBytes`: opt-in bound on one message; a larger `changes` message (one epoch) or snapshot
 * chunk comes in parts, `"more":true` on all but the last. Absent: one message per epoch.
 */
function maxMessageBytesParam(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw);
  const n = /^[0-9]{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < MIN_MESSAGE_BYTES) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: maxMessageBytes must be an integer of at least ${MIN_MESSAGE_BYTES}, not "${text.slice(0, 40)}"`,
      { hint: 'a byte bound on one message, e.g. maxMessageBytes=1048576' },
    );
  }
  return n;
}
