// A window frame's `n PRECEDING` / `n FOLLOWING` offset written as a constant expression
// (`ROWS BETWEEN 1 + 1 PRECEDING AND CURRENT ROW`, `CAST('2' AS int) PRECEDING`, `1.5 PRECEDING`),
// read from our tokens (the frame is hidden from node-sql-parser) and computed here: PostgreSQL
// folds it once, so the plan keeps the number. Typed as PostgreSQL types it — an integer literal is
// integer if it fits 32 bits, bigint if 64, numeric beyond; a decimal literal is numeric; a string
// literal is of unknown type until a cast or the operand beside it gives it one — so
// `2147483647 + 1` overflows integer as it does there, and the result is coerced to bigint as
// PostgreSQL coerces a ROWS offset (numeric rounding half away from zero). Parentheses, unary signs,
// + - * / %, CAST(x AS t) and x::t to smallint, integer, bigint or numeric; anything else (a column,
// a function, numeric division) is refused at its token.
//
// A range error is returned, not thrown: releases before this one computed integer offsets in
// unbounded integers, so a journaled view whose offset PostgreSQL finds out of range must still
// replay (the planner refuses it for new statements only: bind-window-functions.ts).
import type { IToken, TokenType } from 'chevrotain';
import type { Pos } from '../ast.ts';
import { notSupported, SluiceError } from '../../common/errors.ts';
import {
  DoubleColon,
  isType,
  isWord,
  isWordText,
  LParen,
  Minus,
  NumberLit,
  Percent,
  Plus,
  posOf,
  RParen,
  Slash,
  Star,
  StringLit,
  stringValue,
  syntaxErrorAt,
} from '../lexer.ts';

/** Deepest parenthesis nesting read in an offset (the call stack stays small). */
const MAX_NESTING = 32;

type IntType = 'smallint' | 'integer' | 'bigint';
type NumType = IntType | 'numeric';

/** A typed constant: `unscaled / 10^scale` (scale 0 for the integer types), or an untyped string. */
type Constant =
  | { readonly type: NumType; readonly unscaled: bigint; readonly scale: number }
  | { readonly type: 'unknown'; readonly text: string; readonly token: IToken };

const RANK: Record<NumType, number> = { smallint: 0, integer: 1, bigint: 2, numeric: 3 };
const BITS: Record<IntType, bigint> = { smallint: 15n, integer: 31n, bigint: 63n };

const TYPE_NAMES: Record<string, NumType> = {
  smallint: 'smallint',
  int2: 'smallint',
  int: 'integer',
  integer: 'integer',
  int4: 'integer',
  bigint: 'bigint',
  int8: 'bigint',
  numeric: 'numeric',
  decimal: 'numeric',
};

