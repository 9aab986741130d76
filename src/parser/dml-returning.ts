// The RETURNING list of INSERT, UPDATE and DELETE: the tokens after the word to the statement's end,
// read as the select list of `SELECT <tokens>` by the query parser, so an item takes every
// expression, alias and `*` / `t.*` form a select list takes. What a select list may be followed by
// (FROM, WHERE, ORDER BY, …) has no place after RETURNING in PostgreSQL's grammar: a syntax error at
// the word, as PostgreSQL reports it.
import { createTokenInstance, type IToken } from 'chevrotain';
import type { SelectItem } from './ast.ts';
import { parseError } from '../common/errors.ts';
import {
  All,
  Distinct,
  For,
  From,
  Into,
  isWord,
  LParen,
  Returning,
  RParen,
  Select,
  syntaxErrorAt,
  Where,
} from './lexer.ts';
import { QUERY_TAIL_WORDS } from './dml-from.ts';
import { parseSelect } from './select-adapter.ts';

/** Reserved words that would end a select list: none may follow a RETURNING list. */
const RESERVED_AFTER = new Set([From, Where, Into, For, Returning]);

/** The RETURNING list whose word is `keyword`; `rest` are the tokens after it. */
export function returningList(keyword: IToken, rest: readonly IToken[], maxTokens: number): SelectItem[] {
  const first = rest[0];
  if (first === undefined) {
    const end = { line: keyword.endLine ?? 1, column: (keyword.endColumn ?? 0) + 1 };
    throw parseError('syntax error at end of input', end);
  }
  // `RETURNING DISTINCT a`: a select list's word, not a RETURNING list's
  if (first.tokenType === Distinct || first.tokenType === All) throw syntaxErrorAt(first);
  let depth = 0;
  for (const t of rest) {
    if (t.tokenType === LParen) depth++;
    else if (t.tokenType === RParen) depth--;
    else if (depth > 0) continue;
    else if (RESERVED_AFTER.has(t.tokenType)) throw syntaxErrorAt(t);
    else if (isWord(t) && QUERY_TAIL_WORDS.has(t.image.toLowerCase())) throw syntaxErrorAt(t);
  }
  // `SELECT` in the word's place (same offset and width): the list is read as written, every error
  // in it at the user's own tokens.
  const select = createTokenInstance(
    Select,
    'SELECT',
    keyword.startOffset,
    keyword.startOffset + 5,
    keyword.startLine ?? 1,
    keyword.startLine ?? 1,
    keyword.startColumn ?? 1,
    keyword.startColumn ?? 1,
  );
  return [...parseSelect([select, ...rest], maxTokens).items];
}

/**
 * Splits a statement's trailing tokens at a RETURNING at their own level (not in parentheses): the
 * tokens before it, and the list after it (undefined without one).
 */
export function splitAtReturning(
  tokens: readonly IToken[],
  maxTokens: number,
): { before: readonly IToken[]; returning?: SelectItem[] } {
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as IToken;
    if (t.tokenType === LParen) depth++;
    else if (t.tokenType === RParen) depth--;
    else if (depth === 0 && t.tokenType === Returning)
      return { before: tokens.slice(0, i), returning: returningList(t, tokens.slice(i + 1), maxTokens) };
  }
  return { before: tokens };
}
