// The only importer of node-sql-parser: turns one SELECT (as our lexer's tokens) into Sluice's AST.
// node-sql-parser supplies the structure; our tokens supply every leaf value and position, and the
// shared operator-run builder re-derives precedence (node-sql-parser gets AND/OR and || wrong).
// FROM becomes a join tree whose shape (comma looser than JOIN, both nesting left) and join kinds
// come from our tokens; node-sql-parser only supplies the flat list of relations and ON conditions.
import type { IToken, TokenType } from 'chevrotain';
import nodeSqlParser from 'node-sql-parser/build/postgresql.js';
import type {
  Expr,
  FromItem,
  JoinKind,
  JoinRef,
  OrderItem,
  Pos,
  SelectItem,
  SelectStmt,
  SubqueryRef,
  TableRef,
  TypeName,
  WindowFrameSpec,
  WindowSpec,
} from './ast.ts';
import { parseQuery } from './select-adapter/query-structure.ts';
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
  Comma,
  DoubleColon,
  Dot,
  endPosOf,
  False,
  Ident,
  identName,
  isType,
  isWord,
  isWordText,
  LBracket,
  LParen,
  Minus,
  niladicTypes,
  Null,
  NumberLit,
  OtherOp,
  Plus,
  posOf,
  QuotedIdent,
  RParen,
  Star,
  StringLit,
  stringValue,
  syntaxErrorAt,
  True,
} from './lexer.ts';
import { buildTypeName, measureTypeName } from './type-name.ts';
import { extractCall, intervalLiteral } from './select-adapter/time-syntax.ts';
import {
  type Node,
  isNode,
  child,
  list,
  text,
  present,
  callArguments,
  castItem,
} from './select-adapter/loose-ast.ts';
import {
  type AdapterToken,
  INFIX_TOKENS,
  constantLists,
  renderTokens,
  onConditions,
  matchParens,
} from './select-adapter/adapter-tokens.ts';
import {
  checkParsedTokens,
  translateParseFailure,
  unsupportedConstructUpTo,
  JOIN_WORDS,
} from './select-adapter/parse-failures.ts';

const sqlParser = new nodeSqlParser.Parser();
const PARSE_OPTIONS = { database: 'postgresql' } as const;

/**
 * Counts the times the converter could not follow node-sql-parser's tree (see `lost`). Tests use
 * it to tell our own bugs apart from SQL that node-sql-parser rejects outright.
 */
export const adapterDiagnostics = { divergences: 0 };

/** Window functions (beside the aggregates with OVER) the binder maintains. */
const WINDOW_FUNCTIONS = ['row_number', 'rank', 'dense_rank', 'lag', 'lead', 'first_value', 'last_value'];
const AGGREGATE_WINDOW_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'];

/** A keyword node-sql-parser leaves among a call's arguments (`BOTH`, `FROM`, `IN`). */
function isOrigin(arg: unknown): arg is Node {
  return isNode(arg) && arg['type'] === 'origin';
}

// ── Public entry ─────────────────────────────────────────────────────────────────────────────────

/** Parses the tokens of one SELECT statement (non-empty, no `;`). Throws SluiceError. */
export function parseSelect(tokens: readonly IToken[], maxTokens = Infinity): SelectStmt {
  // One budget for every plain SELECT of the statement: splitting a query into set operation
  // branches and subqueries must not hand node-sql-parser more tokens than one SELECT may.
  const budget = { left: maxTokens };
  return parseQuery(tokens, (plain, derived) => parsePlainSelect(plain, budget, derived));
}

/** One plain SELECT (no WITH, no set operation); `derived` maps placeholder names to subqueries. */
function parsePlainSelect(
  tokens: readonly IToken[],
  budget: { left: number },
  derived: ReadonlyMap<IToken, SelectStmt>,
): SelectStmt {
  const lists = constantLists(tokens);
  const adapterTokens = renderTokens(tokens, lists);
  checkParsedTokens(adapterTokens, budget.left);
  for (const { render } of adapterTokens) if (render.trim() !== '') budget.left--;
  const base = tokens[0]!.startOffset;
  const last = tokens[tokens.length - 1]!;
  const chars = new Array<string>((last.endOffset ?? last.startOffset) + 1 - base).fill(' ');
  for (const { tok, render } of adapterTokens) {
    for (let i = 0; i < render.length; i++) chars[tok.startOffset - base + i] = render[i]!;
  }
  const conditions = new Conditions(adapterTokens, base, chars.join(''), onConditions(tokens));
  for (const [on, end] of conditions.ends) {
    const last = tokens[end - 1]!;
    chars.fill(' ', tokens[on]!.startOffset - base, (last.endOffset ?? last.startOffset) + 1 - base);
  }
  const rendered = chars.join('');

  let ast: unknown;
  try {
    ast = sqlParser.astify(rendered, PARSE_OPTIONS);
  } catch (error) {
    if (error instanceof RangeError) throw error; // stack exhausted: parse.ts reports the nesting
    throw translateParseFailure(error, adapterTokens, base);
  }
  const statement = Array.isArray(ast) && ast.length === 1 ? ast[0] : ast;
  if (!isNode(statement) || statement['type'] !== 'select') throw syntaxErrorAt(tokens[0]!);
  const converter = new Converter(adapterTokens, lists, conditions, derived);
  return converter.selectStatement(statement);
}

/**
 * The conditions of ON (see `onConditions`), parsed when first needed as the items of one SELECT.
 * Should that fail, the conditions before the faulty one are parsed again without it, so that
 * errors come in the order of the text.
 */
class Conditions {
  private parsed: Map<number, unknown> | undefined;
  private failure: { on: number; error: SluiceError } | undefined;

  constructor(
    private readonly tokens: readonly AdapterToken[],
    private readonly base: number,
    private readonly text: string,
    /** ON's index → index after its condition. */
    readonly ends: ReadonlyMap<number, number>,
  ) {}

