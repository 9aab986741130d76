// Temporal filters: the conjuncts of a view's WHERE that compare a row's time with the clock —
// `ts > now() - interval '1 hour'`, `now() < valid_until`, `ts + interval '5' minute >= mz_now()` —
// become one TemporalFilter node, whose rows enter and leave as the epochs' logical clock crosses
// their bounds (src/ivm/ops/temporal-filter-op.ts). Any other use of the clock in a view is refused.
import { andAll, andConjuncts } from './bind-subquery.ts';
import { notSupported } from '../common/errors.ts';
import { scalarChildren, type ScalarExpr } from '../common/scalar-expr.ts';
import type { TemporalBound, TemporalOp } from '../common/temporal-bound.ts';
import { T } from '../common/types.ts';
import { USECS_PER_DAY } from '../common/time/calendar.ts';
import { Interval } from '../common/time/interval.ts';
import type { Expr, SelectStmt } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { bindExpr } from './bind-expr.ts';
import type { Scope } from './bind-scope.ts';
import { NOW_FUNCTIONS, TEMPORAL_HINT } from './bind-time.ts';
import type { LogicalPlan } from './logical-plan.ts';

/** The clock functions a temporal filter may compare with: the current timestamptz. */
const CLOCK_FUNCTIONS = new Set([
  'now',
  'current_timestamp',
  'transaction_timestamp',
  'statement_timestamp',
  'mz_now',
]);

function isClockCall(e: Expr): boolean {
  return e.kind === 'function' && NOW_FUNCTIONS.has(e.name) && e.over === undefined;
}

/** The first clock call in `e` (pre-order, subqueries included), or undefined. */
export function findClockCall(e: Expr): Expr | undefined {
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (isClockCall(x)) return x;
    stack.push(...exprChildren(x).reverse());
  }
  return undefined;
}

/**
 * A view's plain SELECT split into its WHERE without the conjuncts that read the clock, and those
 * conjuncts (bound later by `bindTemporalFilter`). A set operation's or nested query's clock is
 * left in place, for `refuseNowInView` to refuse.
 */
export function splitTemporal(stmt: SelectStmt): {
  readonly stmt: SelectStmt;
  readonly temporal: readonly Expr[];
} {
  if (stmt.setOp !== undefined || stmt.where === undefined) return { stmt, temporal: [] };
  const parts = andConjuncts(stmt.where);
  const temporal = parts.filter((p) => findClockCall(p) !== undefined);
  if (temporal.length === 0) return { stmt, temporal: [] };
  const rest = andAll(parts.filter((p) => !temporal.includes(p)));
  const { where: _where, ...others } = stmt;
  return { stmt: rest === undefined ? others : { ...others, where: rest }, temporal };
}

/** Stands for the clock while a conjunct is bound; never evaluated. */
const CLOCK: ScalarExpr = { kind: 'col', index: -1, name: 'now()', type: T.timestamptz };

function readsClock(s: ScalarExpr): boolean {
  const stack: ScalarExpr[] = [s];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x === CLOCK) return true;
    stack.push(...scalarChildren(x));
  }
  return false;
}

/** A constant interval of days and time (a month has no fixed length) in µs, else null. */
function intervalMicros(s: ScalarExpr): number | null {
  if (s.kind !== 'const' || !(s.value instanceof Interval) || s.value.months !== 0) return null;
  return s.value.days * USECS_PER_DAY + s.value.micros;
}

/** The µs `s` adds to the clock when it is `now() ± constant intervals`, else null. */
function clockOffset(s: ScalarExpr): number | null {
  if (s === CLOCK) return 0;
  if (s.kind === 'cast' && (s.type.kind === 'timestamptz' || s.type.kind === 'timestamp'))
    return clockOffset(s.operand); // the session zone is UTC: the same instant
  if (s.kind !== 'call' || s.args.length !== 2 || (s.fn !== 'time_add' && s.fn !== 'time_sub')) return null;
  const [a, b] = s.args as [ScalarExpr, ScalarExpr];
  if (readsClock(a)) {
    const base = clockOffset(a);
    const iv = intervalMicros(b);
    if (base === null || iv === null) return null;
    return s.fn === 'time_add' ? base + iv : base - iv;
  }
  if (s.fn !== 'time_add') return null;
  const iv = intervalMicros(a);
  const base = clockOffset(b);
  return iv === null || base === null ? null : iv + base;
}

const FLIP: Readonly<Record<TemporalOp, TemporalOp>> = { lt: 'gt', le: 'ge', gt: 'lt', ge: 'le', eq: 'eq' };

function isTemporalOp(fn: string): fn is TemporalOp {
  return fn === 'lt' || fn === 'le' || fn === 'gt' || fn === 'ge' || fn === 'eq';
}

/** One conjunct as `row expr op now() + offset`, or NOT_SUPPORTED at its clock call. */
function bindBound(conjunct: Expr, scope: Scope | null): TemporalBound {
  const clockCall = findClockCall(conjunct) as Expr;
  const refuse = (what: string): never => {
    throw notSupported(what, clockCall.pos, TEMPORAL_HINT);
  };
  const bound = bindExpr(conjunct, {
    scope,
    aggregateContext: 'WHERE',
    intercept: (e) => {
      if (!isClockCall(e)) return undefined;
      if (e.kind === 'function' && !CLOCK_FUNCTIONS.has(e.name))
        refuse(`${e.name.toUpperCase()} in a materialized view`);
      return CLOCK;
    },
  });
  if (bound.kind !== 'call' || bound.args.length !== 2 || !isTemporalOp(bound.fn))
    return refuse('this use of the clock in a materialized view');
  const [l, r] = bound.args as [ScalarExpr, ScalarExpr];
  const clockLeft = readsClock(l);
  if (clockLeft === readsClock(r)) return refuse('a condition reading the clock on both sides');
  const row = clockLeft ? r : l;
  const offset = clockOffset(clockLeft ? l : r);
  if (offset === null)
    return refuse('a clock expression other than NOW() plus or minus a constant interval of days and time');
  const kind = row.type.kind;
  if (kind !== 'timestamptz' && kind !== 'timestamp' && kind !== 'date')
    return refuse(`comparing the clock with a value of type ${kind}`);
  return { expr: row, op: clockLeft ? FLIP[bound.fn] : bound.fn, offset };
}

/** The TemporalFilter over `plan` for a view's clock conjuncts (see splitTemporal). */
export function bindTemporalFilter(
  conjuncts: readonly Expr[],
  plan: LogicalPlan,
  scope: Scope | null,
): LogicalPlan {
  if (conjuncts.length === 0) return plan;
  const bounds = conjuncts.map((c) => bindBound(c, scope));
  return { kind: 'temporalFilter', input: plan, bounds, columns: plan.columns };
}
