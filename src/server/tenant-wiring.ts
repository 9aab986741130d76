// A tenant as the server holds it: its runtime with the metrics, usage meters, ingest limiter and
// query subscriptions wired to that runtime's hooks (app.ts opens one per tenant through this).
import { ServerMetrics } from './metrics.ts';
import { DEFAULTS } from './defaults.ts';
import type { Tenant } from './tenants.ts';
import { TenantUsage } from './usage.ts';
import { IngestLimiter } from './rate-limits.ts';
import { stateAtQuota } from './quotas.ts';
import type { TenantRecord, TenantStore } from '../storage/tenant-store.ts';
import { QuerySubscriptions, isTemporaryView, type QuerySubscriptionOptions } from './query-subscriptions.ts';
import type { SluiceRuntime } from './runtime.ts';

/** What opening a tenant needs from the server. */
export interface TenantContext {
  readonly tenantStore: TenantStore;
  readonly logger: ConstructorParameters<typeof QuerySubscriptions>[1];
  readonly querySubscriptions: Partial<QuerySubscriptionOptions> | undefined;
  /** Every tenant open now (the temporary views' cap is for the whole server). */
  readonly allTenants: () => readonly Tenant[];
}

/** A tenant's metrics (labelled with its name) and the runtime hooks that feed them. */
export function openTenant(
  record: TenantRecord,
  tenantRuntime: SluiceRuntime,
  context: TenantContext,
): Tenant {
  const { tenantStore, logger, querySubscriptions, allTenants } = context;
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
    journalTrimmed: (batches) => metrics.journalTrimmed(batches),
  };
  const queries = new QuerySubscriptions(tenantRuntime, logger, {
    lingerMs: querySubscriptions?.lingerMs ?? DEFAULTS.querySubscriptions.lingerMs,
    maxViews: querySubscriptions?.maxViews ?? DEFAULTS.querySubscriptions.maxViews,
    // A cap for the server, not per tenant: N tenants cannot hold N times the temporary views.
    heldInAll: () =>
      allTenants().reduce((n, t) => n + t.runtime.viewNames().filter((v) => isTemporaryView(v)).length, 0),
    // At that cap, an idle one of the tenant holding the most goes first: one tenant's abandoned
    // queries cannot keep the others' out.
    makeRoom: () =>
      [...allTenants()].sort((a, b) => b.queries.held - a.queries.held).some((t) => t.queries.dropIdle()),
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
  // And its state quota: a source is not refused like a request (its records must never be lost), so
  // it pauses reading while the state is at or above the quota and resumes once it is below.
  tenantRuntime.hooks.sourceStateFull = () => stateAtQuota(tenantRuntime, tenant.quotas);
  return tenant;
}