  /** node-sql-parser's tree of the condition after the ON at `on`; throws SluiceError. */
  node(on: number): unknown {
    if (this.parsed === undefined) {
      const all = [...this.ends.keys()];
      const result = this.parse(all);
      if (result instanceof Map) this.parsed = result;
      else {
        this.failure = { on: all[result.index]!, error: result.error };
        const before = this.parse(all.slice(0, result.index));
        this.parsed = before instanceof Map ? before : new Map();
      }
    }
    if (this.failure !== undefined && on === this.failure.on) throw this.failure.error;
    return this.parsed.get(on);
  }

  /** The conditions after the ONs at `ons`, or the index in `ons` of the one that fails and its error. */
  private parse(ons: readonly number[]): Map<number, unknown> | { index: number; error: SluiceError } {
    const parsed = new Map<number, unknown>();
    if (ons.length === 0) return parsed;
    let batch = 'select';
    const starts: { at: number; offset: number; length: number }[] = []; // in the batch → in `text`
    for (const on of ons) {
      const first = this.tokens[on + 1]!.tok;
      const last = this.tokens[this.ends.get(on)! - 1]!.tok;
      const offset = first.startOffset - this.base;
      const piece = this.text.slice(offset, (last.endOffset ?? last.startOffset) + 1 - this.base);
      batch += starts.length === 0 ? ' ' : ', ';
      starts.push({ at: batch.length, offset, length: piece.length });
      batch += piece;
    }
    let ast: unknown;
    try {
      ast = sqlParser.astify(batch, PARSE_OPTIONS);
    } catch (error) {
      if (error instanceof RangeError) throw error;
      const location = isNode(error) ? child(error, 'location') : undefined;
      const start = location !== undefined ? child(location, 'start') : undefined;
      const at = typeof start?.['offset'] === 'number' ? start['offset'] : batch.length;
      let index = 0;
      while (index + 1 < starts.length && starts[index + 1]!.at <= at) index++;
      const piece = starts[index]!;
      const offset = piece.offset + Math.min(Math.max(0, at - piece.at), piece.length);
      const relocated = { location: { start: { offset } } };
      return { index, error: translateParseFailure(relocated, this.tokens, this.base) };
    }
    const statement = Array.isArray(ast) && ast.length === 1 ? ast[0] : ast;
    const columns = isNode(statement) ? list(statement, 'columns') : [];
    ons.forEach((on, i) => {
      const column = columns[i];
      if (isNode(column)) parsed.set(on, column['type'] === 'cast' ? castItem(column) : column['expr']);
    });
    return parsed;
  }
}

// ── Conversion ───────────────────────────────────────────────────────────────────────────────────

/** An aggregate call with its FILTER condition, when it has one. */
function withFilter(call: Expr, filter: Expr | undefined): Expr {
  return filter === undefined || call.kind !== 'function' ? call : { ...call, filter };
}

function crossJoin(left: FromItem, right: FromItem, pos: Pos): JoinRef {
  return { kind: 'join', joinKind: 'cross', left, right, natural: false, pos };
}

/** Walks node-sql-parser's tree in source order while consuming our tokens one by one. */
class Converter {
  private index = 0;
  private readonly closeOf: Int32Array;

  constructor(
    private readonly tokens: readonly AdapterToken[],
    /** IN lists of constants node-sql-parser did not see (`(` index → `)` index). */
    private readonly constantLists: ReadonlyMap<number, number>,
    /** The conditions of ON, which node-sql-parser did not see in the statement. */
    private readonly conditions: Conditions,
    /** Derived tables in FROM: the placeholder token standing for each, and its query. */
    private readonly derived: ReadonlyMap<IToken, SelectStmt>,
  ) {
    this.closeOf = matchParens(tokens);
  }

  // ── cursor ──
  private peek(ahead = 0): IToken | undefined {
    return this.tokens[this.index + ahead]?.tok;
  }
  private here(): Pos {
    const token = this.peek() ?? this.tokens[this.tokens.length - 1]?.tok;
    return token !== undefined ? posOf(token) : { line: 1, column: 1 };
  }
  /**
   * node-sql-parser's tree and our tokens disagree. node-sql-parser accepts things PostgreSQL does
   * not (`SELECT a sum(x)` with alias "sum(x)", `NULLS LASTLIMIT`), so this is where its reading
   * goes beyond PostgreSQL's: a syntax error at the first token we could not account for.
   */
  private lost(): never {
    adapterDiagnostics.divergences++;
    const token = this.peek();
    if (token !== undefined) throw syntaxErrorAt(token);
    const last = this.tokens[this.tokens.length - 1]!.tok;
    throw parseError('syntax error at end of input', endPosOf(last));
  }
  private expect(type: TokenType): IToken {
    const token = this.peek();
    if (token === undefined || !isType(token, type)) this.lost();
    this.index++;
    return token;
  }
  private word(lower: string): IToken {
    const token = this.peek();
    if (!isWordText(token, lower)) this.lost();
    this.index++;
    return token!;
  }
  private optionalWord(lower: string): IToken | undefined {
    const token = this.peek();
    if (!isWordText(token, lower)) return undefined;
    this.index++;
    return token;
  }
  /**
   * A name: an identifier, a non-reserved keyword or a quoted identifier. node-sql-parser also
   * accepts some reserved words as names; PostgreSQL does not (except as a label after AS).
   */
  private name(allowReserved = false): IToken {
    const token = this.peek();
    if (token === undefined || !(isWord(token) || token.tokenType === QuotedIdent)) this.lost();
    if (!allowReserved && !isType(token, Ident) && !niladicTypes.includes(token.tokenType)) {
      throw syntaxErrorAt(token);
    }
    this.index++;
    return token;
  }
  private comma(): void {
    const entry = this.tokens[this.index];
    if (entry === undefined || !(entry.tok.tokenType === Comma || entry.asComma)) this.lost();
    this.index++;
  }
  /** Consumes the parentheses wrapping one node: `((x))` counts 2. */
  private openParens(): number {
    const first = this.index;
    const close = this.closeOf[first] ?? -1;
    if (this.peek()?.tokenType !== LParen || close < 0) this.lost();
    let count = 1;
    while (
      this.tokens[first + count]?.tok.tokenType === LParen &&
      this.closeOf[first + count] === close - count
    ) {
      count++;
    }
    this.index += count;
    return count;
  }
  private closeParens(count: number): void {
    for (let i = 0; i < count; i++) this.expect(RParen);
  }
  /** Position of the SELECT/WITH that starts a subquery at or after the cursor. */
  private subquery(): never {
    let ahead = 0;
    while (this.peek(ahead)?.tokenType === LParen) ahead++;
    const token = this.peek(ahead);
    throw notSupported('subquery', token !== undefined ? posOf(token) : this.here());
  }

