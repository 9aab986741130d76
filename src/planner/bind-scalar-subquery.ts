// Scalar subqueries (`(SELECT …)` used as a value) in WHERE, HAVING and the select list. Each one is
// a relation of at most one row per outer row, joined into the query; the subquery is then the joined
// column. More than one row is PostgreSQL's cardinality error, raised per row (a row error of the view).
import { SluiceError, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { remapColumns } from '../common/scalar-expr.ts';
import { T, typeName } from '../common/types.ts';
import type { Expr, Pos, SelectItem, SelectStmt } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import type { ColumnMeta } from './catalog.ts';
import type { Scope } from './bind-scope.ts';
import { bindExpr, containsAggregate, isAggregateCall } from './bind-expr.ts';
import { coerce } from './bind-coerce.ts';
import { columnRefs, refuseAcrossKeys, splitCorrelations, type SubqueryContext } from './bind-subquery.ts';
import type { AggregateCall, LogicalPlan } from './logical-plan.ts';
import { commonType } from './types-resolve.ts';

export type SubqueryNode = Extract<Expr, { kind: 'subquery' }>;

/** Where the value of one scalar subquery comes from: a relation to join to the outer rows. */
interface PreparedSubquery {
  /** At most one row per outer key (exactly one when `joinKind` is inner). */
  readonly right: LogicalPlan;
  readonly joinKind: 'inner' | 'left';
  /** Correlation keys: over the outer row, and the same keys over `right`'s row. */
  readonly outerKeys: readonly ScalarExpr[];
  readonly rightKeys: readonly ScalarExpr[];
  /** The subquery's value over `right`'s columns (index 0 is its first column). */
  readonly value: ScalarExpr;
  readonly dependsOn: readonly string[];
}

/**
 * The scalar subqueries of `roots`, not looking inside nested queries (and not the subquery of
 * `x IN (SELECT …)`, which is a predicate), and every node above one (in `above`). Iterative: one
 * pass, whatever the depth of the expressions.
 */
export function scalarSubqueries(roots: readonly (Expr | undefined)[]): {
  readonly nodes: readonly SubqueryNode[];
  readonly above: ReadonlySet<Expr>;
} {
  const nodes: SubqueryNode[] = [];
  const above = new Set<Expr>();
  const children = (e: Expr): readonly Expr[] =>
    e.kind === 'inList' && e.list.length === 1 && e.list[0]?.kind === 'subquery'
      ? [e.operand]
      : exprChildren(e);
  const stack: { node: Expr; expanded: boolean }[] = [];
  for (let i = roots.length - 1; i >= 0; i--) {
    const r = roots[i];
    if (r !== undefined) stack.push({ node: r, expanded: false });
  }
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    if (top.node.kind === 'subquery') {
      stack.pop();
      if (!nodes.includes(top.node)) nodes.push(top.node);
    } else if (!top.expanded) {
      top.expanded = true;
      const cs = children(top.node);
      for (let i = cs.length - 1; i >= 0; i--) stack.push({ node: cs[i] as Expr, expanded: false });
    } else {
      stack.pop();
      if (children(top.node).some((c) => c.kind === 'subquery' || above.has(c))) above.add(top.node);
    }
  }
  return { nodes, above };
}

/**
 * Joins each subquery of `nodes` to `plan` (the outer rows, bound over `scope`): the result plan
 * has `plan`'s columns first, then each subquery's; `values` maps each subquery node to its value
 * over the result's columns.
 */
export function joinScalarSubqueries(
  nodes: readonly SubqueryNode[],
  plan: LogicalPlan,
  scope: Scope | null,
  ctx: SubqueryContext,
): { plan: LogicalPlan; values: Map<Expr, ScalarExpr>; dependsOn: string[] } {
  const values = new Map<Expr, ScalarExpr>();
  const dependsOn: string[] = [];
  let out = plan;
  for (const node of nodes) {
    const p = prepareSubquery(node, scope, ctx, (e) => bindExpr(e, { scope, aggregateContext: 'WHERE' }));
    const offset = out.columns.length;
    out = attach(out, p);
    values.set(
      node,
      remapColumns(p.value, (i) => i + offset),
    );
    for (const d of p.dependsOn) if (!dependsOn.includes(d)) dependsOn.push(d);
  }
  return { plan: out, values, dependsOn };
}

