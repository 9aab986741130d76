// Per-tenant quotas (docs/security.md#quotas), checked before a request does anything, so a refused
// request has no effect: sizes (objects, connectors, state bytes, subscribers) answer
// 403 QUOTA_EXCEEDED; the rates (ingest rows/s and bytes/s, 429 RATE_LIMITED) are in rate-limits.ts.
// A tenant at its limit is refused at the door and takes no engine work from the others.
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import { parseInSlices } from '../parser/parse.ts';
import type { Quotas } from '../storage/tenant-store.ts';
import { isTemporaryView } from './query-subscriptions.ts';
import type { SluiceRuntime } from './runtime.ts';

/** What a script would add and whether it writes at all. */
export interface ScriptFootprint {
  /** CREATE TABLE / MATERIALIZED VIEW / SOURCE / SINK statements. */
  readonly creates: number;
  /** CREATE SOURCE / SINK statements. */
  readonly connectors: number;
  /** Any statement that changes state (DDL or DML). */
  readonly writes: boolean;
  /** Any statement that may add state (all writes but DELETE and DROP). */
  readonly grows: boolean;
  /** Rows its INSERT statements write (rate-limits.ts). */
  readonly dmlRows: number;
  /** Its UPDATE and DELETE statements, whose row counts are known only once they ran. */
  readonly dmlUnknown: number;
}

/**
 * Parses `sql` in slices (a long script does not hold the loop) and counts what it creates. Null
 * when it does not parse: the engine then refuses it whole with its parse error.
 */
export async function scriptFootprint(sql: string, limits: SqlLimits): Promise<ScriptFootprint | null> {
  const statements = await parseInSlices(sql, limits);
  if (statements === null) return null;
  let creates = 0;
  let connectors = 0;
  let writes = false;
  let grows = false;
  let dmlRows = 0;
  let dmlUnknown = 0;
  for (const s of statements) {
    if (s.kind === 'insert' && s.query === undefined) dmlRows += s.rows.length;
    // Rows known only once it runs (settled against the rows written afterwards).
    if (s.kind === 'update' || s.kind === 'delete' || (s.kind === 'insert' && s.query !== undefined))
      dmlUnknown += 1;
    if (s.kind === 'createTable' || s.kind === 'createView' || s.kind === 'createFunction') creates += 1;
    if (s.kind === 'createSource' || s.kind === 'createSink') {
      creates += 1;
      connectors += 1;
    }
    if (s.kind !== 'select' && s.kind !== 'explain' && s.kind !== 'show') {
      writes = true;
      if (s.kind !== 'delete' && s.kind !== 'drop') grows = true;
    }
  }
  return { creates, connectors, writes, grows, dmlRows, dmlUnknown };
}

/** A tenant's objects now: tables, views (not temporary ones of query subscriptions), sources, sinks, functions. */
export function objectCounts(runtime: SluiceRuntime): { objects: number; connectors: number } {
  const catalog = runtime.engine.catalog();
  const sources = runtime.sourceReports().length;
  const sinks = runtime.sinkReports().length;
  // Sources are tables only their connector writes: the catalog lists them among the tables.
  const tables = catalog.tables.length;
  const views = catalog.views.filter((v) => !isTemporaryView(v.name)).length;
  const functions = runtime.engine.functionCount();
  return { objects: tables + views + sinks + functions, connectors: sources + sinks };
}

/** The state a tenant holds, in bytes: its views' and its shared arrangements'. */
export function stateBytes(runtime: SluiceRuntime): number {
  if (!runtime.store.db.open) return 0;
  let bytes = 0;
  for (const v of runtime.engine.catalog().views) bytes += v.stateBytes;
  for (const a of runtime.engine.sharedArrangements()) bytes += a.stateBytes;
  return bytes + runtime.engine.tableStateBytes();
}

function exceeded(what: string, limit: number, detail: string): SluiceError {
  return new SluiceError('QUOTA_EXCEEDED', `quota exceeded: ${what} (at most ${limit})`, {
    detail,
    hint: 'drop something first, or ask the operator to raise the quota (PATCH /v1/tenants/{t})',
  });
}

/** The error a script would meet against the tenant's size quotas, or null. */
export function checkScript(
  runtime: SluiceRuntime,
  quotas: Quotas,
  footprint: ScriptFootprint,
): SluiceError | null {
  if (!footprint.writes) return null;
  const now = objectCounts(runtime);
  if (quotas.objects !== null && footprint.creates > 0 && now.objects + footprint.creates > quotas.objects) {
    return exceeded(
      'objects',
      quotas.objects,
      `the tenant has ${now.objects} and the script creates ${footprint.creates}; no statement of it was run`,
    );
  }
  if (
    quotas.connectors !== null &&
    footprint.connectors > 0 &&
    now.connectors + footprint.connectors > quotas.connectors
  ) {
    return exceeded(
      'connectors',
      quotas.connectors,
      `the tenant has ${now.connectors} sources and sinks and the script creates ${footprint.connectors}; no statement of it was run`,
    );
  }
  return footprint.grows ? checkState(runtime, quotas) : null;
}

/** The tenant's state is at or above its state quota (its Kafka sources pause reading meanwhile). */
export function stateAtQuota(runtime: SluiceRuntime, quotas: Quotas): boolean {
  return quotas.stateBytes !== null && stateBytes(runtime) >= quotas.stateBytes;
}

/** Writes that may add state are refused while the tenant's state is at or above its quota. */
export function checkState(runtime: SluiceRuntime, quotas: Quotas): SluiceError | null {
  if (quotas.stateBytes === null) return null;
  const bytes = stateBytes(runtime);
  if (bytes < quotas.stateBytes) return null;
  return exceeded(
    'state bytes',
    quotas.stateBytes,
    `the tenant holds ${bytes} bytes of state; nothing was applied`,
  );
}

/** The server-wide subscriber places a tenant without a `subscribers` quota may take a share of. */
export interface SubscriberPlaces {
  /** `--max-subscribers`: places of all tenants together. */
  readonly serverMax: number;
  /** `--max-subscribers-per-tenant`: most places of one tenant that has no `subscribers` quota. */
  readonly defaultShare: number;
  /** Tenants the server serves now (the default one included). */
  readonly tenants: number;
}

/**
 * The error for one more subscriber of a tenant holding `subscribers`, or null. Its `subscribers`
 * quota bounds it when set; otherwise, while the server serves other tenants too, the default share
 * does (a server of one tenant keeps every place for it).
 */
export function checkSubscriber(
  subscribers: number,
  quotas: Quotas,
  places?: SubscriberPlaces,
): SluiceError | null {
  if (quotas.subscribers !== null) {
    if (subscribers < quotas.subscribers) return null;
    return exceeded('subscribers', quotas.subscribers, `the tenant has ${subscribers} open subscriptions`);
  }
  if (places === undefined || places.tenants < 2 || subscribers < places.defaultShare) return null;
  return new SluiceError(
    'QUOTA_EXCEEDED',
    `quota exceeded: subscribers (at most ${places.defaultShare}, the default share of --max-subscribers ${places.serverMax})`,
    {
      detail: `the tenant has ${subscribers} open subscriptions and no subscribers quota of its own`,
      hint: 'close subscriptions no longer read, or ask the operator for a subscribers quota (PATCH /v1/tenants/{t})',
    },
  );
}