  // ── statement ──
  selectStatement(ast: Node): SelectStmt {
    const first = this.peek()!;
    if (present(ast, 'with')) throw notSupported('WITH (common table expression)', posOf(first));
    if (present(ast, '_next') || present(ast, 'set_op')) {
      const op = (text(ast, 'set_op') ?? 'union').toUpperCase();
      const at = this.findWord(op.split(' ')[0]!.toLowerCase());
      throw notSupported(op, at !== undefined ? posOf(at) : posOf(first));
    }
    const parens = ast['parentheses_symbol'] === true ? this.openParens() : 0;
    const selectToken = this.word('select');
    const stmt = this.selectBody(ast, posOf(selectToken));
    this.closeParens(parens);
    if (this.index < this.tokens.length) {
      const token = this.peek()!;
      if (isWord(token)) throw notSupported(`${token.image.toUpperCase()} clause`, posOf(token));
      this.lost();
    }
    return stmt;
  }

  private findWord(lower: string): IToken | undefined {
    return this.tokens.find(({ tok }) => isWordText(tok, lower))?.tok;
  }

  private selectBody(ast: Node, pos: Pos): SelectStmt {
    const distinctType = text(child(ast, 'distinct'), 'type');
    let distinct = false;
    let distinctOn: Expr[] | undefined;
    if (distinctType === 'DISTINCT') {
      this.word('distinct');
      distinct = true;
    } else if (distinctType === 'DISTINCT ON') {
      distinctOn = this.distinctOn(list(child(ast, 'distinct'), 'columns'));
    } else if (distinctType !== undefined) {
      throw notSupported(distinctType.toUpperCase(), this.here());
    } else this.optionalWord('all');
    if (text(child(ast, 'into'), 'type') !== undefined || present(child(ast, 'into') ?? {}, 'expr')) {
      const into = this.findWord('into');
      throw notSupported('SELECT INTO', into !== undefined ? posOf(into) : pos);
    }
    if (present(ast, 'window')) {
      const at = this.findWord('window');
      throw notSupported('WINDOW clause', at !== undefined ? posOf(at) : pos);
    }

    const items = list(ast, 'columns').map((column, i) => {
      if (i > 0) this.expect(Comma);
      return this.selectItem(column);
    });

    let from: FromItem | undefined;
    const fromList = list(ast, 'from');
    if (fromList.length > 0) {
      this.word('from');
      from = this.fromList(fromList, false);
    }

    let where: Expr | undefined;
    if (present(ast, 'where')) {
      this.word('where');
      where = this.expression(ast['where']).expr;
    }

    const groupBy: Expr[] = [];
    const groupColumns = list(child(ast, 'groupby'), 'columns');
    if (groupColumns.length > 0) {
      this.word('group');
      this.word('by');
      groupColumns.forEach((column, i) => {
        if (i > 0) this.expect(Comma);
        const fn = isNode(column) && column['type'] === 'function' ? this.functionName(column) : undefined;
        if (fn === 'rollup' || fn === 'cube' || fn === 'grouping sets') {
          throw notSupported(fn.toUpperCase(), this.here());
        }
        groupBy.push(this.expression(column).expr);
      });
    }

    let having: Expr | undefined;
    if (present(ast, 'having')) {
      this.word('having');
      having = this.expression(ast['having']).expr;
    }

    const orderBy: OrderItem[] = [];
    const orderItems = list(ast, 'orderby');
    if (orderItems.length > 0) {
      this.word('order');
      this.word('by');
      orderItems.forEach((item, i) => {
        if (i > 0) this.expect(Comma);
        orderBy.push(this.orderItem(item));
      });
    }

    // LIMIT and OFFSET come in either order; node-sql-parser keeps their values in source order.
    const limits = [...list(child(ast, 'limit'), 'value'), ...list(child(ast, '_limit'), 'value')];
    let limit: Expr | undefined;
    let offset: Expr | undefined;
    for (;;) {
      if (this.optionalWord('limit')) {
        const value = limits.shift();
        if (isNode(value) && value['type'] === 'origin' && isWordText(this.peek(), 'all')) this.word('all');
        else limit = this.expression(value).expr;
      } else if (this.optionalWord('offset')) {
        offset = this.expression(limits.shift()).expr;
        if (!this.optionalWord('rows')) this.optionalWord('row');
      } else break;
    }

    return {
      kind: 'select',
      distinct,
      ...(distinctOn !== undefined ? { distinctOn } : {}),
      items,
      ...(from !== undefined ? { from } : {}),
      ...(where !== undefined ? { where } : {}),
      groupBy,
      ...(having !== undefined ? { having } : {}),
      orderBy,
      ...(limit !== undefined ? { limit } : {}),
      ...(offset !== undefined ? { offset } : {}),
      pos,
    };
  }

