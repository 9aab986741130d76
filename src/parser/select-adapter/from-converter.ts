// FROM in the SELECT adapter: node-sql-parser's flat list of relations becomes our join tree, its
// shape (comma looser than JOIN, both nesting left), join kinds, ON and USING read from our tokens.
import type { IToken } from 'chevrotain';
import type {
  Expr,
  FromItem,
  JoinKind,
  JoinRef,
  Pos,
  SelectStmt,
  SubqueryRef,
  TableRef,
  UnnestRef,
  ValuesRef,
  WindowTvfRef,
} from '../ast.ts';
import { notSupported, parseError, SluiceError } from '../../common/errors.ts';
import {
  Comma,
  Dot,
  endPosOf,
  identName,
  isWordText,
  LParen,
  posOf,
  RParen,
  syntaxErrorAt,
} from '../lexer.ts';
import { type Node, isNode, child, list, text, present } from './loose-ast.ts';
import type { AdapterToken } from './adapter-tokens.ts';
import { unsupportedConstructUpTo, JOIN_WORDS } from './parse-failures.ts';
import { CallConverter } from './call-converter.ts';
import type { FromCall } from './window-tvf-syntax.ts';

/** The conditions of ON (and of FILTER), which node-sql-parser did not see in the statement. */
export interface OnConditions {
  /** ON's index → index after its condition. */
  readonly ends: ReadonlyMap<number, number>;
  /** node-sql-parser's tree of the condition after the ON at `on`; throws SluiceError. */
  node(on: number): unknown;
}

function crossJoin(left: FromItem, right: FromItem, pos: Pos): JoinRef {
  return { kind: 'join', joinKind: 'cross', left, right, natural: false, pos };
}

/** The FROM half of the converter (select-adapter.ts extends it with the statement). */
export abstract class FromConverter extends CallConverter {
  constructor(
    tokens: readonly AdapterToken[],
    constantLists: ReadonlyMap<number, number>,
    /**
     * The conditions of ON (and FILTER conditions, PARTITION BY items, LIMIT/OFFSET counts), which
     * node-sql-parser did not see in the statement.
     */
    private readonly conditions: OnConditions,
    derived: ReadonlyMap<IToken, SelectStmt>,
    /** The window table functions of FROM by their placeholder names (window-tvf-syntax.ts). */
    private readonly windows: ReadonlyMap<IToken, FromCall>,
  ) {
    super(tokens, constantLists, derived);
  }

  /**
   * node-sql-parser's FROM list, flat in source order: an entry with `join` joins the entries
   * before it, one without follows a comma. Comma binds looser than JOIN (`a, b JOIN c ON p` is
   * `a × (b ⋈ c)`); both nest to the left. A loop: a FROM list may have thousands of entries.
   * The right operand of a join that needs ON or USING takes in the joins that follow it before its
   * own qualifier, as in PostgreSQL: `a JOIN b JOIN c ON x ON y` is `a JOIN (b JOIN c ON x) ON y`.
   */
  protected fromList(entries: readonly unknown[], parenthesised: boolean): FromItem {
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

  protected override hiddenExpression(before: number): Expr | undefined {
    return this.conditions.ends.has(before) ? this.onCondition(before) : undefined;
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

  private tableRef(entry: Node): TableRef | SubqueryRef | WindowTvfRef | UnnestRef | ValuesRef {
    if (text(entry, 'prefix')?.toLowerCase() === 'lateral') throw notSupported('LATERAL', this.here());
    const inner = child(entry, 'expr');
    if (present(entry, 'ast') || (inner !== undefined && present(inner, 'ast'))) this.subquery();
    if (inner?.['type'] === 'values') return this.valuesList(entry, inner);
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

  /** `(VALUES (e, …), …) [AS] [alias [(a, …)]]`: the rows read from our tokens, node by node. */
  private valuesList(entry: Node, inner: Node): ValuesRef {
    const open = this.expect(LParen);
    this.word('values');
    const rows: Expr[][] = [];
    // A long list of constant rows, of which node-sql-parser saw the first: all read from our tokens.
    const last = this.constantLists.get(this.index - 1);
    while (last !== undefined && this.index < last) {
      if (rows.length > 0) this.expect(Comma);
      const rowOpen = this.index;
      this.expect(LParen);
      rows.push(this.constants(this.closeOf[rowOpen]!));
      this.expect(RParen);
    }
    // Otherwise a loop over the rows, each read from its own node.
    for (const row of last === undefined ? list(inner, 'values') : []) {
      if (rows.length > 0) this.expect(Comma);
      if (!isNode(row)) this.lost();
      this.expect(LParen);
      const exprs: Expr[] = [];
      for (const value of list(row, 'value')) {
        if (exprs.length > 0) this.expect(Comma);
        exprs.push(this.expression(value).expr);
      }
      this.expect(RParen);
      rows.push(exprs);
    }
    this.expect(RParen);
    let alias: string | undefined;
    let columns: { name: string; pos: Pos }[] | undefined;
    if (present(entry, 'as')) {
      const as = this.optionalWord('as');
      const token = this.peek();
      if (JOIN_WORDS.some((w) => isWordText(token, w))) throw syntaxErrorAt(token!);
      alias = identName(this.name(as !== undefined));
      if (this.peek()?.tokenType === LParen) columns = this.columnAliases();
    }
    return {
      kind: 'values',
      rows,
      ...(alias !== undefined ? { alias } : {}),
      ...(columns !== undefined ? { columns } : {}),
      pos: posOf(open),
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
