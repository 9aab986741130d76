// ARRAY_AGG's results. Each row's value arrives wrapped as a one-element array (the binder's
// array_make), so a NULL is a multiset value like any other. Without ORDER BY the group's values
// are listed in the element type's order (NULLs last; equal values that print differently, 1.5 and
// 1.50, by their text): a function of the group's multiset, whatever order rows came in.
import type { Value } from '../../common/types.ts';
import { SqlArray } from '../../common/array/sql-array.ts';
import { compareValues, exactKey } from '../../common/values.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import type { Arrangement } from '../arrangement.ts';

/** The multiset's (sorted) wrapped values as one array, each held n times repeated n times. */
export function arrayAgg(
  spec: AggregateSpec,
  sorted: readonly Value[],
  counts: Arrangement<number, Value, Value>,
  slot: number,
): SqlArray {
  const rows = counts.get(slot)?.rows;
  const items: Value[] = [];
  let previous: Value | undefined;
  for (const v of sorted) {
    const element = (v as SqlArray).items[0] as Value;
    if (spec.distinct) {
      // one of equal values (1.5 and 1.50: the first in text order), NULL once
      if (previous === undefined || compareValues(previous, v) !== 0) items.push(element);
      previous = v;
      continue;
    }
    const n = rows?.get(exactKey(v))?.count ?? 0;
    for (let i = 0; i < n; i++) items.push(element);
  }
  return new SqlArray(items);
}

/** With ORDER BY: the entries' wrapped values in the entries' order, each `count` times (once with DISTINCT). */
export function orderedArrayAgg(
  entries: readonly { readonly tuple: readonly Value[]; readonly count: number }[],
  distinct: boolean,
): SqlArray {
  const items: Value[] = [];
  for (const e of entries) {
    const element = (e.tuple[0] as SqlArray).items[0] as Value;
    const n = distinct ? 1 : e.count;
    for (let i = 0; i < n; i++) items.push(element);
  }
  return new SqlArray(items);
}
