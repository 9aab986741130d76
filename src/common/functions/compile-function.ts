// The named scalar functions (string, regular expression and mathematical ones) and their compiler:
// each function's name in plans, and a closure over compiled arguments. Types are resolved by the
// binder (src/planner/bind-expr.ts); every function here is strict — NULL in, NULL out — except
// CONCAT / CONCAT_WS (which skip NULLs) and GREATEST / LEAST (which ignore them).
import { TRIG_FUNCTIONS, isTrigFunction, trig } from './trig.ts';
import * as codes from './text-codes.ts';
import { formatText, quoteIdent, quoteLiteral } from './format.ts';
import { likeEscape } from '../like.ts';
import { SluiceError } from '../errors.ts';
import type { SqlType, Value } from '../types.ts';
import { T } from '../types.ts';
import { castValue, withoutCharPadding } from '../cast.ts';
import { checkInt, compareValues } from '../values.ts';
import { Decimal } from '../decimal.ts';
import { charOfOffset, offsetOfChar, regexCompiler, type SqlRegex } from './regex.ts';
import * as text from './text.ts';
import * as math from './math.ts';
import * as nmath from './numeric-math.ts';
import { Jsonb, makeObject, type JsonNode } from '../json/jsonb.ts';
import { jsonbNodeOf } from '../json/to-jsonb.ts';
import { objectAggPair, objectKeyText } from '../json/object-agg-pair.ts';
import { TIME_FNS, compileTimeFunction, isTimeFn } from './time.ts';
import { JSONB_FNS, compileJsonbFunction, isJsonbFn } from './jsonb.ts';
import { BINARY_FNS, compileBinaryFunction, isBinaryFn } from './binary.ts';
import { ARRAY_FNS, compileArrayFunction, isArrayFn } from './array.ts';

export const FUNCTION_FNS = [
  'btrim',
  'ltrim',
  'rtrim',
  'replace',
  'concat_args',
  'concat_ws',
  'strpos',
  'split_part',
  'left',
  'right',
  'lpad',
  'rpad',
  'repeat',
  'reverse',
  'initcap',
  'md5',
  'regex_match',
  'regex_imatch',
  'similar_to',
  'regexp_replace',
  'regexp_like',
  'regexp_count',
  'regexp_substr',
  'regexp_instr',
  'substring_regex',
  'greatest',
  'least',
  'power',
  'sqrt',
  'exp',
  'ln',
  'log10',
  'log',
  'sign',
  'trunc',
  'width_bucket',
  'cbrt',
  'pi',
  ...TRIG_FUNCTIONS,
  'ascii',
  'chr',
  'translate',
  'starts_with',
  'overlay',
  'bytea_overlay',
  'to_hex',
  'format',
  'quote_literal',
  'quote_nullable',
  'quote_ident',
  'like_escape',
  'div_trunc',
  'gcd',
  'lcm',
  'scale',
  'min_scale',
  'trim_scale',
  'to_jsonb',
  'jsonb_agg_elem',
  'jsonb_object_agg_pair',
  'jsonb_build_array',
  'jsonb_build_object',
  ...TIME_FNS,
  ...JSONB_FNS,
  ...BINARY_FNS,
  ...ARRAY_FNS,
] as const;
export type FunctionFn = (typeof FUNCTION_FNS)[number];

type RowFn = (row: readonly Value[]) => Value;

const num = (v: Value): number =>
  typeof v === 'bigint' ? Number(v) : v instanceof Decimal ? v.toNumber() : (v as number);

/** A strict function of one to four arguments: NULL if any argument is NULL. */
function strict(args: readonly RowFn[], f: (...values: Value[]) => Value): RowFn {
  const [a, b, c, d] = args as [RowFn, RowFn | undefined, RowFn | undefined, RowFn | undefined];
  switch (args.length) {
    case 1:
      return (row) => {
        const x = a(row);
        return x === null ? null : f(x);
      };
    case 2:
      return (row) => {
        const x = a(row);
        if (x === null) return null;
        const y = (b as RowFn)(row);
        return y === null ? null : f(x, y);
      };
    default:
      return (row) => {
        const values: Value[] = [];
        for (const g of [a, b, c, d]) {
          if (g === undefined) break;
          const v = g(row);
          if (v === null) return null;
          values.push(v);
        }
        return f(...values);
      };
  }
}

