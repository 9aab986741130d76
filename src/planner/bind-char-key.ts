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
import { call, fold, isConst } from './bind-coerce.ts';
import type { LogicalPlan } from './logical-plan.ts';

/**
 * `e` in its one spelling where `type` (its column's, e's own by default) is char (see above); any
 * other value as it is. A set operation's column may be bpchar where a branch's value is char(n).
 */
export function charKey(e: ScalarExpr, type: SqlType = e.type): ScalarExpr {
  if (type.kind !== 'text' || type.fixed !== true) return e;
  // → text drops the trailing spaces; typed bpchar again it keeps the value
  const trimmed: ScalarExpr = { kind: 'cast', operand: e, type: T.text };
  const asBpchar: ScalarExpr = { kind: 'cast', operand: trimmed, type: T.bpchar };
  if (type.maxLength === undefined) return isConst(e) ? fold(asBpchar) : asBpchar;
  // char(n) padded to n; a longer value (a string constant read as char(n) beside it, which
  // PostgreSQL keeps whole: COALESCE(c, 'abcdef')) is kept whole, never cut to n, which would
  // make it one group with its first n characters
  const fits = call('le', [call('length', [trimmed], T.int32), constant(type.maxLength)], T.bool);
  const key: ScalarExpr = {
    kind: 'case',
    whens: [{ when: fits, then: { kind: 'cast', operand: trimmed, type } }],
    else: asBpchar,
    type,
  };
  return isConst(e) ? fold(key) : key;
}

function constant(n: number): ScalarExpr {
  return { kind: 'const', value: n, type: T.int32 };
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
