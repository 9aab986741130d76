// The array functions and operators as plan functions (section 9.19 of PostgreSQL's manual): the
// ARRAY[...] constructor, subscripts, cardinality, array_length, array_position, array_to_string,
// string_to_array, array_append/prepend/cat (and ||), @> <@ &&, x op ANY/ALL (array), regexp_match
// and regexp_split_to_array. NULL handling is each function's own, as PostgreSQL's (noted per case).
import { SluiceError } from '../errors.ts';
import type { SqlType, Value } from '../types.ts';
import { floatBitsOf, floatText } from '../float-text.ts';
import { MAX_ARRAY_LENGTH } from '../limits.ts';
import { SqlArray, arrayTooLarge } from '../array/sql-array.ts';
import { charLength, compareValues, formatValue, valuesEqual } from '../values.ts';
import { checkLength } from './text.ts';
import { regexCompiler, type SqlRegex } from './regex.ts';
import type { Jsonb } from '../json/jsonb.ts';
import { jsonbExists } from '../json/jsonb-ops.ts';

export const ARRAY_FNS = [
  'array_make',
  'array_subscript',
  'cardinality',
  'array_length',
  'array_position',
  'array_to_string',
  'string_to_array',
  'array_append',
  'array_prepend',
  'array_cat',
  'array_contains',
  'array_contained',
  'array_overlap',
  'array_any',
  'array_all',
  'regexp_match',
  'regexp_split_to_array',
  'jsonb_exists_any',
  'jsonb_exists_all',
] as const;
export type ArrayFn = (typeof ARRAY_FNS)[number];

const ARRAY_FN_SET: ReadonlySet<string> = new Set(ARRAY_FNS);
export function isArrayFn(fn: string): fn is ArrayFn {
  return ARRAY_FN_SET.has(fn);
}

/** The quantified comparisons of `x op ANY/ALL (array)`: the op is the call's constant last argument. */
export const QUANTIFIED_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
export type QuantifiedOp = (typeof QUANTIFIED_OPS)[number];

type RowFn = (row: readonly Value[]) => Value;

function build(items: Value[]): SqlArray {
  if (items.length > MAX_ARRAY_LENGTH) throw arrayTooLarge(items.length);
  return new SqlArray(items);
}

/** An element's text as array_to_string writes it (booleans t/f, as PostgreSQL's element output). */
function elementText(v: Value, floatBits: 32 | 64 | null): string {
  return typeof v === 'boolean'
    ? v
      ? 't'
      : 'f'
    : typeof v === 'number' && floatBits !== null
      ? floatText(v, floatBits)
      : formatValue(v);
}

function compare(op: QuantifiedOp, a: Value, b: Value): boolean {
  switch (op) {
    case 'eq':
      return valuesEqual(a, b);
    case 'ne':
      return !valuesEqual(a, b);
    case 'lt':
      return compareValues(a, b) < 0;
    case 'le':
      return compareValues(a, b) <= 0;
    case 'gt':
      return compareValues(a, b) > 0;
    case 'ge':
      return compareValues(a, b) >= 0;
  }
}

/** Whether `array` holds a non-null element equal to `x` (containment never matches NULLs). */
function holds(array: SqlArray, x: Value): boolean {
  if (x === null) return false;
  for (const y of array.items) if (y !== null && valuesEqual(x, y)) return true;
  return false;
}

function regexFor(fn: string): (p: string, flags: Value | undefined) => SqlRegex {
  const plain = regexCompiler(false, false);
  const insensitive = regexCompiler(true, false);
  return (p, flags) => {
    let caseInsensitive = false;
    for (const f of (flags ?? '') as string) {
      if (f === 'i') caseInsensitive = true;
      else if (f === 'c') caseInsensitive = false;
      else if (f === 'g')
        throw new SluiceError('INVALID_VALUE', `${fn}() does not support the "global" option`, {
          hint: fn === 'regexp_match' ? 'use regexp_substr, or regexp_split_to_array' : undefined,
        });
      else throw new SluiceError('INVALID_VALUE', `invalid regular expression option: "${f}"`);
    }
    return (caseInsensitive ? insensitive : plain)(p);
  };
}

