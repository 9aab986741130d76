// The operand layer of the SELECT adapter's expressions: the nodes of node-sql-parser's tree that
// are one operand of an operator run (literals, columns, CAST, EXTRACT, INTERVAL, ARRAY[…], row
// constructors, EXISTS), IN lists of constants and ORDER BY items, each read from our tokens with
// their values and positions. expression-converter.ts extends it with the operator runs.
import type { IToken } from 'chevrotain';
import type { Expr, OrderItem, Pos, SelectStmt, TypeName } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import {
  ARRAY_CONSTRUCTOR,
  ROW_CONSTRUCTOR,
  booleanLiteral,
  buildExpr,
  functionCall,
  nullLiteral,
  numberLiteral,
  stringLiteral,
  type Located,
  type Piece,
} from '../expr-builder.ts';
import {
  Comma,
  Dot,
  False,
  identName,
  isWordText,
  LBracket,
  RBracket,
  LParen,
  Minus,
  niladicTypes,
  Null,
  NumberLit,
  Plus,
  posOf,
  RParen,
  StringLit,
  stringValue,
  True,
} from '../lexer.ts';
import { buildTypeName, measureTypeName } from '../type-name.ts';
import { extractCall, intervalLiteral } from './time-syntax.ts';
import { type Node, isNode, child, list, text, present, callArguments } from './loose-ast.ts';
import type { AdapterToken } from './adapter-tokens.ts';
import { TokenCursor } from './token-cursor.ts';

/**
 * Operands and ORDER BY items of node-sql-parser's tree, converted to our AST with our tokens'
 * values and positions; expression-converter.ts extends it with operator runs, call-converter.ts
 * that with calls, from-converter.ts that with FROM, and the statement-level converter
 * (select-adapter.ts) extends that.
 */
export abstract class OperandConverter extends TokenCursor {
  constructor(
    tokens: readonly AdapterToken[],
    /** IN lists of constants node-sql-parser did not see (`(` index → `)` index). */
    protected readonly constantLists: ReadonlyMap<number, number>,
    /** Derived tables in FROM: the placeholder token standing for each, and its query. */
    protected readonly derived: ReadonlyMap<IToken, SelectStmt>,
  ) {
    super(tokens);
  }

  // Calls (functions, aggregates, window functions and what follows their parentheses) are read by
  // call-converter.ts, which extends this class's subclass.
  protected abstract functionCallNode(node: Node): Expr;
  protected abstract aggregateNode(node: Node): Expr;
  protected abstract windowCall(node: Node): Expr;
  protected abstract rejectCallSuffix(node: Node, pos: Pos): void;
  protected abstract caseNode(node: Node): Expr;
  /** One complete expression (expression-converter.ts). */
  protected abstract expression(node: unknown): Located;

  /** An `ORDER BY a, b DESC …` list of a window or an aggregate call; empty when there is none. */
  protected orderByList(node: Node | undefined): OrderItem[] {
    const orderBy: OrderItem[] = [];
    const orders = list(node, 'orderby');
    if (orders.length === 0) return orderBy;
    this.word('order');
    this.word('by');
    orders.forEach((item, i) => {
      if (i > 0) this.expect(Comma);
      orderBy.push(this.orderItem(item));
    });
    return orderBy;
  }

  protected orderItem(item: unknown): OrderItem {
    if (!isNode(item)) this.lost();
    const located = this.expression(item['expr']);
    let desc = false;
    if (this.optionalWord('desc')) desc = true;
    else this.optionalWord('asc');
    let nulls: 'first' | 'last' | undefined;
    if (this.optionalWord('nulls')) {
      if (this.optionalWord('first')) nulls = 'first';
      else {
        this.word('last');
        nulls = 'last';
      }
    }
    return { expr: located.expr, desc, ...(nulls !== undefined ? { nulls } : {}), pos: located.start };
  }

  /** Consumes the `-` and `+` signs before an operand, as prefix pieces. */
  protected signs(pieces: Piece[]): void {
    for (
      let token = this.peek();
      token?.tokenType === Minus || token?.tokenType === Plus;
      token = this.peek()
    ) {
      this.index++;
      pieces.push({ kind: 'prefix', op: token.tokenType === Minus ? '-' : '+', pos: posOf(token) });
    }
  }

