// The unique key of a LogicalPlan, derived node by node: a table's primary key carried through
// projections, group keys, all columns after DISTINCT, for a join the many side's key when the other
// side's key is wholly equated (PK–FK) or both keys, or none (a multiset). Keyed changelogs send
// -U/+U pairs by it.
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { Catalog, ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';
import { expandKeyColumns } from '../common/expand.ts';

/**
 * The plan's unique key. Memoized per plan object: a WITH query read twice is one object reached
 * twice, and a chain of them would otherwise be walked exponentially often.
 */
export function planKey(
  plan: LogicalPlan,
  catalog: Catalog,
  memo: Map<LogicalPlan, readonly number[] | null> = new Map(),
): readonly number[] | null {
  const known = memo.get(plan);
  if (known !== undefined || memo.has(plan)) return known ?? null;
  const key = planKeyOf(plan, catalog, memo);
  memo.set(plan, key);
  return key;
}

function planKeyOf(
  plan: LogicalPlan,
  catalog: Catalog,
  memo: Map<LogicalPlan, readonly number[] | null>,
): readonly number[] | null {
  switch (plan.kind) {
    case 'scan': {
      const o = catalog.get(plan.source);
      if (o === undefined || o.kind === 'sink') return null;
      return o.kind === 'table' ? o.primaryKey : o.key;
    }
    case 'values':
      return [];
    case 'filter':
    case 'temporalFilter':
    case 'semiJoin':
      return planKey(plan.input, catalog, memo);
    case 'project': {
      const inputKey = planKey(plan.input, catalog, memo);
      if (inputKey === null) return null;
      const out: number[] = [];
      for (const k of inputKey) {
        const i = plan.exprs.findIndex((e) => e.kind === 'col' && e.index === k);
        if (i < 0) return null;
        out.push(i);
      }
      return out;
    }
    case 'aggregate':
      return plan.groupKeys.map((_, i) => i);
    case 'distinct':
      return plan.columns.map((_, i) => i);
    case 'join':
      return joinKey(plan, planKey(plan.left, catalog, memo), planKey(plan.right, catalog, memo));
    case 'union':
      return null;
    case 'topN':
      // One row per partition (DISTINCT ON): the partition is a key. Else the input's key holds.
      if (plan.rank === 'row_number' && plan.to !== null && plan.to - plan.from <= 1) return plan.partitionBy;
      return planKey(plan.input, catalog, memo);
    case 'window':
      // Every input row once, columns appended: the input's key holds.
      return planKey(plan.input, catalog, memo);
    case 'expand': {
      // Each input row once per generated tuple: the input's key and the tuple's distinguishing
      // columns (HOP: window_start).
      const inputKey = planKey(plan.input, catalog, memo);
      const width = plan.input.columns.length;
      const appended = expandKeyColumns(plan.generator);
      return inputKey === null || appended === null ? null : [...inputKey, ...appended.map((k) => width + k)];
    }
    case 'setOp':
      // The set forms hold each distinct row once; the ALL forms are multisets.
      return plan.all ? null : plan.columns.map((_, i) => i);
  }
}

/**
 * A join's unique key: when every row of one side meets at most one row of the other (its key
 * columns are all equated with the other side's whole key, as in a join on a primary key), that
 * side's key — for an outer join, only if it is the preserved side, whose key padding never blanks;
 * otherwise both keys together (for FULL, only if padding cannot make two all-NULL keys). None when
 * either side has none.
 */
function joinKey(
  plan: Extract<LogicalPlan, { kind: 'join' }>,
  left: readonly number[] | null,
  right: readonly number[] | null,
): readonly number[] | null {
  if (left === null || right === null) return null;
  const width = plan.left.columns.length;
  const equated = (side: readonly ScalarExpr[], key: readonly number[]): boolean =>
    key.every((k) => side.some((e) => e.kind === 'col' && e.index === k));
  // Right rows meet at most one left row when the left key is wholly equated, and vice versa.
  const rightUnique = equated(plan.rightKeys, right);
  const leftUnique = equated(plan.leftKeys, left);
  const both = [...left, ...right.map((k) => k + width)];
  if (plan.joinKind === 'full') {
    // A row padded on the right has an all-NULL right key, one padded on the left an all-NULL left
    // key: two such rows collide unless one side's key has a column that is never NULL.
    const neverNull = (key: readonly number[], columns: readonly ColumnMeta[]): boolean =>
      key.some((k) => columns[k]?.nullable === false);
    return neverNull(left, plan.left.columns) || neverNull(right, plan.right.columns) ? both : null;
  }
  if (rightUnique && plan.joinKind !== 'right') return left;
  // A temporal join's output keeps the right rows each left row met on arrival: two left rows may
  // have met two versions of one right row, so the right key alone is no key of it.
  if (plan.temporal === true) return both;
  if (leftUnique && plan.joinKind !== 'left') return right.map((k) => k + width);
  return both;
}
