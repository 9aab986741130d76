// The server's configuration defaults, in a module of their own so the CLI can print them in its
// usage text without loading the server.
import type { Retention } from '../storage/changelog-store.ts';
import { CHECKPOINT_SLICE_MS } from '../storage/checkpoint-format.ts';
import type { SubscriberLimits } from '../sink/subscriber.ts';
import type { ReadLimits } from './view-rows.ts';
import type { ResultLimits } from '../exec/result-size.ts';
import type { IdempotencyLimits } from './idempotency-window.ts';
import type { JournalRetentionPolicy } from './runtime/types.ts';

export const DEFAULTS = {
  bodyLimit: 16 * 1024 * 1024,
  retention: { epochs: 100_000, ms: 24 * 60 * 60 * 1000 } satisfies Retention,
  subscriberLimits: {
    maxBufferedBytes: 8 * 1024 * 1024,
    maxBufferedMessages: 10_000,
    stallTimeoutMs: 30_000,
  } satisfies SubscriberLimits,
  // One budget for the bytes all subscribers have queued (socket buffers included) and open snapshots.
  subscriberMemory: 256 * 1024 * 1024,
  maxSubscribers: 2000,
  maxSubscribersPerView: 1000,
  // Subscriptions to a query or table (temporary views): how long one stays after its last
  // subscriber left, and how many may exist at once.
  querySubscriptions: { lingerMs: 60_000, maxViews: 100 },
  /** Most tenants at once, the default one included. */
  maxTenants: 1000,
  // Making tokens (token-limits.ts): live tokens a tenant holds, creations a minute by its admins, and
  // how long a revoked token is listed before it is deleted (token-store.ts has the same 30 days as
  // DEFAULT_REVOKED_RETENTION_MS: this module must not load SQLite).
  tokens: { maxLivePerTenant: 1000, createsPerMinute: 60, revokedRetentionMs: 30 * 24 * 3600_000 },
  // REST view pages; a filtered page examines at most scanRows rows.
  reads: {
    defaultRows: 1000,
    maxRows: 10_000,
    maxBytes: 8 * 1024 * 1024,
    scanRows: 100_000,
  } satisfies ReadLimits,
  // The largest result of an ad-hoc SELECT (POST /v1/sql).
  selectLimits: { maxRows: 10_000, maxBytes: 8 * 1024 * 1024 } satisfies ResultLimits,
  // The most rows one UPDATE or DELETE may change: its changes are one epoch, applied at once
  // (1M rows held the event loop 4–8 s; 100k ≈ 0.4–0.8 s).
  maxDmlRows: 100_000,
  heartbeatMs: 3000,
  // How often the real clock is read for temporal filters: a row leaves a view at the first tick at or
  // after its bound (a tick crossing no bound is neither an epoch nor journaled). 0: no ticks.
  clockTickMs: 1000,
  snapshotChunkRows: 1000,
  pruneIntervalMs: 1000,
  closeGraceMs: 2000,
  // A connection must deliver its headers, and then its whole request, within these; an idle
  // keep-alive connection is closed after keepAliveMs. Slow or stalled clients cannot hold sockets.
  timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 },
  // Table batches the durable checkpoint covers are deleted from the journal after a week: long
  // enough that a checkpoint found bad (a damaged file, a bug in a new version's loader) can still
  // fall back to replaying the journal for a week's worth of history, short enough that the
  // journal stops growing (the HTTP bench's ingest writes gigabytes an hour). 256 batches a slice
  // keep a slice's transaction to a few ms. null (`--journal-retention-seconds 0`): keep all.
  journalRetention: { ms: 7 * 24 * 60 * 60 * 1000, sliceRows: 256 } satisfies JournalRetentionPolicy,
  // Recovery replays at most this much journal after a kill -9; the cost is one incremental write.
  checkpoint: { intervalMs: 10_000, epochs: 10_000, sliceMs: CHECKPOINT_SLICE_MS },
  // Ingest idempotency keys are remembered this long, up to this many and this many bytes of memory
  // (then the oldest go early); a retry after a lost answer comes within seconds to hours.
  idempotency: {
    windowMs: 24 * 60 * 60 * 1000,
    maxKeys: 100_000,
    maxBytes: 32 * 1024 * 1024,
  } satisfies IdempotencyLimits,
} as const;

/**
 * The default share of the server-wide places: half of them, so that one tenant's clients (a flood
 * of subscriptions, a leak of reconnecting ones) can never take every place and lock the others out.
 */
export function defaultSubscriberShare(serverMax: number): number {
  return Math.max(1, Math.floor(serverMax / 2));
}
