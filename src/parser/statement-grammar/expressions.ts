// The expressions of DML and column DEFAULTs, parsed as flat operator runs and assembled by
// buildExpr (expr-builder.ts), the code that also assembles the SELECT adapter's runs; names and
// calls among their operands, and CASE, CAST and parentheses, are the layers below (calls.ts,
// operands.ts).
import { tokenMatcher, type IOrAlt, type IToken, type OrMethodOpts } from 'chevrotain';
import type { Expr } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import {
  ARRAY_CONSTRUCTOR,
  booleanLiteral,
  buildExpr,
  functionCall,
  nullLiteral,
  numberLiteral,
  stringLiteral,
  type InfixOp,
  type Located,
  type Piece,
} from '../expr-builder.ts';
import {
  ArrayKw,
  LBracket,
  RBracket,
  And,
  Between,
  Asymmetric,
  Symmetric,
  Collate,
  Comma,
  Concat,
  Arrow,
  ArrowText,
  HashArrow,
  HashMinus,
  HashArrowText,
  AtGt,
  LtAt,
  Distinct,
  DoubleColon,
  Eq,
  False,
  From,
  Gt,
  GtEq,
  Ident,
  identName,
  ILike,
  In,
  Is,
  IsNull,
  isWordText,
  Like,
  LParen,
  AnyToken,
  Lt,
  LtEq,
  Minus,
  Not,
  NotEq,
  NotNull,
  Null,
  NumberLit,
  Or,
  OtherReserved,
  Percent,
  Caret,
  Plus,
  posOf,
  QuotedIdent,
  RParen,
  Select,
  Slash,
  Star,
  StringLit,
  stringValue,
  True,
  With,
} from '../lexer.ts';
import { measureTypeName } from '../type-name.ts';
import { INTERVAL_UNIT_WORDS, intervalLiteral } from '../select-adapter/time-syntax.ts';
import { checkCollation, escapeInfix } from '../select-adapter/like-escape-collate.ts';
import { OperandGrammar } from './operands.ts';
import { parseSelect } from '../select-adapter.ts';

function appendAll(target: Piece[], pieces: readonly Piece[]): void {
  for (const piece of pieces) target.push(piece);
}

/** What follows IS [NOT]: a value word, or DISTINCT FROM and the operand run after it. */
type IsRight =
  | { readonly kind: 'value'; readonly value: 'null' | 'true' | 'false' | 'unknown'; readonly token: IToken }
  | { readonly kind: 'distinct'; readonly operand: Piece[] };

/**
 * An infix operator spelled in words the lexer reads as identifiers, and its right operand:
 * `AT TIME ZONE zone`, or `ESCAPE e` after a LIKE's pattern (e any operand, PostgreSQL's
 * `ESCAPE a_expr`; whether ESCAPE may stand there depends on the run read before it).
 */
interface WordInfix {
  readonly kind: 'word';
  readonly word: IToken;
  readonly operand: Piece[];
}

export abstract class ExpressionGrammar extends OperandGrammar {
  // ── expressions ────────────────────────────────────────────────────────────────────────────────
  // An expression is parsed as a flat run (prefix* operand ((infix | between) prefix* operand |
  // postfix)*) and assembled by buildExpr, the code that also assembles the SELECT adapter's runs.
  // The alternatives of these hot rules are built once, as chevrotain advises; under tsx each
  // inline `{ ALT: () => … }` would also cost a defineProperty for the function's name.

  protected readonly expr = this.RULE('expr', (): Located => {
    const pieces: Piece[] = [];
    const first = this.SUBRULE(this.prefixedOperand);
    this.ACTION(() => appendAll(pieces, first));
    this.MANY({
      // Chevrotain's lookahead would enter on any identifier (the word operators' first token) and
      // could not tell `ESCAPE e` at the statement's end from `AT TIME ZONE`: the words decide.
      GATE: () => !tokenMatcher(this.LA(1), Ident) || this.wordInfixAhead(),
      DEF: () => {
        const more = this.OR(this.continuationAlts);
        this.ACTION(() => appendAll(pieces, Array.isArray(more) ? more : this.wordInfixPieces(pieces, more)));
      },
    });
    return this.ACTION(() => buildExpr(pieces));
  });

  /** Whether `ESCAPE`, `AT TIME ZONE` or `SIMILAR TO` comes next (no keywords to the lexer). */
  private wordInfixAhead(): boolean {
    return (
      isWordText(this.LA(1), 'escape') ||
      this.similarToAhead() ||
      (isWordText(this.LA(1), 'at') && isWordText(this.LA(2), 'time') && isWordText(this.LA(3), 'zone'))
    );
  }

