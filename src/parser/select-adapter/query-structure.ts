// The structure of a query above its SELECTs, read from our tokens before node-sql-parser sees any:
// WITH and its common table expressions, set operations (UNION/INTERSECT/EXCEPT [ALL], with
// PostgreSQL's precedence: INTERSECT binds tighter, the others nest to the left, parentheses as
// written) and derived tables in FROM. Each plain SELECT is handed to the adapter on its own, a
// derived table replaced by one placeholder name whose token maps to the parsed subquery, so every
// position in an error is still the one in the submitted text.
import type { IToken, TokenType } from 'chevrotain';
import type { CommonTableExpr, Expr, Pos, SelectStmt, SetOperation } from '../ast.ts';
import { notSupported, parseError, SluiceError } from '../../common/errors.ts';
import {
  closingParens,
  Comma,
  endPosOf,
  From,
  identName,
  Ident,
  Identifier,
  isType,
  isWordText,
  LParen,
  NumberLit,
  posOf,
  QuotedIdent,
  RParen,
  Select,
  Star,
  syntaxErrorAt,
} from '../lexer.ts';
import { readWindowCall, startsWindowCall, type FromCall } from './window-tvf-syntax.ts';
import { readUnnestCall, startsUnnestCall } from './unnest-syntax.ts';
import { tableQueryTokens } from './table-query.ts';
import { readTemporalTable, startsSystemTime, startsTemporalTable } from './temporal-join-syntax.ts';

/**
 * Parses one plain SELECT's tokens; `derived` maps placeholder tokens to their subqueries, `windows`
 * to the window table functions of its FROM.
 */
export type SimpleSelectParser = (
  tokens: readonly IToken[],
  derived: ReadonlyMap<IToken, SelectStmt>,
  windows?: ReadonlyMap<IToken, FromCall>,
) => SelectStmt;

/**
 * SELECTs one statement may hold (set operation branches, derived tables, WITH queries): each is
 * handed to node-sql-parser on its own, which costs about a millisecond a call, and each adds a
 * level the binder and lowering walk.
 */
export const MAX_SELECTS = 64;

const SET_WORDS = ['union', 'intersect', 'except'] as const;
/** Words that end a FROM clause at its own level. */
const FROM_ENDS = [
  'where',
  'group',
  'having',
  'order',
  'limit',
  'offset',
  'window',
  'fetch',
  'for',
  'union',
  'intersect',
  'except',
];
const TAIL_WORDS = ['order', 'limit', 'offset', 'fetch'];

function setWord(token: IToken | undefined): (typeof SET_WORDS)[number] | undefined {
  return SET_WORDS.find((w) => isWordText(token, w));
}

/** Parses a whole query (tokens of one SELECT statement, no `;`). Throws SluiceError. */
export function parseQuery(tokens: readonly IToken[], simple: SimpleSelectParser): SelectStmt {
  // Counted on the tokens first, so that a statement over the limit costs no parsing at all.
  let selects = 0;
  for (const token of tokens) {
    if (isType(token, Select) && ++selects > MAX_SELECTS) {
      throw new SluiceError('TOO_MANY_ITEMS', `a statement can hold at most ${MAX_SELECTS} SELECTs`, {
        position: posOf(token),
        hint: 'set operation branches, subqueries and WITH queries each count; build on views instead',
      });
    }
  }
  return new QueryReader(tokens, simple).query(0, tokens.length);
}

interface Operand {
  readonly query: SelectStmt;
  /** A plain SELECT (not in parentheses): its ORDER BY / LIMIT belong to an enclosing set operation. */
  readonly plain: boolean;
  readonly pos: Pos;
}

class QueryReader {
  private readonly closeOf: Int32Array;

  constructor(
    private readonly tokens: readonly IToken[],
    private readonly simple: SimpleSelectParser,
  ) {
    this.closeOf = closingParens(tokens);
  }

  private endOfInput(hi: number): SluiceError {
    const last = this.tokens[Math.min(hi, this.tokens.length) - 1]!;
    return parseError('syntax error at end of input', endPosOf(last));
  }

  private unexpected(at: number, hi: number): SluiceError {
    return at < hi ? syntaxErrorAt(this.tokens[at]!) : this.endOfInput(hi);
  }

  /** The `)` closing the `(` at `open`, inside [open, hi). */
  private close(open: number, hi: number): number {
    const close = this.closeOf[open] ?? -1;
    if (close < 0 || close >= hi) throw this.endOfInput(hi);
    return close;
  }

