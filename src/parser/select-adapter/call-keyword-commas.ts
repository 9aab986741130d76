// Calls PostgreSQL writes with key words between their arguments, which node-sql-parser reads only
// with commas: SUBSTRING(s FROM a FOR b), OVERLAY(s PLACING t FROM a FOR b), POSITION(a IN b). The
// words are rendered as commas (adapter-tokens.ts) and the converter accepts them where a comma goes.
import type { IToken } from 'chevrotain';
import { isWordText, LParen, RParen } from '../lexer.ts';

/** Marks FROM and FOR at the top level of `substring(` … `)` when they appear in that order. */
export function markSubstring(tokens: readonly IToken[], open: number, commas: Set<number>): void {
  let depth = 0;
  let from = -1;
  let forIndex = -1;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) depth++;
    else if (token.tokenType === RParen && --depth === 0) break;
    else if (depth === 1 && isWordText(token, 'from') && from < 0) from = i;
    else if (depth === 1 && isWordText(token, 'for') && forIndex < 0) forIndex = i;
  }
  if (from < 0 || (forIndex >= 0 && forIndex < from)) return;
  commas.add(from);
  if (forIndex >= 0) commas.add(forIndex);
}

/**
 * `OVERLAY(s PLACING t FROM n [FOR m])`: PLACING, FROM and FOR at the call's own level, in that
 * order, are rendered as commas (node-sql-parser sees overlay(s, t, n, m)).
 */
export function markOverlay(tokens: readonly IToken[], open: number, commas: Set<number>): void {
  const words = ['placing', 'from', 'for'];
  const found: number[] = [];
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) depth++;
    else if (token.tokenType === RParen && --depth === 0) break;
    else if (depth === 1 && isWordText(token, words[found.length] ?? '')) found.push(i);
  }
  if (found.length < 2) return;
  for (const i of found) commas.add(i);
}

/**
 * `POSITION(a IN b)`: the IN at the call's own level is rendered as a comma (node-sql-parser reads
 * `a IN b` with a column `a` as an IN list and fails); the converter swaps the arguments back.
 */
export function markPosition(tokens: readonly IToken[], open: number, commas: Set<number>): void {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) depth++;
    else if (token.tokenType === RParen && --depth === 0) return;
    else if (depth === 1 && isWordText(token, 'in')) {
      commas.add(i);
      return;
    }
  }
}
