// Entry point of the parser: SQL text → Sluice statements, or a SluiceError pointing into the text.
// Statements are split at `;` tokens (never inside literals or comments); empty statements vanish.
import type { IToken } from 'chevrotain';
import type { Statement } from './ast.ts';
import { parseError, SluiceError } from '../errors.ts';
import { posOf, Semicolon, tokenize } from './lexer.ts';
import { statementParser } from './statement-grammar.ts';

/**
 * Parses every statement in `sql`. Positions in the result (and in errors) are 1-based lines and
 * columns of the whole of `sql`. Throws SluiceError (SYNTAX_ERROR, NOT_SUPPORTED, …) and nothing else.
 */
export function parseStatements(sql: string): Statement[] {
  const tokens = tokenize(sql);
  const statements: Statement[] = [];
  let current: IToken[] = [];
  for (const token of tokens) {
    if (token.tokenType !== Semicolon) current.push(token);
    else {
      if (current.length > 0) statements.push(parseOne(current, sql));
      current = [];
    }
  }
  if (current.length > 0) statements.push(parseOne(current, sql));
  return statements;
}

function parseOne(tokens: IToken[], sql: string): Statement {
  try {
    return statementParser.parseStatement(tokens, sql);
  } catch (error) {
    if (error instanceof SluiceError) throw error;
    // Deeply nested input can exhaust the stack inside either parser library.
    if (error instanceof RangeError) {
      throw parseError('statement is too deeply nested', posOf(tokens[0]!));
    }
    throw new SluiceError('INTERNAL_ERROR', `the SQL parser failed: ${String(error)}`, {
      position: posOf(tokens[0]!),
    });
  }
}
