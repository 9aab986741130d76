// Binds a SELECT to a LogicalPlan: FROM → Scan, WHERE → Filter, GROUP BY/aggregates → Aggregate,
// HAVING → Filter, select list → Project, DISTINCT → Distinct; ranking window calls, DISTINCT ON and a
// view's ORDER BY … LIMIT → TopN (bind-window.ts). Also derives the output's unique key and rejects
// what cannot be maintained incrementally (ORDER BY without LIMIT in views) with NOT_SUPPORTED.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { CommonTableExpr, Expr, OrderItem, Pos, SelectStmt } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { DEFAULT_SQL_LIMITS } from '../common/limits.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import { withSqlFunctions } from './sql-functions.ts';
import type { Catalog, ColumnMeta } from './catalog.ts';
import type { AggregateCall, AggregateFn, LogicalPlan } from './logical-plan.ts';
import { printAggregate } from './logical-plan.ts';
import type { Scope, VisibleColumn } from './bind-expr.ts';
import { bindFrom, whereOver, type BoundRelation, type FromContext } from './bind-from.ts';
import { bindSetOperation } from './bind-set-op.ts';
import { bindSemiJoin, splitSubqueryPredicates, type SubqueryContext } from './bind-subquery.ts';
import { filteredAggregate } from './bind-filter.ts';
import { bindAggregateOrder } from './bind-aggregate-order.ts';
import { MORE_AGGREGATES, bindMoreAggregate } from './bind-aggregate-more.ts';
import { positionalCall } from './bind-named-args.ts';
import { refuseNowInView } from './bind-time.ts';
import { bindTemporalFilter, splitTemporal } from './bind-temporal.ts';
import {
  SubqueriesAfterAggregate,
  joinScalarSubqueries,
  outerReferenceError,
  scalarSubqueries,
} from './bind-scalar-subquery.ts';
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
import { TreeIds, astLabel, scalarLabel } from './tree-ids.ts';
import { scalarChildren } from '../common/scalar-expr.ts';
import {
  bindExpr,
  containsAggregate,
  defaultColumnName,
  findAggregate,
  isAggregateCall,
  nullable,
} from './bind-expr.ts';

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
 * A select item for one column of a join's `*`: a relation's own column as a qualified reference;
 * a merged USING column (which no qualifier names) as a name whose binding is recorded in `preBound`.
 */
function visibleColumnExpr(
  v: VisibleColumn,
  scope: Scope,
  pos: Pos,
  preBound: WeakMap<Expr, ScalarExpr>,
): Expr {
  const e = v.expr;
  if (e.kind === 'col') {
    const r = scope.relations?.find((x) => e.index >= x.offset && e.index < x.offset + x.columns.length);
    if (r !== undefined && r.columns[e.index - r.offset]?.name === v.name)
      return { kind: 'column', table: r.name, name: v.name, pos };
  }
  const node: Expr = { kind: 'column', name: v.name, pos };
  preBound.set(node, e);
  return node;
}

/** The columns `*` stands for (and unqualified names can reach). */
function starColumns(scope: Scope): readonly { readonly name: string }[] {
  return scope.visible ?? scope.columns;
}

function constInt(e: Expr, what: string): number {
  const b = bindExpr(e, { scope: null, aggregateContext: what });
  if (b.kind !== 'const' || b.type.kind !== 'int' || b.value === null || Number(b.value) < 0) {
    throw new SluiceError('TYPE_MISMATCH', `argument of ${what} must be a non-negative integer constant`, {
      position: e.pos,
    });
  }
  return Number(b.value);
}

/**
 * A query: its WITH queries bound first (each once, in order, each seeing the ones before it), then
 * a set operation or a plain SELECT over them.
 */
export function bindSelect(stmt: SelectStmt, catalog: Catalog, options: BindOptions): BoundQuery {
  return withSqlFunctions(catalog, () => bindQuery(stmt, catalog, options)).result;
}

