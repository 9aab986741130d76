// The Sluice HTTP/WebSocket server as a fastify app (API.md is the contract). buildApp() replays the
// durable journal before it returns, so a listening server always serves a fully recovered engine.
// It never calls listen() itself.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyWebsocket from '@fastify/websocket';
import { Ajv } from 'ajv';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { SluiceError, httpStatusOf } from '../common/errors.ts';
import type { Retention } from '../storage/changelog-store.ts';
import { CloseCodes, type SubscriberLimits } from '../sink/subscriber.ts';
import { SubscriberBudget } from '../sink/subscriber-budget.ts';
import {
  decodeUtf8Strict,
  findIllFormedText,
  invalidUtf8Offset,
  mayHoldLoneSurrogate,
  parseJsonExact,
  stringifyWire,
} from '../common/json-codec.ts';
import { registerConsole } from '../console/plugin.ts';
import { Engine } from '../index.ts';
import { ManualClock } from '../exec/logical-clock.ts';
import { ServerMetrics, ServerWideMetrics, metricsText } from './metrics.ts';
import { TenantRegistry, type Tenant } from './tenants.ts';
import { TenantUsage } from './usage.ts';
import { IngestLimiter, RateLimitedError } from './rate-limits.ts';
import { checkSubscriber } from './quotas.ts';
import { TenantStore, type TenantRecord } from '../storage/tenant-store.ts';
import { QuerySubscriptions, isTemporaryView, type QuerySubscriptionOptions } from './query-subscriptions.ts';
import { SluiceRuntime } from './runtime.ts';
import { WEBSOCKET_ROUTES, registerSubscribeRoutes } from './subscribe-routes.ts';
import type { CheckpointPolicy } from './runtime/types.ts';
import * as S from './schemas.ts';
import { registerReadRoutes } from './read-routes.ts';
import { registerCatalogRoutes } from './catalog-routes.ts';
import { IDEMPOTENCY_HEADER, INGEST_URL, SQL_URL, registerWriteRoutes } from './write-routes.ts';
import type { ReadLimits } from './view-rows.ts';
import type { ResultLimits } from '../exec/result-size.ts';
import { DEFAULTS } from './defaults.ts';
import { bodyHash, type IdempotencyLimits } from './idempotency-window.ts';
import {
  MAX_URL_PARAM_LENGTH,
  answerClientError,
  frameworkError,
  illFormedBodyError,
} from './http-errors.ts';
import { Authenticator, type Principal } from './auth.ts';
import { authorizeWebSocket, registerAuth } from './auth-routes.ts';
import { registerTokenRoutes } from './token-routes.ts';
import { TokenStore, type KdfParams } from '../storage/token-store.ts';
import {
  RequestGuard,
  registerRequestGuard,
  type AdmissionOptions,
  type BoundAddress,
} from './request-guard.ts';

