// Authentication and roles (docs/security.md). An Authenticator turns a bearer token into a principal
// (tenant and role): a short-lived, size-bounded cache in front of the token store's one scrypt run per
// verification, with concurrent verifications of one token shared and the number in flight bounded, so
// neither a flood of requests nor of wrong tokens can queue unbounded KDF work. Refused tokens are
// remembered apart from verified ones (a flood of wrong tokens must not push a tenant's token out and
// make each of its requests pay the KDF again), and the ids of one tenant hold at most a share of the
// verifications in flight (token ids are not secret: whoever knows one can send it with wrong secrets,
// and must not fill every slot, so that every other tenant's tokens are refused with UNAVAILABLE).
// Operator tokens verify in a share of their own, reserved from the rest: no tenant's tokens, the
// default tenant's admins and readers included, can fill it, so the operator is never turned away by
// a flood under ids it did not issue to itself (and tenant admins are never shown operator ids).
// Revocation empties the cache of that token and closes the long-lived streams it opened.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import {
  DEFAULT_TENANT,
  ROLES,
  TokenStore,
  tokenId,
  type Role,
  type TokenInfo,
} from '../storage/token-store.ts';

export { DEFAULT_TENANT, ROLES, type Role };

/** Who a request acts as. `tokenId` null: authentication is off (the loopback default). */
export interface Principal {
  readonly tenant: string;
  readonly role: Role;
  readonly tokenId: string | null;
}

/** Without authentication every (loopback) client is the default tenant's admin (API.md). */
export const LOOPBACK_PRINCIPAL: Principal = { tenant: DEFAULT_TENANT, role: 'admin', tokenId: null };

const RANK: Record<Role, number> = { reader: 0, writer: 1, admin: 2, operator: 3 };

/** Whether `role` includes everything `needed` may do. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export function isRole(x: unknown): x is Role {
  return typeof x === 'string' && (ROLES as readonly string[]).includes(x);
}

export interface AuthenticatorOptions {
  /** Whether requests must carry a token (false: loopback clients act as LOOPBACK_PRINCIPAL). */
  readonly enabled: boolean;
  /** How long a verified (or refused) token is remembered (default 30 s). */
  readonly cacheTtlMs?: number;
  /** Most tokens remembered at once (default 1024; the least recently used go first). */
  readonly cacheSize?: number;
  /**
   * Most KDF verifications of tenants' tokens in flight; beyond, requests are refused with
   * UNAVAILABLE (default 32). Operator tokens verify apart (maxVerificationsPerTenant more).
   */
  readonly maxVerifications?: number;
  /**
   * Most of them for tokens of one tenant (default a quarter of maxVerifications). Operator tokens
   * have a share of this size of their own, on top of maxVerifications, that no other token takes.
   */
  readonly maxVerificationsPerTenant?: number;
}

/** The share operator tokens verify in: apart from every tenant's, the default tenant's included. */
const OPERATOR_SHARE = '\u0000operator';

interface CacheEntry {
  readonly info: TokenInfo;
  readonly expires: number;
}

export class Authenticator {
  readonly enabled: boolean;
  private readonly ttlMs: number;
  private readonly cacheSize: number;
  private readonly maxVerifications: number;
  private readonly maxPerTenant: number;
  /** sha-256 of a verified token → what it verified to. Map order is recency (re-inserted on a hit). */
  private readonly cache = new Map<string, CacheEntry>();
  /** sha-256 of a refused token → when to forget it: apart, so refusals never evict verified tokens. */
  private readonly refused = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<TokenInfo | null>>();
  /** KDF verifications in flight per share: the tenant of the token's id, or OPERATOR_SHARE. */
  private readonly inFlightOf = new Map<string, number>();
  /** KDF verifications in flight of tokens that are not operator tokens. */
  private inFlightOfTenants = 0;
  /** Token id → closers of the streams it opened (closed when it is revoked). */
  private readonly streams = new Map<string, Set<() => void>>();

  constructor(
    readonly store: TokenStore,
    options: AuthenticatorOptions,
  ) {
    this.enabled = options.enabled;
    this.ttlMs = options.cacheTtlMs ?? 30_000;
    this.cacheSize = Math.max(1, options.cacheSize ?? 1024);
    this.maxVerifications = Math.max(1, options.maxVerifications ?? 32);
    this.maxPerTenant = Math.max(
      1,
      options.maxVerificationsPerTenant ?? Math.floor(this.maxVerifications / 4),
    );
  }

