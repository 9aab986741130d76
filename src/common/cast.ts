// Conversions between SQL types: CAST / `::` at run time and the coercion of ingested values to a
// column's type. Failures are INVALID_CAST (casts) or INVALID_VALUE (ingest) errors, never NULLs.
import { SluiceError } from './errors.ts';
import type { SqlType, Value } from './types.ts';
import { T, typeName } from './types.ts';
import { charLength, checkInt, formatValue, leftChars, normalizeBigInt } from './values.ts';
import { floatBitsOf, floatText } from './float-text.ts';
import { Decimal, decimalFromDouble, fitDecimal, parseDecimal } from './decimal.ts';
import { shortestAtScale, shortestDecimal } from './decimal-of-double.ts';
import { Interval, parseInterval } from './time/interval.ts';
import { parseTime, parseTimestamptz, timestampToInstant } from './time/datetime.ts';
import {
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
  dateTimeFields,
  dayNumber,
  formatDayTime,
  formatTimeOfDay,
  fractionMicros,
  validDate,
} from './time/calendar.ts';
import { Jsonb, jsonbFromParsed, parseJsonb } from './json/jsonb.ts';
import { castBinary, coerceBinary } from './uuid-bytea-cast.ts';
import { castArray, coerceArray } from './array/array-cast.ts';
import { SqlArray } from './array/sql-array.ts';

const INT_TEXT = /^\s*[+-]?\d+\s*$/;
/** Past every integer type: what an integer text of more significant digits than any holds reads as. */
const PAST_INT64 = 1n << 64n;

/**
 * The value of a text INT_TEXT matched. More than 20 significant digits is out of every integer
 * type's range whatever they are, so they are not converted: BigInt's work grows with the square of
 * the digits, and a 5 MB string of digits for an integer column held the event loop for seconds.
 */
