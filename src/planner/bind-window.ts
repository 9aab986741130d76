// Top-N and DISTINCT ON, bound to one LogicalPlan node (`topN`): `ORDER BY … LIMIT n OFFSET m` in a
// view or a nested query is ROW_NUMBER over one partition kept in (m, m + n]; a Window node computing
// only `ROW_NUMBER()/RANK()/DENSE_RANK() OVER (…)` (bind-window-functions.ts) under an enclosing
// `WHERE rn <= n` (or <, =, >, >=) becomes a TopN keeping that range; `DISTINCT ON (exprs)` is
// ROW_NUMBER partitioned by those expressions, kept in (0, 1].
import { SluiceError } from '../common/errors.ts';
import type { Expr } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { scalarChildren, type ScalarExpr } from '../common/scalar-expr.ts';
import type { SortKey } from '../common/top-n.ts';
import { T } from '../common/types.ts';
import type { LogicalPlan } from './logical-plan.ts';

type TopNPlan = Extract<LogicalPlan, { kind: 'topN' }>;

/** A query's ORDER BY / LIMIT / OFFSET as bound (keys over the plan's columns, hidden ones included). */
export interface Ordering {
  readonly orderBy: readonly SortKey[];
  readonly limit?: number;
  readonly offset?: number;
}

/**
 * `ORDER BY … LIMIT n OFFSET m` kept in a view (or a nested query): a TopN over one partition
 * keeping rows (m, m + n], then the hidden ORDER BY columns dropped (`width`: the visible ones).
 */
export function topNOfOrdering(plan: LogicalPlan, ordering: Ordering, width: number): LogicalPlan {
  const from = ordering.offset ?? 0;
  const to = ordering.limit === undefined ? null : from + ordering.limit;
  const topN: TopNPlan = {
    kind: 'topN',
    input: plan,
    partitionBy: [],
    orderBy: ordering.orderBy,
    rank: 'row_number',
    emitRank: false,
    from,
    to,
    columns: plan.columns,
  };
  return dropHidden(topN, width);
}

/** The plan's first `width` columns (a Project dropping the hidden ones), or the plan itself. */
export function dropHidden(plan: LogicalPlan, width: number): LogicalPlan {
  if (plan.columns.length === width) return plan;
  const columns = plan.columns.slice(0, width);
  const exprs: ScalarExpr[] = columns.map((c, index) => ({ kind: 'col', index, name: c.name, type: c.type }));
  return { kind: 'project', input: plan, exprs, columns };
}

/**
 * `SELECT DISTINCT ON (exprs) …`: one row per partition — the first by ORDER BY, the first by the
 * whole row among ties — as a TopN keeping rank 1. `partitionBy` and `orderBy` index `plan`'s
 * columns; the hidden ones past `width` are dropped after it (unless the caller still sorts by them).
 */
export function distinctOnPlan(
  plan: LogicalPlan,
  partitionBy: readonly number[],
  orderBy: readonly SortKey[],
): LogicalPlan {
  return {
    kind: 'topN',
    input: plan,
    partitionBy,
    orderBy,
    rank: 'row_number',
    emitRank: false,
    from: 0,
    to: 1,
    columns: plan.columns,
  };
}

/** PostgreSQL: the leading ORDER BY items must be DISTINCT ON expressions until those run out. */
export function checkDistinctOnOrder(
  distinctOn: readonly number[],
  orderBy: readonly { readonly index: number; readonly pos: Expr['pos'] }[],
): void {
  const on = new Set(distinctOn);
  const seen = new Set<number>();
  for (const o of orderBy) {
    if (seen.size === on.size) return;
    if (!on.has(o.index)) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        'SELECT DISTINCT ON expressions must match initial ORDER BY expressions',
        { position: o.pos },
      );
    }
    seen.add(o.index);
  }
}

