// Checkpoint entries of the row → count multisets that Distinct, keyless arrangements and keyless
// tables keep: one entry per distinct row, keyed by the row's encoding.
import type { Value } from '../types.ts';
import type { StateDelta } from './state.ts';
import { encodeValues } from './values.ts';

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