export interface AppOptions {
  /** Data directory; null keeps state in memory only (tests, throwaway servers). */
  readonly dataDir: string | null;
  /** Creates the engine (default: a new Engine). */
  readonly createEngine?: () => Engine;
  /** Largest request body in bytes (default 16 MiB). */
  readonly bodyLimit?: number;
  readonly retention?: Partial<Retention>;
  readonly subscriberLimits?: Partial<SubscriberLimits>;
  /** Idle time after which a subscriber gets a progress message (default 3000 ms). */
  readonly heartbeatMs?: number;
  /**
   * The logical clock of temporal filters (docs/server.md): `real` (default) or `manual` (each
   * tenant's clock stands at 1970-01-01 until SET CLOCK moves it), and how often it ticks
   * (default 1000 ms; 0: never). `manual` applies to the engines the server creates itself.
   */
  readonly clock?: { readonly mode?: 'real' | 'manual'; readonly tickMs?: number };
  /**
   * Threads for the Reduces that run in hash partitions (EngineOptions.workers; 1 by default: all on
   * the server's thread). Results, changelogs and checkpoints are the same for every value.
   */
  readonly workers?: number;
  readonly snapshotChunkRows?: number;
  readonly pruneIntervalMs?: number;
  /** How long a closing subscriber may take to accept the close before it is cut (default 2000 ms). */
  readonly closeGraceMs?: number;
  /**
   * When checkpoints are taken (default every 10 s or 10,000 epochs, and at shutdown); false: never,
   * so a restart replays the whole journal.
   */
  readonly checkpoint?: Partial<CheckpointPolicy> | false;
  /** `PRAGMA quick_check` the data file at start (default true). */
  readonly verifyOnOpen?: boolean;
  /** A pino logger, or false for none (default: none). */
  readonly logger?: FastifyBaseLogger | false;
  /** Also export Node process metrics (off in tests, where many apps share a process). */
  readonly processMetrics?: boolean;
  /**
   * Which Host names and Origins may use the server besides its own (request-guard.ts; default:
   * none — loopback names, the bound address and the server's own origins only).
   */
  readonly admission?: AdmissionOptions;
  /**
   * Hosts Kafka sources and sinks may connect to (`host`, `host:port`, `10.0.0.0/8`, `*`); default
   * (absent or null): loopback and the broker hosts of the connectors recovered at start.
   */
  readonly connectorHosts?: readonly string[] | null;
  /** Longest wait for a broker while a source or sink connects (default 15 s; tests shorten it). */
  readonly connectorConnectTimeoutMs?: number;
  /** Connection timeouts (default headers 10 s, whole request 30 s, idle keep-alive 5 s). */
  readonly timeouts?: Partial<HttpTimeouts>;
  /** REST view pages: default and largest size, bytes, rows a filtered page examines. */
  readonly reads?: Partial<ReadLimits>;
  /** The largest result of an ad-hoc SELECT. */
  readonly selectLimits?: Partial<ResultLimits>;
  /** One memory budget in bytes for all subscribers' queued messages and open snapshots, of all tenants. */
  readonly subscriberMemory?: number;
  readonly maxSubscribers?: number;
  readonly maxSubscribersPerView?: number;
  /** Subscriptions to queries and tables (query-subscriptions.ts). */
  readonly querySubscriptions?: Partial<QuerySubscriptionOptions>;
  /** How long, how many and how many bytes of ingest idempotency keys are remembered. */
  readonly idempotency?: Partial<IdempotencyLimits>;
  /** Authentication (docs/security.md); default off: loopback clients act as the default tenant's admin. */
  readonly auth?: AuthOptions;
  /** Most tenants at once, the default one included (default 1000). */
  readonly maxTenants?: number;
  /** Serve HTTPS and WSS with this certificate chain and private key (PEM); default plain HTTP. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

export interface AuthOptions {
  readonly enabled: boolean;
  /**
   * The operator token the first start with authentication stores (SLUICE_BOOTSTRAP_TOKEN); absent: a
   * random one, handed back once as `app.sluiceAuth.bootstrapToken`.
   */
  readonly bootstrapToken?: string;
  /** scrypt cost (tests lower it); default N = 2^14, r = 8, p = 1. */
  readonly kdf?: KdfParams;
  readonly cacheTtlMs?: number;
  readonly cacheSize?: number;
  /** How long a WebSocket may take to send its `auth` message (default 10 s). */
  readonly wsAuthTimeoutMs?: number;
}