  /** `[WITH ...] body` in [lo, hi). */
  query(lo: number, hi: number): SelectStmt {
    if (lo >= hi) throw this.unexpected(lo, hi);
    if (!isWordText(this.tokens[lo], 'with')) return this.setExpression(lo, hi);
    let p = lo + 1;
    if (isWordText(this.tokens[p], 'recursive')) {
      throw notSupported('WITH RECURSIVE', posOf(this.tokens[p]!), 'only non-recursive WITH is supported');
    }
    const ctes: CommonTableExpr[] = [];
    for (;;) {
      const nameToken = this.tokens[p];
      if (p >= hi || !(isType(nameToken, Ident) || nameToken?.tokenType === QuotedIdent)) {
        throw this.unexpected(p, hi);
      }
      const name = identName(nameToken!);
      if (ctes.some((c) => c.name === name)) {
        throw new SluiceError('DUPLICATE_ALIAS', `WITH query name "${name}" specified more than once`, {
          position: posOf(nameToken!),
        });
      }
      p++;
      let columns: { name: string; pos: Pos }[] | undefined;
      if (this.tokens[p]?.tokenType === LParen) {
        const close = this.close(p, hi);
        columns = [];
        for (let i = p + 1; ; i += 2) {
          const column = this.tokens[i];
          if (i >= close || !(isType(column, Ident) || column?.tokenType === QuotedIdent)) {
            throw this.unexpected(i, hi);
          }
          columns.push({ name: identName(column!), pos: posOf(column!) });
          if (i + 1 === close) break;
          if (this.tokens[i + 1]?.tokenType !== Comma) throw this.unexpected(i + 1, hi);
        }
        p = close + 1;
      }
      if (!isWordText(this.tokens[p], 'as')) throw this.unexpected(p, hi);
      p++;
      if (isWordText(this.tokens[p], 'not') && isWordText(this.tokens[p + 1], 'materialized')) p += 2;
      else if (isWordText(this.tokens[p], 'materialized')) p++;
      if (this.tokens[p]?.tokenType !== LParen || p >= hi) throw this.unexpected(p, hi);
      const close = this.close(p, hi);
      const query = this.query(p + 1, close);
      ctes.push({ name, ...(columns !== undefined ? { columns } : {}), query, pos: posOf(nameToken!) });
      p = close + 1;
      if (this.tokens[p]?.tokenType === Comma && p < hi) {
        p++;
        continue;
      }
      break;
    }
    if (isWordText(this.tokens[p], 'with')) throw syntaxErrorAt(this.tokens[p]!);
    const body = this.setExpression(p, hi);
    return { ...body, with: [...ctes, ...(body.with ?? [])] };
  }

