// One value's identity key: the leaf both values.ts (rows' keys) and array/sql-array.ts (an
// array's elements) build on, so neither needs the other to encode a scalar.
import type { Value } from './types.ts';

/**
 * A value's key text: equal values (as SQL compares them, e.g. numeric 1.5 and 1.50) encode alike,
 * and no two different values do; objects (decimals, intervals, jsonb, arrays) give their own key.
 */
export function encodeOne(v: Value): string {
  switch (typeof v) {
    case 'number':
      return v === 0 ? 'n0;' : `n${v};`;
    case 'string':
      return `s${v.length}:${v}`;
    case 'bigint':
      return `n${v};`;
    case 'boolean':
      return v ? 't' : 'f';
    case 'object':
      return v === null ? '_' : v.key();
    default:
      return '_';
  }
}
