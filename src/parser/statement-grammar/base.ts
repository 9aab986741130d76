// The shared base of the statement grammar: the per-statement state, syntax-error reporting and the
// SELECT hand-off to the node-sql-parser adapter. The grammar is one chevrotain parser built up by
// inheritance: base → names → expressions → ddl → dml → StatementParser (../statement-grammar.ts).
import { EarlyExitException, EmbeddedActionsParser, NoViableAltException, type IToken } from 'chevrotain';
import type { AllowedLatenessClause, Pos, SelectStmt } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import { allTokenTypes, AnyToken, LParen, Select, Table, Values, With } from '../lexer.ts';
import { emitOnCloseTail } from './emit-on-close.ts';
import { parseSelect } from '../select-adapter.ts';

export interface SelectBody {
  readonly query: SelectStmt;
  readonly text: string;
  /** Where a trailing `EMIT ON WINDOW CLOSE` starts (only CREATE MATERIALIZED VIEW accepts it). */
  readonly emitOnWindowClose: Pos | null;
  /** Its `ALLOWED LATENESS INTERVAL '…' [unit]`, when written. */
  readonly allowedLateness: AllowedLatenessClause | null;
}

export abstract class GrammarBase extends EmbeddedActionsParser {
  /** The full submitted text and the current statement's text and position, set per statement. */
  protected source = '';
  protected statementText = '';
  protected statementPos: Pos = { line: 1, column: 1 };
  /** Tokens a SELECT body may hand the SQL library (SqlLimits.maxSelectTokens), set per statement. */
  protected selectTokenLimit = Infinity;
  /**
   * Whether a parenthesised SELECT is a value here: in UPDATE's SET and WHERE and DELETE's WHERE,
   * which run as a query (src/exec/dml-query.ts); a subquery elsewhere (VALUES, DEFAULT) is refused.
   */
  protected subqueriesAllowed = false;

  constructor() {
    super(allTokenTypes, { maxLookahead: 3 });
  }

  /** A query: every token to the end of the statement goes to the node-sql-parser adapter. */
  protected readonly selectBody = this.RULE('selectBody', (): SelectBody => {
    const tokens: IToken[] = [];
    this.OR([
      { ALT: () => tokens.push(this.CONSUME(Select)) },
      { ALT: () => tokens.push(this.CONSUME(With)) },
      { ALT: () => tokens.push(this.CONSUME(LParen)) },
      { ALT: () => tokens.push(this.CONSUME(Values)) },
      // `TABLE name`, PostgreSQL's `SELECT * FROM name` (query-structure.ts reads it)
      { ALT: () => tokens.push(this.CONSUME(Table)) },
    ]);
    this.MANY(() => tokens.push(this.CONSUME(AnyToken)));
    return this.ACTION(() => {
      const first = tokens[0]!;
      // RisingWave's EMIT ON WINDOW CLOSE is not SELECT syntax: taken off here, judged by the caller.
      const tail = emitOnCloseTail(tokens);
      if (tail !== null) tokens.length = tail.start;
      const last = tokens[tokens.length - 1]!;
      return {
        query: parseSelect(tokens, this.selectTokenLimit),
        text: this.source.slice(first.startOffset, (last.endOffset ?? last.startOffset) + 1),
        emitOnWindowClose: tail?.pos ?? null,
        allowedLateness: tail?.allowedLateness ?? null,
      };
    });
  });

  /** Refuses EMIT ON WINDOW CLOSE where only a materialized view can take it (a query, EXPLAIN). */
  protected refuseEmitOnClose(body: SelectBody): void {
    if (body.emitOnWindowClose !== null) {
      throw notSupported(
        'EMIT ON WINDOW CLOSE outside CREATE MATERIALIZED VIEW',
        body.emitOnWindowClose,
        'a query reads the current rows: drop the clause',
      );
    }
  }

  // chevrotain computes every expected token path to word its messages, which can take seconds
  // on this grammar; Sluice's messages only need the offending token, so skip that work.
  raiseNoAltException(): never {
    throw this.saveError(new NoViableAltException('', this.LA(1), this.LA(0)));
  }
  raiseEarlyExitException(): never {
    throw this.saveError(new EarlyExitException('', this.LA(1), this.LA(0)));
  }
  private saveError(error: Error): Error {
    return (this as unknown as { SAVE_ERROR(e: Error): Error }).SAVE_ERROR(error);
  }
}
