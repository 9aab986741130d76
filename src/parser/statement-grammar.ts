// The chevrotain grammar for Sluice's statements (DDL, SHOW, EXPLAIN, INSERT/UPDATE/DELETE) and the
// expressions inside DML. SELECT bodies are handed, as tokens, to the node-sql-parser adapter.
import {
  EarlyExitException,
  EmbeddedActionsParser,
  EOF,
  NoViableAltException,
  type IOrAlt,
  type IToken,
  type OrMethodOpts,
  type TokenType,
} from 'chevrotain';
import type {
  ColumnDef,
  ConnectorClause,
  ConnectorOption,
  Expr,
  Pos,
  SelectStmt,
  Statement,
  TypeName,
  UniqueClause,
  ValuesItem,
} from './ast.ts';
import { notSupported, parseError, SluiceError } from '../common/errors.ts';
import {
  booleanLiteral,
  buildExpr,
  functionCall,
  nullLiteral,
  numberLiteral,
  stringLiteral,
  type InfixOp,
  type Located,
  type Piece,
} from './expr-builder.ts';
import {
  All,
  allTokenTypes,
  And,
  AnyToken,
  As,
  Between,
  Cascade,
  Case,
  Cast,
  Check,
  Collate,
  Comma,
  Concat,
  Conflict,
  Constraint,
  Create,
  CurrentDate,
  CurrentTime,
  CurrentTimestamp,
  Dataflow,
  Default,
  Delete,
  Distinct,
  Dot,
  DoubleColon,
  Drop,
  Else,
  End,
  endPosOf,
  Eq,
  Exists,
  Explain,
  False,
  Filter,
  For,
  Foreign,
  From,
  Gt,
  GtEq,
  Ident,
  identName,
  If,
  ILike,
  In,
  Insert,
  Into,
  Is,
  isWordText,
  Key,
  LBracket,
  Like,
  LocalTime,
  LocalTimestamp,
  LParen,
  Lt,
  LtEq,
  Materialized,
  Minus,
  Not,
  NotEq,
  Null,
  NumberLit,
  On,
  Or,
  OtherOp,
  Over,
  Percent,
  Plus,
  posOf,
  Primary,
  QuotedIdent,
  References,
  Restrict,
  Returning,
  RParen,
  Select,
  SetKw,
  Show,
  Sink,
  Sinks,
  Slash,
  Source,
  Sources,
  Star,
  StringLit,
  stringValue,
  Table,
  Tables,
  Then,
  True,
  Unique,
  Update,
  Using,
  Values,
  View,
  Views,
  When,
  Where,
  With,
} from './lexer.ts';
import { parseSelect } from './select-adapter.ts';
import { buildTypeName, measureTypeName } from './type-name.ts';

interface TableElement {
  readonly column?: ColumnDef;
  readonly primaryKey?: readonly string[];
  readonly unique?: UniqueClause;
  readonly pos: Pos;
}

interface SelectBody {
  readonly query: SelectStmt;
  readonly text: string;
}

interface CallRest {
  readonly kind: 'call';
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  readonly star: boolean;
}

/** What follows a name in an expression. */
type NameRest =
  CallRest | { readonly kind: 'qualified'; readonly name: IToken } | { readonly kind: 'column' };

function appendAll(target: Piece[], pieces: readonly Piece[]): void {
  for (const piece of pieces) target.push(piece);
}

interface NameRef {
  readonly name: string;
  readonly pos: Pos;
}

/** The columns, primary key and UNIQUE constraints of a CREATE TABLE / CREATE SOURCE element list. */
function columnsAndKey(
  tableName: string,
  elements: readonly TableElement[],
): { columns: ColumnDef[]; primaryKey?: readonly string[]; unique?: UniqueClause[] } {
  const columns: ColumnDef[] = [];
  const unique: UniqueClause[] = [];
  let primaryKey: readonly string[] | undefined;
  for (const element of elements) {
    if (element.column !== undefined) columns.push(element.column);
    if (element.unique !== undefined) unique.push(element.unique);
    if (element.primaryKey !== undefined) {
      if (primaryKey !== undefined) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `multiple primary keys for table "${tableName}" are not allowed`,
          { position: element.pos },
        );
      }
      primaryKey = element.primaryKey;
    }
  }
  return {
    columns,
    ...(primaryKey !== undefined ? { primaryKey } : {}),
    ...(unique.length > 0 ? { unique } : {}),
  };
}

