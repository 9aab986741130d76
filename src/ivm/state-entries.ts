// Checkpoint entries of the two state shapes operators and tables share: key → row maps (one entry
// per key) and row → count multisets (one entry per distinct row, keyed by the row's encoding).
import type { Value } from '../common/types.ts';
import type { StateDelta } from './state.ts';
import { encodeOne, encodeValues } from '../common/values.ts';

export type Multiset = Map<string, { row: readonly Value[]; count: number }>;

export function multisetDelta(ms: Multiset, dirty: Set<string>, replaceAll: boolean): StateDelta {
  const upserts: (readonly [string, unknown])[] = [];
  const deletes: string[] = [];
  if (replaceAll) for (const [k, e] of ms) upserts.push([k, { r: e.row, c: e.count }]);
  else {
    for (const k of dirty) {
      const e = ms.get(k);
      if (e === undefined) deletes.push(k);
      else upserts.push([k, { r: e.row, c: e.count }]);
    }
  }
  dirty.clear();
  return { replaceAll, upserts, deletes };
}

export function loadMultiset(ms: Multiset, values: Iterable<unknown>): void {
  ms.clear();
  for (const v of values) {
    const e = v as { r: Value[]; c: number };
    ms.set(encodeValues(e.r), { row: e.r, count: e.c });
  }
}

/** Entries of a key → row map: every key, or the dirty ones (absent now: deleted). */
export function keyedDelta(
  map: Map<Value, readonly Value[]>,
  dirty: Set<Value>,
  replaceAll: boolean,
): StateDelta {
  const upserts: (readonly [string, unknown])[] = [];
  const deletes: string[] = [];
  if (replaceAll) for (const [k, row] of map) upserts.push([encodeOne(k), row]);
  else {
    for (const k of dirty) {
      const row = map.get(k);
      if (row === undefined) deletes.push(encodeOne(k));
      else upserts.push([encodeOne(k), row]);
    }
  }
  dirty.clear();
  return { replaceAll, upserts, deletes };
}