export interface HttpTimeouts {
  /** The request line and headers must arrive within this. */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this (≥ headersMs). */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveMs: number;
}

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
      ...(options.verifyOnOpen !== undefined ? { verifyOnOpen: options.verifyOnOpen } : {}),
      connectorHosts: options.connectorHosts ?? null,
      ...(options.connectorConnectTimeoutMs !== undefined
        ? { connectorConnectTimeoutMs: options.connectorConnectTimeoutMs }
        : {}),
      reads: { ...DEFAULTS.reads, ...options.reads },
      selectLimits: { ...DEFAULTS.selectLimits, ...options.selectLimits },
      subscriberBudget,
      maxSubscribers: options.maxSubscribers ?? DEFAULTS.maxSubscribers,
      maxSubscribersPerView: options.maxSubscribersPerView ?? DEFAULTS.maxSubscribersPerView,
      idempotency: { ...DEFAULTS.idempotency, ...options.idempotency },
    });
  const authOptions = options.auth ?? { enabled: false };
  const tokens = new TokenStore(options.dataDir, authOptions.kdf);
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
    (record, dir) => openTenant(record, openRuntime(dir)),
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

  /** A tenant's metrics (labelled with its name) and the runtime hooks that feed them. */
  function openTenant(record: TenantRecord, tenantRuntime: SluiceRuntime): Tenant {
    const usage = new TenantUsage(tenantRuntime, tenantStore.loadUsage(record.name));
    const metrics = new ServerMetrics(
      {
        usage: () => usage.report(),
        epoch: () => tenantRuntime.committedEpoch,
        viewStats: () =>
          tenantRuntime.store.db.open
            ? tenantRuntime.engine.catalog().views.map((v) => ({
                name: v.name,
                rowCount: v.rowCount,
                stateBytes: v.stateBytes,
                subscribers: tenantRuntime.subscriberCount(v.name),
              }))
            : [],
        sharedArrangements: () =>
          tenantRuntime.store.db.open ? tenantRuntime.engine.sharedArrangements() : [],
        lateRows: () => (tenantRuntime.store.db.open ? tenantRuntime.engine.lateRows() : []),
        closingViews: () => (tenantRuntime.store.db.open ? tenantRuntime.engine.closingViews() : []),
        checkpoint: () => tenantRuntime.checkpointStatus(),
        subscriberMemory: () => tenantRuntime.subscriberMemory(),
        recovery: () => tenantRuntime.recovery,
        sources: () => tenantRuntime.sourceReports(),
        sinks: () => tenantRuntime.sinkReports(),
      },
      { tenant: record.name },
    );
    tenantRuntime.hooks = {
      batchApplied: (table, rows, seconds) => {
        usage.rowsIn += rows;
        metrics.batchApplied(table, rows, seconds);
      },
      viewChanges: (view, rows) => {
        usage.rowsOut += rows;
        metrics.viewChanges(view, rows);
      },
      epochCpu: (micros) => (usage.cpuMicros += micros),
      rowsWritten: (rows) => (usage.rowsIn += rows),
      groupCommitted: (requests) => metrics.groupCommitted(requests),
      subscriberFailed: (view, code) => {
        if (code === 'SLOW_CONSUMER') metrics.slowConsumer(view);
      },
      rowsExamined: (kind, rows) => metrics.rowsExamined(kind, rows),
      checkpointWritten: (stats) => metrics.checkpointWritten(stats),
      checkpointFailed: () => metrics.checkpointFailed(),
    };
    const queries = new QuerySubscriptions(tenantRuntime, logger ?? silentLogger, {
      lingerMs: options.querySubscriptions?.lingerMs ?? DEFAULTS.querySubscriptions.lingerMs,
      maxViews: options.querySubscriptions?.maxViews ?? DEFAULTS.querySubscriptions.maxViews,
      // A cap for the server, not per tenant: N tenants cannot hold N times the temporary views.
      heldInAll: () =>
        tenants
          .list()
          .reduce((n, t) => n + t.runtime.viewNames().filter((v) => isTemporaryView(v)).length, 0),
    });
    const tenant: Tenant = {
      name: record.name,
      runtime: tenantRuntime,
      queries,
      metrics,
      quotas: record.quotas,
      limiter: new IngestLimiter(),
      usage,
      createdAt: record.createdAt,
    };
    // Its Kafka sources share its ingest rates with its requests: paced, never refused (rate-limits.ts).
    tenantRuntime.hooks.sourcePace = (rows, bytes) => tenant.limiter.sourceWait(tenant.quotas, rows, bytes);
    tenantRuntime.hooks.sourceBatchBound = () => IngestLimiter.batchBound(tenant.quotas);
    return tenant;
  }

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

  // Validation: bodies strictly (no coercion: "5" is not a number), query strings with coercion.
  const bodyAjv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  const queryAjv = new Ajv({
    coerceTypes: true,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema),
  );
  // Responses: one bigint-aware JSON writer (response schemas document, they do not filter).
  app.setSerializerCompiler(() => (data) => stringifyWire(data));
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const first = errors[0];
    const where = `${dataVar}${first?.instancePath ?? ''}`;
    const message = first === undefined ? `invalid ${dataVar}` : `${where} ${first.message ?? 'is invalid'}`;
    return new SluiceError('INVALID_REQUEST', `invalid request: ${message}`);
  });

  // Bodies are JSON, sent as application/json: a browser page can send text/plain, form and
  // multipart bodies to any site without asking (CORS "simple" requests), so those are refused
  // (415) rather than read as JSON. Parsed exactly (big integers kept); the bytes must be UTF-8 and
  // the text well-formed Unicode (INVALID_TEXT), so what is stored is exactly what was sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(unsupportedMediaType(`application/json; charset=${charset}`), undefined);
      return;
    }
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    bodyBytes.set(request.raw, bytes.length);
    if (request.routeOptions.url === INGEST_URL && request.headers[IDEMPOTENCY_HEADER] !== undefined)
      bodyHashes.set(request.raw, bodyHash(bytes));
    const text = decodeUtf8Strict(bytes);
    if (text === null) {
      done(
        new SluiceError('INVALID_TEXT', 'request body is not valid UTF-8', {
          detail: `invalid byte sequence at byte ${invalidUtf8Offset(bytes)}`,
        }),
        undefined,
      );
      return;
    }
    if (text.trim() === '') {
      done(new SluiceError('INVALID_JSON', 'request body is empty, expected JSON'), undefined);
      return;
    }
    let value: unknown;
    try {
      value = parseJsonExact(text);
    } catch (error) {
      done(
        new SluiceError('INVALID_JSON', 'request body is not valid JSON', {
          detail: error instanceof Error ? error.message : String(error),
        }),
        undefined,
      );
      return;
    }
    const found = mayHoldLoneSurrogate(text) ? findIllFormedText(value) : null;
    if (found !== null) {
      const sqlField =
        request.routeOptions.url === SQL_URL &&
        !found.inKey &&
        found.path.length === 1 &&
        found.path[0] === 'sql';
      done(illFormedBodyError(found, sqlField), undefined);
      return;
    }
    done(null, value);
  });

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

  for (const schema of S.sharedSchemas) app.addSchema(schema);
  await app.register(fastifySwagger, {
    // Shared schemas appear under their own names in components.schemas.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`,
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Sluice API',
        version: '1',
        description:
          'Streaming SQL with incremental materialized views. 64-bit integers beyond ±2^53 are JSON strings, never rounded.',
      },
      tags: [
        { name: 'statements' },
        { name: 'tables' },
        { name: 'views' },
        { name: 'changelogs' },
        { name: 'catalog' },
        { name: 'connectors' },
        { name: 'operations' },
        { name: 'admin' },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A Sluice token (sluice_<id>_<secret>) when the server runs with authentication; see docs/security.md',
          },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    theme: { title: 'Sluice API — streaming SQL with incremental materialized views' },
  });
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

  registerSubscribeRoutes(app, {
    tenantOf: (principal) => tenants.of(principal.tenant),
    admitSubscriber: (tenant) => admitSubscriber(tenant),
    maxSubscribers: options.maxSubscribers ?? DEFAULTS.maxSubscribers,
    subscribersInAll: () => tenants.list().reduce((n, t) => n + t.runtime.subscriberMemory().subscribers, 0),
    closeGraceMs,
    countError: (request, code) => countErrorOf(request, code),
    sendError,
    toSluiceError: (error) => toSluiceError(error),
    authorize: (socket, request) => authorizeWebSocket(auth, socket, request, authOptions.wsAuthTimeoutMs),
  });

  /** A tenant's subscriber quota, checked before a subscription starts. */
  function admitSubscriber(tenant: Tenant): void {
    const error = checkSubscriber(tenant.runtime.subscriberMemory().subscribers, tenant.quotas);
    if (error !== null) throw error;
  }

  // ---- tenants and their tokens (token-routes.ts) ----------------------------------------------

  registerTokenRoutes(app, auth, tenants);

  // ---- operations ----------------------------------------------------------------------------

  app.get('/healthz', { schema: S.healthRoute }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: S.readyRoute }, async (_request, reply) => {
    if (runtime.failure !== null)
      return sendError(reply, new SluiceError('UNAVAILABLE', runtime.failure.message));
    if (!runtime.ready) return sendError(reply, new SluiceError('UNAVAILABLE', 'server is shutting down'));
    // An open route: another tenant's trouble is reported without naming it.
    if (tenants.list().some((t) => !t.runtime.ready))
      return sendError(reply, new SluiceError('UNAVAILABLE', "a tenant's store failed; restart the server"));
    return { status: 'ready', epoch: runtime.committedEpoch };
  });
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

