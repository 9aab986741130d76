// Binding of function calls: each scalar function's overloads and PostgreSQL's typing rules for
// them (argument coercion, result types), the math functions, and the refusal of aggregates where
// a scalar is expected. Operators and the rest of an expression are bound in bind-expr.ts.
import { bindsJournaled } from './journaled-binding.ts';
import { SluiceError } from '../common/errors.ts';
import { checkRegexFlags, checkSearchFlags } from '../common/functions/compile-function.ts';
import type { ScalarExpr, ScalarFn } from '../common/scalar-expr.ts';
import { T, isNumeric, typeName, type SqlType } from '../common/types.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { AGGREGATE_NAMES, bindExpr, type BindContext } from './bind-expr.ts';
import {
  call,
  checkPattern,
  coerce,
  compare,
  isConst,
  isStringLiteral,
  unify,
  unifyResults,
  charResultType,
  unpadChar,
} from './bind-coerce.ts';
import { commonType, numericResultType } from './types-resolve.ts';
import { bindTimeFunction } from './bind-time.ts';
import { isTrigFunction, trigArity } from '../common/functions/trig.ts';
import { bindJsonbFunction } from './bind-jsonb.ts';
import { bindBinaryFunction } from './bind-binary.ts';
import { bindArrayFunction } from './bind-array.ts';
import { COLLATE_CALL } from '../parser/expr-builder.ts';
import { inlineSqlFunction } from './sql-functions.ts';
import { hasJsonbForm } from '../common/json/to-jsonb.ts';

function fnMismatch(name: string, args: readonly ScalarExpr[], pos: Pos): SluiceError {
  return new SluiceError(
    'UNKNOWN_FUNCTION',
    `function ${name}(${args.map((a) => typeName(a.type)).join(', ')}) does not exist`,
    {
      position: pos,
      hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
    },
  );
}