/** Column indexes from here on stand for columns of subqueries joined after an Aggregate. */
const AFTER_BASE = 2 ** 30;

/**
 * The scalar subqueries of a grouped query's select list and HAVING: joined after its Aggregate
 * (whose width is known only once every aggregate is bound). The outer row is a group there, so a
 * correlation's outer expression is bound as the select list is (`bindOuter`: over the group keys
 * and aggregates; another column is PostgreSQL's grouping error). `intercept` gives a subquery's
 * value with a placeholder index; `join` joins them to the Aggregate and `fix` moves the
 * placeholders onto the joined row.
 */
export class SubqueriesAfterAggregate {
  private readonly prepared: { node: SubqueryNode; p: PreparedSubquery; offset: number }[] = [];
  private width = 0;
  private aggregateWidth = 0;
  readonly above: ReadonlySet<Expr>;
  private readonly nodes: ReadonlySet<Expr>;

  constructor(
    roots: readonly (Expr | undefined)[],
    /** The FROM's scope: where a subquery's names that are not its own resolve. */
    private readonly inputScope: Scope | null,
    private readonly ctx: SubqueryContext,
    /** Binds an outer expression of a correlation over the Aggregate's output. */
    private readonly bindOuter: (e: Expr) => ScalarExpr,
  ) {
    const found = scalarSubqueries(roots);
    this.above = found.above;
    this.nodes = new Set(found.nodes);
  }

  get any(): boolean {
    return this.nodes.size > 0;
  }

  intercept(e: Expr): ScalarExpr | undefined {
    if (e.kind !== 'subquery' || !this.nodes.has(e)) return undefined;
    let entry = this.prepared.find((x) => x.node === e);
    if (entry === undefined) {
      const p = prepareSubquery(e, this.inputScope, this.ctx, this.bindOuter);
      entry = { node: e, p, offset: this.width };
      this.width += p.right.columns.length;
      this.prepared.push(entry);
    }
    const offset = entry.offset;
    return remapColumns(entry.p.value, (i) => AFTER_BASE + offset + i);
  }

  join(aggregate: LogicalPlan): { plan: LogicalPlan; dependsOn: string[] } {
    this.aggregateWidth = aggregate.columns.length;
    let out = aggregate;
    const dependsOn: string[] = [];
    for (const { p } of this.prepared) {
      out = attach(out, p);
      for (const d of p.dependsOn) if (!dependsOn.includes(d)) dependsOn.push(d);
    }
    return { plan: out, dependsOn };
  }

  fix(e: ScalarExpr): ScalarExpr {
    if (this.prepared.length === 0) return e;
    const base = this.aggregateWidth;
    return remapColumns(e, (i) => (i >= AFTER_BASE ? i - AFTER_BASE + base : i));
  }
}

/** `plan` joined with the subquery's relation: `plan`'s columns, then the subquery's. */
function attach(plan: LogicalPlan, p: PreparedSubquery): LogicalPlan {
  const right =
    p.joinKind === 'left' ? p.right.columns.map((c) => ({ ...c, nullable: true })) : p.right.columns;
  return {
    kind: 'join',
    joinKind: p.joinKind,
    left: plan,
    right: p.right,
    leftKeys: p.outerKeys,
    rightKeys: p.rightKeys,
    residual: null,
    columns: [...plan.columns, ...right],
  };
}

function col(index: number, c: ColumnMeta): ScalarExpr {
  return { kind: 'col', index, name: c.name, type: c.type };
}

function oneColumn(columns: readonly ColumnMeta[], pos: Pos): ColumnMeta {
  if (columns.length !== 1)
    throw new SluiceError('INVALID_DEFINITION', 'subquery must return only one column', { position: pos });
  return columns[0] as ColumnMeta;
}

/**
 * The subquery's rows reduced to one per key: `[keys…, rows, value]` where `rows` counts them and
 * `value` is their (only, when rows is 1) value: MIN ignores NULLs, and one NULL row is NULL anyway.
 */
