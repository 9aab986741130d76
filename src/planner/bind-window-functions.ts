// Window functions in a select list bound to `window` LogicalPlan nodes: the calls sharing one
// PARTITION BY / ORDER BY become one node, their arguments, defaults and keys computed as trailing
// columns first (plain columns are used in place); `memo` learns each call's result column, so
// binding the select list reads it. A rank filtered by an outer WHERE becomes a TopN later
// (absorbRankBounds in bind-window.ts).
import { SluiceError, notSupported } from '../common/errors.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { printScalar } from '../common/scalar-expr.ts';
import type { SortKey } from '../common/top-n.ts';
import { T } from '../common/types.ts';
import type { WindowFn, WindowFnKind, WindowFrame } from '../common/window.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';
import { bindExpr } from './bind-expr.ts';
import { unify } from './bind-coerce.ts';
import type { Scope } from './bind-scope.ts';
import { refuseWindowIn } from './bind-window.ts';
import { bindsJournaled } from './journaled-binding.ts';
import { charKey } from './bind-char-key.ts';

type Call = Extract<Expr, { kind: 'function' }>;

/** Binds an aggregate call (its argument and PostgreSQL's result type), as GROUP BY would. */
export type BindAggregate = (
  e: Call,
  scope: Scope | null,
) => {
  readonly fn: string;
  readonly arg?: ScalarExpr;
  readonly column: ColumnMeta;
  readonly delimiter?: string;
};

/**
 * Adds one Window node per distinct window (PARTITION BY and ORDER BY) of `calls` over `plan`, in
 * the order the windows first appear; returns the plan with every call's column appended.
 */
export function bindWindowCalls(
  calls: readonly Call[],
  plan: LogicalPlan,
  scope: Scope | null,
  memo: WeakMap<Expr, ScalarExpr>,
  bindAggregate: BindAggregate,
): LogicalPlan {
  const bind = (e: Expr): ScalarExpr => {
    refuseWindowIn(e, 'window definitions');
    return bindExpr(e, { scope, aggregateContext: 'window definitions', memo });
  };
  // Group the calls by their window, bound once each.
  const groups = new Map<string, { calls: Call[]; partition: ScalarExpr[]; order: BoundOrder[] }>();
  for (const call of calls) {
    const over = call.over;
    if (over === undefined) continue;
    // a char partition key in its one spelling: 'ab ' and 'ab' one partition, as in PostgreSQL
    const partition = over.partitionBy.map((p) => charKey(bind(p)));
    const order = over.orderBy.map((o) => ({
      expr: bind(o.expr),
      desc: o.desc,
      nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first',
    }));
    const key =
      partition.map(printScalar).join(',') +
      '|' +
      order.map((o) => `${printScalar(o.expr)} ${o.desc} ${o.nullsFirst}`).join(',');
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { calls: [call], partition, order });
    else group.calls.push(call);
  }
  for (const group of groups.values()) plan = windowNode(group, plan, scope, memo, bind, bindAggregate);
  return plan;
}

