// `TABLE name` as a query: PostgreSQL's `SELECT * FROM name`, read as those tokens.
import type { IToken, TokenType } from 'chevrotain';
import { notSupported } from '../../common/errors.ts';
import { From, isWord, isWordText, posOf, QuotedIdent, Select, Star, syntaxErrorAt } from '../lexer.ts';

/**
 * The tokens of `SELECT * FROM name` for `TABLE name` (`table` the TABLE token): the words it stands
 * for are at TABLE's position, the name keeps its own.
 */
export function tableQueryTokens(table: IToken, name: IToken): IToken[] {
  if (isWordText(name, 'only')) throw notSupported('TABLE ONLY', posOf(name));
  if (!isWord(name) && name.tokenType !== QuotedIdent) throw syntaxErrorAt(name);
  const at = (image: string, type: TokenType, offset: number): IToken => ({
    ...table,
    image,
    tokenType: type,
    tokenTypeIdx: type.tokenTypeIdx!,
    startOffset: offset,
    endOffset: offset + image.length - 1,
  });
  // Offsets of their own before the name's, a blank apart (the text node-sql-parser parses is laid
  // out from them).
  const start = name.startOffset;
  return [at('select', Select, start - 14), at('*', Star, start - 7), at('from', From, start - 5), name];
}
