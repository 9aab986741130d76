// Names and calls in DML and DEFAULT expressions: a column reference (`c`, `t.c`), a function call
// with its arguments (`*`, DISTINCT/ALL, SUBSTRING's FROM/FOR, OVERLAY's PLACING/FROM/FOR,
// EXTRACT's FROM) and CURRENT_DATE and its kin.
import { tokenMatcher, type IOrAlt, type IToken, type ParserMethod, type TokenType } from 'chevrotain';
import type { Expr, Pos } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import { functionCall, numberLiteral, stringLiteral, type Located } from '../expr-builder.ts';
import {
  All,
  Comma,
  CurrentDate,
  CurrentTime,
  CurrentTimestamp,
  Distinct,
  Dot,
  Filter,
  For,
  From,
  Ident,
  identName,
  LocalTime,
  LocalTimestamp,
  LParen,
  NumberLit,
  Over,
  Placing,
  posOf,
  QuotedIdent,
  RParen,
  Star,
  StringLit,
  syntaxErrorAt,
} from '../lexer.ts';
import { NamesGrammar } from './names.ts';

interface CallRest {
  readonly kind: 'call';
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  readonly star: boolean;
  /** The argument is a query written bare, `name(SELECT …)`: only EXISTS takes one. */
  readonly query?: true;
}

/** `EXISTS (SELECT …)`; any other name before a bare query refuses it, as PostgreSQL does. */
function existsCall(name: IToken, args: readonly Expr[]): Expr {
  const query = args[0];
  if (query?.kind !== 'subquery') throw syntaxErrorAt(name);
  if (identName(name) !== 'exists') throw notSupported('subquery', query.pos);
  return { kind: 'exists', query: query.query, pos: posOf(name) };
}

/** What follows a name in an expression. */
type NameRest =
  CallRest | { readonly kind: 'qualified'; readonly name: IToken } | { readonly kind: 'column' };

/**
 * EXTRACT's field, read as the expression before FROM: a word (quoted or not) or a string, as in
 * PostgreSQL (`EXTRACT(year FROM ts)`, `EXTRACT('year' FROM ts)`); anything else is a syntax error
 * at `token`.
 */
function extractField(field: Expr, token: IToken): Expr {
  if (field.kind === 'column' && field.table === undefined)
    return stringLiteral(field.name.toLowerCase(), field.pos);
  if (field.kind === 'literal' && typeof field.value === 'string') {
    return stringLiteral(field.value.toLowerCase(), field.pos);
  }
  throw syntaxErrorAt(token);
}

function isWordOrString(token: IToken): boolean {
  return tokenMatcher(token, Ident) || tokenMatcher(token, StringLit);
}

export abstract class CallGrammar extends NamesGrammar {
  /** A whole expression (expressions.ts): what a call's arguments are. */
  protected abstract readonly expr: ParserMethod<[], Located>;
  /** A SELECT inside parentheses (expressions.ts): a value where the statement takes subqueries. */
  protected abstract readonly subquery: ParserMethod<[], Located>;

  /** An alternative consuming one token of `type` and yielding `value`. */
  protected tokenAlt<T>(type: TokenType, value: T, occurrence = 0): IOrAlt<T> {
    return {
      ALT: () => {
        if (occurrence === 0) this.CONSUME(type);
        else this.CONSUME2(type);
        return value;
      },
    };
  }

  protected located(expr: Expr): Located {
    return { expr, start: expr.pos };
  }

  protected readonly niladicCall = this.RULE('niladicCall', (): Located => {
    const token = this.OR(this.niladicAlts);
    let precision: IToken | undefined;
    this.OPTION(() => {
      this.CONSUME(LParen);
      precision = this.CONSUME(NumberLit);
      this.CONSUME(RParen);
    });
    return this.ACTION(() => {
      const args = precision !== undefined ? [numberLiteral(precision.image, posOf(precision))] : [];
      return this.located(functionCall(identName(token), args, {}, posOf(token)));
    });
  });

  private readonly niladicAlts: IOrAlt<IToken>[] = [
    { ALT: () => this.CONSUME(CurrentDate) },
    { ALT: () => this.CONSUME(CurrentTime) },
    { ALT: () => this.CONSUME(CurrentTimestamp) },
    { ALT: () => this.CONSUME(LocalTime) },
    { ALT: () => this.CONSUME(LocalTimestamp) },
  ];

  /** A column reference (`c`, `t.c`) or a function call (`f(...)`). */
  protected readonly nameExpr = this.RULE('nameExpr', (): Located => {
    const first = this.CONSUME(Ident);
    this.ACTION(() => this.callNames.push(first));
    const rest = this.OR(this.nameRestAlts);
    return this.ACTION(() => {
      this.callNames.pop();
      if (rest.kind === 'call' && rest.query === true) return this.located(existsCall(first, rest.args));
      if (rest.kind === 'call')
        return this.located(functionCall(identName(first), rest.args, rest, posOf(first)));
      const column: Expr =
        rest.kind === 'qualified'
          ? { kind: 'column', table: identName(first), name: identName(rest.name), pos: posOf(first) }
          : { kind: 'column', name: identName(first), pos: posOf(first) };
      return this.located(column);
    });
  });

  /** Names whose call arguments are being parsed (innermost last); SUBSTRING's FROM depends on it. */
  protected readonly callNames: IToken[] = [];

  private readonly nameRestAlts: IOrAlt<NameRest>[] = [
    { ALT: () => this.SUBRULE(this.callArguments) },
    {
      ALT: () => {
        this.CONSUME(Dot);
        return this.OR2(this.qualifiedAlts);
      },
    },
    { ALT: () => ({ kind: 'column' }) as const },
  ];

