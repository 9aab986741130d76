// char values where rows are matched as equal: GROUP BY keys, SELECT DISTINCT and the set operations
// that match rows (UNION, INTERSECT, EXCEPT; not UNION ALL). PostgreSQL compares char (bpchar) values
// without their trailing spaces there, so 'ab   ' and 'ab  ' are one group; which of the spellings the
// group then shows is not fixed in PostgreSQL (the first row its hash table saw). Rows here are keyed
// by their exact values, so each char value is first brought to one spelling, the same whatever the
// order of the writes: char(n) padded to n (as every char(n) value PostgreSQL stores is; a string
// constant read as char(n) is kept unpadded until here), char without a length (bpchar) without its
// trailing spaces. Both equal, as bpchar compares, every spelling the group holds.
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, type SqlType } from '../common/types.ts';
import { fold, isConst } from './bind-coerce.ts';
import type { LogicalPlan } from './logical-plan.ts';

/**
 * `e` in its one spelling where `type` (its column's, e's own by default) is char (see above); any
 * other value as it is. A set operation's column may be bpchar where a branch's value is char(n).
 */
export function charKey(e: ScalarExpr, type: SqlType = e.type): ScalarExpr {
  if (type.kind !== 'text' || type.fixed !== true) return e;
  // char(n) → char(n) pads to n; bpchar → text drops the trailing spaces, typed bpchar again
  const key: ScalarExpr =
    type.maxLength !== undefined
      ? { kind: 'cast', operand: e, type }
      : { kind: 'cast', operand: { kind: 'cast', operand: e, type: T.text }, type };
  return isConst(e) ? fold(key) : key;
}

/** Whether any of `plan`'s columns is char (with or without a length). */
export function hasCharColumn(plan: LogicalPlan): boolean {
  return plan.columns.some((c) => c.type.kind === 'text' && c.type.fixed === true);
}

/** `plan` with its char columns in their one spelling (a projection over it, or its own made so). */
export function charKeyed(plan: LogicalPlan): LogicalPlan {
  if (!hasCharColumn(plan)) return plan;
  const types = plan.columns.map((c) => c.type);
  if (plan.kind === 'project') return { ...plan, exprs: plan.exprs.map((e, i) => charKey(e, types[i])) };
  const exprs = plan.columns.map((c, index): ScalarExpr =>
    charKey({ kind: 'col', index, name: c.name, type: c.type }, c.type),
  );
  return { kind: 'project', input: plan, exprs, columns: plan.columns };
}