function countAndValue(input: LogicalPlan, valueIndex: number, keyIndexes: readonly number[]): LogicalPlan {
  const v = input.columns[valueIndex] as ColumnMeta;
  const groupKeys = keyIndexes.map((k) => col(k, input.columns[k] as ColumnMeta));
  const aggregates: AggregateCall[] = [
    { fn: 'count_star', distinct: false, column: { name: 'rows', type: T.int64, nullable: false } },
    {
      fn: 'min',
      distinct: false,
      arg: col(valueIndex, v),
      column: { name: 'value', type: v.type, nullable: true },
    },
  ];
  return {
    kind: 'aggregate',
    input,
    groupKeys,
    aggregates,
    columns: [...keyIndexes.map((k) => input.columns[k] as ColumnMeta), ...aggregates.map((a) => a.column)],
  };
}

function rowsChecked(rowsIndex: number, right: LogicalPlan): ScalarExpr {
  const rows = right.columns[rowsIndex] as ColumnMeta;
  const value = right.columns[rowsIndex + 1] as ColumnMeta;
  return {
    kind: 'call',
    fn: 'subquery_value',
    args: [col(rowsIndex, rows), col(rowsIndex + 1, value)],
    type: value.type,
  };
}

/** A query of exactly one row: a global aggregate that nothing filters or cuts. */
function exactlyOneRow(q: SelectStmt): boolean {
  return (
    q.setOp === undefined &&
    q.groupBy.length === 0 &&
    q.having === undefined &&
    q.limit === undefined &&
    q.offset === undefined &&
    q.distinctOn === undefined &&
    q.items.some((i) => i.kind === 'expr' && containsAggregate(i.expr))
  );
}

/** The aggregate calls of `e`, not looking inside them or nested queries. */
function aggregateCalls(e: Expr): Expr[] {
  const out: Expr[] = [];
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (isAggregateCall(x)) out.push(x);
    else stack.push(...exprChildren(x));
  }
  return out;
}

const NOT_FOUND = new Set(['UNKNOWN_COLUMN', 'UNKNOWN_TABLE']);

function prepareSubquery(
  node: SubqueryNode,
  outerScope: Scope | null,
  ctx: SubqueryContext,
  bindOuter: (e: Expr) => ScalarExpr,
): PreparedSubquery {
  try {
    return prepare(node, outerScope, ctx, bindOuter);
  } catch (error) {
    throw outerReferenceError(error, node.query, outerScope);
  }
}

/**
 * `outerScope` resolves the names the subquery does not (its correlations); `bindOuter` binds a
 * correlation's outer expression onto the row the subquery is joined to.
 */