  /** The constants of an IN list up to the `)` at `close`, read from our tokens alone. */
  protected constants(close: number): Expr[] {
    const items: Expr[] = [];
    while (this.index < close) {
      if (items.length > 0) this.expect(Comma);
      const pieces: Piece[] = [];
      this.signs(pieces);
      const token = this.peek()!;
      this.index++;
      const pos = posOf(token);
      const expr =
        token.tokenType === NumberLit
          ? numberLiteral(token.image, pos)
          : token.tokenType === StringLit
            ? stringLiteral(stringValue(token), pos)
            : token.tokenType === Null
              ? nullLiteral(pos)
              : booleanLiteral(token.tokenType === True, pos);
      pieces.push({ kind: 'operand', expr, start: pos });
      items.push(buildExpr(pieces).expr);
    }
    return items;
  }

  /**
   * The right side of IS / IS NOT: NULL, TRUE, FALSE or UNKNOWN (which node-sql-parser reads as a
   * column; IS DISTINCT FROM is an infix, see flatten).
   */
  protected isValue(right: unknown): 'null' | 'true' | 'false' | 'unknown' {
    if (isNode(right)) {
      if (right['type'] === 'null') return 'null';
      if (right['type'] === 'bool') return right['value'] === true ? 'true' : 'false';
      const next = this.peek();
      if (right['type'] === 'column_ref' && isWordText(next, 'unknown')) return 'unknown';
    }
    throw notSupported(`IS ${this.peek()?.image.toUpperCase() ?? ''}`, this.here());
  }

  /** A node that is a single operand (the cursor is at its first token, no wrapping parentheses). */
  protected operand(node: Node): Expr {
    const type = node['type'];
    switch (type) {
      case 'single_quote_string': {
        const token = this.expect(StringLit);
        return stringLiteral(stringValue(token), posOf(token));
      }
      case 'bool': {
        const token = this.expect(node['value'] === true ? True : False);
        return booleanLiteral(node['value'] === true, posOf(token));
      }
      case 'null':
        return nullLiteral(posOf(this.expect(Null)));
      case 'column_ref':
        return this.columnRef(node);
      case 'function':
        return this.functionCallNode(node);
      case 'aggr_func':
        return this.aggregateNode(node);
      case 'case':
        return this.caseNode(node);
      case 'cast': {
        const castToken = this.word('cast');
        this.expect(LParen);
        const operand = this.expression(node['expr']).expr;
        this.word('as');
        const castType = this.typeName();
        this.expect(RParen);
        return { kind: 'cast', operand, type: castType, pos: posOf(castToken) };
      }
      case 'date':
      case 'time':
      case 'timestamp': {
        // Typed literal: DATE '2024-01-01' is a cast of the string.
        const literalType = this.typeName();
        const token = this.expect(StringLit);
        const operand = stringLiteral(stringValue(token), posOf(token));
        return { kind: 'cast', operand, type: literalType, pos: literalType.pos };
      }
      case 'window_func':
        return this.windowCall(node);
      case 'interval': {
        const typeToken = this.word('interval');
        const token = this.expect(StringLit);
        const unit = text(node, 'unit');
        if (unit !== undefined && unit !== '') this.word(unit.toLowerCase());
        return intervalLiteral(stringValue(token), posOf(token), posOf(typeToken), unit);
      }
      case 'extract': {
        const word = this.word('extract');
        this.expect(LParen);
        const args = child(node, 'args') ?? this.lost();
        const fieldToken = this.peek();
        if (fieldToken === undefined) this.lost();
        this.index++;
        this.word('from');
        const source = child(args, 'source');
        let operand: Expr;
        if (text(args, 'cast_type') !== undefined && source?.['type'] === 'single_quote_string') {
          // EXTRACT(field FROM INTERVAL '…'): node-sql-parser keeps only the literal and its type
          operand = this.operand({ type: String(text(args, 'cast_type')).toLowerCase(), unit: '' });
        } else operand = this.expression(source).expr;
        this.expect(RParen);
        const field = fieldToken.tokenType === StringLit ? stringValue(fieldToken) : identName(fieldToken);
        return extractCall(field, posOf(fieldToken), operand, posOf(word));
      }
      case 'array':
        return this.arrayConstructor(node);
      default: {
        const token = this.peek();
        if (/^[eubnx]$/i.test(token?.image ?? '') && this.peek(1)?.tokenType === StringLit) {
          throw notSupported(`${token!.image.toUpperCase()}'...' string constant`, this.here());
        }
        throw notSupported(`the expression at "${token?.image ?? ''}"`, this.here());
      }
    }
  }

