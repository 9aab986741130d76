// Predicate subqueries of WHERE (`x [NOT] IN (SELECT ...)`, `[NOT] EXISTS (SELECT ...)`), bound as
// semi- and anti-joins of the query's FROM with the subquery. A correlated subquery is decorrelated:
// each conjunct of its WHERE that reads the outer row must be an equality of an outer-only and an
// inner-only expression, which becomes a key column of the subquery (and the matching expression
// over the outer row); what else reads the outer row is refused with NOT_SUPPORTED at its position.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { typeName } from '../common/types.ts';
import type { Expr, FromItem, Pos, SelectStmt } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { rowEntries } from '../parser/expr-builder.ts';
import type { Scope } from './bind-scope.ts';
import { bindExpr, containsAggregate } from './bind-expr.ts';
import { coerce } from './bind-coerce.ts';
import type { BoundRelation } from './bind-from.ts';
import { commonType } from './types-resolve.ts';
import { windowCalls } from './bind-window.ts';
import { NOT_IN_ROW_MAX_ENTRIES, notInRowPlan } from './bind-not-in-row.ts';
import type { LogicalPlan, SemiJoinMode } from './logical-plan.ts';

/** One predicate subquery of WHERE: a conjunct of the form the semi-join computes. */
export interface SubqueryPredicate {
  readonly mode: SemiJoinMode;
  readonly query: SelectStmt;
  /** The IN operand (absent for EXISTS). */
  readonly operand?: Expr;
  readonly pos: Pos;
}

/** How the binder of the enclosing SELECT binds the pieces of a subquery. */
export interface SubqueryContext {
  /** The scope of a subquery's FROM (its own relations, which shadow the outer ones). */
  readonly innerScope: (from: FromItem) => Scope;
  /** Binds a query nested in the enclosing one. */
  readonly bindQuery: (query: SelectStmt) => BoundRelation;
}

/** The conjuncts of an AND chain, left to right (an explicit stack: chains can be long). */
export function andConjuncts(e: Expr): Expr[] {
  const out: Expr[] = [];
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'binary' && x.op === 'and') stack.push(x.right, x.left);
    else out.push(x);
  }
  return out;
}

/** The parts joined by AND, left-deep (undefined for none). */
export function andAll(parts: readonly Expr[]): Expr | undefined {
  let out: Expr | undefined;
  for (const p of parts)
    out = out === undefined ? p : { kind: 'binary', op: 'and', left: out, right: p, pos: p.pos };
  return out;
}

/** The conjunct as a predicate subquery, NOT applied (`NOT x IN (...)` is `x NOT IN (...)`). */
function asPredicate(e: Expr): SubqueryPredicate | undefined {
  let negated = false;
  let x = e;
  while (x.kind === 'unary' && x.op === 'not') {
    negated = !negated;
    x = x.operand;
  }
  if (x.kind === 'exists') return { mode: negated ? 'notExists' : 'exists', query: x.query, pos: x.pos };
  const only = x.kind === 'inList' && x.list.length === 1 ? x.list[0] : undefined;
  if (x.kind === 'inList' && only?.kind === 'subquery') {
    const not = negated !== x.negated;
    return { mode: not ? 'notIn' : 'in', query: only.query, operand: x.operand, pos: only.pos };
  }
  return undefined;
}

/** The first subquery (scalar, IN or EXISTS) in `e`, not looking inside nested queries. */
export function findSubquery(e: Expr): Expr | undefined {
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'subquery' || x.kind === 'exists') return x;
    const children = exprChildren(x);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Expr);
  }
  return undefined;
}

/**
 * WHERE split into what binds as a plain predicate and its predicate subqueries (conjuncts of the
 * top-level AND chain).
 */
export function splitSubqueryPredicates(where: Expr): {
  readonly rest: Expr | undefined;
  readonly predicates: readonly SubqueryPredicate[];
} {
  if (findSubquery(where) === undefined) return { rest: where, predicates: [] };
  const rest: Expr[] = [];
  const predicates: SubqueryPredicate[] = [];
  for (const c of andConjuncts(where)) {
    const p = asPredicate(c);
    if (p !== undefined) predicates.push(p);
    else rest.push(c);
  }
  // A scalar subquery in the rest is bound by bind-scalar-subquery.ts; an EXISTS or IN (SELECT …)
  // under OR or inside an expression is refused with its position when the rest is bound.
  return { rest: andAll(rest), predicates };
}