function prepare(
  node: SubqueryNode,
  outerScope: Scope | null,
  ctx: SubqueryContext,
  bindOuter: (e: Expr) => ScalarExpr,
): PreparedSubquery {
  const q = node.query;
  const split = splitCorrelations(q, outerScope, ctx);
  if (split === undefined || split.correlations.length === 0) {
    const bound = ctx.bindQuery(q);
    const value = oneColumn(bound.columns, node.pos);
    if (exactlyOneRow(q)) {
      return {
        right: bound.plan,
        joinKind: 'inner',
        outerKeys: [],
        rightKeys: [],
        value: col(0, value),
        dependsOn: bound.dependsOn,
      };
    }
    // Zero rows give NULL, two or more the cardinality error: one row [rows, value] in all cases,
    // joined as LEFT so that WHERE keeps the check on each outer row rather than in a join key.
    const right = countAndValue(bound.plan, 0, []);
    return {
      right,
      joinKind: 'left',
      outerKeys: [],
      rightKeys: [],
      value: rowsChecked(0, right),
      dependsOn: bound.dependsOn,
    };
  }
  const { correlations, innerWhere, isOuter } = split;
  refuseAcrossKeys(q);
  const item = q.items[0];
  if (item === undefined || item.kind === 'star' || q.items.length > 1) {
    if (item?.kind === 'star') throw notSupported('* in a correlated scalar subquery', item.pos);
    throw new SluiceError('INVALID_DEFINITION', 'subquery must return only one column', {
      position: node.pos,
    });
  }
  const outerRef = columnRefs(item.expr).find(isOuter);
  if (outerRef !== undefined)
    throw notSupported('an outer column in the select list of a subquery', outerRef.pos);
  const keyItems: SelectItem[] = correlations.map((c, i) => ({
    kind: 'expr',
    expr: c.inner,
    alias: `key${i}`,
    pos: c.pos,
  }));
  const { where: _where, ...rest } = q;
  const base = { ...rest, ...(innerWhere !== undefined ? { where: innerWhere } : {}) };
  const m = correlations.length;
  const aggregated = q.groupBy.length === 0 && (q.having !== undefined || containsAggregate(item.expr));
  let right: LogicalPlan;
  let value: ScalarExpr;
  let dependsOn: readonly string[];
  if (aggregated) {
    // One row per outer row: grouped by the correlation keys, and for a key with no rows the
    // select list over no rows (COUNT is 0 there, not NULL: the classic count bug).
    if (q.having !== undefined)
      throw notSupported('HAVING in a correlated subquery without GROUP BY', q.having.pos);
    const calls = aggregateCalls(item.expr);
    const marker: Expr = { kind: 'literal', value: true, literalType: 'boolean', pos: item.pos };
    const bound = ctx.bindQuery({
      ...base,
      items: [
        item,
        { kind: 'expr', expr: marker, alias: 'present', pos: item.pos },
        ...calls.map((c, i): SelectItem => ({ kind: 'expr', expr: c, alias: `agg${i}`, pos: c.pos })),
        ...keyItems,
      ],
      groupBy: correlations.map((c) => c.inner),
    });
    const keysAt = 2 + calls.length;
    const picks = [...Array.from({ length: m }, (_, i) => keysAt + i), 0, 1];
    // [keys…, value, present], picked straight from the subquery's own projection when it has one.
    const inner = bound.plan;
    right = {
      kind: 'project',
      input: inner.kind === 'project' ? inner.input : inner,
      exprs: picks.map((i) =>
        inner.kind === 'project' ? (inner.exprs[i] as ScalarExpr) : col(i, bound.columns[i] as ColumnMeta),
      ),
      columns: picks.map((i) => bound.columns[i] as ColumnMeta),
    };
    const v = bound.columns[0] as ColumnMeta;
    const empty = emptyGroupValue(item.expr, calls, bound.columns.slice(2, keysAt), v);
    const present = col(m + 1, bound.columns[1] as ColumnMeta);
    value =
      empty.kind === 'const' && empty.value === null
        ? col(m, v)
        : {
            kind: 'case',
            whens: [{ when: { kind: 'call', fn: 'is_null', args: [present], type: T.bool }, then: empty }],
            else: col(m, v),
            type: v.type,
          };
    dependsOn = bound.dependsOn;
  } else {
    // Any number of rows per key: counted, and more than one is the cardinality error.
    const bound = ctx.bindQuery({
      ...base,
      items: [item, ...keyItems],
      groupBy: q.groupBy.length === 0 ? [] : [...q.groupBy, ...correlations.map((c) => c.inner)],
    });
    right = countAndValue(
      bound.plan,
      0,
      correlations.map((_, i) => 1 + i),
    );
    value = rowsChecked(m, right);
    dependsOn = bound.dependsOn;
  }
  // Each key: the outer expression and the subquery's key column, cast to their common type.
  const outerKeys: ScalarExpr[] = [];
  const rightKeys: ScalarExpr[] = [];
  correlations.forEach((c, i) => {
    const o = bindOuter(c.outer);
    const k = right.columns[i] as ColumnMeta;
    const t = commonType([o.type, k.type]);
    if (t === null) {
      throw new SluiceError(
        'TYPE_MISMATCH',
        `operator does not exist: ${typeName(o.type)} = ${typeName(k.type)}`,
        {
          position: c.pos,
        },
      );
    }
    outerKeys.push(coerce(o, t, c.pos));
    rightKeys.push(coerce(col(i, k), t, c.pos));
  });
  return { right, joinKind: 'left', outerKeys, rightKeys, value, dependsOn };
}

/**
 * The select item of an aggregate subquery evaluated over no rows: COUNT is 0, every other aggregate
 * NULL (typed as the subquery computes it); a bare column is PostgreSQL's grouping error, as in
 * the subquery as written (before its correlation keys became its groups).
 */