  /**
   * `(a, b, …)` (parentheses around it kept out), or after `ROW` at `word` its `(a, b, …)`: a row
   * constructor, which the expression builder expands in a comparison with a row (anywhere else the
   * binder refuses it).
   */
  protected rowConstructor(values: readonly unknown[], pieces: Piece[], word?: Pos): void {
    const open = this.peek();
    const count = word === undefined ? this.openParens() : (this.expect(LParen), 1);
    const items = values.map((item, i) => {
      if (i > 0) this.expect(Comma);
      return this.expression(item).expr;
    });
    this.closeParens(count);
    if (items.length === 0) throw notSupported('an empty row constructor', posOf(open!));
    const start = word ?? posOf(open!);
    pieces.push({ kind: 'operand', expr: functionCall(ROW_CONSTRUCTOR, items, {}, start), start });
  }

  /** `ARRAY[a, b, …]` as the call the binder types (PostgreSQL's element type unification). */
  protected arrayConstructor(node: Node): Expr {
    const word = this.word('array');
    if (this.peek()?.tokenType !== LBracket) throw notSupported('ARRAY(subquery)', posOf(word));
    this.expect(LBracket);
    const items = list(child(node, 'expr_list'), 'value').map((item, i) => {
      if (i > 0) this.expect(Comma);
      if (isNode(item) && item['type'] === 'array')
        throw notSupported('multidimensional ARRAY[...]', this.here());
      return this.expression(item).expr;
    });
    this.expect(RBracket);
    return functionCall(ARRAY_CONSTRUCTOR, items, {}, posOf(word));
  }

  protected columnRef(node: Node): Expr {
    if (node['column'] === '*') throw notSupported('* in an expression', this.here());
    if (present(node, 'schema') || present(node, 'db'))
      throw notSupported('schema-qualified name', this.here());
    if (present(node, 'options')) throw notSupported('AT TIME ZONE', this.here());
    const first = this.name();
    const nested = this.derived.get(first);
    if (nested !== undefined && !present(node, 'table'))
      return { kind: 'subquery', query: nested, pos: posOf(first) };
    if (present(node, 'table')) {
      this.expect(Dot);
      const second = this.name();
      return { kind: 'column', table: identName(first), name: identName(second), pos: posOf(first) };
    }
    if (niladicTypes.includes(first.tokenType)) return functionCall(identName(first), [], {}, posOf(first));
    return { kind: 'column', name: identName(first), pos: posOf(first) };
  }

  /**
   * `EXISTS (SELECT ...)`: the query was parsed on its own and stands here as one placeholder name
   * (see query-structure.ts), which node-sql-parser read as the argument of a call.
   */
  protected existsNode(node: Node): Expr {
    const word = this.word('exists');
    this.expect(LParen);
    const token = this.peek();
    const query = token === undefined ? undefined : this.derived.get(token);
    if (callArguments(child(node, 'args')).length !== 1) this.lost();
    // A query node-sql-parser saw itself (in ON): not a predicate this engine maintains there.
    if (query === undefined) this.subquery();
    this.index++;
    this.expect(RParen);
    this.rejectCallSuffix(node, posOf(word));
    return { kind: 'exists', query, pos: posOf(word) };
  }

  /** The lowercased name of a node-sql-parser function node (schema-qualified names rejected). */
  protected functionName(node: Node): string {
    const name = child(node, 'name');
    const parts = list(name, 'name');
    if ((name !== undefined && present(name, 'schema')) || parts.length !== 1) {
      throw notSupported('schema-qualified name', this.here());
    }
    const part = parts[0];
    return isNode(part) && typeof part['value'] === 'string' ? part['value'].toLowerCase() : '';
  }

  protected typeName(): TypeName {
    const length = measureTypeName((k) => this.peek(k - 1));
    if (length === 0) this.lost();
    const tokens: IToken[] = [];
    for (let i = 0; i < length; i++) tokens.push(this.peek(i)!);
    this.index += length;
    const type = buildTypeName(tokens);
    // bpchar alone is marked (types-resolve.ts): other types read the same on both parse paths.
    return type.name === 'bpchar' && type.params.length === 0 ? { ...type, inSelect: true } : type;
  }
}