  /** `DISTINCT ON (exprs)`: node-sql-parser's expressions, read against our tokens. */
  private distinctOn(columns: readonly unknown[]): Expr[] {
    this.word('distinct');
    this.word('on');
    this.expect(LParen);
    const exprs = columns.map((column, i) => {
      if (i > 0) this.expect(Comma);
      return this.expression(isNode(column) ? column['expr'] : column).expr;
    });
    this.expect(RParen);
    return exprs;
  }

  /**
   * A window function call: `ROW_NUMBER() | RANK() | DENSE_RANK() | LAG/LEAD(x [, n [, default]]) |
   * FIRST_VALUE(x) | LAST_VALUE(x) OVER (...)` (aggregates with OVER come through aggregateNode).
   * Other window functions and named windows are NOT_SUPPORTED.
   */
  private windowCall(node: Node): Expr {
    const fn = String(node['name'] ?? '').toLowerCase();
    const nameToken = this.name(true);
    const pos = posOf(nameToken);
    if (!WINDOW_FUNCTIONS.includes(fn)) {
      throw notSupported(
        `window function ${fn.toUpperCase()}`,
        pos,
        'the window functions supported are ROW_NUMBER, RANK, DENSE_RANK, LAG, LEAD, FIRST_VALUE, LAST_VALUE and COUNT, SUM, AVG, MIN, MAX with OVER',
      );
    }
    this.expect(LParen);
    const args = callArguments(child(node, 'args')).map((arg, i) => {
      if (i > 0) this.comma();
      return this.expression(arg).expr;
    });
    this.expect(RParen);
    if (isWordText(this.peek(), 'ignore') || isWordText(this.peek(), 'respect'))
      throw notSupported(`${this.peek()!.image.toUpperCase()} NULLS`, this.here());
    const over = this.windowSpec(node);
    return { kind: 'function', name: fn, args, distinct: false, star: false, over, pos };
  }

  /** `OVER ([PARTITION BY exprs] [ORDER BY items] [ROWS frame])` after a call. */
  private windowSpec(node: Node): WindowSpec {
    const overToken = this.word('over');
    const window = child(node, 'over');
    const spec = child(child(window ?? {}, 'as_window_specification') ?? {}, 'window_specification');
    if (spec === undefined) throw notSupported('named window', this.here());
    this.expect(LParen);
    const partitionBy: Expr[] = [];
    const partitions = list(spec, 'partitionby');
    if (partitions.length > 0) {
      this.word('partition');
      this.word('by');
      partitions.forEach((p, i) => {
        if (i > 0) this.expect(Comma);
        partitionBy.push(this.expression(isNode(p) ? p['expr'] : p).expr);
      });
    }
    const orderBy: OrderItem[] = [];
    const orders = list(spec, 'orderby');
    if (orders.length > 0) {
      this.word('order');
      this.word('by');
      orders.forEach((item, i) => {
        if (i > 0) this.expect(Comma);
        orderBy.push(this.orderItem(item));
      });
    }
    const frame = present(spec, 'window_frame_clause') ? this.windowFrame() : undefined;
    this.expect(RParen);
    return { partitionBy, orderBy, ...(frame !== undefined ? { frame } : {}), pos: posOf(overToken) };
  }

  /**
   * `ROWS [BETWEEN] start [AND CURRENT ROW]`, start one of UNBOUNDED PRECEDING, n PRECEDING, CURRENT
   * ROW (read from our tokens). Frames ending elsewhere, RANGE/GROUPS and EXCLUDE are NOT_SUPPORTED.
   */
  private windowFrame(): WindowFrameSpec {
    const unit = this.peek();
    const pos = this.here();
    if (!isWordText(unit, 'rows')) {
      throw notSupported(
        `${unit?.image.toUpperCase() ?? ''} window frame`,
        pos,
        'write ROWS BETWEEN n PRECEDING AND CURRENT ROW, or no frame (RANGE UNBOUNDED PRECEDING)',
      );
    }
    this.index++;
    const between = this.optionalWord('between') !== undefined;
    const start = this.frameBound();
    if (between) {
      this.word('and');
      const endPos = this.here();
      if (this.frameBound() !== 0) throw notSupported('window frame not ending at CURRENT ROW', endPos);
    }
    if (isWordText(this.peek(), 'exclude')) throw notSupported('window frame EXCLUDE', this.here());
    return { preceding: start, pos };
  }

  /** One frame bound: null for UNBOUNDED PRECEDING, n for n PRECEDING, 0 for CURRENT ROW. */
  private frameBound(): number | null {
    const pos = this.here();
    if (this.optionalWord('current') !== undefined) {
      this.word('row');
      return 0;
    }
    let n: number | null = null;
    if (this.optionalWord('unbounded') === undefined) {
      const token = this.expect(NumberLit);
      n = Number(token.image);
      if (!Number.isSafeInteger(n)) throw notSupported('window frame offset that is not an integer', pos);
    }
    if (this.optionalWord('following') !== undefined) throw notSupported('window frame bound FOLLOWING', pos);
    this.word('preceding');
    return n;
  }

  private selectItem(column: unknown): SelectItem {
    if (!isNode(column)) this.lost();
    const expr = column['type'] === 'cast' ? castItem(column) : child(column, 'expr');
    if (expr?.['type'] === 'column_ref' && expr['column'] === '*') {
      if (!present(expr, 'table')) return { kind: 'star', pos: posOf(this.expect(Star)) };
      const table = this.name();
      this.expect(Dot);
      this.expect(Star);
      return { kind: 'star', table: identName(table), pos: posOf(table) };
    }
    const located = this.expression(expr);
    let alias: string | undefined;
    if (present(column, 'as')) {
      const as = this.optionalWord('as');
      // node-sql-parser reads the postfix `x ISNULL` / `x NOTNULL` as an alias.
      if (as === undefined && (isWordText(this.peek(), 'isnull') || isWordText(this.peek(), 'notnull'))) {
        throw notSupported(this.peek()!.image.toUpperCase(), this.here(), 'write IS NULL or IS NOT NULL');
      }
      alias = identName(this.name(as !== undefined));
    }
    return {
      kind: 'expr',
      expr: located.expr,
      ...(alias !== undefined ? { alias } : {}),
      pos: located.start,
    };
  }

