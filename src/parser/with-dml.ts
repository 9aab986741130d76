// `WITH x AS (…) INSERT INTO t SELECT … FROM x`: PostgreSQL's WITH attached to an INSERT, whose
// queries the INSERT's query reads. Sluice's grammar takes a WITH only inside the query
// (`INSERT INTO t WITH x AS (…) SELECT …`), which means the same for queries that only read, so the
// tokens are put in that order; the statement keeps its own text and position.
import type { IToken } from 'chevrotain';
import { notSupported } from '../common/errors.ts';
import {
  As,
  Comma,
  Default,
  Delete,
  Insert,
  LParen,
  RParen,
  Select,
  Update,
  Values,
  With,
  isType,
  posOf,
} from './lexer.ts';

/**
 * The tokens of a statement, with a WITH before INSERT moved to the INSERT's query; a statement not
 * starting with WITH, or whose WITH leads a SELECT, as they are. WITH before UPDATE or DELETE, or
 * before an INSERT of VALUES, is refused by name (the grammar would report a syntax error at the word).
 */
export function withBeforeDml(tokens: readonly IToken[]): readonly IToken[] {
  if (!isType(tokens[0], With)) return tokens;
  const main = mainStatementAt(tokens);
  const head = tokens[main];
  if (head === undefined) return tokens;
  if (isType(head, Update) || isType(head, Delete)) {
    throw notSupported(`WITH before ${head.image.toUpperCase()}`, posOf(head), 'use a subquery in its WHERE');
  }
  if (!isType(head, Insert)) return tokens;
  const query = queryStartAfter(tokens, main);
  const first = tokens[query];
  if (first === undefined) return tokens; // the grammar reports what is missing
  if (isType(first, With)) {
    throw notSupported(
      'a WITH both before INSERT and in its query',
      posOf(first),
      'put all the WITH queries in one WITH',
    );
  }
  if (!isType(first, Select)) {
    throw notSupported(
      `WITH before INSERT … ${first.image.toUpperCase()}`,
      posOf(first),
      'write the rows as INSERT INTO t SELECT … FROM (VALUES …) AS v(…)',
    );
  }
  return [...tokens.slice(main, query), ...tokens.slice(0, main), ...tokens.slice(query)];
}

/**
 * Where the statement after a WITH list starts: the first token at depth 0 after a WITH query's
 * closing parenthesis that neither continues the list (a comma) nor is a column list's end (AS).
 */
function mainStatementAt(tokens: readonly IToken[]): number {
  let depth = 0;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i] as IToken;
    if (isType(t, LParen)) depth++;
    else if (isType(t, RParen)) {
      depth--;
      if (depth !== 0) continue;
      const next = tokens[i + 1];
      if (isType(next, Comma) || isType(next, As)) continue;
      return i + 1;
    }
  }
  return -1;
}

/** The first token of an INSERT's rows at `insert`: SELECT, WITH, VALUES or DEFAULT at depth 0. */
function queryStartAfter(tokens: readonly IToken[], insert: number): number {
  let depth = 0;
  for (let i = insert + 1; i < tokens.length; i++) {
    const t = tokens[i] as IToken;
    if (isType(t, LParen)) depth++;
    else if (isType(t, RParen)) depth--;
    else if (depth === 0 && (isType(t, Select) || isType(t, With) || isType(t, Values) || isType(t, Default)))
      return i;
  }
  return -1;
}
