// to_jsonb of SQL values (PostgreSQL's datum_to_jsonb): a boolean is a JSON boolean, a number a JSON
// number (numeric keeps its digits: 1.50 stays 1.50; a double's shortest text; NaN and Infinity
// become strings), text and the types whose JSON form is their text output a string, jsonb itself.
// The types whose JSON form differs from their text output (timestamps write a `T`) are not here.
import type { SqlType, Value } from '../types.ts';
import { Decimal, decimalFromShortest } from '../decimal.ts';
import { Jsonb, type JsonNode } from './jsonb.ts';

/** Whether to_jsonb is defined here for values of `type`. */
export function hasJsonbForm(type: SqlType): boolean {
  const k = type.kind;
  return (
    k === 'bool' ||
    k === 'int' ||
    k === 'numeric' ||
    k === 'float' ||
    k === 'text' ||
    k === 'jsonb' ||
    k === 'date' ||
    k === 'uuid' ||
    k === 'unknown'
  );
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
  return String(v);
}
