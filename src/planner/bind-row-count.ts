// The row counts of LIMIT and OFFSET: constant expressions folded at bind time, as PostgreSQL
// evaluates them once per query.
import { SluiceError } from '../common/errors.ts';
import type { Expr } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, typeName } from '../common/types.ts';
import { bindExpr } from './bind-expr.ts';
import { fold } from './bind-coerce.ts';

/**
 * The row count of LIMIT or OFFSET: any constant expression, folded to a bigint as PostgreSQL
 * takes it (`LIMIT (1 + 2)`, `LIMIT 2.5` rounds to 3, `LIMIT '2'`); NULL is no limit (undefined).
 */
export function constInt(e: Expr, what: 'LIMIT' | 'OFFSET'): number | undefined {
  const bound = bindExpr(e, { scope: null, aggregateContext: what });
  const type = bound.type;
  const countable =
    type.kind === 'int' || type.kind === 'numeric' || type.kind === 'float' || type.kind === 'unknown';
  const fromText = bound.kind === 'const' && type.kind === 'text' && e.kind === 'literal';
  if (!countable && !fromText) {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `argument of ${what} must be type bigint, not type ${typeName(type)}`,
      {
        position: e.pos,
      },
    );
  }
  let value: unknown;
  try {
    const asBigint: ScalarExpr =
      type.kind === 'int' && type.bits === 64 ? bound : { kind: 'cast', operand: bound, type: T.int64 };
    const folded = fold(asBigint);
    value = folded.kind === 'const' ? folded.value : undefined;
  } catch (err) {
    throw err instanceof SluiceError ? err.at(e.pos) : err;
  }
  if (value === null) return undefined;
  if (typeof value !== 'bigint' && typeof value !== 'number') {
    throw new SluiceError('TYPE_MISMATCH', `argument of ${what} must be a constant`, { position: e.pos });
  }
  if (value < 0) throw new SluiceError('TYPE_MISMATCH', `${what} must not be negative`, { position: e.pos });
  if (value > Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
  return Number(value);
}