/** PostgreSQL's split: empty matches at either end, or right after a match, do not split. */
function splitByRegex(s: string, re: SqlRegex): SqlArray {
  const out: Value[] = [];
  let pieceStart = 0;
  let from = 0;
  let prevEnd = -1;
  while (from <= s.length) {
    const m = re.nth(s, from, 1);
    if (m === null) break;
    const [ms, me] = m.spans[0] as readonly [number, number];
    if (ms === me && (ms === 0 || ms >= s.length || ms === prevEnd)) {
      from = ms + stepAt(s, ms);
      continue;
    }
    out.push(s.slice(pieceStart, ms));
    if (out.length > MAX_ARRAY_LENGTH) throw arrayTooLarge(out.length);
    pieceStart = me;
    prevEnd = me;
    from = me > ms ? me : ms + stepAt(s, ms);
  }
  out.push(s.slice(pieceStart));
  return build(out);
}

/** ARRAY_TOO_LARGE when `s` split at `sep` would have more than MAX_ARRAY_LENGTH pieces. */
function checkPieces(s: string, sep: string): void {
  let pieces = 1;
  for (let i = s.indexOf(sep); i >= 0; i = s.indexOf(sep, i + sep.length)) {
    if (++pieces > MAX_ARRAY_LENGTH) throw arrayTooLarge(pieces);
  }
}

/** One character's UTF-16 length at `i` (an empty match moves on by a whole code point). */
function stepAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
}

function index(v: Value): number {
  return typeof v === 'bigint' ? (v > 0n ? Infinity : -Infinity) : (v as number);
}

