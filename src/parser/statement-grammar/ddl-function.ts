// CREATE [OR REPLACE] FUNCTION: a SQL function whose body is one expression over its parameters,
// written `AS $$ SELECT expr $$` or `RETURN expr`. The `$$` body is parsed in place (its tokens keep
// their positions in the statement), so errors in it point into the text as written.
import type { IToken } from 'chevrotain';
import type { Expr, FunctionParam, Pos, Statement } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import {
  As,
  Comma,
  DollarQuote,
  FunctionKw,
  Ident,
  identName,
  Immutable,
  isWordText,
  Language,
  LParen,
  Or,
  posOf,
  Replace,
  Return,
  Returns,
  RParen,
  Select,
  StringLit,
  AnyToken,
} from '../lexer.ts';
import { ExpressionGrammar } from './expressions.ts';

/** Function options PostgreSQL accepts that Sluice refuses by name (a function is always immutable). */
const REFUSED_OPTIONS = new Set([
  'stable',
  'volatile',
  'strict',
  'called',
  'parallel',
  'security',
  'leakproof',
  'cost',
  'rows',
  'window',
  'set',
]);

export abstract class FunctionGrammar extends ExpressionGrammar {
  protected readonly createFunction = this.RULE('createFunction', (): Statement => {
    let orReplace = false;
    this.OPTION(() => {
      this.CONSUME(Or);
      this.CONSUME(Replace);
      orReplace = true;
    });
    this.CONSUME(FunctionKw);
    const name = this.SUBRULE(this.objectName);
    this.CONSUME(LParen);
    const params: FunctionParam[] = [];
    this.MANY_SEP({ SEP: Comma, DEF: () => params.push(this.SUBRULE(this.functionParam)) });
    this.CONSUME(RParen);
    this.CONSUME(Returns);
    let returnsPos: Pos = { line: 1, column: 1 };
    this.ACTION(() => {
      returnsPos = posOf(this.LA(1));
    });
    const returns = this.SUBRULE(this.typeName);
    this.MANY({ GATE: () => this.atFunctionOption(), DEF: () => this.SUBRULE(this.functionOption) });
    const body = this.OR([
      { ALT: () => this.SUBRULE(this.dollarBody) },
      {
        ALT: () => {
          this.CONSUME(Return);
          return this.SUBRULE(this.expr).expr;
        },
      },
    ]);
    this.MANY2({ GATE: () => this.atFunctionOption(), DEF: () => this.SUBRULE2(this.functionOption) });
    return this.ACTION((): Statement => ({
      kind: 'createFunction',
      name: name.name,
      orReplace,
      params,
      returns,
      returnsPos,
      body,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  /** Whether an option comes next (RETURN, also a word, begins the body instead). */
  private atFunctionOption(): boolean {
    const next = this.LA(1);
    return (
      next.tokenType === Language ||
      next.tokenType === Immutable ||
      [...REFUSED_OPTIONS].some((w) => isWordText(next, w))
    );
  }

  private readonly functionParam = this.RULE('functionParam', (): FunctionParam => {
    const token = this.CONSUME(Ident);
    const type = this.SUBRULE(this.typeName);
    return this.ACTION(() => ({ name: identName(token), type, pos: posOf(token) }));
  });

  /** LANGUAGE SQL and IMMUTABLE are accepted; other options are refused by name. */
  private readonly functionOption = this.RULE('functionOption', (): void => {
    this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          ALT: () => {
            this.CONSUME(Language);
            const language = this.CONSUME(Ident);
            this.ACTION(() => {
              if (identName(language) !== 'sql') {
                throw notSupported(
                  `LANGUAGE ${language.image}`,
                  posOf(language),
                  'write the function in LANGUAGE SQL',
                );
              }
            });
          },
        },
        { ALT: () => this.CONSUME(Immutable) },
        {
          GATE: () => [...REFUSED_OPTIONS].some((w) => isWordText(this.LA(1), w)),
          ALT: () => {
            const token = this.CONSUME2(Ident);
            this.ACTION(() => {
              throw notSupported(
                `${token.image.toUpperCase()} in CREATE FUNCTION`,
                posOf(token),
                'a SQL function here is one immutable expression over its arguments',
              );
            });
          },
        },
      ],
    });
  });

  /** `AS $$ SELECT expr $$`; a body in a string literal is refused (its positions would be lost). */
  private readonly dollarBody = this.RULE('dollarBody', (): Expr => {
    this.CONSUME(As);
    return this.OR([
      {
        ALT: () => {
          const string = this.CONSUME(StringLit);
          return this.ACTION((): Expr => {
            throw notSupported(
              'a function body in a string literal',
              posOf(string),
              'quote the body with $$',
            );
          });
        },
      },
      {
        ALT: () => {
          this.CONSUME(DollarQuote);
          this.CONSUME(Select);
          const body = this.SUBRULE(this.expr);
          this.OPTION({
            GATE: () => this.LA(1).tokenType !== DollarQuote,
            DEF: () => {
              const extra: IToken = this.CONSUME(AnyToken);
              this.ACTION(() => {
                throw notSupported(
                  extra.tokenType === Comma
                    ? 'a SQL function body with more than one expression'
                    : `${extra.image.toUpperCase()} in a SQL function body`,
                  posOf(extra),
                  'the body of a SQL function is one expression over its arguments: SELECT expr',
                );
              });
            },
          });
          this.CONSUME2(DollarQuote);
          return body.expr;
        },
      },
    ]);
  });
}