function bindQuery(query: SelectStmt, catalog: Catalog, options: BindOptions): BoundQuery {
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

/**
 * A set operation as a whole query: its columns named as the view lists them, and ORDER BY (an
 * output column's name or ordinal, as PostgreSQL allows after a set operation), LIMIT and OFFSET.
 */
function bindSetQuery(
  stmt: SelectStmt,
  catalog: Catalog,
  options: BindOptions,
  bindBranch: (query: SelectStmt) => BoundRelation,
): BoundQuery {
  const bound = bindSetOperation(stmt, bindBranch);
  const names = bound.columns.map((c) => c.name);
  if (options.columnNames !== undefined) {
    if (options.columnNames.length > names.length) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        `view "${options.viewName ?? ''}" has ${names.length} columns but ${options.columnNames.length} column names were given`,
        { position: stmt.pos },
      );
    }
    options.columnNames.forEach((n, i) => (names[i] = n));
  }
  if (options.forView) {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n)) {
        throw new SluiceError('DUPLICATE_COLUMN', `column "${n}" specified more than once`, {
          position: stmt.pos,
          hint: "give the first branch's columns distinct names with AS, or list the view's column names",
        });
      }
      seen.add(n);
    }
  } else uniqueColumnNames(names).forEach((n, i) => (names[i] = n));
  const columns = bound.columns.map((c, i) => ({ ...c, name: names[i] as string }));
  const plan = { ...bound.plan, columns } as LogicalPlan;
  const orderBy: OrderKey[] = stmt.orderBy.map((o) => {
    let index = -1;
    if (o.expr.kind === 'literal' && o.expr.literalType === 'integer') {
      index = Number(o.expr.value) - 1;
      if (index < 0 || index >= columns.length) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `ORDER BY position ${String(o.expr.value)} is not in select list`,
          { position: o.pos },
        );
      }
    } else if (o.expr.kind === 'column' && o.expr.table === undefined) {
      const name = o.expr.name;
      const matches = columns.flatMap((c, i) => (c.name === name ? [i] : []));
      if (matches.length > 1)
        throw new SluiceError('AMBIGUOUS_COLUMN', `ORDER BY "${name}" is ambiguous`, { position: o.pos });
      index = matches[0] ?? -1;
    }
    if (index < 0) {
      throw new SluiceError('INVALID_DEFINITION', 'invalid UNION/INTERSECT/EXCEPT ORDER BY clause', {
        position: o.pos,
        detail: 'only result column names or positions can be used, not expressions or functions',
      });
    }
    return { index, desc: o.desc, nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first' };
  });
  const limit = stmt.limit === undefined ? undefined : constInt(stmt.limit, 'LIMIT');
  const offset = stmt.offset === undefined ? undefined : constInt(stmt.offset, 'OFFSET');
  return {
    plan,
    columns,
    key: planKey(plan, catalog),
    dependsOn: bound.dependsOn,
    orderBy,
    ...(limit !== undefined ? { limit } : {}),
    ...(offset !== undefined ? { offset } : {}),
  };
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

  // Expand the select list. `*` over a USING join stands for merged columns no name can qualify:
  // their expansion is bound here, and every later binding of the select list sees it (memo).
  const preBound = new WeakMap<Expr, ScalarExpr>();
  const maxItems = options.maxSelectItems ?? DEFAULT_SQL_LIMITS.maxSelectItems;
  const items: { expr: Expr; name: string; pos: Pos }[] = [];
  for (const item of stmt.items) {
    if (
      items.length >= maxItems ||
      (item.kind === 'star' && items.length + (scope === null ? 0 : starColumns(scope).length) > maxItems)
    ) {
      throw new SluiceError('TOO_MANY_ITEMS', `select list has more than ${maxItems} entries`, {
        position: item.pos,
        ...(item.kind === 'star' ? { detail: 'counting the columns that * stands for' } : {}),
      });
    }
    if (item.kind === 'star') {
      if (scope === null)
        throw new SluiceError('INVALID_DEFINITION', 'SELECT * with no tables specified is not valid', {
          position: item.pos,
        });
      if (item.table !== undefined && !scope.relationNames.includes(item.table)) {
        throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${item.table}"`, {
          position: item.pos,
        });
      }
      const relation =
        item.table === undefined ? undefined : scope.relations?.find((r) => r.name === item.table);
      if (relation !== undefined) {
        for (const c of relation.columns)
          items.push({
            expr: { kind: 'column', table: relation.name, name: c.name, pos: item.pos },
            name: c.name,
            pos: item.pos,
          });
      } else if (scope.visible !== undefined) {
        // An unqualified * over a join: each column bound as it is, USING columns once.
        for (const v of scope.visible) {
          items.push({ expr: visibleColumnExpr(v, scope, item.pos, preBound), name: v.name, pos: item.pos });
        }
      } else {
        // Bound by position: a derived table may repeat a column name, which `*` still reaches.
        scope.columns.forEach((c, index) => {
          const expr: Expr = { kind: 'column', name: c.name, pos: item.pos };
          preBound.set(expr, { kind: 'col', index, name: c.name, type: c.type });
          items.push({ expr, name: c.name, pos: item.pos });
        });
      }
    } else {
      items.push({ expr: item.expr, name: item.alias ?? defaultColumnName(item.expr), pos: item.pos });
    }
  }

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
  const target = (o: OrderItem): { o: OrderItem; index: number } => {
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
    hidden.push(o.expr);
    return { o, index: items.length + hidden.length - 1 };
  };
  const orderTargets = stmt.orderBy.map(target);
  const distinctOn = (stmt.distinctOn ?? []).map((e) => target({ expr: e, desc: false, pos: e.pos }).index);
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
    const inputScope = scope;
    const inputColumns = plan.columns;
    // GROUP BY: an ordinal or an output alias refers to a select item; otherwise an input expression.
    const groupKeys: ScalarExpr[] = [];
    const scalarIds = new TreeIds<ScalarExpr>(scalarLabel, scalarChildren);
    const keyIndex = new Map<number, number>();
    const inputNames = new Set(inputScope === null ? [] : starColumns(inputScope).map((c) => c.name));
    for (const g of stmt.groupBy) {
      let expr: Expr = g;
      if (g.kind === 'literal' && g.literalType === 'integer') {
        const item = items[Number(g.value) - 1];
        if (item === undefined) {
          throw new SluiceError(
            'INVALID_DEFINITION',
            `GROUP BY position ${String(g.value)} is not in select list`,
            { position: g.pos },
          );
        }
        expr = item.expr;
      } else if (g.kind === 'column' && g.table === undefined && !inputNames.has(g.name)) {
        const first = itemsByName.get(g.name)?.[0];
        if (first !== undefined) expr = (items[first] as (typeof items)[number]).expr;
      }
      if (containsAggregate(expr)) {
        throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in GROUP BY', {
          position: g.pos,
        });
      }
      const bound = bindExpr(expr, { scope: inputScope, aggregateContext: 'GROUP BY', memo: preBound });
      const id = scalarIds.of(bound);
      if (!keyIndex.has(id)) {
        keyIndex.set(id, groupKeys.length);
        groupKeys.push(bound);
      }
    }
    const aggregates: AggregateCall[] = [];
    const aggIndex = new Map<string, number>();
    const keyColumns: ColumnMeta[] = groupKeys.map((k, i) => ({
      name: k.kind === 'col' ? k.name : `key${i}`,
      type: k.type,
      nullable: nullable(k, inputColumns),
    }));
    const aggOutputIndex = (): number => groupKeys.length + aggregates.length;
    // Every node of the select list and HAVING is tried against the group keys: bound once in a
    // memo and compared by structural id, so trying a node and then each of its subtrees stays
    // linear in the size of the expression (not in its size times its depth).
    const plain = { scope: inputScope, aggregateContext: 'GROUP BY', memo: preBound };
    const aggregateIn = new WeakMap<Expr, boolean>();
    const hasAggregate = (root: Expr): boolean => {
      // Bottom-up with an explicit stack; every node is looked at once however often it is asked.
      const stack: { node: Expr; expanded: boolean }[] = [{ node: root, expanded: false }];
      for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
        if (aggregateIn.has(top.node)) stack.pop();
        else if (isAggregateCall(top.node)) {
          aggregateIn.set(top.node, true);
          stack.pop();
        } else if (!top.expanded) {
          top.expanded = true;
          for (const c of exprChildren(top.node))
            if (!aggregateIn.has(c)) stack.push({ node: c, expanded: false });
        } else {
          stack.pop();
          aggregateIn.set(
            top.node,
            exprChildren(top.node).some((c) => aggregateIn.get(c) === true),
          );
        }
      }
      return aggregateIn.get(root) === true;
    };
    // An AND/OR node can only be a key when a key is such a chain with as many operands.
    const chainKeys = new Set<string>();
    for (const k of groupKeys)
      if (k.kind === 'and' || k.kind === 'or') chainKeys.add(`${k.kind}:${k.args.length}`);
    const chainCounts = new WeakMap<Expr, number>();
    // Scalar subqueries of the select list and HAVING: joined to the groups (bind-scalar-subquery.ts).
    const after = new SubqueriesAfterAggregate(
      [...items.map((i) => i.expr), ...hidden, stmt.having],
      inputScope,
      subContext,
      (e) => bindExpr(e, { scope: null, intercept }),
    );
    const intercept = (e: Expr): ScalarExpr | undefined => {
      if (isAggregateCall(e) && e.kind === 'function') {
        const call = bindAggregate(e, inputScope);
        const printed = printAggregate(call);
        let idx = aggIndex.get(printed);
        if (idx === undefined) {
          idx = aggOutputIndex();
          aggIndex.set(printed, idx);
          aggregates.push(call);
        }
        return { kind: 'col', index: idx, name: call.column.name, type: call.column.type };
      }
      const sub = after.intercept(e);
      if (sub !== undefined) return sub;
      if (e.kind === 'literal' || after.above.has(e)) return undefined;
      if (!hasAggregate(e)) {
        if (e.kind === 'binary' && (e.op === 'and' || e.op === 'or')) {
          const count = flatCount(e, e.op, (x) => bindExpr(x, plain), chainCounts);
          if (!chainKeys.has(`${e.op}:${count}`)) return undefined;
        }
        const bound = bindExpr(e, plain);
        const idx = keyIndex.get(scalarIds.of(bound));
        if (idx !== undefined) {
          const k = groupKeys[idx] as ScalarExpr;
          return { kind: 'col', index: idx, name: keyColumns[idx]?.name ?? `key${idx}`, type: k.type };
        }
        if (bound.kind === 'const') return bound;
        if (e.kind === 'column') {
          throw new SluiceError(
            'GROUPING_ERROR',
            `column "${e.name}" must appear in the GROUP BY clause or be used in an aggregate function`,
            {
              position: e.pos,
            },
          );
        }
      }
      return undefined;
    };
    const havingGroups =
      stmt.having === undefined ? undefined : bindExpr(stmt.having, { scope: null, intercept });
    const itemGroups = [...items.map((i) => i.expr), ...hidden].map((x) =>
      bindExpr(x, { scope: null, intercept }),
    );
    const aggColumns = [...keyColumns, ...aggregates.map((a) => a.column)];
    plan = { kind: 'aggregate', input: plan, groupKeys, aggregates, columns: aggColumns };
    const joined = after.join(plan);
    plan = joined.plan;
    addDependencies(joined.dependsOn);
    const havingBound = havingGroups === undefined ? undefined : after.fix(havingGroups);
    const itemExprs = itemGroups.map((x) => after.fix(x));
    if (havingBound !== undefined) {
      if (havingBound.type.kind !== 'bool') {
        throw new SluiceError(
          'TYPE_MISMATCH',
          `argument of HAVING must be type boolean, not type ${typeName(havingBound.type)}`,
          {
            position: (stmt.having as Expr).pos,
          },
        );
      }
      plan = { kind: 'filter', input: plan, predicate: havingBound, columns: plan.columns };
    }
    exprs = itemExprs;
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

  // Output names
  const names = [...items.map((i) => i.name), ...hidden.map((_, k) => `?order${k}`)];
  if (options.columnNames !== undefined) {
    if (options.columnNames.length > names.length) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        `view "${options.viewName ?? ''}" has ${names.length} columns but ${options.columnNames.length} column names were given`,
        {
          position: stmt.pos,
        },
      );
    }
    options.columnNames.forEach((n, i) => (names[i] = n));
  }
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

  if (stmt.distinct) plan = { kind: 'distinct', input: plan, columns: plan.columns };

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

