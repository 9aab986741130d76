// The typing rules binding applies to operands: literals as constants, constant calls folded,
// PostgreSQL's implicit coercions (string literals adapt, numbers widen) and the comparison of two types.
import { bindsJournaled } from './journaled-binding.ts';
import { SluiceError } from '../common/errors.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { castValue } from '../common/cast.ts';
import { Decimal, decimalFromShortest, parseDecimal } from '../common/decimal.ts';
import type { ScalarExpr, ScalarFn } from '../common/scalar-expr.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import { compileRegex, similarToRegex } from '../common/functions/regex.ts';
import type { SqlType, Value } from '../common/types.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import { commonType } from './types-resolve.ts';

export function typeMismatch(message: string, pos: Pos, hint?: string): SluiceError {
  return new SluiceError('TYPE_MISMATCH', message, {
    position: pos,
    ...(hint !== undefined ? { hint } : {}),
  });
}

export function literalType(value: Value, kind: string): SqlType {
  switch (kind) {
    case 'null':
      return T.unknown;
    case 'boolean':
      return T.bool;
    case 'string':
      return T.text;
    case 'numeric':
      return T.numeric;
    default: {
      const v = value as number | bigint;
      if (typeof v === 'number' && v >= -2147483648 && v <= 2147483647) return T.int32;
      if (v >= -(2n ** 63n) && v <= 2n ** 63n - 1n) return T.int64;
      return T.numeric;
    }
  }
}

/**
 * A literal's constant: a numeric one (with a point or exponent, or an integer beyond bigint) is the
 * exact decimal of its source text, as PostgreSQL reads it.
 */
export function literalConst(e: Extract<Expr, { kind: 'literal' }>): Extract<ScalarExpr, { kind: 'const' }> {
  const type = literalType(e.value, e.literalType);
  if (type.kind !== 'numeric') return { kind: 'const', value: e.value, type };
  let value: Decimal | null;
  try {
    value = typeof e.value === 'bigint' ? Decimal.fromInt(e.value) : parseDecimal(e.text ?? String(e.value));
  } catch (err) {
    throw err instanceof SluiceError ? err.at(e.pos) : err;
  }
  return { kind: 'const', value: value ?? decimalFromShortest(e.value as number), type };
}

export function isConst(e: ScalarExpr): e is Extract<ScalarExpr, { kind: 'const' }> {
  return e.kind === 'const';
}

/**
 * Constants of type `text` that were computed, not written as a quoted literal: `'a '::text`,
 * `'a' || ' '`, `upper('a')`. PostgreSQL types those `text`, where a bare literal is `unknown` and
 * takes the type beside it: `c = 'a '::text` compares a char(n) column as text (its padding
 * stripped, the constant's kept) where `c = 'a '` compares as char(n). Kept beside the plan, not in
 * it: only the binding reads it, and a copy of the constant (a new object) is an untyped string.
 */
const typedTextConstants = new WeakSet<ScalarExpr>();

/** A constant typed `text` (not a quoted literal, nor varchar), as PostgreSQL resolves it. */
export function isTypedText(e: ScalarExpr): boolean {
  return typedTextConstants.has(e);
}

/**
 * Constants of a text type (text, varchar, char(n)) that were computed — a cast, an operator, a
 * function — where a bare quoted literal is PostgreSQL's `unknown`: only the literal takes the type
 * beside it, so `1 = '1'` compares integers while `1 = '1'::text` is "operator does not exist:
 * integer = text".
 */
const computedTextConstants = new WeakSet<ScalarExpr>();

/** A constant of a text type that is not a bare string literal (`'1'::text`, `upper('a')`). */
export function isComputedText(e: ScalarExpr): boolean {
  return computedTextConstants.has(e);
}

/**
 * A bare string literal: a text constant not computed (isComputedText), PostgreSQL's `unknown`, which
 * takes the type its place asks for (`1 + '1'`, `abs('1')`); a computed one ('1'::text) is text there.
 */
export function isStringLiteral(e: ScalarExpr): boolean {
  return e.kind === 'const' && e.type.kind === 'text' && !computedTextConstants.has(e);
}