function emptyGroupValue(
  item: Expr,
  calls: readonly Expr[],
  callColumns: readonly ColumnMeta[],
  v: ColumnMeta,
): ScalarExpr {
  const bound = bindExpr(item, {
    scope: null,
    intercept: (e) => {
      const i = calls.indexOf(e);
      if (i >= 0) {
        const c = callColumns[i] as ColumnMeta;
        const count = e.kind === 'function' && e.name === 'count';
        return { kind: 'const', value: count ? 0 : null, type: c.type };
      }
      if (e.kind === 'column') {
        throw new SluiceError(
          'GROUPING_ERROR',
          `column "${e.name}" must appear in the GROUP BY clause or be used in an aggregate function`,
          { position: e.pos },
        );
      }
      return undefined;
    },
  });
  return typeName(bound.type) === typeName(v.type) ? bound : coerce(bound, v.type, item.pos);
}

/**
 * A name a nested query could not resolve that names a column of `scope` (the query around the
 * subquery): a reference to the outer row where Sluice cannot decorrelate it — in a query nested
 * two levels down, in a derived table, in the select list of an uncorrelated subquery — is
 * NOT_SUPPORTED at its position, not an unknown column.
 */
export function outerReferenceError(error: unknown, query: SelectStmt, scope: Scope | null): unknown {
  if (!(error instanceof SluiceError) || !NOT_FOUND.has(error.code) || error.position === undefined)
    return error;
  const at = error.position;
  const ref = columnAt(query, at);
  if (ref === undefined || scope === null) return error;
  try {
    bindExpr(ref, { scope, aggregateContext: 'WHERE' });
  } catch {
    return error;
  }
  const name = ref.table === undefined ? `"${ref.name}"` : `"${ref.table}"."${ref.name}"`;
  return notSupported(
    `a reference to column ${name} of an outer query from here`,
    at,
    'a subquery may read the query around it only by equalities of its own WHERE joined by AND (inner_column = outer_column), not from a query nested in it or a derived table',
  );
}

/** The column reference at `pos` anywhere in `query` (nested queries included). Iterative. */
function columnAt(query: SelectStmt, pos: Pos): Extract<Expr, { kind: 'column' }> | undefined {
  const exprs: Expr[] = [];
  const queries: SelectStmt[] = [query];
  const addQuery = (q: SelectStmt): void => {
    for (const i of q.items) if (i.kind === 'expr') exprs.push(i.expr);
    for (const e of [q.where, q.having, q.limit, q.offset]) if (e !== undefined) exprs.push(e);
    exprs.push(...q.groupBy, ...q.orderBy.map((o) => o.expr), ...(q.distinctOn ?? []));
    if (q.setOp !== undefined) queries.push(q.setOp.left, q.setOp.right);
    for (const c of q.with ?? []) queries.push(c.query);
    const froms = q.from === undefined ? [] : [q.from];
    for (let f = froms.pop(); f !== undefined; f = froms.pop()) {
      if (f.kind === 'join') {
        froms.push(f.left, f.right);
        if (f.on !== undefined) exprs.push(f.on);
      } else if (f.kind === 'subquery') queries.push(f.query);
      else if (f.kind === 'windowTvf') {
        froms.push(f.source);
        exprs.push(...f.args);
      } else if (f.kind === 'unnest') exprs.push(...f.args);
      else if (f.kind === 'values') for (const row of f.rows) exprs.push(...row);
    }
  };
  while (queries.length > 0 || exprs.length > 0) {
    const q = queries.pop();
    if (q !== undefined) {
      addQuery(q);
      continue;
    }
    const e = exprs.pop() as Expr;
    if (e.kind === 'column' && e.pos.line === pos.line && e.pos.column === pos.column) return e;
    if (e.kind === 'subquery' || e.kind === 'exists') queries.push(e.query);
    if (e.kind === 'function' && e.over !== undefined)
      exprs.push(...e.over.partitionBy, ...e.over.orderBy.map((o) => o.expr));
    exprs.push(...exprChildren(e));
  }
  return undefined;
}
