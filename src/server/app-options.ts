// The settings of buildApp (app.ts): what a server is started with (the CLI maps its flags onto these),
// each with its default in defaults.ts.
import type { FastifyBaseLogger } from 'fastify';
import type { Engine } from '../index.ts';
import type { Retention } from '../storage/changelog-store.ts';
import type { SubscriberLimits } from '../sink/subscriber.ts';
import type { QuerySubscriptionOptions } from './query-subscriptions.ts';
import type { CheckpointPolicy, JournalRetentionPolicy } from './runtime/types.ts';
import type { ReadLimits } from './view-rows.ts';
import type { ResultLimits } from '../exec/result-size.ts';
import type { IdempotencyLimits } from './idempotency-window.ts';
import type { KdfParams } from '../storage/token-store.ts';
import type { AdmissionOptions } from './request-guard.ts';

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
  /**
   * Journal retention: table batches a durable checkpoint covers are deleted once older than `ms`
   * (default a week; null: kept forever), `sliceRows` at a time between requests. Past it, a
   * checkpoint that cannot be loaded refuses the start instead of replaying the whole journal.
   */
  readonly journalRetention?: Partial<JournalRetentionPolicy>;
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
  /** Most rows one UPDATE or DELETE may change (default DEFAULTS.maxDmlRows). */
  readonly maxDmlRows?: number;
  /** One memory budget in bytes for all subscribers' queued messages and open snapshots, of all tenants. */
  readonly subscriberMemory?: number;
  readonly maxSubscribers?: number;
  /**
   * Most subscribers of one tenant without a `subscribers` quota while the server serves more than one
   * tenant (default half of maxSubscribers, so one tenant cannot take every place; quotas.ts).
   */
  readonly maxSubscribersPerTenant?: number;
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
  /** Most live tokens of one tenant (default 1,000; token-limits.ts). */
  readonly maxTokensPerTenant?: number;
  /** Most tokens one tenant's admins create a minute (default 60; the operator is not limited). */
  readonly tokenCreatesPerMinute?: number;
  /** How long a revoked token (not an operator one) is kept and listed before it is deleted (30 days). */
  readonly revokedTokenRetentionMs?: number;
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