/** `e` (a copy of a folded constant) marked computed again. */
export function markComputedText(e: ScalarExpr): ScalarExpr {
  if (e.kind === 'const' && e.type.kind === 'text' && !bindsJournaled()) computedTextConstants.add(e);
  return e;
}

/**
 * Folds an expression whose inputs are all constants; errors stay runtime errors (raised now) —
 * except in a journaled statement, which an older release folded without one: there the expression
 * stays as it is and fails on each row (a data directory must start; 'abc' LIKE 'ab\' is one).
 */
export function fold(e: ScalarExpr): ScalarExpr {
  let value: Value;
  try {
    value = compileScalar(e)([]);
  } catch (error) {
    if (bindsJournaled() && error instanceof SluiceError) return e;
    throw error;
  }
  const folded: ScalarExpr = { kind: 'const', value, type: e.type };
  if (e.type.kind === 'text') {
    // A journaled statement binds as it was accepted: every text constant adapts (journaled-binding.ts).
    if (!bindsJournaled()) computedTextConstants.add(folded);
    if (e.type.fixed !== true && e.type.maxLength === undefined) typedTextConstants.add(folded);
  }
  return folded;
}

function allConst(args: readonly ScalarExpr[]): boolean {
  return args.every(isConst);
}

/** Implicit coercion of `e` to `to`: string literals adapt to any type; numbers widen. */
export function coerce(e: ScalarExpr, to: SqlType, pos: Pos): ScalarExpr {
  if (to.kind === 'unknown' || typeName(e.type) === typeName(to)) return e;
  if (e.type.kind === 'unknown')
    return isConst(e) ? { kind: 'const', value: null, type: to } : { ...e, type: to };
  if (isConst(e) && e.type.kind === 'text' && to.kind !== 'text') {
    try {
      return { kind: 'const', value: castValue(e.value, e.type, to), type: to };
    } catch (err) {
      throw err instanceof SluiceError ? err.at(pos) : err;
    }
  }
  if (to.kind === 'text' && e.type.kind === 'text') {
    // char(n) → text or varchar drops the padding, as PostgreSQL's cast does: a CASE, COALESCE,
    // NULLIF or IN mixing char(n) with text compares and returns the unpadded value ('ab'::char(5)
    // IN ('ab') is true); varchar → text keeps the value.
    if (e.type.fixed === true && to.fixed !== true) {
      const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
      return isConst(e) ? fold(cast) : cast;
    }
    // A string constant beside char(n) takes its type unpadded, as PostgreSQL's bpchar literal:
    // COALESCE(c, 'none') is char(n), so || and length() drop the padding of either value.
    if (isConst(e) && to.fixed === true && e.type.fixed !== true) return { ...e, type: to };
    // text or varchar as bpchar (charResultType) keeps its value, trailing spaces and all; typed so
    // that what reads it (GREATEST, a comparison, length) takes those spaces as insignificant
    if (to.fixed === true && to.maxLength === undefined && e.type.fixed !== true) {
      return { kind: 'cast', operand: e, type: to };
    }
    return e;
  }
  if (isNumeric(e.type) && isNumeric(to)) {
    if (to.kind === 'int' && e.type.kind !== 'int') {
      throw typeMismatch(`cannot implicitly convert ${typeName(e.type)} to ${typeName(to)}`, pos);
    }
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  if (e.type.kind === 'date' && to.kind === 'timestamp') return { kind: 'cast', operand: e, type: to };
  // int[] → bigint[] and the like: element by element, where the elements coerce (commonType chose `to`)
  const widened = e.type.kind === 'array' && to.kind === 'array' ? commonType([e.type, to]) : null;
  if (widened !== null && typeName(widened) === typeName(to)) {
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  if ((e.type.kind === 'date' || e.type.kind === 'timestamp') && to.kind === 'timestamptz') {
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  throw typeMismatch(`cannot convert ${typeName(e.type)} to ${typeName(to)}`, pos);
}

export function requireType(e: ScalarExpr, kind: SqlType['kind'], what: string, pos: Pos): ScalarExpr {
  if (e.type.kind === kind) return e;
  if (e.type.kind === 'unknown' || isStringLiteral(e)) {
    return coerce(e, kind === 'bool' ? T.bool : kind === 'text' ? T.text : e.type, pos);
  }
  throw typeMismatch(
    `${what} must be type ${kind === 'bool' ? 'boolean' : kind}, not type ${typeName(e.type)}`,
    pos,
  );
}

export function call(fn: ScalarFn, args: ScalarExpr[], type: SqlType): ScalarExpr {
  const e: ScalarExpr = { kind: 'call', fn, args, type };
  return allConst(args) ? fold(e) : e;
}

export function unify(args: ScalarExpr[], pos: Pos, what: string): ScalarExpr[] {
  const t = unifiedType(args, pos, what);
  // string literals compared with non-text adapt to the other side's type
  return args.map((a) => coerce(a, t, pos));
}

/** The type `unify` casts `args` to. */
export function unifiedType(args: readonly ScalarExpr[], pos: Pos, what: string): SqlType {
  // String constants take the type of the others when those agree on a non-text one, as PostgreSQL
  // resolves unknown literals ('1 day' in an IN list of intervals, '2024-01-01' in CASE over dates).
  // A constant typed text beside char(n) is text, as PostgreSQL resolves it: the char(n) becomes text.
  const besideChar = args.some((a) => a.type.kind === 'text' && a.type.fixed === true);
  // Bare literals adapt; a computed text constant ('1'::text) is text, unless beside char(n), where
  // only typed text stays text (a varchar constant is read as char(n)).
  const adapts = (a: ScalarExpr): boolean =>
    isConst(a) && a.type.kind === 'text' && (besideChar ? !isTypedText(a) : !isComputedText(a));
  const typed = args.filter((a) => !adapts(a));
  const others = commonType(typed.map((a) => a.type));
  // So do they beside char(n) (PostgreSQL types them bpchar): COALESCE(c, 'none') keeps c's padding.
  const othersTake =
    others !== null && (others.kind !== 'text' || others.fixed === true) && others.kind !== 'unknown';
  if (typed.length < args.length && othersTake) return others;
  const t = commonType(args.map((a) => a.type));
  if (t === null) {
    const names = [...new Set(args.map((a) => typeName(a.type)).filter((n) => n !== 'unknown'))];
    throw typeMismatch(`${what} types ${names.join(' and ')} cannot be matched`, pos);
  }
  return t;
}

/** PostgreSQL's bpchar: char without a length, each value kept as it is, its trailing spaces insignificant. */
export const BPCHAR: SqlType = T.bpchar;

/**
 * The result type of COALESCE, CASE (its ELSE first, as PostgreSQL lists them), GREATEST and LEAST
 * when their first typed argument is char(n) and the others are strings, as PostgreSQL's
 * select_common_type resolves it: each string type casts implicitly to each other, so the first
 * typed one wins — char(n) when every typed argument is that char(n), else bpchar (no length, so a
 * char(5) value keeps its padding and a text value its trailing spaces, both insignificant to
 * comparisons and length()). `COALESCE(c, s)` is bpchar where `COALESCE(s, c)` is text (c's padding
 * dropped). Bare literals and NULLs take the type. Null where the general rules (unify) apply.
 */
export function charResultType(args: readonly ScalarExpr[]): SqlType | null {
  const typed = args.filter((a) => a.type.kind !== 'unknown' && !isStringLiteral(a));
  const first = typed[0];
  if (first === undefined || first.type.kind !== 'text' || first.type.fixed !== true) return null;
  if (!typed.every((a) => a.type.kind === 'text')) return null;
  return typed.every((a) => typeName(a.type) === typeName(first.type)) ? first.type : BPCHAR;
}

/** `args` unified for COALESCE, CASE, GREATEST or LEAST (`first` in PostgreSQL's order), and their type. */
export function unifyResults(
  args: ScalarExpr[],
  pos: Pos,
  what: string,
  first: readonly ScalarExpr[] = args,
): { readonly args: ScalarExpr[]; readonly type: SqlType } {
  const char = charResultType(first);
  if (char !== null) return { args: args.map((a) => coerce(a, char, pos)), type: char };
  const unified = unify(args, pos, what);
  return { args: unified, type: commonType(unified.map((u) => u.type)) ?? T.unknown };
}

/** char(n) as text: PostgreSQL's bpchar semantics, trailing blanks are insignificant. */
export function unpadChar(e: ScalarExpr): ScalarExpr {
  if (e.type.kind !== 'text' || e.type.fixed !== true) return e;
  const c: ScalarExpr = { kind: 'cast', operand: e, type: T.text };
  return isConst(e) ? fold(c) : c;
}

export function compare(
  fn: ScalarFn,
  opText: string,
  left: ScalarExpr,
  right: ScalarExpr,
  pos: Pos,
): ScalarExpr {
  // A string constant beside char(n) is read as char(n) too (PostgreSQL's bpchar literal), so its own
  // trailing spaces are insignificant as well: 'ab'::char(5) < 'ab ' is false, = 'ab ' true.
  // A constant typed text (`'a '::text`) is not such a literal: char(n) = text compares as text, its
  // padding stripped and the constant's trailing spaces kept ('a'::char(3) = 'a '::text is false).
  const asChar = (e: ScalarExpr, other: ScalarExpr): ScalarExpr =>
    isConst(e) &&
    e.type.kind === 'text' &&
    !isTypedText(e) &&
    other.type.kind === 'text' &&
    other.type.fixed === true
      ? coerce(e, other.type, pos)
      : e;
  // A varchar(n) value beside char(n) compares as char(n) too (PostgreSQL resolves char = varchar to
  // bpchareq): its trailing spaces do not count either ('ab'::char(4) = 'ab '::varchar(5) is true).
  const varcharAsChar = (e: ScalarExpr, other: ScalarExpr): ScalarExpr =>
    !isConst(e) &&
    e.type.kind === 'text' &&
    e.type.fixed !== true &&
    e.type.maxLength !== undefined &&
    other.type.kind === 'text' &&
    other.type.fixed === true
      ? call('rtrim', [e], T.text)
      : e;
  const text = left.type.kind === 'text' && right.type.kind === 'text';
  let l = text ? unpadChar(varcharAsChar(asChar(left, right), right)) : left;
  let r = text ? unpadChar(varcharAsChar(asChar(right, left), left)) : right;
  // A bare string literal takes the other side's type; a computed text constant is text, as a column.
  if (isStringLiteral(l) && r.type.kind !== 'text' && r.type.kind !== 'unknown') l = coerce(l, r.type, pos);
  if (isStringLiteral(r) && l.type.kind !== 'text' && l.type.kind !== 'unknown') r = coerce(r, l.type, pos);
  const t = commonType([l.type, r.type]);
  // Text beside a typed non-text value has no operator (`1 = '1'::text`); NULL (unknown) takes either.
  const untyped = l.type.kind === 'unknown' || r.type.kind === 'unknown';
  if (t === null || (!untyped && (l.type.kind === 'text') !== (r.type.kind === 'text'))) {
    throw typeMismatch(
      `operator does not exist: ${typeName(l.type)} ${opText} ${typeName(r.type)}`,
      pos,
      'no operator matches the given name and argument types; you might need to add explicit type casts',
    );
  }
  return call(fn, [coerce(l, t, pos), coerce(r, t, pos)], T.bool);
}

/** A constant pattern is compiled while binding, so a malformed one is an error at its position. */
export function checkPattern(
  pattern: ScalarExpr,
  similar: boolean,
  caseInsensitive: boolean,
  pos: Pos,
): void {
  if (!isConst(pattern) || typeof pattern.value !== 'string') return;
  try {
    compileRegex(similar ? similarToRegex(pattern.value) : pattern.value, caseInsensitive);
  } catch (err) {
    throw err instanceof SluiceError ? err.at(pos) : err;
  }
}

/** `left = right` typed as SQL compares them (both sides coerced to their common type). */
export function bindEquality(left: ScalarExpr, right: ScalarExpr, pos: Pos): ScalarExpr {
  return compare('eq', '=', left, right, pos);
}
