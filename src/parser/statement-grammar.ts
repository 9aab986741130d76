// The chevrotain grammar for Sluice's statements: the statement rule, SHOW, EXPLAIN and the parser
// object itself. Its rules come in layers (statement-grammar/: base, names, expressions, ddl, dml).
import { EOF, type IToken } from 'chevrotain';
import type { Statement } from './ast.ts';
import { notSupported, parseError } from '../common/errors.ts';
import {
  Clock,
  Dataflow,
  Eq,
  SetKw,
  StringLit,
  stringValue,
  Word,
  endPosOf,
  Explain,
  Functions,
  isWordText,
  Materialized,
  OtherOp,
  posOf,
  Show,
  Sinks,
  Sources,
  Tables,
  Watermarks,
  Views,
} from './lexer.ts';
import { DmlGrammar } from './statement-grammar/dml.ts';

class StatementParser extends DmlGrammar {
  constructor() {
    super();
    this.performSelfAnalysis();
  }

  /** Parses one statement's tokens (no `;`). Throws SluiceError. */
  parseStatement(tokens: IToken[], source: string, selectTokenLimit = Infinity): Statement {
    this.selectTokenLimit = selectTokenLimit;
    const first = tokens[0]!;
    const last = tokens[tokens.length - 1]!;
    this.source = source;
    this.statementText = source.slice(first.startOffset, (last.endOffset ?? last.startOffset) + 1);
    this.statementPos = posOf(first);
    this.callNames.length = 0;
    this.subqueriesAllowed = false;
    this.input = tokens;
    const statement = this.statement();
    const error = this.errors[0];
    if (error !== undefined) {
      const token = error.token;
      if (token.tokenType === EOF) throw parseError('syntax error at end of input', endPosOf(last));
      if (token.tokenType === OtherOp) throw notSupported(`operator ${token.image}`, posOf(token));
      throw parseError(`syntax error at or near "${token.image}"`, posOf(token));
    }
    return statement;
  }

  // ── statements ─────────────────────────────────────────────────────────────────────────────────

  private readonly statement = this.RULE('statement', (): Statement =>
    this.OR([
      { ALT: () => this.SUBRULE(this.createStatement) },
      { ALT: () => this.SUBRULE(this.dropStatement) },
      { ALT: () => this.SUBRULE(this.showStatement) },
      { ALT: () => this.SUBRULE(this.setClockStatement) },
      { ALT: () => this.SUBRULE(this.explainStatement) },
      { ALT: () => this.SUBRULE(this.insertStatement) },
      { ALT: () => this.SUBRULE(this.updateStatement) },
      { ALT: () => this.SUBRULE(this.deleteStatement) },
      {
        ALT: () => {
          const body = this.SUBRULE(this.selectBody);
          this.ACTION(() => this.refuseEmitOnClose(body));
          return this.ACTION((): Statement => ({
            kind: 'select',
            query: body.query,
            pos: this.statementPos,
            text: this.statementText,
          }));
        },
      },
    ]),
  );

  private readonly showStatement = this.RULE('showStatement', (): Statement => {
    this.CONSUME(Show);
    const objectKind = this.OR([
      {
        ALT: () => {
          this.CONSUME(Tables);
          return 'tables' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Views);
          return 'views' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Materialized);
          this.CONSUME2(Views);
          return 'views' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Sources);
          return 'sources' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Sinks);
          return 'sinks' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Functions);
          return 'functions' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Clock);
          return 'clock' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Watermarks);
          return 'watermarks' as const;
        },
      },
    ]);
    return this.ACTION((): Statement => ({
      kind: 'show',
      objectKind,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  /** SET CLOCK { TO | = } 'timestamptz' */
  private readonly setClockStatement = this.RULE('setClockStatement', (): Statement => {
    this.CONSUME(SetKw);
    this.CONSUME(Clock);
    this.OR([
      { ALT: () => this.CONSUME(Eq) },
      { GATE: () => isWordText(this.LA(1), 'to'), ALT: () => this.CONSUME(Word) },
    ]);
    const value = this.CONSUME(StringLit);
    return this.ACTION((): Statement => ({
      kind: 'setClock',
      value: stringValue(value),
      valuePos: posOf(value),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly explainStatement = this.RULE('explainStatement', (): Statement => {
    this.CONSUME(Explain);
    let dataflow = false;
    this.OPTION(() => {
      this.CONSUME(Dataflow);
      dataflow = true;
    });
    const body = this.SUBRULE(this.selectBody);
    this.ACTION(() => this.refuseEmitOnClose(body));
    return this.ACTION((): Statement => ({
      kind: 'explain',
      dataflow,
      query: body.query,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });
}

/** Built once: chevrotain parsers are reusable and expensive to construct. */
export const statementParser = new StatementParser();
