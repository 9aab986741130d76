// A window frame's `n PRECEDING` / `n FOLLOWING` offset written as a constant integer expression
// (`ROWS BETWEEN 1 + 1 PRECEDING AND CURRENT ROW`), read from our tokens (the frame is hidden from
// node-sql-parser) and computed here: PostgreSQL evaluates it once, so the plan keeps the number.
// Integers, parentheses, unary signs and + - * / % (integer division truncating toward zero, as
// PostgreSQL's); anything else (a column, a function, a decimal) is refused at its token.
import type { IToken, TokenType } from 'chevrotain';
import { notSupported, SluiceError } from '../../common/errors.ts';
import {
  LParen,
  Minus,
  NumberLit,
  Percent,
  Plus,
  posOf,
  RParen,
  Slash,
  Star,
  syntaxErrorAt,
} from '../lexer.ts';

/** Deepest parenthesis nesting read in an offset (the call stack stays small). */
const MAX_NESTING = 32;

/**
 * Reads the offset expression starting at `at` (`peek(k)` is the k-th token from there); returns its
 * value and how many tokens it took.
 */
export function readFrameOffset(peek: (ahead: number) => IToken | undefined): {
  value: bigint;
  taken: number;
} {
  let at = 0;
  const is = (type: TokenType): boolean => peek(at)?.tokenType === type;
  const fail = (): never => {
    const token = peek(at);
    // The end of input: the caller's cursor reports it (the bound's PRECEDING / FOLLOWING is missing)
    if (token === undefined) throw new SluiceError('SYNTAX_ERROR', 'syntax error at end of input');
    if (token.tokenType === RParen) throw syntaxErrorAt(token);
    throw notSupported('window frame offset that is not a constant integer expression', posOf(token));
  };
  const primary = (depth: number): bigint => {
    if (is(Minus) || is(Plus)) {
      const negative = is(Minus);
      at++;
      const value = primary(depth);
      return negative ? -value : value;
    }
    if (is(LParen)) {
      if (depth >= MAX_NESTING) fail();
      at++;
      const value = sum(depth + 1);
      if (!is(RParen)) fail();
      at++;
      return value;
    }
    const token = peek(at);
    if (token?.tokenType !== NumberLit || !/^\d+$/.test(token.image)) return fail();
    at++;
    return BigInt(token.image);
  };
  const product = (depth: number): bigint => {
    let value = primary(depth);
    while (is(Star) || is(Slash) || is(Percent)) {
      const op = peek(at)!;
      at++;
      const right = primary(depth);
      if (op.tokenType === Star) value *= right;
      else if (right === 0n)
        throw new SluiceError('DIVISION_BY_ZERO', 'division by zero', { position: posOf(op) });
      else value = op.tokenType === Slash ? value / right : value % right;
    }
    return value;
  };
  const sum = (depth: number): bigint => {
    let value = product(depth);
    while (is(Plus) || is(Minus)) {
      const minus = is(Minus);
      at++;
      const right = product(depth);
      value = minus ? value - right : value + right;
    }
    return value;
  };
  const value = sum(0);
  return { value, taken: at };
}
