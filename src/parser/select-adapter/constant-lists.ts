// The long lists of plain constants a query writes — `x IN (1, 2, …)` and `VALUES (1, 'a'), …` in
// FROM — found on our tokens, so that node-sql-parser (slow per token) is handed only the first item
// of each and the converter reads the rest from our tokens (adapter-tokens.ts hides them).
import type { IToken } from 'chevrotain';
import {
  Comma,
  False,
  isWordText,
  LParen,
  Minus,
  Null,
  NumberLit,
  Plus,
  RParen,
  StringLit,
  True,
} from '../lexer.ts';

/** IN lists of at least this many constants bypass node-sql-parser (see `constantLists`). */
export const CONSTANT_LIST_MIN = 16;

/** Whether tokens[i] starts one constant of an IN list; returns the index after it, or -1. */
export function constantItemEnd(tokens: readonly IToken[], i: number): number {
  let j = i;
  while (tokens[j]?.tokenType === Minus || tokens[j]?.tokenType === Plus) j++;
  const token = tokens[j];
  if (token === undefined) return -1;
  if (token.tokenType === NumberLit) return j + 1;
  if (j > i) return -1; // a sign before something other than a number
  const type = token.tokenType;
  return type === StringLit || type === Null || type === True || type === False ? j + 1 : -1;
}

/** VALUES lists of at least this many rows of plain constants bypass node-sql-parser (`constantLists`). */
export const CONSTANT_ROWS_MIN = 8;

/**
 * The end of the constant rows from tokens[open] (`(c, …), (c, …), …`, every row as wide as the
 * first): the index of the last row's `)` and the number of rows; null where a row holds anything
 * but constants or the widths differ (node-sql-parser then reads the list, and the converter
 * reports what is wrong).
 */
function constantRowsEnd(tokens: readonly IToken[], open: number): { close: number; rows: number } | null {
  let j = open;
  let rows = 0;
  let width = -1;
  for (;;) {
    if (tokens[j]?.tokenType !== LParen) return null;
    j++;
    let count = 0;
    for (;;) {
      const end = constantItemEnd(tokens, j);
      if (end < 0) return null;
      count++;
      j = end;
      if (tokens[j]?.tokenType !== Comma) break;
      j++;
    }
    if (tokens[j]?.tokenType !== RParen || (width >= 0 && count !== width)) return null;
    width = count;
    rows++;
    if (tokens[j + 1]?.tokenType !== Comma || tokens[j + 2]?.tokenType !== LParen) return { close: j, rows };
    j += 2;
  }
}

/**
 * Long IN lists of plain constants (`x IN (1, 2, …)`), as `(` index → `)` index, and long VALUES
 * lists of constant rows, as the index of the word VALUES → the last row's `)`. node-sql-parser is
 * slow per token and such lists are the shapes real queries make very long, so it sees only the
 * first constant of each IN list and the first row of each VALUES list; the converter reads all of
 * them from our tokens.
 */
export function constantLists(tokens: readonly IToken[]): Map<number, number> {
  const lists = new Map<number, number>();
  for (let i = 0; i + 1 < tokens.length; i++) {
    // In FROM only: `(VALUES` after FROM, JOIN or a comma (`x IN (VALUES …)` is refused by the converter).
    const valuesInFrom =
      tokens[i - 1]?.tokenType === LParen &&
      (isWordText(tokens[i - 2], 'from') ||
        isWordText(tokens[i - 2], 'join') ||
        tokens[i - 2]?.tokenType === Comma);
    if (valuesInFrom && isWordText(tokens[i], 'values') && tokens[i + 1]!.tokenType === LParen) {
      const rows = constantRowsEnd(tokens, i + 1);
      if (rows !== null && rows.rows >= CONSTANT_ROWS_MIN) {
        lists.set(i, rows.close);
        i = rows.close;
      }
      continue;
    }
    if (!isWordText(tokens[i], 'in') || tokens[i + 1]!.tokenType !== LParen) continue;
    let j = i + 2;
    let count = 0;
    for (;;) {
      const end = constantItemEnd(tokens, j);
      if (end < 0) break;
      count++;
      j = end;
      if (tokens[j]?.tokenType !== Comma) break;
      j++;
    }
    if (count >= CONSTANT_LIST_MIN && tokens[j]?.tokenType === RParen) {
      lists.set(i + 1, j);
      i = j;
    }
  }
  return lists;
}