function fits(type: IntType, v: bigint): boolean {
  const bound = 1n << BITS[type];
  return v >= -bound && v < bound;
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** numeric → integer as PostgreSQL rounds it: half away from zero. */
function roundToInteger(unscaled: bigint, scale: number): bigint {
  if (scale === 0) return unscaled;
  const d = pow10(scale);
  const q = unscaled / d;
  const twiceRest = (unscaled % d) * 2n;
  if (twiceRest >= d) return q + 1n;
  if (twiceRest <= -d) return q - 1n;
  return q;
}

/** The value of a number literal's text (digits, a point, an exponent) as unscaled and scale. */
function decimalOf(image: string): { unscaled: bigint; scale: number } {
  const [mantissa = '', exponent] = image.toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  let unscaled = BigInt(`${whole}${fraction}` || '0');
  let scale = fraction.length - Number(exponent ?? 0);
  if (scale < 0) {
    unscaled *= pow10(-scale);
    scale = 0;
  }
  return { unscaled, scale };
}

/** What `readFrameOffset` read. */
export interface FrameOffset {
  /** The offset as bigint (exact even where PostgreSQL's typing overflowed: see `rangeError`). */
  readonly value: bigint;
  /** How many tokens it took. */
  readonly taken: number;
  /** The first range error PostgreSQL raises computing it (integer out of range, …), if any. */
  readonly rangeError?: { readonly message: string; readonly pos: Pos };
}

/**
 * Reads the offset expression starting at `at` (`peek(k)` is the k-th token from there); returns its
 * value coerced to bigint, how many tokens it took, and PostgreSQL's range error if it has one.
 */
export function readFrameOffset(peek: (ahead: number) => IToken | undefined): FrameOffset {
  let at = 0;
  let rangeError: { message: string; pos: Pos } | undefined;
  const is = (type: TokenType): boolean => peek(at)?.tokenType === type;
  const fail = (): never => {
    const token = peek(at);
    // The end of input: the caller's cursor reports it (the bound's PRECEDING / FOLLOWING is missing)
    if (token === undefined) throw new SluiceError('SYNTAX_ERROR', 'syntax error at end of input');
    if (token.tokenType === RParen) throw syntaxErrorAt(token);
    throw notSupported('window frame offset that is not a constant integer expression', posOf(token));
  };
  const outOfRange = (type: IntType, token: IToken): void => {
    rangeError ??= { message: `${type} out of range`, pos: posOf(token) };
  };
  const integer = (type: IntType, v: bigint, token: IToken): Constant => {
    if (!fits(type, v)) outOfRange(type, token);
    return { type, unscaled: v, scale: 0 };
  };
  /** A string's value read by the input function of `type` (int4in, int8in, numeric_in). */
  const input = (c: Extract<Constant, { type: 'unknown' }>, type: NumType): Constant => {
    const m = /^\s*([+-]?)(\d+)\s*$/.exec(c.text) ?? (type === 'numeric' ? null : undefined);
    if (m !== null && m !== undefined) {
      const v = BigInt(`${m[1]}${m[2]}`);
      if (type !== 'numeric' && !fits(type, v)) {
        throw new SluiceError('NUMERIC_OVERFLOW', `value "${c.text}" is out of range for type ${type}`, {
          position: posOf(c.token),
        });
      }
      return { type, unscaled: v, scale: 0 };
    }
    const d = /^\s*([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*$/.exec(c.text);
    if (type === 'numeric' && d !== null) {
      const { unscaled, scale } = decimalOf(d[2] as string);
      return { type, unscaled: d[1] === '-' ? -unscaled : unscaled, scale };
    }
    throw new SluiceError('INVALID_CAST', `invalid input syntax for type ${type}: "${c.text}"`, {
      position: posOf(c.token),
    });
  };
  const cast = (c: Constant, type: NumType, token: IToken): Constant => {
    if (c.type === 'unknown') return input(c, type);
    if (type === 'numeric') return { type, unscaled: c.unscaled, scale: c.scale };
    return integer(type, roundToInteger(c.unscaled, c.scale), token);
  };
  /** The two operands of an operator in the type PostgreSQL resolves it to (the wider one). */
  const unify = (
    a: Constant,
    b: Constant,
    op: IToken,
  ): [Constant & { type: NumType }, Constant & { type: NumType }] => {
    if (a.type === 'unknown' && b.type === 'unknown') {
      throw notSupported('window frame offset that is not a constant integer expression', posOf(op));
    }
    const type =
      a.type === 'unknown'
        ? b.type
        : b.type === 'unknown'
          ? a.type
          : RANK[a.type] >= RANK[b.type]
            ? a.type
            : b.type;
    const x = cast(a, type as NumType, op) as Constant & { type: NumType };
    const y = cast(b, type as NumType, op) as Constant & { type: NumType };
    return [x, y];
  };
  const typeName = (): NumType => {
    const token = peek(at);
    const type = isWord(token) ? TYPE_NAMES[(token as IToken).image.toLowerCase()] : undefined;
    if (type === undefined) return fail();
    at++;
    return type;
  };
  const primary = (depth: number): Constant => {
    const token = peek(at);
    if (token === undefined) return fail();
    if (is(Minus) || is(Plus)) {
      const negative = is(Minus);
      at++;
      const value = primary(depth);
      if (value.type === 'unknown')
        throw notSupported('window frame offset that is not a constant integer expression', posOf(token));
      if (!negative) return value;
      if (value.type === 'numeric') return { ...value, unscaled: -value.unscaled };
      return integer(value.type, -value.unscaled, token);
    }
    if (is(LParen)) {
      if (depth >= MAX_NESTING) fail();
      at++;
      const value = sum(depth + 1);
      if (!is(RParen)) fail();
      at++;
      return value;
    }
    if (isWordText(token, 'cast') && isType(peek(at + 1), LParen)) {
      if (depth >= MAX_NESTING) fail();
      at += 2;
      const value = sum(depth + 1);
      if (!isWordText(peek(at), 'as')) fail();
      at++;
      const type = typeName();
      if (!is(RParen)) fail();
      at++;
      return cast(value, type, token);
    }
    if (token.tokenType === StringLit) {
      at++;
      return { type: 'unknown', text: stringValue(token), token };
    }
    if (token.tokenType !== NumberLit) return fail();
    at++;
    if (/^\d+$/.test(token.image)) {
      const v = BigInt(token.image);
      const type = fits('integer', v) ? 'integer' : fits('bigint', v) ? 'bigint' : 'numeric';
      return { type, unscaled: v, scale: 0 };
    }
    return { type: 'numeric', ...decimalOf(token.image) };
  };
  const postfix = (depth: number): Constant => {
    let value = primary(depth);
    while (is(DoubleColon)) {
      const op = peek(at)!;
      at++;
      value = cast(value, typeName(), op);
    }
    return value;
  };
  const product = (depth: number): Constant => {
    let value = postfix(depth);
    while (is(Star) || is(Slash) || is(Percent)) {
      const op = peek(at)!;
      at++;
      const [x, y] = unify(value, postfix(depth), op);
      if (op.tokenType !== Star && y.unscaled === 0n) {
        throw new SluiceError('DIVISION_BY_ZERO', 'division by zero', { position: posOf(op) });
      }
      if (x.type === 'numeric') {
        if (op.tokenType === Slash) {
          throw notSupported('numeric division in a window frame offset', posOf(op));
        }
        const scale = Math.max(x.scale, y.scale);
        const a = x.unscaled * pow10(scale - x.scale);
        const b = y.unscaled * pow10(scale - y.scale);
        value =
          op.tokenType === Star
            ? { type: 'numeric', unscaled: x.unscaled * y.unscaled, scale: x.scale + y.scale }
            : { type: 'numeric', unscaled: a % b, scale };
      } else {
        // integer division truncates toward zero, as bigint division does
        const v =
          op.tokenType === Star
            ? x.unscaled * y.unscaled
            : op.tokenType === Slash
              ? x.unscaled / y.unscaled
              : x.unscaled % y.unscaled;
        value = integer(x.type, v, op);
      }
    }
    return value;
  };
  const sum = (depth: number): Constant => {
    let value = product(depth);
    while (is(Plus) || is(Minus)) {
      const op = peek(at)!;
      const minus = is(Minus);
      at++;
      const [x, y] = unify(value, product(depth), op);
      const scale = Math.max(x.scale, y.scale);
      const a = x.unscaled * pow10(scale - x.scale);
      const b = y.unscaled * pow10(scale - y.scale);
      const v = minus ? a - b : a + b;
      value = x.type === 'numeric' ? { type: 'numeric', unscaled: v, scale } : integer(x.type, v, op);
    }
    return value;
  };
  const first = peek(0);
  const read = sum(0);
  const offset = cast(read, 'bigint', first!);
  const value = offset.type === 'unknown' ? 0n : offset.unscaled;
  return rangeError === undefined ? { value, taken: at } : { value, taken: at, rangeError };
}
