// Row filters of row pages (view-rows.ts), PostgREST-style: `col=value` or `col=eq.value`, `neq.`,
// `gt.`, `gte.`, `lt.`, `lte.`, `in.(a,b)`, `is.null`, `not.null`, the literal typed by its column.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { parseDate, parseTimestamp } from '../common/cast.ts';
import { compareValues } from '../common/values.ts';
import { Decimal, compareDecimals, parseDecimal } from '../common/decimal.ts';
import { Interval, compareIntervals, parseInterval } from '../common/time/interval.ts';
import { Jsonb, parseJsonb } from '../common/json/jsonb.ts';
import { SqlArray, parseArrayText } from '../common/array/sql-array.ts';
import { parseBytea, parseUuid } from '../common/uuid-bytea.ts';
import { parseTime, parseTimestamptz } from '../common/time/datetime.ts';

export interface Matcher {
  readonly column: number;
  readonly test: (v: Value) => boolean;
  /** An equality's value, in its column's representation (what a range seek goes to); else undefined. */
  readonly value?: Value;
}

interface Literal {
  readonly value: Value;
  readonly equals: (v: Value) => boolean;
}

/** A filter literal typed by its column; INVALID_VALUE when it is not a value of that type. */
function literalFor(where: string, column: string, type: string, text: string): Literal {
  const bad = (expected: string): SluiceError =>
    new SluiceError(
      'INVALID_VALUE',
      `invalid filter value "${text}" for column "${column}" of ${where}: expected ${expected}`,
      { hint: 'to match a value that looks like an operator (gt.1, in.(…)), write it as eq.<value>' },
    );
  const t = type.toLowerCase();
  if (t.endsWith('[]')) {
    // an array in PostgreSQL's text form ({1,2,NULL}), each element read as its column's element type
    let items: (string | null)[];
    try {
      items = parseArrayText(text);
    } catch {
      throw bad(`an array such as {1,2,NULL} of ${t.slice(0, -2)} values`);
    }
    const array = new SqlArray(
      items.map((x) => (x === null ? null : literalFor(where, column, t.slice(0, -2), x).value)),
    );
    return { value: array, equals: (v) => v instanceof SqlArray && v.key() === array.key() };
  }
  if (t === 'smallint' || t === 'integer' || t === 'bigint') {
    if (!/^\s*[+-]?\d+\s*$/.test(text)) throw bad('an integer');
    const big = BigInt(text.trim());
    const n = Number(big);
    const want: number | bigint = Number.isSafeInteger(n) ? n : big;
    return { value: want, equals: (v) => v === want || (typeof v === 'bigint' && v === big) };
  }
  if (t.startsWith('numeric') || t.startsWith('decimal')) {
    // Exact: 1.5 matches 1.50; the column's type decides, so '0.3' is never compared as a double.
    const d = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,6})?\s*$/.test(text) ? parseDecimal(text) : null;
    if (d === null) throw bad('a number');
    return { value: d, equals: (v) => v instanceof Decimal && compareDecimals(v, d) === 0 };
  }
  if (t === 'real' || t === 'double precision') {
    const n = /^\s*[+-]?nan\s*$/i.test(text) ? NaN : Number(text);
    if (text.trim() === '' || (Number.isNaN(n) && !/nan/i.test(text))) throw bad('a number');
    return {
      value: n,
      equals: Number.isNaN(n)
        ? (v) => typeof v === 'number' && Number.isNaN(v)
        : (v) => v === n || (typeof v === 'bigint' && Number(v) === n),
    };
  }
  if (t === 'boolean') {
    const s = text.trim().toLowerCase();
    if (s === 'true' || s === 't') return { value: true, equals: (v) => v === true };
    if (s === 'false' || s === 'f') return { value: false, equals: (v) => v === false };
    throw bad('true or false');
  }
  if (t === 'interval') {
    const iv = parseInterval(text);
    if (iv === null) throw bad("an interval (such as '1 day 02:00:00')");
    return { value: iv, equals: (v) => v instanceof Interval && compareIntervals(v, iv) === 0 };
  }
  if (t === 'jsonb') {
    let j: Jsonb;
    try {
      j = parseJsonb(text, 'stored'); // it matches stored values, which an ingested object may have written with either
    } catch {
      throw bad('a JSON value');
    }
    return { value: j, equals: (v) => v instanceof Jsonb && v.key() === j.key() };
  }
  if (t === 'uuid' || t === 'bytea') {
    // any input form, matched by its canonical text (the stored value)
    const canonical = canonicalBinary(t, text);
    if (canonical === null) throw bad(t === 'uuid' ? 'a uuid' : "a bytea (such as '\\x0102ff')");
    return { value: canonical, equals: (v) => v === canonical };
  }
  if (t === 'time' || t === 'timestamp with time zone') {
    const canonical = t === 'time' ? parseTime(text) : parseTimestamptz(text);
    if (canonical === null) throw bad(t === 'time' ? 'a time (HH:MM:SS)' : 'a timestamp with time zone');
    return { value: canonical, equals: (v) => v === canonical };
  }
  if (t === 'date' || t.startsWith('timestamp')) {
    const canonical = t === 'date' ? parseDate(text) : parseTimestamp(text);
    if (canonical === null)
      throw bad(t === 'date' ? 'a date (YYYY-MM-DD)' : 'a timestamp (YYYY-MM-DD HH:MM:SS)');
    return { value: canonical, equals: (v) => v === canonical };
  }
  return { value: text, equals: (v) => v === text };
}

