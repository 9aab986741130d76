// Runtime value operations on the hot path: ordering, key encoding, exact 64-bit integer arithmetic
// helpers. Integers are JS numbers while safe and bigints beyond; every helper keeps that invariant
// (a result that fits a safe integer is always returned as a number), so equal values are `===`.
import { SluiceError } from './errors.ts';
import type { Value } from './types.ts';
import { Decimal, compareDecimals } from './decimal.ts';
import { Interval, compareIntervals } from './time/interval.ts';
import { Jsonb, compareJsonb } from './json/jsonb.ts';
import { SqlArray } from './array/sql-array.ts';
import { encodeOne } from './value-key.ts';
import { numberText } from './float-text.ts';
import { compareText } from './text-order.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

export const INT_RANGE = {
  16: [-32768, 32767],
  32: [-2147483648, 2147483647],
} as const;

/** Normalises an exact bigint result back to a number when it is a safe integer. */
export function normalizeBigInt(value: bigint): number | bigint {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
}

export function overflow(typeLabel: string): SluiceError {
  return new SluiceError('NUMERIC_OVERFLOW', `${typeLabel} out of range`);
}

/** Checks an exact integer against a width; returns the normalised value or throws NUMERIC_OVERFLOW. */
export function checkInt(value: number | bigint, bits: 16 | 32 | 64): number | bigint {
  if (typeof value === 'number') {
    if (bits === 64) {
      if (Number.isSafeInteger(value)) return value;
      return checkInt(BigInt(value), 64);
    }
    const range = INT_RANGE[bits];
    if (value < range[0] || value > range[1]) throw overflow(bits === 16 ? 'smallint' : 'integer');
    return value;
  }
  if (bits !== 64) {
    const range = INT_RANGE[bits];
    if (value < BigInt(range[0]) || value > BigInt(range[1]))
      throw overflow(bits === 16 ? 'smallint' : 'integer');
    return Number(value);
  }
  if (value < INT64_MIN || value > INT64_MAX) throw overflow('bigint');
  return normalizeBigInt(value);
}