export function bindFunction(e: Extract<Expr, { kind: 'function' }>, ctx: BindContext): ScalarExpr {
  const inlined = inlineSqlFunction(e, ctx);
  if (inlined !== undefined) return inlined;
  if (AGGREGATE_NAMES.has(e.name)) {
    throw new SluiceError(
      'INVALID_AGGREGATE',
      `aggregate functions are not allowed in ${ctx.aggregateContext ?? 'this context'}`,
      {
        position: e.pos,
      },
    );
  }
  if (e.distinct || e.star) throw fnMismatch(e.name, [], e.pos);
  const args = e.args.map((a) => bindExpr(a, ctx));
  const n = args.length;
  const a0 = args[0];
  if (e.name === COLLATE_CALL) return bindCollate(a0 as ScalarExpr, e.pos);
  const binary = bindBinaryFunction(e, args);
  if (binary !== undefined) return binary;
  const array = bindArrayFunction(e, args);
  if (array !== undefined) return array;
  const numericArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'unknown') return coerce(a, T.float64, e.pos);
    if (isStringLiteral(a)) return coerce(a, T.float64, e.pos);
    if (!isNumeric(a.type)) throw fnMismatch(e.name, args, e.pos);
    return a;
  };
  const textArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'text')
      return e.name === 'length' || e.name === 'char_length' || e.name === 'character_length'
        ? a
        : unpadChar(a);
    if (a.type.kind === 'unknown') return coerce(a, T.text, e.pos);
    throw fnMismatch(e.name, args, e.pos);
  };
  const intArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'int') return a;
    if (a.type.kind === 'unknown') return coerce(a, T.int32, e.pos);
    throw fnMismatch(e.name, args, e.pos);
  };
  if (isTrigFunction(e.name)) {
    // double precision in and out, as PostgreSQL's (an integer or numeric argument becomes a double)
    if (n !== trigArity(e.name)) throw fnMismatch(e.name, args, e.pos);
    return call(
      e.name,
      args.map((a) => coerce(numericArg(a), T.float64, e.pos)),
      T.float64,
    );
  }
  switch (e.name) {
    case 'ascii':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call('ascii', [textArg(a0)], T.int32);
    case 'chr':
      if (n !== 1 || a0 === undefined || (a0.type.kind === 'int' && a0.type.bits === 64))
        throw fnMismatch(e.name, args, e.pos);
      return call('chr', [coerce(intArg(a0), T.int32, e.pos)], T.text);
    case 'translate':
      if (n !== 3) throw fnMismatch(e.name, args, e.pos);
      return call('translate', args.map(textArg), T.text);
    case 'overlay': {
      // overlay(s PLACING t FROM n [FOR m]) (the parser reads the words as commas): text or bytea
      if (n < 3 || n > 4) throw fnMismatch(e.name, args, e.pos);
      const [s, t] = args as [ScalarExpr, ScalarExpr];
      const counts = args.slice(2).map((a) => coerce(intArg(a), T.int32, e.pos));
      const isBytea = (a: ScalarExpr): boolean => a.type.kind === 'bytea';
      if (isBytea(s) || isBytea(t)) {
        const byteaArg = (a: ScalarExpr): ScalarExpr => {
          if (a.type.kind === 'bytea') return a;
          if (a.type.kind === 'unknown') return coerce(a, T.bytea, e.pos);
          throw fnMismatch(e.name, args, e.pos);
        };
        return call('bytea_overlay', [byteaArg(s), byteaArg(t), ...counts], T.bytea);
      }
      return call('overlay', [textArg(s), textArg(t), ...counts], T.text);
    }
    case 'starts_with':
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      return call('starts_with', args.map(textArg), T.bool);
    case 'to_hex': {
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      const x = intArg(a0);
      // to_hex(integer) and to_hex(bigint): a smallint is taken as an integer
      const t = x.type.kind === 'int' && x.type.bits === 64 ? T.int64 : T.int32;
      return call('to_hex', [coerce(x, t, e.pos)], T.text);
    }
    case 'abs':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call('abs', [numericArg(a0)], numericArg(a0).type);
    case 'floor':
    case 'ceil':
    case 'ceiling': {
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      const x = numericArg(a0);
      // PostgreSQL resolves floor(integer) to floor(double precision)
      const t = x.type.kind === 'numeric' ? T.numeric : T.float64;
      return call(e.name === 'floor' ? 'floor' : 'ceil', [coerce(x, t, e.pos)], t);
    }
    case 'round': {
      if (n < 1 || n > 2 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      const x = numericArg(a0);
      const t = n === 2 || x.type.kind === 'numeric' ? T.numeric : T.float64;
      return call(
        'round',
        n === 2 ? [coerce(x, t, e.pos), intArg(args[1] as ScalarExpr)] : [coerce(x, t, e.pos)],
        t,
      );
    }
    case 'mod': {
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      const l = numericArg(a0 as ScalarExpr);
      const r = numericArg(args[1] as ScalarExpr);
      const t = numericResultType(l.type, r.type);
      return call('mod', [coerce(l, t, e.pos), coerce(r, t, e.pos)], t);
    }
    case 'lower':
    case 'upper':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call(e.name, [textArg(a0)], T.text);
    case 'length':
    case 'char_length':
    case 'character_length':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call('length', [textArg(a0)], T.int32);
    case 'substring':
    case 'substr': {
      if (n < 2 || n > 3 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      const a1 = args[1] as ScalarExpr;
      if (e.name === 'substring' && (a1.type.kind === 'text' || a1.type.kind === 'unknown')) {
        // substring(s FROM pattern): PostgreSQL's substring(text, text), a POSIX regular expression
        if (n === 3) {
          throw new SluiceError('NOT_SUPPORTED', 'SUBSTRING(s SIMILAR pattern ESCAPE e) is not supported', {
            position: e.pos,
            hint: 'substring(s FROM pattern) takes a POSIX regular expression',
          });
        }
        const pattern = textArg(a1);
        checkPattern(pattern, false, false, (e.args[1] as Expr).pos);
        return call('substring_regex', [textArg(a0), pattern], T.text);
      }
      return call('substring', [textArg(a0), ...args.slice(1).map(intArg)], T.text);
    }
    case 'btrim':
    case 'ltrim':
    case 'rtrim':
    case 'trim':
      if (n < 1 || n > 2) throw fnMismatch(e.name, args, e.pos);
      return call(e.name === 'trim' ? 'btrim' : e.name, args.map(textArg), T.text);
    case 'replace':
      if (n !== 3) throw fnMismatch(e.name, args, e.pos);
      return call('replace', args.map(textArg), T.text);
    case 'concat':
    case 'concat_ws': {
      if (n < 1) throw fnMismatch(e.name, args, e.pos);
      // Any type, written as its output form: a char(n) keeps its padding, as in PostgreSQL.
      const anyArg = (a: ScalarExpr): ScalarExpr =>
        a.type.kind === 'unknown' ? coerce(a, T.text, e.pos) : a;
      const all =
        e.name === 'concat' ? args.map(anyArg) : [textArg(a0 as ScalarExpr), ...args.slice(1).map(anyArg)];
      return call(e.name === 'concat' ? 'concat_args' : 'concat_ws', all, T.text);
    }
    case 'format': {
      if (n < 1) throw fnMismatch(e.name, args, e.pos);
      const anyArg = (a: ScalarExpr): ScalarExpr =>
        a.type.kind === 'unknown' ? coerce(a, T.text, e.pos) : a;
      return call('format', [textArg(a0 as ScalarExpr), ...args.slice(1).map(anyArg)], T.text);
    }
    case 'quote_ident':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call('quote_ident', [textArg(a0)], T.text);
    case 'like_escape':
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      return call('like_escape', args.map(textArg), T.text);
    case 'quote_literal':
    case 'quote_nullable':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call(e.name, [a0.type.kind === 'unknown' ? coerce(a0, T.text, e.pos) : a0], T.text);
    case 'strpos':
    case 'position':
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      return call('strpos', args.map(textArg), T.int32);
    case 'split_part':
      if (n !== 3) throw fnMismatch(e.name, args, e.pos);
      return call(
        'split_part',
        [textArg(a0 as ScalarExpr), textArg(args[1] as ScalarExpr), intArg(args[2] as ScalarExpr)],
        T.text,
      );
    case 'left':
    case 'right':
    case 'repeat':
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      return call(e.name, [textArg(a0 as ScalarExpr), intArg(args[1] as ScalarExpr)], T.text);
    case 'lpad':
    case 'rpad':
      if (n < 2 || n > 3) throw fnMismatch(e.name, args, e.pos);
      return call(
        e.name,
        [textArg(a0 as ScalarExpr), intArg(args[1] as ScalarExpr), ...args.slice(2).map(textArg)],
        T.text,
      );
    case 'reverse':
    case 'initcap':
    case 'md5':
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      return call(e.name, [textArg(a0)], T.text);
    case 'regexp_replace': {
      if (n < 3 || n > 4) throw fnMismatch(e.name, args, e.pos);
      const [source, pattern, replacement, flags] = args.map(textArg) as [
        ScalarExpr,
        ScalarExpr,
        ScalarExpr,
        ScalarExpr | undefined,
      ];
      if (flags !== undefined && isConst(flags) && typeof flags.value === 'string') {
        try {
          checkRegexFlags(flags.value);
        } catch (err) {
          throw err instanceof SluiceError ? err.at((e.args[3] as Expr).pos) : err;
        }
      }
      const insensitive = flags !== undefined && isConst(flags) && /i[^c]*$/.test(String(flags.value));
      checkPattern(pattern, false, insensitive, (e.args[1] as Expr).pos);
      return call(
        'regexp_replace',
        [source, pattern, replacement, ...(flags === undefined ? [] : [flags])],
        T.text,
      );
    }
    case 'regexp_like':
    case 'regexp_count':
    case 'regexp_substr':
    case 'regexp_instr': {
      // regexp_like(s, p [, flags]); regexp_count(s, p [, start [, flags]]);
      // regexp_substr(s, p [, start [, n [, flags [, subexpr]]]])
      const shapes = {
        regexp_like: ['t', 't', 'f'],
        regexp_count: ['t', 't', 'i', 'f'],
        regexp_substr: ['t', 't', 'i', 'i', 'f', 'i'],
        regexp_instr: ['t', 't', 'i', 'i', 'i', 'f', 'i'],
      } as const;
      const shape = shapes[e.name];
      if (n < 2 || n > shape.length) throw fnMismatch(e.name, args, e.pos);
      const bound = args.map((a, i) => (shape[i] === 'i' ? intArg(a) : textArg(a)));
      const flagsAt = shape.indexOf('f');
      const flags = bound[flagsAt];
      if (flags !== undefined && isConst(flags) && typeof flags.value === 'string') {
        try {
          checkSearchFlags(e.name, flags.value);
        } catch (err) {
          throw err instanceof SluiceError ? err.at((e.args[flagsAt] as Expr).pos) : err;
        }
      }
      const insensitive = flags !== undefined && isConst(flags) && /i[^c]*$/.test(String(flags.value));
      checkPattern(bound[1] as ScalarExpr, false, insensitive, (e.args[1] as Expr).pos);
      const type = e.name === 'regexp_like' ? T.bool : e.name === 'regexp_substr' ? T.text : T.int32;
      return call(e.name, bound, type);
    }
    case 'greatest':
    case 'least': {
      if (n < 1) throw fnMismatch(e.name, args, e.pos);
      // Over char(n) first (charResultType), char's order: trailing spaces insignificant, the value
      // returned as it is; else strings compare as text, char(n) after the first unpadded.
      const char = charResultType(args);
      if (char !== null) return call(e.name, unifyResults(args, e.pos, e.name.toUpperCase()).args, char);
      const unified = unify(args, e.pos, e.name.toUpperCase()).map(unpadChar);
      const t = commonType(unified.map((u) => u.type)) ?? T.unknown;
      return call(e.name, unified, t);
    }
    case 'power':
    case 'pow':
    case 'sqrt':
    case 'exp':
    case 'ln':
    case 'log':
    case 'log10':
    case 'sign':
    case 'trunc':
    case 'width_bucket':
    case 'cbrt':
    case 'pi':
    case 'div':
    case 'gcd':
    case 'lcm':
    case 'scale':
    case 'min_scale':
    case 'trim_scale':
      return bindMath(e, args);
    case 'regexp_matches':
      throw new SluiceError('NOT_SUPPORTED', 'regexp_matches is not supported: it returns a set of rows', {
        position: e.pos,
        hint: 'regexp_match(s, p) returns the first match as text[]',
      });
    case 'jsonb_build_array':
    case 'json_build_array':
    case 'jsonb_build_object':
    case 'json_build_object': {
      // any arguments of a type with a JSON form; an object's keys are their text (not NULL)
      const xs = args.map((a) => (a.type.kind === 'unknown' ? coerce(a, T.text, e.pos) : a));
      const bad = xs.find((x) => !hasJsonbForm(x.type));
      if (bad !== undefined) {
        throw new SluiceError('NOT_SUPPORTED', `${e.name} of type ${typeName(bad.type)} is not supported`, {
          position: e.pos,
          hint: 'cast the value to text first',
        });
      }
      const object = e.name.endsWith('object');
      if (object && xs.length % 2 !== 0) {
        throw new SluiceError('INVALID_VALUE', 'argument list must have even number of elements', {
          position: e.pos,
          hint: `The arguments of ${e.name}() must consist of alternating keys and values.`,
        });
      }
      return call(object ? 'jsonb_build_object' : 'jsonb_build_array', xs, T.jsonb);
    }
    case 'to_jsonb':
    case 'to_json': {
      if (n !== 1 || a0 === undefined) throw fnMismatch(e.name, args, e.pos);
      const x = a0.type.kind === 'unknown' ? coerce(a0, T.text, e.pos) : a0;
      if (!hasJsonbForm(x.type)) {
        throw new SluiceError('NOT_SUPPORTED', `${e.name}(${typeName(x.type)}) is not supported`, {
          position: e.pos,
          hint: 'cast the value to text first',
        });
      }
      return call('to_jsonb', [x], T.jsonb);
    }
    case 'coalesce': {
      if (n < 1) throw fnMismatch(e.name, args, e.pos);
      const { args: unified, type: t } = unifyResults(args, e.pos, 'COALESCE');
      return { kind: 'coalesce', args: unified, type: t };
    }
    case 'nullif': {
      if (n !== 2) throw fnMismatch(e.name, args, e.pos);
      const [l, r] = unify(args, e.pos, 'NULLIF') as [ScalarExpr, ScalarExpr];
      const [a, b] = args as [ScalarExpr, ScalarExpr];
      if ([a, b].some((x) => x.type.kind === 'text' && x.type.fixed === true) && l.type.kind === 'text') {
        // PostgreSQL tests NULLIF(a, b) with the operator a = b: char(n) beside a varchar(n) column
        // equals without the padding of either (bpchareq), beside text as text (compare() decides)
        const equal = compare('eq', '=', a, b, e.pos);
        // The value is the operator's left operand: char(n) beside char(m) or a varchar(n) column is
        // compared by bpchareq, so a is returned as it is, padded; beside text by texteq, unpadded.
        const bAsChar =
          b.type.kind === 'text' &&
          (b.type.fixed === true || (b.type.maxLength !== undefined && !isConst(b)));
        const kept = a.type.kind === 'text' && a.type.fixed === true && bAsChar ? a : l;
        const none: ScalarExpr = { kind: 'const', value: null, type: kept.type };
        return { kind: 'case', whens: [{ when: equal, then: none }], else: kept, type: kept.type };
      }
      if (l.type.kind === 'text' && l.type.fixed === true) {
        // char(n) equals without its padding (NULLIF(c, 'ab') is NULL for 'ab   '); the value keeps it
        const equal = compare('eq', '=', l, r, e.pos);
        const none: ScalarExpr = { kind: 'const', value: null, type: l.type };
        return { kind: 'case', whens: [{ when: equal, then: none }], else: l, type: l.type };
      }
      return call('nullif', [l, r], l.type);
    }
    default:
      return bindTimeFunction(e, args) ?? bindJsonbFunction(e, args) ?? throwMismatch(e.name, args, e.pos);
  }
}

function throwMismatch(name: string, args: readonly ScalarExpr[], pos: Pos): never {
  throw fnMismatch(name, args, pos);
}

/**
 * The mathematical functions: double precision, or numeric when an argument is numeric (PostgreSQL
 * resolves an integer argument to the double precision form); log(b, x) and trunc(x, n) exist
 * for numeric only, as in PostgreSQL.
 */
function bindMath(e: Extract<Expr, { kind: 'function' }>, raw: readonly ScalarExpr[]): ScalarExpr {
  const n = raw.length;
  const name = e.name === 'pow' ? 'power' : e.name;
  const arity: Record<string, readonly number[]> = {
    power: [2],
    sqrt: [1],
    exp: [1],
    ln: [1],
    log: [1, 2],
    log10: [1],
    sign: [1],
    trunc: [1, 2],
    width_bucket: [4],
    cbrt: [1],
    pi: [0],
    div: [2],
    gcd: [2],
    lcm: [2],
    scale: [1],
    min_scale: [1],
    trim_scale: [1],
  };
  if (!(arity[name] ?? []).includes(n)) throw fnMismatch(e.name, raw, e.pos);
  const numericArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'unknown' || isStringLiteral(a)) return coerce(a, T.float64, e.pos);
    if (!isNumeric(a.type)) throw fnMismatch(e.name, raw, e.pos);
    return a;
  };
  const intArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'int') return a;
    if (a.type.kind === 'unknown') return coerce(a, T.int32, e.pos);
    throw fnMismatch(e.name, raw, e.pos);
  };
  if (name === 'width_bucket') {
    const xs = raw.slice(0, 3).map(numericArg);
    const t = xs.some((x) => x.type.kind === 'numeric') ? T.numeric : T.float64;
    return call(
      'width_bucket',
      [...xs.map((x) => coerce(x, t, e.pos)), intArg(raw[3] as ScalarExpr)],
      T.int32,
    );
  }
  if (name === 'pi') return call('pi', [], T.float64);
  if (name === 'cbrt')
    return call('cbrt', [coerce(numericArg(raw[0] as ScalarExpr), T.float64, e.pos)], T.float64);
  // div, scale, min_scale and trim_scale exist for numeric only (an integer becomes numeric; a double
  // does not, as in PostgreSQL, where float8 to numeric is not an implicit cast)
  const exactArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'unknown' || isStringLiteral(a)) return coerce(a, T.numeric, e.pos);
    if (a.type.kind !== 'int' && a.type.kind !== 'numeric') throw fnMismatch(e.name, raw, e.pos);
    return coerce(a, T.numeric, e.pos);
  };
  if (name === 'div') return call('div_trunc', raw.map(exactArg), T.numeric);
  if (name === 'scale' || name === 'min_scale') return call(name, [exactArg(raw[0] as ScalarExpr)], T.int32);
  if (name === 'trim_scale') return call('trim_scale', [exactArg(raw[0] as ScalarExpr)], T.numeric);
  if (name === 'gcd' || name === 'lcm') {
    // integer, bigint or numeric, as the arguments' common type (smallint widens to integer)
    const xs = raw.map((a) =>
      a.type.kind === 'unknown' || isStringLiteral(a) ? coerce(a, T.int32, e.pos) : a,
    );
    if (xs.some((x) => x.type.kind !== 'int' && x.type.kind !== 'numeric'))
      throw fnMismatch(e.name, raw, e.pos);
    const t = xs.some((x) => x.type.kind === 'numeric')
      ? T.numeric
      : xs.some((x) => x.type.kind === 'int' && x.type.bits === 64)
        ? T.int64
        : T.int32;
    return call(
      name,
      xs.map((x) => coerce(x, t, e.pos)),
      t,
    );
  }
  if (name === 'trunc' && n === 2) {
    return call(
      'trunc',
      [coerce(numericArg(raw[0] as ScalarExpr), T.numeric, e.pos), intArg(raw[1] as ScalarExpr)],
      T.numeric,
    );
  }
  const xs = raw.map(numericArg);
  // power(double, numeric) is power(double precision, double precision) in PostgreSQL: a numeric
  // becomes a double implicitly, a double never becomes numeric (power(1e308::float8, 1.5))
  const floatPower = name === 'power' && xs.some((x) => x.type.kind === 'float');
  const t =
    name === 'log' && n === 2
      ? T.numeric
      : !floatPower && xs.some((x) => x.type.kind === 'numeric')
        ? T.numeric
        : T.float64;
  const fn: ScalarFn = name === 'log' && n === 1 ? 'log10' : (name as ScalarFn);
  return call(
    fn,
    xs.map((x) => coerce(x, t, e.pos)),
    t,
  );
}

/**
 * `x COLLATE "C"` (the parser has checked the collation): x itself, when its type has a collation —
 * text, varchar, char(n), their arrays, or an untyped literal or NULL (text) — else PostgreSQL's
 * "collations are not supported by type integer", at COLLATE.
 */
function bindCollate(operand: ScalarExpr, pos: Pos): ScalarExpr {
  if (operand.type.kind === 'unknown') return coerce(operand, T.text, pos);
  checkCollatable(operand.type, pos);
  return operand;
}

/** `x COLLATE …` needs x's type to have a collation (text, varchar, char(n), their arrays), as PostgreSQL. */
export function checkCollatable(type: SqlType, pos: Pos): void {
  if (type.kind === 'unknown' || type.kind === 'text') return;
  if (type.kind === 'array' && type.element.kind === 'text') return;
  // Accepted (and a no-op) before the check existed: a journaled statement still binds (journaled-binding.ts).
  if (bindsJournaled()) return;
  throw new SluiceError('TYPE_MISMATCH', `collations are not supported by type ${typeName(type)}`, {
    position: pos,
  });
}
