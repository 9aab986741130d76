// The expression half of the SELECT adapter: node-sql-parser's expression nodes and ORDER BY items
// become our typed AST, with every leaf value and position taken from our tokens and
// precedence re-derived by the shared operator-run builder (expr-builder.ts).
import type { IToken } from 'chevrotain';
import type { Expr, OrderItem, Pos, SelectStmt, TypeName } from '../ast.ts';
import { notSupported } from '../../common/errors.ts';
import {
  ARRAY_CONSTRUCTOR,
  ARRAY_SUBSCRIPT,
  ROW_CONSTRUCTOR,
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
  Caret,
  Comma,
  DoubleColon,
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
  OtherOp,
  Plus,
  posOf,
  RParen,
  Star,
  StringLit,
  stringValue,
  True,
} from '../lexer.ts';
import { buildTypeName, measureTypeName } from '../type-name.ts';
import { extractCall, intervalLiteral } from './time-syntax.ts';
import { type Node, isNode, child, list, text, present, callArguments } from './loose-ast.ts';
import { type AdapterToken, INFIX_TOKENS } from './adapter-tokens.ts';
import { TokenCursor } from './token-cursor.ts';
import { checkCollation, escapeInfix, escapePieces, isLiteralEscape } from './like-escape-collate.ts';

/**
 * Expressions and ORDER BY items of node-sql-parser's tree, converted to our AST with our tokens'
 * values and positions; call-converter.ts extends it with calls, from-converter.ts that with FROM,
 * and the statement-level converter (select-adapter.ts) extends that.
 */
export abstract class ExpressionConverter extends TokenCursor {
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
  // call-converter.ts, which extends this class.
  protected abstract functionCallNode(node: Node): Expr;
  protected abstract aggregateNode(node: Node): Expr;
  protected abstract windowCall(node: Node): Expr;
  protected abstract rejectCallSuffix(node: Node, pos: Pos): void;
  protected abstract caseNode(node: Node): Expr;

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

  /** One complete expression: its operator run, assembled with PostgreSQL's precedence. */
  protected expression(node: unknown): Located {
    const pieces: Piece[] = [];
    this.flatten(node, pieces);
    return buildExpr(pieces);
  }

  /**
   * Appends `root` to the operator run in source order. Unparenthesised operator nodes are taken
   * apart (their grouping in node-sql-parser's tree is not trusted); everything else is an operand.
   * Binary chains are walked with an explicit stack: `a = 1 OR a = 2 OR …` can be thousands deep.
   */
  protected flatten(root: unknown, pieces: Piece[]): void {
    const work: ({ readonly node: unknown } | { readonly infix: InfixOp; readonly node: Node })[] = [
      { node: root },
    ];
    for (let item = work.pop(); item !== undefined; item = work.pop()) {
      if ('infix' in item) {
        // `AT TIME ZONE` is rendered as `||` for node-sql-parser (adapter-tokens.ts)
        const atTimeZone = isWordText(this.peek(), 'at');
        // `^` is rendered as `*` (adapter-tokens.ts)
        const caret = item.infix === '*' && this.peek()?.tokenType === Caret;
        if (atTimeZone) for (const word of ['at', 'time', 'zone']) this.word(word);
        else if (caret) this.expect(Caret);
        else if (isWordText(this.peek(), 'escape')) {
          // `s LIKE p ESCAPE e` (e not a literal) is rendered as `s LIKE p || e` (adapter-tokens.ts)
          pieces.push(escapeInfix(pieces, this.peek()!));
          this.index++;
          continue;
        } else if (isWordText(this.peek(), 'collate')) {
          // `x COLLATE name` is rendered as `x || name` (adapter-tokens.ts)
          const collate = this.peek()!;
          this.word('collate');
          const name = checkCollation(this.name());
          pieces.push({ kind: 'postfix', op: { kind: 'collate', name, pos: posOf(collate) } });
          work.pop(); // the name, node-sql-parser's right operand of `||`
          continue;
        } else if (isWordText(this.peek(), 'isnull') || isWordText(this.peek(), 'notnull')) {
          // The postfix ISNULL / NOTNULL is rendered as `||null` (adapter-tokens.ts)
          const word = this.peek()!;
          this.index++;
          const negated = isWordText(word, 'notnull');
          pieces.push({ kind: 'postfix', op: { kind: 'is', value: 'null', negated, valuePos: posOf(word) } });
          work.pop(); // the NULL node-sql-parser read as the right operand of `||`
          continue;
        } else if (isWordText(this.peek(), 'is')) {
          // `IS [NOT] DISTINCT FROM` and `IS [NOT] NULL/TRUE/FALSE/UNKNOWN` are rendered as `||`
          // too (adapter-tokens.ts)
          this.word('is');
          const negated = this.optionalWord('not');
          const valueWord = this.peek();
          const value = (['null', 'true', 'false', 'unknown'] as const).find((w) => isWordText(valueWord, w));
          if (value !== undefined) {
            this.index++;
            const op = {
              kind: 'is',
              value,
              negated: negated !== undefined,
              valuePos: posOf(valueWord!),
            } as const;
            pieces.push({ kind: 'postfix', op });
            work.pop(); // the value, node-sql-parser's right operand of `||`, is read
            continue;
          }
          this.word('distinct');
          this.word('from');
          pieces.push({
            kind: 'infix',
            op: negated !== undefined ? 'is not distinct from' : 'is distinct from',
          });
          continue;
        } else this.infixOperator(item.node);
        pieces.push({ kind: 'infix', op: atTimeZone ? 'at time zone' : caret ? '^' : item.infix });
        continue;
      }
      const node = item.node;
      const infix = isNode(node) && node['parentheses'] !== true ? this.infixOf(node) : undefined;
      if (infix !== undefined && isNode(node)) {
        work.push({ node: node['right'] }, { infix, node }, { node: node['left'] });
      } else {
        this.flattenNode(node, pieces);
        // `ESCAPE 'c'` or NULL, hidden from node-sql-parser (before any other operand it is `||`)
        if (isWordText(this.peek(), 'escape') && isLiteralEscape(this.peek(1))) {
          pieces.push(...escapePieces(pieces, this.peek()!, this.peek(1)!));
          this.index += 2;
        }
      }
    }
  }

