// The expression half of the SELECT adapter: node-sql-parser's expression nodes become our typed
// AST, with every leaf value and position taken from our tokens and precedence re-derived by the
// shared operator-run builder (expr-builder.ts); single operands are operand-converter.ts's.
import { notSupported } from '../../common/errors.ts';
import {
  ARRAY_SUBSCRIPT,
  buildExpr,
  functionCall,
  numberLiteral,
  type InfixOp,
  type Located,
  type Piece,
} from '../expr-builder.ts';
import {
  Caret,
  Comma,
  DoubleColon,
  isWordText,
  LBracket,
  RBracket,
  LParen,
  Minus,
  NumberLit,
  OtherOp,
  Plus,
  posOf,
  RParen,
  Star,
} from '../lexer.ts';
import { type Node, isNode, child, list, text, present, callArguments } from './loose-ast.ts';
import { INFIX_TOKENS } from './adapter-tokens.ts';
import { checkCollation, escapeInfix, escapePieces, isLiteralEscape } from './like-escape-collate.ts';
import { OperandConverter } from './operand-converter.ts';

/**
 * Expressions of node-sql-parser's tree as operator runs of our tokens: infix, prefix and postfix
 * operators, BETWEEN, IN, IS, and the forms hidden from node-sql-parser (adapter-tokens.ts).
 */
export abstract class ExpressionConverter extends OperandConverter {
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
          // node-sql-parser read `||`'s right operand from a NULL there: the NULL alone, or what
          // follows it too (`x ISNULL::int` is `x || NULL::int` to it). The NULL is skipped and the
          // rest stays in the run, whose builder applies PostgreSQL's precedence ((x ISNULL)::int).
          this.nullTestWord = true;
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

  /** Whether the next NULL leaf is the one node-sql-parser read for the word ISNULL / NOTNULL (read). */
  private nullTestWord = false;

  protected flattenNode(node: unknown, pieces: Piece[]): void {
    if (!isNode(node)) this.lost();
    if (this.nullTestWord && node['type'] === 'null' && node['parentheses'] !== true) {
      this.nullTestWord = false;
      return;
    }
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
}
