// The only importer of node-sql-parser: turns one SELECT (as our lexer's tokens) into Sluice's AST.
// node-sql-parser supplies the structure; our tokens supply every leaf value and position, and the
// shared operator-run builder re-derives precedence (node-sql-parser gets AND/OR and || wrong).
// FROM becomes a join tree whose shape (comma looser than JOIN, both nesting left) and join kinds
// come from our tokens; node-sql-parser only supplies the flat list of relations and ON conditions.
// This file converts statements and FROM; expressions are select-adapter/expression-converter.ts,
// over the token cursor of select-adapter/token-cursor.ts.
import type { IToken } from 'chevrotain';
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
  WindowTvfRef,
  UnnestRef,
} from './ast.ts';
import type { FromCall } from './select-adapter/window-tvf-syntax.ts';
import { parseQuery } from './select-adapter/query-structure.ts';
import { notSupported, parseError, SluiceError } from '../common/errors.ts';
import {
  Comma,
  Dot,
  endPosOf,
  identName,
  isWord,
  isWordText,
  LParen,
  posOf,
  RParen,
  Star,
  syntaxErrorAt,
} from './lexer.ts';
import { type Node, isNode, child, list, text, present, castItem } from './select-adapter/loose-ast.ts';
import {
  type AdapterToken,
  constantLists,
  renderTokens,
  onConditions,
  hiddenFilterConditions,
} from './select-adapter/adapter-tokens.ts';
import {
  checkParsedTokens,
  translateParseFailure,
  unsupportedConstructUpTo,
  JOIN_WORDS,
} from './select-adapter/parse-failures.ts';
import { CallConverter } from './select-adapter/call-converter.ts';
import { expandNamedWindows } from './select-adapter/named-windows.ts';
import { adapterDiagnostics } from './select-adapter/token-cursor.ts';

export { adapterDiagnostics };

const sqlParser = new nodeSqlParser.Parser();
const PARSE_OPTIONS = { database: 'postgresql' } as const;

// ── Public entry ─────────────────────────────────────────────────────────────────────────────────

/** Parses the tokens of one SELECT statement (non-empty, no `;`). Throws SluiceError. */
export function parseSelect(tokens: readonly IToken[], maxTokens = Infinity): SelectStmt {
  // One budget for every plain SELECT of the statement: splitting a query into set operation
  // branches and subqueries must not hand node-sql-parser more tokens than one SELECT may.
  const budget = { left: maxTokens };
  return parseQuery(tokens, (plain, derived, windows) =>
    parsePlainSelect(plain, budget, derived, windows ?? new Map()),
  );
}

/** One plain SELECT (no WITH, no set operation); `derived` maps placeholder names to subqueries. */
function parsePlainSelect(
  written: readonly IToken[],
  budget: { left: number },
  writtenDerived: ReadonlyMap<IToken, SelectStmt>,
  writtenWindows: ReadonlyMap<IToken, FromCall>,
): SelectStmt {
  // Named windows resolved on the tokens first (named-windows.ts).
  const {
    tokens,
    derived,
    windowTvfs: windows,
  } = expandNamedWindows(written, writtenDerived, writtenWindows, Math.min(budget.left, 1_000_000));
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
  // FILTER (WHERE cond) of the aggregates node-sql-parser does not read it after: the condition is
  // parsed with the ON conditions, the clause `FILTER (WHERE … )` hidden from the statement
  const filters = hiddenFilterConditions(tokens);
  const ends = new Map([...onConditions(tokens), ...filters]);
  const conditions = new Conditions(adapterTokens, base, chars.join(''), ends);
  for (const [on, end] of conditions.ends) {
    const filter = filters.has(on);
    const first = tokens[filter ? on - 2 : on]!;
    const last = tokens[filter ? end : end - 1]!;
    chars.fill(' ', first.startOffset - base, (last.endOffset ?? last.startOffset) + 1 - base);
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
  const converter = new Converter(adapterTokens, lists, conditions, derived, windows);
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

function crossJoin(left: FromItem, right: FromItem, pos: Pos): JoinRef {
  return { kind: 'join', joinKind: 'cross', left, right, natural: false, pos };
}

/** Walks node-sql-parser's tree in source order while consuming our tokens one by one. */
class Converter extends CallConverter {
  constructor(
    tokens: readonly AdapterToken[],
    constantLists: ReadonlyMap<number, number>,
    /** The conditions of ON, which node-sql-parser did not see in the statement. */
    private readonly conditions: Conditions,
    derived: ReadonlyMap<IToken, SelectStmt>,
    /** The window table functions of FROM by their placeholder names (window-tvf-syntax.ts). */
    private readonly windows: ReadonlyMap<IToken, FromCall>,
  ) {
    super(tokens, constantLists, derived);
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

  /** `FILTER (WHERE cond)` hidden from node-sql-parser (hiddenFilterConditions): the condition. */
  protected override hiddenFilter(): Expr | undefined {
    if (!isWordText(this.peek(), 'filter') || !this.conditions.ends.has(this.index + 2)) return undefined;
    this.index += 2;
    this.word('where');
    const end = this.conditions.ends.get(this.index - 1) as number;
    const condition = this.onCondition(this.index - 1);
    if (this.index !== end) this.lost();
    this.expect(RParen);
    return condition;
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

  private tableRef(entry: Node): TableRef | SubqueryRef | WindowTvfRef | UnnestRef {
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
    const window = this.windows.get(first);
    if (window?.kind === 'unnest') {
      // `AS u (x [, n])`: the element's (and the ordinal's) names
      const columns =
        alias !== undefined && this.peek()?.tokenType === LParen ? this.columnAliases() : undefined;
      return {
        ...window,
        ...(alias !== undefined ? { alias } : {}),
        ...(columns !== undefined ? { columns } : {}),
      };
    }
    if (window?.kind === 'temporalTable') {
      return {
        kind: 'table',
        name: window.name,
        ...(alias !== undefined ? { alias } : {}),
        asOfProctime: window.asOf,
        pos: window.pos,
      };
    }
    if (window !== undefined) return { ...window, ...(alias !== undefined ? { alias } : {}) };
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
}