  private readonly qualifiedAlts: IOrAlt<NameRest>[] = [
    {
      ALT: () => {
        const second = this.CONSUME2(Ident);
        this.OPTION(() => {
          this.OR3(this.tooQualifiedAlts);
          this.ACTION(() => {
            throw notSupported('schema-qualified name', this.here(this.callNames));
          });
        });
        return { kind: 'qualified', name: second } as const;
      },
    },
    {
      ALT: () => {
        const star = this.CONSUME(Star);
        return this.ACTION(() => {
          throw notSupported('* in an expression', posOf(star));
        });
      },
    },
  ];

  private readonly tooQualifiedAlts: IOrAlt<IToken>[] = [
    { ALT: () => this.CONSUME2(Dot) },
    { ALT: () => this.CONSUME(LParen) },
  ];

  private here(names: readonly IToken[]): Pos {
    const name = names[names.length - 1];
    return name !== undefined ? posOf(name) : this.statementPos;
  }

  /** `( [*] | [DISTINCT|ALL] args )` after a function name; SUBSTRING and OVERLAY take key words too. */
  private readonly callArguments = this.RULE('callArguments', (): NameRest => {
    const name = this.callNames[this.callNames.length - 1];
    const call = { kind: 'call' as const, args: [] as Expr[], distinct: false, star: false };
    this.CONSUME(LParen);
    this.OPTION(() => {
      const parsed = this.OR(this.callBodyAlts);
      this.ACTION(() => Object.assign(call, parsed));
    });
    this.CONSUME(RParen);
    this.OPTION2(() => {
      const filter = this.CONSUME(Filter);
      this.ACTION(() => {
        throw notSupported('aggregate FILTER', posOf(filter));
      });
    });
    this.OPTION3(() => {
      this.CONSUME(Over);
      this.ACTION(() => {
        throw notSupported('window function', name !== undefined ? posOf(name) : this.statementPos);
      });
    });
    return call;
  });

  private readonly callBodyAlts: IOrAlt<Partial<CallRest>>[] = [
    {
      ALT: () => {
        this.CONSUME(Star);
        return { star: true };
      },
    },
    {
      // EXISTS (SELECT …); a query as any other call's argument is refused where the call is built
      ALT: () => {
        const query = this.SUBRULE(this.subquery);
        return this.ACTION(() => ({ args: [query.expr], query: true }));
      },
    },
    {
      ALT: () => {
        let distinct = false;
        this.OPTION4(() => {
          distinct = this.OR2(this.quantifierAlts);
        });
        // where a syntax error in EXTRACT's field is (PostgreSQL's: the token after a first word)
        const fieldError = isWordOrString(this.LA(1)) ? this.LA(2) : this.LA(1);
        const first = this.SUBRULE(this.expr);
        const more = this.OR3(this.moreArgumentAlts);
        return this.ACTION(() => ({
          distinct,
          args: this.extractSources.has(more)
            ? [extractField(first.expr, fieldError), ...more]
            : [first.expr, ...more],
        }));
      },
    },
  ];

  private readonly quantifierAlts: IOrAlt<boolean>[] = [
    this.tokenAlt(Distinct, true),
    this.tokenAlt(All, false),
  ];

  private readonly moreArgumentAlts: IOrAlt<Expr[]>[] = [
    {
      // OVERLAY(s PLACING t FROM start [FOR count]): overlay(s, t, start[, count]), as in a SELECT
      // (select-adapter/call-keyword-commas.ts)
      GATE: () => this.callNameIs('overlay'),
      ALT: () => {
        this.CONSUME(Placing);
        const replacement = this.SUBRULE5(this.expr);
        this.CONSUME3(From);
        const start = this.SUBRULE6(this.expr);
        let count: Located | undefined;
        this.OPTION6(() => {
          this.CONSUME2(For);
          count = this.SUBRULE7(this.expr);
        });
        return this.ACTION(() => [
          replacement.expr,
          start.expr,
          ...(count !== undefined ? [count.expr] : []),
        ]);
      },
    },
    {
      // SUBSTRING(s FROM start [FOR count])
      GATE: () => this.callNameIs('substring'),
      ALT: () => {
        this.CONSUME(From);
        const start = this.SUBRULE4(this.expr);
        let count: Located | undefined;
        this.OPTION5(() => {
          this.CONSUME(For);
          count = this.SUBRULE2(this.expr);
        });
        return this.ACTION(() => (count !== undefined ? [start.expr, count.expr] : [start.expr]));
      },
    },
    {
      // EXTRACT(field FROM source): extract('field', source), as in a SELECT (select-adapter/time-syntax.ts)
      GATE: () => this.callNameIs('extract'),
      ALT: () => {
        this.CONSUME4(From);
        const source = this.SUBRULE8(this.expr);
        return this.ACTION(() => {
          const args = [source.expr];
          this.extractSources.add(args);
          return args;
        });
      },
    },
    {
      ALT: () => {
        const from = this.CONSUME2(From);
        return this.ACTION(() => {
          const name = this.callNames[this.callNames.length - 1];
          throw notSupported(`${name?.image.toUpperCase() ?? 'function'}(... FROM ...)`, posOf(from));
        });
      },
    },
    {
      ALT: () => {
        const args: Expr[] = [];
        this.MANY(() => {
          this.CONSUME(Comma);
          const arg = this.SUBRULE3(this.expr);
          this.ACTION(() => args.push(arg.expr));
        });
        return args;
      },
    },
  ];

  /** The argument lists EXTRACT's FROM alternative read (its field, the first argument, is a word). */
  private readonly extractSources = new WeakSet<readonly Expr[]>();

  private callNameIs(lower: string): boolean {
    const name = this.callNames[this.callNames.length - 1];
    return name !== undefined && name.tokenType !== QuotedIdent && name.image.toLowerCase() === lower;
  }
}