/** A value as CONCAT writes it: PostgreSQL's output form of its type (a boolean is `t` or `f`). */
function textOf(v: Value, type: SqlType): string {
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'string') return v;
  return castValue(v, type, T.text) as string;
}

export function compileFunction(fn: FunctionFn, args: readonly RowFn[], argTypes: readonly SqlType[]): RowFn {
  if (isTimeFn(fn)) return compileTimeFunction(fn, args, argTypes);
  if (isJsonbFn(fn)) return compileJsonbFunction(fn, args);
  if (isArrayFn(fn)) return compileArrayFunction(fn, args, argTypes);
  if (isBinaryFn(fn)) return compileBinaryFunction(fn, args);
  if (isTrigFunction(fn)) return strict(args, (x, y) => trig(fn, num(x), y === undefined ? 0 : num(y)));
  switch (fn) {
    case 'ascii':
      return strict(args, (s) => codes.ascii(s as string));
    case 'chr':
      return strict(args, (c) => codes.chr(num(c)));
    case 'translate':
      return strict(args, (s, from, to) => codes.translate(s as string, from as string, to as string));
    case 'starts_with':
      return strict(args, (s, prefix) => (s as string).startsWith(prefix as string));
    case 'overlay':
    case 'bytea_overlay': {
      const bytes = fn === 'bytea_overlay';
      return strict(args, (s, t, start, count) =>
        codes.overlay(
          s as string,
          t as string,
          num(start),
          count === undefined ? undefined : num(count),
          bytes,
        ),
      );
    }
    case 'format': {
      const [fmt, ...rest] = args as [RowFn, ...RowFn[]];
      const types = argTypes.slice(1);
      return (row) => {
        const f = fmt(row);
        if (f === null) return null;
        const texts = rest.map((g, i) => {
          const v = g(row);
          return v === null ? null : textOf(v, types[i] as SqlType);
        });
        return formatText(f as string, texts);
      };
    }
    case 'quote_ident':
      return strict(args, (s) => quoteIdent(s as string));
    case 'like_escape':
      return strict(args, (pattern, escape) => likeEscape(pattern as string, escape as string));
    case 'quote_literal':
    case 'quote_nullable': {
      const [a] = args as [RowFn];
      const type = argTypes[0] as SqlType;
      const nullable = fn === 'quote_nullable';
      return (row) => {
        const v = a(row);
        if (v === null) return nullable ? 'NULL' : null;
        return quoteLiteral(textOf(v, type));
      };
    }
    case 'to_hex': {
      const bits = argTypes[0]?.kind === 'int' && argTypes[0].bits === 64 ? 64 : 32;
      return strict(args, (x) => codes.toHex(x as number | bigint, bits));
    }
    case 'btrim':
    case 'ltrim':
    case 'rtrim': {
      const leading = fn !== 'rtrim';
      const trailing = fn !== 'ltrim';
      if (args.length === 1) return strict(args, (s) => text.trimChars(s as string, ' ', leading, trailing));
      return strict(args, (s, set) => text.trimChars(s as string, set as string, leading, trailing));
    }
    case 'replace':
      return strict(args, (s, from, to) => text.replaceText(s as string, from as string, to as string));
    case 'concat_args':
      return (row) => {
        const parts: string[] = [];
        args.forEach((g, i) => {
          const v = g(row);
          if (v !== null) parts.push(textOf(v, argTypes[i] as SqlType));
        });
        return text.joinChecked(parts, '');
      };
    case 'concat_ws': {
      const [sep, ...rest] = args as [RowFn, ...RowFn[]];
      return (row) => {
        const s = sep(row);
        if (s === null) return null;
        const parts: string[] = [];
        rest.forEach((g, i) => {
          const v = g(row);
          if (v !== null) parts.push(textOf(v, argTypes[i + 1] as SqlType));
        });
        return text.joinChecked(parts, s as string);
      };
    }
    case 'strpos':
      return strict(args, (s, sub) => text.strpos(s as string, sub as string));
    case 'split_part':
      return strict(args, (s, d, n) => text.splitPart(s as string, d as string, num(n)));
    case 'left':
      return strict(args, (s, n) => text.leftText(s as string, num(n)));
    case 'right':
      return strict(args, (s, n) => text.rightText(s as string, num(n)));
    case 'lpad':
    case 'rpad': {
      const left = fn === 'lpad';
      if (args.length === 2) return strict(args, (s, n) => text.pad(s as string, num(n), ' ', left));
      return strict(args, (s, n, f) => text.pad(s as string, num(n), f as string, left));
    }
    case 'repeat':
      return strict(args, (s, n) => text.repeatText(s as string, num(n)));
    case 'reverse':
      return strict(args, (s) => text.reverseText(s as string));
    case 'initcap':
      return strict(args, (s) => text.initcap(s as string));
    case 'md5':
      return strict(args, (s) => text.md5(s as string));
    case 'regex_match':
    case 'regex_imatch':
    case 'similar_to': {
      const compile = regexCompiler(fn === 'regex_imatch', fn === 'similar_to');
      return strict(args, (s, p) => compile(p as string).test(s as string));
    }
    case 'regexp_replace': {
      const plain = regexCompiler(false, false);
      const insensitive = regexCompiler(true, false);
      return strict(args, (s, p, r, flags) => {
        let global = false;
        let caseInsensitive = false;
        for (const f of (flags ?? '') as string) {
          if (f === 'g') global = true;
          else if (f === 'i') caseInsensitive = true;
          else if (f === 'c') caseInsensitive = false;
          else throw regexOptionError(f);
        }
        const re = (caseInsensitive ? insensitive : plain)(p as string);
        return re.replace(s as string, r as string, global);
      });
    }
    case 'regexp_like':
    case 'regexp_count':
    case 'regexp_substr':
    case 'regexp_instr':
      return compileRegexSearch(fn, args);
    case 'substring_regex': {
      // substring(s FROM pattern): the first parenthesised group's text when there is one, else the match
      const compile = regexCompiler(false, false);
      return strict(args, (s, p) => {
        const m = compile(p as string).nth(s as string, 0, 1);
        if (m === null) return null;
        return m.groups.length > 0 ? (m.groups[0] ?? null) : m.match;
      });
    }
    case 'greatest':
    case 'least': {
      const want = fn === 'greatest' ? 1 : -1;
      if (argTypes.some((t) => t.kind === 'text' && t.fixed === true)) {
        // char(n) and bpchar (the binder casts every argument so): trailing spaces insignificant, the
        // first of equal values returned as it is, as PostgreSQL's bpchar comparison
        return (row) => {
          let best: Value = null;
          let bestKey = '';
          for (const g of args) {
            const v = g(row);
            if (v === null) continue;
            const key = withoutCharPadding(v as string);
            if (best === null || Math.sign(compareValues(key, bestKey)) === want) {
              best = v;
              bestKey = key;
            }
          }
          return best;
        };
      }
      return (row) => {
        let best: Value = null;
        for (const g of args) {
          const v = g(row);
          if (v !== null && (best === null || Math.sign(compareValues(v, best)) === want)) best = v;
        }
        return best;
      };
    }
    case 'power':
    case 'sqrt':
    case 'exp':
    case 'ln':
    case 'log10':
    case 'log': {
      return strict(args, argTypes[0]?.kind === 'numeric' ? numericMath(fn) : floatMath(fn));
    }
    case 'cbrt':
      return strict(args, (x) => Math.cbrt(num(x)));
    case 'pi':
      return () => Math.PI;
    case 'div_trunc':
      return strict(args, (y, x) => nmath.numericDiv(y as Decimal, x as Decimal));
    case 'gcd':
    case 'lcm': {
      const kind = argTypes[0];
      if (kind?.kind === 'numeric') {
        const f = fn === 'gcd' ? nmath.numericGcd : nmath.numericLcm;
        return strict(args, (a, b) => f(a as Decimal, b as Decimal));
      }
      const bits = kind?.kind === 'int' && kind.bits === 64 ? 64 : 32;
      const big = (v: Value): bigint => (typeof v === 'bigint' ? v : BigInt(v as number));
      return strict(args, (a, b) => checkInt(nmath.intGcdLcm(fn, big(a), big(b)), bits));
    }
    case 'to_jsonb':
    case 'jsonb_agg_elem': {
      // JSONB_AGG's element: a SQL NULL is a JSON null there (to_jsonb itself is strict)
      const type = argTypes[0] ?? T.unknown;
      const arg = args[0] as RowFn;
      if (fn === 'to_jsonb') return strict(args, (v) => Jsonb.of(jsonbNodeOf(v, type)));
      return (row) => Jsonb.of(jsonbNodeOf(arg(row), type));
    }
    case 'jsonb_object_agg_pair': {
      // JSONB_OBJECT_AGG's element [key, value] (object-agg-pair.ts): a NULL key is an error
      const [k, v] = args as [RowFn, RowFn];
      const kt = argTypes[0] ?? T.text;
      const vt = argTypes[1] ?? T.unknown;
      return (row) => objectAggPair(k(row), kt, v(row), vt);
    }
    case 'jsonb_build_array':
      return (row) => Jsonb.of(args.map((g, i) => jsonbNodeOf(g(row), argTypes[i] ?? T.unknown)));
    case 'jsonb_build_object':
      return (row) => {
        const pairs: [string, JsonNode][] = [];
        for (let i = 0; i + 1 < args.length; i += 2) {
          const k = (args[i] as RowFn)(row);
          if (k === null) {
            throw new SluiceError('INVALID_VALUE', `argument ${i + 1}: key must not be null`);
          }
          // a key is its value's text, a boolean's spelled out and a timestamp's as in JSON, never
          // jsonb or an array (PostgreSQL's key_scalar: object-agg-pair.ts)
          const key = objectKeyText(k, argTypes[i] ?? T.text);
          const v = (args[i + 1] as RowFn)(row);
          pairs.push([key, jsonbNodeOf(v, argTypes[i + 1] ?? T.unknown)]);
        }
        return Jsonb.of(makeObject(pairs));
      };
    case 'scale':
      return strict(args, (x) => nmath.numericScale(x as Decimal));
    case 'min_scale':
      return strict(args, (x) => nmath.numericMinScale(x as Decimal));
    case 'trim_scale':
      return strict(args, (x) => nmath.numericTrimScale(x as Decimal));
    case 'sign':
      if (argTypes[0]?.kind === 'numeric') return strict(args, (x) => new Decimal((x as Decimal).sign(), 0));
      return strict(args, (x) => math.sign(num(x)));
    case 'trunc':
      if (argTypes[0]?.kind === 'numeric') {
        if (args.length === 1) return strict(args, (x) => (x as Decimal).trunc(0));
        return strict(args, (x, d) => (x as Decimal).trunc(Math.max(-131_072, Math.min(16_383, num(d)))));
      }
      if (args.length === 1) return strict(args, (x) => math.trunc(num(x)));
      return strict(args, (x, d) => math.trunc(num(x), num(d)));
    case 'width_bucket':
      return strict(args, (x, lo, hi, n) => math.widthBucket(num(x), num(lo), num(hi), num(n)));
  }
}