/** The column references of `e`, not looking inside nested queries. */
export function columnRefs(e: Expr): Extract<Expr, { kind: 'column' }>[] {
  const out: Extract<Expr, { kind: 'column' }>[] = [];
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'column') out.push(x);
    else stack.push(...exprChildren(x));
  }
  return out;
}

const NOT_FOUND = new Set(['UNKNOWN_COLUMN', 'UNKNOWN_TABLE']);

/**
 * Refuses what a correlated subquery cannot hold once decorrelated: its correlation keys become
 * columns of one query over all outer rows, so LIMIT, OFFSET, DISTINCT ON and window functions
 * would cut or rank the rows of every key together instead of each outer row's own.
 */
export function refuseAcrossKeys(q: SelectStmt): void {
  const first = q.orderBy[0]?.pos ?? q.limit?.pos ?? q.offset?.pos ?? q.distinctOn?.[0]?.pos;
  if (first !== undefined || q.limit !== undefined || q.offset !== undefined)
    throw notSupported('ORDER BY, LIMIT, OFFSET or DISTINCT ON in a correlated subquery', first ?? q.pos);
  const window = windowCalls(q.items.flatMap((i) => (i.kind === 'expr' ? [i.expr] : [])))[0];
  if (window !== undefined) throw notSupported('a window function in a correlated subquery', window.pos);
}

/** One correlation of a subquery: `inner = outer` in its WHERE, `outer` reading only the outer row. */
export interface Correlation {
  readonly outer: Expr;
  readonly inner: Expr;
  readonly pos: Pos;
}

/**
 * A subquery's WHERE split into its correlations and the rest (`innerWhere`), with the test of
 * whether a column reference names the outer query (PostgreSQL's rule: a name resolves in the
 * subquery's own FROM first, then in the outer query). Undefined for a query that cannot be
 * correlated here (a set operation, WITH, no FROM). A conjunct reading the outer row that is not
 * such an equality is refused with NOT_SUPPORTED at its position.
 */
export function splitCorrelations(
  q: SelectStmt,
  outerScope: Scope | null,
  ctx: SubqueryContext,
):
  | {
      readonly correlations: readonly Correlation[];
      readonly innerWhere: Expr | undefined;
      readonly isOuter: (c: Extract<Expr, { kind: 'column' }>) => boolean;
    }
  | undefined {
  if (q.setOp !== undefined || q.from === undefined || (q.with !== undefined && q.with.length > 0))
    return undefined;
  const inner = ctx.innerScope(q.from);
  const isOuter = (c: Extract<Expr, { kind: 'column' }>): boolean => {
    try {
      bindExpr(c, { scope: inner, aggregateContext: 'WHERE' });
      return false;
    } catch (error) {
      if (!(error instanceof SluiceError) || !NOT_FOUND.has(error.code)) throw error;
      try {
        bindExpr(c, { scope: outerScope, aggregateContext: 'WHERE' });
      } catch {
        throw error;
      }
      return true;
    }
  };
  const readsOuter = (e: Expr): boolean => columnRefs(e).some(isOuter);
  const innerWhere: Expr[] = [];
  const correlations: Correlation[] = [];
  for (const c of q.where === undefined ? [] : andConjuncts(q.where)) {
    if (!readsOuter(c)) {
      innerWhere.push(c);
      continue;
    }
    const pair =
      c.kind === 'binary' && c.op === '='
        ? [
            { outer: c.left, inner: c.right },
            { outer: c.right, inner: c.left },
          ].find((s) => columnRefs(s.outer).every(isOuter) && !readsOuter(s.inner))
        : undefined;
    if (pair === undefined) {
      throw notSupported(
        'a correlated subquery condition other than an equality of an outer and an inner expression',
        c.pos,
        'correlate with conditions like inner_column = outer_column, joined by AND',
      );
    }
    correlations.push({ ...pair, pos: c.pos });
  }
  return { correlations, innerWhere: andAll(innerWhere), isOuter };
}

/**
 * Binds one predicate subquery over `outer` (the FROM of the enclosing query, with its scope): the
 * result is a SemiJoin passing each outer row once, or not, as the predicate says.
 */
