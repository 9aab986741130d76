// The durable half of authentication: bearer tokens in their own SQLite file of the data directory
// (`auth.db`, apart from the journal so a token write never joins an engine transaction). A token is
// `sluice_<id>_<secret>`: the id (16 hex digits, not secret) finds its row, and only a scrypt hash of
// the whole token with a per-token salt is stored, so the file never holds a usable credential and a
// verification costs exactly one KDF run. Hashes are compared with timingSafeEqual. Revoked tokens
// are listed (marked) for a retention period, then deleted, so the file does not grow with every token
// ever made; revoked operator tokens are kept, so that a revoked bootstrap token can never be stored
// again under its old id (bootstrap refuses an id it has seen).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { SqliteStore } from './sqlite-store.ts';

export const ROLES = ['reader', 'writer', 'admin', 'operator'] as const;
export type Role = (typeof ROLES)[number];

/** The tenant every server has (its data lives at the top of the data directory). */
export const DEFAULT_TENANT = 'default';

/** What a stored token says about its holder (never its secret or hash). */
export interface TokenInfo {
  readonly id: string;
  readonly tenant: string;
  readonly role: Role;
  /** Wall-clock ms. */
  readonly createdAt: number;
  /** Wall-clock ms of the last verification that touched the store (null: never used). */
  readonly lastUsedAt: number | null;
  /** Wall-clock ms of its revocation (null: live). */
  readonly revokedAt: number | null;
}

/** A token's parts: `sluice_` + 16 hex digits + `_` + at least 32 characters of [A-Za-z0-9_-]. */
const TOKEN_FORMAT = /^sluice_([0-9a-f]{16})_([A-Za-z0-9_-]{32,200})$/;

/** The id a token carries, or null when it is not of the token format. */
export function tokenId(token: string): string | null {
  return TOKEN_FORMAT.exec(token)?.[1] ?? null;
}

/** A new random token: a 64-bit id and a 256-bit secret. */
export function generateToken(): string {
  return `sluice_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('base64url')}`;
}

/** scrypt parameters: N = 2^14, r = 8 (16 MiB, tens of ms per verification), p = 1. */
export interface KdfParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}
export const DEFAULT_KDF: KdfParams = { N: 16384, r: 8, p: 1 };

/** How long a revoked token stays in auth.db (and in lists) before it is deleted: 30 days. */
export const DEFAULT_REVOKED_RETENTION_MS = 30 * 24 * 3600_000;
const KEY_LENGTH = 32;