/** The exact numeric forms (numeric-math.ts): PostgreSQL's digits and result scales. */
function numericMath(fn: 'power' | 'sqrt' | 'exp' | 'ln' | 'log10' | 'log'): (...values: Value[]) => Value {
  const TEN = new Decimal(10, 0);
  switch (fn) {
    case 'power':
      return (x, y) => nmath.numericPower(x as Decimal, y as Decimal);
    case 'sqrt':
      return (x) => nmath.numericSqrt(x as Decimal);
    case 'exp':
      return (x) => nmath.numericExp(x as Decimal);
    case 'ln':
      return (x) => nmath.numericLn(x as Decimal);
    case 'log10':
      return (x) => nmath.numericLog(TEN, x as Decimal);
    case 'log':
      return (b, x) => nmath.numericLog(b as Decimal, x as Decimal);
  }
}

function floatMath(fn: 'power' | 'sqrt' | 'exp' | 'ln' | 'log10' | 'log'): (...values: Value[]) => number {
  switch (fn) {
    case 'power':
      return (x, y) => math.power(num(x as Value), num(y as Value));
    case 'sqrt':
      return (x) => math.sqrt(num(x as Value));
    case 'exp':
      return (x) => math.exp(num(x as Value));
    case 'ln':
      return (x) => math.ln(num(x as Value));
    case 'log10':
      return (x) => math.log10(num(x as Value));
    case 'log':
      return (b, x) => math.logBase(num(b as Value), num(x as Value));
  }
}

