// The vocabulary of Top-N and ranking shared by the LogicalPlan and the DataflowPlan: an ORDER BY
// key over a row's columns, the rank function, the row order they define and their printed form.
import type { Value } from './types.ts';
import { compareExact, compareValues } from './values.ts';

/** One ORDER BY key over a row's columns: PostgreSQL's order (NULLS LAST ascending by default). */
export interface SortKey {
  readonly index: number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

export type RankKind = 'row_number' | 'rank' | 'dense_rank';

/** Compares two rows by `keys` only (peers compare 0). */
export function compareByKeys(
  keys: readonly SortKey[],
): (a: readonly Value[], b: readonly Value[]) => number {
  return (a, b) => {
    for (const o of keys) {
      const x = a[o.index] as Value;
      const y = b[o.index] as Value;
      if (x === null || y === null) {
        if (x === y) continue;
        return (x === null) === o.nullsFirst ? -1 : 1;
      }
      const c = compareValues(x, y);
      if (c !== 0) return o.desc ? -c : c;
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
      const d = compareExact(a[i] as Value, b[i] as Value);
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
