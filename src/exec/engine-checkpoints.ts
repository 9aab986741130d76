// An engine's state as a checkpoint and back: which state ids each table and view stores, the
// fingerprints that decide whether stored state still fits (a table's schema, a view's plan), and
// loading, which restores what fits and rebuilds from its inputs what does not.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import { typeName } from '../common/types.ts';
import type { StateDelta } from '../ivm/state.ts';
import type { Catalog, TableDef } from '../planner/catalog.ts';
import type { SourcePositions } from './api.ts';
import type { EngineCheckpoint, ObjectCheckpoint, StoredCheckpoint } from './engine-types.ts';
import { hasInexactColumns, type TableStore } from './table-store.ts';
import type { ViewGraph } from './view-graph.ts';
import type { ViewRuntime } from './view-runtime.ts';

/** The parts of an engine whose state a checkpoint holds. */
export interface CheckpointedState {
  readonly catalog: Catalog;
  readonly tables: ReadonlyMap<string, TableStore>;
  readonly views: ViewGraph;
}

function tableFingerprint(def: TableDef): string {
  const shape = def.columns.map((c) => `${c.name}:${typeName(c.type)}:${c.nullable}`).join(',');
  // For a source, what its rows mean: the topic they come from and how messages decode.
  const source =
    def.source !== undefined
      ? `|source=${def.source.connector}:${def.source.topic}:${def.source.format}`
      : '';
  // UNIQUE constraints only when there are some, so older tables keep their fingerprints.
  const unique =
    def.unique !== undefined ? `|unique=${def.unique.map((u) => u.columns.join(',')).join(';')}` : '';
  // The same for a watermark: which rows are late depends on its column and delay.
  const wm = def.watermark !== undefined ? `|wm=${def.watermark.column}:${def.watermark.delayMicros}` : '';
  // Rows of a table whose values may print differently though equal (1.5, 1.50) are keyed by their
  // text since exact row identity: a checkpoint from before holds other entry ids (and one text for
  // equal rows), so it is refused and the journal replayed, once.
  const exact = hasInexactColumns(def) ? '|rows=exact' : '';
  return createHash('sha256')
    .update(`${shape}|pk=${def.primaryKey?.join(',') ?? ''}${source}${unique}${wm}${exact}`)
    .digest('hex')
    .slice(0, 16);
}

function sharedParts(
  state: CheckpointedState,
  relation: string,
  full: boolean,
): { stateId: string; delta: StateDelta }[] {
  return state.views.shared
    .parts(relation)
    .map((p) => ({ stateId: p.stateId, delta: p.takeStateDelta(full) }));
}

/**
 * The state that changed since the last call (all of it with `full`), at `epoch`: one entry list
 * per state id. The caller stores it atomically with the epoch and positions.
 */
export function takeCheckpoint(
  state: CheckpointedState,
  epoch: number,
  positions: SourcePositions,
  clock: number,
  full: boolean,
): EngineCheckpoint {
  const objects: ObjectCheckpoint[] = [];
  for (const def of state.catalog.storedRelations()) {
    const store = state.tables.get(def.name) as TableStore;
    objects.push({
      name: def.name,
      kind: 'table',
      fingerprint: tableFingerprint(def),
      parts: [
        { stateId: store.stateId, delta: store.takeStateDelta(full) },
        ...(store.watermark !== null
          ? [{ stateId: store.watermark.stateId, delta: store.watermark.takeStateDelta(full) }]
          : []),
        ...sharedParts(state, def.name, full),
      ],
    });
  }
  for (const def of state.catalog.views()) {
    const runtime = state.views.get(def.name) as ViewRuntime;
    objects.push({
      name: def.name,
      kind: 'view',
      fingerprint: runtime.plan.fingerprint,
      parts: [
        ...runtime.statefulParts().map((p) => ({ stateId: p.stateId, delta: p.takeStateDelta(full) })),
        ...sharedParts(state, def.name, full),
      ],
    });
  }
  return { epoch, positions, clock, objects };
}

