// The vocabulary of window functions shared by the LogicalPlan and the DataflowPlan: one function
// over a window (its kind, argument columns, frame) and the printed form of a Window node.
import type { SqlType } from './types.ts';
import { typeName } from './types.ts';
import type { SortKey } from './top-n.ts';

export type WindowFnKind =
  | 'row_number'
  | 'rank'
  | 'dense_rank'
  | 'lag'
  | 'lead'
  | 'first_value'
  | 'last_value'
  | 'count_star'
  | 'count'
  | 'sum'
  | 'avg'
  | 'min'
  | 'max';

/**
 * The frame of a function that reads one (FIRST_VALUE, LAST_VALUE, the aggregates): `range` is
 * PostgreSQL's default, RANGE UNBOUNDED PRECEDING … CURRENT ROW, where a row's peers (equal ORDER
 * BY keys; without ORDER BY the whole partition) share its value; `rows` is ROWS BETWEEN
 * `preceding` (null: UNBOUNDED) PRECEDING AND CURRENT ROW.
 */
export type WindowFrame =
  { readonly kind: 'range' } | { readonly kind: 'rows'; readonly preceding: number | null };

/** One window function of a Window node; columns index the node's input row. */
export interface WindowFn {
  readonly fn: WindowFnKind;
  /** The argument's column (LAG/LEAD/FIRST_VALUE/LAST_VALUE/aggregates but COUNT(*)), else null. */
  readonly arg: number | null;
  /** LAG/LEAD: how many rows back or ahead (1 by default); 0 otherwise. */
  readonly offset: number;
  /** LAG/LEAD: the column holding the default (already of the result type), or null for NULL. */
  readonly defaultArg: number | null;
  readonly frame: WindowFrame;
  /** The result type (bigint for ranks and COUNT, PostgreSQL's SUM/AVG types, else the argument's). */
  readonly type: SqlType;
}

/** Whether the function's value depends on its frame (the others ignore a frame clause). */
export function readsFrame(fn: WindowFnKind): boolean {
  return fn !== 'row_number' && fn !== 'rank' && fn !== 'dense_rank' && fn !== 'lag' && fn !== 'lead';
}

/** `lag(#2:x, 1, #5:d) rows 2 preceding` etc., for both plan prints. */
export function printWindowFn(f: WindowFn, input: readonly { readonly name: string }[]): string {
  const name = (i: number): string => `#${i}:${input[i]?.name ?? '?'}`;
  const args: string[] = [];
  if (f.fn === 'count_star') args.push('*');
  else if (f.arg !== null) args.push(name(f.arg));
  if (f.fn === 'lag' || f.fn === 'lead') {
    args.push(String(f.offset));
    if (f.defaultArg !== null) args.push(name(f.defaultArg));
  }
  const fn = f.fn === 'count_star' ? 'count' : f.fn;
  let frame = '';
  if (readsFrame(f.fn)) {
    frame =
      f.frame.kind === 'range'
        ? ' range (peers share)'
        : ` rows ${f.frame.preceding === null ? 'unbounded' : f.frame.preceding} preceding`;
  }
  return `${fn}(${args.join(', ')})${frame}:${typeName(f.type)}`;
}

/** `partition [#0:a] order [#1:b asc nulls last] [lag(#2:x, 1), …]`, for both plan prints. */
export function printWindow(
  plan: {
    readonly partitionBy: readonly number[];
    readonly orderBy: readonly SortKey[];
    readonly functions: readonly WindowFn[];
  },
  input: readonly { readonly name: string }[],
): string {
  const name = (i: number): string => `#${i}:${input[i]?.name ?? '?'}`;
  const order = plan.orderBy.map(
    (o) => `${name(o.index)} ${o.desc ? 'desc' : 'asc'} nulls ${o.nullsFirst ? 'first' : 'last'}`,
  );
  return (
    `partition [${plan.partitionBy.map(name).join(', ')}] order [${order.join(', ')}] ` +
    `functions [${plan.functions.map((f) => printWindowFn(f, input)).join(', ')}]`
  );
}
