// `(a1, …, an) NOT IN (SELECT x1, …, xn …)` as a chain of anti-joins, exact under SQL's NULLs.
//
// PostgreSQL compares the row with each subquery row: FALSE when some pair of non-NULL entries
// differs, TRUE when every pair is equal and non-NULL, else NULL; NOT IN is TRUE (the row passes
// WHERE) exactly when every comparison is FALSE. So an outer row passes exactly when no subquery row
// is "compatible" with it: equal in every position where both entries are non-NULL. Which positions
// those are depends on where each side holds NULLs, so the predicate is split by the two NULL masks:
// for an outer row whose NULL entries are Q and the subquery rows whose NULL entries among the
// other positions are P, compatibility is equality on the positions outside P ∪ Q — an equality
// key, which an anti-join (NOT EXISTS with correlation keys) counts exactly.
//
// One anti-join per (Q, P), P ⊆ complement of Q: 3^n of them. Each one's subquery side keeps only
// the rows with exactly P NULL among those positions; its outer key starts with a tag that is 0 for
// an outer row whose mask is Q and NULL otherwise, and a NULL key passes an anti-join without being
// held, so each outer row is held by, and flipped through, only its own mask's 2^(n-|Q|) anti-joins.
// The cost beside the plain anti-join of (Q = ∅, P = ∅): the subquery side is counted once per
// check (3^n counts of its rows, each row counted in the checks of the masks it fits), and a subquery
// row with NULLs flips the outer rows that agree with it on its non-NULL entries (with every entry
// NULL: every outer row — as one NULL does for a one-column NOT IN).
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T } from '../common/types.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

/** The widest row NOT IN planned: 3^4 = 81 anti-joins. */
export const NOT_IN_ROW_MAX_ENTRIES = 4;

const TAG = 0;

function isNull(e: ScalarExpr, negated: boolean): ScalarExpr {
  return { kind: 'call', fn: negated ? 'is_not_null' : 'is_null', args: [e], type: T.bool };
}

function allOf(args: readonly ScalarExpr[]): ScalarExpr | undefined {
  if (args.length <= 1) return args[0];
  return { kind: 'and', args, type: T.bool };
}

/** The positions 0..n-1 whose bit is set in `mask`. */
function positions(mask: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) if ((mask & (1 << i)) !== 0) out.push(i);
  return out;
}

/**
 * The anti-join chain over `outer`. `subquery`'s columns are the `correlated` correlation keys, then
 * the n entries' values; `keys` are the outer expressions that meet them, in the same order, both
 * already cast to their common types.
 */
export function notInRowPlan(
  outer: LogicalPlan,
  subquery: LogicalPlan,
  keys: readonly ScalarExpr[],
  correlated: number,
): LogicalPlan {
  const n = keys.length - correlated;
  const full = (1 << n) - 1;
  const entry = (i: number): ScalarExpr => keys[correlated + i] as ScalarExpr;
  const inner = (i: number): ScalarExpr => {
    const c = subquery.columns[correlated + i] as ColumnMeta;
    return { kind: 'col', index: correlated + i, name: c.name, type: c.type };
  };
  const tagMeta: ColumnMeta = { name: 'null_mask', type: T.int32, nullable: false };
  const tagConst: ScalarExpr = { kind: 'const', value: TAG, type: T.int32 };
  let plan = outer;
  for (let outerNulls = 0; outerNulls <= full; outerNulls++) {
    const outerMask = allOf(
      Array.from({ length: n }, (_, i) => isNull(entry(i), (outerNulls & (1 << i)) === 0)),
    ) as ScalarExpr;
    const tag: ScalarExpr = {
      kind: 'case',
      whens: [{ when: outerMask, then: tagConst }],
      else: null,
      type: T.int32,
    };
    const open = full & ~outerNulls;
    // Every subset of the outer row's non-NULL positions, as the subquery rows' NULLs among them.
    for (let innerNulls = open; ; innerNulls = (innerNulls - 1) & open) {
      const compared = positions(open & ~innerNulls, n);
      const conditions = [
        ...positions(innerNulls, n).map((i) => isNull(inner(i), false)),
        ...compared.map((i) => isNull(inner(i), true)),
      ];
      const predicate = allOf(conditions);
      const filtered: LogicalPlan =
        predicate === undefined
          ? subquery
          : { kind: 'filter', input: subquery, predicate, columns: subquery.columns };
      const correlation = subquery.columns.slice(0, correlated);
      const exprs: ScalarExpr[] = [
        ...correlation.map((c, i): ScalarExpr => ({ kind: 'col', index: i, name: c.name, type: c.type })),
        tagConst,
        ...compared.map(inner),
      ];
      const checked: LogicalPlan = {
        kind: 'project',
        input: filtered,
        exprs,
        columns: [
          ...correlation,
          tagMeta,
          ...compared.map((i) => ({ ...(subquery.columns[correlated + i] as ColumnMeta), nullable: false })),
        ],
      };
      plan = {
        kind: 'semiJoin',
        mode: 'notExists',
        input: plan,
        subquery: checked,
        keys: [...keys.slice(0, correlated), tag, ...compared.map(entry)],
        correlated: correlated + 1 + compared.length,
        columns: outer.columns,
      };
      if (innerNulls === 0) break;
    }
  }
  return plan;
}
