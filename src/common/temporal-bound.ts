// A temporal filter's bound, shared by the LogicalPlan and the DataflowPlan: `expr op now() + offset`
// over a row, with `now()` the epoch's logical clock. For one row each bound is an interval of clock
// values [enter, leave) during which the row passes; a filter's bounds intersect.
import type { ScalarExpr } from './scalar-expr.ts';
import { printScalar } from './scalar-expr.ts';
import { Interval, formatInterval } from './time/interval.ts';

export type TemporalOp = 'lt' | 'le' | 'gt' | 'ge' | 'eq';

export interface TemporalBound {
  /** Over the input row; a date, timestamp or timestamptz (read as UTC µs). */
  readonly expr: ScalarExpr;
  readonly op: TemporalOp;
  /** µs added to the clock (`now() - interval '1 hour'` is −3 600 000 000). */
  readonly offset: number;
}

/** The clock values while a row whose bound expression is `v` µs passes: [enter, leave). */
export function boundWindow(op: TemporalOp, v: number, offset: number): readonly [number, number] {
  const at = v - offset;
  switch (op) {
    case 'gt': // v > t + k  ⟺  t < v − k
      return [-Infinity, at];
    case 'ge': // t ≤ v − k
      return [-Infinity, at + 1];
    case 'lt': // t > v − k
      return [at + 1, Infinity];
    case 'le': // t ≥ v − k
      return [at, Infinity];
    case 'eq':
      return [at, at + 1];
  }
}

const SYMBOL: Readonly<Record<TemporalOp, string>> = { lt: '<', le: '<=', gt: '>', ge: '>=', eq: '=' };

/** `#1:ts > now() - interval '01:00:00'`, as EXPLAIN prints it. */
export function printTemporalBound(b: TemporalBound): string {
  const clock =
    b.offset === 0
      ? 'now()'
      : `now() ${b.offset < 0 ? '-' : '+'} interval '${formatInterval(new Interval(0, 0, Math.abs(b.offset)))}'`;
  return `${printScalar(b.expr)} ${SYMBOL[b.op]} ${clock}`;
}
