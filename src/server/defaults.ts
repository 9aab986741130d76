// The server's configuration defaults, in a module of their own so the CLI can print them in its
// usage text without loading the server.
import type { Retention } from '../sink/changelog-store.ts';
import type { SubscriberLimits } from '../sink/subscriber.ts';

export const DEFAULTS = {
  bodyLimit: 16 * 1024 * 1024,
  retention: { epochs: 100_000, ms: 24 * 60 * 60 * 1000 } satisfies Retention,
  subscriberLimits: {
    maxBufferedBytes: 8 * 1024 * 1024,
    maxBufferedMessages: 10_000,
    stallTimeoutMs: 30_000,
  } satisfies SubscriberLimits,
  heartbeatMs: 3000,
  snapshotChunkRows: 1000,
  pruneIntervalMs: 1000,
  closeGraceMs: 2000,
  // A connection must deliver its headers, and then its whole request, within these; an idle
  // keep-alive connection is closed after keepAliveMs. Slow or stalled clients cannot hold sockets.
  timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 },
  // Recovery replays at most this much journal after a kill -9; the cost is one incremental write.
  checkpoint: { intervalMs: 10_000, epochs: 10_000, sliceMs: 10 },
} as const;
