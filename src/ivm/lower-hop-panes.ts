// Pane sharing for HOP (Flink's slice sharing): a GROUP BY over HOP(t, ts, slide, size) that keeps
// window_start/window_end as keys and whose aggregates combine exactly is lowered as a Reduce per
// (keys, pane of width slide) computing partial aggregates, a FlatMap of each pane's partial row into
// the size/slide windows holding the pane, and a second Reduce per (keys, window) combining them —
// so a row is folded once, and the windows see one change per pane and batch, not one per row. Under
// EMIT ON WINDOW CLOSE the windows hold pane partials (not rows) and a pane is freed with its last window.
import type { AggregateCall, LogicalPlan } from '../planner/logical-plan.ts';
import type { HopGenerator } from '../common/expand.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { columnsOf } from '../common/scalar-expr.ts';
import { T, type SqlType } from '../common/types.ts';
import { hopWindowCount, intervalMicros } from '../common/time/time-window.ts';
import type { AggregateSpec, ColumnSpec, DataflowNode, WindowClose } from './dataflow-plan.ts';
import { columnAppender } from './projection-columns.ts';

type Aggregate = Extract<LogicalPlan, { kind: 'aggregate' }>;
type Expand = Extract<LogicalPlan, { kind: 'expand' }>;

/** What the lowering of one plan lends this rewrite. */
export interface PaneLowering {
  readonly view: string;
  readonly lower: (p: LogicalPlan) => DataflowNode;
  readonly add: <N extends DataflowNode>(make: (id: number) => N) => N;
  /** Whether `p` is reached more than once (then it is lowered once, not rewritten). */
  readonly isShared: (p: LogicalPlan) => boolean;
}

/** The HOP under `p` (directly, or under a WHERE not reading the window columns), or null. */
function hopUnder(p: Aggregate): { expand: Expand; filter: ScalarExpr | null } | null {
  let input = p.input;
  let filter: ScalarExpr | null = null;
  if (input.kind === 'filter') {
    filter = input.predicate;
    input = input.input;
  }
  if (input.kind !== 'expand' || input.generator.kind !== 'hop') return null;
  const width = input.input.columns.length;
  if (filter !== null && readsFrom(filter, width)) return null;
  return { expand: input, filter };
}

function readsFrom(e: ScalarExpr, first: number): boolean {
  for (const c of columnsOf(e)) if (c >= first) return true;
  return false;
}

/**
 * Types whose equal values always print alike: MIN/MAX of a pane's minimums is then the same value
 * (and text) as MIN/MAX over the rows. Not numeric (1.5, 1.50), floats (-0, 0), intervals, jsonb,
 * arrays, whose minimum among equals depends on the order values came in.
 */
function exactlyOrdered(t: SqlType | undefined): boolean {
  if (t === undefined) return false;
  return (
    t.kind !== 'numeric' &&
    t.kind !== 'float' &&
    t.kind !== 'interval' &&
    t.kind !== 'jsonb' &&
    t.kind !== 'array'
  );
}

/**
 * Whether the aggregate's partial results per pane combine exactly into the window's result: COUNT,
 * SUM and AVG of integers and numerics (exact sums; float sums would round in another order), MIN
 * and MAX of exactly ordered types; FILTER is already in the argument. Not DISTINCT or ordered.
 */
function shareable(a: AggregateCall, width: number): boolean {
  if (a.distinct || a.orderBy !== undefined) return false;
  if (a.arg !== undefined && readsFrom(a.arg, width)) return false;
  const t = a.arg?.type;
  switch (a.fn) {
    case 'count_star':
    case 'count':
      return true;
    case 'sum':
    case 'avg':
      return t?.kind === 'int' || t?.kind === 'numeric';
    case 'min':
    case 'max':
      return exactlyOrdered(t);
    default:
      return false;
  }
}

/** SUM over a column of partial sums or counts, typed as its result (bigint stays an exact integer). */
function sumOf(column: number, argType: SqlType, outputType: SqlType): AggregateSpec {
  return { fn: 'sum', distinct: false, argColumn: column, argType, outputType, strategy: 'invertible' };
}

/**
 * Lowers `p` with pane sharing, or returns null when it does not apply (no HOP under it, a HOP of one
 * window per row, a group key
 * computed from a window column, a window column read by an argument, an aggregate that does not
 * combine exactly, or a HOP reached twice).
 */
