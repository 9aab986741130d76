// `name FOR SYSTEM_TIME AS OF PROCTIME()` in FROM (RisingWave's and Flink's processing-time temporal
// join), read from our tokens before node-sql-parser sees the SELECT (it knows no FOR SYSTEM_TIME):
// the table name becomes one placeholder name and the clause is dropped; the adapter turns the
// placeholder back into a table reference marked `asOfProctime`. Only PROCTIME() is accepted.
import type { IToken } from 'chevrotain';
import type { Pos } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import { Dot, Ident, identName, isType, isWordText, LParen, posOf, RParen, syntaxErrorAt } from '../lexer.ts';

/** A table named for a temporal join, before the alias that may follow the clause. */
export interface TemporalTableCall {
  readonly kind: 'temporalTable';
  readonly name: string;
  /** The table's name. */
  readonly pos: Pos;
  /** The word FOR. */
  readonly asOf: Pos;
}

/** Whether `FOR SYSTEM_TIME` starts at `p`. */
export function startsSystemTime(tokens: readonly IToken[], p: number): boolean {
  return isWordText(tokens[p], 'for') && isWordText(tokens[p + 1], 'system_time');
}

/** Whether the FROM item at `p` is `name FOR SYSTEM_TIME …`. */
export function startsTemporalTable(tokens: readonly IToken[], p: number): boolean {
  return isType(tokens[p], Ident) && startsSystemTime(tokens, p + 1);
}

/**
 * Reads `name FOR SYSTEM_TIME AS OF PROCTIME()` at `p` (see `startsTemporalTable`); returns it and
 * the index of its last token. Another AS OF expression is NOT_SUPPORTED at that expression.
 */
export function readTemporalTable(
  tokens: readonly IToken[],
  p: number,
): { call: TemporalTableCall; end: number } {
  const name = tokens[p]!;
  const at = p + 3;
  for (const [i, word] of [
    [at, 'as'],
    [at + 1, 'of'],
  ] as const) {
    const t = tokens[i];
    if (!isWordText(t, word)) throw syntaxErrorAt(t ?? tokens[tokens.length - 1]!);
  }
  const expr = tokens[at + 2];
  if (expr === undefined) throw syntaxErrorAt(tokens[tokens.length - 1]!);
  const proctime =
    isWordText(expr, 'proctime') &&
    tokens[at + 3]?.tokenType === LParen &&
    tokens[at + 4]?.tokenType === RParen &&
    tokens[at + 5]?.tokenType !== Dot;
  if (!proctime) {
    throw notSupported(
      'FOR SYSTEM_TIME AS OF an expression other than PROCTIME()',
      posOf(expr),
      'write FOR SYSTEM_TIME AS OF PROCTIME(): the lookup side as it is when each row arrives',
    );
  }
  return {
    call: { kind: 'temporalTable', name: identName(name), pos: posOf(name), asOf: posOf(tokens[p + 1]!) },
    end: at + 4,
  };
}
