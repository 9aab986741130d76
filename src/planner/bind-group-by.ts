// Binds GROUP BY, the aggregate calls and HAVING of a SELECT (bind-select.ts) to an Aggregate over
// its FROM: each select item and HAVING is rewritten over the group keys and the aggregates' columns.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { Expr, Pos, SelectStmt } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { scalarChildren } from '../common/scalar-expr.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import type { ColumnMeta } from './catalog.ts';
import type { AggregateCall, LogicalPlan } from './logical-plan.ts';
import type { AggregateFn } from '../common/aggregate-fn.ts';
import { printAggregate } from './logical-plan.ts';
import { charKey } from './bind-char-key.ts';
import type { Scope } from './bind-scope.ts';
import { bindExpr, containsAggregate, isAggregateCall } from './bind-expr.ts';
import { nullable } from './bind-column-meta.ts';
import { starColumns } from './bind-scope.ts';
import type { SubqueryContext } from './bind-subquery.ts';
import { filteredAggregate } from './bind-filter.ts';
import { bindAggregateOrder } from './bind-aggregate-order.ts';
import { MORE_AGGREGATES, bindMoreAggregate } from './bind-aggregate-more.ts';
import { positionalCall } from './bind-named-args.ts';
import { SubqueriesAfterAggregate } from './bind-scalar-subquery.ts';
import { TreeIds, scalarLabel } from './tree-ids.ts';

/** A select-list entry once `*` is expanded. */
export interface SelectItem {
  readonly expr: Expr;
  readonly name: string;
  readonly pos: Pos;
}

export interface GroupByInput {
  readonly stmt: SelectStmt;
  readonly items: readonly SelectItem[];
  /** ORDER BY expressions computed as hidden trailing columns. */
  readonly hidden: readonly Expr[];
  readonly itemsByName: ReadonlyMap<string, readonly number[]>;
  /** The FROM (and WHERE) the groups are made of. */
  readonly plan: LogicalPlan;
  readonly scope: Scope | null;
  /** Bindings of `*`'s expansion over a USING join (see bind-select.ts). */
  readonly preBound: WeakMap<Expr, ScalarExpr>;
  readonly subContext: SubqueryContext;
}

export interface BoundGroupBy {
  /** Aggregate (with scalar subqueries joined to its groups, then HAVING) over the input. */
  readonly plan: LogicalPlan;
  /** The select items and hidden ORDER BY columns over the plan's columns. */
  readonly exprs: ScalarExpr[];
  readonly dependsOn: readonly string[];
}

export function bindGroupBy(grouping: GroupByInput): BoundGroupBy {
  const { stmt, items, hidden, itemsByName, plan: input, scope, preBound, subContext } = grouping;
  const inputScope = scope;
  const inputColumns = input.columns;
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
      const bound = bindAggregate(e, inputScope);
      // DISTINCT reads a char argument once per value as char compares ('ab ' and 'ab' one), in its
      // one spelling (bind-char-key.ts), as PostgreSQL counts it
      const call = bound.distinct && bound.arg !== undefined ? { ...bound, arg: charKey(bound.arg) } : bound;
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
  // A char key in its one spelling, so 'ab   ' and 'ab  ' are one group, as in PostgreSQL (bind-char-key.ts)
  const keys = groupKeys.map((k) => charKey(k));
  const aggregate: LogicalPlan = {
    kind: 'aggregate',
    input,
    groupKeys: keys,
    aggregates,
    columns: aggColumns,
  };
  const joined = after.join(aggregate);
  let plan = joined.plan;
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
  return { plan, exprs: itemExprs, dependsOn: joined.dependsOn };
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

export function bindAggregateCall(
  e: Extract<Expr, { kind: 'function' }>,
  scope: Scope | null,
): AggregateCall {
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
