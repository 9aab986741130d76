// to_jsonb of SQL values (PostgreSQL's datum_to_jsonb): a boolean is a JSON boolean, a number a JSON
// number (numeric keeps its digits: 1.50 stays 1.50; a double's shortest text; NaN and Infinity
// become strings), an array a JSON array of its elements' forms, jsonb itself, and every other type
// a string: its text output, except timestamps, which PostgreSQL writes in ISO 8601's XSD form
// (`2024-01-01T10:00:00`, with a `+00:00` offset for timestamptz: Sluice's session zone is UTC).
import type { SqlType, Value } from '../types.ts';
import { Decimal, decimalFromShortest } from '../decimal.ts';
import { Jsonb, type JsonNode } from './jsonb.ts';
import { SqlArray } from '../array/sql-array.ts';
import { castValue } from '../cast.ts';
import { T } from '../types.ts';

/** Whether to_jsonb is defined here for values of `type`: every type Sluice has. */
export function hasJsonbForm(type: SqlType): boolean {
  return type.kind !== 'array' || hasJsonbForm(type.element);
}

/** A timestamp's text output in PostgreSQL's JSON form: `T` between date and time, `+hh:mm` offsets. */
function isoTimestamp(text: string, zoned: boolean): string {
  const t = text.replace(' ', 'T');
  // timestamptz's output ends in `+00` (or `+05:30`), then ` BC` for years before 1
  return zoned
    ? t.replace(
        /([+-]\d\d)((?::\d\d){0,2})( BC)?$/,
        (_m, h: string, rest: string, bc?: string) => `${h}${rest === '' ? ':00' : rest}${bc ?? ''}`,
      )
    : t;
}

/** The JSON node of a non-null value of `type` (one hasJsonbForm accepts). */
export function jsonbNodeOf(v: Value, type: SqlType): JsonNode {
  if (v === null) return null;
  if (v instanceof Jsonb) return v.root;
  if (v instanceof Decimal) return v;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return Decimal.fromInt(v);
  if (typeof v === 'number') {
    if (type.kind === 'int') return Decimal.fromInt(v);
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return decimalFromShortest(v);
  }
  if (v instanceof SqlArray) {
    const element = type.kind === 'array' ? type.element : T.unknown;
    return v.items.map((x) => jsonbNodeOf(x, element));
  }
  const k = type.kind;
  if (k === 'timestamp' || k === 'timestamptz')
    return isoTimestamp(castValue(v, type, T.text) as string, k === 'timestamptz');
  if (k === 'time' || k === 'interval' || k === 'bytea') return castValue(v, type, T.text) as string;
  return String(v);
}
