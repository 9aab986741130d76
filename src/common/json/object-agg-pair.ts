// JSONB_OBJECT_AGG's per-row element: the pair (key, value) as a two-element jsonb array [key text,
// value], so the Reduce keeps the group's pairs as a multiset of jsonb values like JSONB_AGG's.
// The key follows PostgreSQL's key_scalar rules (jsonb.c): NULL is an error, jsonb and arrays are
// refused, a boolean is spelled `true`/`false`, a timestamp written as in JSON, every other value
// is its text output.
import { SluiceError } from '../errors.ts';
import { castValue } from '../cast.ts';
import type { SqlType, Value } from '../types.ts';
import { T } from '../types.ts';
import { SqlArray } from '../array/sql-array.ts';
import { Jsonb } from './jsonb.ts';
import { jsonbNodeOf } from './to-jsonb.ts';

/** The object key PostgreSQL makes of a key argument `k` of type `type`. Throws for NULL and non-scalars. */
export function objectKeyText(k: Value, type: SqlType): string {
  if (k === null) throw new SluiceError('INVALID_VALUE', 'null value not allowed for object key');
  if (k instanceof Jsonb || k instanceof SqlArray) {
    throw new SluiceError('INVALID_VALUE', 'key value must be scalar, not array, composite, or json');
  }
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  // timestamps as in JSON (`2024-01-01T10:00:00`), as PostgreSQL's key_scalar writes them
  if (type.kind === 'timestamp' || type.kind === 'timestamptz') return jsonbNodeOf(k, type) as string;
  if (typeof k === 'string') return k;
  return castValue(k, type, T.text) as string;
}

/** [key, value] as jsonb: a SQL NULL value is a JSON null (PostgreSQL keeps such pairs). */
export function objectAggPair(k: Value, keyType: SqlType, v: Value, valueType: SqlType): Jsonb {
  return Jsonb.of([objectKeyText(k, keyType), jsonbNodeOf(v, valueType)]);
}
