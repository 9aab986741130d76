// Binds a window table function of FROM (TUMBLE, HOP, SESSION) over its bound input relation: the
// input's columns plus window_start and window_end. TUMBLE is a projection (a stateless Map computing
// tumble_start); HOP an `expand` (one row per window holding the row, a stateless FlatMap); SESSION
// window functions over the rows (bind-session-window.ts). Sizes, slides, offsets and gaps are
// constant intervals without months, checked here with their positions.
import { notSupported, SluiceError } from '../common/errors.ts';
import { MAX_EXPAND_ROWS, type HopGenerator } from '../common/expand.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { columnsOf, compileScalar } from '../common/scalar-expr.ts';
import { hopWindowCount, intervalMicros } from '../common/time/time-window.ts';
import { Interval } from '../common/time/interval.ts';
import { T, typeName, type SqlType } from '../common/types.ts';
import type { Expr, Pos, WindowTvfRef } from '../parser/ast.ts';
import { bindSessionWindow } from './bind-session-window.ts';
import type { ColumnMeta } from './catalog.ts';
import { bindExpr } from './bind-expr.ts';
import type { LogicalPlan } from './logical-plan.ts';

export const WINDOW_COLUMNS = ['window_start', 'window_end'] as const;

/** `input` (the relation's plan and its columns) with the window columns appended. */
export function bindWindowTvf(
  ref: WindowTvfRef,
  input: { readonly plan: LogicalPlan; readonly columns: readonly ColumnMeta[] },
  relationName: string,
): { plan: LogicalPlan; columns: ColumnMeta[] } {
  const name = ref.fn.toUpperCase();
  const relation = relationName === '' ? 'the subquery' : `relation "${relationName}"`;
  for (const c of input.columns) {
    if ((WINDOW_COLUMNS as readonly string[]).includes(c.name)) {
      throw new SluiceError(
        'DUPLICATE_COLUMN',
        `column "${c.name}" of ${relation} conflicts with the column ${name} adds`,
        { position: ref.source.pos, hint: `rename it in a view or subquery: SELECT ${c.name} AS ... ` },
      );
    }
  }
  const timeIndex = timeColumnOf(ref, input.columns, relation);
  const timeMeta = input.columns[timeIndex]!;
  const timeType = timeMeta.type;
  const tz = timeType.kind === 'timestamptz';
  const windowType: SqlType = tz ? T.timestamptz : T.timestamp;
  const time: ScalarExpr = { kind: 'col', index: timeIndex, name: timeMeta.name, type: timeType };

  const counts = ref.fn === 'tumble' ? [1, 2] : ref.fn === 'hop' ? [2, 3] : [1, 1];
  const [fewest, most] = counts as [number, number];
  if (ref.args.length < fewest || ref.args.length > most) {
    const what =
      ref.fn === 'tumble'
        ? 'a time column, a window size and an optional offset'
        : ref.fn === 'hop'
          ? 'a time column, a window slide, a window size and an optional offset'
          : 'a time column and a gap';
    throw new SluiceError(
      'INVALID_DEFINITION',
      `${name} takes a relation, ${what}, not ${ref.args.length + 2} arguments`,
      { position: ref.args[most]?.pos ?? ref.pos },
    );
  }
  const intervals = ref.args.map((a, i) => constantInterval(a, name, argumentName(ref.fn, i)));
  const offset = intervals[fewest] ?? new Interval(0, 0, 0);
  const nullable = timeMeta.nullable;
  const windowColumns: ColumnMeta[] = WINDOW_COLUMNS.map((n) => ({ name: n, type: windowType, nullable }));

  if (ref.fn === 'session') {
    const gap = positive(intervals[0]!, ref.args[0]!, name, 'gap');
    const partitionBy = (ref.partitionBy ?? []).map((p) => columnIndex(p, input.columns, relation));
    const sessionColumns = windowColumns.map((c) => ({ ...c, nullable: false }));
    return bindSessionWindow(input, timeIndex, partitionBy, gap, sessionColumns);
  }

  if (ref.fn === 'tumble') {
    const size = positive(intervals[0]!, ref.args[0]!, name, 'window size');
    const sizeConst: ScalarExpr = { kind: 'const', value: size, type: T.interval };
    const start: ScalarExpr = {
      kind: 'call',
      fn: 'tumble_start',
      args: [time, sizeConst, { kind: 'const', value: offset, type: T.interval }],
      type: windowType,
    };
    const end: ScalarExpr = { kind: 'call', fn: 'time_add', args: [start, sizeConst], type: windowType };
    const exprs: ScalarExpr[] = [
      ...input.columns.map((c, i): ScalarExpr => ({ kind: 'col', index: i, name: c.name, type: c.type })),
      start,
      end,
    ];
    const columns = [...input.columns, ...windowColumns];
    return { plan: { kind: 'project', input: input.plan, exprs, columns }, columns };
  }

  const slide = positive(intervals[0]!, ref.args[0]!, name, 'window slide');
  const size = positive(intervals[1]!, ref.args[1]!, name, 'window size');
  const count = hopWindowCount(slide, size);
  if (count === null) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `${name}'s window size ${size.toString()} is not a whole multiple of its window slide ${slide.toString()}`,
      {
        position: ref.args[1]!.pos,
        hint: 'each row falls in size / slide windows: choose a size that divides evenly',
      },
    );
  }
  if (count > MAX_EXPAND_ROWS) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `${name} would put each row in ${count} windows, more than ${MAX_EXPAND_ROWS}`,
      {
        position: ref.args[1]!.pos,
        hint: 'use a longer slide or a shorter size (size / slide at most 1000)',
      },
    );
  }
  // RisingWave drops a row whose time is NULL under its hop window (it falls in no window).
  const generator: HopGenerator = { kind: 'hop', time, slide, size, offset, tz };
  const columns = [...input.columns, ...windowColumns.map((c) => ({ ...c, nullable: false }))];
  return { plan: { kind: 'expand', input: input.plan, generator, columns }, columns };
}

