// Casts to and from arrays (element by element, or from PostgreSQL's '{...}' text form) and the
// ingest coercion of an array column (a JSON array, or the text form). Kept apart so cast.ts only
// dispatches here; the element cast is cast.ts's own, passed in.
import { SluiceError } from '../errors.ts';
import type { SqlType, Value } from '../types.ts';
import { T, typeName } from '../types.ts';
import { MAX_ARRAY_LENGTH } from '../limits.ts';
import { SqlArray, parseArrayText } from './sql-array.ts';

type CastFn = (v: Value, from: SqlType, to: SqlType) => Value;
type Coerced = { ok: true; value: Value } | { ok: false; expected: string };
type CoerceFn = (v: unknown, type: SqlType) => Coerced;

function cannotCast(from: SqlType, to: SqlType): SluiceError {
  return new SluiceError('INVALID_CAST', `cannot cast type ${typeName(from)} to ${typeName(to)}`);
}

/**
 * CAST(v AS to) when either side is an array, else undefined: array → array element-wise, text →
 * array through the text form, array → text as its text form (cast.ts's text case prints it).
 */
export function castArray(v: Value, from: SqlType, to: SqlType, cast: CastFn): Value | undefined {
  if (to.kind !== 'array') {
    if (from.kind !== 'array' || to.kind === 'text' || to.kind === 'unknown') return undefined;
    throw cannotCast(from, to);
  }
  const element = to.element;
  if (v instanceof SqlArray) {
    const fromElement = from.kind === 'array' ? from.element : T.unknown;
    return new SqlArray(v.items.map((x) => cast(x, fromElement, element)));
  }
  if (typeof v === 'string' && (from.kind === 'text' || from.kind === 'unknown')) {
    return new SqlArray(parseArrayText(v).map((x) => (x === null ? null : cast(x, T.text, element))));
  }
  throw cannotCast(from, to);
}

/** An ingested JSON value for an array column: a JSON array of its elements, or the '{...}' text. */
export function coerceArray(
  v: unknown,
  type: Extract<SqlType, { kind: 'array' }>,
  coerce: CoerceFn,
): Coerced {
  const expected = `a JSON array of ${typeName(type.element)} values`;
  let items: readonly unknown[];
  if (Array.isArray(v)) items = v;
  else if (v instanceof SqlArray)
    // An INSERT's ARRAY[...], a stored row or a journalled one under replay: its elements are SQL
    // values, so a non-finite double among them is a value (NaN, ±Infinity), not the overflow of a
    // JSON number the element coercion refuses; it goes in as its text, read back as the same double.
    items = v.items.map((x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  else if (typeof v === 'string') {
    try {
      items = parseArrayText(v);
    } catch {
      return { ok: false, expected };
    }
    // text elements arrive as text: cast them as SQL would (an int[] column takes '{1,2}')
    const out: Value[] = [];
    for (const x of items as (string | null)[]) {
      const r =
        x === null || type.element.kind === 'text'
          ? { ok: true as const, value: x }
          : coerceText(x, type, coerce);
      if (!r.ok) return { ok: false, expected };
      out.push(r.value);
    }
    return { ok: true, value: new SqlArray(out) };
  } else return { ok: false, expected };
  if (items.length > MAX_ARRAY_LENGTH)
    return { ok: false, expected: `${expected} (at most ${MAX_ARRAY_LENGTH})` };
  const out: Value[] = new Array<Value>(items.length);
  for (let i = 0; i < items.length; i++) {
    const x = items[i];
    if (Array.isArray(x))
      return { ok: false, expected: `${expected} (multidimensional arrays are not supported)` };
    const r = coerce(x, type.element);
    if (!r.ok) return { ok: false, expected: `${expected}: element ${i + 1} must be ${r.expected}` };
    out[i] = r.value;
  }
  return { ok: true, value: new SqlArray(out) };
}

function coerceText(x: string, type: Extract<SqlType, { kind: 'array' }>, coerce: CoerceFn): Coerced {
  // numbers and booleans of the text form are JSON-like words: read them as the JSON value first
  const t = type.element.kind;
  if (t === 'bool')
    return coerce(/^(t|true)$/i.test(x) ? true : /^(f|false)$/i.test(x) ? false : x, type.element);
  return coerce(x, type.element);
}
