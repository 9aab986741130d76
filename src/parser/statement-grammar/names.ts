// Names, type names and connector options: the small rules DDL, DML and expressions share.
import type { IToken } from 'chevrotain';
import type { ConnectorClause, ConnectorOption, Pos, TypeName } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import {
  AnyToken,
  Comma,
  Dot,
  Exists,
  Ident,
  identName,
  If,
  LParen,
  Minus,
  Not,
  NumberLit,
  posOf,
  RParen,
  StringLit,
  stringValue,
} from '../lexer.ts';
import { buildTypeName, measureTypeName } from '../type-name.ts';
import { GrammarBase } from './base.ts';

export interface NameRef {
  readonly name: string;
  readonly pos: Pos;
}

export abstract class NamesGrammar extends GrammarBase {
  // ── names and types ────────────────────────────────────────────────────────────────────────────

  protected readonly ifNotExists = this.RULE('ifNotExists', (): boolean => {
    let present = false;
    this.OPTION(() => {
      this.CONSUME(If);
      this.CONSUME(Not);
      this.CONSUME(Exists);
      present = true;
    });
    return present;
  });

  protected readonly objectName = this.RULE('objectName', (): NameRef => {
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
  protected readonly nameList = this.RULE('nameList', (): NameRef[] => {
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
  protected readonly typeName = this.RULE('typeName', (): TypeName => {
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
      return buildTypeName(tokens);
    });
  });

  /** `KAFKA (name value, ...)`: values are taken as written; the planner validates them. */
  protected readonly connectorClause = this.RULE('connectorClause', (): ConnectorClause => {
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
}