function intOfText(text: string): bigint {
  const t = text.trim();
  const negative = t.startsWith('-');
  const digits = t.replace(/^[+-]?0*/, '');
  if (digits.length > 20) return negative ? -PAST_INT64 : PAST_INT64;
  return BigInt(t);
}
const FLOAT_TEXT = /^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)\s*$/;
const SPECIAL_FLOATS: Record<string, number> = {
  nan: NaN,
  infinity: Infinity,
  '+infinity': Infinity,
  '-infinity': -Infinity,
  inf: Infinity,
  '+inf': Infinity,
  '-inf': -Infinity,
};
const DATE_TEXT = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-]00(?::?00)?)?$/;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** 'YYYY-MM-DD' or null when `text` is not a valid date. */
export function parseDate(text: string): string | null {
  const m = DATE_TEXT.exec(text.trim());
  if (m === null) {
    // A timestamp's text read as a date keeps its day: the time is dropped, never rounded into the
    // next day (PostgreSQL's date input).
    const t = TIMESTAMP_TEXT.exec(text.trim());
    const f = t === null ? null : dateTimeFields(t);
    return f === null ? null : `${pad(f.y, 4)}-${pad(f.mo, 2)}-${pad(f.d, 2)}`;
  }
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (!validDate(y, mo, d)) return null;
  const canonical = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`;
  return canonical === text ? text : canonical;
}

/** 'YYYY-MM-DD HH:MM:SS[.f]' (fraction without trailing zeros) or null when invalid. */
export function parseTimestamp(text: string): string | null {
  const m = TIMESTAMP_TEXT.exec(text.trim());
  const f = m === null ? null : dateTimeFields(m);
  if (f === null) return null;
  if (f.frac.length > 6) {
    // Past microseconds the fraction rounds, and may carry into the second, the day, the year.
    const micros =
      f.h * USECS_PER_HOUR + f.mi * USECS_PER_MINUTE + f.s * USECS_PER_SEC + fractionMicros(f.frac);
    return formatDayTime(dayNumber(f.y, f.mo, f.d), micros);
  }
  const frac = f.frac.replace(/0+$/, '');
  const canonical = `${pad(f.y, 4)}-${pad(f.mo, 2)}-${pad(f.d, 2)} ${pad(f.h, 2)}:${pad(f.mi, 2)}:${pad(f.s, 2)}${frac === '' ? '' : `.${frac}`}`;
  // Input already in canonical form (the usual case) is kept as it came: the template above is a
  // tree of concatenated pieces in V8, which a table would hold per row (about 80 bytes more).
  return canonical === text ? text : canonical;
}

/**
 * Rounds to float32 precision and returns the shortest decimal that reads back as the same float32
 * (what PostgreSQL prints for a real), so 0.1::real is 0.1, not 0.10000000149011612.
 */
export function shortestFloat32(x: number): number {
  const f = Math.fround(x);
  if (!Number.isFinite(f) || f === 0) return f;
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(f.toPrecision(p));
    if (Math.fround(candidate) === f) return candidate;
  }
  return f;
}

/**
 * An integer's value of a double, as PostgreSQL's float-to-integer casts (`rint`): to the nearest,
 * a tie to the even neighbour (2.5 → 2, 3.5 → 4, -2.5 → -2). A numeric rounds ties away from zero;
 * a double does not. + 0 because an integer has no -0 (-0.2 rounds to 0, not -0).
 */
function roundHalfToEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  const r = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  return r + 0;
}

/** PostgreSQL's "value out of range: overflow" / "underflow" for float arithmetic and casts. */
export function floatOutOfRange(kind: 'overflow' | 'underflow'): SluiceError {
  return new SluiceError('NUMERIC_OVERFLOW', `value out of range: ${kind}`);
}

/**
 * A finite double as a value of `to` (real or double precision): a real is rounded to float4
 * (its shortest decimal), and a value beyond a real's range, or a nonzero one that would become
 * zero, is an error rather than Infinity or 0.
 */
function toFloat(r: number, to: Extract<SqlType, { kind: 'float' }>): number {
  if (to.bits === 64 || !Number.isFinite(r)) return r;
  if (!Number.isFinite(Math.fround(r))) throw floatOutOfRange('overflow');
  const f = shortestFloat32(r);
  if (f === 0 && r !== 0) throw floatOutOfRange('underflow');
  return f;
}

/**
 * A value as a numeric of type `to`: exact from integers, decimals and text (rounded half away from
 * zero to a declared scale, on the text's own digits, so '1.005'::numeric(10,2) is 1.01); a double
 * to 15 significant digits and a real to 6, as PostgreSQL's float8_numeric/float4_numeric.
 */
function toNumeric(v: Value, from: SqlType, to: Extract<SqlType, { kind: 'numeric' }>): Decimal {
  let d: Decimal;
  if (v instanceof Decimal) d = v;
  else if (typeof v === 'number') {
    if (from.kind === 'float') {
      if (!Number.isFinite(v))
        throw new SluiceError('INVALID_CAST', `cannot convert ${formatValue(v)} to numeric`);
      d = decimalFromDouble(v, from.bits === 32 ? 6 : 15);
    } else if (Number.isSafeInteger(v)) d = Decimal.fromInt(v);
    // A JSON number: its shortest text (1e21 too, whose digits String() shows with an exponent).
    else d = shortestDecimal(v) ?? parseDecimal(String(v)) ?? invalidThrow(v, to);
  } else if (typeof v === 'bigint') d = Decimal.fromInt(v);
  else if (typeof v === 'string') d = parseDecimal(v) ?? invalidThrow(v, to);
  else throw invalid(v, to);
  return to.precision !== undefined ? fitDecimal(d, to.precision, to.scale ?? 0) : d;
}

function invalidThrow(v: Value, to: SqlType): never {
  throw invalid(v, to);
}

function invalid(v: Value, to: SqlType): SluiceError {
  return new SluiceError(
    'INVALID_CAST',
    `invalid input syntax for type ${typeName(to)}: "${formatValue(v)}"`,
  );
}

/** CAST(v AS to). `v` is a non-null value of type `from`. */
export function castValue(v: Value, from: SqlType, to: SqlType): Value {
  if (v === null) return null;
  if (v instanceof Jsonb && to.kind !== 'text' && to.kind !== 'jsonb' && to.kind !== 'unknown')
    return castJsonbScalar(v, to);
  const binary = castBinary(v, from, to);
  if (binary !== undefined) return binary;
  const array = castArray(v, from, to, castValue);
  if (array !== undefined) return array;
  switch (to.kind) {
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') {
        const t = v.trim().toLowerCase();
        if (['t', 'true', 'yes', 'y', 'on', '1'].includes(t)) return true;
        if (['f', 'false', 'no', 'n', 'off', '0'].includes(t)) return false;
        throw invalid(v, to);
      }
      if (from.kind === 'int') return v !== 0 && v !== 0n;
      throw invalid(v, to);
    case 'int': {
      if (v instanceof Decimal) {
        const r = v.round(0);
        try {
          return checkInt(r.unscaled, to.bits);
        } catch {
          throw new SluiceError('NUMERIC_OVERFLOW', `${typeName(to)} out of range`);
        }
      }
      if (typeof v === 'number') {
        if (from.kind === 'int') return checkInt(v, to.bits);
        if (!Number.isFinite(v)) throw new SluiceError('NUMERIC_OVERFLOW', `${typeName(to)} out of range`);
        const r = roundHalfToEven(v);
        return Number.isSafeInteger(r) ? checkInt(r, to.bits) : checkInt(BigInt(r), to.bits);
      }
      if (typeof v === 'bigint') return checkInt(v, to.bits);
      if (typeof v === 'boolean') {
        if (to.bits === 16) throw invalid(v, to);
        return v ? 1 : 0;
      }
      if (typeof v === 'string' && INT_TEXT.test(v)) return checkInt(intOfText(v), to.bits);
      throw invalid(v, to);
    }
    case 'numeric':
      return toNumeric(v, from, to);
    case 'float': {
      let r: number;
      if (v instanceof Decimal) {
        r = v.toNumber();
        if (!Number.isFinite(r)) throw floatOutOfRange('overflow');
      } else if (typeof v === 'number') r = v;
      else if (typeof v === 'bigint') {
        // A JSON integer of 309 digits or more is a bigint beyond every double: out of range, as
        // a numeric's (above), not Infinity.
        r = Number(v);
        if (!Number.isFinite(r)) throw floatOutOfRange('overflow');
      } else if (typeof v === 'string') {
        const special = SPECIAL_FLOATS[v.trim().toLowerCase()];
        if (special !== undefined && to.kind === 'float') r = special;
        else if (FLOAT_TEXT.test(v)) {
          r = Number(v);
          // Text beyond the type's range (1e400, 1e-400) is an error, not Infinity or 0.
          if (!Number.isFinite(r) || (r === 0 && /[1-9]/.test(v.replace(/[eE].*$/, '')))) {
            throw new SluiceError(
              'NUMERIC_OVERFLOW',
              `"${v.trim()}" is out of range for type ${typeName(to)}`,
            );
          }
        } else throw invalid(v, to);
      } else throw invalid(v, to);
      return toFloat(r, to);
    }
    case 'text': {
      // char(n) → text drops the padding: trailing blanks of char(n) are insignificant
      const s =
        typeof v === 'string'
          ? from.kind === 'text' && from.fixed === true && to.fixed !== true
            ? withoutCharPadding(v)
            : v
          : typeof v === 'number' && from.kind === 'float'
            ? floatText(v, from.bits)
            : v instanceof SqlArray && from.kind === 'array'
              ? v.text(floatBitsOf(from.element))
              : formatValue(v);
      // Lengths count characters (code points), as PostgreSQL's do.
      if (to.maxLength !== undefined) {
        const length = charLength(s);
        if (to.fixed === true) {
          return length >= to.maxLength ? leftChars(s, to.maxLength) : s + ' '.repeat(to.maxLength - length);
        }
        return length > to.maxLength ? leftChars(s, to.maxLength) : s; // explicit casts truncate
      }
      return s;
    }
    case 'date': {
      if (typeof v !== 'string') throw invalid(v, to);
      const d = parseDate(v);
      if (d === null) throw invalid(v, to);
      return d;
    }
    case 'timestamp': {
      if (typeof v !== 'string') throw invalid(v, to);
      const t = parseTimestamp(v);
      if (t === null) throw invalid(v, to);
      return t;
    }
    case 'timestamptz': {
      if (typeof v !== 'string') throw invalid(v, to);
      if (from.kind === 'timestamptz') return v;
      if (from.kind === 'date' || from.kind === 'timestamp') return timestampToInstant(v);
      const t = parseTimestamptz(v);
      if (t === null) throw invalid(v, to);
      return t;
    }
    case 'time': {
      if (v instanceof Interval) {
        // interval → time: its time part within a day (PostgreSQL's interval_time)
        const day = 86_400_000_000;
        return formatTimeOfDay(((v.micros % day) + day) % day);
      }
      if (typeof v !== 'string') throw invalid(v, to);
      if (from.kind === 'timestamp') return v.length === 10 ? '00:00:00' : v.slice(11);
      if (from.kind === 'timestamptz') return v.slice(11, -3);
      if (from.kind === 'date') throw invalid(v, to);
      const t = parseTime(v);
      if (t === null) throw invalid(v, to);
      return t;
    }
    case 'interval': {
      if (v instanceof Interval) return v;
      if (typeof v !== 'string') throw invalid(v, to);
      if (from.kind === 'time') return parseInterval(v) ?? invalidThrow(v, to);
      if (from.kind !== 'text' && from.kind !== 'unknown') throw invalid(v, to);
      const iv = parseInterval(v);
      if (iv === null) throw invalid(v, to);
      return iv;
    }
    case 'jsonb':
      if (v instanceof Jsonb) return v;
      if (typeof v === 'string' && (from.kind === 'text' || from.kind === 'unknown')) return parseJsonb(v);
      throw new SluiceError('INVALID_CAST', `cannot cast type ${typeName(from)} to jsonb`);
    case 'uuid':
    case 'bytea':
    case 'array':
    case 'unknown':
      return v; // uuid and bytea were cast by castBinary, arrays by castArray
  }
}

/** jsonb → numeric, integer, float or boolean: a JSON number or boolean, as PostgreSQL 11+ casts them. */
function castJsonbScalar(v: Jsonb, to: SqlType): Value {
  const n = v.root;
  const kind =
    n === null
      ? 'null'
      : typeof n === 'string'
        ? 'string'
        : typeof n === 'boolean'
          ? 'boolean'
          : n instanceof Decimal
            ? 'numeric'
            : Array.isArray(n)
              ? 'array'
              : 'object';
  const wanted =
    to.kind === 'bool'
      ? 'boolean'
      : to.kind === 'int' || to.kind === 'float' || to.kind === 'numeric'
        ? 'numeric'
        : null;
  if (wanted === null) throw new SluiceError('INVALID_CAST', `cannot cast type jsonb to ${typeName(to)}`);
  if (kind !== wanted)
    throw new SluiceError('INVALID_CAST', `cannot cast jsonb ${kind} to type ${typeName(to)}`);
  return castValue(n as Decimal | boolean, wanted === 'boolean' ? T.bool : T.numeric, to);
}

/**
 * A char(n) value as text: its trailing spaces dropped, and only spaces (PostgreSQL's rtrim of
 * bpchar), so a tab or a newline the value ends with is kept — JavaScript's trimEnd would drop them.
 */
export function withoutCharPadding(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 32) end--;
  return end === s.length ? s : s.slice(0, end);
}

/**
 * A string stored into a varchar(n) / char(n) column (an assignment, not a cast): at most `n`
 * characters (code points), except that trailing blanks beyond them are dropped, as PostgreSQL
 * does; char(n) is padded to `n`. Null when the string is too long.
 */
export function fitLength(s: string, maxLength: number, fixed: boolean): string | null {
  let fitted = s;
  const length = charLength(s);
  if (length > maxLength) {
    fitted = leftChars(s, maxLength);
    // only spaces may be cut off (a tab or a newline beyond `n` is too long, as in PostgreSQL)
    if (/[^ ]/.test(s.slice(fitted.length))) return null;
  }
  return fixed ? fitted + ' '.repeat(Math.max(0, maxLength - charLength(fitted))) : fitted;
}

/**
 * Coerces an ingested JSON value to a column's type: integers from numbers, bigints or digit
 * strings (exact), floats from numbers, text from strings, and so on. Returns an error message
 * fragment (what was expected) instead of throwing, so callers can name the table and column.
 */
export const INVALID_INGEST: unique symbol = Symbol('invalid ingest value');

/** The hot-path form of `coerceIngest`: the value, or INVALID_INGEST (then call coerceIngest for why). */
export function coerceIngestFast(v: unknown, type: SqlType): Value | typeof INVALID_INGEST {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'int':
      if (typeof v === 'number' && Number.isSafeInteger(v)) {
        // + 0: an integer has no -0 (JSON's -0 parses to it), so it groups and matches as 0.
        if (type.bits === 64) return v + 0;
        const range = type.bits === 16 ? 32767 : 2147483647;
        if (v <= range && v >= -range - 1) return v + 0;
      }
      break;
    case 'float':
      if (typeof v === 'number' && type.bits === 64) return v;
      break;
    case 'text':
      if (typeof v === 'string' && type.maxLength === undefined) return v;
      break;
    case 'bool':
      if (typeof v === 'boolean') return v;
      break;
    case 'numeric':
      // A JSON number of money-like digits, exactly as coerceIngest would read its text.
      if (typeof v === 'number' && type.precision !== undefined) {
        const d = shortestAtScale(v, type.scale ?? 0, type.precision);
        if (d !== null) return d;
      }
      break;
    default:
      break;
  }
  const r = coerceIngest(v, type);
  return r.ok ? r.value : INVALID_INGEST;
}

export function coerceIngest(
  v: unknown,
  type: SqlType,
): { ok: true; value: Value } | { ok: false; expected: string } {
  if (v === null || v === undefined) return { ok: true, value: null };
  const inRange = `a number within the range of ${typeName(type)}`;
  switch (type.kind) {
    case 'bool':
      return typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, expected: 'a boolean' };
    case 'int': {
      let n: number | bigint;
      if (typeof v === 'number') {
        if (!Number.isInteger(v)) return { ok: false, expected: `an integer (${typeName(type)})` };
        if (!Number.isSafeInteger(v))
          return { ok: false, expected: 'an exact integer (send large integers as strings)' };
        n = v + 0;
      } else if (typeof v === 'bigint') n = normalizeBigInt(v);
      else if (typeof v === 'string' && INT_TEXT.test(v)) n = normalizeBigInt(intOfText(v));
      else return { ok: false, expected: `an integer (${typeName(type)})` };
      try {
        return { ok: true, value: checkInt(n, type.bits) };
      } catch {
        return { ok: false, expected: `an integer within the range of ${typeName(type)}` };
      }
    }
    case 'float':
    case 'numeric': {
      // A double's NaN or ±Infinity (a statement's, a stored row's: the JSON readers refuse 1e400
      // themselves) is a value of a float column; Sluice's numeric holds neither (PostgreSQL 14's does).
      if (typeof v === 'number' && !Number.isFinite(v)) {
        return type.kind === 'float' ? { ok: true, value: v } : { ok: false, expected: inRange };
      }
      if (
        typeof v !== 'number' &&
        typeof v !== 'bigint' &&
        typeof v !== 'string' &&
        !(v instanceof Decimal)
      ) {
        return { ok: false, expected: 'a number' };
      }
      // A JSON number for a numeric column is its own shortest text (exact as written: longer
      // numbers arrive as Decimals from the exact JSON parser), not a double's 15 digits.
      const from: SqlType = typeof v === 'string' ? T.text : type.kind === 'numeric' ? T.numeric : T.float64;
      try {
        return { ok: true, value: castValue(v, from, type) };
      } catch (error) {
        const overflow = error instanceof SluiceError && error.code === 'NUMERIC_OVERFLOW';
        return { ok: false, expected: overflow ? inRange : 'a number' };
      }
    }
    case 'text': {
      if (typeof v !== 'string') return { ok: false, expected: 'a string' };
      if (type.maxLength === undefined) return { ok: true, value: v };
      const fitted = fitLength(v, type.maxLength, type.fixed === true);
      return fitted === null
        ? { ok: false, expected: `a string of at most ${type.maxLength} characters` }
        : { ok: true, value: fitted };
    }
    case 'date': {
      const d = typeof v === 'string' ? parseDate(v) : null;
      return d === null ? { ok: false, expected: "a date 'YYYY-MM-DD'" } : { ok: true, value: d };
    }
    case 'timestamp': {
      const t = typeof v === 'string' ? parseTimestamp(v) : null;
      return t === null
        ? { ok: false, expected: "a timestamp 'YYYY-MM-DD HH:MM:SS[.ffffff]'" }
        : { ok: true, value: t };
    }
    case 'timestamptz': {
      const t = typeof v === 'string' ? parseTimestamptz(v) : null;
      return t === null
        ? { ok: false, expected: "a timestamp with time zone 'YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]'" }
        : { ok: true, value: t };
    }
    case 'time': {
      const t = typeof v === 'string' ? parseTime(v) : null;
      return t === null ? { ok: false, expected: "a time 'HH:MM:SS[.ffffff]'" } : { ok: true, value: t };
    }
    case 'interval': {
      const iv = v instanceof Interval ? v : typeof v === 'string' ? parseInterval(v) : null;
      return iv === null
        ? { ok: false, expected: "an interval such as '1 day 02:00:00'" }
        : { ok: true, value: iv };
    }
    case 'jsonb': {
      const j = jsonbFromParsed(v);
      return j === null ? { ok: false, expected: 'a JSON value' } : { ok: true, value: j };
    }
    case 'uuid':
    case 'bytea':
      return coerceBinary(v, type);
    case 'array':
      return coerceArray(v, type, coerceIngest);
    case 'unknown':
      return { ok: false, expected: 'a value of a known type' };
  }
}
