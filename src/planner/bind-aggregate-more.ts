// Binding of the aggregates beyond COUNT/SUM/AVG/MIN/MAX: BOOL_AND, BOOL_OR, EVERY and the variance
// family (VAR_POP, VAR_SAMP, VARIANCE, STDDEV_POP, STDDEV_SAMP, STDDEV), with PostgreSQL's result types.
import { type SluiceError, type SourcePosition, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T } from '../common/types.ts';
import type { AggregateCall, AggregateFn } from './logical-plan.ts';

/** SQL name → the aggregate it computes (EVERY is BOOL_AND; VARIANCE and STDDEV the sample forms). */
export const MORE_AGGREGATES: ReadonlyMap<string, AggregateFn> = new Map<string, AggregateFn>([
  ['bool_and', 'bool_and'],
  ['bool_or', 'bool_or'],
  ['every', 'bool_and'],
  ['var_pop', 'var_pop'],
  ['var_samp', 'var_samp'],
  ['variance', 'var_samp'],
  ['stddev_pop', 'stddev_pop'],
  ['stddev_samp', 'stddev_samp'],
  ['stddev', 'stddev_samp'],
]);

/** Whether `fn` is one of the variance family (numeric or double precision result). */
export function isVarianceFn(fn: string): boolean {
  return fn === 'var_pop' || fn === 'var_samp' || fn === 'stddev_pop' || fn === 'stddev_samp';
}

/**
 * Binds `name(arg)` for a name in MORE_AGGREGATES. `mismatch` is the caller's "function does not
 * exist" error for an argument type the aggregate does not take.
 */
export function bindMoreAggregate(
  name: string,
  arg: ScalarExpr,
  distinct: boolean,
  pos: SourcePosition | undefined,
  mismatch: () => SluiceError,
): AggregateCall {
  const fn = MORE_AGGREGATES.get(name) as AggregateFn;
  if (fn === 'bool_and' || fn === 'bool_or') {
    if (arg.type.kind !== 'bool') throw mismatch();
    // DISTINCT cannot change a conjunction or disjunction: the same aggregate.
    return { fn, distinct: false, arg, column: { name, type: T.bool, nullable: true } };
  }
  const k = arg.type.kind;
  if (k !== 'int' && k !== 'numeric' && k !== 'float') throw mismatch();
  if (distinct) {
    throw notSupported(
      `${name.toUpperCase()}(DISTINCT ...)`,
      pos,
      'aggregate over SELECT DISTINCT in a derived table',
    );
  }
  // PostgreSQL: numeric for integer and numeric arguments, double precision for real and double.
  const type = k === 'float' ? T.float64 : T.numeric;
  return { fn, distinct: false, arg, column: { name, type, nullable: true } };
}
