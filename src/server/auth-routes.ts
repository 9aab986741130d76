// Where authentication meets the HTTP server (docs/security.md): one onRequest hook decides, per route,
// whether a token is needed and which role; `/v1/sql` scripts are checked statement by statement before
// any statement runs; WebSocket subscriptions authenticate by header or by a first `auth` message. Open
// without a token: /healthz, /readyz and the console's static shell (it holds no data); everything else
// needs one. The admin API that manages tenants and tokens is token-routes.ts.
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
  LOOPBACK_PRINCIPAL,
  forbidden,
  roleAtLeast,
  type Principal,
  type Role,
} from './auth.ts';

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
