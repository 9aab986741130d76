// DDL: CREATE TABLE / SOURCE / SINK / MATERIALIZED VIEW (column definitions and constraints) and DROP.
import type { IToken } from 'chevrotain';
import type { ColumnDef, Expr, Pos, Statement, TypeName, UniqueClause, WatermarkClause } from '../ast.ts';
import { notSupported, parseError, SluiceError } from '../../common/errors.ts';
import {
  Append,
  As,
  Cascade,
  Check,
  Collate,
  Comma,
  Constraint,
  Create,
  Default,
  Drop,
  Exists,
  For,
  Foreign,
  From,
  FunctionKw,
  Ident,
  identName,
  If,
  Into,
  Key,
  LParen,
  Materialized,
  Not,
  Null,
  Only,
  posOf,
  Primary,
  References,
  Restrict,
  RParen,
  Sink,
  Source,
  Table,
  Unique,
  View,
  Watermark,
} from '../lexer.ts';
import { FunctionGrammar } from './ddl-function.ts';
import type { NameRef } from './names.ts';

interface TableElement {
  readonly column?: ColumnDef;
  readonly primaryKey?: readonly string[];
  readonly unique?: UniqueClause;
  readonly watermark?: WatermarkClause;
  readonly pos: Pos;
}

/** The columns, primary key and UNIQUE constraints of a CREATE TABLE / CREATE SOURCE element list. */
function columnsAndKey(
  tableName: string,
  elements: readonly TableElement[],
): {
  columns: ColumnDef[];
  primaryKey?: readonly string[];
  unique?: UniqueClause[];
  watermark?: WatermarkClause;
} {
  const columns: ColumnDef[] = [];
  const unique: UniqueClause[] = [];
  let primaryKey: readonly string[] | undefined;
  let watermark: WatermarkClause | undefined;
  for (const element of elements) {
    if (element.column !== undefined) columns.push(element.column);
    if (element.watermark !== undefined) {
      // RisingWave allows one watermark per table: the time its rows are late against.
      if (watermark !== undefined) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `multiple watermarks for table "${tableName}" are not allowed`,
          {
            position: element.pos,
          },
        );
      }
      watermark = element.watermark;
    }
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
    ...(watermark !== undefined ? { watermark } : {}),
  };
}

export abstract class DdlGrammar extends FunctionGrammar {
  /** The table whose columns are being parsed (for messages). */
  private tableName = '';

  protected readonly createStatement = this.RULE('createStatement', (): Statement => {
    this.CONSUME(Create);
    return this.OR([
      { ALT: () => this.SUBRULE(this.createTable) },
      { ALT: () => this.SUBRULE(this.createView) },
      { ALT: () => this.SUBRULE(this.createSource) },
      { ALT: () => this.SUBRULE(this.createSink) },
      { ALT: () => this.SUBRULE(this.createFunction) },
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
    // RisingWave's spelling: the table takes inserts only (src/exec/engine-writes.ts enforces it).
    const appendOnly = this.OPTION(() => {
      this.CONSUME(Append);
      this.CONSUME(Only);
      return true;
    });
    return this.ACTION((): Statement => ({
      kind: 'createTable',
      name: name.name,
      ifNotExists,
      ...columnsAndKey(name.name, elements),
      ...(appendOnly === true ? { appendOnly: true as const } : {}),
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
      { ALT: () => this.SUBRULE(this.watermarkClause) },
      {
        ALT: () => {
          const column = this.SUBRULE(this.columnDef);
          return this.ACTION(() => ({ column, pos: column.pos }));
        },
      },
    ]),
  );

  /** `WATERMARK FOR column AS expr`: checked against the columns by the engine (table-watermark.ts). */
  private readonly watermarkClause = this.RULE('watermarkClause', (): TableElement => {
    const token = this.CONSUME(Watermark);
    this.CONSUME(For);
    const column = this.CONSUME(Ident);
    this.CONSUME(As);
    let first: IToken | undefined;
    this.ACTION(() => {
      first = this.LA(1);
    });
    const value = this.SUBRULE(this.boundExpr);
    return this.ACTION((): TableElement => {
      const last = this.LA(0);
      const text = this.source.slice((first as IToken).startOffset, (last.endOffset ?? last.startOffset) + 1);
      const pos = posOf(token);
      return {
        watermark: { column: identName(column), columnPos: posOf(column), expr: value.expr, text, pos },
        pos,
      };
    });
  });

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
      ...(body.emitOnWindowClose !== null ? { emitOnWindowClose: body.emitOnWindowClose } : {}),
      ...(body.allowedLateness !== null ? { allowedLateness: body.allowedLateness } : {}),
      pos: this.statementPos,
      text: this.statementText,
    }));
  });

  protected readonly dropStatement = this.RULE('dropStatement', (): Statement => {
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
      {
        ALT: () => {
          this.CONSUME(FunctionKw);
          return 'function' as const;
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
    // DROP FUNCTION f(int, text): the argument types, checked against the function's
    let argTypes: TypeName[] | undefined;
    this.OPTION4(() => {
      const paren = this.CONSUME(LParen);
      const types: TypeName[] = [];
      this.MANY_SEP({ SEP: Comma, DEF: () => types.push(this.SUBRULE(this.typeName)) });
      this.CONSUME(RParen);
      this.ACTION(() => {
        if (objectKind !== 'function') throw parseError('syntax error at or near "("', posOf(paren));
        argTypes = types;
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
      ...(argTypes !== undefined ? { argTypes } : {}),
      ifExists,
      cascade,
      pos: this.statementPos,
      text: this.statementText,
    }));
  });
}