class StatementParser extends EmbeddedActionsParser {
  /** The full submitted text and the current statement's text and position, set per statement. */
  private source = '';
  private statementText = '';
  private statementPos: Pos = { line: 1, column: 1 };
  /** The table whose columns are being parsed (for messages). */
  private tableName = '';

  constructor() {
    super(allTokenTypes, { maxLookahead: 3 });
    this.performSelfAnalysis();
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

  /** Parses one statement's tokens (no `;`). Throws SluiceError. */
  /** Tokens a SELECT body may hand the SQL library (SqlLimits.maxSelectTokens), set per statement. */
  private selectTokenLimit = Infinity;

  parseStatement(tokens: IToken[], source: string, selectTokenLimit = Infinity): Statement {
    this.selectTokenLimit = selectTokenLimit;
    const first = tokens[0]!;
    const last = tokens[tokens.length - 1]!;
    this.source = source;
    this.statementText = source.slice(first.startOffset, (last.endOffset ?? last.startOffset) + 1);
    this.statementPos = posOf(first);
    this.callNames.length = 0;
    this.input = tokens;
    const statement = this.statement();
    const error = this.errors[0];
    if (error !== undefined) {
      const token = error.token;
      if (token.tokenType === EOF) throw parseError('syntax error at end of input', endPosOf(last));
      if (token.tokenType === OtherOp) throw notSupported(`operator ${token.image}`, posOf(token));
      if (isWordText(token, 'isnull') || isWordText(token, 'notnull')) {
        throw notSupported(token.image.toUpperCase(), posOf(token), 'write IS NULL or IS NOT NULL');
      }
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
      { ALT: () => this.SUBRULE(this.explainStatement) },
      { ALT: () => this.SUBRULE(this.insertStatement) },
      { ALT: () => this.SUBRULE(this.updateStatement) },
      { ALT: () => this.SUBRULE(this.deleteStatement) },
      {
        ALT: () => {
          const body = this.SUBRULE(this.selectBody);
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

  private readonly createStatement = this.RULE('createStatement', (): Statement => {
    this.CONSUME(Create);
    return this.OR([
      { ALT: () => this.SUBRULE(this.createTable) },
      { ALT: () => this.SUBRULE(this.createView) },
      { ALT: () => this.SUBRULE(this.createSource) },
      { ALT: () => this.SUBRULE(this.createSink) },
      {
        ALT: () => {
          const view = this.CONSUME(View);
          return this.ACTION(() => {
            throw notSupported('CREATE VIEW', posOf(view), 'use CREATE MATERIALIZED VIEW');
          });
        },
      },
    ]);
  });

  private readonly createTable = this.RULE('createTable', (): Statement => {
    this.CONSUME(Table);
    const ifNotExists = this.SUBRULE(this.ifNotExists);
    const name = this.SUBRULE(this.objectName);
    const elements = this.SUBRULE(this.tableElements, { ARGS: [name.name] });
    return this.ACTION((): Statement => ({
      kind: 'createTable',
      name: name.name,
      ifNotExists,
      ...columnsAndKey(name.name, elements),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  /** `(column, ..., [PRIMARY KEY (...)])` of CREATE TABLE and CREATE SOURCE. */
  private readonly tableElements = this.RULE('tableElements', (tableName: string): TableElement[] => {
    this.ACTION(() => {
      this.tableName = tableName;
    });
    this.CONSUME(LParen);
    const elements: TableElement[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: Comma, DEF: () => elements.push(this.SUBRULE(this.tableElement)) });
    this.CONSUME(RParen);
    return elements;
  });

  private readonly createSource = this.RULE('createSource', (): Statement => {
    this.CONSUME(Source);
    const ifNotExists = this.SUBRULE(this.ifNotExists);
    const name = this.SUBRULE(this.objectName);
    const elements = this.SUBRULE(this.tableElements, { ARGS: [name.name] });
    this.CONSUME(From);
    const connector = this.SUBRULE(this.connectorClause);
    return this.ACTION((): Statement => ({
      kind: 'createSource',
      name: name.name,
      ifNotExists,
      ...columnsAndKey(name.name, elements),
      connector,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly createSink = this.RULE('createSink', (): Statement => {
    this.CONSUME(Sink);
    const ifNotExists = this.SUBRULE(this.ifNotExists);
    const name = this.SUBRULE(this.objectName);
    this.CONSUME(From);
    const from = this.SUBRULE2(this.objectName);
    this.CONSUME(Into);
    const connector = this.SUBRULE(this.connectorClause);
    return this.ACTION((): Statement => ({
      kind: 'createSink',
      name: name.name,
      ifNotExists,
      from: from.name,
      fromPos: from.pos,
      connector,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  /** `KAFKA (name value, ...)`: values are taken as written; the planner validates them. */
  private readonly connectorClause = this.RULE('connectorClause', (): ConnectorClause => {
    const connector = this.CONSUME(Ident);
    this.CONSUME(LParen);
    const options: ConnectorOption[] = [];
    this.MANY_SEP({ SEP: Comma, DEF: () => options.push(this.SUBRULE(this.connectorOption)) });
    this.CONSUME(RParen);
    return this.ACTION(() => ({ connector: identName(connector), pos: posOf(connector), options }));
  });

  private readonly connectorOption = this.RULE('connectorOption', (): ConnectorOption => {
    const name = this.CONSUME(Ident);
    let minus: IToken | undefined;
    const value = this.OR([
      { ALT: () => this.CONSUME(StringLit) },
      {
        ALT: () => {
          this.OPTION(() => {
            minus = this.CONSUME(Minus);
          });
          return this.CONSUME(NumberLit);
        },
      },
      { ALT: () => this.CONSUME2(Ident) },
    ]);
    return this.ACTION((): ConnectorOption => {
      const base = { name: identName(name), pos: posOf(name) };
      if (value.tokenType === StringLit) {
        return { ...base, valueKind: 'string', value: stringValue(value), valuePos: posOf(value) };
      }
      if (value.tokenType === NumberLit) {
        const text = `${minus !== undefined ? '-' : ''}${value.image}`;
        const valueKind = /^\d+$/.test(value.image) ? 'integer' : 'number';
        return { ...base, valueKind, value: text, valuePos: posOf(minus ?? value) };
      }
      return { ...base, valueKind: 'word', value: value.image, valuePos: posOf(value) };
    });
  });

  private readonly tableElement = this.RULE('tableElement', (): TableElement =>
    this.OR([
      {
        ALT: () => {
          const primary = this.CONSUME(Primary);
          this.CONSUME(Key);
          const names = this.SUBRULE(this.nameList);
          return this.ACTION(() => ({ primaryKey: names.map((n) => n.name), pos: posOf(primary) }));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(Unique);
          const names = this.SUBRULE2(this.nameList);
          return this.ACTION(() => {
            const pos = posOf(token);
            return { unique: { columns: names.map((n) => n.name), pos }, pos };
          });
        },
      },
      { ALT: () => this.SUBRULE(this.unsupportedConstraint) },
      {
        ALT: () => {
          const column = this.SUBRULE(this.columnDef);
          return this.ACTION(() => ({ column, pos: column.pos }));
        },
      },
    ]),
  );

  private readonly columnDef = this.RULE('columnDef', (): ColumnDef => {
    const nameToken = this.CONSUME(Ident);
    const type = this.SUBRULE(this.typeName);
    let notNull = false;
    let nullable = false;
    let primaryKey = false;
    let unique: Pos | undefined;
    let defaultValue: { expr: Expr; text: string } | undefined;
    this.MANY(() =>
      this.OR([
        {
          ALT: () => {
            this.CONSUME(Not);
            this.CONSUME(Null);
            notNull = true;
          },
        },
        {
          ALT: () => {
            this.CONSUME2(Null);
            nullable = true;
          },
        },
        {
          ALT: () => {
            this.CONSUME(Primary);
            this.CONSUME(Key);
            primaryKey = true;
          },
        },
        {
          ALT: () => {
            const token = this.CONSUME(Unique);
            this.ACTION(() => {
              unique ??= posOf(token);
            });
          },
        },
        {
          // PostgreSQL's DEFAULT takes a b_expr: no AND/OR/NOT/IS/LIKE/IN/BETWEEN unparenthesised,
          // so `DEFAULT 0 NOT NULL` reads as a default and a constraint.
          ALT: () => {
            const token = this.CONSUME(Default);
            let first: IToken | undefined;
            this.ACTION(() => {
              first = this.LA(1);
            });
            const value = this.SUBRULE(this.boundExpr);
            this.ACTION(() => {
              if (defaultValue !== undefined) {
                throw parseError(
                  `multiple default values specified for column "${identName(nameToken)}" of table "${this.tableName}"`,
                  posOf(token),
                );
              }
              const last = this.LA(0);
              const start = (first as IToken).startOffset;
              const text = this.source.slice(start, (last.endOffset ?? last.startOffset) + 1);
              defaultValue = { expr: value.expr, text };
            });
          },
        },
        { ALT: () => this.SUBRULE(this.unsupportedConstraint) },
      ]),
    );
    return this.ACTION(() => {
      const name = identName(nameToken);
      if (notNull && nullable) {
        throw parseError(
          `conflicting NULL/NOT NULL declarations for column "${name}" of table "${this.tableName}"`,
          posOf(nameToken),
        );
      }
      return {
        name,
        type,
        notNull,
        primaryKey,
        ...(unique !== undefined ? { unique } : {}),
        ...(defaultValue !== undefined ? { default: defaultValue } : {}),
        pos: posOf(nameToken),
      };
    });
  });

  /** Constraints PostgreSQL accepts that Sluice does not keep: rejected by name. */
  private readonly unsupportedConstraint = this.RULE('unsupportedConstraint', (): never => {
    const found = this.OR([
      { ALT: () => [this.CONSUME(Constraint), 'named CONSTRAINT'] as const },
      { ALT: () => [this.CONSUME(Check), 'CHECK constraint'] as const },
      { ALT: () => [this.CONSUME(Foreign), 'FOREIGN KEY constraint'] as const },
      { ALT: () => [this.CONSUME(References), 'REFERENCES constraint'] as const },
      { ALT: () => [this.CONSUME(Collate), 'COLLATE'] as const },
    ]);
    return this.ACTION(() => {
      throw notSupported(found[1], posOf(found[0]));
    });
  });

  private readonly createView = this.RULE('createView', (): Statement => {
    this.CONSUME(Materialized);
    this.CONSUME(View);
    const ifNotExists = this.SUBRULE(this.ifNotExists);
    const name = this.SUBRULE(this.objectName);
    let columnNames: NameRef[] | undefined;
    this.OPTION(() => {
      columnNames = this.SUBRULE(this.nameList);
    });
    this.CONSUME(As);
    const body = this.SUBRULE(this.selectBody);
    return this.ACTION((): Statement => ({
      kind: 'createView',
      name: name.name,
      ifNotExists,
      ...(columnNames !== undefined ? { columnNames: columnNames.map((n) => n.name) } : {}),
      query: body.query,
      queryText: body.text,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly dropStatement = this.RULE('dropStatement', (): Statement => {
    this.CONSUME(Drop);
    const objectKind = this.OR([
      {
        ALT: () => {
          this.CONSUME(Table);
          return 'table' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Materialized);
          this.CONSUME(View);
          return 'view' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME2(View);
          return 'view' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Source);
          return 'source' as const;
        },
      },
      {
        ALT: () => {
          this.CONSUME(Sink);
          return 'sink' as const;
        },
      },
    ]);
    let ifExists = false;
    this.OPTION(() => {
      this.CONSUME(If);
      this.CONSUME(Exists);
      ifExists = true;
    });
    const name = this.SUBRULE(this.objectName);
    this.OPTION2(() => {
      const comma = this.CONSUME(Comma);
      this.ACTION(() => {
        throw notSupported('dropping several objects in one statement', posOf(comma));
      });
    });
    let cascade = false;
    this.OPTION3(() =>
      this.OR2([
        {
          ALT: () => {
            this.CONSUME(Cascade);
            cascade = true;
          },
        },
        { ALT: () => this.CONSUME(Restrict) },
      ]),
    );
    return this.ACTION((): Statement => ({
      kind: 'drop',
      objectKind,
      name: name.name,
      ifExists,
      cascade,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

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
    ]);
    return this.ACTION((): Statement => ({
      kind: 'show',
      objectKind,
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
    return this.ACTION((): Statement => ({
      kind: 'explain',
      dataflow,
      query: body.query,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly insertStatement = this.RULE('insertStatement', (): Statement => {
    this.CONSUME(Insert);
    this.CONSUME(Into);
    const table = this.SUBRULE(this.objectName);
    let columns: NameRef[] | undefined;
    this.OPTION(() => {
      columns = this.SUBRULE(this.nameList);
    });
    const rows: ValuesItem[][] = [];
    let defaultValues = false;
    this.OR([
      {
        ALT: () => {
          this.CONSUME(Values);
          this.AT_LEAST_ONE_SEP({ SEP: Comma, DEF: () => rows.push(this.SUBRULE(this.valuesRow)) });
        },
      },
      {
        ALT: () => {
          const token = this.OR2([{ ALT: () => this.CONSUME(Select) }, { ALT: () => this.CONSUME(With) }]);
          this.ACTION(() => {
            throw notSupported('INSERT ... SELECT', posOf(token));
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
    this.SUBRULE(this.noReturning);
    return this.ACTION((): Statement => ({
      kind: 'insert',
      table: table.name,
      ...(columns !== undefined
        ? { columns: columns.map((c) => c.name) }
        : defaultValues
          ? { columns: [] }
          : {}),
      rows,
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

  private readonly updateStatement = this.RULE('updateStatement', (): Statement => {
    this.CONSUME(Update);
    const table = this.SUBRULE(this.objectName);
    this.CONSUME(SetKw);
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
    this.OPTION(() => {
      const from = this.CONSUME(From);
      this.ACTION(() => {
        throw notSupported('UPDATE ... FROM', posOf(from));
      });
    });
    const where = this.SUBRULE(this.optionalWhere);
    this.SUBRULE(this.noReturning);
    return this.ACTION((): Statement => ({
      kind: 'update',
      table: table.name,
      assignments,
      ...(where !== undefined ? { where } : {}),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly deleteStatement = this.RULE('deleteStatement', (): Statement => {
    this.CONSUME(Delete);
    this.CONSUME(From);
    const table = this.SUBRULE(this.objectName);
    this.OPTION(() => {
      const using = this.CONSUME(Using);
      this.ACTION(() => {
        throw notSupported('DELETE ... USING', posOf(using));
      });
    });
    const where = this.SUBRULE(this.optionalWhere);
    this.SUBRULE(this.noReturning);
    return this.ACTION((): Statement => ({
      kind: 'delete',
      table: table.name,
      ...(where !== undefined ? { where } : {}),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  private readonly optionalWhere = this.RULE('optionalWhere', (): Expr | undefined => {
    let where: Located | undefined;
    this.OPTION(() => {
      this.CONSUME(Where);
      where = this.SUBRULE(this.expr);
    });
    return this.ACTION(() => where?.expr);
  });

  private readonly noReturning = this.RULE('noReturning', (): void => {
    this.OPTION(() => {
      const token = this.CONSUME(Returning);
      this.ACTION(() => {
        throw notSupported('RETURNING', posOf(token));
      });
    });
  });

  /** A query: every token to the end of the statement goes to the node-sql-parser adapter. */
  private readonly selectBody = this.RULE('selectBody', (): SelectBody => {
    const tokens: IToken[] = [];
    this.OR([
      { ALT: () => tokens.push(this.CONSUME(Select)) },
      { ALT: () => tokens.push(this.CONSUME(With)) },
      { ALT: () => tokens.push(this.CONSUME(LParen)) },
      {
        ALT: () => {
          const values = this.CONSUME(Values);
          this.ACTION(() => {
            throw notSupported('VALUES as a query', posOf(values));
          });
        },
      },
    ]);
    this.MANY(() => tokens.push(this.CONSUME(AnyToken)));
    return this.ACTION(() => {
      const first = tokens[0]!;
      const last = tokens[tokens.length - 1]!;
      return {
        query: parseSelect(tokens, this.selectTokenLimit),
        text: this.source.slice(first.startOffset, (last.endOffset ?? last.startOffset) + 1),
      };
    });
  });

  // ── names and types ────────────────────────────────────────────────────────────────────────────

  private readonly ifNotExists = this.RULE('ifNotExists', (): boolean => {
    let present = false;
    this.OPTION(() => {
      this.CONSUME(If);
      this.CONSUME(Not);
      this.CONSUME(Exists);
      present = true;
    });
    return present;
  });

  private readonly objectName = this.RULE('objectName', (): NameRef => {
    const first = this.CONSUME(Ident);
    this.OPTION(() => {
      this.CONSUME(Dot);
      this.ACTION(() => {
        throw notSupported('schema-qualified name', posOf(first));
      });
    });
    return this.ACTION(() => ({ name: identName(first), pos: posOf(first) }));
  });

  /** `( name, ... )` */
  private readonly nameList = this.RULE('nameList', (): NameRef[] => {
    const names: NameRef[] = [];
    this.CONSUME(LParen);
    this.AT_LEAST_ONE_SEP({
      SEP: Comma,
      DEF: () => {
        const token = this.CONSUME(Ident);
        this.ACTION(() => names.push({ name: identName(token), pos: posOf(token) }));
      },
    });
    this.CONSUME(RParen);
    return names;
  });

  /** A type name; its extent is decided by the shared token-level reader (see type-name.ts). */
  private readonly typeName = this.RULE('typeName', (): TypeName => {
    let remaining = 0;
    this.ACTION(() => {
      remaining = measureTypeName((k) => this.LA(k)) - 1;
    });
    const tokens: IToken[] = [this.CONSUME(Ident)];
    this.MANY({
      GATE: () => remaining > 0,
      DEF: () => {
        tokens.push(this.CONSUME(AnyToken));
        remaining--;
      },
    });
    return this.ACTION(() => {
      const next = this.LA(1);
      if (next.tokenType === LBracket) throw notSupported('array type', posOf(next));
      return buildTypeName(tokens);
    });
  });

  // ── expressions ────────────────────────────────────────────────────────────────────────────────
  // An expression is parsed as a flat run (prefix* operand ((infix | between) prefix* operand |
  // postfix)*) and assembled by buildExpr, the code that also assembles the SELECT adapter's runs.
  // The alternatives of these hot rules are built once, as chevrotain advises; under tsx each
  // inline `{ ALT: () => … }` would also cost a defineProperty for the function's name.

  private readonly expr = this.RULE('expr', (): Located => {
    const pieces: Piece[] = [];
    const first = this.SUBRULE(this.prefixedOperand);
    this.ACTION(() => appendAll(pieces, first));
    this.MANY(() => {
      const more = this.OR(this.continuationAlts);
      this.ACTION(() => appendAll(pieces, more));
    });
    return this.ACTION(() => buildExpr(pieces));
  });

  private readonly continuationAlts: IOrAlt<Piece[]>[] = [
    {
      ALT: () => {
        const op = this.SUBRULE(this.infixOp);
        const operand = this.SUBRULE2(this.prefixedOperand);
        return this.ACTION((): Piece[] => [{ kind: 'infix', op }, ...operand]);
      },
    },
    { ALT: () => this.SUBRULE(this.postfixOp) },
  ];

  /** A BETWEEN bound: only operators binding tighter than BETWEEN (arithmetic, ||, ::). */
  private readonly boundExpr = this.RULE('boundExpr', (): Located => {
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

  /** An alternative consuming one token of `type` and yielding `value`. */
  private tokenAlt<T>(type: TokenType, value: T, occurrence = 0): IOrAlt<T> {
    return {
      ALT: () => {
        if (occurrence === 0) this.CONSUME(type);
        else this.CONSUME2(type);
        return value;
      },
    };
  }

  private readonly arithmeticOp = this.RULE('arithmeticOp', (): InfixOp => this.OR(this.arithmeticAlts));

  private readonly arithmeticAlts: IOrAlt<InfixOp>[] = [
    this.tokenAlt(Concat, '||'),
    this.tokenAlt(Plus, '+'),
    this.tokenAlt(Minus, '-'),
    this.tokenAlt(Star, '*'),
    this.tokenAlt(Slash, '/'),
    this.tokenAlt(Percent, '%'),
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
  ];

  /** IS …, [NOT] IN (…), ::type, and [NOT] BETWEEN (which yields its marker and upper bound). */
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
        const found = this.OR2(this.isValueAlts);
        return this.ACTION((): Piece[] => [
          { kind: 'postfix', op: { kind: 'is', value: found[1], negated, valuePos: posOf(found[0]) } },
        ]);
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
        const low = this.SUBRULE(this.boundExpr);
        this.CONSUME(And);
        const high = this.SUBRULE2(this.boundExpr);
        return this.ACTION((): Piece[] => [
          { kind: 'between', low: low.expr, negated },
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
  ];

  private readonly isValueAlts: IOrAlt<readonly [IToken, 'null' | 'true' | 'false']>[] = [
    { ALT: () => [this.CONSUME(Null), 'null'] as const },
    { ALT: () => [this.CONSUME(True), 'true'] as const },
    { ALT: () => [this.CONSUME(False), 'false'] as const },
    {
      ALT: () => {
        const distinct = this.CONSUME(Distinct);
        return this.ACTION(() => {
          throw notSupported('IS DISTINCT FROM', posOf(distinct));
        });
      },
    },
  ];

  private readonly inListAlts: IOrAlt<Expr[]>[] = [
    { ALT: () => this.SUBRULE(this.subquery) },
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

  /** SELECT/WITH where a value is expected: a subquery, which Sluice does not support. */
  private readonly subquery = this.RULE('subquery', (): never => {
    const token = this.OR(this.queryStartAlts);
    return this.ACTION(() => {
      throw notSupported('subquery', posOf(token));
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
      { ALT: () => this.SUBRULE(this.caseExpr) },
      { ALT: () => this.SUBRULE(this.castExpr) },
      { ALT: () => this.SUBRULE(this.parenExpr) },
      {
        GATE: () => isWordText(this.LA(1), 'interval') && this.LA(2).tokenType === StringLit,
        ALT: () => {
          const token = this.CONSUME(Ident);
          return this.ACTION(() => {
            throw notSupported('INTERVAL', posOf(token));
          });
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
      this.LA(1).tokenType !== QuotedIdent && (word === 'date' || word === 'time' || word === 'timestamp')
    );
  }

  private located(expr: Expr): Located {
    return { expr, start: expr.pos };
  }

  private readonly niladicCall = this.RULE('niladicCall', (): Located => {
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

  private readonly caseExpr = this.RULE('caseExpr', (): Located => {
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

  private readonly castExpr = this.RULE('castExpr', (): Located => {
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

  private readonly parenExpr = this.RULE('parenExpr', (): Located => {
    const open = this.CONSUME(LParen);
    const inner = this.OR(this.parenInnerAlts);
    this.OPTION(() => {
      this.CONSUME(Comma);
      this.ACTION(() => {
        throw notSupported('row constructor', posOf(open));
      });
    });
    this.CONSUME(RParen);
    return this.ACTION(() => ({ expr: inner.expr, start: posOf(open) }));
  });

  private readonly parenInnerAlts: IOrAlt<Located>[] = [
    { ALT: () => this.SUBRULE(this.subquery) },
    { ALT: () => this.SUBRULE(this.expr) },
  ];

  /** A column reference (`c`, `t.c`) or a function call (`f(...)`). */
  private readonly nameExpr = this.RULE('nameExpr', (): Located => {
    const first = this.CONSUME(Ident);
    this.ACTION(() => this.callNames.push(first));
    const rest = this.OR(this.nameRestAlts);
    return this.ACTION(() => {
      this.callNames.pop();
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
  private readonly callNames: IToken[] = [];

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

  /** `( [*] | [DISTINCT|ALL] args )` after a function name; SUBSTRING also takes FROM/FOR. */
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
    { ALT: () => this.SUBRULE(this.subquery) },
    {
      ALT: () => {
        let distinct = false;
        this.OPTION4(() => {
          distinct = this.OR2(this.quantifierAlts);
        });
        const first = this.SUBRULE(this.expr);
        const more = this.OR3(this.moreArgumentAlts);
        return this.ACTION(() => ({ distinct, args: [first.expr, ...more] }));
      },
    },
  ];

  private readonly quantifierAlts: IOrAlt<boolean>[] = [
    this.tokenAlt(Distinct, true),
    this.tokenAlt(All, false),
  ];

  private readonly moreArgumentAlts: IOrAlt<Expr[]>[] = [
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
      ALT: () => {
        const from = this.CONSUME2(From);
        return this.ACTION(() => {
          const name = this.callNames[this.callNames.length - 1];
          if (name !== undefined && identName(name) === 'extract') throw notSupported('EXTRACT', posOf(name));
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

  private callNameIs(lower: string): boolean {
    const name = this.callNames[this.callNames.length - 1];
    return name !== undefined && name.tokenType !== QuotedIdent && name.image.toLowerCase() === lower;
  }
}

/** Built once: chevrotain parsers are reusable and expensive to construct. */
export const statementParser = new StatementParser();
