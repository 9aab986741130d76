// LogicalPlan: what a query computes, as relational algebra over positional columns. Built by the
// binder, printed by EXPLAIN, lowered to a DataflowPlan by src/ivm/lower.ts.
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { printScalar } from '../common/scalar-expr.ts';
import { typeName } from '../common/types.ts';
import { printTopN, type RankKind, type SortKey } from '../common/top-n.ts';
import { printWindow, type WindowFn } from '../common/window.ts';
import { printExpand, type ExpandGenerator } from '../common/expand.ts';
import type { ColumnMeta } from './catalog.ts';
import { printTemporalBound, type TemporalBound } from '../common/temporal-bound.ts';
import type { AggregateFn } from '../common/aggregate-fn.ts';

export interface AggregateCall {
  readonly fn: AggregateFn;
  readonly distinct: boolean;
  /** Absent for COUNT(*). */
  readonly arg?: ScalarExpr;
  readonly column: ColumnMeta;
  /** STRING_AGG: the (constant) delimiter; a NULL delimiter is the empty string. */
  readonly delimiter?: string;
  /**
   * `agg(x ORDER BY y [DESC] …)` (bind-aggregate-order.ts): the order the aggregate reads its rows
   * in, over the aggregate's input; rows equal on every key are then ordered by the argument.
   */
  readonly orderBy?: readonly AggregateOrder[];
}