  /** The principal an `Authorization` header stands for, or the error to answer. */
  async fromHeader(header: string | undefined): Promise<Principal | SluiceError> {
    if (header === undefined || header.trim() === '') {
      return new SluiceError('UNAUTHENTICATED', 'authentication required: no bearer token', {
        hint: "send the header 'Authorization: Bearer <token>' (docs/security.md)",
      });
    }
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (m === null) {
      return new SluiceError(
        'UNAUTHENTICATED',
        'authentication required: the Authorization header is not a bearer token',
        {
          hint: "send the header 'Authorization: Bearer <token>'",
        },
      );
    }
    return this.fromToken(m[1] as string);
  }

  /** The principal a token stands for, or UNAUTHENTICATED (unknown, malformed or revoked). */
  async fromToken(token: string): Promise<Principal | SluiceError> {
    const info = await this.verify(token);
    if (info === null) {
      return new SluiceError('UNAUTHENTICATED', 'invalid token: unknown, malformed or revoked', {
        hint: 'ask an admin of your tenant for a token (sluice token create)',
      });
    }
    return { tenant: info.tenant, role: info.role, tokenId: info.id };
  }

  private async verify(token: string): Promise<TokenInfo | null> {
    const id = token.length > 256 ? null : tokenId(token);
    if (id === null) return null;
    const key = createHash('sha256').update(token).digest('base64');
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      this.cache.delete(key);
      if (hit.expires > now) {
        this.cache.set(key, hit);
        return hit.info;
      }
    }
    const refusedUntil = this.refused.get(key);
    if (refusedUntil !== undefined) {
      if (refusedUntil > now) return null;
      this.refused.delete(key);
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    // An unknown or revoked id costs no KDF run, so it takes no slot (and is not remembered: looking
    // it up again is as cheap as remembering it).
    const stored = this.store.get(id);
    if (stored === null || stored.revokedAt !== null) return null;
    const operator = stored.role === 'operator';
    const share = operator ? OPERATOR_SHARE : stored.tenant;
    const ofShare = this.inFlightOf.get(share) ?? 0;
    // The operator's share comes on top of maxVerifications: the other tokens can never fill it.
    const tenantsFull = !operator && this.inFlightOfTenants >= this.maxVerifications;
    if (ofShare >= this.maxPerTenant || tenantsFull) {
      throw new SluiceError('UNAVAILABLE', 'too many token verifications in progress; retry shortly');
    }
    this.inFlightOf.set(share, ofShare + 1);
    if (!operator) this.inFlightOfTenants += 1;
    const run = (async () => {
      const info = await this.store.verify(token);
      if (info !== null) this.store.touch(info.id);
      this.remember(key, info);
      return info;
    })().finally(() => {
      this.inFlight.delete(key);
      const left = (this.inFlightOf.get(share) ?? 1) - 1;
      if (left > 0) this.inFlightOf.set(share, left);
      else this.inFlightOf.delete(share);
      if (!operator) this.inFlightOfTenants -= 1;
    });
    this.inFlight.set(key, run);
    return run;
  }

  private remember(key: string, info: TokenInfo | null): void {
    const expires = Date.now() + this.ttlMs;
    const map: Map<string, unknown> = info === null ? this.refused : this.cache;
    if (info === null) this.refused.set(key, expires);
    else this.cache.set(key, { info, expires });
    while (map.size > this.cacheSize) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }

  /** KDF runs of verifications so far (tests count work with it). */
  get verifications(): number {
    return this.store.verifications;
  }

  /** Verified tokens remembered now (bounded by cacheSize; refused ones are remembered apart). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /** Revokes a token at once: its cache entries are dropped and its open streams closed. */
  revoke(id: string): boolean {
    const done = this.store.revoke(id);
    for (const [key, entry] of this.cache) if (entry.info.id === id) this.cache.delete(key);
    const closers = this.streams.get(id);
    this.streams.delete(id);
    for (const close of closers ?? []) close();
    return done;
  }

  /** Registers a long-lived stream of a token, closed if the token is revoked; returns the unregister. */
  track(principal: Principal, close: () => void): () => void {
    const id = principal.tokenId;
    if (id === null) return () => undefined;
    let set = this.streams.get(id);
    if (set === undefined) this.streams.set(id, (set = new Set()));
    set.add(close);
    return () => {
      const s = this.streams.get(id);
      s?.delete(close);
      if (s?.size === 0) this.streams.delete(id);
    };
  }
}

/** The error for a principal whose role is below `needed`. */
export function forbidden(principal: Principal, what: string, needed: Role): SluiceError {
  return new SluiceError('FORBIDDEN', `permission denied: role "${principal.role}" may not ${what}`, {
    hint: `this needs the ${needed} role or higher (docs/security.md)`,
  });
}