function argumentName(fn: WindowTvfRef['fn'], i: number): string {
  const names =
    fn === 'tumble'
      ? ['window size', 'offset']
      : fn === 'hop'
        ? ['window slide', 'window size', 'offset']
        : ['gap'];
  return names[i] ?? 'argument';
}

/** The column of the relation a name denotes (the time column, a PARTITION BY column). */
function columnIndex(
  { name, pos }: { readonly name: string; readonly pos: Pos },
  columns: readonly ColumnMeta[],
  relation: string,
): number {
  const found = columns.flatMap((c, i) => (c.name === name ? [i] : []));
  if (found.length === 0) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist in ${relation}`, {
      position: pos,
    });
  }
  if (found.length > 1) {
    throw new SluiceError('AMBIGUOUS_COLUMN', `column reference "${name}" is ambiguous`, { position: pos });
  }
  return found[0]!;
}

function timeColumnOf(ref: WindowTvfRef, columns: readonly ColumnMeta[], relation: string): number {
  const { name, pos } = ref.timeColumn;
  const index = columnIndex(ref.timeColumn, columns, relation);
  const type = columns[index]!.type;
  if (type.kind !== 'timestamp' && type.kind !== 'timestamptz' && type.kind !== 'date') {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `the time column of ${ref.fn.toUpperCase()} must be of type timestamp, timestamptz or date, but "${name}" is ${typeName(type)}`,
      { position: pos },
    );
  }
  return index;
}

/** A constant INTERVAL argument (any constant expression), without months. */
function constantInterval(e: Expr, fn: string, what: string): Interval {
  const bound = bindExpr(e, {
    scope: { relationNames: [], relationLabel: `the arguments of ${fn}`, columns: [] },
    aggregateContext: `the arguments of ${fn}`,
  });
  if (bound.type.kind !== 'interval') {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `the ${what} of ${fn} must be an interval, not ${typeName(bound.type)}`,
      {
        position: e.pos,
        hint: "write INTERVAL '10' SECOND or INTERVAL '1 hour'",
      },
    );
  }
  if (columnsOf(bound).size > 0) {
    throw new SluiceError('INVALID_DEFINITION', `the ${what} of ${fn} must be a constant`, {
      position: e.pos,
    });
  }
  const value = compileScalar(bound)([]);
  if (!(value instanceof Interval)) {
    throw new SluiceError('INVALID_DEFINITION', `the ${what} of ${fn} must not be NULL`, { position: e.pos });
  }
  if (value.months !== 0) {
    throw notSupported(
      `a ${what} of ${fn} in months or years`,
      e.pos,
      "months have no fixed length; use days, hours, minutes or seconds (INTERVAL '30' DAY)",
    );
  }
  return value;
}

function positive(iv: Interval, e: Expr, fn: string, what: string): Interval {
  const micros = intervalMicros(iv);
  if (micros <= 0) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `the ${what} of ${fn} must be positive, not ${iv.toString()}`,
      {
        position: e.pos,
      },
    );
  }
  return iv;
}
