// The tail of a materialized view's query that is not SELECT syntax: RisingWave's EMIT ON WINDOW
// CLOSE, optionally with Flink's allowed lateness, `ALLOWED LATENESS INTERVAL '10' SECOND`.
import type { IToken } from 'chevrotain';
import type { AllowedLatenessClause, Pos } from '../ast.ts';
import { posOf, StringLit, stringValue, syntaxErrorAt } from '../lexer.ts';

const UNITS = new Set(['year', 'month', 'day', 'hour', 'minute', 'second']);

export interface EmitOnCloseTail {
  /** The index of the EMIT token: the query's tokens end before it. */
  readonly start: number;
  readonly pos: Pos;
  readonly allowedLateness: AllowedLatenessClause | null;
}

const word = (t: IToken | undefined, w: string): boolean => t !== undefined && t.image.toLowerCase() === w;

/** Finds `EMIT ON WINDOW CLOSE [ALLOWED LATENESS INTERVAL 'text' [unit]]` at the end of `tokens`. */
export function emitOnCloseTail(tokens: readonly IToken[]): EmitOnCloseTail | null {
  // The clause is at most 9 tokens (a few more are looked at, to name a stray one after it).
  for (let i = tokens.length - 4; i >= Math.max(1, tokens.length - 12); i--) {
    if (!['emit', 'on', 'window', 'close'].every((w, k) => word(tokens[i + k], w))) continue;
    const pos = posOf(tokens[i]!);
    const rest = tokens.slice(i + 4);
    if (rest.length === 0) return { start: i, pos, allowedLateness: null };
    if (!word(rest[0], 'allowed')) return null;
    if (!word(rest[1], 'lateness')) throw syntaxErrorAt(rest[1] ?? rest[0]!);
    const [interval, literal, unit, extra] = rest.slice(2);
    if (!word(interval, 'interval')) throw syntaxErrorAt(interval ?? rest[1]!);
    if (literal === undefined || literal.tokenType !== StringLit) throw syntaxErrorAt(literal ?? interval!);
    if (unit !== undefined && !UNITS.has(unit.image.toLowerCase())) throw syntaxErrorAt(unit);
    if (extra !== undefined) throw syntaxErrorAt(extra);
    return {
      start: i,
      pos,
      allowedLateness: {
        text: stringValue(literal),
        ...(unit !== undefined ? { unit: unit.image.toLowerCase() } : {}),
        pos: posOf(interval!),
      },
    };
  }
  return null;
}
