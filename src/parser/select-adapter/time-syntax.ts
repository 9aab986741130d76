// The date/time syntax of a SELECT as our AST: `INTERVAL '…' [unit]` (a cast of the string, the unit
// of Flink's and RisingWave's INTERVAL '10' SECOND folded into the text) and `EXTRACT(field FROM x)`
// (a call of extract('field', x)). `x AT TIME ZONE zone` is an infix operator (expr-builder.ts).
import type { Expr, Pos, TypeName } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import { functionCall, stringLiteral } from '../expr-builder.ts';

export const INTERVAL_UNIT_WORDS = ['year', 'month', 'day', 'hour', 'minute', 'second'] as const;
const INTERVAL_UNITS: ReadonlySet<string> = new Set(INTERVAL_UNIT_WORDS);

/**
 * INTERVAL 'text' [unit]: with a unit, a bare number is that many units (INTERVAL '10' SECOND);
 * other text with a unit (which PostgreSQL truncates to the unit) is refused.
 */
export function intervalLiteral(text: string, textPos: Pos, typePos: Pos, unit: string | undefined): Expr {
  let value = text;
  if (unit !== undefined && unit !== '') {
    const u = unit.toLowerCase();
    if (!INTERVAL_UNITS.has(u) || !/^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/.test(text)) {
      throw notSupported(`INTERVAL '…' ${unit.toUpperCase()} with anything but a number`, textPos);
    }
    value = `${text.trim()} ${u}`;
  }
  const type: TypeName = { name: 'interval', params: [], pos: typePos };
  return { kind: 'cast', operand: stringLiteral(value, textPos), type, pos: typePos };
}

/** EXTRACT(field FROM source) as extract('field', source). */
export function extractCall(field: string, fieldPos: Pos, source: Expr, pos: Pos): Expr {
  return functionCall('extract', [stringLiteral(field.toLowerCase(), fieldPos), source], {}, pos);
}