export function lowerHopPanes(
  p: Aggregate,
  ctx: PaneLowering,
  close: WindowClose | null,
): DataflowNode | null {
  const found = hopUnder(p);
  if (found === null) return null;
  const { expand, filter } = found;
  if (ctx.isShared(expand) || (p.input !== expand && ctx.isShared(p.input))) return null;
  const g = expand.generator as HopGenerator;
  // size = slide: one window per pane, nothing to share (the panes would only add a level).
  if ((hopWindowCount(g.slide, g.size) ?? 1) <= 1) return null;
  const width = expand.input.columns.length;
  // Group keys: window_start (#width), window_end (#width+1), or expressions of the input row.
  const windowKey = (e: ScalarExpr): 0 | 1 | null =>
    e.kind === 'col' && (e.index === width || e.index === width + 1) ? ((e.index - width) as 0 | 1) : null;
  if (!p.groupKeys.some((k) => windowKey(k) !== null)) return null;
  if (p.groupKeys.some((k) => windowKey(k) === null && readsFrom(k, width))) return null;
  if (!p.aggregates.every((a) => shareable(a, width))) return null;

  const slideMicros = intervalMicros(g.slide);
  const sizeMicros = intervalMicros(g.size);
  // Pane close points are doubles of µs: windows of centuries keep the one-row-per-window plan.
  if (close !== null && (typeof slideMicros !== 'number' || typeof sizeMicros !== 'number')) return null;

  const input = ctx.lower(expand.input);
  const windowType: SqlType = g.tz ? T.timestamptz : T.timestamp;

  // Level 1: Reduce per [row keys..., pane_start], the partials after them.
  const rowKeys = p.groupKeys.filter((k) => windowKey(k) === null);
  const paneStart: ScalarExpr = {
    kind: 'call',
    fn: 'tumble_start',
    args: [
      g.time,
      { kind: 'const', value: g.slide, type: T.interval },
      { kind: 'const', value: g.offset, type: T.interval },
    ],
    type: windowType,
  };
  // A row whose time is NULL is in no window (HOP drops it): it holds no pane either.
  const timeKnown: ScalarExpr = { kind: 'call', fn: 'is_not_null', args: [g.time], type: T.bool };
  const paneFilter: ScalarExpr =
    filter === null ? timeKnown : { kind: 'and', args: [filter, timeKnown], type: T.bool };
  const project: ScalarExpr[] = [...rowKeys, paneStart];
  const column = columnAppender(project);
  const paneKeys = rowKeys.length + 1;
  const partials: AggregateSpec[] = [];
  const partialNames: string[] = [];
  // The partial columns (in the pane Reduce's output) each original aggregate combines.
  const partialOf = (spec: AggregateSpec, name: string): number => {
    partials.push(spec);
    partialNames.push(name);
    return paneKeys + partials.length - 1;
  };
  const combine: AggregateSpec[] = [];
  const combineNames: string[] = [];
  /** Per original aggregate: its combined column, or for AVG its [sum, count] columns. */
  const results: (number | readonly [number, number])[] = [];
  const invertible = (fn: AggregateSpec['fn'], arg: ScalarExpr | undefined, out: SqlType): AggregateSpec => ({
    fn,
    distinct: false,
    argColumn: arg === undefined ? null : column(arg),
    argType: arg?.type ?? null,
    outputType: out,
    strategy: fn === 'min' || fn === 'max' ? 'multiset' : 'invertible',
  });
  const combined = (spec: AggregateSpec, name: string): number => {
    combine.push(spec);
    combineNames.push(name);
    return p.groupKeys.length + combine.length - 1;
  };
  p.aggregates.forEach((a, i) => {
    const name = `${a.column.name}_${i}`;
    const type = a.column.type;
    if (a.fn === 'avg') {
      const arg = a.arg as ScalarExpr;
      // PostgreSQL: sum(smallint/integer) is bigint, sum(bigint/numeric) numeric.
      const sumType = arg.type.kind === 'int' && arg.type.bits !== 64 ? T.int64 : T.numeric;
      const s = partialOf(invertible('sum', arg, sumType), `sum_${i}`);
      const n = partialOf(invertible('count', arg, T.int64), `count_${i}`);
      results.push([
        combined(sumOf(s, sumType, T.numeric), `sum_${i}`),
        combined(sumOf(n, T.int64, T.int64), `count_${i}`),
      ]);
      return;
    }
    const partial = partialOf(invertible(a.fn, a.arg, type), name);
    if (a.fn === 'min' || a.fn === 'max') {
      const spec: AggregateSpec = {
        fn: a.fn,
        distinct: false,
        argColumn: partial,
        argType: type,
        outputType: type,
        strategy: 'multiset',
      };
      results.push(combined(spec, name));
      return;
    }
    // COUNT: the sum of the panes' counts; SUM: of their sums (NULL when every one is NULL).
    results.push(combined(sumOf(partial, type, type), name));
  });
  const paneColumns: ColumnSpec[] = [
    ...rowKeys.map((k, i) => ({ name: keyName(p, k, i), type: k.type })),
    { name: 'pane_start', type: windowType },
    ...partials.map((s, i) => ({ name: partialNames[i] as string, type: s.outputType })),
  ];
  const panes = ctx.add((id) => ({
    id,
    kind: 'reduce' as const,
    inputs: [input.id] as const,
    fused: {
      filter: paneFilter,
      project,
      columns: project.map((e, i) => ({
        name: i < paneKeys ? (paneColumns[i]?.name ?? `key${i}`) : `arg${i - paneKeys}`,
        type: e.type,
      })),
    },
    keyCount: paneKeys,
    aggregates: partials,
    columns: paneColumns,
    stateId: `${ctx.view}/reduce${id}`,
    // EMIT ON WINDOW CLOSE: a pane is dropped once its last window closed (ops/pane-close-op.ts).
    ...(close === null
      ? {}
      : {
          closePanes: {
            table: close.table,
            keyIndex: rowKeys.length,
            slideMicros: slideMicros as number,
            sizeMicros: sizeMicros as number,
            ...((close.allowedLateness ?? 0) > 0 ? { allowedLateness: close.allowedLateness } : {}),
          },
        }),
  }));

  // Level 2: each pane's partial row into the windows holding the pane.
  const paneTime: ScalarExpr = { kind: 'col', index: rowKeys.length, name: 'pane_start', type: windowType };
  const windows = ctx.add((id) => ({
    id,
    kind: 'flatmap' as const,
    inputs: [panes.id] as const,
    generator: { ...g, time: paneTime },
    columns: [
      ...paneColumns,
      { name: 'window_start', type: windowType },
      { name: 'window_end', type: windowType },
    ],
  }));

  // Level 3: Reduce per the view's [keys...] (in its order) combining the partials.
  let rowKey = 0;
  const combineProject: ScalarExpr[] = p.groupKeys.map((k, i) => {
    const w = windowKey(k);
    const index = w === null ? rowKey++ : paneColumns.length + w;
    return { kind: 'col', index, name: p.columns[i]?.name ?? `key${i}`, type: k.type };
  });
  const partialColumn = (index: number): number => {
    combineProject.push({
      kind: 'col',
      index,
      name: paneColumns[index]?.name ?? '?',
      type: paneColumns[index]?.type ?? T.unknown,
    });
    return combineProject.length - 1;
  };
  const combineSpecs = combine.map((s) => ({ ...s, argColumn: partialColumn(s.argColumn as number) }));
  const keyColumns = p.columns.slice(0, p.groupKeys.length).map((c) => ({ name: c.name, type: c.type }));
  const hasAvg = p.aggregates.some((a) => a.fn === 'avg');
  const combineColumns: ColumnSpec[] = hasAvg
    ? [...keyColumns, ...combine.map((s, i) => ({ name: combineNames[i] as string, type: s.outputType }))]
    : p.columns.map((c) => ({ name: c.name, type: c.type }));
  const reduce = ctx.add((id) => ({
    id,
    kind: 'reduce' as const,
    inputs: [windows.id] as const,
    fused: {
      filter: null,
      project: combineProject,
      columns: combineProject.map((e, i) => ({
        name: i < p.groupKeys.length ? (keyColumns[i]?.name ?? `key${i}`) : `arg${i - p.groupKeys.length}`,
        type: e.type,
      })),
    },
    keyCount: p.groupKeys.length,
    aggregates: combineSpecs,
    columns: combineColumns,
    stateId: `${ctx.view}/reduce${id}`,
    // EMIT ON WINDOW CLOSE: the partial rows held per window, combined once when it closes.
    ...(close === null ? {} : { emitOnClose: close }),
  }));
  if (!hasAvg) return reduce;

  // AVG = combined sum / combined count, as the one-level AVG divides (numeric; NULL with no values).
  const col = (index: number): ScalarExpr => ({
    kind: 'col',
    index,
    name: combineColumns[index]?.name ?? '?',
    type: combineColumns[index]?.type ?? T.unknown,
  });
  const finalExprs: ScalarExpr[] = [
    ...keyColumns.map((_, i) => col(i)),
    ...results.map((r): ScalarExpr => {
      if (typeof r === 'number') return col(r);
      const count: ScalarExpr = { kind: 'cast', operand: col(r[1]), type: T.numeric };
      return { kind: 'call', fn: 'div', args: [col(r[0]), count], type: T.numeric };
    }),
  ];
  return ctx.add((id) => ({
    id,
    kind: 'map' as const,
    inputs: [reduce.id] as const,
    filter: null,
    project: finalExprs,
    columns: p.columns.map((c) => ({ name: c.name, type: c.type })),
  }));
}

function keyName(p: Aggregate, k: ScalarExpr, i: number): string {
  const at = p.groupKeys.indexOf(k);
  return p.columns[at]?.name ?? `key${i}`;
}