export function compileArrayFunction(
  fn: ArrayFn,
  args: readonly RowFn[],
  argTypes: readonly SqlType[],
): RowFn {
  const [a, b, c] = args as [RowFn, RowFn | undefined, RowFn | undefined];
  switch (fn) {
    case 'array_make':
      // ARRAY[...]: NULL elements stay
      return (row) => build(args.map((g) => g(row)));
    case 'array_subscript':
      // 1-based; NULL array or index, or an index out of range: NULL
      return (row) => {
        const arr = a(row) as SqlArray | null;
        if (arr === null) return null;
        const i = (b as RowFn)(row);
        if (i === null) return null;
        const k = index(i);
        return k >= 1 && k <= arr.length ? (arr.items[k - 1] as Value) : null;
      };
    case 'cardinality':
      return (row) => {
        const arr = a(row) as SqlArray | null;
        return arr === null ? null : arr.length;
      };
    case 'array_length':
      // dimension 1 only exists for a non-empty array (PostgreSQL: array_length('{}', 1) is NULL)
      return (row) => {
        const arr = a(row) as SqlArray | null;
        const d = (b as RowFn)(row);
        if (arr === null || d === null) return null;
        return index(d) === 1 && arr.length > 0 ? arr.length : null;
      };
    case 'array_position':
      // IS NOT DISTINCT FROM: a NULL finds the first NULL element
      return (row) => {
        const arr = a(row) as SqlArray | null;
        if (arr === null) return null;
        const x = (b as RowFn)(row);
        let start = 1;
        if (c !== undefined) {
          const s = c(row);
          if (s === null) throw new SluiceError('INVALID_VALUE', 'initial position must not be null');
          start = Math.max(1, index(s));
        }
        for (let i = start - 1; i < arr.length; i++) {
          const y = arr.items[i] as Value;
          if (x === null ? y === null : y !== null && valuesEqual(x, y)) return i + 1;
        }
        return null;
      };
    case 'array_to_string': {
      // NULL elements are skipped, or written as the third argument when it is given (and not NULL)
      const arrayType = argTypes[0];
      const floatBits = arrayType?.kind === 'array' ? floatBitsOf(arrayType.element) : null;
      return (row) => {
        const arr = a(row) as SqlArray | null;
        const sep = (b as RowFn)(row);
        if (arr === null || sep === null) return null;
        const nullText = c === undefined ? null : c(row);
        const parts: string[] = [];
        let length = 0;
        for (const v of arr.items) {
          const part = v !== null ? elementText(v, floatBits) : (nullText as string | null);
          if (part === null) continue;
          // an ARRAY_AGG's array is not bounded: the text is, before it is built
          length += part.length + (parts.length > 0 ? (sep as string).length : 0);
          checkLength(length);
          parts.push(part);
        }
        return parts.join(sep as string);
      };
    }
    case 'string_to_array':
      // delimiter NULL: one element per character; '' : the whole string; an element equal to the
      // third argument becomes NULL; '' in: the empty array
      return (row) => {
        const s = a(row) as string | null;
        if (s === null) return null;
        const sep = (b as RowFn)(row) as string | null;
        const nullText = c === undefined ? null : (c(row) as string | null);
        if (s === '') return new SqlArray([]);
        // bounded before the pieces are built (a long text splits into many)
        if (sep === null && charLength(s) > MAX_ARRAY_LENGTH) throw arrayTooLarge(charLength(s));
        if (sep !== null && sep !== '') checkPieces(s, sep);
        const parts = sep === null ? Array.from(s) : sep === '' ? [s] : s.split(sep);
        return build(parts.map((p) => (nullText !== null && p === nullText ? null : p)));
      };
    case 'array_append':
      return (row) => {
        const arr = a(row) as SqlArray | null;
        return build([...(arr?.items ?? []), (b as RowFn)(row)]);
      };
    case 'array_prepend':
      return (row) => {
        const arr = (b as RowFn)(row) as SqlArray | null;
        return build([a(row), ...(arr?.items ?? [])]);
      };
    case 'array_cat':
      // a NULL side is ignored; both NULL: NULL
      return (row) => {
        const x = a(row) as SqlArray | null;
        const y = (b as RowFn)(row) as SqlArray | null;
        if (x === null) return y;
        if (y === null) return x;
        return build([...x.items, ...y.items]);
      };
    case 'array_contains':
    case 'array_contained':
      // @> / <@: every non-null element of the contained side equals one of the other; a NULL
      // element is contained by nothing (PostgreSQL)
      return (row) => {
        const x = a(row) as SqlArray | null;
        const y = (b as RowFn)(row) as SqlArray | null;
        if (x === null || y === null) return null;
        const [outer, inner] = fn === 'array_contains' ? [x, y] : [y, x];
        for (const v of inner.items) if (!holds(outer, v)) return false;
        return true;
      };
    case 'array_overlap':
      return (row) => {
        const x = a(row) as SqlArray | null;
        const y = (b as RowFn)(row) as SqlArray | null;
        if (x === null || y === null) return null;
        for (const v of x.items) if (holds(y, v)) return true;
        return false;
      };
    case 'array_any':
    case 'array_all': {
      // three-valued: ANY is true on a true comparison, else NULL when one was NULL, else false;
      // ALL is false on a false one, else NULL when one was NULL, else true (empty: false / true)
      const any = fn === 'array_any';
      return (row) => {
        const arr = (b as RowFn)(row) as SqlArray | null;
        if (arr === null) return null;
        if (arr.length === 0) return !any;
        const x = a(row);
        const op = (c as RowFn)(row) as QuantifiedOp;
        if (x === null) return null;
        let sawNull = false;
        for (const y of arr.items) {
          if (y === null) sawNull = true;
          else if (compare(op, x, y) === any) return any;
        }
        return sawNull ? null : !any;
      };
    }
    case 'regexp_match': {
      // the first match's groups (or the whole match when there are none), or NULL for no match
      const regex = regexFor(fn);
      return (row) => {
        const s = a(row);
        const p = (b as RowFn)(row);
        const flags = c === undefined ? undefined : c(row);
        if (s === null || p === null || flags === null) return null;
        const m = regex(p as string, flags).nth(s as string, 0, 1);
        if (m === null) return null;
        return new SqlArray(m.groups.length > 0 ? [...m.groups] : [m.match]);
      };
    }
    case 'regexp_split_to_array': {
      const regex = regexFor(fn);
      return (row) => {
        const s = a(row);
        const p = (b as RowFn)(row);
        const flags = c === undefined ? undefined : c(row);
        if (s === null || p === null || flags === null) return null;
        return splitByRegex(s as string, regex(p as string, flags));
      };
    }
    case 'jsonb_exists_any':
    case 'jsonb_exists_all': {
      // ?| / ?& : any / all of the (non-null) keys exist; a NULL key is skipped, as PostgreSQL does
      const any = fn === 'jsonb_exists_any';
      return (row) => {
        const j = a(row) as Jsonb | null;
        const keys = (b as RowFn)(row) as SqlArray | null;
        if (j === null || keys === null) return null;
        for (const k of keys.items) {
          if (k === null) continue;
          if (jsonbExists(j, k as string) === any) return any;
        }
        return !any;
      };
    }
  }
}