/**
 * Result rows are JSON objects, so a repeated name gets a suffix: count, count_2, count_3, ... Each
 * base name remembers the next suffix to try (names are only ever added, so every smaller suffix is
 * still taken): linear in the number of names, however many share one.
 */
export function uniqueColumnNames(names: readonly string[]): string[] {
  const used = new Set<string>();
  const nextSuffix = new Map<string, number>();
  return names.map((n) => {
    let name = n;
    if (used.has(name)) {
      let k = nextSuffix.get(n) ?? 2;
      for (name = `${n}_${k}`; used.has(name); name = `${n}_${k}`) k++;
      nextSuffix.set(n, k + 1);
    }
    used.add(name);
    return name;
  });
}

/**
 * How many operands the bound chain of `op` rooted at `e` has once flattened (a bound operand of
 * the same kind contributes its own operands), remembered per node: asking for every node of a
 * chain costs one pass over it. `bind` binds an operand (memoized by the caller).
 */
function flatCount(
  e: Expr,
  op: 'and' | 'or',
  bind: (x: Expr) => ScalarExpr,
  memo: WeakMap<Expr, number>,
): number {
  const operandCount = (x: Expr): number => {
    const b = bind(x);
    return b.kind === op ? b.args.length : 1;
  };
  const spine: Extract<Expr, { kind: 'binary' }>[] = [];
  let x: Expr = e;
  while (x.kind === 'binary' && x.op === op && !memo.has(x)) {
    spine.push(x);
    x = x.left;
  }
  let count = x.kind === 'binary' && x.op === op ? (memo.get(x) as number) : operandCount(x);
  for (let i = spine.length - 1; i >= 0; i--) {
    const node = spine[i] as Extract<Expr, { kind: 'binary' }>;
    count += operandCount(node.right);
    memo.set(node, count);
  }
  return count;
}

