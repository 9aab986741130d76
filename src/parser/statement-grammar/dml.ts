// DML: INSERT … VALUES, INSERT … SELECT, UPDATE and DELETE, with the forms Sluice refuses by name.
import type { IOrAlt, IToken } from 'chevrotain';
import type { DmlFrom, Expr, Pos, SelectItem, SelectStmt, Statement, ValuesItem } from '../ast.ts';
import { notSupported, parseError } from '../../common/errors.ts';
import type { Located } from '../expr-builder.ts';
import {
  AnyToken,
  As,
  Comma,
  Conflict,
  Default,
  Delete,
  Eq,
  From,
  Ident,
  identName,
  Insert,
  Into,
  isWordText,
  LParen,
  On,
  posOf,
  Returning,
  RParen,
  Select,
  SetKw,
  syntaxErrorAt,
  Update,
  Using,
  Values,
  Where,
  With,
} from '../lexer.ts';
import { dmlFromList } from '../dml-from.ts';
import { returningList, splitAtReturning } from '../dml-returning.ts';
import { parseSelect } from '../select-adapter.ts';
import { DdlGrammar } from './ddl.ts';
import type { NameRef } from './names.ts';

export abstract class DmlGrammar extends DdlGrammar {
  protected readonly insertStatement = this.RULE('insertStatement', (): Statement => {
    this.CONSUME(Insert);
    this.CONSUME(Into);
    const table = this.SUBRULE(this.objectName);
    let columns: NameRef[] | undefined;
    this.OPTION(() => {
      columns = this.SUBRULE(this.nameList);
    });
    const rows: ValuesItem[][] = [];
    let defaultValues = false;
    let query: SelectStmt | undefined;
    let returning: SelectItem[] | undefined;
    this.OR([
      {
        ALT: () => {
          this.CONSUME(Values);
          this.AT_LEAST_ONE_SEP({ SEP: Comma, DEF: () => rows.push(this.SUBRULE(this.valuesRow)) });
        },
      },
      {
        ALT: () => {
          // `INSERT … SELECT`: every token to the end of the statement is the query (as a SELECT
          // statement's are) up to a RETURNING at its level; ON CONFLICT is refused by name below.
          const tokens = [this.OR2([{ ALT: () => this.CONSUME(Select) }, { ALT: () => this.CONSUME(With) }])];
          this.MANY2(() => tokens.push(this.CONSUME(AnyToken)));
          this.ACTION(() => {
            refuseConflict(tokens);
            const split = splitAtReturning(tokens, this.selectTokenLimit);
            returning = split.returning;
            query = parseSelect(split.before, this.selectTokenLimit);
          });
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(Default);
          this.CONSUME2(Values);
          this.ACTION(() => {
            if (columns !== undefined) throw parseError('syntax error at or near "DEFAULT"', posOf(token));
            // One row, every column its default.
            defaultValues = true;
            rows.push([]);
          });
        },
      },
    ]);
    this.OPTION2(() => {
      const on = this.CONSUME(On);
      this.CONSUME(Conflict);
      this.ACTION(() => {
        throw notSupported('ON CONFLICT', posOf(on));
      });
    });
    const listed = this.SUBRULE(this.returningClause);
    return this.ACTION((): Statement => ({
      kind: 'insert',
      table: table.name,
      ...(columns !== undefined
        ? { columns: columns.map((c) => c.name) }
        : defaultValues
          ? { columns: [] }
          : {}),
      rows,
      ...(query !== undefined ? { query } : {}),
      ...returningOf(returning ?? listed),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly valuesRow = this.RULE('valuesRow', (): ValuesItem[] => {
    const values: ValuesItem[] = [];
    this.CONSUME(LParen);
    const first = this.SUBRULE(this.value);
    this.ACTION(() => values.push(first));
    this.MANY(() => {
      this.CONSUME(Comma);
      const next = this.SUBRULE2(this.value);
      this.ACTION(() => values.push(next));
    });
    this.CONSUME(RParen);
    return values;
  });

  /** One VALUES item: an expression, or DEFAULT (the column's default). */
  private readonly value = this.RULE('value', (): ValuesItem => this.OR(this.valueAlts));

  private readonly valueAlts: IOrAlt<ValuesItem>[] = [
    {
      ALT: () => {
        const token = this.CONSUME(Default);
        return this.ACTION((): ValuesItem => ({ kind: 'default', pos: posOf(token) }));
      },
    },
    {
      ALT: () => {
        const value = this.SUBRULE(this.expr);
        return this.ACTION(() => value.expr);
      },
    },
  ];

  protected readonly updateStatement = this.RULE('updateStatement', (): Statement => {
    this.CONSUME(Update);
    const table = this.SUBRULE(this.objectName);
    const alias = this.SUBRULE(this.targetAlias);
    this.CONSUME(SetKw);
    this.ACTION(() => {
      this.subqueriesAllowed = true;
    });
    const assignments: { column: string; value: Expr; pos: Pos }[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        const column = this.CONSUME(Ident);
        this.CONSUME(Eq);
        const value = this.SUBRULE(this.expr);
        this.ACTION(() =>
          assignments.push({ column: identName(column), value: value.expr, pos: posOf(column) }),
        );
      },
    });
    const { from, where, returning } = this.SUBRULE(this.fromAndWhere, { ARGS: ['UPDATE'] });
    return this.ACTION((): Statement => ({
      kind: 'update',
      table: table.name,
      ...(alias !== undefined ? { alias } : {}),
      assignments,
      ...(from !== undefined ? { from } : {}),
      ...(where !== undefined ? { where } : {}),
      ...returningOf(returning),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  protected readonly deleteStatement = this.RULE('deleteStatement', (): Statement => {
    this.CONSUME(Delete);
    this.CONSUME(From);
    const table = this.SUBRULE(this.objectName);
    const alias = this.SUBRULE(this.targetAlias);
    this.ACTION(() => {
      this.subqueriesAllowed = true;
    });
    const { from, where, returning } = this.SUBRULE(this.fromAndWhere, { ARGS: ['DELETE'] });
    return this.ACTION((): Statement => ({
      kind: 'delete',
      table: table.name,
      ...(alias !== undefined ? { alias } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(where !== undefined ? { where } : {}),
      ...returningOf(returning),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  /** `[AS] alias` after an UPDATE's or DELETE's table. */
  private readonly targetAlias = this.RULE('targetAlias', (): string | undefined => {
    let alias: IToken | undefined;
    // SET is a word a name may be, but after UPDATE's table it starts the SET list (as in PostgreSQL)
    this.OPTION({
      GATE: () => this.LA(1).tokenType !== SetKw,
      DEF: () => {
        this.OPTION2(() => this.CONSUME(As));
        alias = this.CONSUME(Ident);
      },
    });
    return this.ACTION(() => (alias === undefined ? undefined : identName(alias)));
  });

  /**
   * An UPDATE's `FROM …` or a DELETE's `USING …` with its WHERE: the tokens to the statement's end,
   * read as a query's FROM and WHERE (dml-from.ts) up to a RETURNING at their level; else
   * `[WHERE expr]`; then the RETURNING list, if any.
   */
  private readonly fromAndWhere = this.RULE('fromAndWhere', (statement: 'UPDATE' | 'DELETE' = 'UPDATE') => {
    let result: { from?: DmlFrom; where?: Expr; returning?: SelectItem[] } = {};
    this.OR([
      {
        ALT: () => {
          const word = this.OR2([{ ALT: () => this.CONSUME(From) }, { ALT: () => this.CONSUME(Using) }]);
          const rest: IToken[] = [];
          this.MANY(() => rest.push(this.CONSUME(AnyToken)));
          this.ACTION(() => {
            // UPDATE takes FROM, DELETE USING (PostgreSQL's words)
            if ((word.tokenType === From) !== (statement === 'UPDATE')) throw syntaxErrorAt(word);
            const split = splitAtReturning(rest, this.selectTokenLimit);
            const { from, where } = dmlFromList(word, split.before, this.selectTokenLimit);
            result = {
              from: { items: from, pos: posOf(word) },
              ...(where !== undefined ? { where } : {}),
              ...returningOf(split.returning),
            };
          });
        },
      },
      {
        ALT: () => {
          const where = this.SUBRULE(this.optionalWhere);
          const returning = this.SUBRULE(this.returningClause);
          this.ACTION(() => {
            result = { ...(where !== undefined ? { where } : {}), ...returningOf(returning) };
          });
        },
      },
    ]);
    return result as { from?: DmlFrom; where?: Expr; returning?: SelectItem[] };
  });

  private readonly optionalWhere = this.RULE('optionalWhere', (): Expr | undefined => {
    let where: Located | undefined;
    this.OPTION(() => {
      this.CONSUME(Where);
      where = this.SUBRULE(this.expr);
    });
    return this.ACTION(() => where?.expr);
  });

  /** `[RETURNING items]` at a statement's end: every token after the word is the list. */
  private readonly returningClause = this.RULE('returningClause', (): SelectItem[] | undefined => {
    let returning: SelectItem[] | undefined;
    this.OPTION(() => {
      const word = this.CONSUME(Returning);
      const rest: IToken[] = [];
      this.MANY(() => rest.push(this.CONSUME(AnyToken)));
      this.ACTION(() => {
        returning = returningList(word, rest, this.selectTokenLimit);
      });
    });
    return returning;
  });
}

/** A statement's `returning` field, present only with a list. */
function returningOf(returning: SelectItem[] | undefined): { returning?: SelectItem[] } {
  return returning === undefined ? {} : { returning };
}

/**
 * `INSERT … SELECT … ON CONFLICT`: refused by name, as after VALUES (the query would otherwise report
 * a syntax error at the word). Only at the query's own level (not in parentheses).
 */
function refuseConflict(tokens: readonly IToken[]): void {
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as IToken;
    if (t.tokenType === LParen) depth++;
    else if (t.tokenType === RParen) depth--;
    else if (depth === 0 && t.tokenType === On && isWordText(tokens[i + 1], 'conflict'))
      throw notSupported('ON CONFLICT', posOf(t));
  }
}
