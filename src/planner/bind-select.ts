// Binds a SELECT to a LogicalPlan: FROM → Scan, WHERE → Filter, GROUP BY/aggregates → Aggregate and
// HAVING → Filter (bind-group-by.ts), select list (expanded by bind-select-items.ts) → Project,
// DISTINCT → Distinct; ranking window calls, DISTINCT ON and a view's ORDER BY … LIMIT → TopN
// (bind-window.ts); a set operation as a whole query in bind-set-query.ts. Also derives the output's
// unique key and rejects what cannot be maintained incrementally (ORDER BY without LIMIT in views)
// with NOT_SUPPORTED.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { CommonTableExpr, Expr, OrderItem, SelectStmt } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { T, typeName } from '../common/types.ts';
import { withSqlFunctions } from './sql-functions.ts';
import type { Catalog, ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';
import { charKeyed } from './bind-char-key.ts';
import type { Scope } from './bind-scope.ts';
import { bindFrom, type BoundRelation, type FromContext } from './bind-from.ts';
import { whereOver } from './join-conditions.ts';
import { bindSetQuery } from './bind-set-query.ts';
import { bindSemiJoin, splitSubqueryPredicates, type SubqueryContext } from './bind-subquery.ts';
import { refuseNowInView } from './bind-time.ts';
import { bindTemporalFilter, splitTemporal } from './bind-temporal.ts';
import { joinScalarSubqueries, outerReferenceError, scalarSubqueries } from './bind-scalar-subquery.ts';
import {
  absorbRankBounds,
  dropUnusedRank,
  checkDistinctOnOrder,
  distinctOnPlan,
  dropHidden,
  refuseWindowIn,
  topNOfOrdering,
  windowCalls,
} from './bind-window.ts';
import { bindWindowCalls } from './bind-window-functions.ts';
import { planKey } from './plan-key.ts';
import { TreeIds, astLabel } from './tree-ids.ts';
import { bindExpr, containsAggregate, findAggregate } from './bind-expr.ts';
import { checkCollatable } from './bind-functions.ts';
import { constInt } from './bind-row-count.ts';
import { nullable } from './bind-column-meta.ts';
import { expandGroupingSets } from './bind-grouping-sets.ts';
import { bindAggregateCall, bindGroupBy } from './bind-group-by.ts';
import { applyListedNames, expandSelectItems, uncollated, uniqueColumnNames } from './bind-select-items.ts';

export { uniqueColumnNames } from './bind-select-items.ts';

export interface OrderKey {
  readonly index: number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

export interface BoundQuery {
  readonly plan: LogicalPlan;
  readonly columns: readonly ColumnMeta[];
  readonly key: readonly number[] | null;
  readonly dependsOn: readonly string[];
  readonly orderBy: readonly OrderKey[];
  readonly limit?: number;
  readonly offset?: number;
}

export interface BindOptions {
  /** Binding a materialized view: ORDER BY … LIMIT / OFFSET become a TopN, ORDER BY alone is rejected. */
  readonly forView: boolean;
  /**
   * EXPLAIN: a top-level WHERE's clock conditions become the TemporalFilter a view would run
   * (forView does this too), instead of comparisons with the time of the statement.
   */
  readonly temporalFilters?: boolean;
  /** CREATE MATERIALIZED VIEW v (a, b, ...) column names. */
  readonly columnNames?: readonly string[];
  readonly viewName?: string;
  /** Output columns allowed after `*` is expanded (src/common/limits.ts). */
  readonly maxSelectItems?: number;
  /** Relations one FROM may join (src/common/limits.ts). */
  readonly maxFromRelations?: number;
  /** The WITH queries in scope (set by the binder for the queries nested in one). */
  readonly ctes?: ReadonlyMap<string, BoundRelation>;
  /** Binding a query nested in a materialized view's (which, like the view, needs a FROM). */
  readonly inView?: boolean;
  /**
   * Binding a nested query: its column names stay as written, repeats included (a reference to a
   * repeated one is ambiguous, as in PostgreSQL; the enclosing query names its own output).
   */
  readonly nested?: boolean;
}

/**
 * A query: its WITH queries bound first (each once, in order, each seeing the ones before it), then
 * a set operation or a plain SELECT over them.
 */
export function bindSelect(stmt: SelectStmt, catalog: Catalog, options: BindOptions): BoundQuery {
  return withSqlFunctions(catalog, () => bindQuery(stmt, catalog, options)).result;
}

function bindQuery(written: SelectStmt, catalog: Catalog, options: BindOptions): BoundQuery {
  const query = written.groupingSets !== undefined ? expandGroupingSets(written) : written;
  let stmt = query;
  // A view's temporal filters (bind-temporal.ts) leave WHERE; any other clock call is refused.
  let temporal: readonly Expr[] = [];
  if (options.forView || options.temporalFilters === true) ({ stmt, temporal } = splitTemporal(query));
  if (options.forView) {
    refuseNowInView(stmt);
    const first = stmt.orderBy[0];
    if (first !== undefined && !keepsOrdering(stmt))
      throw notSupported(
        'ORDER BY without LIMIT in a materialized view',
        first.pos,
        'order the rows when you read the view, or keep the first rows with LIMIT',
      );
  }
  let ctes = options.ctes ?? new Map<string, BoundRelation>();
  if (stmt.with !== undefined && stmt.with.length > 0) {
    const scoped = new Map(ctes);
    for (const cte of stmt.with) {
      const bound = bindSubquery(cte.query, catalog, { ...options, ctes: scoped }, 'a WITH query');
      scoped.set(cte.name, renameColumns(bound, cte));
    }
    ctes = scoped;
  }
  const scoped: BindOptions = { ...options, ctes };
  const bound =
    stmt.setOp !== undefined
      ? bindSetQuery(stmt, catalog, scoped, (q) => bindSubquery(q, catalog, scoped, 'a set operation'))
      : bindPlainSelect(stmt, catalog, scoped, temporal);
  if (!options.forView && options.nested !== true) return bound;
  // A view or nested query keeps its ORDER BY … LIMIT as a TopN (bind-window.ts).
  const plan =
    bound.limit !== undefined || bound.offset !== undefined
      ? topNOfOrdering(bound.plan, bound, bound.columns.length)
      : dropHidden(bound.plan, bound.columns.length);
  return { ...bound, plan, key: planKey(plan, catalog), orderBy: [] };
}

/** ORDER BY that a view or nested query keeps: with LIMIT/OFFSET (a TopN), or for DISTINCT ON. */
function keepsOrdering(query: SelectStmt): boolean {
  return query.limit !== undefined || query.offset !== undefined || query.distinctOn !== undefined;
}

/**
 * A query nested in another (derived table, WITH query, set operation branch): bound like a query
 * of its own, ORDER BY / LIMIT / OFFSET refused (they would be dropped by the enclosing query).
 */
export function bindSubquery(
  query: SelectStmt,
  catalog: Catalog,
  options: BindOptions,
  what: string,
): BoundRelation {
  const first = query.orderBy[0];
  if (first !== undefined && !keepsOrdering(query))
    throw notSupported(`ORDER BY without LIMIT in ${what}`, first.pos, 'order the outer query');
  const { columnNames: _names, temporalFilters: _temporal, ...rest } = options;
  const inView = options.forView || options.inView === true;
  const bound = bindSelect(query, catalog, { ...rest, forView: false, inView, nested: true });
  return { plan: bound.plan, columns: bound.columns, dependsOn: bound.dependsOn };
}

/** `WITH name (a, b) AS (...)`: the listed names replace the query's first column names. */
function renameColumns(bound: BoundRelation, cte: CommonTableExpr): BoundRelation {
  const names = cte.columns;
  if (names === undefined) return bound;
  if (names.length > bound.columns.length) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `WITH query "${cte.name}" has ${bound.columns.length} columns available but ${names.length} columns specified`,
      { position: names[bound.columns.length]!.pos },
    );
  }
  const columns = bound.columns.map((c, i) => ({ ...c, name: names[i]?.name ?? c.name }));
  const exprs: ScalarExpr[] = bound.columns.map((c, i) => ({
    kind: 'col',
    index: i,
    name: c.name,
    type: c.type,
  }));
  return { ...bound, plan: { kind: 'project', input: bound.plan, exprs, columns }, columns };
}