  /** The run operator of an infix binary node (arithmetic, comparison, AND/OR, ||, LIKE). */
  protected infixOf(node: Node): InfixOp | undefined {
    if (node['type'] !== 'binary_expr') return undefined;
    const op = (text(node, 'operator') ?? '').toUpperCase();
    const infix = INFIX_TOKENS[op];
    if (infix !== undefined) return infix[0];
    if (op === 'LIKE' || op === 'NOT LIKE' || op === 'ILIKE' || op === 'NOT ILIKE') {
      const right = node['right'];
      if (isNode(right) && present(right, 'escape')) throw notSupported('LIKE ... ESCAPE', this.here());
      return op.toLowerCase() as InfixOp;
    }
    if (op === 'SIMILAR TO' || op === 'NOT SIMILAR TO') {
      const right = node['right'];
      if (isNode(right) && present(right, 'escape')) throw notSupported('SIMILAR TO ... ESCAPE', this.here());
      return op.toLowerCase() as InfixOp;
    }
    if (op === '~' || op === '~*' || op === '!~' || op === '!~*') return op;
    return undefined;
  }

  /** Consumes the tokens of an infix node's operator. */
  protected infixOperator(node: Node): void {
    const op = (text(node, 'operator') ?? '').toUpperCase();
    const token = INFIX_TOKENS[op]?.[1];
    if (op.includes('~') || op === '?' || op === '?|' || op === '?&' || op === '&&') {
      // Our lexer reads `~*` as the operator `~` and a star, `!~*` as `!~` and a star.
      const head = this.expect(OtherOp);
      if (head.image !== op.replace('*', '')) this.lost();
      if (op.endsWith('*')) this.expect(Star);
    } else if (token === undefined) {
      for (const word of op.toLowerCase().split(' ')) this.word(word);
    } else if (typeof token === 'string') this.word(token);
    else this.expect(token);
  }

  protected flattenNode(node: unknown, pieces: Piece[]): void {
    if (!isNode(node)) this.lost();
    if (present(node, 'array_index')) return this.subscripted(node, pieces);
    if (present(node, 'ast')) this.subquery();
    if (node['type'] === 'expr_list') return this.rowConstructor(list(node, 'value'), pieces);
    if (node['parentheses'] === true) {
      const open = this.peek();
      if (open?.tokenType !== LParen) this.lost();
      const count = this.openParens();
      const inner = this.expression({ ...node, parentheses: false });
      this.closeParens(count);
      pieces.push({ kind: 'operand', expr: inner.expr, start: posOf(open) });
      return;
    }
    switch (node['type']) {
      case 'binary_expr':
        return this.flattenBinary(node, pieces);
      case 'unary_expr': {
        const op = text(node, 'operator')?.toUpperCase();
        if (op === '-' || op === '+') {
          const token = this.expect(op === '-' ? Minus : Plus);
          pieces.push({ kind: 'prefix', op, pos: posOf(token) });
        } else if (op === 'NOT') {
          pieces.push({ kind: 'prefix', op: 'not', pos: posOf(this.word('not')) });
        } else throw notSupported(`operator ${op ?? '?'}`, this.here());
        return this.flatten(node['expr'], pieces);
      }
      case 'number':
      case 'bigint': {
        // node-sql-parser folds some signs into the number (and drops unary plus): take them from the text.
        this.signs(pieces);
        const token = this.expect(NumberLit);
        pieces.push({ kind: 'operand', expr: numberLiteral(token.image, posOf(token)), start: posOf(token) });
        return;
      }
      case 'cast':
        if (node['symbol'] === '::') {
          this.flatten(node['expr'], pieces);
          for (const _ of list(node, 'target')) {
            this.expect(DoubleColon);
            pieces.push({ kind: 'postfix', op: { kind: 'cast', type: this.typeName() } });
          }
          return;
        }
        break;
      case 'function':
        if (this.functionName(node) === 'not' && isWordText(this.peek(), 'not')) {
          // node-sql-parser reads `NOT (x)` as a call of a function named "not".
          pieces.push({ kind: 'prefix', op: 'not', pos: posOf(this.word('not')) });
          const args = list(child(node, 'args'), 'value');
          // `NOT (a, b) = (1, 2)`: the call's arguments are a row, which the `=` that follows takes
          if (args.length !== 1) return this.rowConstructor(args, pieces);
          const open = this.expect(LParen);
          const inner = this.expression(args[0]);
          this.expect(RParen);
          pieces.push({ kind: 'operand', expr: inner.expr, start: posOf(open) });
          return;
        }
        if (this.functionName(node) === 'row' && isWordText(this.peek(), 'row')) {
          // `ROW(a, b)`: the row constructor `(a, b)` spelled out (PostgreSQL reserves the name)
          const word = posOf(this.word('row'));
          return this.rowConstructor(callArguments(child(node, 'args')), pieces, word);
        }
        break;
    }
    const start = this.here();
    pieces.push({ kind: 'operand', expr: this.operand(node), start });
  }