function bindAggregate(e: Extract<Expr, { kind: 'function' }>, scope: Scope | null): AggregateCall {
  const call = bindAggregateOrder(bindAggregateCall(e, scope), e, scope);
  return e.filter === undefined ? call : filteredAggregate(call, e.filter, scope);
}

function bindAggregateCall(e: Extract<Expr, { kind: 'function' }>, scope: Scope | null): AggregateCall {
  const name = e.name;
  if (e.star) {
    if (name !== 'count')
      throw new SluiceError('UNKNOWN_FUNCTION', `function ${name}(*) does not exist`, { position: e.pos });
    return { fn: 'count_star', distinct: false, column: { name: 'count', type: T.int64, nullable: false } };
  }
  // no aggregate here has named parameters: "function f(x => …) does not exist" (bind-named-args.ts)
  if (e.argNames !== undefined) positionalCall(e, { scope, aggregateContext: 'aggregate arguments' });
  // STRING_AGG(value, delimiter) and JSONB_OBJECT_AGG(key, value) take two arguments.
  const arity = name === 'string_agg' || name === 'jsonb_object_agg' ? 2 : 1;
  if (e.args.length !== arity) {
    const count = arity === 1 ? 'one argument' : 'two arguments';
    throw new SluiceError('UNKNOWN_FUNCTION', `function ${name} takes exactly ${count}`, {
      position: e.pos,
    });
  }
  const nested = e.args.find(containsAggregate);
  if (nested !== undefined) {
    throw new SluiceError('INVALID_AGGREGATE', 'aggregate function calls cannot be nested', {
      position: nested.pos,
    });
  }
  const argAst = e.args[0] as Expr;
  let arg = bindExpr(argAst, { scope, aggregateContext: 'aggregate arguments' });
  const second =
    arity === 2 ? bindExpr(e.args[1] as Expr, { scope, aggregateContext: 'aggregate arguments' }) : undefined;
  if (arg.type.kind === 'unknown') arg = { ...arg, type: T.text };
  const fn = name as AggregateFn;
  const mismatch = (): SluiceError =>
    arg.type.kind === 'interval' && (fn === 'sum' || fn === 'avg')
      ? notSupported(`${name.toUpperCase()}(interval)`, e.pos, 'sum its seconds: SUM(EXTRACT(EPOCH FROM x))')
      : new SluiceError('UNKNOWN_FUNCTION', `function ${name}(${typeName(arg.type)}) does not exist`, {
          position: e.pos,
          hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
        });
  if (MORE_AGGREGATES.has(name)) return bindMoreAggregate(name, arg, e.distinct, e.pos, mismatch, second);
  switch (fn) {
    case 'count':
      return { fn, distinct: e.distinct, arg, column: { name: 'count', type: T.int64, nullable: false } };
    case 'sum': {
      if (!isNumeric(arg.type)) throw mismatch();
      // PostgreSQL: sum(bigint) and sum(numeric) are numeric, sum(smallint/integer) bigint.
      const type =
        arg.type.kind === 'int'
          ? arg.type.bits === 64
            ? T.numeric
            : T.int64
          : arg.type.kind === 'numeric'
            ? T.numeric
            : arg.type;
      return { fn, distinct: e.distinct, arg, column: { name: 'sum', type, nullable: true } };
    }
    case 'avg': {
      if (!isNumeric(arg.type)) throw mismatch();
      const type = arg.type.kind === 'float' ? T.float64 : T.numeric;
      return { fn, distinct: e.distinct, arg, column: { name: 'avg', type, nullable: true } };
    }
    case 'min':
    case 'max':
      if (arg.type.kind === 'bool') throw mismatch();
      return { fn, distinct: false, arg, column: { name: fn, type: arg.type, nullable: true } };
    default:
      throw mismatch();
  }
}
