// Operands written with key words or parentheses in DML and DEFAULT expressions: CASE, CAST (x AS
// type), ANY/SOME/ALL (array), and a parenthesised expression, row constructor `(a, b, …)` or
// (refused) subquery. The operator runs around them are the layer above (expressions.ts); names
// and calls the layer below.
import type { IOrAlt, IToken } from 'chevrotain';
import type { Expr } from '../ast.ts';
import { ARRAY_ALL, ARRAY_ANY, functionCall, ROW_CONSTRUCTOR, type Located } from '../expr-builder.ts';
import {
  All,
  As,
  Case,
  Cast,
  Comma,
  Else,
  End,
  isWordText,
  LParen,
  OtherReserved,
  posOf,
  RParen,
  Then,
  When,
} from '../lexer.ts';
import { CallGrammar } from './calls.ts';

export abstract class OperandGrammar extends CallGrammar {
  /**
   * `ANY (array)`, `SOME (array)`, `ALL (array)` after a comparison: a call the binder pairs with
   * it, as in a SELECT (select-adapter/call-converter.ts); ANY (SELECT …) is a refused subquery.
   */
  protected readonly quantified = this.RULE('quantified', (): Located => {
    const word = this.OR(this.quantifierWordAlts);
    this.CONSUME(LParen);
    const array = this.OR2(this.quantifiedAlts);
    this.CONSUME(RParen);
    return this.ACTION(() => {
      const name = word.tokenType === All ? ARRAY_ALL : ARRAY_ANY;
      return this.located(functionCall(name, [array.expr], {}, posOf(word)));
    });
  });

  /** Whether ANY, SOME or ALL and `(` come next (ANY and SOME are no keywords to the lexer). */
  protected quantifierAhead(): boolean {
    const word = this.LA(1);
    const quantifier = word.tokenType === All || isWordText(word, 'any') || isWordText(word, 'some');
    return quantifier && this.LA(2).tokenType === LParen;
  }

  private readonly quantifierWordAlts: IOrAlt<IToken>[] = [
    { ALT: () => this.CONSUME(All) },
    { ALT: () => this.CONSUME(OtherReserved) },
  ];

  /** The array of ANY / ALL, or a subquery (refused). */
  private readonly quantifiedAlts: IOrAlt<Located>[] = [
    { ALT: () => this.SUBRULE(this.subquery) },
    { ALT: () => this.SUBRULE(this.expr) },
  ];

  protected readonly caseExpr = this.RULE('caseExpr', (): Located => {
    const caseToken = this.CONSUME(Case);
    let operand: Located | undefined;
    this.OPTION(() => {
      operand = this.SUBRULE(this.expr);
    });
    const whens: { when: Expr; then: Expr }[] = [];
    this.AT_LEAST_ONE(() => {
      this.CONSUME(When);
      const when = this.SUBRULE2(this.expr);
      this.CONSUME(Then);
      const then = this.SUBRULE3(this.expr);
      this.ACTION(() => whens.push({ when: when.expr, then: then.expr }));
    });
    let elseExpr: Located | undefined;
    this.OPTION2(() => {
      this.CONSUME(Else);
      elseExpr = this.SUBRULE4(this.expr);
    });
    this.CONSUME(End);
    return this.ACTION(() =>
      this.located({
        kind: 'case',
        ...(operand !== undefined ? { operand: operand.expr } : {}),
        whens,
        ...(elseExpr !== undefined ? { else: elseExpr.expr } : {}),
        pos: posOf(caseToken),
      }),
    );
  });

  protected readonly castExpr = this.RULE('castExpr', (): Located => {
    const castToken = this.CONSUME(Cast);
    this.CONSUME(LParen);
    const operand = this.SUBRULE(this.expr);
    this.CONSUME(As);
    const type = this.SUBRULE(this.typeName);
    this.CONSUME(RParen);
    return this.ACTION(() =>
      this.located({ kind: 'cast', operand: operand.expr, type, pos: posOf(castToken) }),
    );
  });

  protected readonly parenExpr = this.RULE('parenExpr', (): Located => {
    const open = this.CONSUME(LParen);
    const inner = this.OR(this.parenInnerAlts);
    // `(a, b, …)`: a row constructor, which the expression builder expands in a row comparison
    const rest: Expr[] = [];
    this.MANY(() => {
      this.CONSUME(Comma);
      const next = this.SUBRULE2(this.expr);
      this.ACTION(() => rest.push(next.expr));
    });
    this.CONSUME(RParen);
    return this.ACTION(() =>
      rest.length === 0
        ? { expr: inner.expr, start: posOf(open) }
        : {
            expr: functionCall(ROW_CONSTRUCTOR, [inner.expr, ...rest], {}, posOf(open)),
            start: posOf(open),
          },
    );
  });

  private readonly parenInnerAlts: IOrAlt<Located>[] = [
    { ALT: () => this.SUBRULE(this.subquery) },
    { ALT: () => this.SUBRULE(this.expr) },
  ];
}
