// The SQL standard's row limits, `OFFSET n {ROW | ROWS}` and `FETCH {FIRST | NEXT} [n] {ROW | ROWS}
// ONLY`, read from a query's tokens as the `OFFSET n` and `LIMIT n` they mean (node-sql-parser reads
// neither): the words that only spell the form are dropped, FETCH's token becomes LIMIT's (so errors
// in n keep their positions), and a missing n is 1. `WITH TIES` is refused, and so is a second LIMIT
// or FETCH (or OFFSET) in one query, as PostgreSQL's grammar refuses it.
import type { IToken } from 'chevrotain';
import { notSupported, parseError, type SluiceError } from '../../common/errors.ts';
import {
  endPosOf,
  isType,
  isWordText,
  LParen,
  NumberLit,
  Only,
  posOf,
  RParen,
  syntaxErrorAt,
} from '../lexer.ts';

/** `tokens` with each OFFSET … ROWS and FETCH … ONLY written as OFFSET and LIMIT. */
export function rewriteFetchFirst(tokens: readonly IToken[]): readonly IToken[] {
  refuseRepeatedClauses(tokens);
  if (!tokens.some((t) => isWordText(t, 'fetch') || isWordText(t, 'row') || isWordText(t, 'rows'))) {
    return tokens;
  }
  const out: IToken[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (isWordText(t, 'offset')) {
      const end = countEnd(tokens, i + 1);
      out.push(...tokens.slice(i, end));
      i = end - 1;
      if (isRowWord(tokens[end])) i = end;
      continue;
    }
    const next = tokens[i + 1];
    if (!isWordText(t, 'fetch') || !(isWordText(next, 'first') || isWordText(next, 'next'))) {
      out.push(t);
      continue;
    }
    let p = i + 2;
    const countStart = p;
    if (!isRowWord(tokens[p])) p = countEnd(tokens, p);
    const count = tokens.slice(countStart, p);
    if (!isRowWord(tokens[p])) throw unexpected(tokens, p);
    p++;
    if (isWordText(tokens[p], 'with') && isWordText(tokens[p + 1], 'ties')) {
      throw notSupported('FETCH … WITH TIES', posOf(tokens[p]!), 'ties are kept by RANK() OVER (…) <= n');
    }
    if (!isType(tokens[p], Only)) throw unexpected(tokens, p);
    out.push({ ...t, image: 'limit' });
    if (count.length > 0) out.push(...count);
    else out.push({ ...next!, tokenType: NumberLit, tokenTypeIdx: NumberLit.tokenTypeIdx!, image: '1' });
    i = p;
  }
  return out;
}

/**
 * A query level has at most one row-count clause (LIMIT or FETCH) and one OFFSET, as PostgreSQL's
 * grammar: `LIMIT 2 FETCH FIRST 1 ROW ONLY` or `OFFSET 1 OFFSET 1` is a syntax error at the second
 * (the SQL library kept the last one). Each parenthesis opens a level of its own.
 */
function refuseRepeatedClauses(tokens: readonly IToken[]): void {
  const levels: { limit: boolean; offset: boolean }[] = [{ limit: false, offset: false }];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (isType(t, LParen)) levels.push({ limit: false, offset: false });
    else if (isType(t, RParen)) {
      if (levels.length > 1) levels.pop();
    } else {
      const next = tokens[i + 1];
      const clause = isWordText(t, 'limit')
        ? 'limit'
        : isWordText(t, 'fetch') && (isWordText(next, 'first') || isWordText(next, 'next'))
          ? 'limit'
          : isWordText(t, 'offset')
            ? 'offset'
            : undefined;
      if (clause === undefined) continue;
      const level = levels[levels.length - 1]!;
      if (level[clause]) throw syntaxErrorAt(t);
      level[clause] = true;
    }
  }
}

function isRowWord(t: IToken | undefined): boolean {
  return isWordText(t, 'row') || isWordText(t, 'rows');
}

/** The index after the count at `p`: one token, a sign and a token, or a parenthesised expression. */
function countEnd(tokens: readonly IToken[], p: number): number {
  const t = tokens[p];
  if (t === undefined) return p;
  if (isType(t, LParen)) {
    for (let i = p, depth = 0; i < tokens.length; i++) {
      if (isType(tokens[i], LParen)) depth++;
      else if (isType(tokens[i], RParen) && --depth === 0) return i + 1;
    }
    return tokens.length;
  }
  return t.image === '+' || t.image === '-' ? p + 2 : p + 1;
}

function unexpected(tokens: readonly IToken[], p: number): SluiceError {
  const t = tokens[p];
  return t !== undefined
    ? syntaxErrorAt(t)
    : parseError('syntax error at end of input', endPosOf(tokens[tokens.length - 1]!));
}