  protected flattenBinary(node: Node, pieces: Piece[]): void {
    const op = (text(node, 'operator') ?? '').toUpperCase();
    const right = node['right'];
    switch (op) {
      case 'IS':
      case 'IS NOT': {
        this.flatten(node['left'], pieces);
        this.word('is');
        const negated = op === 'IS NOT';
        if (negated) this.word('not');
        const value = this.isValue(right);
        const valuePos = posOf(this.word(value));
        pieces.push({ kind: 'postfix', op: { kind: 'is', value, negated, valuePos } });
        return;
      }
      case 'BETWEEN':
      case 'NOT BETWEEN': {
        this.flatten(node['left'], pieces);
        const negated = op === 'NOT BETWEEN';
        if (negated) this.word('not');
        this.word('between');
        // [A]SYMMETRIC is hidden from node-sql-parser (adapter-tokens.ts)
        const symmetric = this.optionalWord('symmetric') !== undefined;
        if (!symmetric) this.optionalWord('asymmetric');
        const bounds = isNode(right) ? list(right, 'value') : [];
        if (bounds.length !== 2) this.lost();
        const low = this.expression(bounds[0]).expr;
        this.word('and');
        pieces.push({ kind: 'between', low, negated, ...(symmetric ? { symmetric: true as const } : {}) });
        // The upper bound stays in the run: node-sql-parser may attach a later `::` to the BETWEEN.
        this.flatten(bounds[1], pieces);
        return;
      }
      case 'IN':
      case 'NOT IN': {
        this.flatten(node['left'], pieces);
        const negated = op === 'NOT IN';
        if (negated) this.word('not');
        this.word('in');
        if (isWordText(this.peek(1), 'values')) {
          throw notSupported(
            'VALUES in an IN list',
            posOf(this.peek(1)!),
            'write x IN (1, 2), or x IN (SELECT column1 FROM (VALUES (1), (2)) AS v)',
          );
        }
        if (!isNode(right) || right['type'] !== 'expr_list') this.subquery();
        this.expect(LParen);
        const close = this.constantLists.get(this.index - 1);
        const items =
          close !== undefined
            ? this.constants(close)
            : list(right, 'value').map((item, i) => {
                if (i > 0) this.expect(Comma);
                return this.expression(item).expr;
              });
        this.expect(RParen);
        pieces.push({ kind: 'postfix', op: { kind: 'in', list: items, negated } });
        return;
      }
      default:
        // Point at the operator itself, as the DML grammar does.
        this.flatten(node['left'], pieces);
        throw notSupported(`operator ${op.toLowerCase()}`, this.here());
    }
  }

  /** The constants of an IN list up to the `)` at `close`, read from our tokens alone. */
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
        return extractCall(identName(fieldToken), posOf(fieldToken), operand, posOf(word));
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

  /** `x[i]` (and `(f(…))[i]`): the operand, then each subscript; slices `x[a:b]` are refused. */
  protected subscripted(node: Node, pieces: Piece[]): void {
    const start = this.here();
    const base: Piece[] = [];
    this.flattenNode({ ...node, array_index: null }, base);
    let expr = buildExpr(base).expr;
    for (const item of list(node, 'array_index')) {
      const open = this.expect(LBracket);
      const index = this.expression(isNode(item) ? item['index'] : undefined).expr;
      if (this.peek()?.tokenType !== RBracket) throw notSupported('array slice', this.here());
      this.expect(RBracket);
      expr = functionCall(ARRAY_SUBSCRIPT, [expr, index], {}, posOf(open));
    }
    pieces.push({ kind: 'operand', expr, start });
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
    return buildTypeName(tokens);
  }
}