  /**
   * node-sql-parser's FROM list, flat in source order: an entry with `join` joins the entries
   * before it, one without follows a comma. Comma binds looser than JOIN (`a, b JOIN c ON p` is
   * `a × (b ⋈ c)`); both nest to the left. A loop: a FROM list may have thousands of entries.
   * The right operand of a join that needs ON or USING takes in the joins that follow it before its
   * own qualifier, as in PostgreSQL: `a JOIN b JOIN c ON x ON y` is `a JOIN (b JOIN c ON x) ON y`.
   */
  private fromList(entries: readonly unknown[], parenthesised: boolean): FromItem {
    const cursor = { entries, next: 1 };
    let done: FromItem | undefined;
    let comma: Pos | undefined;
    let current = this.fromPrimary(entries[0]);
    while (cursor.next < entries.length) {
      const entry = entries[cursor.next];
      if (!isNode(entry)) this.lost();
      const token = this.peek();
      if (token?.tokenType === Comma) {
        // PostgreSQL: a parenthesised FROM item is a join; `(a, b)` is a syntax error at the comma.
        if (parenthesised || present(entry, 'join')) throw syntaxErrorAt(token);
        this.index++;
        cursor.next++;
        done = done === undefined ? current : crossJoin(done, current, comma!);
        comma = posOf(token);
        current = this.fromPrimary(entry);
        continue;
      }
      current = this.joinStep(current, cursor);
    }
    // An ON or USING no join took (`a JOIN b ON p ON q`, `a CROSS JOIN b ON p`).
    const rest = this.peek();
    if (isWordText(rest, 'on') || isWordText(rest, 'using')) throw syntaxErrorAt(rest!);
    return done === undefined ? current : crossJoin(done, current, comma!);
  }

  /** One join of `left` with the next entry (and, for a qualified join, the joins nested in its right operand). */
  private joinStep(left: FromItem, cursor: { readonly entries: readonly unknown[]; next: number }): JoinRef {
    const entry = cursor.entries[cursor.next];
    if (!isNode(entry) || !present(entry, 'join')) this.lost();
    const operator = this.joinOperator();
    cursor.next++;
    let right = this.fromPrimary(entry);
    if (!operator.natural && operator.joinKind !== 'cross') {
      while (cursor.next < cursor.entries.length && this.atJoinWord()) right = this.joinStep(right, cursor);
    }
    return { kind: 'join', ...operator, left, right, ...this.joinCondition(operator) };
  }

  /** Whether the cursor is at the first word of a join operator. */
  private atJoinWord(): boolean {
    const token = this.peek();
    return JOIN_WORDS.some((w) => w !== 'outer' && isWordText(token, w));
  }

  /** `[NATURAL] [INNER | LEFT|RIGHT|FULL [OUTER]] JOIN` or `CROSS JOIN`, read from our tokens. */
  private joinOperator(): { joinKind: JoinKind; natural: boolean; pos: Pos } {
    const pos = this.here();
    const natural = this.optionalWord('natural') !== undefined;
    let joinKind: JoinKind = 'inner';
    if (!natural && this.optionalWord('cross')) joinKind = 'cross';
    else if (this.optionalWord('inner') === undefined) {
      for (const kind of ['left', 'right', 'full'] as const) {
        if (this.optionalWord(kind) === undefined) continue;
        joinKind = kind;
        this.optionalWord('outer');
        break;
      }
    }
    const join = this.peek();
    if (!isWordText(join, 'join')) throw join !== undefined ? syntaxErrorAt(join) : this.endOfInput();
    this.index++;
    return { joinKind, natural, pos };
  }

  /** `ON cond` or `USING (names)`: required unless the join is NATURAL or CROSS, where neither may follow. */
  private joinCondition(operator: {
    joinKind: JoinKind;
    natural: boolean;
  }): { on: Expr } | { using: { name: string; pos: Pos }[] } | Record<string, never> {
    const token = this.peek();
    const bare = operator.natural || operator.joinKind === 'cross';
    const on = isWordText(token, 'on');
    // After NATURAL or CROSS, an ON or USING belongs to an enclosing join (or is an error there).
    if (bare) return {};
    if (!on && !isWordText(token, 'using')) {
      throw token !== undefined ? syntaxErrorAt(token) : this.endOfInput();
    }
    this.index++;
    if (on) {
      // A following ON or USING is the qualifier of an enclosing join, or a syntax error there.
      return { on: this.onCondition(this.index - 1) };
    }
    this.expect(LParen);
    const using: { name: string; pos: Pos }[] = [];
    for (;;) {
      const name = this.name();
      using.push({ name: identName(name), pos: posOf(name) });
      if (this.peek()?.tokenType !== Comma) break;
      this.index++;
    }
    this.expect(RParen);
    return { using };
  }

  /** The condition after the ON at tokens[on] (see `onConditions`). */
  private onCondition(on: number): Expr {
    const end = this.conditions.ends.get(on);
    if (end === undefined) {
      const token = this.peek();
      throw token !== undefined ? syntaxErrorAt(token) : this.endOfInput();
    }
    const node = this.conditions.node(on);
    if (node === undefined) this.lost();
    const condition = this.expression(node).expr;
    if (this.index !== end) {
      // `ON x y`: node-sql-parser read y as the alias of a select item.
      throw unsupportedConstructUpTo(this.tokens, this.index) ?? syntaxErrorAt(this.peek()!);
    }
    return condition;
  }

  private endOfInput(): SluiceError {
    return parseError('syntax error at end of input', endPosOf(this.tokens[this.tokens.length - 1]!.tok));
  }

