// Tenants (docs/security.md): one runtime — engine, journal, changelogs, checkpoints, connectors,
// query subscriptions, metrics — per tenant, each in its own directory, so nothing of one tenant can
// name, read or infer another's objects: isolation by construction, not by filtering. The default
// tenant keeps the data directory's top level (existing data directories start as they were); any
// other lives in `<data dir>/tenants/<name>/`. The list is in auth.db (src/storage/tenant-store.ts):
// a tenant exists once its row does, and a directory without a row (a creation cut short) is removed
// at the next start.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../common/errors.ts';
import { DEFAULT_TENANT } from '../storage/token-store.ts';
import {
  NO_QUOTAS,
  TENANT_NAME,
  TenantStore,
  type Quotas,
  type TenantRecord,
} from '../storage/tenant-store.ts';
import { crashPoint } from './crash-points.ts';
import type { QuerySubscriptions } from './query-subscriptions.ts';
import type { SluiceRuntime } from './runtime.ts';
import type { ServerMetrics } from './metrics.ts';
import type { IngestLimiter } from './rate-limits.ts';
import type { TenantUsage } from './usage.ts';

/** What serves one tenant. */
export interface Tenant {
  readonly name: string;
  readonly runtime: SluiceRuntime;
  readonly queries: QuerySubscriptions;
  readonly metrics: ServerMetrics;
  /** As stored (PATCH /v1/tenants/{t} changes them). */
  quotas: Quotas;
  /** Its ingest rate buckets (quotas.ts). */
  readonly limiter: IngestLimiter;
  /** What it used (usage.ts). */
  readonly usage: TenantUsage;
  readonly createdAt: number;
}

/** Opens the parts of a tenant whose state lives in `dataDir` (null: in memory). */
export type TenantOpener = (record: TenantRecord, dataDir: string | null) => Tenant;

/** The subdirectory of the data directory holding the tenants other than the default one. */
export const TENANTS_DIR = 'tenants';

export class TenantRegistry {
  private readonly tenants = new Map<string, Tenant>();

  constructor(
    readonly store: TenantStore,
    private readonly dataDir: string | null,
    private readonly open: TenantOpener,
    /** Most tenants at once (the default one included). */
    private readonly maxTenants = 1000,
  ) {}

  /** Opens every listed tenant and removes directories no row lists (creations cut short). */
  openAll(): void {
    const records = this.store.list();
    const listed = new Set(records.map((r) => r.name));
    if (this.dataDir !== null) {
      const dir = join(this.dataDir, TENANTS_DIR);
      if (existsSync(dir)) {
        for (const entry of readdirSync(dir)) {
          if (!listed.has(entry) || entry === DEFAULT_TENANT)
            rmSync(join(dir, entry), { recursive: true, force: true });
        }
      }
    }
    // Meters of a name no row lists (a creation cut short) must not greet a later tenant of that name.
    this.store.pruneUsage();
    try {
      for (const record of records) this.tenants.set(record.name, this.open(record, this.dirOf(record.name)));
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** The tenant of this name, or undefined. */
  get(name: string): Tenant | undefined {
    return this.tenants.get(name);
  }

  /** The tenant of a principal (its tokens exist only for tenants that do). */
  of(name: string): Tenant {
    const tenant = this.tenants.get(name);
    if (tenant === undefined)
      throw new SluiceError('UNAUTHENTICATED', `the tenant of this token is not served`);
    return tenant;
  }

  get default(): Tenant {
    return this.of(DEFAULT_TENANT);
  }

  /** Every tenant, the default one first. */
  list(): Tenant[] {
    return [...this.tenants.values()];
  }

  /**
   * Creates a tenant: its directory and runtime first, then the row that makes it exist (the commit
   * point); any failure before the row undoes the directory.
   */
  create(name: string): Tenant {
    if (!TENANT_NAME.test(name)) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `invalid request: "${name.slice(0, 100)}" is not a tenant name`,
        {
          hint: 'a tenant name is 1 to 63 lowercase letters, digits, "_" or "-", starting with a letter',
        },
      );
    }
    if (this.tenants.has(name) || this.store.get(name) !== null)
      throw new SluiceError('TENANT_EXISTS', `tenant "${name}" already exists`);
    if (this.tenants.size >= this.maxTenants) {
      throw new SluiceError('QUOTA_EXCEEDED', `the server holds its most tenants (${this.maxTenants})`, {
        hint: 'raise --max-tenants',
      });
    }
    const dir = this.dirOf(name);
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    const record: TenantRecord = { name, createdAt: Date.now(), quotas: NO_QUOTAS };
    let tenant: Tenant | null = null;
    try {
      tenant = this.open(record, dir);
      crashPoint('tenant-before-listed');
      if (!this.store.insert(name, record.createdAt))
        throw new SluiceError('TENANT_EXISTS', `tenant "${name}" already exists`);
    } catch (error) {
      tenant?.queries.close();
      tenant?.runtime.close();
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    this.tenants.set(name, tenant);
    return tenant;
  }

  /** Stores and applies a tenant's quotas. */
  setQuotas(tenant: Tenant, quotas: Quotas): void {
    this.store.setQuotas(tenant.name, quotas);
    tenant.quotas = quotas;
  }

  /** Stores every open tenant's meters (usage.ts). */
  saveUsage(): void {
    this.store.saveUsage([...this.tenants.values()].map((t) => [t.name, t.usage.stored()] as const));
  }

  close(): void {
    try {
      if (this.tenants.size > 0) this.saveUsage();
    } catch {
      // The auth file may be closed already; the meters then keep their last stored counts.
    }
    for (const tenant of this.tenants.values()) {
      tenant.queries.close();
      tenant.runtime.close();
    }
  }

  private dirOf(name: string): string | null {
    if (this.dataDir === null) return null;
    return name === DEFAULT_TENANT ? this.dataDir : join(this.dataDir, TENANTS_DIR, name);
  }
}
