// The vocabulary of Top-N and ranking shared by the LogicalPlan and the DataflowPlan: an ORDER BY
// key over a row's columns, the rank function, the row order they define and their printed form.
import type { Value } from './types.ts';
import { compareExact, compareValues } from './values.ts';
import { compareText } from './text-order.ts';

/** One ORDER BY key over a row's columns: PostgreSQL's order (NULLS LAST ascending by default). */
export interface SortKey {
  readonly index: number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

export type RankKind = 'row_number' | 'rank' | 'dense_rank';

/**
 * compareValues for two values that differ (`x !== y`) and are not NULL: numbers and bigints by `<`
 * inline (sorting calls this for every comparison), text by code point, objects and NaN by
 * compareValues.
 */
function compareUnequal(x: Value, y: Value): number {
  if (typeof x === 'string') return compareText(x, y as string);
  if (typeof x === 'object' || x !== x || y !== y) return compareValues(x, y);
  return (x as number | bigint) < (y as number | bigint) ? -1 : 1;
}

/** Compares two rows by `keys` only (peers compare 0). */
export function compareByKeys(
  keys: readonly SortKey[],
): (a: readonly Value[], b: readonly Value[]) => number {
  const n = keys.length;
  const indexes = keys.map((k) => k.index);
  const signs = keys.map((k) => (k.desc ? -1 : 1));
  const nullFirst = keys.map((k) => (k.nullsFirst ? -1 : 1));
  return (a, b) => {
    for (let k = 0; k < n; k++) {
      const i = indexes[k] as number;
      const x = a[i] as Value;
      const y = b[i] as Value;
      if (x === y) continue;
      if (x === null) return nullFirst[k] as number;
      if (y === null) return -(nullFirst[k] as number);
      const c = compareUnequal(x, y);
      if (c !== 0) return c * (signs[k] as number);
    }
    return 0;
  };
}

/**
 * A total order of distinct rows: by `keys`, then (among peers, whose order SQL leaves undefined)
 * by every column ascending, NULLs last — so ROW_NUMBER among ties is deterministic. Equal values of
 * other texts are distinct rows, in compareExact's order (1.5 before 1.50): DISTINCT ON shows the
 * smallest scale, whatever order the rows came in.
 */
export function compareRows(keys: readonly SortKey[]): (a: readonly Value[], b: readonly Value[]) => number {
  const byKeys = compareByKeys(keys);
  return (a, b) => {
    const c = byKeys(a, b);
    if (c !== 0) return c;
    for (let i = 0; i < a.length; i++) {
      const x = a[i] as Value;
      const y = b[i] as Value;
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? 1 : -1;
      }
      // Unequal numbers inline, text by code point; equal values (0 and -0, 1.5 and 1.50) by their text.
      if (typeof x === 'string') {
        if (x === y) continue;
        return compareText(x, y as string);
      }
      if (typeof x !== 'object' && x !== y && x === x && y === y)
        return (x as number | bigint) < (y as number | bigint) ? -1 : 1;
      const d = compareExact(x, y);
      if (d !== 0) return d;
    }
    return 0;
  };
}

/** `row_number partition [#0:a] order [#1:b desc nulls first] keep 0 < rank <= 10`, for both plan prints. */
export function printTopN(
  plan: {
    readonly partitionBy: readonly number[];
    readonly orderBy: readonly SortKey[];
    readonly rank: RankKind;
    readonly emitRank: boolean;
    readonly from: number;
    readonly to: number | null;
  },
  input: readonly { readonly name: string }[],
): string {
  const name = (i: number): string => `#${i}:${input[i]?.name ?? '?'}`;
  const order = plan.orderBy.map(
    (o) => `${name(o.index)} ${o.desc ? 'desc' : 'asc'} nulls ${o.nullsFirst ? 'first' : 'last'}`,
  );
  const keep = plan.to === null ? `rank > ${plan.from}` : `${plan.from} < rank <= ${plan.to}`;
  return (
    `${plan.rank} partition [${plan.partitionBy.map(name).join(', ')}] order [${order.join(', ')}] ` +
    `keep ${keep}${plan.emitRank ? ', rank appended' : ''}`
  );
}

/**
 * A sorted partition with new entries merged in: `kept` is in `compare` order by row, `added` is
 * sorted here; one pass, entries that compare equal keep `kept` first (Top-N and Window share it).
 */
export function mergeByRow<T extends { readonly row: readonly Value[] }>(
  kept: readonly T[],
  added: T[],
  compare: (a: readonly Value[], b: readonly Value[]) => number,
): T[] {
  added.sort((a, b) => compare(a.row, b.row));
  const merged: T[] = new Array<T>(kept.length + added.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < kept.length && j < added.length) {
    const a = kept[i] as T;
    const b = added[j] as T;
    if (compare(a.row, b.row) <= 0) {
      merged[k++] = a;
      i++;
    } else {
      merged[k++] = b;
      j++;
    }
  }
  while (i < kept.length) merged[k++] = kept[i++] as T;
  while (j < added.length) merged[k++] = added[j++] as T;
  return merged;
}
