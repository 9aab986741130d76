// The FROM list of `UPDATE t SET … FROM u, v WHERE …` and the USING list of `DELETE FROM t USING u
// WHERE …`: the tokens after the word to the statement's end are read as the FROM and WHERE of a
// SELECT (`SELECT * FROM <tokens>`), so the list takes every FROM form a query takes (joins,
// subqueries, VALUES) and the WHERE every predicate a query's WHERE takes, parsed by one parser.
import { createTokenInstance, type IToken } from 'chevrotain';
import type { Expr, FromItem } from './ast.ts';
import { parseError } from '../common/errors.ts';
import { From, isWord, LParen, RParen, Select, Star, syntaxErrorAt } from './lexer.ts';
import { parseSelect } from './select-adapter.ts';

/** Unreserved words that continue a query after its select list, FROM or WHERE. */
export const QUERY_TAIL_WORDS: ReadonlySet<string> = new Set([
  'group',
  'having',
  'window',
  'order',
  'limit',
  'offset',
  'fetch',
  'union',
  'intersect',
  'except',
]);

/**
 * Words that end a query's FROM and WHERE but have no place in an UPDATE's or DELETE's (PostgreSQL's
 * grammar has none of them there): a syntax error at the word, as PostgreSQL reports it.
 */
const NOT_AFTER_WHERE = new Set([...QUERY_TAIL_WORDS, 'for']);

/**
 * The FROM items and WHERE after `keyword` (the FROM of an UPDATE, the USING of a DELETE); `rest`
 * are the tokens after it, up to the statement's RETURNING (dml-returning.ts splits it off first).
 */
export function dmlFromList(
  keyword: IToken,
  rest: readonly IToken[],
  maxTokens: number,
): { from: FromItem; where?: Expr } {
  let depth = 0;
  for (const t of rest) {
    if (t.tokenType === LParen) depth++;
    else if (t.tokenType === RParen) depth--;
    else if (depth > 0) continue;
    else if (isWord(t) && NOT_AFTER_WHERE.has(t.image.toLowerCase())) throw syntaxErrorAt(t);
  }
  if (rest.length === 0) {
    const end = { line: keyword.endLine ?? 1, column: (keyword.endColumn ?? 0) + 1 };
    throw parseError('syntax error at end of input', end);
  }
  // `SELECT * FROM` before the tokens, placed just before the keyword: a query the select parser
  // reads as written (the gaps keep the words apart), every error in it at the user's own tokens.
  const at = keyword.startOffset;
  const word = (type: typeof Select, image: string, offset: number): IToken =>
    createTokenInstance(
      type,
      image,
      offset,
      offset,
      keyword.startLine ?? 1,
      keyword.startLine ?? 1,
      keyword.startColumn ?? 1,
      keyword.startColumn ?? 1,
    );
  const tokens = [word(Select, 'SELECT', at - 5), word(Star, '*', at - 3), word(From, 'FROM', at - 1)];
  const query = parseSelect([...tokens, ...rest], maxTokens);
  if (query.from === undefined) throw syntaxErrorAt(keyword);
  return { from: query.from, ...(query.where !== undefined ? { where: query.where } : {}) };
}