/**
 * regexp_like(s, p [, flags]), regexp_count(s, p [, start [, flags]]) and
 * regexp_substr(s, p [, start [, n [, flags [, subexpr]]]]) (PostgreSQL 15): positions count
 * characters; the flags are i and c (g is refused, as PostgreSQL does for these).
 */
function compileRegexSearch(
  fn: 'regexp_like' | 'regexp_count' | 'regexp_substr' | 'regexp_instr',
  args: readonly RowFn[],
): RowFn {
  const plain = regexCompiler(false, false);
  const insensitive = regexCompiler(true, false);
  const regex = (p: Value, flags: Value | undefined): SqlRegex => {
    let caseInsensitive = false;
    for (const f of (flags ?? '') as string) {
      if (f === 'i') caseInsensitive = true;
      else if (f === 'c') caseInsensitive = false;
      else if (f === 'g') throw globalOptionError(fn);
      else throw regexOptionError(f);
    }
    return (caseInsensitive ? insensitive : plain)(p as string);
  };
  const position = (name: string, v: Value | undefined, min: number): number => {
    if (v === undefined) return min === 0 ? 0 : 1;
    const n = num(v);
    if (n < min) throw new SluiceError('INVALID_VALUE', `invalid value for parameter "${name}": ${n}`);
    return n;
  };
  switch (fn) {
    case 'regexp_like':
      return strict(args, (s, p, flags) => regex(p as Value, flags).test(s as string));
    case 'regexp_count': {
      return strictAll(args, ([s, p, start, flags]) => {
        const from = offsetOfChar(s as string, position('start', start, 1));
        return regex(p as Value, flags).count(s as string, from);
      });
    }
    case 'regexp_substr':
      return strictAll(args, ([s, p, start, n, flags, subexpr]) => {
        const from = offsetOfChar(s as string, position('start', start, 1));
        const m = regex(p as Value, flags).nth(s as string, from, position('n', n, 1));
        if (m === null) return null;
        const g = position('subexpr', subexpr, 0);
        if (g === 0) return m.match;
        return m.groups[g - 1] ?? null;
      });
    case 'regexp_instr':
      // regexp_instr(s, p [, start [, n [, endoption [, flags [, subexpr]]]]]): 0 when there is no match
      return strictAll(args, ([s, p, start, n, endoption, flags, subexpr]) => {
        const text = s as string;
        const from = offsetOfChar(text, position('start', start, 1));
        const end = position('endoption', endoption, 0);
        if (end > 1)
          throw new SluiceError('INVALID_VALUE', `invalid value for parameter "endoption": ${end}`);
        const m = regex(p as Value, flags).nth(text, from, position('n', n, 1));
        const span = m?.spans[position('subexpr', subexpr, 0)];
        if (span === undefined || span[0] < 0) return 0;
        return charOfOffset(text, end === 1 ? span[1] : span[0]);
      });
  }
}

