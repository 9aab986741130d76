// Operands written with key words or parentheses in DML and DEFAULT expressions: CASE, CAST (x AS
// type), and a parenthesised expression, row constructor `(a, b, …)` or (refused) subquery. The
// operator runs around them are the layer above (expressions.ts); names and calls the layer below.
import type { IOrAlt } from 'chevrotain';
import type { Expr } from '../ast.ts';
import { functionCall, ROW_CONSTRUCTOR, type Located } from '../expr-builder.ts';
import { As, Case, Cast, Comma, Else, End, LParen, posOf, RParen, Then, When } from '../lexer.ts';
import { CallGrammar } from './calls.ts';

export abstract class OperandGrammar extends CallGrammar {
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