export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * Total order over non-null values of one SQL type. number/bigint compare exactly across the two
 * representations; text compares by code point (compareText: the C collation, SQLite's BINARY).
 */
export function compareValues(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return 1; // NULLs sort last, as in PostgreSQL's ascending order
  if (b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1; // PostgreSQL: NaN is greater than every number
    if (Number.isNaN(b)) return -1;
  }
  if (typeof a === 'object') {
    if (a instanceof Decimal) return compareDecimals(a, b as Decimal);
    if (a instanceof SqlArray) return compareArrays(a, b as SqlArray);
    return a instanceof Interval ? compareIntervals(a, b as Interval) : compareJsonb(a, b as Jsonb);
  }
  if (typeof a === 'string') return compareText(a, b as string);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SQL equality for non-null values of one type (NaN = NaN, as PostgreSQL's float equality). */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  // Decimals of one value but different scales (1.5, 1.50) are equal.
  if (a instanceof Decimal && b instanceof Decimal) return compareDecimals(a, b) === 0;
  // Intervals compare by their total ('1 day' = '24 hours', '1 mon' = '30 days'), as PostgreSQL.
  if (a instanceof Interval && b instanceof Interval) return compareIntervals(a, b) === 0;
  // jsonb: equal when PostgreSQL's order says so ('{"a": 1.0}' = '{"a": 1}'); the keys agree
  if (a instanceof Jsonb && b instanceof Jsonb) return a.key() === b.key();
  // arrays: element-wise, NULL elements equal to each other (PostgreSQL's array_eq)
  if (a instanceof SqlArray && b instanceof SqlArray) return a.key() === b.key();
  // number/bigint of the same integer never both occur: integers are normalised.
  return false;
}

/**
 * An unambiguous string encoding of a tuple of values, used as a Map key. Each value carries a type
 * tag; text is length-prefixed so no separator can be forged. -0 and 0 encode alike (SQL-equal).
 */
export function encodeValues(values: readonly Value[], indexes?: readonly number[]): string {
  let out = '';
  const n = indexes === undefined ? values.length : indexes.length;
  for (let k = 0; k < n; k++) {
    const v = values[indexes === undefined ? k : (indexes[k] as number)] as Value;
    out += encodeOne(v);
  }
  return out;
}

/**
 * encodeValues for row identity: two rows encode alike only when every value prints alike, so equal
 * values of other texts (numeric 1.5 and 1.50, interval '1 day' and '24:00:00', jsonb 1 and 1.0, -0
 * and 0) are two rows — a change from one to the other is a change. Numbers, text, booleans and
 * NULL encode as in encodeValues (their encoding is already exact but for -0); only objects cost more.
 */
export function encodeExactValues(values: readonly Value[]): string {
  let out = '';
  for (let k = 0; k < values.length; k++) out += encodeExactOne(values[k] as Value);
  return out;
}

export function encodeExactOne(v: Value): string {
  switch (typeof v) {
    case 'number':
      return v === 0 ? (Object.is(v, -0) ? 'n-0;' : 'n0;') : `n${v};`;
    case 'string':
      return `s${v.length}:${v}`;
    case 'bigint':
      return `n${v};`;
    case 'boolean':
      return v ? 't' : 'f';
    case 'object': {
      if (v === null) return '_';
      if (v instanceof Decimal) return v.exactKey();
      if (v instanceof Interval) return `i${v.months},${v.days},${v.micros};`;
      // jsonb, and any other object kind: its type's one output text (length-prefixed)
      const text = v instanceof Jsonb ? v.text : String(v);
      return `x${text.length}:${text}`;
    }
    default:
      return '_';
  }
}

/**
 * A Map key for a single value: the value itself when a JS Map can key on it exactly (numbers use
 * SameValueZero, so -0/0 and NaN/NaN group together like SQL), else its encoding.
 */
export function singleKey(v: Value): Value {
  // decimals: one key per value, any scale; intervals: one key per total ('1 day', '24 hours')
  if (typeof v === 'object') return v === null ? v : v.key();
  return typeof v === 'bigint' ? `n${v};` : v;
}

/**
 * A Map key that, unlike singleKey, tells apart equal values that print differently: numerics of
 * one value and other scales (1.5, 1.50), intervals of one total ('1 day', '24 hours'), jsonb of
 * equal numbers (1.0, 1), -0 and 0 — for state that must show a value one of its rows holds.
 */
export function exactKey(v: Value): Value {
  // Numbers, text and NULL first: the MIN/MAX multisets key every input value through here.
  if (typeof v === 'number') return Object.is(v, -0) ? 'f-0' : v;
  if (typeof v !== 'object' || v === null) return singleKey(v);
  if (v instanceof Decimal) return `d${v.toString()}`;
  if (v instanceof Interval) return `i${v.months},${v.days},${v.micros}`;
  if (v instanceof Jsonb) return `x${v.text}`;
  if (v instanceof SqlArray) {
    let out = `A${v.length}[`;
    for (const x of v.items) {
      const k = exactKey(x);
      out += typeof k === 'string' ? `s${k.length}:${k}` : encodeOne(k);
    }
    return `${out}]`;
  }
  return singleKey(v);
}

/** Whether two values are equal and print alike (1.5 and 1.50 are equal, not identical; so are -0, 0). */
export function identicalValues(a: Value, b: Value): boolean {
  if (typeof a === 'number') return Object.is(a, b);
  if (a === b) return true;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return false;
  // A numeric's text is its unscaled digits and scale (both normalized): no string built.
  if (a instanceof Decimal) return b instanceof Decimal && a.scale === b.scale && a.unscaled === b.unscaled;
  // Texts only for equal values: unequal ones (most changed sums) need no string built.
  return valuesEqual(a, b) && exactKey(a) === exactKey(b);
}

/**
 * compareValues, with equal values that print differently in their text's order: for numerics the
 * smallest scale first (1.5 before 1.50, the texts differ only by trailing zeros), -0 before 0,
 * '1 day' before '24:00:00', {"a": 1} before {"a": 1.0}. One order whatever the state's history.
 */
export function compareExact(a: Value, b: Value): number {
  const c = compareValues(a, b);
  if (c !== 0) return c;
  if (a instanceof Decimal) return a.scale - (b as Decimal).scale;
  if (typeof a === 'number') return Object.is(a, -0) ? (Object.is(b, -0) ? 0 : -1) : Object.is(b, -0) ? 1 : 0;
  if (typeof a !== 'object' || a === null) return 0;
  // by text; texts alike (never for PostgreSQL's output, but cheap to rule out): by exact key
  const x = a.toString();
  const y = String(b);
  if (x !== y) return x < y ? -1 : 1;
  const kx = exactKey(a) as string;
  const ky = exactKey(b) as string;
  return kx < ky ? -1 : kx > ky ? 1 : 0;
}

/**
 * Characters of a text as PostgreSQL counts them: code points, so a surrogate pair is one
 * character (`length('😀')` is 1). Text reaching the engine is well-formed (SQL text and ingested
 * values are checked at the door), so no function may split a pair.
 */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const before = s.charCodeAt(i - 1);
      if (before >= 0xd800 && before <= 0xdbff) n--;
    }
  }
  return n;
}

/**
 * The UTF-16 offset `n` characters (code points, as `Array.from` splits them: a lone surrogate is
 * one) after offset `from`, or s.length when `s` ends first. Walks the string without building an
 * array of its characters, so a position in a 16 Mi character text costs no allocation.
 */
export function charOffset(s: string, n: number, from = 0): number {
  let i = from;
  for (let count = 0; count < n && i < s.length; count++) {
    const c = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return i;
}

/** The first `n` characters (code points) of `s`: never half of a surrogate pair. */
export function leftChars(s: string, n: number): string {
  return s.slice(0, charOffset(s, n));
}

/**
 * PostgreSQL's array order (btarraycmp): element by element, a NULL element after every value and
 * equal to another NULL, then the shorter array first.
 */
export function compareArrays(a: SqlArray, b: SqlArray): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a.items[i] as Value, b.items[i] as Value);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export { Decimal, Interval, Jsonb, SqlArray, encodeOne };

/**
 * Text form of a value whose type is not at hand, as error messages show it: a number as its digits
 * (a bigint column holds numbers up to 2^53 too, so the exponent form of a double would misprint
 * it). Where the type is known to be real or double precision, floatText writes PostgreSQL's form.
 */
export function formatValue(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return numberText(v);
  return String(v);
}

/** A `JSON.stringify` replacer for messages quoting SQL values: a bigint as its digits (JSON has none). */
export function bigintAsText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
