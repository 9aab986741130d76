// A Reduce's checkpoint (moved out of reduce-op.ts): each group serialised by its key (row count,
// aggregate states, output row, kept row error, key texts), the delta of the groups changed since
// the last export, and the groups loaded back on restart.
import { SluiceError, knownErrorCode } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import type { StateDelta } from '../state.ts';
import { NO_SLOT } from '../group-index.ts';
import type { AggColumn, GroupRecords } from './aggregates.ts';
import type { GroupKeyTexts } from './group-key-texts.ts';

interface SerializedGroup {
  readonly k: Value[];
  readonly c: number;
  readonly a: unknown[];
  readonly o: Value[] | null;
  readonly e: { code: string; message: string } | null;
  /** The group's key texts with their row counts (only for keys that may print differently). */
  readonly t?: [Value[], number][];
}

/** What the checkpoint reads and rebuilds of a Reduce's groups (ReduceOp's internals). */
export interface CheckpointGroups {
  readonly records: GroupRecords;
  readonly columns: readonly AggColumn[];
  readonly keyTexts: GroupKeyTexts | null;
  readonly errorsBySlot: Map<number, unknown>;
  keyAt(slot: number): readonly Value[];
  outRow(slot: number): Value[] | null;
  slots(): Iterable<number>;
  /** The slot of the group with this key, or NO_SLOT. */
  slotOf(key: readonly Value[]): number;
  /** A new group's slot. */
  allocate(key: readonly Value[]): number;
  release(slot: number): void;
  setOut(slot: number, row: readonly Value[] | null): void;
}

function serialize(g: CheckpointGroups, slot: number): SerializedGroup {
  const error = g.errorsBySlot.get(slot);
  return {
    k: [...g.keyAt(slot)],
    c: g.records.data[slot * g.records.stride] as number,
    a: g.columns.map((c) => c.serialize(slot)),
    o: g.outRow(slot),
    ...(g.keyTexts !== null ? { t: g.keyTexts.entries(slot) } : {}),
    e:
      error === undefined
        ? null
        : { code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR', message: errorText(error) },
  };
}

/** Every group (`replaceAll`), or the groups of `dirty` (by their encoded key): upserts and deletes. */
export function groupsDelta(
  g: CheckpointGroups,
  replaceAll: boolean,
  dirty: ReadonlyMap<string, readonly Value[]>,
): StateDelta {
  const upserts: (readonly [string, unknown])[] = [];
  const deletes: string[] = [];
  if (replaceAll) {
    for (const slot of g.slots()) upserts.push([encodeValues(g.keyAt(slot)), serialize(g, slot)]);
  } else {
    for (const [k, key] of dirty) {
      const slot = g.slotOf(key);
      if (slot === NO_SLOT) deletes.push(k);
      else upserts.push([k, serialize(g, slot)]);
    }
  }
  return { replaceAll, upserts, deletes };
}

/** Replaces every group with the serialised ones. */
export function loadGroups(g: CheckpointGroups, values: Iterable<unknown>): void {
  for (const slot of [...g.slots()]) g.release(slot);
  for (const v of values) {
    const d = v as SerializedGroup;
    const slot = g.allocate(d.k);
    g.records.data[slot * g.records.stride] = d.c;
    g.keyTexts?.load(slot, d.t ?? [[d.k, d.c]]);
    d.a.forEach((a, i) => (g.columns[i] as AggColumn).deserialize(slot, a));
    g.setOut(slot, d.o);
    if (d.e !== null) {
      g.errorsBySlot.set(slot, new SluiceError(knownErrorCode(d.e.code), d.e.message));
    }
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