  /** Operands joined by set operators in [lo, hi), then an optional ORDER BY / LIMIT tail. */
  private setExpression(lo: number, hi: number): SelectStmt {
    const operands: Operand[] = [];
    const ops: { op: SetOperation['op']; all: boolean; pos: Pos; token: IToken }[] = [];
    let p = lo;
    let tail: SelectStmt | undefined;
    let tailToken: IToken | undefined;
    for (;;) {
      if (p >= hi) throw this.endOfInput(hi);
      const token = this.tokens[p]!;
      if (token.tokenType === LParen) {
        const close = this.close(p, hi);
        operands.push({ query: this.query(p + 1, close), plain: false, pos: posOf(token) });
        p = close + 1;
      } else if (isType(token, Select)) {
        let end = p;
        let depth = 0;
        for (; end < hi; end++) {
          const t = this.tokens[end]!;
          if (t.tokenType === LParen) depth++;
          else if (t.tokenType === RParen) depth--;
          else if (depth === 0 && setWord(t) !== undefined) break;
        }
        operands.push({ query: this.plainSelect(p, end), plain: true, pos: posOf(token) });
        p = end;
      } else if (isWordText(token, 'values')) {
        // `VALUES (…), …` up to a set operator or ORDER BY / LIMIT at its own level.
        if (this.tokens[p + 1]?.tokenType !== LParen || p + 1 >= hi) throw this.unexpected(p + 1, hi);
        let end = p + 1;
        for (let depth = 0; end < hi; end++) {
          const t = this.tokens[end]!;
          if (t.tokenType === LParen) depth++;
          else if (t.tokenType === RParen) depth--;
          else if (depth === 0 && (setWord(t) !== undefined || TAIL_WORDS.some((w) => isWordText(t, w))))
            break;
        }
        operands.push({ query: this.valuesQuery(p, end), plain: true, pos: posOf(token) });
        p = end;
      } else if (isWordText(token, 'table')) {
        operands.push({ query: this.tableQuery(p, hi), plain: true, pos: posOf(token) });
        p += 2;
      } else throw syntaxErrorAt(token);
      if (p >= hi) break;
      const next = this.tokens[p]!;
      const op = setWord(next);
      if (op !== undefined) {
        p++;
        let all = false;
        if (isWordText(this.tokens[p], 'all')) {
          all = true;
          p++;
        } else if (isWordText(this.tokens[p], 'distinct')) p++;
        ops.push({ op, all, pos: posOf(next), token: next });
        continue;
      }
      if (TAIL_WORDS.some((w) => isWordText(next, w))) {
        tailToken = next;
        tail = this.tail(p, hi);
        break;
      }
      throw syntaxErrorAt(next);
    }

    // ORDER BY / LIMIT of a plain SELECT that is not the last operand: PostgreSQL's syntax error
    // at the set operator after it. The last one's belong to the whole set operation.
    operands.forEach((o, i) => {
      if (i === operands.length - 1 || !o.plain) return;
      if (hasTail(o.query)) throw syntaxErrorAt(ops[i]!.token);
    });
    const last = operands[operands.length - 1]!;
    if (ops.length > 0 && last.plain && hasTail(last.query)) {
      tail = last.query;
      operands[operands.length - 1] = { ...last, query: withoutTail(last.query) };
    }

    let result: SelectStmt;
    if (ops.length === 0) {
      result = operands[0]!.query;
    } else {
      // INTERSECT first, then UNION and EXCEPT, each to the left.
      const terms: SelectStmt[] = [operands[0]!.query];
      const looser: (typeof ops)[number][] = [];
      ops.forEach((o, i) => {
        const right = operands[i + 1]!.query;
        if (o.op === 'intersect') terms[terms.length - 1] = combine(o, terms[terms.length - 1]!, right);
        else {
          looser.push(o);
          terms.push(right);
        }
      });
      result = terms[0]!;
      looser.forEach((o, i) => (result = combine(o, result, terms[i + 1]!)));
    }
    if (tail !== undefined) {
      if (hasTail(result) && tailToken !== undefined) {
        throw parseError('multiple ORDER BY, LIMIT or OFFSET clauses are not allowed', posOf(tailToken));
      }
      result = {
        ...result,
        orderBy: tail.orderBy,
        ...(tail.limit !== undefined ? { limit: tail.limit } : {}),
        ...(tail.offset !== undefined ? { offset: tail.offset } : {}),
      };
    }
    return result;
  }

  /** `ORDER BY … LIMIT … OFFSET …` after a parenthesised operand, read as `SELECT 1 <tail>`. */
  private tail(lo: number, hi: number): SelectStmt {
    const first = this.tokens[lo]!;
    const synthetic = (image: string, type: typeof Select, back: number): IToken => ({
      ...first,
      image,
      tokenType: type,
      tokenTypeIdx: type.tokenTypeIdx!,
      startOffset: first.startOffset - back,
      endOffset: first.startOffset - back + image.length - 1,
    });
    const tokens = [
      synthetic('select', Select, 9),
      synthetic('1', NumberLit, 2),
      ...this.tokens.slice(lo, hi),
    ];
    return this.simple(tokens, new Map());
  }

  /**
   * `VALUES (…), …` in [lo, hi) as a query — the whole statement, a WITH query, a set operation's
   * branch — read as `SELECT * FROM (VALUES …)`, whose columns are column1, column2, … as
   * PostgreSQL names them. The tokens around it stand at its first and last token's positions.
   */
  private valuesQuery(lo: number, hi: number): SelectStmt {
    const first = this.tokens[lo]!;
    const last = this.tokens[hi - 1]!;
    const at = (token: IToken, image: string, type: TokenType, offset: number): IToken => ({
      ...token,
      image,
      tokenType: type,
      tokenTypeIdx: type.tokenTypeIdx!,
      startOffset: offset,
      endOffset: offset + image.length - 1,
    });
    const start = first.startOffset;
    const tokens = [
      at(first, 'select', Select, start - 17),
      at(first, '*', Star, start - 10),
      at(first, 'from', From, start - 8),
      at(first, '(', LParen, start - 2),
      ...this.tokens.slice(lo, hi),
      at(last, ')', RParen, (last.endOffset ?? last.startOffset) + 2),
    ];
    return this.simple(tokens, new Map());
  }

  /** `TABLE name` at `lo` (below `hi`) as a query (table-query.ts). */
  private tableQuery(lo: number, hi: number): SelectStmt {
    if (lo + 1 >= hi) throw this.endOfInput(hi);
    return this.simple(tableQueryTokens(this.tokens[lo]!, this.tokens[lo + 1]!), new Map());
  }

