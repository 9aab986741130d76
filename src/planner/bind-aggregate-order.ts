// ORDER BY inside an aggregate call (`STRING_AGG(x, ',' ORDER BY y DESC)`), bound over the
// aggregate's input: the aggregates that read their rows in an order take it, the others refuse it.
import { SluiceError, notSupported } from '../common/errors.ts';
import { printScalar } from '../common/scalar-expr.ts';
import type { Expr } from '../parser/ast.ts';
import type { AggregateCall, AggregateOrder } from './logical-plan.ts';
import type { AggregateFn } from '../common/aggregate-fn.ts';
import { bindExpr, containsAggregate } from './bind-expr.ts';
import type { Scope } from './bind-scope.ts';

/** The aggregates whose result depends on the order of their rows. */
export const ORDERED_AGGREGATES: ReadonlySet<AggregateFn> = new Set<AggregateFn>(['string_agg', 'array_agg']);

type Call = Extract<Expr, { kind: 'function' }>;

/** `call` with the ORDER BY written inside `e`'s parentheses, if any. */
export function bindAggregateOrder(call: AggregateCall, e: Call, scope: Scope | null): AggregateCall {
  const items = e.orderBy;
  if (items === undefined || items.length === 0) return call;
  const first = items[0]!;
  if (!ORDERED_AGGREGATES.has(call.fn)) {
    throw notSupported(
      `ORDER BY inside ${e.name.toUpperCase()}`,
      first.pos,
      'only STRING_AGG and ARRAY_AGG read their rows in an order',
    );
  }
  const orderBy: AggregateOrder[] = items.map((o) => {
    if (containsAggregate(o.expr)) {
      throw new SluiceError('INVALID_AGGREGATE', 'aggregate function calls cannot be nested', {
        position: o.expr.pos,
      });
    }
    const expr = bindExpr(o.expr, { scope, aggregateContext: 'aggregate arguments' });
    // PostgreSQL: with DISTINCT, the order must be one of the argument's (else it is not defined).
    // ARRAY_AGG's argument is its value wrapped as an element (bind-aggregate-more.ts)
    const arg = call.fn === 'array_agg' && call.arg?.kind === 'call' ? call.arg.args[0] : call.arg;
    if (call.distinct && (arg === undefined || printScalar(expr) !== printScalar(arg))) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        'in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list',
        { position: o.pos },
      );
    }
    return { expr, desc: o.desc, nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first' };
  });
  return { ...call, orderBy };
}