function unsupportedMediaType(contentType: string | undefined): SluiceError {
  return new SluiceError(
    'UNSUPPORTED_MEDIA_TYPE',
    contentType === undefined || contentType === ''
      ? 'request body has no content type; expected application/json'
      : `unsupported content type "${contentType.slice(0, 100)}"; expected application/json`,
    { hint: "send the body with the header 'content-type: application/json'" },
  );
}

/** The address the server listens on, once it does. */
function boundAddress(app: FastifyInstance): BoundAddress | null {
  const address = app.server.address();
  return address !== null && typeof address === 'object'
    ? { address: address.address, port: address.port }
    : null;
}

function toSluiceError(error: unknown, request?: FastifyRequest): SluiceError {
  if (error instanceof SluiceError) return error;
  const e = error as Partial<FastifyError> & { message?: string };
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return unsupportedMediaType(request?.headers['content-type']);
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new SluiceError('PAYLOAD_TOO_LARGE', 'request body is larger than the configured limit', {
      hint: 'split the batch or raise --body-limit',
    });
  }
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new SluiceError('INVALID_JSON', 'request body is empty, expected JSON');
  if (e.validation !== undefined)
    return new SluiceError('INVALID_REQUEST', `invalid request: ${e.message ?? ''}`);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new SluiceError('INVALID_REQUEST', `invalid request: ${e.message ?? 'bad request'}`);
  }
  return new SluiceError('INTERNAL_ERROR', 'internal error', { detail: e.message ?? String(error) });
}

export type { FastifyInstance, FastifyRequest };
export { CloseCodes };