  /** One plain SELECT in [lo, hi), its derived tables parsed and replaced by placeholders. */
  private plainSelect(lo: number, hi: number): SelectStmt {
    const derived = new Map<IToken, SelectStmt>();
    const windows = new Map<IToken, FromCall>();
    const out: IToken[] = [];
    let depth = 0;
    for (let p = lo; p < hi; p++) {
      const token = this.tokens[p]!;
      if (token.tokenType === LParen && p + 1 < hi) {
        const close = this.closeOf[p] ?? -1;
        if (close > p && close < hi && this.holdsQuery(p, close)) {
          p = this.expressionSubquery(p, close, out, derived);
          continue;
        }
      }
      out.push(token);
      if (token.tokenType === LParen) depth++;
      else if (token.tokenType === RParen) depth--;
      else if (depth === 0 && isWordText(token, 'from')) {
        let end = p + 1;
        for (let d = 0; end < hi; end++) {
          const t = this.tokens[end]!;
          if (t.tokenType === LParen) d++;
          else if (t.tokenType === RParen) d--;
          else if (d === 0 && FROM_ENDS.some((w) => isWordText(t, w)) && !startsSystemTime(this.tokens, end))
            break;
        }
        this.fromRegion(p + 1, end, out, derived, windows);
        p = end - 1;
      }
    }
    return this.simple(out, derived, windows);
  }

  /**
   * A window table function at a FROM item's start (window-tvf-syntax.ts): parsed, and copied as one
   * placeholder name at the function's name, which the adapter maps back. Returns the index of its
   * last `)`.
   */
  private windowCall(p: number, out: IToken[], windows: Map<IToken, FromCall>): number {
    const { call, end } = readWindowCall(
      {
        tokens: this.tokens,
        closeOf: (open) => this.closeOf[open] ?? -1,
        query: (lo, hi) => this.query(lo, hi),
        expressions: (ranges) => this.expressionList(ranges),
      },
      p,
    );
    const first = this.tokens[p]!;
    const image = `_w${windows.size + 1}`;
    const placeholder = placeholderToken(first, image);
    windows.set(placeholder, call);
    out.push(placeholder);
    return end;
  }

  /** `unnest(a) [WITH ORDINALITY]` at a FROM item's start (unnest-syntax.ts), as windowCall does. */
  private unnestCall(p: number, out: IToken[], windows: Map<IToken, FromCall>): number {
    const { call, end } = readUnnestCall(
      {
        tokens: this.tokens,
        closeOf: (open) => this.closeOf[open] ?? -1,
        expressions: (ranges) => this.expressionList(ranges),
      },
      p,
    );
    const placeholder = placeholderToken(this.tokens[p]!, `_u${windows.size + 1}`);
    windows.set(placeholder, call);
    out.push(placeholder);
    return end;
  }

  /** Token ranges, each one expression (the arguments of a window function), read as `SELECT a, b`. */
  private expressionList(ranges: readonly (readonly [number, number])[]): Expr[] {
    if (ranges.length === 0) return [];
    const lo = ranges[0]![0];
    const hi = ranges[ranges.length - 1]![1];
    const first = this.tokens[lo]!;
    const select: IToken = {
      ...first,
      image: 'select',
      tokenType: Select,
      tokenTypeIdx: Select.tokenTypeIdx!,
      startOffset: first.startOffset - 7,
      endOffset: first.startOffset - 2,
    };
    const parsed = this.simple([select, ...this.tokens.slice(lo, hi)], new Map());
    return ranges.map(([start], i) => {
      const item = parsed.items[i];
      if (item?.kind !== 'expr' || item.alias !== undefined || parsed.items.length !== ranges.length) {
        throw syntaxErrorAt(this.tokens[start]!);
      }
      return item.expr;
    });
  }

  /**
   * A query in parentheses outside FROM (`x IN (SELECT ...)`, `EXISTS (SELECT ...)`, a scalar
   * subquery): parsed here, and copied as `(placeholder)`, the placeholder at the query's first
   * token, so node-sql-parser reads a name in parentheses and the adapter finds the query by it.
   * Returns the index of the closing `)`.
   */
  private expressionSubquery(
    open: number,
    close: number,
    out: IToken[],
    derived: Map<IToken, SelectStmt>,
  ): number {
    const query = this.query(open + 1, close);
    const first = this.tokens[open + 1]!;
    const image = `_s${derived.size + 1}`;
    const placeholder = placeholderToken(first, image);
    derived.set(placeholder, query);
    out.push(this.tokens[open]!, placeholder, this.tokens[close]!);
    return close;
  }

