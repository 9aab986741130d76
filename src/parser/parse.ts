// Entry point of the parser: SQL text → Sluice statements, or a SluiceError pointing into the text.
// Statements are split at `;` (never inside literals or comments); empty statements vanish. Every
// limit of src/common/limits.ts on text is checked here, each before the work it bounds: the script's
// size and well-formedness before splitting, statement count and size before lexing, tokens and
// nesting before parsing, expression depth and list lengths before anything binds the result.
import type { IToken } from 'chevrotain';
import type { Statement } from './ast.ts';
import { SluiceError, notSupported } from '../common/errors.ts';
import { DEFAULT_SQL_LIMITS, type SqlLimits } from '../common/limits.ts';
import { Comma, LParen, isType, posOf, tokenize } from './lexer.ts';
import { isNamedArgument } from './select-adapter/adapter-tokens.ts';
import { illFormedAt, PositionCursor, skipTrivia, splitScript } from './script.ts';
import { checkStatement, checkTokens } from './statement-limits.ts';
import { statementParser } from './statement-grammar.ts';
import { withBeforeDml } from './with-dml.ts';

/**
 * Parses every statement in `sql`. Positions in the result (and in errors) are 1-based lines and
 * columns of the whole of `sql`. Throws SluiceError (SYNTAX_ERROR, NOT_SUPPORTED, a limit's code,
 * …) and nothing else; nothing is returned unless every statement parses.
 */
export function parseStatements(sql: string, limits: SqlLimits = DEFAULT_SQL_LIMITS): Statement[] {
  const steps = parseStepwise(sql, limits);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * `parseStepwise` run to the end in slices of about `sliceMs` of CPU, yielding to the event loop
 * between them, so a long script never holds it; null when the script does not parse (its error is
 * the engine's to report when it runs the script).
 */
export async function parseInSlices(
  sql: string,
  limits: SqlLimits,
  sliceMs = 10,
): Promise<Statement[] | null> {
  try {
    const steps = parseStepwise(sql, limits);
    let sliceEnd = performance.now() + sliceMs;
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
      if (performance.now() > sliceEnd) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceEnd = performance.now() + sliceMs;
      }
    }
  } catch {
    return null;
  }
}

/**
 * `parseStatements` as steps: it yields after each statement, so a caller can spread a long
 * script's parsing over several turns of the event loop. Same result, same errors.
 */
export function* parseStepwise(
  sql: string,
  limits: SqlLimits = DEFAULT_SQL_LIMITS,
): Generator<void, Statement[], void> {
  const positions = new PositionCursor(sql);
  const bad = illFormedAt(sql);
  if (bad >= 0) {
    const unit = sql.charCodeAt(bad).toString(16).toUpperCase();
    throw new SluiceError('INVALID_TEXT', `invalid Unicode text: unpaired surrogate U+${unit}`, {
      position: positions.at(bad),
      detail: 'the text is not well-formed UTF-16: half of a surrogate pair stands alone',
      hint: 'send well-formed Unicode (a JSON "\\ud800" escape without its pair is not a character)',
    });
  }
  if (sql.length > limits.maxScriptLength) {
    throw new SluiceError(
      'SCRIPT_TOO_LARGE',
      `script is too large (more than ${limits.maxScriptLength} characters)`,
      { position: positions.at(limits.maxScriptLength), hint: 'send it in several requests' },
    );
  }
  const spans = splitScript(sql, limits.maxScriptStatements);
  if (spans.length > limits.maxScriptStatements) {
    const extra = spans[limits.maxScriptStatements]!;
    throw new SluiceError(
      'SCRIPT_TOO_LARGE',
      `script has more than ${limits.maxScriptStatements} statements`,
      {
        position: positions.at(skipTrivia(sql, extra.start, extra.end)),
        hint: 'send it in several requests',
      },
    );
  }
  const statements: Statement[] = [];
  let creates = 0;
  for (const span of spans) {
    const start = skipTrivia(sql, span.start, span.end);
    if (span.end - start > limits.maxStatementLength) {
      throw new SluiceError(
        'STATEMENT_TOO_LARGE',
        `statement is too large (more than ${limits.maxStatementLength} characters)`,
        {
          position: positions.at(start + limits.maxStatementLength),
          hint: 'split it into several statements; send many rows through the ingest API',
        },
      );
    }
    const tokens = tokenize(sql, start, span.end, positions.at(start), limits.maxStatementTokens);
    if (tokens.length === 0) continue; // only comments
    checkTokens(tokens, limits);
    const statement = parseOne(tokens, sql, limits);
    checkStatement(statement, limits);
    if (statement.kind.startsWith('create') && ++creates > limits.maxScriptObjects) {
      throw new SluiceError(
        'SCRIPT_TOO_LARGE',
        `script creates more than ${limits.maxScriptObjects} objects`,
        { position: statement.pos, hint: 'send it in several requests' },
      );
    }
    statements.push(statement);
    yield;
  }
  return statements;
}

