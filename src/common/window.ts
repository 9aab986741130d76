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
  | 'nth_value'
  | 'ntile'
  | 'percent_rank'
  | 'cume_dist'
  | 'count_star'
  | 'count'
  | 'sum'
  | 'avg'
  | 'min'
  | 'max'
  | 'string_agg';

/**
 * The frame of a function that reads one (FIRST_VALUE, LAST_VALUE, NTH_VALUE, the aggregates):
 * `range` is PostgreSQL's default, RANGE UNBOUNDED PRECEDING … CURRENT ROW, where a row's peers
 * (equal ORDER BY keys; without ORDER BY the whole partition) share its value; `rows` is ROWS
 * BETWEEN start AND end, both offsets from the current row (negative: PRECEDING, 0: CURRENT ROW,
 * positive: FOLLOWING), `start` null for UNBOUNDED PRECEDING and `end` null for UNBOUNDED FOLLOWING.
 * A frame whose start is after its end (at the partition's edges, or as written) is empty.
 */
export type WindowFrame =
  | { readonly kind: 'range' }
  | { readonly kind: 'rows'; readonly start: number | null; readonly end: number | null };

/** ROWS BETWEEN n PRECEDING (null: UNBOUNDED) AND CURRENT ROW. */
export function rowsPreceding(n: number | null): WindowFrame {
  return { kind: 'rows', start: n === null ? null : -n, end: 0 };
}

/** One window function of a Window node; columns index the node's input row. */
export interface WindowFn {
  readonly fn: WindowFnKind;
  /** The argument's column (LAG/LEAD/FIRST_VALUE/LAST_VALUE/aggregates but COUNT(*)), else null. */
  readonly arg: number | null;
  /** LAG/LEAD: how many rows back or ahead (1 by default); NTILE: the buckets; NTH_VALUE: n; 0 otherwise. */
  readonly offset: number;
  /** LAG/LEAD: the column holding the default (already of the result type), or null for NULL. */
  readonly defaultArg: number | null;
  readonly frame: WindowFrame;
  /**
   * The result type (bigint for ranks and COUNT, integer for NTILE, double precision for
   * PERCENT_RANK and CUME_DIST, PostgreSQL's SUM/AVG types, else the argument's).
   */
  readonly type: SqlType;
  /**
   * STRING_AGG: the delimiter, a constant ('' for NULL, as PostgreSQL joins with nothing); absent
   * for the other functions, so the plans bound before it print and compare as they did.
   */
  readonly delimiter?: string;
}

/** Whether the function's value depends on its frame (the others ignore a frame clause). */
export function readsFrame(fn: WindowFnKind): boolean {
  return !FRAMELESS.has(fn);
}

const FRAMELESS: ReadonlySet<WindowFnKind> = new Set<WindowFnKind>([
  'row_number',
  'rank',
  'dense_rank',
  'lag',
  'lead',
  'ntile',
  'percent_rank',
  'cume_dist',
]);

/** `unbounded preceding`, `2 preceding`, `current row`, `1 following`, `unbounded following`. */
function printBound(offset: number | null, unbounded: 'preceding' | 'following'): string {
  if (offset === null) return `unbounded ${unbounded}`;
  if (offset === 0) return 'current row';
  return offset < 0 ? `${-offset} preceding` : `${offset} following`;
}

/** A frame as the plans print it (ROWS … AND CURRENT ROW keeps its short form). */
function printFrame(frame: WindowFrame): string {
  if (frame.kind === 'range') return 'range (peers share)';
  if (frame.end === 0 && (frame.start === null || frame.start <= 0))
    return `rows ${frame.start === null ? 'unbounded' : -frame.start} preceding`;
  return `rows between ${printBound(frame.start, 'preceding')} and ${printBound(frame.end, 'following')}`;
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
  if (f.fn === 'ntile' || f.fn === 'nth_value') args.push(String(f.offset));
  if (f.delimiter !== undefined) args.push(`'${f.delimiter.replace(/'/g, "''")}'`);
  const fn = f.fn === 'count_star' ? 'count' : f.fn;
  const frame = readsFrame(f.fn) ? ` ${printFrame(f.frame)}` : '';
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