/** A strict function of any number of arguments, given as one array. */
function strictAll(args: readonly RowFn[], f: (values: readonly (Value | undefined)[]) => Value): RowFn {
  return (row) => {
    const values: Value[] = [];
    for (const g of args) {
      const v = g(row);
      if (v === null) return null;
      values.push(v);
    }
    return f(values);
  };
}

/** Validates the flags of regexp_like/count/substr when they are a constant. */
export function checkSearchFlags(fn: string, flags: string): void {
  for (const f of flags) {
    if (f === 'g') throw globalOptionError(fn);
    if (f !== 'i' && f !== 'c') throw regexOptionError(f);
  }
}

function globalOptionError(fn: string): SluiceError {
  return new SluiceError('INVALID_VALUE', `${fn}() does not support the "global" option`);
}

/** Validates regexp_replace's flags when they are a constant (the binder points the error at them). */
export function checkRegexFlags(flags: string): void {
  for (const f of flags) if (f !== 'g' && f !== 'i' && f !== 'c') throw regexOptionError(f);
}

function regexOptionError(flag: string): SluiceError {
  return new SluiceError('INVALID_VALUE', `invalid regular expression option: "${flag}"`, {
    hint: 'regexp_replace takes the flags g (every match), i (ignore case) and c (case-sensitive)',
  });
}