function parseOne(tokens: IToken[], sql: string, limits: SqlLimits): Statement {
  const first = tokens[0]!;
  if (first.image.toLowerCase() === 'subscribe') {
    throw new SluiceError(
      'NOT_SUPPORTED',
      'SUBSCRIBE streams a changelog: it is not a statement of a script',
      {
        position: posOf(first),
        hint: 'on the server, open a WebSocket to /v1/subscribe?sql=<the query> (NDJSON: GET /v1/changes?sql=…); in the library, create a materialized view and Engine.subscribe to it',
      },
    );
  }
  try {
    const ordered = withBeforeDml(tokens);
    if (ordered === tokens) return statementParser.parseStatement(tokens, sql, limits.maxSelectTokens);
    // The statement's text and position stay those of all of it, from its WITH.
    const statement = statementParser.parseStatement([...ordered], sql, limits.maxSelectTokens);
    const last = tokens[tokens.length - 1] as IToken;
    const text = sql.slice(first.startOffset, (last.endOffset ?? last.startOffset) + 1);
    return statement.kind === 'insert' ? { ...statement, pos: posOf(first), text } : statement;
  } catch (error) {
    if (error instanceof SluiceError) throw namedArgumentRefusal(tokens, error) ?? error;
    // The nesting limit keeps both parser libraries far from the end of the stack; should one
    // still get there, the statement is too deep for it, which is a limit and not a crash.
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new SluiceError('NESTING_TOO_DEEP', 'statement is nested too deeply to parse', {
        position: posOf(tokens[0]!),
      });
    }
    throw new SluiceError('INTERNAL_ERROR', `the SQL parser failed: ${String(error)}`, {
      position: posOf(tokens[0]!),
    });
  }
}

/**
 * The statement grammar (INSERT/UPDATE/DELETE expressions) does not read named arguments
 * (`make_interval(days => 3)`; SELECT does): its error at the `=>` or `:=` (a syntax error, or `:`
 * as an operator it does not have) is valid SQL
 * Sluice does not take there, refused at the argument's name.
 */
function namedArgumentRefusal(tokens: readonly IToken[], error: SluiceError): SluiceError | undefined {
  const at = error.position;
  if ((error.code !== 'SYNTAX_ERROR' && error.code !== 'NOT_SUPPORTED') || at === undefined) return undefined;
  for (let i = 1; i + 2 < tokens.length; i++) {
    const prev = tokens[i - 1]!;
    if (
      !(isType(prev, LParen) || isType(prev, Comma)) ||
      !isNamedArgument(tokens[i], tokens[i + 1], tokens[i + 2])
    )
      continue;
    const hit = [tokens[i + 1]!, tokens[i + 2]!].some(
      (t) => posOf(t).line === at.line && posOf(t).column === at.column,
    );
    if (hit)
      return notSupported(
        'named arguments in INSERT, UPDATE and DELETE',
        posOf(tokens[i]!),
        'write the arguments by position',
      );
  }
  return undefined;
}
