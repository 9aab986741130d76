// The only importer of node-sql-parser: turns one SELECT (as our lexer's tokens) into Sluice's AST.
// node-sql-parser supplies the structure; our tokens supply every leaf value and position, and the
// shared operator-run builder re-derives precedence (node-sql-parser gets AND/OR and || wrong).
// This file parses a plain SELECT (its ON conditions in a batch of their own) and converts the
// statement; FROM is select-adapter/from-converter.ts (a join tree from node-sql-parser's flat list),
// expressions select-adapter/expression-converter.ts (their operands select-adapter/operand-converter.ts),
// calls select-adapter/call-converter.ts, all over the token cursor of select-adapter/token-cursor.ts.
import type { IToken } from 'chevrotain';
import nodeSqlParser from 'node-sql-parser/build/postgresql.js';
import type { Expr, FromItem, OrderItem, Pos, SelectItem, SelectStmt } from './ast.ts';
import type { FromCall } from './select-adapter/window-tvf-syntax.ts';
import { parseQuery } from './select-adapter/query-structure.ts';
import { notSupported, SluiceError } from '../common/errors.ts';
import {
  Comma,
  Dot,
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
  renderTokens,
  layoutTokens,
  type LaidOutTokens,
  onConditions,
  hiddenFilterConditions,
} from './select-adapter/adapter-tokens.ts';
import { hiddenLimitCounts, hiddenPartitionItems } from './select-adapter/hidden-expressions.ts';
import { constantLists } from './select-adapter/constant-lists.ts';
import { checkParsedTokens, translateParseFailure } from './select-adapter/parse-failures.ts';
import { FromConverter } from './select-adapter/from-converter.ts';
import { expandNamedWindows } from './select-adapter/named-windows.ts';
import { expandGroupingSetTokens } from './select-adapter/grouping-sets.ts';
import { rewriteFetchFirst } from './select-adapter/fetch-first.ts';
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
  return parseQuery(rewriteFetchFirst(tokens), (plain, derived, windows) =>
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
    tokens: named,
    derived,
    windowTvfs: windows,
  } = expandNamedWindows(written, writtenDerived, writtenWindows, Math.min(budget.left, 1_000_000));
  // ROLLUP, CUBE and GROUPING SETS as a plain GROUP BY list and its sets (grouping-sets.ts).
  const { tokens, sets } = expandGroupingSetTokens(named);
  const lists = constantLists(tokens);
  const adapterTokens = renderTokens(tokens, lists);
  checkParsedTokens(adapterTokens, budget.left);
  for (const { render } of adapterTokens) if (render.trim() !== '') budget.left--;
  const layout = layoutTokens(adapterTokens);
  // FILTER (WHERE cond) of the aggregates node-sql-parser does not read it after: the condition is
  // parsed with the ON conditions, the clause `FILTER (WHERE … )` hidden from the statement
  const filters = hiddenFilterConditions(tokens);
  // PARTITION BY items and LIMIT/OFFSET counts, which node-sql-parser reads only as columns and
  // calls or numbers: each parsed the same way, hidden with its keywords (hidden-expressions.ts)
  const partitions = hiddenPartitionItems(tokens);
  const counts = hiddenLimitCounts(tokens);
  const ends = new Map([...onConditions(tokens), ...filters, ...partitions, ...counts]);
  const conditions = new Conditions(adapterTokens, layout, ends);
  const chars = layout.text.split('');
  for (const [on, end] of conditions.ends) {
    const filter = filters.has(on);
    const first = filter ? on - 2 : partitions.has(on) && isWordText(tokens[on], 'by') ? on - 1 : on;
    chars.fill(' ', layout.starts[first]!, layout.ends[filter ? end : end - 1]! + 1);
  }
  const rendered = chars.join('');

  let ast: unknown;
  try {
    adapterDiagnostics.parsedCharacters += rendered.length;
    ast = sqlParser.astify(rendered, PARSE_OPTIONS);
  } catch (error) {
    if (error instanceof RangeError) throw error; // stack exhausted: parse.ts reports the nesting
    throw translateParseFailure(error, adapterTokens, layout.ends);
  }
  const statement = Array.isArray(ast) && ast.length === 1 ? ast[0] : ast;
  if (!isNode(statement) || statement['type'] !== 'select') throw syntaxErrorAt(tokens[0]!);
  const converter = new Converter(adapterTokens, lists, conditions, derived, windows);
  const select = converter.selectStatement(statement);
  return sets === undefined ? select : { ...select, groupingSets: sets };
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
    /** The SELECT's text as node-sql-parser reads it, before the conditions are blanked out. */
    private readonly layout: LaidOutTokens,
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
      const offset = this.layout.starts[on + 1]!;
      const piece = this.layout.text.slice(offset, this.layout.ends[this.ends.get(on)! - 1]! + 1);
      batch += starts.length === 0 ? ' ' : ', ';
      starts.push({ at: batch.length, offset, length: piece.length });
      batch += piece;
    }
    let ast: unknown;
    try {
      adapterDiagnostics.parsedCharacters += batch.length;
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
      return { index, error: translateParseFailure(relocated, this.tokens, this.layout.ends) };
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

/** Walks node-sql-parser's tree in source order while consuming our tokens one by one. */
class Converter extends FromConverter {
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

    // LIMIT and OFFSET come in either order; node-sql-parser keeps the values it saw in source
    // order. A count it does not read (an expression) was hidden and parsed apart (hiddenLimitCounts).
    const limits = [...list(child(ast, 'limit'), 'value'), ...list(child(ast, '_limit'), 'value')];
    let limit: Expr | undefined;
    let offset: Expr | undefined;
    for (;;) {
      if (this.optionalWord('limit')) {
        const hidden = this.hiddenExpression(this.index - 1);
        if (hidden !== undefined) {
          limit = hidden;
          continue;
        }
        const value = limits.shift();
        if (isNode(value) && value['type'] === 'origin' && isWordText(this.peek(), 'all')) this.word('all');
        else limit = this.expression(value).expr;
      } else if (this.optionalWord('offset')) {
        const hidden = this.hiddenExpression(this.index - 1);
        offset = hidden ?? this.expression(limits.shift()).expr;
        if (hidden === undefined && !this.optionalWord('rows')) this.optionalWord('row');
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
      alias = identName(this.name(as !== undefined));
    }
    return {
      kind: 'expr',
      expr: located.expr,
      ...(alias !== undefined ? { alias } : {}),
      pos: located.start,
    };
  }
}