function bindPlainSelect(
  stmt: SelectStmt,
  catalog: Catalog,
  options: BindOptions,
  temporal: readonly Expr[] = [],
): BoundQuery {
  if (options.forView && stmt.from === undefined) {
    throw notSupported('a materialized view without FROM', stmt.pos);
  }
  if (options.inView === true && stmt.from === undefined) {
    throw notSupported('a SELECT without FROM inside a materialized view', stmt.pos);
  }
  const ctes = options.ctes ?? new Map<string, BoundRelation>();
  const context: FromContext = {
    ctes,
    bindSubquery: (query) => bindSubquery(query, catalog, options, 'a subquery in FROM'),
    inView: options.forView || options.inView === true,
  };

  // FROM, then WHERE (pushed into the FROM's joins where it can be)
  let plan: LogicalPlan;
  let scope: Scope | null;
  const dependsOn: string[] = [];
  if (stmt.from === undefined) {
    plan = { kind: 'values', columns: [] };
    scope = null;
  } else {
    const from = bindFrom(stmt.from, catalog, options.viewName, options.maxFromRelations, context);
    plan = from.plan;
    scope = from.scope;
    dependsOn.push(...from.dependsOn);
  }

  // Subqueries (bind-subquery.ts, bind-scalar-subquery.ts) read the FROM's row through `scope`.
  const subContext: SubqueryContext = {
    innerScope: (from) => bindFrom(from, catalog, options.viewName, options.maxFromRelations, context).scope,
    bindQuery: (query) => {
      try {
        return bindSubquery(query, catalog, options, 'a subquery');
      } catch (error) {
        throw outerReferenceError(error, query, scope);
      }
    },
  };
  const addDependencies = (names: readonly string[]): void => {
    for (const d of names) if (!dependsOn.includes(d)) dependsOn.push(d);
  };

  // WHERE's predicate subqueries are semi-joins over FROM, after the rest of WHERE; its scalar
  // subqueries are joined to FROM first.
  if (stmt.where !== undefined) refuseWindowIn(stmt.where, 'WHERE');
  const split = stmt.where === undefined ? undefined : splitSubqueryPredicates(stmt.where);
  const where = split?.rest;
  if (where !== undefined) {
    if (containsAggregate(where)) {
      const agg = findAggregate(where);
      throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in WHERE', {
        position: agg?.pos ?? where.pos,
      });
    }
    const scalar = joinScalarSubqueries(scalarSubqueries([where]).nodes, plan, scope, subContext);
    plan = scalar.plan;
    addDependencies(scalar.dependsOn);
    const predicate = bindExpr(where, {
      scope,
      aggregateContext: 'WHERE',
      memo: new WeakMap(scalar.values),
    });
    if (predicate.type.kind !== 'bool' && predicate.type.kind !== 'unknown') {
      throw new SluiceError(
        'TYPE_MISMATCH',
        `argument of WHERE must be type boolean, not type ${typeName(predicate.type)}`,
        {
          position: where.pos,
        },
      );
    }
    plan = absorbRankBounds(whereOver(plan, predicate));
  }
  for (const predicate of split?.predicates ?? []) {
    const semi = bindSemiJoin(predicate, plan, scope, subContext);
    plan = semi.plan;
    addDependencies(semi.dependsOn);
  }
  // The clock's conjuncts last: a TemporalFilter over everything else WHERE keeps.
  plan = bindTemporalFilter(temporal, plan, scope);

  const { items, preBound } = expandSelectItems(stmt, scope, options.maxSelectItems);

  // ORDER BY (ad-hoc queries): an output ordinal, an output name, a select-list expression, or
  // any other expression, which is computed as a hidden trailing column and dropped after sorting.
  const hidden: Expr[] = [];
  const itemsByName = new Map<string, number[]>();
  items.forEach((item, i) => {
    const same = itemsByName.get(item.name);
    if (same === undefined) itemsByName.set(item.name, [i]);
    else same.push(i);
  });
  const astIds = new TreeIds<Expr>(astLabel, exprChildren);
  let itemsById: Map<number, number> | undefined;
  const target = (item: OrderItem): { o: OrderItem; index: number } => {
    // `x COLLATE "C"` orders as x does (the collations accepted change nothing): it names the item x
    // names, as DISTINCT ON (s COLLATE "C") … ORDER BY s COLLATE "C" needs (an unmatched one is
    // computed as a hidden column, type-checked there).
    const o = uncollated(item);
    if (o.expr.kind === 'literal' && o.expr.literalType === 'integer') {
      const index = Number(o.expr.value) - 1;
      if (index < 0 || index >= items.length) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `ORDER BY position ${String(o.expr.value)} is not in select list`,
          { position: o.pos },
        );
      }
      return { o, index };
    }
    if (o.expr.kind === 'column' && o.expr.table === undefined) {
      const name = o.expr.name;
      const matches = itemsByName.get(name) ?? [];
      if (matches.length > 1)
        throw new SluiceError('AMBIGUOUS_COLUMN', `ORDER BY "${name}" is ambiguous`, { position: o.pos });
      if (matches.length === 1) return { o, index: matches[0] as number };
    }
    if (itemsById === undefined) {
      itemsById = new Map();
      for (let i = items.length - 1; i >= 0; i--)
        itemsById.set(astIds.of((items[i] as (typeof items)[number]).expr), i);
    }
    const index = itemsById.get(astIds.of(o.expr));
    if (index !== undefined) return { o, index };
    if (stmt.distinct) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        'for SELECT DISTINCT, ORDER BY expressions must appear in select list',
        { position: o.pos },
      );
    }
    hidden.push(item.expr);
    return { o: item, index: items.length + hidden.length - 1 };
  };
  const orderTargets = stmt.orderBy.map(target);
  // A DISTINCT ON expression that is not a select item names the hidden column an ORDER BY item
  // computes for the same expression, as PostgreSQL matches them (`DISTINCT ON (c) id … ORDER BY c,
  // id`); only otherwise is it a hidden column of its own. ORDER BY's own hidden columns stay one per
  // item, as the plans of existing views have them.
  const orderHidden = new Map<number, number>();
  hidden.forEach((h, k) => {
    const id = astIds.of(h);
    if (!orderHidden.has(id)) orderHidden.set(id, items.length + k);
  });
  const distinctOn = (stmt.distinctOn ?? []).map((e) => {
    const before = hidden.length;
    const t = target({ expr: e, desc: false, pos: e.pos });
    if (hidden.length === before) return t.index;
    const same = orderHidden.get(astIds.of(e));
    if (same === undefined) return t.index;
    hidden.pop();
    return same;
  });
  const calls = windowCalls([...items.map((i) => i.expr), ...hidden]);
  for (const g of stmt.groupBy) refuseWindowIn(g, 'GROUP BY');
  refuseWindowIn(stmt.having, 'HAVING');

  const grouped =
    stmt.groupBy.length > 0 || items.some((i) => containsAggregate(i.expr)) || stmt.having !== undefined;
  let exprs: ScalarExpr[];
  if (grouped && calls[0] !== undefined) {
    throw notSupported('window function in a query with GROUP BY or aggregates', calls[0].pos);
  }
  if (grouped) {
    const grouping = bindGroupBy({ stmt, items, hidden, itemsByName, plan, scope, preBound, subContext });
    plan = grouping.plan;
    addDependencies(grouping.dependsOn);
    exprs = grouping.exprs;
  } else {
    // One Window node per distinct window, appending its calls' columns (bind-window-functions.ts).
    plan = bindWindowCalls(calls, plan, scope, preBound, bindAggregateCall);
    // Scalar subqueries of the select list: joined to the rows (bind-scalar-subquery.ts).
    const scalar = joinScalarSubqueries(
      scalarSubqueries([...items.map((i) => i.expr), ...hidden]).nodes,
      plan,
      scope,
      subContext,
    );
    plan = scalar.plan;
    addDependencies(scalar.dependsOn);
    for (const [node, value] of scalar.values) preBound.set(node, value);
    exprs = [...items.map((i) => i.expr), ...hidden].map((x) =>
      bindExpr(x, { scope, aggregateContext: 'this context', memo: preBound }),
    );
  }

  // `ORDER BY x COLLATE "C"` naming a select item (or an ordinal, an integer): x needs a collation
  for (const [i, { o, index }] of orderTargets.entries()) {
    const type = o.expr.kind === 'literal' ? T.int32 : (exprs[index] as ScalarExpr).type;
    if (o !== stmt.orderBy[i]) checkCollatable(type, (stmt.orderBy[i] as OrderItem).expr.pos);
  }
  // Output names
  const names = [...items.map((i) => i.name), ...hidden.map((_, k) => `?order${k}`)];
  applyListedNames(names, options, stmt.pos);
  if (options.nested === true) {
    // names as written
  } else if (!options.forView) {
    uniqueColumnNames(names).forEach((n, i) => (names[i] = n));
  } else {
    const seen = new Map<string, number>();
    names.forEach((n, i) => {
      const prev = seen.get(n);
      if (prev !== undefined) {
        throw new SluiceError('DUPLICATE_COLUMN', `column "${n}" specified more than once`, {
          position: items[i]?.pos ?? stmt.pos,
          hint: "give the columns distinct names with AS, or list the view's column names: CREATE MATERIALIZED VIEW v (a, b, ...) AS ...",
        });
      }
      seen.set(n, i);
    });
  }
  const inputCols = plan.columns;
  const columns: ColumnMeta[] = exprs.map((e, i) => ({
    name: names[i] as string,
    type: e.type.kind === 'unknown' ? T.text : e.type,
    nullable: nullable(e, inputCols),
  }));
  const identity =
    exprs.length === inputCols.length && exprs.every((e, i) => e.kind === 'col' && e.index === i);
  if (!identity) plan = dropUnusedRank({ kind: 'project', input: plan, exprs, columns });
  else plan = { ...plan, columns } as LogicalPlan;

  if (stmt.distinct) plan = { kind: 'distinct', input: charKeyed(plan), columns: plan.columns };

  const orderBy: OrderKey[] = orderTargets.map(({ o, index }) => ({
    index,
    desc: o.desc,
    nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first',
  }));
  if (stmt.distinctOn !== undefined) {
    checkDistinctOnOrder(
      distinctOn,
      orderTargets.map(({ o, index }) => ({ index, pos: o.pos })),
    );
    plan = distinctOnPlan(plan, distinctOn, orderBy);
  }
  const limit = stmt.limit === undefined ? undefined : constInt(stmt.limit, 'LIMIT');
  const offset = stmt.offset === undefined ? undefined : constInt(stmt.offset, 'OFFSET');

  return {
    plan,
    columns: columns.slice(0, items.length),
    key: planKey(plan, catalog),
    dependsOn,
    orderBy,
    ...(limit !== undefined ? { limit } : {}),
    ...(offset !== undefined ? { offset } : {}),
  };
}