interface BoundOrder {
  readonly expr: ScalarExpr;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

function windowNode(
  group: { readonly calls: readonly Call[]; readonly partition: ScalarExpr[]; readonly order: BoundOrder[] },
  plan: LogicalPlan,
  scope: Scope | null,
  memo: WeakMap<Expr, ScalarExpr>,
  bind: (e: Expr) => ScalarExpr,
  bindAggregate: BindAggregate,
): LogicalPlan {
  const width = plan.columns.length;
  const extra: ScalarExpr[] = [];
  const column = (e: ScalarExpr): number => {
    if (e.kind === 'col') return e.index;
    const printed = printScalar(e);
    const at = extra.findIndex((x) => printScalar(x) === printed);
    if (at >= 0) return width + at;
    extra.push(e);
    return width + extra.length - 1;
  };
  const partitionBy = group.partition.map(column);
  const orderBy: SortKey[] = group.order.map((o) => ({
    index: column(o.expr),
    desc: o.desc,
    nullsFirst: o.nullsFirst,
  }));
  const functions: WindowFn[] = [];
  const names: string[] = [];
  for (const call of group.calls) {
    const fn = windowFn(call, scope, bind, bindAggregate, column);
    functions.push(fn);
    names.push(call.name);
  }
  let input = plan;
  if (extra.length > 0) {
    const exprs: ScalarExpr[] = [
      ...plan.columns.map((c, index): ScalarExpr => ({ kind: 'col', index, name: c.name, type: c.type })),
      ...extra,
    ];
    const columns: ColumnMeta[] = [
      ...plan.columns,
      ...extra.map((e, k) => ({ name: `?window${width + k}`, type: e.type, nullable: true })),
    ];
    input = { kind: 'project', input: plan, exprs, columns };
  }
  const base = input.columns.length;
  const columns: ColumnMeta[] = [
    ...input.columns,
    ...functions.map((f, k) => ({
      name: names[k] as string,
      type: f.type,
      nullable: !(
        f.fn === 'row_number' ||
        f.fn === 'rank' ||
        f.fn === 'dense_rank' ||
        f.fn === 'ntile' ||
        f.fn === 'percent_rank' ||
        f.fn === 'cume_dist' ||
        f.fn.startsWith('count')
      ),
    })),
  ];
  group.calls.forEach((call, k) => {
    const f = functions[k] as WindowFn;
    memo.set(call, { kind: 'col', index: base + k, name: call.name, type: f.type });
  });
  return { kind: 'window', input, partitionBy, orderBy, functions, columns };
}

const RANKS: readonly string[] = ['row_number', 'rank', 'dense_rank'];

function windowFn(
  call: Call,
  scope: Scope | null,
  bind: (e: Expr) => ScalarExpr,
  bindAggregate: BindAggregate,
  column: (e: ScalarExpr) => number,
): WindowFn {
  const over = call.over;
  // PostgreSQL's range error folding a frame offset (`2147483647 + 1 PRECEDING`), which releases
  // before this one computed in unbounded integers: a journaled view keeps binding as it did.
  const rangeError = over?.frame?.rangeError;
  if (rangeError !== undefined && !bindsJournaled()) {
    throw new SluiceError('NUMERIC_OVERFLOW', rangeError.message, { position: rangeError.pos });
  }
  const frame: WindowFrame =
    over?.frame === undefined
      ? { kind: 'range' }
      : { kind: 'rows', start: over.frame.start, end: over.frame.end };
  const base = { offset: 0, defaultArg: null, frame };
  const arity = (lo: number, hi: number): void => {
    if (call.args.length < lo || call.args.length > hi || call.star) {
      throw new SluiceError(
        'UNKNOWN_FUNCTION',
        `function ${call.name} takes ${lo === hi ? `exactly ${lo}` : `${lo} to ${hi}`} argument${hi === 1 ? '' : 's'}`,
        { position: call.pos },
      );
    }
  };
  if (RANKS.includes(call.name)) {
    arity(0, 0);
    return { ...base, fn: call.name as WindowFnKind, arg: null, type: T.int64 };
  }
  if (call.name === 'percent_rank' || call.name === 'cume_dist') {
    arity(0, 0);
    return { ...base, fn: call.name, arg: null, type: T.float64 };
  }
  if (call.name === 'ntile') {
    arity(1, 1);
    const buckets = positiveConstant(call, call.args[0] as Expr, bind);
    return { ...base, fn: 'ntile', arg: null, offset: buckets, type: T.int32 };
  }
  if (call.name === 'first_value' || call.name === 'last_value' || call.name === 'nth_value') {
    arity(call.name === 'nth_value' ? 2 : 1, call.name === 'nth_value' ? 2 : 1);
    let arg = bind(call.args[0] as Expr);
    if (arg.type.kind === 'unknown') arg = { ...arg, type: T.text };
    const offset = call.name === 'nth_value' ? positiveConstant(call, call.args[1] as Expr, bind) : 0;
    return { ...base, fn: call.name, arg: column(arg), offset, type: arg.type };
  }
  if (call.name === 'lag' || call.name === 'lead') {
    arity(1, 3);
    let arg = bind(call.args[0] as Expr);
    const offsetAst = call.args[1];
    let offset = 1;
    if (offsetAst !== undefined) {
      const o = bind(offsetAst);
      const v = o.kind === 'const' && o.type.kind === 'int' ? Number(o.value) : NaN;
      if (
        o.kind !== 'const' ||
        o.type.kind !== 'int' ||
        o.value === null ||
        !Number.isSafeInteger(v) ||
        v < 0
      ) {
        throw notSupported(
          `${call.name.toUpperCase()} offset that is not a non-negative integer constant`,
          offsetAst.pos,
        );
      }
      offset = v;
    }
    let defaultArg: number | null = null;
    const defaultAst = call.args[2];
    if (defaultAst !== undefined) {
      // PostgreSQL: the value and the default are of one common type.
      const [a, d] = unify([arg, bind(defaultAst)], defaultAst.pos, call.name.toUpperCase()) as [
        ScalarExpr,
        ScalarExpr,
      ];
      arg = a;
      defaultArg = column(d);
    }
    if (arg.type.kind === 'unknown') arg = { ...arg, type: T.text };
    return { ...base, fn: call.name, arg: column(arg), offset, defaultArg, type: arg.type };
  }
  // COUNT/SUM/AVG/MIN/MAX/STRING_AGG: PostgreSQL's argument checks and result types, as for GROUP BY
  // (STRING_AGG's delimiter a constant).
  const { over: _over, ...plain } = call;
  const agg = bindAggregate(plain, scope);
  const fn = (agg.fn === 'count_star' ? 'count_star' : agg.fn) as WindowFnKind;
  refuseUnfoldableFrame(fn, agg.arg?.type.kind, frame, over?.frame?.pos ?? call.pos);
  return {
    ...base,
    fn,
    arg: agg.arg === undefined ? null : column(agg.arg),
    type: agg.column.type,
    ...(fn === 'string_agg' ? { delimiter: agg.delimiter ?? '' } : {}),
  };
}

/** The largest ROWS frame (in rows) a SUM/AVG of floats or numerics may fold per row. */
const MAX_FOLDED_FRAME = 1000;

/**
 * SUM/AVG of floats and numerics cannot take a row out of a frame exactly (a difference of float
 * sums is not their sum, nor of numerics its scale), nor STRING_AGG (its text is rebuilt), so a
 * frame that drops rows at its start is folded row by row for every row it moves over, as
 * PostgreSQL does: refused where that is not bounded work — a frame of more than MAX_FOLDED_FRAME
 * rows, or one ending at UNBOUNDED FOLLOWING for floats (numerics are summed, and texts joined,
 * backward from the partition's end, which is exact).
 */
function refuseUnfoldableFrame(
  fn: WindowFnKind,
  argKind: string | undefined,
  frame: WindowFrame,
  pos: Pos,
): void {
  const text = fn === 'string_agg';
  if (!text && ((fn !== 'sum' && fn !== 'avg') || (argKind !== 'float' && argKind !== 'numeric'))) return;
  if (frame.kind !== 'rows' || frame.start === null) return;
  const value = text ? 'a text' : argKind === 'float' ? 'a floating-point' : 'a numeric';
  const name = fn.toUpperCase();
  const integer = text ? '' : ', or an integer argument';
  if (frame.end === null) {
    if (argKind === 'numeric' || text) return;
    throw notSupported(
      `ROWS frame from ${frame.start === 0 ? 'CURRENT ROW' : frame.start < 0 ? `${-frame.start} PRECEDING` : `${frame.start} FOLLOWING`} to UNBOUNDED FOLLOWING for ${name} of ${value} value`,
      pos,
      'start the frame at UNBOUNDED PRECEDING, end it a number of rows after the current one, or cast the argument to numeric',
    );
  }
  const rows = frame.end - frame.start + 1;
  if (rows <= MAX_FOLDED_FRAME + 1) return;
  if (frame.end === 0) {
    throw notSupported(
      `ROWS ${-frame.start} PRECEDING (over ${MAX_FOLDED_FRAME}) for ${name} of ${value} value`,
      pos,
      `use a smaller frame${text ? ' or' : ','} ROWS UNBOUNDED PRECEDING${integer}`,
    );
  }
  throw notSupported(
    `ROWS frame of ${rows} rows (over ${MAX_FOLDED_FRAME + 1}) for ${name} of ${value} value`,
    pos,
    `use a smaller frame${text ? ' or' : ','} one from UNBOUNDED PRECEDING${integer}`,
  );
}

/** NTILE's buckets and NTH_VALUE's n: a positive integer constant (PostgreSQL's error when not positive). */
function positiveConstant(call: Call, e: Expr, bind: (e: Expr) => ScalarExpr): number {
  const bound = bind(e);
  const v =
    bound.kind === 'const' && bound.type.kind === 'int' && bound.value !== null ? Number(bound.value) : NaN;
  if (
    bound.kind !== 'const' ||
    bound.type.kind !== 'int' ||
    bound.value === null ||
    !Number.isSafeInteger(v)
  ) {
    throw notSupported(`${call.name.toUpperCase()} argument that is not an integer constant`, e.pos);
  }
  if (v <= 0) {
    throw new SluiceError('INVALID_DEFINITION', `argument of ${call.name} must be greater than zero`, {
      position: e.pos,
    });
  }
  return v;
}
