// Aggregate FILTER (WHERE cond), bound as a rewrite of the aggregate's argument: agg(x) FILTER
// (WHERE c) is agg(CASE WHEN c THEN x END) and COUNT(*) FILTER (WHERE c) is COUNT(CASE WHEN c THEN
// 1 END) — every aggregate skips NULLs, so the rows failing (or UNKNOWN for) the condition count for
// nothing, DISTINCT included, and the Reduce maintains it like any other aggregate.
import { SluiceError } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, typeName } from '../common/types.ts';
import type { Expr } from '../parser/ast.ts';
import type { Scope } from './bind-scope.ts';
import { bindExpr, findAggregate } from './bind-expr.ts';
import type { AggregateCall } from './logical-plan.ts';

/** `call` with its FILTER condition `filter` (bound over the aggregate's input, `scope`). */
export function filteredAggregate(call: AggregateCall, filter: Expr, scope: Scope | null): AggregateCall {
  const nested = findAggregate(filter);
  if (nested !== undefined) {
    throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in FILTER', {
      position: nested.pos,
    });
  }
  const cond = bindExpr(filter, { scope, aggregateContext: 'FILTER' });
  if (cond.type.kind !== 'bool' && cond.type.kind !== 'unknown') {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `argument of FILTER must be type boolean, not type ${typeName(cond.type)}`,
      { position: filter.pos },
    );
  }
  const when = (then: ScalarExpr): ScalarExpr => ({
    kind: 'case',
    whens: [{ when: cond, then }],
    else: null,
    type: then.type,
  });
  if (call.fn === 'count_star') {
    return { ...call, fn: 'count', arg: when({ kind: 'const', value: 1, type: T.int32 }) };
  }
  return call.arg === undefined ? call : { ...call, arg: when(call.arg) };
}