  private similarToAhead(): boolean {
    return isWordText(this.LA(1), 'similar') && isWordText(this.LA(2), 'to');
  }

  /** The pieces a word operator adds to the run `pieces` read before it. */
  private wordInfixPieces(pieces: readonly Piece[], more: WordInfix): Piece[] {
    // s LIKE p ESCAPE e, checked and built as in a SELECT (select-adapter/like-escape-collate.ts)
    if (isWordText(more.word, 'escape')) return [escapeInfix(pieces, more.word), ...more.operand];
    const op = isWordText(more.word, 'similar') ? 'similar to' : 'at time zone';
    return [{ kind: 'infix', op }, ...more.operand];
  }

  private readonly continuationAlts: IOrAlt<Piece[] | WordInfix>[] = [
    {
      ALT: () => {
        const op = this.SUBRULE(this.infixOp);
        const operand = this.SUBRULE2(this.prefixedOperand);
        return this.ACTION((): Piece[] => [{ kind: 'infix', op }, ...operand]);
      },
    },
    { ALT: () => this.SUBRULE(this.postfixOp) },
    {
      // x AT TIME ZONE zone, s LIKE p ESCAPE e, s SIMILAR TO p: one alternative, so that lookahead
      // never has to tell them apart (their first tokens are all identifiers; the GATE and words
      // decide)
      GATE: () => this.wordInfixAhead(),
      ALT: () => {
        const word = this.CONSUME(Ident);
        this.OPTION({
          MAX_LOOKAHEAD: 1,
          GATE: () => isWordText(word, 'at'),
          DEF: () => {
            this.CONSUME2(Ident);
            this.CONSUME3(Ident);
          },
        });
        this.OPTION2({
          MAX_LOOKAHEAD: 1,
          GATE: () => isWordText(word, 'similar'),
          DEF: () => this.CONSUME(OtherReserved),
        });
        const operand = this.SUBRULE3(this.prefixedOperand);
        return { kind: 'word', word, operand };
      },
    },
  ];

  /** A BETWEEN bound: only operators binding tighter than BETWEEN (arithmetic, ||, ::). */
  protected readonly boundExpr = this.RULE('boundExpr', (): Located => {
    const pieces: Piece[] = [];
    const first = this.SUBRULE(this.signedOperand);
    this.ACTION(() => appendAll(pieces, first));
    this.MANY(() => {
      const more = this.OR(this.boundContinuationAlts);
      this.ACTION(() => appendAll(pieces, more));
    });
    return this.ACTION(() => buildExpr(pieces));
  });

  private readonly boundContinuationAlts: IOrAlt<Piece[]>[] = [
    {
      ALT: () => {
        const op = this.SUBRULE(this.arithmeticOp);
        const operand = this.SUBRULE2(this.signedOperand);
        return this.ACTION((): Piece[] => [{ kind: 'infix', op }, ...operand]);
      },
    },
    {
      ALT: () => {
        this.CONSUME(DoubleColon);
        const type = this.SUBRULE(this.typeName);
        return this.ACTION((): Piece[] => [{ kind: 'postfix', op: { kind: 'cast', type } }]);
      },
    },
  ];

  private readonly prefixedOperand = this.RULE('prefixedOperand', (): Piece[] => {
    const run: Piece[] = [];
    this.MANY(() => {
      const piece = this.OR(this.prefixAlts);
      this.ACTION(() => run.push(piece));
    });
    const operand = this.SUBRULE(this.operand);
    this.ACTION(() => run.push({ kind: 'operand', expr: operand.expr, start: operand.start }));
    return run;
  });

  private readonly prefixAlts: IOrAlt<Piece>[] = [
    { ALT: () => this.prefix(this.CONSUME(Minus), '-') },
    { ALT: () => this.prefix(this.CONSUME(Plus), '+') },
    { ALT: () => this.prefix(this.CONSUME(Not), 'not') },
  ];

  private readonly signedOperand = this.RULE('signedOperand', (): Piece[] => {
    const run: Piece[] = [];
    this.MANY(() => {
      const piece = this.OR(this.signAlts);
      this.ACTION(() => run.push(piece));
    });
    const operand = this.SUBRULE(this.operand);
    this.ACTION(() => run.push({ kind: 'operand', expr: operand.expr, start: operand.start }));
    return run;
  });