  /**
   * Copies the FROM items in [lo, hi) to `out`: a `(` where a relation may start (after FROM, JOIN,
   * a comma, or the `(` of a parenthesised join) opens a derived table when what it holds is a query,
   * else a join in parentheses, read the same way. Other parentheses (conditions, calls) are copied.
   */
  private fromRegion(
    lo: number,
    hi: number,
    out: IToken[],
    derived: Map<IToken, SelectStmt>,
    windows: Map<IToken, FromCall>,
  ): void {
    for (let p = lo; p < hi; p++) {
      const token = this.tokens[p]!;
      const before = this.tokens[p - 1];
      const atItem =
        p === lo || before?.tokenType === Comma || before?.tokenType === LParen || isWordText(before, 'join');
      // LATERAL before unnest: unnest in FROM reads the relations before it anyway (PostgreSQL)
      if (atItem && isWordText(token, 'lateral') && startsUnnestCall(this.tokens, p + 1)) {
        p = this.unnestCall(p + 1, out, windows);
        continue;
      }
      if (atItem && startsUnnestCall(this.tokens, p)) {
        p = this.unnestCall(p, out, windows);
        continue;
      }
      if (atItem && startsWindowCall(this.tokens, p)) {
        p = this.windowCall(p, out, windows);
        continue;
      }
      if (atItem && startsTemporalTable(this.tokens, p)) {
        // `t FOR SYSTEM_TIME AS OF PROCTIME()`: the name as a placeholder, the clause dropped.
        const { call, end } = readTemporalTable(this.tokens, p);
        const placeholder = placeholderToken(token, `_t${windows.size + 1}`);
        windows.set(placeholder, call);
        out.push(placeholder);
        p = end;
        continue;
      }
      if (token.tokenType !== LParen) {
        out.push(token);
        continue;
      }
      const close = this.closeOf[p] ?? -1;
      const prev = this.tokens[p - 1];
      const itemStart =
        p === lo || prev?.tokenType === Comma || prev?.tokenType === LParen || isWordText(prev, 'join');
      if (itemStart && close < 0) throw this.endOfInput(this.tokens.length);
      if (close < 0 || close >= hi || !itemStart) {
        const end = close < 0 || close >= hi ? hi : close + 1;
        for (let i = p; i < end; i++) out.push(this.tokens[i]!);
        p = end - 1;
        continue;
      }
      if (this.holdsQuery(p, close)) {
        const query = this.query(p + 1, close);
        const image = `_q${derived.size + 1}`;
        const placeholder = placeholderToken(token, image);
        derived.set(placeholder, query);
        out.push(placeholder);
      } else {
        out.push(token);
        this.fromRegion(p + 1, close, out, derived, windows);
        out.push(this.tokens[close]!);
      }
      p = close;
    }
  }

  /** Whether the parentheses at open…close hold a query (rather than a join). */
  private holdsQuery(open: number, close: number): boolean {
    const first = this.tokens[open + 1];
    if (isType(first, Select) || isWordText(first, 'with') || isWordText(first, 'table')) return true;
    if (first?.tokenType !== LParen) return false;
    const innerClose = this.closeOf[open + 1] ?? -1;
    if (innerClose < 0 || innerClose >= close) return false;
    const after = this.tokens[innerClose + 1];
    if (innerClose + 1 === close) return this.holdsQuery(open + 1, innerClose);
    return setWord(after) !== undefined || TAIL_WORDS.some((w) => isWordText(after, w));
  }
}

function hasTail(q: SelectStmt): boolean {
  return q.orderBy.length > 0 || q.limit !== undefined || q.offset !== undefined;
}

function withoutTail(q: SelectStmt): SelectStmt {
  const { limit: _limit, offset: _offset, ...rest } = q;
  return { ...rest, orderBy: [] };
}

function combine(
  o: { op: SetOperation['op']; all: boolean; pos: Pos },
  left: SelectStmt,
  right: SelectStmt,
): SelectStmt {
  return {
    kind: 'select',
    distinct: false,
    items: [],
    groupBy: [],
    orderBy: [],
    setOp: { op: o.op, all: o.all, left, right, pos: o.pos },
    pos: left.pos,
  };
}

/**
 * A name token standing in the SELECT's text for something read from the tokens (a derived table,
 * a scalar subquery, a window table function), at the position of `first`.
 */
function placeholderToken(first: IToken, image: string): IToken {
  return {
    ...first,
    image,
    tokenType: Identifier,
    tokenTypeIdx: Identifier.tokenTypeIdx!,
    endOffset: first.startOffset + image.length - 1,
  };
}
