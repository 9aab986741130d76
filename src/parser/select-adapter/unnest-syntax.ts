// `unnest(array)` and `generate_series(start, stop [, step])` `[WITH ORDINALITY]` in FROM, read from
// our tokens before node-sql-parser sees the SELECT (as the window table functions are,
// window-tvf-syntax.ts): the call becomes one placeholder name, which the adapter turns back into an
// `unnest` FROM item with the alias that follows it.
import type { IToken } from 'chevrotain';
import type { Expr, UnnestRef } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import { Comma, isWordText, LBracket, LParen, posOf, RBracket, syntaxErrorAt } from '../lexer.ts';

/** An unnest call as parsed, before the alias that may follow it. */
export type UnnestCall = Omit<UnnestRef, 'alias' | 'columns'>;

export interface UnnestCallReader {
  readonly tokens: readonly IToken[];
  /** The `)` closing the `(` at an index, or -1. */
  readonly closeOf: (open: number) => number;
  /** Parses each token range as one expression. */
  readonly expressions: (ranges: readonly (readonly [number, number])[]) => Expr[];
}

/** The set-returning functions a FROM item may call. */
const FROM_FUNCTIONS: readonly UnnestRef['fn'][] = [
  'unnest',
  'generate_series',
  'jsonb_array_elements',
  'jsonb_array_elements_text',
  'jsonb_each',
  'jsonb_each_text',
  'jsonb_object_keys',
];

/** Whether a FROM item starting at `p` is `unnest (` or `generate_series (`. */
export function startsUnnestCall(tokens: readonly IToken[], p: number): boolean {
  return FROM_FUNCTIONS.some((f) => isWordText(tokens[p], f)) && tokens[p + 1]?.tokenType === LParen;
}

/** Reads the call at `p` (see startsUnnestCall) and a WITH ORDINALITY after it; returns its last index. */
export function readUnnestCall(r: UnnestCallReader, p: number): { call: UnnestCall; end: number } {
  const { tokens } = r;
  const word = tokens[p]!;
  const fn = FROM_FUNCTIONS.find((f) => isWordText(word, f)) ?? 'unnest';
  const close = r.closeOf(p + 1);
  if (close < 0) throw syntaxErrorAt(tokens[tokens.length - 1]!);
  if (close === p + 2) throw syntaxErrorAt(tokens[close]!);
  const ranges: [number, number][] = [];
  let start = p + 2;
  for (let i = p + 2, depth = 0; i < close; i++) {
    const t = tokens[i]!;
    if (t.tokenType === LParen) {
      const c = r.closeOf(i);
      if (c > i) i = c;
    } else if (t.tokenType === LBracket) depth++;
    else if (t.tokenType === RBracket) depth--;
    else if (t.tokenType === Comma && depth === 0) {
      if (fn === 'unnest') {
        throw notSupported('unnest of several arrays', posOf(word), 'unnest one array per FROM item');
      }
      if (i === start) throw syntaxErrorAt(t);
      ranges.push([start, i]);
      start = i + 1;
    }
  }
  if (start === close) throw syntaxErrorAt(tokens[close]!);
  ranges.push([start, close]);
  const args = r.expressions(ranges);
  let end = close;
  let ordinality = false;
  if (isWordText(tokens[close + 1], 'with') && isWordText(tokens[close + 2], 'ordinality')) {
    ordinality = true;
    end = close + 2;
  }
  return { call: { kind: 'unnest', fn, args, ordinality, pos: posOf(word) }, end };
}
