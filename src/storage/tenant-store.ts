// The list of tenants and their quotas, in the auth file (`auth.db`) beside the tokens. A row is the
// commit point of a tenant's creation: its directory is made and its runtime opened first, and the
// row is inserted last, so a crash in between leaves a directory without a row, which the next start
// removes (no half tenant is ever listed or served). The default tenant is implicit: it always
// exists and keeps the data directory's top level.
import type Database from 'better-sqlite3';
import { DEFAULT_TENANT } from './token-store.ts';

/** Per-tenant limits; null: unlimited. */
export interface Quotas {
  /** Tables, views, sources and sinks together. */
  readonly objects: number | null;
  /** The state of its tables and views, in bytes. */
  readonly stateBytes: number | null;
  readonly ingestRowsPerSecond: number | null;
  readonly ingestBytesPerSecond: number | null;
  /** Open subscriptions (WebSocket and NDJSON), those still authenticating included. */
  readonly subscribers: number | null;
  /** Kafka sources and sinks together. */
  readonly connectors: number | null;
}

export const QUOTA_NAMES = [
  'objects',
  'stateBytes',
  'ingestRowsPerSecond',
  'ingestBytesPerSecond',
  'subscribers',
  'connectors',
] as const satisfies readonly (keyof Quotas)[];

export const NO_QUOTAS: Quotas = {
  objects: null,
  stateBytes: null,
  ingestRowsPerSecond: null,
  ingestBytesPerSecond: null,
  subscribers: null,
  connectors: null,
};

export interface TenantRecord {
  readonly name: string;
  /** Wall-clock ms (0 for the implicit default tenant). */
  readonly createdAt: number;
  readonly quotas: Quotas;
}

/** A tenant name: lowercase letters, digits, `_` and `-`, starting with a letter; at most 63. */
export const TENANT_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenants (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  quotas TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tenant_usage (
  name TEXT PRIMARY KEY,
  usage TEXT NOT NULL
);
`;

/** A tenant's meters as stored: the counters that run from `since` (wall-clock ms). */
export interface StoredUsage {
  readonly rowsIn: number;
  readonly bytesIn: number;
  readonly rowsOut: number;
  readonly bytesOut: number;
  readonly cpuMicros: number;
  readonly stateByteHours: number;
  readonly since: number;
}

const USAGE_FIELDS = [
  'rowsIn',
  'bytesIn',
  'rowsOut',
  'bytesOut',
  'cpuMicros',
  'stateByteHours',
  'since',
] as const satisfies readonly (keyof StoredUsage)[];

type Row = { name: string; created_at: number; quotas: string };

function quotasOf(text: string): Quotas {
  const parsed = JSON.parse(text) as Partial<Record<keyof Quotas, unknown>>;
  const out: Record<string, number | null> = {};
  for (const k of QUOTA_NAMES) {
    const v = parsed[k];
    out[k] = typeof v === 'number' && Number.isFinite(v) ? v : null;
  }
  return out as unknown as Quotas;
}

export class TenantStore {
  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    // The default tenant's row holds its quotas (it exists whether or not the row does).
  }

  /** Every tenant, the default one first, then by name. */
  list(): TenantRecord[] {
    const rows = this.db.prepare('SELECT * FROM tenants ORDER BY name').all() as Row[];
    const records = rows.map((r) => ({ name: r.name, createdAt: r.created_at, quotas: quotasOf(r.quotas) }));
    const def = records.find((r) => r.name === DEFAULT_TENANT) ?? {
      name: DEFAULT_TENANT,
      createdAt: 0,
      quotas: NO_QUOTAS,
    };
    return [def, ...records.filter((r) => r.name !== DEFAULT_TENANT)];
  }

  get(name: string): TenantRecord | null {
    return this.list().find((r) => r.name === name) ?? null;
  }

  /** Inserts the row that makes a tenant exist; false when the name is taken. */
  insert(name: string, at = Date.now()): boolean {
    if (name === DEFAULT_TENANT) return false;
    return (
      this.db
        .prepare('INSERT OR IGNORE INTO tenants (name, created_at, quotas) VALUES (?, ?, ?)')
        .run(name, at, JSON.stringify(NO_QUOTAS)).changes === 1
    );
  }

  /** A tenant's stored meters, or null when none were stored (a new tenant, or one from before). */
  loadUsage(name: string): StoredUsage | null {
    const row = this.db.prepare('SELECT usage FROM tenant_usage WHERE name = ?').get(name) as
      { usage: string } | undefined;
    if (row === undefined) return null;
    const parsed = JSON.parse(row.usage) as Partial<Record<keyof StoredUsage, unknown>>;
    const out: Record<string, number> = {};
    for (const k of USAGE_FIELDS) {
      const v = parsed[k];
      out[k] = typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
    }
    return out as unknown as StoredUsage;
  }

  /** Drops the meters of names that are not tenants. */
  pruneUsage(): void {
    this.db
      .prepare('DELETE FROM tenant_usage WHERE name <> ? AND name NOT IN (SELECT name FROM tenants)')
      .run(DEFAULT_TENANT);
  }

  /** Stores the meters of several tenants in one transaction. */
  saveUsage(entries: readonly (readonly [name: string, usage: StoredUsage])[]): void {
    const put = this.db.prepare(
      'INSERT INTO tenant_usage (name, usage) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET usage = excluded.usage',
    );
    this.db.transaction(() => {
      for (const [name, usage] of entries) put.run(name, JSON.stringify(usage));
    })();
  }

  /** Stores a tenant's quotas (all of them, as given). */
  setQuotas(name: string, quotas: Quotas): void {
    this.db
      .prepare(
        'INSERT INTO tenants (name, created_at, quotas) VALUES (?, ?, ?) ' +
          'ON CONFLICT (name) DO UPDATE SET quotas = excluded.quotas',
      )
      .run(name, name === DEFAULT_TENANT ? 0 : Date.now(), JSON.stringify(quotas));
  }
}
