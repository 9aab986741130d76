// Type names as written in column definitions and casts. One token-level reader serves both the
// chevrotain grammar and the SELECT adapter, so `x::double precision` means the same everywhere.
import type { IToken } from 'chevrotain';
import type { TypeName } from './ast.ts';
import {
  Comma,
  Ident,
  identName,
  isType,
  isWordText,
  LParen,
  NumberLit,
  posOf,
  QuotedIdent,
  RParen,
  LBracket,
  RBracket,
} from './lexer.ts';

/** Looks `k` tokens ahead (1-based, like chevrotain's LA); undefined or EOF past the end. */
export type Peek = (k: number) => IToken | undefined;

function isInteger(token: IToken | undefined): boolean {
  return token !== undefined && token.tokenType === NumberLit && /^\d+$/.test(token.image);
}

/**
 * How many tokens the type name starting at peek(1) spans, or 0 if no type name starts there.
 * Multi-word names are PostgreSQL's fixed ones (`double precision`, `character varying`,
 * `timestamp [(p)] with[out] time zone`); any other type is one word plus optional `(n[, m])`,
 * so that an alias after a cast is never swallowed into the type.
 */
export function measureTypeName(peek: Peek): number {
  const first = peek(1);
  if (first === undefined || !isType(first, Ident)) return 0;
  const word = first.tokenType === QuotedIdent ? '' : first.image.toLowerCase();
  let n = 1;
  if (word === 'double' && isWordText(peek(2), 'precision')) n = 2;
  else if (['character', 'char', 'nchar', 'bit'].includes(word) && isWordText(peek(2), 'varying')) n = 2;
  else if (word === 'national' && (isWordText(peek(2), 'character') || isWordText(peek(2), 'char'))) {
    n = isWordText(peek(3), 'varying') ? 3 : 2;
  }
  if (isType(peek(n + 1), LParen)) {
    let k = n + 2;
    for (;;) {
      if (!isInteger(peek(k))) break;
      k++;
      if (isType(peek(k), RParen)) {
        n = k;
        break;
      }
      if (!isType(peek(k), Comma)) break;
      k++;
    }
  }
  if (
    (word === 'timestamp' || word === 'time') &&
    (isWordText(peek(n + 1), 'with') || isWordText(peek(n + 1), 'without')) &&
    isWordText(peek(n + 2), 'time') &&
    isWordText(peek(n + 3), 'zone')
  ) {
    n += 3;
  }
  // array suffixes: `[]`, `[n]` (each one dimension) or `ARRAY`, `ARRAY[n]` (SQL's form, one)
  for (;;) {
    if (isType(peek(n + 1), LBracket)) {
      if (isType(peek(n + 2), RBracket)) n += 2;
      else if (isInteger(peek(n + 2)) && isType(peek(n + 3), RBracket)) n += 3;
      else break;
    } else if (isWordText(peek(n + 1), 'array') && peek(n + 1)?.tokenType !== QuotedIdent) {
      n += 1;
      if (isType(peek(n + 1), LBracket) && isInteger(peek(n + 2)) && isType(peek(n + 3), RBracket)) n += 3;
    } else break;
  }
  return n;
}

/** Builds the TypeName from exactly the tokens measureTypeName counted. */
export function buildTypeName(tokens: readonly IToken[]): TypeName {
  const words: string[] = [];
  const params: number[] = [];
  let arrayDims = 0;
  let inBrackets = false;
  for (const [i, token] of tokens.entries()) {
    if (token.tokenType === LBracket) {
      // `ARRAY[n]` is one dimension, as is `[n]`
      if (!isWordText(tokens[i - 1], 'array')) arrayDims++;
      inBrackets = true;
    } else if (token.tokenType === RBracket) inBrackets = false;
    else if (inBrackets)
      continue; // a declared array size: ignored, as PostgreSQL does
    else if (i > 0 && token.tokenType !== QuotedIdent && isWordText(token, 'array')) arrayDims++;
    else if (token.tokenType === NumberLit) params.push(Number(token.image));
    else if (token.tokenType !== LParen && token.tokenType !== RParen && token.tokenType !== Comma) {
      words.push(identName(token));
    }
  }
  return { name: words.join(' '), params, ...(arrayDims > 0 ? { arrayDims } : {}), pos: posOf(tokens[0]!) };
}