  private readonly signAlts: IOrAlt<Piece>[] = [
    { ALT: () => this.prefix(this.CONSUME(Minus), '-') },
    { ALT: () => this.prefix(this.CONSUME(Plus), '+') },
  ];

  private prefix(token: IToken, op: '-' | '+' | 'not'): Piece {
    return { kind: 'prefix', op, pos: posOf(token) };
  }

  private readonly arithmeticOp = this.RULE('arithmeticOp', (): InfixOp => this.OR(this.arithmeticAlts));

  private readonly arithmeticAlts: IOrAlt<InfixOp>[] = [
    this.tokenAlt(Concat, '||'),
    this.tokenAlt(ArrowText, '->>'),
    this.tokenAlt(Arrow, '->'),
    this.tokenAlt(HashArrowText, '#>>'),
    this.tokenAlt(HashArrow, '#>'),
    this.tokenAlt(HashMinus, '#-'),
    this.tokenAlt(AtGt, '@>'),
    this.tokenAlt(LtAt, '<@'),
    this.tokenAlt(Plus, '+'),
    this.tokenAlt(Minus, '-'),
    this.tokenAlt(Star, '*'),
    this.tokenAlt(Slash, '/'),
    this.tokenAlt(Percent, '%'),
    this.tokenAlt(Caret, '^'),
  ];

  private readonly infixOp = this.RULE('infixOp', (): InfixOp => this.OR(this.infixAlts));

  private readonly infixAlts: IOrAlt<InfixOp>[] = [
    { ALT: () => this.SUBRULE(this.arithmeticOp) },
    this.tokenAlt(Or, 'or'),
    this.tokenAlt(And, 'and'),
    this.tokenAlt(Eq, '='),
    this.tokenAlt(NotEq, '<>'),
    this.tokenAlt(Lt, '<'),
    this.tokenAlt(LtEq, '<='),
    this.tokenAlt(Gt, '>'),
    this.tokenAlt(GtEq, '>='),
    this.tokenAlt(Like, 'like'),
    this.tokenAlt(ILike, 'ilike'),
    {
      ALT: () => {
        this.CONSUME(Not);
        return this.OR2(this.negatedLikeAlts);
      },
    },
  ];

  private readonly negatedLikeAlts: IOrAlt<InfixOp>[] = [
    this.tokenAlt(Like, 'not like', 2),
    this.tokenAlt(ILike, 'not ilike', 2),
    {
      // NOT SIMILAR TO (SIMILAR is no keyword to the lexer, TO a reserved word it names by text)
      GATE: () => this.similarToAhead(),
      ALT: () => {
        this.CONSUME4(Ident);
        this.CONSUME2(OtherReserved);
        return 'not similar to';
      },
    },
  ];

  /**
   * IS …, ISNULL/NOTNULL, [NOT] IN (…), ::type, COLLATE, x[i], and [NOT] BETWEEN (which yields its
   * marker and upper bound).
   */
  private readonly postfixOp = this.RULE('postfixOp', (): Piece[] => this.OR(this.postfixAlts));