export function bindSemiJoin(
  predicate: SubqueryPredicate,
  outer: LogicalPlan,
  outerScope: Scope | null,
  ctx: SubqueryContext,
): { readonly plan: LogicalPlan; readonly dependsOn: readonly string[] } {
  const q = predicate.query;
  const isIn = predicate.mode === 'in' || predicate.mode === 'notIn';
  // `(a, b) IN (SELECT x, y …)`: true exactly when some subquery row equals the row in every entry,
  // NULL entries matching nothing — the semi-join of EXISTS with the entries as further keys.
  const entries =
    predicate.operand === undefined ? [] : (rowEntries(predicate.operand) ?? [predicate.operand]);
  if (predicate.mode === 'notIn' && entries.length > NOT_IN_ROW_MAX_ENTRIES) {
    // The exact plan takes 3^n anti-joins (bind-not-in-row.ts): wider rows are refused.
    throw notSupported(
      `a row of more than ${NOT_IN_ROW_MAX_ENTRIES} entries NOT IN (SELECT …)`,
      predicate.pos,
      'write NOT EXISTS (SELECT 1 FROM … WHERE x = a AND y = b …) if no entry can be NULL',
    );
  }
  const rowIn = entries.length > 1;
  let correlations: readonly Correlation[] = [];
  let query = q;
  const split = splitCorrelations(q, outerScope, ctx);
  if (split !== undefined) {
    correlations = split.correlations;
    const { innerWhere, isOuter } = split;
    if (correlations.length > 0) {
      refuseAcrossKeys(q);
      const grouped =
        q.groupBy.length > 0 ||
        q.having !== undefined ||
        q.items.some((i) => i.kind === 'expr' && containsAggregate(i.expr));
      if (grouped) {
        throw notSupported('a correlated subquery with GROUP BY, HAVING or aggregates', q.pos);
      }
      for (const item of isIn ? q.items : []) {
        if (item.kind !== 'expr') continue;
        const ref = columnRefs(item.expr).find(isOuter);
        if (ref !== undefined)
          throw notSupported('an outer column in the select list of a subquery', ref.pos);
      }
      const where = innerWhere;
      const { where: _where, ...rest } = q;
      query = {
        ...rest,
        ...(where !== undefined ? { where } : {}),
        items: [
          ...correlations.map((c, i) => ({
            kind: 'expr' as const,
            expr: c.inner,
            alias: `key${i}`,
            pos: c.pos,
          })),
          ...(isIn ? q.items : []),
        ],
      };
    }
  }
  const bound = ctx.bindQuery(query);
  const width = correlations.length + (isIn ? entries.length : 0);
  if (isIn && bound.columns.length !== width) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      bound.columns.length > width ? 'subquery has too many columns' : 'subquery has too few columns',
      { position: predicate.pos },
    );
  }
  // Each key: the outer expression and the subquery's column, both cast to their common type.
  const outerExprs: { expr: Expr; pos: Pos }[] = correlations.map((c) => ({ expr: c.outer, pos: c.pos }));
  for (const expr of entries) outerExprs.push({ expr, pos: rowIn ? expr.pos : predicate.pos });
  const keys: ScalarExpr[] = [];
  const innerExprs: ScalarExpr[] = [];
  outerExprs.forEach(({ expr, pos }, i) => {
    const o = bindExpr(expr, { scope: outerScope, aggregateContext: 'WHERE' });
    const column = bound.columns[i]!;
    const t = commonType([o.type, column.type]);
    if (t === null) {
      throw new SluiceError(
        'TYPE_MISMATCH',
        `operator does not exist: ${typeName(o.type)} = ${typeName(column.type)}`,
        { position: pos },
      );
    }
    keys.push(coerce(o, t, pos));
    innerExprs.push(coerce({ kind: 'col', index: i, name: column.name, type: column.type }, t, pos));
  });
  const retyped = innerExprs.every((e, i) => e.kind === 'col' && e.type === bound.columns[i]?.type);
  const subquery: LogicalPlan =
    retyped || innerExprs.length === 0
      ? bound.plan
      : {
          kind: 'project',
          input: bound.plan,
          exprs: innerExprs,
          columns: innerExprs.map((e, i) => ({ ...bound.columns[i]!, type: e.type })),
        };
  if (predicate.mode === 'notIn' && rowIn) {
    return { plan: notInRowPlan(outer, subquery, keys, correlations.length), dependsOn: bound.dependsOn };
  }
  return {
    plan: {
      kind: 'semiJoin',
      mode: rowIn ? 'exists' : predicate.mode,
      input: outer,
      subquery,
      keys,
      correlated: rowIn ? keys.length : correlations.length,
      columns: outer.columns,
    },
    dependsOn: bound.dependsOn,
  };
}
