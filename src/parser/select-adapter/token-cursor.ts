// The token cursor under the SELECT adapter's converter: it consumes our lexer's tokens one by one
// while the converter walks node-sql-parser's tree, and turns a disagreement between the two into a
// syntax error at the first token it could not account for.
import type { IToken, TokenType } from 'chevrotain';
import type { Pos } from '../ast.ts';
import { notSupported, parseError } from '../../common/errors.ts';
import {
  Comma,
  endPosOf,
  Ident,
  isType,
  isWord,
  isWordText,
  LParen,
  niladicTypes,
  posOf,
  QuotedIdent,
  RParen,
  syntaxErrorAt,
} from '../lexer.ts';
import { type AdapterToken, matchParens } from './adapter-tokens.ts';

/**
 * Counts the times the converter could not follow node-sql-parser's tree (see `lost`). Tests use
 * it to tell our own bugs apart from SQL that node-sql-parser rejects outright. `parsedCharacters`
 * counts the characters handed to node-sql-parser, whose cost grows with them (tests bound it).
 */
export const adapterDiagnostics = { divergences: 0, parsedCharacters: 0 };

/** A cursor over the adapter's tokens: the reading steps every part of the converter shares. */
export abstract class TokenCursor {
  protected index = 0;
  protected readonly closeOf: Int32Array;

  constructor(protected readonly tokens: readonly AdapterToken[]) {
    this.closeOf = matchParens(tokens);
  }

  protected peek(ahead = 0): IToken | undefined {
    return this.tokens[this.index + ahead]?.tok;
  }
  protected here(): Pos {
    const token = this.peek() ?? this.tokens[this.tokens.length - 1]?.tok;
    return token !== undefined ? posOf(token) : { line: 1, column: 1 };
  }
  /**
   * node-sql-parser's tree and our tokens disagree. node-sql-parser accepts things PostgreSQL does
   * not (`SELECT a sum(x)` with alias "sum(x)", `NULLS LASTLIMIT`), so this is where its reading
   * goes beyond PostgreSQL's: a syntax error at the first token we could not account for.
   */
  protected lost(): never {
    adapterDiagnostics.divergences++;
    const token = this.peek();
    if (token !== undefined) throw syntaxErrorAt(token);
    const last = this.tokens[this.tokens.length - 1]!.tok;
    throw parseError('syntax error at end of input', endPosOf(last));
  }
  protected expect(type: TokenType): IToken {
    const token = this.peek();
    if (token === undefined || !isType(token, type)) this.lost();
    this.index++;
    return token;
  }
  protected word(lower: string): IToken {
    const token = this.peek();
    if (!isWordText(token, lower)) this.lost();
    this.index++;
    return token!;
  }
  protected optionalWord(lower: string): IToken | undefined {
    const token = this.peek();
    if (!isWordText(token, lower)) return undefined;
    this.index++;
    return token;
  }
  /**
   * A name: an identifier, a non-reserved keyword or a quoted identifier. node-sql-parser also
   * accepts some reserved words as names; PostgreSQL does not (except as a label after AS).
   */
  protected name(allowReserved = false): IToken {
    const token = this.peek();
    if (token === undefined || !(isWord(token) || token.tokenType === QuotedIdent)) this.lost();
    if (!allowReserved && !isType(token, Ident) && !niladicTypes.includes(token.tokenType)) {
      throw syntaxErrorAt(token);
    }
    this.index++;
    return token;
  }
  protected comma(): void {
    const entry = this.tokens[this.index];
    if (entry === undefined || !(entry.tok.tokenType === Comma || entry.asComma)) this.lost();
    this.index++;
  }
  /** Consumes the parentheses wrapping one node: `((x))` counts 2. */
  protected openParens(): number {
    const first = this.index;
    const close = this.closeOf[first] ?? -1;
    if (this.peek()?.tokenType !== LParen || close < 0) this.lost();
    let count = 1;
    while (
      this.tokens[first + count]?.tok.tokenType === LParen &&
      this.closeOf[first + count] === close - count
    ) {
      count++;
    }
    this.index += count;
    return count;
  }
  protected closeParens(count: number): void {
    for (let i = 0; i < count; i++) this.expect(RParen);
  }
  /** Position of the SELECT/WITH that starts a subquery at or after the cursor. */
  protected subquery(): never {
    let ahead = 0;
    while (this.peek(ahead)?.tokenType === LParen) ahead++;
    const token = this.peek(ahead);
    throw notSupported('subquery', token !== undefined ? posOf(token) : this.here());
  }
}