  private readonly postfixAlts: IOrAlt<Piece[]>[] = [
    {
      ALT: () => {
        this.CONSUME(Is);
        let negated = false;
        this.OPTION(() => {
          this.CONSUME(Not);
          negated = true;
        });
        const right = this.OR2(this.isRightAlts);
        return this.ACTION((): Piece[] =>
          right.kind === 'value'
            ? [
                {
                  kind: 'postfix',
                  op: { kind: 'is', value: right.value, negated, valuePos: posOf(right.token) },
                },
              ]
            : [
                { kind: 'infix', op: negated ? 'is not distinct from' : 'is distinct from' },
                ...right.operand,
              ],
        );
      },
    },
    {
      ALT: () => {
        let negated = false;
        this.OPTION2(() => {
          this.CONSUME2(Not);
          negated = true;
        });
        this.CONSUME(Between);
        let symmetric = false;
        this.OPTION4(() => {
          symmetric = this.OR4(this.symmetryAlts);
        });
        const low = this.SUBRULE(this.boundExpr);
        this.CONSUME(And);
        const high = this.SUBRULE2(this.boundExpr);
        return this.ACTION((): Piece[] => [
          { kind: 'between', low: low.expr, negated, ...(symmetric ? { symmetric: true as const } : {}) },
          { kind: 'operand', expr: high.expr, start: high.start },
        ]);
      },
    },
    {
      ALT: () => {
        let negated = false;
        this.OPTION3(() => {
          this.CONSUME3(Not);
          negated = true;
        });
        this.CONSUME(In);
        this.CONSUME(LParen);
        const list = this.OR3(this.inListAlts);
        this.CONSUME(RParen);
        return this.ACTION((): Piece[] => [{ kind: 'postfix', op: { kind: 'in', list, negated } }]);
      },
    },
    {
      ALT: () => {
        this.CONSUME(DoubleColon);
        const type = this.SUBRULE(this.typeName);
        return this.ACTION((): Piece[] => [{ kind: 'postfix', op: { kind: 'cast', type } }]);
      },
    },
    { ALT: () => this.nullTest(this.CONSUME(IsNull), false) },
    { ALT: () => this.nullTest(this.CONSUME(NotNull), true) },
    {
      // x COLLATE "C": accepted where it changes nothing, any other collation refused, as in a SELECT
      ALT: () => {
        const collate = this.CONSUME(Collate);
        const name = this.CONSUME2(Ident);
        const collation = this.ACTION(() => checkCollation(name));
        return [{ kind: 'postfix', op: { kind: 'collate', name: collation, pos: posOf(collate) } }];
      },
    },
    {
      // x[i]: slices (x[a:b]) are a syntax error here, NOT_SUPPORTED in a SELECT
      ALT: () => {
        const open = this.CONSUME(LBracket);
        const index = this.SUBRULE(this.expr);
        this.CONSUME(RBracket);
        return this.ACTION((): Piece[] => [
          { kind: 'postfix', op: { kind: 'subscript', index: index.expr, pos: posOf(open) } },
        ]);
      },
    },
  ];

  /** x ISNULL / x NOTNULL, PostgreSQL's spellings of IS [NOT] NULL. */
  private nullTest(word: IToken, negated: boolean): Piece[] {
    return [{ kind: 'postfix', op: { kind: 'is', value: 'null', negated, valuePos: posOf(word) } }];
  }

  private readonly symmetryAlts: IOrAlt<boolean>[] = [
    { ALT: () => (this.CONSUME(Symmetric), true) },
    { ALT: () => (this.CONSUME(Asymmetric), false) },
  ];

  /** After IS [NOT]: NULL, TRUE or FALSE (a postfix), or DISTINCT FROM and its right operand. */
  private readonly isRightAlts: IOrAlt<IsRight>[] = [
    { ALT: () => ({ kind: 'value', value: 'null', token: this.CONSUME(Null) }) },
    { ALT: () => ({ kind: 'value', value: 'true', token: this.CONSUME(True) }) },
    { ALT: () => ({ kind: 'value', value: 'false', token: this.CONSUME(False) }) },
    {
      // UNKNOWN is no keyword to the lexer
      GATE: () => isWordText(this.LA(1), 'unknown'),
      ALT: () => ({ kind: 'value', value: 'unknown', token: this.CONSUME(Ident) }),
    },
    {
      ALT: () => {
        this.CONSUME(Distinct);
        this.CONSUME(From);
        const operand = this.SUBRULE3(this.prefixedOperand);
        return { kind: 'distinct', operand };
      },
    },
  ];

  private readonly inListAlts: IOrAlt<Expr[]>[] = [
    {
      ALT: () => {
        const query = this.SUBRULE(this.subquery);
        return this.ACTION(() => [query.expr]);
      },
    },
    { ALT: () => this.SUBRULE(this.exprList) },
  ];

  /** `expr, expr, …` */
  private readonly exprList = this.RULE('exprList', (): Expr[] => {
    const items: Expr[] = [];
    const first = this.SUBRULE(this.expr);
    this.ACTION(() => items.push(first.expr));
    this.MANY(() => {
      this.CONSUME(Comma);
      const next = this.SUBRULE2(this.expr);
      this.ACTION(() => items.push(next.expr));
    });
    return items;
  });

  /**
   * SELECT/WITH where a value is expected, up to the `)` that closes it: a subquery, whose tokens go
   * to the SELECT adapter where the statement takes one (subqueriesAllowed), refused elsewhere.
   */
  protected readonly subquery = this.RULE('subquery', (): Located => {
    const first = this.OR(this.queryStartAlts);
    const tokens: IToken[] = [first];
    let depth = 0;
    this.MANY({
      GATE: () => depth > 0 || this.LA(1).tokenType !== RParen,
      DEF: () => {
        const token = this.CONSUME(AnyToken);
        if (token.tokenType === LParen) depth++;
        else if (token.tokenType === RParen) depth--;
        tokens.push(token);
      },
    });
    return this.ACTION(() => {
      if (!this.subqueriesAllowed) throw notSupported('subquery', posOf(first));
      const query = parseSelect(tokens, this.selectTokenLimit);
      return this.located({ kind: 'subquery', query, pos: posOf(first) });
    });
  });