function kdf(token: string, salt: Buffer, params: KdfParams): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) =>
    scrypt(token, salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`: the parameters travel with the hash, so they may change. */
async function hashToken(token: string, params: KdfParams): Promise<string> {
  const salt = randomBytes(16);
  const hash = await kdf(token, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

async function matches(token: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await kdf(token, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin', 'operator')),
  hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
`;

type Row = {
  id: string;
  tenant: string;
  role: Role;
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
};

const info = (r: Row): TokenInfo => ({
  id: r.id,
  tenant: r.tenant,
  role: r.role,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class TokenStore {
  private readonly file: SqliteStore;
  /** KDF runs of verifications so far (tests count work with it). */
  verifications = 0;

  /**
   * `dataDir` null: in memory (tests, throwaway servers). Revoked tokens other than operator ones are
   * deleted `revokedRetentionMs` after their revocation (at the start, and as tokens are created or
   * listed).
   */
  constructor(
    dataDir: string | null,
    private readonly params: KdfParams = DEFAULT_KDF,
    private readonly revokedRetentionMs: number = DEFAULT_REVOKED_RETENTION_MS,
  ) {
    this.file = new SqliteStore({ dataDir, file: 'auth.db', journal: false });
    this.file.db.exec(SCHEMA);
    this.pruneRevoked();
  }

  /** Deletes the revoked tokens past the retention (never operator ones); returns how many. */
  pruneRevoked(now = Date.now()): number {
    return this.file.db
      .prepare("DELETE FROM tokens WHERE revoked_at <= ? AND role <> 'operator'")
      .run(now - this.revokedRetentionMs).changes;
  }

  /** How many live tokens `tenant` has. */
  liveCount(tenant: string): number {
    const row = this.file.db
      .prepare('SELECT count(*) AS n FROM tokens WHERE tenant = ? AND revoked_at IS NULL')
      .get(tenant) as { n: number };
    return row.n;
  }

  /**
   * Stores `token` (a new random one unless given) for `tenant` with `role`; returns its info and the
   * token, which is never available again. A token whose id is taken is refused.
   */
  async create(
    tenant: string,
    role: Role,
    token: string = generateToken(),
  ): Promise<{ info: TokenInfo; token: string }> {
    const id = tokenId(token);
    if (id === null) throw new Error('not a Sluice token (expected sluice_<16 hex digits>_<secret>)');
    const hash = await hashToken(token, this.params);
    const now = Date.now();
    this.pruneRevoked(now);
    this.file.db
      .prepare('INSERT INTO tokens (id, tenant, role, hash, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, tenant, role, hash, now);
    return {
      info: { id, tenant, role, createdAt: now, lastUsedAt: null, revokedAt: null },
      token,
    };
  }

  /** The live token `token` is, or null (unknown id, wrong secret, revoked). One KDF run at most. */
  async verify(token: string): Promise<TokenInfo | null> {
    const id = tokenId(token);
    if (id === null) return null;
    const row = this.row(id);
    if (row === undefined || row.revoked_at !== null) return null;
    this.verifications += 1;
    if (!(await matches(token, row.hash))) return null;
    // Revoked while the KDF ran: the revocation wins.
    const now = this.row(id);
    return now === undefined || now.revoked_at !== null ? null : info(now);
  }

  /** Records a use (callers do so at most once per cache period, not per request). */
  touch(id: string, at = Date.now()): void {
    this.file.db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?').run(at, id);
  }

  get(id: string): TokenInfo | null {
    const row = this.row(id);
    return row === undefined ? null : info(row);
  }

  /** Every token of `tenant`, oldest first (revoked ones within the retention included, marked). */
  list(tenant: string): TokenInfo[] {
    this.pruneRevoked();
    return (
      this.file.db
        .prepare('SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id')
        .all(tenant) as Row[]
    ).map(info);
  }

  /** Marks a token revoked; false when there is no such live token. */
  revoke(id: string, at = Date.now()): boolean {
    return (
      this.file.db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id)
        .changes === 1
    );
  }

  /** Whether any token is live (a way in exists). */
  hasLiveToken(): boolean {
    return this.file.db.prepare('SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1').get() !== undefined;
  }

  /** Whether a live operator token exists. */
  hasLiveOperator(): boolean {
    return (
      this.file.db
        .prepare("SELECT 1 FROM tokens WHERE role = 'operator' AND revoked_at IS NULL LIMIT 1")
        .get() !== undefined
    );
  }

  /**
   * A start with authentication and no live operator token (the first one, or after every operator
   * token was revoked): stores `token` (or a new random one) as the default tenant's operator token
   * and returns it. Null when a live operator token exists: nothing is created or shown again.
   */
  async bootstrap(token?: string): Promise<string | null> {
    if (this.hasLiveOperator()) return null;
    const secret = token ?? generateToken();
    const id = tokenId(secret);
    if (id === null) throw new Error('not a Sluice token (expected sluice_<16 hex digits>_<secret>)');
    if (this.row(id) !== undefined)
      throw new Error(`the bootstrap token ${id} was revoked; set SLUICE_BOOTSTRAP_TOKEN to a new token`);
    await this.create(DEFAULT_TENANT, 'operator', secret);
    return secret;
  }

  /** The auth file's database (the tenant list shares it: src/storage/tenant-store.ts). */
  get db(): SqliteStore['db'] {
    return this.file.db;
  }

  close(): void {
    this.file.close();
  }

  private row(id: string): Row | undefined {
    return this.file.db.prepare('SELECT * FROM tokens WHERE id = ?').get(id) as Row | undefined;
  }
}
