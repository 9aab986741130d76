// Limits on making tokens (docs/security.md#managing-tokens). Each creation is a KDF run on the
// threads every tenant's verifications share, and each live token a row of auth.db, so a tenant's
// admin may neither create tokens without end nor at any speed: a tenant holds at most
// `maxLivePerTenant` live tokens (403 QUOTA_EXCEEDED; revoking one frees its place), and its admins
// create at most `createsPerMinute` a minute (429 RATE_LIMITED with Retry-After). The operator is not
// rate limited (it runs the server) but its creations count against a tenant's live tokens too.
// Creations still running their KDF count as live, so concurrent requests cannot pass the cap together.
import { SluiceError } from '../common/errors.ts';
import { DEFAULTS } from './defaults.ts';
import { RateLimitedError } from './rate-limits.ts';
import type { TokenStore } from '../storage/token-store.ts';

export interface TokenLimitOptions {
  /** Most live (unrevoked) tokens of one tenant (default 1,000). */
  readonly maxLivePerTenant?: number;
  /** Most tokens one tenant's admins create a minute (default 60, all at once at most). */
  readonly createsPerMinute?: number;
}

export const DEFAULT_TOKEN_LIMITS: Required<TokenLimitOptions> = {
  maxLivePerTenant: DEFAULTS.tokens.maxLivePerTenant,
  createsPerMinute: DEFAULTS.tokens.createsPerMinute,
};

/** A bucket of `capacity` creations refilled evenly over a minute. */
interface CreateBucket {
  tokens: number;
  at: number;
}

export class TokenLimits {
  private readonly maxLive: number;
  private readonly perMinute: number;
  /** Creations whose KDF is running, per tenant. */
  private readonly pending = new Map<string, number>();
  private readonly buckets = new Map<string, CreateBucket>();

  constructor(
    private readonly store: TokenStore,
    options: TokenLimitOptions = {},
  ) {
    this.maxLive = Math.max(1, options.maxLivePerTenant ?? DEFAULT_TOKEN_LIMITS.maxLivePerTenant);
    this.perMinute = Math.max(1, options.createsPerMinute ?? DEFAULT_TOKEN_LIMITS.createsPerMinute);
  }

  /**
   * Runs `create` for `tenant` if the tenant is under its cap and (unless `byOperator`) its rate;
   * throws QUOTA_EXCEEDED or RATE_LIMITED otherwise, before any KDF run.
   */
  async admit<T>(tenant: string, byOperator: boolean, create: () => Promise<T>): Promise<T> {
    const pending = this.pending.get(tenant) ?? 0;
    const live = this.store.liveCount(tenant) + pending;
    if (live >= this.maxLive) {
      throw new SluiceError(
        'QUOTA_EXCEEDED',
        `quota exceeded: live tokens of the tenant (at most ${this.maxLive})`,
        {
          detail: 'no token was created',
          hint: `revoke tokens no longer used first (DELETE /v1/tenants/${tenant}/tokens/{id})`,
        },
      );
    }
    if (!byOperator) this.take(tenant);
    this.pending.set(tenant, pending + 1);
    try {
      return await create();
    } finally {
      const left = (this.pending.get(tenant) ?? 1) - 1;
      if (left > 0) this.pending.set(tenant, left);
      else this.pending.delete(tenant);
    }
  }

  /** Takes one creation from the tenant's bucket, or throws RATE_LIMITED. */
  private take(tenant: string, now = Date.now()): void {
    let bucket = this.buckets.get(tenant);
    if (bucket === undefined) this.buckets.set(tenant, (bucket = { tokens: this.perMinute, at: now }));
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) / 60_000) * this.perMinute);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const waitSeconds = Math.max(1, Math.ceil(((1 - bucket.tokens) / this.perMinute) * 60));
    throw new RateLimitedError(
      `too many tokens created: at most ${this.perMinute} a minute per tenant`,
      waitSeconds,
      'create tokens ahead of need more slowly, or ask the operator to create them',
    );
  }
}