const OPERATOR = /^(eq|neq|gt|gte|lt|lte|in|is|not)\.(.*)$/s;

/** The items of an `in.(a,b,"c,d")` list: commas separate, double quotes hold commas (\" is a quote). */
function inItems(text: string, fail: () => SluiceError): string[] {
  if (!text.startsWith('(') || !text.endsWith(')')) throw fail();
  const body = text.slice(1, -1);
  if (body.trim() === '') return [];
  const items: string[] = [];
  let i = 0;
  for (;;) {
    let item = '';
    if (body[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= body.length) throw fail();
        const ch = body[i] as string;
        if (ch === '\\' && i + 1 < body.length) {
          item += body[i + 1];
          i += 2;
        } else if (ch === '"') {
          i += 1;
          break;
        } else {
          item += ch;
          i += 1;
        }
      }
      if (i < body.length && body[i] !== ',') throw fail();
    } else {
      const comma = body.indexOf(',', i);
      item = body.slice(i, comma === -1 ? body.length : comma);
      i = comma === -1 ? body.length : comma;
    }
    items.push(item);
    if (i >= body.length) return items;
    i += 1; // the comma
  }
}

/** One filter on one column: plain text is equality; `op.literal` the operator's test (SQL: NULL never compares). */
export function matcherFor(
  where: string,
  column: string,
  position: number,
  type: string,
  text: string,
): Matcher {
  const m = OPERATOR.exec(text);
  if (m === null) {
    const lit = literalFor(where, column, type, text);
    return { column: position, value: lit.value, test: lit.equals };
  }
  const op = m[1] as string;
  const operand = m[2] as string;
  const fail = (expected: string): SluiceError =>
    new SluiceError(
      'INVALID_REQUEST',
      `invalid filter "${text}" on column "${column}" of ${where}: ${expected}`,
      {
        hint: 'filters are value, eq.v, neq.v, gt.v, gte.v, lt.v, lte.v, in.(v1,v2), is.null, not.null; eq.<value> matches a value that looks like an operator',
      },
    );
  switch (op) {
    case 'eq': {
      const lit = literalFor(where, column, type, operand);
      return { column: position, value: lit.value, test: lit.equals };
    }
    case 'neq': {
      const lit = literalFor(where, column, type, operand);
      return { column: position, test: (v) => v !== null && !lit.equals(v) };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const lit = literalFor(where, column, type, operand).value;
      const ok =
        op === 'gt'
          ? (c: number) => c > 0
          : op === 'gte'
            ? (c: number) => c >= 0
            : op === 'lt'
              ? (c: number) => c < 0
              : (c: number) => c <= 0;
      return { column: position, test: (v) => v !== null && ok(compareValues(v, lit)) };
    }
    case 'in': {
      const items = inItems(operand, () => fail('expected in.(value, ...)'));
      const lits = items.map((item) => literalFor(where, column, type, item));
      return { column: position, test: (v) => v !== null && lits.some((l) => l.equals(v)) };
    }
    default: {
      // is.null / not.null
      if (operand.toLowerCase() !== 'null') throw fail(`expected ${op}.null`);
      return { column: position, test: op === 'is' ? (v) => v === null : (v) => v !== null };
    }
  }
}

/** A uuid or bytea filter value's canonical text, or null when it is not one. */
function canonicalBinary(type: 'uuid' | 'bytea', text: string): string | null {
  if (type === 'uuid') return parseUuid(text);
  try {
    return parseBytea(text);
  } catch {
    return null;
  }
}