  /** One relation of FROM: a table, or a join in parentheses. */
  private fromPrimary(entry: unknown): FromItem {
    if (!isNode(entry)) this.lost();
    const inner = child(entry, 'expr');
    if (inner?.['type'] !== 'tables' || present(entry, 'ast') || present(inner, 'ast')) {
      return this.tableRef(entry);
    }
    if (text(entry, 'prefix')?.toLowerCase() === 'lateral') throw notSupported('LATERAL', this.here());
    this.expect(LParen);
    const item = this.fromList(list(inner, 'expr'), true);
    // PostgreSQL parenthesises only joins: `FROM (t)` is a syntax error at the `)`.
    const close = this.expect(RParen);
    if (item.kind !== 'join') throw syntaxErrorAt(close);
    if (present(entry, 'as')) throw notSupported('alias for a join in parentheses', this.here());
    return item;
  }

  private tableRef(entry: Node): TableRef | SubqueryRef {
    if (text(entry, 'prefix')?.toLowerCase() === 'lateral') throw notSupported('LATERAL', this.here());
    const inner = child(entry, 'expr');
    if (present(entry, 'ast') || (inner !== undefined && present(inner, 'ast'))) this.subquery();
    if (inner !== undefined) throw notSupported('function in FROM', this.here());
    if (isWordText(this.peek(), 'only')) throw notSupported('ONLY', this.here());
    if (isWordText(this.peek(), 'lateral')) throw notSupported('LATERAL', this.here());
    const first = this.name();
    if (this.peek()?.tokenType === Dot) throw notSupported('schema-qualified name', posOf(first));
    let alias: string | undefined;
    if (present(entry, 'as')) {
      const as = this.optionalWord('as');
      // The words of a join are reserved in PostgreSQL: never an alias (node-sql-parser reads
      // `t NATURAL CROSS JOIN u` as table t aliased "natural").
      const token = this.peek();
      if (JOIN_WORDS.some((w) => isWordText(token, w))) throw syntaxErrorAt(token!);
      alias = identName(this.name(as !== undefined));
    }
    if (present(entry, 'tablesample')) throw notSupported('TABLESAMPLE', this.here());
    const subquery = this.derived.get(first);
    if (subquery !== undefined) {
      // `AS s (a, b)`: names for the derived table's first columns.
      const columns =
        alias !== undefined && this.peek()?.tokenType === LParen ? this.columnAliases() : undefined;
      return {
        kind: 'subquery',
        query: subquery,
        ...(alias !== undefined ? { alias } : {}),
        ...(columns !== undefined ? { columns } : {}),
        pos: posOf(first),
      };
    }
    return {
      kind: 'table',
      name: identName(first),
      ...(alias !== undefined ? { alias } : {}),
      pos: posOf(first),
    };
  }

  /** `(a, b, …)` after a derived table's alias. */
  private columnAliases(): { name: string; pos: Pos }[] {
    this.expect(LParen);
    const names: { name: string; pos: Pos }[] = [];
    do {
      if (names.length > 0) this.expect(Comma);
      const token = this.name(true);
      names.push({ name: identName(token), pos: posOf(token) });
    } while (this.peek()?.tokenType === Comma);
    this.expect(RParen);
    return names;
  }

  private orderItem(item: unknown): OrderItem {
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

  // ── expressions ──

  /** One complete expression: its operator run, assembled with PostgreSQL's precedence. */
  private expression(node: unknown): Located {
    const pieces: Piece[] = [];
    this.flatten(node, pieces);
    return buildExpr(pieces);
  }

  /**
   * Appends `root` to the operator run in source order. Unparenthesised operator nodes are taken
   * apart (their grouping in node-sql-parser's tree is not trusted); everything else is an operand.
   * Binary chains are walked with an explicit stack: `a = 1 OR a = 2 OR …` can be thousands deep.
   */
  private flatten(root: unknown, pieces: Piece[]): void {
    const work: ({ readonly node: unknown } | { readonly infix: InfixOp; readonly node: Node })[] = [
      { node: root },
    ];
    for (let item = work.pop(); item !== undefined; item = work.pop()) {
      if ('infix' in item) {
        // `AT TIME ZONE` is rendered as `||` for node-sql-parser (adapter-tokens.ts)
        const atTimeZone = isWordText(this.peek(), 'at');
        if (atTimeZone) for (const word of ['at', 'time', 'zone']) this.word(word);
        else this.infixOperator(item.node);
        pieces.push({ kind: 'infix', op: atTimeZone ? 'at time zone' : item.infix });
        continue;
      }
      const node = item.node;
      const infix = isNode(node) && node['parentheses'] !== true ? this.infixOf(node) : undefined;
      if (infix !== undefined && isNode(node)) {
        work.push({ node: node['right'] }, { infix, node }, { node: node['left'] });
      } else this.flattenNode(node, pieces);
    }
  }

  /** The run operator of an infix binary node (arithmetic, comparison, AND/OR, ||, LIKE). */
  private infixOf(node: Node): InfixOp | undefined {
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
  private infixOperator(node: Node): void {
    const op = (text(node, 'operator') ?? '').toUpperCase();
    const token = INFIX_TOKENS[op]?.[1];
    if (op.includes('~') || op === '?') {
      // Our lexer reads `~*` as the operator `~` and a star, `!~*` as `!~` and a star.
      const head = this.expect(OtherOp);
      if (head.image !== op.replace('*', '')) this.lost();
      if (op.endsWith('*')) this.expect(Star);
    } else if (token === undefined) {
      for (const word of op.toLowerCase().split(' ')) this.word(word);
    } else if (typeof token === 'string') this.word(token);
    else this.expect(token);
  }

  private flattenNode(node: unknown, pieces: Piece[]): void {
    if (!isNode(node)) this.lost();
    if (present(node, 'ast')) this.subquery();
    if (node['type'] === 'expr_list') throw notSupported('row constructor', this.here());
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
          const open = this.expect(LParen);
          const args = list(child(node, 'args'), 'value');
          if (args.length !== 1) throw notSupported('row constructor', posOf(open));
          const inner = this.expression(args[0]);
          this.expect(RParen);
          pieces.push({ kind: 'operand', expr: inner.expr, start: posOf(open) });
          return;
        }
        break;
    }
    const start = this.here();
    pieces.push({ kind: 'operand', expr: this.operand(node), start });
  }