  private readonly queryStartAlts: IOrAlt<IToken>[] = [
    { ALT: () => this.CONSUME(Select) },
    { ALT: () => this.CONSUME(With) },
  ];

  // One token of lookahead: the typed-literal alternative is chosen by its GATE, and deeper
  // lookahead would make chevrotain drop the bare-column path of nameExpr.
  private readonly operand = this.RULE('operand', (): Located => this.OR(this.operandAlts));

  private readonly operandAlts: OrMethodOpts<Located> = {
    MAX_LOOKAHEAD: 1,
    DEF: [
      {
        ALT: () => {
          const token = this.CONSUME(NumberLit);
          return this.ACTION(() => this.located(numberLiteral(token.image, posOf(token))));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(StringLit);
          return this.ACTION(() => this.located(stringLiteral(stringValue(token), posOf(token))));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(True);
          return this.ACTION(() => this.located(booleanLiteral(true, posOf(token))));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(False);
          return this.ACTION(() => this.located(booleanLiteral(false, posOf(token))));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(Null);
          return this.ACTION(() => this.located(nullLiteral(posOf(token))));
        },
      },
      { ALT: () => this.SUBRULE(this.niladicCall) },
      {
        // ARRAY[a, b, …], as in a SELECT (see select-adapter/expression-converter.ts)
        ALT: () => {
          const word = this.CONSUME(ArrayKw);
          this.CONSUME(LBracket);
          const items: Expr[] = [];
          this.MANY_SEP({
            SEP: Comma,
            DEF: () => {
              const item = this.SUBRULE5(this.expr);
              this.ACTION(() => items.push(item.expr));
            },
          });
          this.CONSUME(RBracket);
          return this.ACTION(() => this.located(functionCall(ARRAY_CONSTRUCTOR, items, {}, posOf(word))));
        },
      },
      { ALT: () => this.SUBRULE(this.caseExpr) },
      { ALT: () => this.SUBRULE(this.castExpr) },
      { ALT: () => this.SUBRULE(this.parenExpr) },
      {
        GATE: () => isWordText(this.LA(1), 'interval') && this.LA(2).tokenType === StringLit,
        ALT: () => {
          // INTERVAL '…' [unit], as in a SELECT (see select-adapter/time-syntax.ts)
          const token = this.CONSUME(Ident);
          const text = this.CONSUME3(StringLit);
          let unit: IToken | undefined;
          this.OPTION({
            GATE: () => INTERVAL_UNIT_WORDS.some((w) => isWordText(this.LA(1), w)),
            DEF: () => {
              unit = this.CONSUME2(Ident);
            },
          });
          return this.ACTION(() =>
            this.located(
              intervalLiteral(
                stringValue(text),
                posOf(text),
                posOf(token),
                unit === undefined ? undefined : identName(unit),
              ),
            ),
          );
        },
      },
      {
        // Typed literal: DATE '2024-01-01', TIMESTAMP '…' (a cast of the string).
        GATE: () => this.typedLiteralAhead(),
        ALT: () => {
          const type = this.SUBRULE(this.typeName);
          const token = this.CONSUME2(StringLit);
          return this.ACTION(() => {
            const operand = stringLiteral(stringValue(token), posOf(token));
            return this.located({ kind: 'cast', operand, type, pos: type.pos });
          });
        },
      },
      // x = ANY (array), x <> ALL (array), SOME for ANY (operands.ts)
      { GATE: () => this.quantifierAhead(), ALT: () => this.SUBRULE(this.quantified) },
      { ALT: () => this.SUBRULE(this.nameExpr) },
    ],
  };

  /**
   * Whether a date/time type name and a string literal come next. PostgreSQL takes any type name
   * there; node-sql-parser (the SELECT path) only date/time ones, so both paths take only those.
   */
  private typedLiteralAhead(): boolean {
    const length = measureTypeName((k) => this.LA(k));
    if (length === 0 || this.LA(length + 1).tokenType !== StringLit) return false;
    const word = this.LA(1).image.toLowerCase();
    return (
      this.LA(1).tokenType !== QuotedIdent && ['date', 'time', 'timestamp', 'timestamptz'].includes(word)
    );
  }
}