/**
 * Loads a checkpoint into an engine whose catalog was rebuilt (by replaying DDL) to the
 * checkpoint's. A view whose stored fingerprint differs from its plan (its definition or the
 * lowering changed) is rebuilt from its inputs instead of restored, and so is every view reading a
 * rebuilt one (transitively), and a shared arrangement over a rebuilt view is refilled rather than
 * loaded: a reader's fingerprint does not cover what its inputs compute, so its stored state (and
 * the arrangement's stored rows) may hold rows the rebuilt input no longer has. Returns the views
 * rebuilt. A table without compatible state is an error: the checkpoint belongs to another catalog.
 */
export function loadCheckpoint(
  state: CheckpointedState,
  checkpoint: StoredCheckpoint,
  stateTracking: boolean,
  clock: number,
): { rebuilt: string[] } {
  for (const def of state.catalog.storedRelations()) {
    const stored = checkpoint.objects.get(def.name);
    const store = state.tables.get(def.name) as TableStore;
    if (stored === undefined || stored.fingerprint !== tableFingerprint(def)) {
      throw new SluiceError('STATE_ERROR', `checkpoint has no compatible state for table "${def.name}"`, {
        hint: 'the checkpoint does not belong to this catalog; recover from the log instead',
      });
    }
    store.loadState(stored.parts.get(store.stateId) ?? []);
    store.watermark?.loadState(stored.parts.get(store.watermark.stateId) ?? []);
  }
  const rebuilt = viewsToRebuild(state, checkpoint);
  // Shared arrangements are stored with their relations; one the checkpoint lacks, or over a view
  // rebuilt below, is refilled from its relation's rows (by a view rebuilt below that needs it
  // first, after its relation was rebuilt: creation order; else at the end).
  state.views.shared.load((relation, stateId) => {
    if (rebuilt.has(relation)) return undefined;
    const entries = checkpoint.objects.get(relation)?.parts.get(stateId);
    return entries === undefined || Array.isArray(entries) ? entries : [...entries];
  });
  for (const def of state.catalog.views()) {
    const runtime = state.views.get(def.name) as ViewRuntime;
    if (!rebuilt.has(def.name)) {
      const stored = checkpoint.objects.get(def.name)?.parts;
      for (const p of runtime.statefulParts()) p.loadState(stored?.get(p.stateId) ?? []);
      continue;
    }
    const fresh = state.views.build(runtime.plan, checkpoint.epoch, clock);
    for (const part of fresh.statefulParts()) part.trackChanges(stateTracking);
    state.views.replace(def.name, fresh);
  }
  state.views.shared.refillStale(checkpoint.epoch);
  return { rebuilt: [...rebuilt] };
}

/**
 * The views (in creation order, which is topological) whose stored state does not fit: no stored
 * object, another plan fingerprint, a part missing, or an input that is itself rebuilt.
 */
function viewsToRebuild(state: CheckpointedState, checkpoint: StoredCheckpoint): Set<string> {
  const rebuilt = new Set<string>();
  for (const def of state.catalog.views()) {
    const runtime = state.views.get(def.name) as ViewRuntime;
    const stored = checkpoint.objects.get(def.name);
    const fits =
      stored !== undefined &&
      stored.fingerprint === runtime.plan.fingerprint &&
      runtime.statefulParts().every((p) => stored.parts.has(p.stateId)) &&
      !runtime.sources().some((source) => rebuilt.has(source));
    if (!fits) rebuilt.add(def.name);
  }
  return rebuilt;
}

/**
 * Builds up to `maxRows` rows that tables loaded from a checkpoint deferred (TableStore's column
 * rows, keyed on first use); true when no table has any left. Called in slices while idle.
 */
export function buildDeferredRows(tables: ReadonlyMap<string, TableStore>, maxRows: number): boolean {
  let sliced = false;
  for (const store of tables.values()) {
    if (!store.hasDeferredRows) continue;
    if (sliced) return false; // one table's slice per call
    sliced = true;
    if (!store.buildDeferredSlice(maxRows)) return false;
  }
  return true;
}