  private flattenBinary(node: Node, pieces: Piece[]): void {
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
        const bounds = isNode(right) ? list(right, 'value') : [];
        if (bounds.length !== 2) this.lost();
        const low = this.expression(bounds[0]).expr;
        this.word('and');
        pieces.push({ kind: 'between', low, negated });
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
  private signs(pieces: Piece[]): void {
    for (
      let token = this.peek();
      token?.tokenType === Minus || token?.tokenType === Plus;
      token = this.peek()
    ) {
      this.index++;
      pieces.push({ kind: 'prefix', op: token.tokenType === Minus ? '-' : '+', pos: posOf(token) });
    }
  }

  private constants(close: number): Expr[] {
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

  /** The right side of IS / IS NOT: NULL, TRUE or FALSE (IS DISTINCT FROM is not supported). */
  private isValue(right: unknown): 'null' | 'true' | 'false' {
    if (isNode(right)) {
      if (right['type'] === 'null') return 'null';
      if (right['type'] === 'bool') return right['value'] === true ? 'true' : 'false';
      const value = right['value'];
      if (typeof value === 'string' && value.toUpperCase().startsWith('DISTINCT')) {
        throw notSupported('IS DISTINCT FROM', this.here());
      }
    }
    throw notSupported(`IS ${this.peek()?.image.toUpperCase() ?? ''}`, this.here());
  }

  /** A node that is a single operand (the cursor is at its first token, no wrapping parentheses). */
  private operand(node: Node): Expr {
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
      case 'expr_list':
        throw notSupported('row constructor', this.here());
      case 'array':
        throw notSupported('ARRAY', this.here());
      default: {
        const token = this.peek();
        if (/^[eubnx]$/i.test(token?.image ?? '') && this.peek(1)?.tokenType === StringLit) {
          throw notSupported(`${token!.image.toUpperCase()}'...' string constant`, this.here());
        }
        throw notSupported(`the expression at "${token?.image ?? ''}"`, this.here());
      }
    }
  }

  private columnRef(node: Node): Expr {
    if (node['column'] === '*') throw notSupported('* in an expression', this.here());
    if (present(node, 'schema') || present(node, 'db'))
      throw notSupported('schema-qualified name', this.here());
    if (present(node, 'collate')) throw notSupported('COLLATE', this.here());
    if (present(node, 'array_index')) throw notSupported('array subscript', this.here());
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
  private existsNode(node: Node): Expr {
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
  private functionName(node: Node): string {
    const name = child(node, 'name');
    const parts = list(name, 'name');
    if ((name !== undefined && present(name, 'schema')) || parts.length !== 1) {
      throw notSupported('schema-qualified name', this.here());
    }
    const part = parts[0];
    return isNode(part) && typeof part['value'] === 'string' ? part['value'].toLowerCase() : '';
  }

  private functionCallNode(node: Node): Expr {
    const lower = this.functionName(node);
    if (lower === 'exists' && isWordText(this.peek(), 'exists')) return this.existsNode(node);
    if (lower === 'any' || lower === 'some' || lower === 'all') {
      throw notSupported(`${lower.toUpperCase()} (...)`, this.here());
    }
    const nameToken = this.name();
    const pos = posOf(nameToken);
    if (present(node, 'over')) throw notSupported(`window function ${nameToken.image.toUpperCase()}`, pos);
    if (!present(node, 'args')) {
      // CURRENT_DATE and friends, written without parentheses.
      return functionCall(identName(nameToken), [], {}, pos);
    }
    this.expect(LParen);
    const rawArgs = callArguments(child(node, 'args'));
    const only = rawArgs[0];
    if (rawArgs.length === 1 && isNode(only) && only['column'] === '*' && !present(only, 'table')) {
      // f(*) for a name node-sql-parser does not know as an aggregate ("count"(*)).
      this.expect(Star);
      this.expect(RParen);
      this.rejectCallSuffix(node, pos);
      return functionCall(identName(nameToken), [], { star: true }, pos);
    }
    if (lower === 'trim' || (lower === 'position' && rawArgs.length === 2)) {
      const call = lower === 'trim' ? this.trimArguments(rawArgs, pos) : this.positionArguments(rawArgs, pos);
      this.expect(RParen);
      this.rejectCallSuffix(node, pos);
      return call;
    }
    const distinct = this.optionalWord('distinct') !== undefined;
    if (!distinct) this.optionalWord('all');
    const args = rawArgs.map((arg, i) => {
      if (i > 0) this.comma();
      if (isNode(arg) && arg['type'] === 'origin') {
        throw notSupported(
          `${nameToken.image.toUpperCase()}(... ${String(arg['value']).toUpperCase()} ...)`,
          pos,
        );
      }
      return this.expression(arg).expr;
    });
    this.expect(RParen);
    const filter = this.filterClause(node);
    this.rejectCallSuffix({ ...node, filter: null }, pos);
    return withFilter(functionCall(identName(nameToken), args, { distinct }, pos), filter);
  }

  /**
   * `TRIM([BOTH | LEADING | TRAILING] [chars] FROM s)` and `TRIM([spec] [FROM] s [, chars])` as
   * btrim / ltrim / rtrim (s [, chars]), the names PostgreSQL gives them.
   */
  private trimArguments(rawArgs: readonly unknown[], pos: Pos): Expr {
    let name = 'btrim';
    let i = 0;
    const first = rawArgs[0];
    const spec = isOrigin(first) ? String(first['value']).toLowerCase() : '';
    if (spec === 'both' || spec === 'leading' || spec === 'trailing') {
      this.word(spec);
      name = spec === 'both' ? 'btrim' : spec === 'leading' ? 'ltrim' : 'rtrim';
      i = 1;
    }
    const before: Expr[] = [];
    const after: Expr[] = [];
    let from = false;
    for (; i < rawArgs.length; i++) {
      const arg = rawArgs[i];
      if (isOrigin(arg)) {
        if (String(arg['value']).toLowerCase() !== 'from' || from) {
          throw notSupported(`TRIM(... ${String(arg['value']).toUpperCase()} ...)`, pos);
        }
        this.word('from');
        from = true;
        continue;
      }
      const into = from ? after : before;
      if (into.length > 0) this.comma();
      into.push(this.expression(arg).expr);
    }
    // With FROM, what comes before it is the characters to remove; without, they come second.
    const args = from && before.length > 0 ? [...after, ...before] : [...before, ...after];
    return functionCall(name, args, {}, pos);
  }

  /** `POSITION(sub IN s)` as PostgreSQL's position(s, sub), the function strpos also is. */
  private positionArguments(rawArgs: readonly unknown[], pos: Pos): Expr {
    const first = this.expression(rawArgs[0]).expr;
    const written = isWordText(this.peek(), 'in'); // rendered as a comma, see markPosition
    this.comma();
    const second = this.expression(rawArgs[1]).expr;
    return functionCall('position', written ? [second, first] : [first, second], {}, pos);
  }

  private aggregateNode(node: Node): Expr {
    const nameToken = this.name();
    const pos = posOf(nameToken);
    const args = child(node, 'args');
    if (args === undefined) this.lost();
    if (present(args, 'orderby')) throw notSupported('ORDER BY inside an aggregate', pos);
    this.expect(LParen);
    const argument = child(args, 'expr');
    if (argument?.['type'] === 'star') {
      this.expect(Star);
      this.expect(RParen);
      const filter = this.filterClause(node);
      if (present(node, 'over')) return this.windowAggregate(node, [], false, filter, pos);
      this.rejectCallSuffix({ ...node, filter: null }, pos);
      return withFilter(functionCall(identName(nameToken), [], { star: true }, pos), filter);
    }
    const distinct = this.optionalWord('distinct') !== undefined;
    if (!distinct) this.optionalWord('all');
    const values: Expr[] = [this.expression(argument).expr];
    const separator = child(args, 'separator');
    if (separator !== undefined) {
      this.comma();
      values.push(this.expression(separator['delimiter']).expr);
    }
    this.expect(RParen);
    const filter = this.filterClause(node);
    if (present(node, 'over')) return this.windowAggregate(node, values, distinct, filter, pos);
    this.rejectCallSuffix({ ...node, filter: null }, pos);
    return withFilter(functionCall(identName(nameToken), values, { distinct }, pos), filter);
  }

  /** `agg(x) OVER (...)`: an aggregate as a window function (no DISTINCT, no FILTER). */
  private windowAggregate(
    node: Node,
    args: readonly Expr[],
    distinct: boolean,
    filter: Expr | undefined,
    pos: Pos,
  ): Expr {
    const name = String(node['name'] ?? '').toLowerCase();
    if (distinct) throw notSupported('DISTINCT in a window function', pos);
    if (filter !== undefined) throw notSupported('FILTER in a window function', pos);
    if (!AGGREGATE_WINDOW_FUNCTIONS.includes(name))
      throw notSupported(`window function ${name.toUpperCase()}`, pos);
    const over = this.windowSpec(node);
    return { kind: 'function', name, args, distinct: false, star: args.length === 0, over, pos };
  }

  /** `FILTER (WHERE cond)` after an aggregate's parentheses: the condition, or undefined. */
  private filterClause(node: Node): Expr | undefined {
    const filter = child(node, 'filter');
    if (filter === undefined || !present(filter, 'where')) return undefined;
    this.word('filter');
    this.expect(LParen);
    this.word('where');
    const cond = this.expression(filter['where']).expr;
    this.expect(RParen);
    return cond;
  }

  private rejectCallSuffix(node: Node, pos: Pos): void {
    if (present(node, 'filter')) throw notSupported('aggregate FILTER', pos);
    if (present(node, 'over')) throw notSupported('window function', pos);
    if (present(node, 'within_group') || isWordText(this.peek(), 'within')) {
      throw notSupported('WITHIN GROUP', pos);
    }
  }

  private caseNode(node: Node): Expr {
    const caseToken = this.word('case');
    const operand = present(node, 'expr') ? this.expression(node['expr']).expr : undefined;
    const whens: { when: Expr; then: Expr }[] = [];
    let elseExpr: Expr | undefined;
    for (const arm of list(node, 'args')) {
      if (!isNode(arm)) this.lost();
      if (arm['type'] === 'when') {
        this.word('when');
        const when = this.expression(arm['cond']).expr;
        this.word('then');
        whens.push({ when, then: this.expression(arm['result']).expr });
      } else {
        this.word('else');
        elseExpr = this.expression(arm['result']).expr;
      }
    }
    this.word('end');
    return {
      kind: 'case',
      ...(operand !== undefined ? { operand } : {}),
      whens,
      ...(elseExpr !== undefined ? { else: elseExpr } : {}),
      pos: posOf(caseToken),
    };
  }

  private typeName(): TypeName {
    const length = measureTypeName((k) => this.peek(k - 1));
    if (length === 0) this.lost();
    const tokens: IToken[] = [];
    for (let i = 0; i < length; i++) tokens.push(this.peek(i)!);
    this.index += length;
    if (this.peek()?.tokenType === LBracket) throw notSupported('array type', this.here());
    return buildTypeName(tokens);
  }
}