/** Window function calls in `roots` (select items and ORDER BY expressions), outermost first. */
export function windowCalls(roots: readonly Expr[]): Extract<Expr, { kind: 'function' }>[] {
  const out: Extract<Expr, { kind: 'function' }>[] = [];
  const stack = [...roots].reverse();
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (e.kind === 'function' && e.over !== undefined) out.push(e);
    const children = exprChildren(e);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Expr);
  }
  return out;
}

/** A window function where PostgreSQL allows none (WHERE, GROUP BY, HAVING, JOIN … ON). */
export function refuseWindowIn(e: Expr | undefined, clause: string): void {
  if (e === undefined) return;
  const call = windowCalls([e])[0];
  if (call !== undefined) {
    throw new SluiceError('INVALID_DEFINITION', `window functions are not allowed in ${clause}`, {
      position: call.pos,
    });
  }
}

/**
 * `WHERE rn <= n` over a query whose column `rn` is an unbounded rank (a derived table or WITH
 * query computing ROW_NUMBER/RANK/DENSE_RANK): the bounds on it become the TopN's kept range, so
 * only the top rows of each partition flow on. Other conjuncts stay in the filter.
 */
export function absorbRankBounds(plan: LogicalPlan): LogicalPlan {
  if (plan.kind !== 'filter') return plan;
  // Follow the filtered columns down through projections that pass them on, to a TopN.
  const chain: Extract<LogicalPlan, { kind: 'project' }>[] = [];
  let node: LogicalPlan = plan.input;
  while (node.kind === 'project') {
    chain.push(node);
    node = node.input;
  }
  const topN = node.kind === 'window' ? rankAsTopN(node) : node;
  if (topN?.kind !== 'topN' || !topN.emitRank || topN.from !== 0 || topN.to !== null) return plan;
  // The rank column mapped up through the projections: the outer index whose expression is it.
  let rank = topN.columns.length - 1;
  for (let i = chain.length - 1; i >= 0; i--) {
    const up = (chain[i] as (typeof chain)[number]).exprs.findIndex(
      (e) => e.kind === 'col' && e.index === rank,
    );
    if (up < 0) return plan;
    rank = up;
  }
  const conjuncts = plan.predicate.kind === 'and' ? plan.predicate.args : [plan.predicate];
  const kept: ScalarExpr[] = [];
  let from = 0;
  let to = Infinity;
  let absorbed = false;
  for (const c of conjuncts) {
    const bound = rankBound(c, rank);
    if (bound === null) {
      kept.push(c);
      continue;
    }
    absorbed = true;
    from = Math.max(from, bound.from);
    to = Math.min(to, bound.to);
  }
  if (!absorbed) return plan;
  let rebuilt: LogicalPlan = { ...topN, from, to: to === Infinity ? null : Math.max(to, from) };
  for (let i = chain.length - 1; i >= 0; i--)
    rebuilt = { ...(chain[i] as (typeof chain)[number]), input: rebuilt };
  if (kept.length === 0) return rebuilt;
  const predicate: ScalarExpr =
    kept.length === 1 ? (kept[0] as ScalarExpr) : { kind: 'and', args: kept, type: T.bool };
  return { kind: 'filter', input: rebuilt, predicate, columns: rebuilt.columns };
}

/**
 * A rank a TopN appends that nothing above reads (`WHERE rn <= 10` absorbed into the TopN, `rn` not
 * selected): the TopN stops appending it, so it emits only the rows entering and leaving its kept
 * range instead of every row whose rank shifted. Follows the projections and filters from `plan`
 * down to the TopN; every column of `plan` counts as read. An expression of a projection that read
 * the rank is read by nobody, and becomes NULL (the columns keep their positions).
 */
