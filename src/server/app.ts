// The Sluice HTTP/WebSocket server as a fastify app (API.md is the contract). buildApp() replays the
// durable journal before it returns, so a listening server always serves a fully recovered engine.
// It never calls listen() itself.
import fastifyWebsocket from '@fastify/websocket';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { SluiceError, httpStatusOf } from '../common/errors.ts';
import { CloseCodes } from '../sink/subscriber.ts';
import { SubscriberBudget } from '../sink/subscriber-budget.ts';
import { registerConsole } from '../console/plugin.ts';
import { Engine } from '../index.ts';
import { ManualClock } from '../exec/logical-clock.ts';
import { ServerWideMetrics, metricsText } from './metrics.ts';
import { TenantRegistry, type Tenant } from './tenants.ts';
import { RateLimitedError } from './rate-limits.ts';
import { checkSubscriber } from './quotas.ts';
import { TenantStore } from '../storage/tenant-store.ts';
import { SluiceRuntime } from './runtime.ts';
import { WEBSOCKET_ROUTES, registerSubscribeRoutes } from './subscribe-routes.ts';
import * as S from './schemas.ts';
import { registerReadRoutes } from './read-routes.ts';
import { registerCatalogRoutes } from './catalog-routes.ts';
import { INGEST_URL, registerWriteRoutes } from './write-routes.ts';
import { DEFAULTS, defaultSubscriberShare } from './defaults.ts';
import { MAX_URL_PARAM_LENGTH, answerClientError, frameworkError } from './http-errors.ts';
import { Authenticator, type Principal } from './auth.ts';
import { authorizeWebSocket, registerAuth } from './auth-routes.ts';
import { registerTokenRoutes } from './token-routes.ts';
import { TokenLimits } from './token-limits.ts';
import { TokenStore } from '../storage/token-store.ts';
import { RequestGuard, registerRequestGuard, type BoundAddress } from './request-guard.ts';
import type { AppOptions, AuthOptions, HttpTimeouts } from './app-options.ts';
import { openTenant } from './tenant-wiring.ts';
import { registerRequestBodies, toSluiceError } from './request-bodies.ts';
import { registerApiDocs } from './api-docs.ts';

export type { AppOptions, AuthOptions, HttpTimeouts };

export { DEFAULTS };

declare module 'fastify' {
  interface FastifyInstance {
    /** The default tenant's runtime. */
    sluice: SluiceRuntime;
    /** Every tenant's runtime (tenants.ts). */
    sluiceTenants: TenantRegistry;
    sluiceAuth: {
      readonly authenticator: Authenticator;
      /** A token generated at this start (the first with authentication): shown once, then never. */
      readonly generatedToken: string | null;
    };
  }
}

const silentLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  // First, so that invalid settings fail before anything is opened. Reads the bound address lazily
  // (the port is known only after listen).
  const guard = new RequestGuard(options.admission ?? {}, () => boundAddress(app));
  const closeGraceMs = options.closeGraceMs ?? DEFAULTS.closeGraceMs;
  const bodyLimit = options.bodyLimit ?? DEFAULTS.bodyLimit;
  const timeouts: HttpTimeouts = { ...DEFAULTS.timeouts, ...options.timeouts };
  if (timeouts.headersMs > timeouts.requestMs) {
    throw new Error(
      `the headers timeout (${timeouts.headersMs} ms) exceeds the request timeout (${timeouts.requestMs} ms)`,
    );
  }
  const logger = options.logger === undefined || options.logger === false ? undefined : options.logger;
  // One subscriber memory budget for the whole server: every tenant's runtime holds an account of it,
  // so N tenants cannot hold N budgets (docs/security.md).
  const subscriberBudget = new SubscriberBudget(options.subscriberMemory ?? DEFAULTS.subscriberMemory);
  // One runtime per tenant (tenants.ts), each with these settings and a data directory of its own.
  const openRuntime = (dataDir: string | null): SluiceRuntime =>
    new SluiceRuntime({
      dataDir,
      retention: { ...DEFAULTS.retention, ...options.retention },
      limits: { ...DEFAULTS.subscriberLimits, ...options.subscriberLimits },
      heartbeatMs: options.heartbeatMs ?? DEFAULTS.heartbeatMs,
      snapshotChunkRows: options.snapshotChunkRows ?? DEFAULTS.snapshotChunkRows,
      pruneIntervalMs: options.pruneIntervalMs ?? DEFAULTS.pruneIntervalMs,
      createEngine:
        options.createEngine ?? engineWithClock(options.clock?.mode ?? 'real', options.workers ?? 1),
      clockTickMs: options.clock?.tickMs ?? DEFAULTS.clockTickMs,
      logger: logger ?? silentLogger,
      checkpoint:
        options.checkpoint === false || options.dataDir === null
          ? null
          : { ...DEFAULTS.checkpoint, ...options.checkpoint },
      journalRetention: { ...DEFAULTS.journalRetention, ...options.journalRetention },
      ...(options.verifyOnOpen !== undefined ? { verifyOnOpen: options.verifyOnOpen } : {}),
      connectorHosts: options.connectorHosts ?? null,
      ...(options.connectorConnectTimeoutMs !== undefined
        ? { connectorConnectTimeoutMs: options.connectorConnectTimeoutMs }
        : {}),
      reads: { ...DEFAULTS.reads, ...options.reads },
      selectLimits: { ...DEFAULTS.selectLimits, ...options.selectLimits },
      maxDmlRows: options.maxDmlRows ?? DEFAULTS.maxDmlRows,
      subscriberBudget,
      maxSubscribers: options.maxSubscribers ?? DEFAULTS.maxSubscribers,
      maxSubscribersPerView: options.maxSubscribersPerView ?? DEFAULTS.maxSubscribersPerView,
      idempotency: { ...DEFAULTS.idempotency, ...options.idempotency },
    });
  const authOptions = options.auth ?? { enabled: false };
  const tokens = new TokenStore(options.dataDir, authOptions.kdf, authOptions.revokedTokenRetentionMs);
  let generatedToken: string | null = null;
  try {
    if (authOptions.enabled) {
      const stored = await tokens.bootstrap(authOptions.bootstrapToken);
      if (authOptions.bootstrapToken === undefined) generatedToken = stored;
    }
  } catch (error) {
    tokens.close();
    throw error;
  }
  const auth = new Authenticator(tokens, {
    enabled: authOptions.enabled,
    ...(authOptions.cacheTtlMs !== undefined ? { cacheTtlMs: authOptions.cacheTtlMs } : {}),
    ...(authOptions.cacheSize !== undefined ? { cacheSize: authOptions.cacheSize } : {}),
  });
  const serverMetrics = new ServerWideMetrics({
    processMetrics: options.processMetrics ?? false,
    subscriberBudget,
  });
  const tenantStore = new TenantStore(tokens.db);
  const tenants = new TenantRegistry(
    tenantStore,
    options.dataDir,
    (record, dir) =>
      openTenant(record, openRuntime(dir), {
        tenantStore,
        logger: logger ?? silentLogger,
        querySubscriptions: options.querySubscriptions,
        allTenants: (): readonly Tenant[] => tenants.list(),
      }),
    options.maxTenants ?? DEFAULTS.maxTenants,
  );
  try {
    tenants.openAll();
  } catch (error) {
    tokens.close();
    throw error;
  }
  const runtime = tenants.default.runtime;
  // State byte-hours accrue while nobody reads them; the meters are stored as they go.
  const sampler = setInterval(() => tenants.saveUsage(), 5000);
  sampler.unref();
  /** The tenant a request acts for (set by the auth hook on every route that needs one). */
  const tenantOf = (request: FastifyRequest): Tenant => {
    const principal = request.principal;
    if (principal === null) throw new SluiceError('INTERNAL_ERROR', 'a tenant route ran without a principal');
    return tenants.of(principal.tenant);
  };
  const rt = (request: FastifyRequest): SluiceRuntime => tenantOf(request).runtime;
  // A keyed ingest request's body hash, taken from the exact bytes as they are parsed.
  const bodyHashes = new WeakMap<FastifyRequest['raw'], string>();
  // Every body's size in bytes (ingest quotas, metering).
  const bodyBytes = new WeakMap<FastifyRequest['raw'], number>();
  // Counted once the metrics exist (a client error can only arrive after listen).
  let countError: (code: string) => void = () => undefined;

  const app = Fastify({
    ...(logger !== undefined ? { loggerInstance: logger } : { logger: false }),
    bodyLimit,
    // Per-request log lines would dominate at ingest rates; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_URL_PARAM_LENGTH },
    // Slow or stalled clients must not hold connections: node checks these every checking interval.
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // HTTPS and WSS with a certificate (--tls-cert/--tls-key), else plain HTTP; the same timeouts.
    ...(options.tls !== undefined
      ? { https: { ...httpTimeouts(timeouts), cert: options.tls.cert, key: options.tls.key } }
      : { http: httpTimeouts(timeouts) }),
    // The HTTP layer's own answers (malformed requests, 408, 431, undecodable URLs) in our shape.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, (code) => countError(code)),
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, frameworkError(error));
    },
  });
  app.decorate('sluice', runtime);
  app.decorate('sluiceTenants', tenants);
  app.decorate('sluiceAuth', { authenticator: auth, generatedToken });
  // Host, Origin, CORS preflights and stray upgrades, before anything else runs (request-guard.ts);
  // the first hook, so it also covers the routes plugins add.
  registerRequestGuard(app, guard, { websocketRoutes: WEBSOCKET_ROUTES, sendError });
  // Then the bearer token and its role, for every route but the open ones (auth-routes.ts).
  registerAuth(app, auth, {
    websocketRoutes: WEBSOCKET_ROUTES,
    sendError,
    limits: () => runtime.engine.limits,
  });
  // Metering: the bytes of each request and answer of a tenant (usage.ts).
  app.addHook('onSend', async (request, _reply, payload) => {
    const principal = request.principal;
    const tenant = principal === null ? undefined : tenants.get(principal.tenant);
    if (tenant !== undefined) {
      tenant.usage.bytesIn += bodyBytes.get(request.raw) ?? 0;
      if (typeof payload === 'string') tenant.usage.bytesOut += Buffer.byteLength(payload);
      else if (Buffer.isBuffer(payload)) tenant.usage.bytesOut += payload.length;
    }
    return payload;
  });
  // Everything but table ingest first commits the open ingest group of its tenant (runtime/commit.ts),
  // so reads, SQL and subscriptions only ever see durable epochs.
  app.addHook('preHandler', (request, _reply, done) => {
    const principal = request.principal;
    if (request.routeOptions.url !== INGEST_URL && principal !== null)
      tenants.get(principal.tenant)?.runtime.flush();
    done();
  });

  countError = (code) => serverMetrics.error(code);

  /** Counts an answered error for the tenant of the request, else server-wide. */
  const countErrorOf = (request: FastifyRequest | undefined, code: string): void => {
    const principal = request?.principal ?? null;
    const tenant = principal === null ? undefined : tenants.get(principal.tenant);
    if (tenant !== undefined) tenant.metrics.error(code);
    else serverMetrics.error(code);
  };

  /**
   * What GET /metrics shows a principal: its tenant's series; the operator (and, without
   * authentication, the one loopback client) also those of every tenant and of the process.
   */
  const metricsFor = (principal: Principal | null): Promise<string> => {
    if (principal === null || principal.role === 'operator' || !auth.enabled)
      return metricsText([serverMetrics.registry, ...tenants.list().map((t) => t.metrics.registry)]);
    return metricsText([tenants.of(principal.tenant).metrics.registry]);
  };

  registerRequestBodies(app, { bodyLimit, bodyBytes, bodyHashes });

  app.setErrorHandler((error: FastifyError | SluiceError, request, reply) => {
    const sluiceError = toSluiceError(error, request);
    if (sluiceError.code === 'INTERNAL_ERROR' || sluiceError.errorClass === 'state') {
      request.log.error({ err: error }, 'request failed');
    }
    sendError(reply, sluiceError);
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(
      reply,
      new SluiceError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`),
    );
  });

  function sendError(
    reply: FastifyReply,
    error: SluiceError,
    extra: Record<string, unknown> = {},
  ): FastifyReply {
    countErrorOf(reply.request, error.code);
    if (error.code === 'TOO_MANY_SUBSCRIBERS') reply.header('retry-after', '5');
    if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
    return reply.code(httpStatusOf(error)).send({ error: error.toJSON(), ...extra });
  }

  await registerApiDocs(app);
  await app.register(fastifyWebsocket, {
    options: { maxPayload: 64 * 1024 },
    preClose: (done) => {
      for (const tenant of tenants.list()) tenant.runtime.close();
      // Subscribers were sent an error and a close; cut those that do not answer in time.
      const server = app.websocketServer;
      setTimeout(
        () => {
          for (const client of server.clients) client.terminate();
        },
        Math.min(closeGraceMs, 500),
      ).unref();
      // Connections that never send a request (or never finish one) must not hold the shutdown.
      setTimeout(() => app.server.closeAllConnections(), Math.min(closeGraceMs, 1000)).unref();
      done();
    },
  });

  app.addHook('onClose', async () => {
    clearInterval(sampler);
    tenants.close();
    tokens.close();
  });

  // ---- statements and ingest (write-routes.ts); the catalog's listings (catalog-routes.ts) -----

  registerWriteRoutes(app, {
    tenantOf,
    limits: () => runtime.engine.limits,
    bodyBytes: (request) => bodyBytes.get(request.raw) ?? 0,
    bodyHash: (request) => bodyHashes.get(request.raw),
    countError: countErrorOf,
    sendError,
    toSluiceError: (error) => toSluiceError(error),
  });
  registerCatalogRoutes(app, rt);

  // rows of views (also as of an earlier epoch) and tables, and a view's row errors (read-routes.ts)
  registerReadRoutes(app, rt, { ...DEFAULTS.reads, ...options.reads });

  // ---- changelogs (subscribe-routes.ts) -------------------------------------------------------

  const maxSubscribers = options.maxSubscribers ?? DEFAULTS.maxSubscribers;
  const subscriberShare = options.maxSubscribersPerTenant ?? defaultSubscriberShare(maxSubscribers);
  registerSubscribeRoutes(app, {
    tenantOf: (principal) => tenants.of(principal.tenant),
    admitSubscriber: (tenant) => admitSubscriber(tenant),
    maxSubscribers,
    subscribersInAll: () => tenants.list().reduce((n, t) => n + t.runtime.subscriberMemory().subscribers, 0),
    closeGraceMs,
    countError: (request, code) => countErrorOf(request, code),
    sendError,
    toSluiceError: (error) => toSluiceError(error),
    authorize: (socket, request) => authorizeWebSocket(auth, socket, request, authOptions.wsAuthTimeoutMs),
  });

  /** A tenant's subscriber quota, checked before a subscription starts. */
  function admitSubscriber(tenant: Tenant): void {
    const error = checkSubscriber(tenant.runtime.subscriberMemory().subscribers, tenant.quotas, {
      serverMax: maxSubscribers,
      defaultShare: subscriberShare,
      tenants: tenants.list().length,
    });
    if (error !== null) throw error;
  }

  // ---- tenants and their tokens (token-routes.ts) ----------------------------------------------

  registerTokenRoutes(
    app,
    auth,
    tenants,
    new TokenLimits(tokens, {
      ...(authOptions.maxTokensPerTenant !== undefined
        ? { maxLivePerTenant: authOptions.maxTokensPerTenant }
        : {}),
      ...(authOptions.tokenCreatesPerMinute !== undefined
        ? { createsPerMinute: authOptions.tokenCreatesPerMinute }
        : {}),
    }),
  );

  // ---- operations ----------------------------------------------------------------------------

  app.get('/healthz', { schema: S.healthRoute }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: S.readyRoute }, async (request, reply) => {
    if (runtime.failure !== null)
      return sendError(reply, new SluiceError('UNAVAILABLE', runtime.failure.message));
    if (!runtime.ready) return sendError(reply, new SluiceError('UNAVAILABLE', 'server is shutting down'));
    // An open route: another tenant's trouble is reported without naming it.
    if (tenants.list().some((t) => !t.runtime.ready))
      return sendError(reply, new SluiceError('UNAVAILABLE', "a tenant's store failed; restart the server"));
    const epoch = await readyEpoch(request.headers.authorization);
    return epoch === null ? { status: 'ready' } : { status: 'ready', epoch };
  });
  /**
   * The epoch /readyz shows: the caller's tenant's. It is an open route, so with authentication on a
   * request without a valid token gets none — the default tenant's epoch counts its writes, which is
   * not anyone's to learn (nor another tenant's: the console showed it as the server's epoch).
   */
  async function readyEpoch(header: string | undefined): Promise<number | null> {
    if (!auth.enabled) return runtime.committedEpoch;
    if (header === undefined) return null;
    const principal = await auth.fromHeader(header).catch(() => null);
    if (principal === null || principal instanceof SluiceError) return null;
    return tenants.get(principal.tenant)?.runtime.committedEpoch ?? null;
  }
  app.get(
    '/metrics',
    { schema: { tags: ['operations'], summary: 'Prometheus metrics (text format)' } },
    async (request, reply) => {
      const text = await metricsFor(request.principal);
      return reply
        .type(serverMetrics.registry.contentType)
        .serializer((x) => String(x))
        .send(text);
    },
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // the web console at / and GET /v1/views/{name}/dataflow (src/console); it samples the metrics
  // for its plots' recent history
  registerConsole(app, {
    metricsText: (tenant) => metricsText([tenants.of(tenant).metrics.registry]),
    runtimeOf: rt,
    pageRuntime: runtime,
    tenantOf: (request) => tenantOf(request).name,
    authentication: auth.enabled,
  });

  await app.ready();
  return app;
}

/** Node server settings for the timeouts (the same for http and https). */
/**
 * A runtime's engine factory on the real or a manual clock: one manual clock per runtime (tenant),
 * kept by the engines that runtime creates (a recovery that falls back creates a second one).
 */
function engineWithClock(mode: 'real' | 'manual', workers: number): () => Engine {
  if (mode === 'real') return () => new Engine({ workers });
  const clock = new ManualClock();
  return () => new Engine({ clock, workers });
}

function httpTimeouts(timeouts: HttpTimeouts): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
  };
}

/** The address the server listens on, once it does. */
function boundAddress(app: FastifyInstance): BoundAddress | null {
  const address = app.server.address();
  return address !== null && typeof address === 'object'
    ? { address: address.address, port: address.port }
    : null;
}

export type { FastifyInstance, FastifyRequest };
export { CloseCodes };
