// Expressions node-sql-parser's grammar does not take where PostgreSQL writes them: PARTITION BY
// items (it reads columns and calls only) and LIMIT/OFFSET counts (it reads numbers only). Each is
// hidden from the text node-sql-parser parses and parsed apart, as ON conditions are
// (select-adapter.ts `Conditions`): our tokens, so errors keep their positions.
import type { IToken } from 'chevrotain';
import {
  Comma,
  Dot,
  isType,
  isWord,
  isWordText,
  LParen,
  NumberLit,
  QuotedIdent,
  RParen,
  syntaxErrorAt,
} from '../lexer.ts';

/** Words that end a PARTITION BY list inside `OVER (…)` at its own level. */
const PARTITION_ENDS = ['order', 'rows', 'range', 'groups'];

/**
 * The items of `OVER (… PARTITION BY a % 2, (b) …)`, as the index of the token before each item
 * (`BY` or the comma) → the index after it. node-sql-parser's grammar takes only columns and calls
 * there: the items are hidden from it, `PARTITION` included, and parsed apart as ON conditions are
 * (select-adapter.ts), so an item is any expression, its errors at its own tokens.
 */
export function hiddenPartitionItems(tokens: readonly IToken[]): Map<number, number> {
  const found = new Map<number, number>();
  for (let i = 1; i + 2 < tokens.length; i++) {
    if (!isWordText(tokens[i], 'partition') || !isWordText(tokens[i + 1], 'by')) continue;
    // PARTITION BY first in `OVER (` (named windows are expanded into it before, named-windows.ts).
    if (!isType(tokens[i - 1], LParen) || !isWordText(tokens[i - 2], 'over')) continue;
    const items = new Map<number, number>();
    let before = i + 1;
    let depth = 0;
    let j = i + 2;
    for (; ; j++) {
      const token = tokens[j];
      // An unclosed parenthesis: left to node-sql-parser, which reports the end of input.
      if (token === undefined && depth > 0) return found;
      if (token?.tokenType === LParen) depth++;
      else if (depth > 0) {
        if (token?.tokenType === RParen) depth--;
      } else if (
        token === undefined ||
        token.tokenType === RParen ||
        token.tokenType === Comma ||
        PARTITION_ENDS.some((w) => isWordText(token, w))
      ) {
        // An empty item: PostgreSQL's syntax error at what follows (node-sql-parser, shown the
        // items around it, would report one of them).
        if (j === before + 1) {
          if (token === undefined) return found;
          throw syntaxErrorAt(token);
        }
        items.set(before, j);
        if (token?.tokenType !== Comma) break;
        before = j;
      }
    }
    // Columns alone are left to node-sql-parser, which reads them: parsing apart costs a parse.
    if ([...items].some(([at, end]) => !isColumn(tokens.slice(at + 1, end))))
      for (const [at, end] of items) found.set(at, end);
    i = j - 1;
  }
  return found;
}

/** Whether `item` is a column: a name, or a relation's name, a dot and a name. */
function isColumn(item: readonly IToken[]): boolean {
  const name = (t: IToken | undefined): boolean => isWord(t) || t?.tokenType === QuotedIdent;
  if (item.length === 1) return name(item[0]);
  return item.length === 3 && name(item[0]) && isType(item[1], Dot) && name(item[2]);
}

/** Whether a count is one number, or a sign and one (node-sql-parser reads those). */
function plainCount(count: readonly IToken[]): boolean {
  const [first, second] = count;
  if (count.length === 1) return first!.tokenType === NumberLit;
  return (
    count.length === 2 && (first!.image === '-' || first!.image === '+') && second!.tokenType === NumberLit
  );
}

/** Words that end a LIMIT or OFFSET count at the SELECT's own level. */
const COUNT_ENDS = ['limit', 'offset', 'fetch', 'for'];

/**
 * The counts of LIMIT and OFFSET at the SELECT's own level (subqueries are parsed apart before,
 * query-structure.ts), as the keyword's index → the index after its count. `LIMIT ALL` is left to
 * node-sql-parser, which reads it.
 */
export function hiddenLimitCounts(tokens: readonly IToken[]): Map<number, number> {
  const found = new Map<number, number>();
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) depth++;
    else if (token.tokenType === RParen) depth--;
    if (depth !== 0 || !(isWordText(token, 'limit') || isWordText(token, 'offset'))) continue;
    if (isWordText(token, 'limit') && isWordText(tokens[i + 1], 'all')) continue;
    let j = i + 1;
    for (let inner = 0; j < tokens.length; j++) {
      const t = tokens[j]!;
      if (t.tokenType === LParen) inner++;
      else if (t.tokenType === RParen && --inner < 0) break;
      else if (inner === 0 && COUNT_ENDS.some((w) => isWordText(t, w))) break;
    }
    // A missing count is left to node-sql-parser, which reports it where PostgreSQL does, and so
    // is a plain number (or a sign and one), which it reads: parsing apart costs a parse of its own.
    if (j > i + 1 && !plainCount(tokens.slice(i + 1, j))) found.set(i, j);
    i = j - 1;
  }
  return found;
}
