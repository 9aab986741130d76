// Authentication and roles (docs/security.md). An Authenticator turns a bearer token into a principal
// (tenant and role): a short-lived, size-bounded cache in front of the token store's one scrypt run per
// verification, with concurrent verifications of one token shared and the number in flight bounded, so
// neither a flood of requests nor of wrong tokens can queue unbounded KDF work. Revocation empties the
// cache of that token and closes the long-lived streams it opened.
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
  /** Most KDF verifications in flight; beyond, requests are refused with UNAVAILABLE (default 32). */
  readonly maxVerifications?: number;
}

interface CacheEntry {
  /** null: a refused token (so repeating a wrong one does not cost a KDF run each time). */
  readonly info: TokenInfo | null;
  readonly expires: number;
}

export class Authenticator {
  readonly enabled: boolean;
  private readonly ttlMs: number;
  private readonly cacheSize: number;
  private readonly maxVerifications: number;
  /** sha-256 of the token → what it verified to. Map order is recency (re-inserted on a hit). */
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<TokenInfo | null>>();
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
    if (token.length > 256 || tokenId(token) === null) return null;
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
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    if (this.inFlight.size >= this.maxVerifications) {
      throw new SluiceError('UNAVAILABLE', 'too many token verifications in progress; retry shortly');
    }
    const run = (async () => {
      const info = await this.store.verify(token);
      if (info !== null) this.store.touch(info.id);
      this.remember(key, info);
      return info;
    })().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, run);
    return run;
  }

  private remember(key: string, info: TokenInfo | null): void {
    this.cache.set(key, { info, expires: Date.now() + this.ttlMs });
    while (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  /** KDF runs of verifications so far (tests count work with it). */
  get verifications(): number {
    return this.store.verifications;
  }

  /** Tokens remembered now (bounded by cacheSize). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /** Revokes a token at once: its cache entries are dropped and its open streams closed. */
  revoke(id: string): boolean {
    const done = this.store.revoke(id);
    for (const [key, entry] of this.cache) if (entry.info?.id === id) this.cache.delete(key);
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