/** One key of an aggregate's ORDER BY. */
export interface AggregateOrder {
  readonly expr: ScalarExpr;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

/**
 * A predicate subquery's semi-join: `exists`/`in` pass an input row once while it has a match,
 * `notExists` while it has none, `notIn` with SQL's NULL rules (see SemiJoin below).
 */
export type SemiJoinMode = 'exists' | 'notExists' | 'in' | 'notIn';

export type LogicalPlan =
  | {
      readonly kind: 'scan';
      readonly source: string;
      readonly sourceKind: 'table' | 'view';
      readonly columns: readonly ColumnMeta[];
    }
  /** SELECT without FROM: exactly one empty row. */
  | { readonly kind: 'values'; readonly columns: readonly ColumnMeta[] }
  | {
      readonly kind: 'filter';
      readonly input: LogicalPlan;
      readonly predicate: ScalarExpr;
      readonly columns: readonly ColumnMeta[];
    }
  | {
      readonly kind: 'project';
      readonly input: LogicalPlan;
      readonly exprs: readonly ScalarExpr[];
      readonly columns: readonly ColumnMeta[];
    }
  /** Output: the group keys, then one column per aggregate. */
  | {
      readonly kind: 'aggregate';
      readonly input: LogicalPlan;
      readonly groupKeys: readonly ScalarExpr[];
      readonly aggregates: readonly AggregateCall[];
      readonly columns: readonly ColumnMeta[];
    }
  | { readonly kind: 'distinct'; readonly input: LogicalPlan; readonly columns: readonly ColumnMeta[] }
  /**
   * Output: the left columns, then the right ones (the padded side's nullable for outer joins).
   * `leftKeys[i] = rightKeys[i]` are the equi conditions, each over its own input's columns;
   * `residual` is the rest of the ON condition, over the output row. No keys: a cross product.
   */
  | {
      readonly kind: 'join';
      readonly joinKind: 'inner' | 'left' | 'right' | 'full';
      readonly left: LogicalPlan;
      readonly right: LogicalPlan;
      readonly leftKeys: readonly ScalarExpr[];
      readonly rightKeys: readonly ScalarExpr[];
      readonly residual: ScalarExpr | null;
      readonly columns: readonly ColumnMeta[];
      /**
       * `right FOR SYSTEM_TIME AS OF PROCTIME()` (bind-temporal-join.ts): each left row meets the
       * right rows present when it arrives, and later right changes leave its output alone. Only
       * INNER and LEFT, with an equi key.
       */
      readonly temporal?: true;
    }
  /**
   * A temporal filter: the input's rows while the epoch's clock satisfies every bound (each row's
   * rows enter and leave as the clock crosses its bounds; bind-temporal.ts).
   */
  | {
      readonly kind: 'temporalFilter';
      readonly input: LogicalPlan;
      readonly bounds: readonly TemporalBound[];
      readonly columns: readonly ColumnMeta[];
    }
  /** UNION ALL: every input's rows (inputs of one column layout, already cast to the output types). */
  | {
      readonly kind: 'union';
      readonly inputs: readonly LogicalPlan[];
      readonly columns: readonly ColumnMeta[];
    }
  /**
   * UNION, INTERSECT [ALL], EXCEPT [ALL] over whole rows (NULLs equal): with `all`, a row `a` times
   * on the left and `b` times on the right appears min(a, b) times (INTERSECT ALL) or max(a − b, 0)
   * times (EXCEPT ALL); without, once when a + b > 0, both > 0, or a > 0 and b = 0.
   */
  | {
      readonly kind: 'setOp';
      readonly op: 'union' | 'intersect' | 'except';
      readonly all: boolean;
      readonly left: LogicalPlan;
      readonly right: LogicalPlan;
      readonly columns: readonly ColumnMeta[];
    }
  /**
   * A predicate subquery: the input's rows (unchanged, each at most as often as it comes) that the
   * predicate passes. `keys` are over the input row: the `correlated` correlation expressions,
   * then for IN the operand; the subquery's first columns are the same keys on its side. For
   * `notIn` a row passes when its subquery rows (those of its correlation key) are none, or hold
   * neither a NULL nor its value, and its value is not NULL — else the predicate is false or UNKNOWN.
   */
  | {
      readonly kind: 'semiJoin';
      readonly mode: SemiJoinMode;
      readonly input: LogicalPlan;
      readonly subquery: LogicalPlan;
      readonly keys: readonly ScalarExpr[];
      readonly correlated: number;
      readonly columns: readonly ColumnMeta[];
    }
  /**
   * Top-N (src/planner/bind-window.ts): the input's rows ranked within each partition (rows equal
   * on `partitionBy`) by `orderBy` — ROW_NUMBER, RANK or DENSE_RANK, ties among equal order keys
   * broken by the whole row for ROW_NUMBER — keeping the rows whose rank r has from < r ≤ to
   * (`to` null: no upper bound). With `emitRank` the rank is appended as the last column.
   * `ORDER BY … LIMIT n OFFSET m` is ROW_NUMBER over one partition with from m, to m + n.
   */
  | {
      readonly kind: 'topN';
      readonly input: LogicalPlan;
      readonly partitionBy: readonly number[];
      readonly orderBy: readonly SortKey[];
      readonly rank: RankKind;
      readonly emitRank: boolean;
      readonly from: number;
      readonly to: number | null;
      readonly columns: readonly ColumnMeta[];
    }
  /**
   * Window functions (src/planner/bind-window-functions.ts): every input row, with one column
   * appended per function, computed over the rows of its partition sorted by `orderBy` (peers
   * ordered by the whole row, so ROW_NUMBER and LAG among ties are deterministic).
   */
  | {
      readonly kind: 'window';
      readonly input: LogicalPlan;
      readonly partitionBy: readonly number[];
      readonly orderBy: readonly SortKey[];
      readonly functions: readonly WindowFn[];
      readonly columns: readonly ColumnMeta[];
    }
  /**
   * One-to-many (src/common/expand.ts): each input row once per tuple its generator yields for it,
   * the tuple's values appended (HOP: one row per window holding the row's time).
   */
  | {
      readonly kind: 'expand';
      readonly input: LogicalPlan;
      readonly generator: ExpandGenerator;
      readonly columns: readonly ColumnMeta[];
    };

export const SEMI_JOIN_WORDS: Readonly<Record<SemiJoinMode, string>> = {
  exists: 'EXISTS',
  notExists: 'NOT EXISTS',
  in: 'IN',
  notIn: 'NOT IN',
};

function printPlan(plan: LogicalPlan, indent: number, printed: Set<LogicalPlan>): string {
  return printLogicalPlan(plan, indent, printed);
}

function cols(columns: readonly ColumnMeta[]): string {
  return columns.map((c) => `${c.name}:${typeName(c.type)}`).join(', ');
}

export function printAggregate(a: AggregateCall): string {
  if (a.fn === 'count_star') return 'count(*)';
  const delimiter = a.delimiter === undefined ? '' : `, ${JSON.stringify(a.delimiter)}`;
  const order =
    a.orderBy === undefined
      ? ''
      : ` order by ${a.orderBy.map((o) => `${printScalar(o.expr)} ${o.desc ? 'desc' : 'asc'} nulls ${o.nullsFirst ? 'first' : 'last'}`).join(', ')}`;
  return `${a.fn}(${a.distinct ? 'distinct ' : ''}${a.arg === undefined ? '' : printScalar(a.arg)}${delimiter}${order})`;
}

/**
 * Deterministic, indented print for EXPLAIN. A plan object reached again (a WITH query read
 * several times) is printed once, then named.
 */
export function printLogicalPlan(plan: LogicalPlan, indent = 0, printed = new Set<LogicalPlan>()): string {
  const pad = '  '.repeat(indent);
  if (printed.has(plan)) return `${pad}(the same plan as above: computed once, read again here)`;
  if (plan.kind !== 'scan' && plan.kind !== 'values') printed.add(plan);
  const printLogicalPlan = (p: LogicalPlan, i: number): string => printPlan(p, i, printed);
  switch (plan.kind) {
    case 'scan':
      return `${pad}Scan ${plan.sourceKind} ${plan.source} [${cols(plan.columns)}]`;
    case 'values':
      return `${pad}Values (one row)`;
    case 'filter':
      return `${pad}Filter ${printScalar(plan.predicate)}\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'temporalFilter':
      return `${pad}TemporalFilter ${plan.bounds.map(printTemporalBound).join(' AND ')}\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'project':
      return `${pad}Project ${plan.exprs.map((e, i) => `${plan.columns[i]?.name ?? '?'} := ${printScalar(e)}`).join(', ')}\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'aggregate':
      return `${pad}Aggregate keys [${plan.groupKeys.map(printScalar).join(', ')}] aggregates [${plan.aggregates.map(printAggregate).join(', ')}]\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'distinct':
      return `${pad}Distinct\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'join': {
      const keys = plan.leftKeys.map(
        (k, i) => `${printScalar(k)} = right.${printScalar(plan.rightKeys[i] as ScalarExpr)}`,
      );
      const on = keys.length === 0 ? 'no equi key (every pair)' : `keys [${keys.join(', ')}]`;
      const residual = plan.residual === null ? '' : ` residual ${printScalar(plan.residual)}`;
      const temporal = plan.temporal === true ? ' temporal (right side as of each left row arrival)' : '';
      return `${pad}Join ${plan.joinKind}${temporal} ${on}${residual}\n${printLogicalPlan(plan.left, indent + 1)}\n${printLogicalPlan(plan.right, indent + 1)}`;
    }
    case 'union':
      return [
        `${pad}Union all [${cols(plan.columns)}]`,
        ...plan.inputs.map((p) => printLogicalPlan(p, indent + 1)),
      ].join('\n');
    case 'semiJoin': {
      const keys = plan.keys.map((k, i) => `${printScalar(k)} = right.#${i}`);
      const on = keys.length === 0 ? 'no key (the whole subquery)' : `keys [${keys.join(', ')}]`;
      return `${pad}SemiJoin ${SEMI_JOIN_WORDS[plan.mode]} ${on}\n${printLogicalPlan(plan.input, indent + 1)}\n${printLogicalPlan(plan.subquery, indent + 1)}`;
    }
    case 'topN':
      return `${pad}TopN ${printTopN(plan, plan.input.columns)}\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'window':
      return `${pad}Window ${printWindow(plan, plan.input.columns)}\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'expand':
      return `${pad}Expand ${printExpand(plan.generator)} [${cols(plan.columns.slice(plan.input.columns.length))}]\n${printLogicalPlan(plan.input, indent + 1)}`;
    case 'setOp':
      return `${pad}${plan.op[0]!.toUpperCase()}${plan.op.slice(1)}${plan.all ? ' all' : ''} [${cols(plan.columns)}]\n${printLogicalPlan(plan.left, indent + 1)}\n${printLogicalPlan(plan.right, indent + 1)}`;
  }
}
