// Type names in casts that node-sql-parser does not know, shown to it as one it does. The
// converter reads every cast's type from our tokens (operand-converter.ts typeName), so the stand-in
// only has to parse: `x::bpchar` and `CAST(x AS bpchar)` (PostgreSQL's char without a length) are
// shown as `char  `, the same length, a length after them kept.
import type { IToken } from 'chevrotain';
import { DoubleColon, isType, isWordText, LParen, QuotedIdent, RParen } from '../lexer.ts';

const STAND_INS: Readonly<Record<string, string>> = { bpchar: 'char  ' };

/** The renders of the cast type words in `tokens` node-sql-parser lacks, by token index. */
export function castTypeStandIns(tokens: readonly IToken[]): Map<number, string> {
  const out = new Map<number, string>();
  // Per open parenthesis: whether it opens CAST's, whose AS (at that depth) is followed by a type.
  const castParens: boolean[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const prev = tokens[i - 1];
    if (isType(token, LParen)) castParens.push(isWordText(prev, 'cast'));
    else if (isType(token, RParen)) castParens.pop();
    if (token.tokenType === QuotedIdent) continue;
    const standIn = STAND_INS[token.image.toLowerCase()];
    if (standIn === undefined || standIn.length !== token.image.length) continue;
    const afterAs = isWordText(prev, 'as') && castParens.at(-1) === true;
    if (isType(prev, DoubleColon) || afterAs) out.set(i, standIn);
  }
  return out;
}
