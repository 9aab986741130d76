// SESSION(t [PARTITION BY k], ts, gap): session windows as Flink defines them — per partition, rows
// ordered by time belong to one session while each follows the previous one by at most `gap`;
// window_start is the session's first time, window_end its last time plus `gap`. Stateful (a row can
// merge two sessions or split one), so it is not a new operator but three Window nodes over the
// rows, each maintained incrementally with retraction and checkpointed like any window function:
//   1. LAG(ts) per partition in time order → a row starts a session when it has no predecessor or
//      follows it by more than `gap` (its `marker` is then its time);
//   2. MAX(marker) over the rows so far (peers share) → the session's start, window_start;
//   3. MAX(ts) per (partition, window_start) over the whole session → window_end = it + gap.
// A row whose time is NULL is in no session (dropped, as HOP drops it).
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { Interval } from '../common/time/interval.ts';
import type { SortKey } from '../common/top-n.ts';
import { T, type SqlType } from '../common/types.ts';
import type { WindowFn } from '../common/window.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

const col = (index: number, c: { name: string; type: SqlType }): ScalarExpr => ({
  kind: 'col',
  index,
  name: c.name,
  type: c.type,
});

/** The input's columns, then window_start and window_end (timestamps for a date time column). */
export function bindSessionWindow(
  input: { readonly plan: LogicalPlan; readonly columns: readonly ColumnMeta[] },
  timeIndex: number,
  partitionBy: readonly number[],
  gap: Interval,
  windowColumns: readonly ColumnMeta[],
): { plan: LogicalPlan; columns: ColumnMeta[] } {
  const n = input.columns.length;
  const timeMeta = input.columns[timeIndex]!;
  const windowType = windowColumns[0]!.type;
  const time = col(timeIndex, timeMeta);
  const asWindowType = (e: ScalarExpr): ScalarExpr =>
    e.type.kind === windowType.kind ? e : { kind: 'cast', operand: e, type: windowType };
  const byTime: SortKey[] = [{ index: timeIndex, desc: false, nullsFirst: false }];
  const gapConst: ScalarExpr = { kind: 'const', value: gap, type: T.interval };
  const plus = (e: ScalarExpr): ScalarExpr => ({
    kind: 'call',
    fn: 'time_add',
    args: [asWindowType(e), gapConst],
    type: windowType,
  });
  const passThrough = input.columns.map((c, i) => col(i, c));

  const present: LogicalPlan = {
    kind: 'filter',
    input: input.plan,
    predicate: { kind: 'call', fn: 'is_not_null', args: [time], type: T.bool },
    columns: input.columns,
  };
  // 1. The previous row's time in the partition.
  const lag: WindowFn = {
    fn: 'lag',
    arg: timeIndex,
    offset: 1,
    defaultArg: null,
    frame: { kind: 'range' },
    type: timeMeta.type,
  };
  const previous: ColumnMeta = { name: 'previous_time', type: timeMeta.type, nullable: true };
  const lagged: LogicalPlan = {
    kind: 'window',
    input: present,
    partitionBy,
    orderBy: byTime,
    functions: [lag],
    columns: [...input.columns, previous],
  };
  const prev = col(n, previous);
  const starts: ScalarExpr = {
    kind: 'or',
    args: [
      { kind: 'call', fn: 'is_null', args: [prev], type: T.bool },
      { kind: 'call', fn: 'lt', args: [plus(prev), asWindowType(time)], type: T.bool },
    ],
    type: T.bool,
  };
  const markerMeta: ColumnMeta = { name: 'session_marker', type: windowType, nullable: true };
  const marked: LogicalPlan = {
    kind: 'project',
    input: lagged,
    exprs: [
      ...passThrough,
      { kind: 'case', whens: [{ when: starts, then: asWindowType(time) }], else: null, type: windowType },
    ],
    columns: [...input.columns, markerMeta],
  };
  // 2. The latest session start at or before the row: its session's start.
  const latestStart: WindowFn = {
    fn: 'max',
    arg: n,
    offset: 0,
    defaultArg: null,
    frame: { kind: 'range' },
    type: windowType,
  };
  const startMeta = windowColumns[0]!;
  const started: LogicalPlan = {
    kind: 'window',
    input: marked,
    partitionBy,
    orderBy: byTime,
    functions: [latestStart],
    columns: [...input.columns, markerMeta, startMeta],
  };
  const withStart: LogicalPlan = {
    kind: 'project',
    input: started,
    exprs: [...passThrough, col(n + 1, startMeta)],
    columns: [...input.columns, startMeta],
  };
  // 3. The session's last time: MAX over its whole partition (partition, window_start).
  const last: WindowFn = {
    fn: 'max',
    arg: timeIndex,
    offset: 0,
    defaultArg: null,
    frame: { kind: 'range' },
    type: timeMeta.type,
  };
  const lastMeta: ColumnMeta = { name: 'session_last', type: timeMeta.type, nullable: false };
  const ended: LogicalPlan = {
    kind: 'window',
    input: withStart,
    partitionBy: [...partitionBy, n],
    orderBy: [],
    functions: [last],
    columns: [...input.columns, startMeta, lastMeta],
  };
  const columns = [...input.columns, ...windowColumns];
  return {
    plan: {
      kind: 'project',
      input: ended,
      exprs: [...passThrough, col(n, startMeta), plus(col(n + 1, lastMeta))],
      columns,
    },
    columns,
  };
}