export function dropUnusedRank(plan: LogicalPlan): LogicalPlan {
  const chain: Extract<LogicalPlan, { kind: 'project' | 'filter' }>[] = [];
  let node: LogicalPlan = plan;
  while (node.kind === 'project' || node.kind === 'filter') {
    chain.push(node);
    node = node.input;
  }
  if (node.kind !== 'topN' || !node.emitRank || chain.length === 0) return plan;
  let read = new Set(plan.columns.map((_, i) => i));
  for (const level of chain) {
    const below = new Set<number>();
    if (level.kind === 'project') for (const i of read) readColumns(level.exprs[i] as ScalarExpr, below);
    else {
      for (const i of read) below.add(i);
      readColumns(level.predicate, below);
    }
    read = below;
  }
  const rank = node.columns.length - 1;
  if (read.has(rank)) return plan;
  let rebuilt: LogicalPlan = { ...node, emitRank: false, columns: node.columns.slice(0, rank) };
  // Levels under the first projection see the TopN's columns; above it, positions are unchanged.
  let underProjection = true;
  for (let i = chain.length - 1; i >= 0; i--) {
    const level = chain[i] as (typeof chain)[number];
    if (level.kind === 'filter') {
      rebuilt = { ...level, input: rebuilt, columns: underProjection ? rebuilt.columns : level.columns };
      continue;
    }
    const exprs = underProjection
      ? level.exprs.map((e): ScalarExpr =>
          readsColumn(e, rank) ? { kind: 'const', value: null, type: e.type } : e,
        )
      : level.exprs;
    rebuilt = { ...level, input: rebuilt, exprs };
    underProjection = false;
  }
  return rebuilt;
}

function readColumns(e: ScalarExpr, into: Set<number>): void {
  if (e.kind === 'col') into.add(e.index);
  for (const c of scalarChildren(e)) readColumns(c, into);
}

function readsColumn(e: ScalarExpr, index: number): boolean {
  return (e.kind === 'col' && e.index === index) || scalarChildren(e).some((c) => readsColumn(c, index));
}

/**
 * A Window node computing only ROW_NUMBER, RANK or DENSE_RANK: the same rows as an unbounded TopN
 * appending the rank, which an outer bound on the rank can then narrow.
 */
function rankAsTopN(node: Extract<LogicalPlan, { kind: 'window' }>): TopNPlan | null {
  const f = node.functions[0];
  if (node.functions.length !== 1 || f === undefined) return null;
  if (f.fn !== 'row_number' && f.fn !== 'rank' && f.fn !== 'dense_rank') return null;
  return {
    kind: 'topN',
    input: node.input,
    partitionBy: node.partitionBy,
    orderBy: node.orderBy,
    rank: f.fn,
    emitRank: true,
    from: 0,
    to: null,
    columns: node.columns,
  };
}

const FLIPPED: Readonly<Record<string, string>> = { lt: 'gt', le: 'ge', gt: 'lt', ge: 'le', eq: 'eq' };

/** The kept range (from < rank ≤ to) one conjunct `rank op integer` states, or null. */
function rankBound(e: ScalarExpr, rank: number): { from: number; to: number } | null {
  if (e.kind !== 'call' || e.args.length !== 2) return null;
  const [a, b] = e.args as readonly [ScalarExpr, ScalarExpr];
  let op = String(e.fn);
  let value: number | null;
  if (isColumn(a, rank)) value = integerConst(b);
  else if (isColumn(b, rank)) {
    value = integerConst(a);
    op = FLIPPED[op] ?? '';
  } else return null;
  if (value === null) return null;
  switch (op) {
    case 'le':
      return { from: 0, to: value };
    case 'lt':
      return { from: 0, to: value - 1 };
    case 'eq':
      return { from: value - 1, to: value };
    case 'ge':
      return { from: value - 1, to: Infinity };
    case 'gt':
      return { from: value, to: Infinity };
    default:
      return null;
  }
}

function isColumn(e: ScalarExpr, index: number): boolean {
  const inner = e.kind === 'cast' ? e.operand : e;
  return inner.kind === 'col' && inner.index === index;
}

/** A small integer constant (possibly cast), or null. */
function integerConst(e: ScalarExpr): number | null {
  const inner = e.kind === 'cast' ? e.operand : e;
  if (inner.kind !== 'const' || inner.value === null) return null;
  const v = typeof inner.value === 'bigint' ? Number(inner.value) : inner.value;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) return null;
  return Math.max(0, Math.min(v, Number.MAX_SAFE_INTEGER));
}
