// Calls in the SELECT adapter: function calls (named arguments, TRIM and POSITION's keyword forms),
// aggregates with DISTINCT, ORDER BY and FILTER, and window functions with their OVER clause and frame.
import type { IToken } from 'chevrotain';
import type { ArgName, Expr, Pos, WindowFrameSpec, WindowSpec } from '../ast.ts';
import { notSupported, parseError, SluiceError } from '../../common/errors.ts';
import { ARRAY_ALL, ARRAY_ANY, functionCall } from '../expr-builder.ts';
import { Comma, identName, isWordText, LParen, posOf, RParen, Star } from '../lexer.ts';
import { type Node, isNode, child, list, present, callArguments } from './loose-ast.ts';
import { isNamedArgument } from './adapter-tokens.ts';
import { readFrameOffset } from './frame-offset.ts';
import { ExpressionConverter } from './expression-converter.ts';

/** Window functions (beside the aggregates with OVER) the binder maintains. */
export const WINDOW_FUNCTIONS = [
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
];

export const AGGREGATE_WINDOW_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max', 'string_agg'];

/** The hint of a window function refused by name (PostgreSQL takes any aggregate with OVER). */
export const WINDOW_FUNCTIONS_HINT =
  'the window functions supported are ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE and COUNT, SUM, AVG, MIN, MAX, STRING_AGG with OVER';

/** A keyword node-sql-parser leaves among a call's arguments (`BOTH`, `FROM`, `IN`). */
export function isOrigin(arg: unknown): arg is Node {
  return isNode(arg) && arg['type'] === 'origin';
}

/** An aggregate call with its FILTER condition, when it has one. */
export function withFilter(call: Expr, filter: Expr | undefined): Expr {
  return filter === undefined || call.kind !== 'function' ? call : { ...call, filter };
}

/** Calls of node-sql-parser's tree converted to our AST; the statement-level converter extends it. */
export abstract class CallConverter extends ExpressionConverter {
  /** `ANY (array)` / `SOME` / `ALL` on the right of a comparison: a call the binder pairs with it. */
  protected quantifier(node: Node, lower: string): Expr {
    const word = this.peek();
    if (word === undefined) this.lost();
    this.index++;
    this.expect(LParen);
    const args = callArguments(child(node, 'args'));
    if (args.length !== 1) throw notSupported(`${lower.toUpperCase()} (...) with a list`, posOf(word));
    const array = this.expression(args[0]).expr;
    this.expect(RParen);
    return functionCall(lower === 'all' ? ARRAY_ALL : ARRAY_ANY, [array], {}, posOf(word));
  }

  /**
   * A window function call: `ROW_NUMBER() | RANK() | DENSE_RANK() | PERCENT_RANK() | CUME_DIST() |
   * NTILE(n) | LAG/LEAD(x [, n [, default]]) | FIRST_VALUE(x) | LAST_VALUE(x) | NTH_VALUE(x, n)
   * OVER (...)` (aggregates with OVER come through aggregateNode); the name is our token's (see
   * renderTokens: node-sql-parser reads PERCENT_RANK and CUME_DIST as other names). Other window
   * functions are NOT_SUPPORTED.
   */
  protected windowCall(node: Node): Expr {
    const nameToken = this.name(true);
    const fn = identName(nameToken);
    const pos = posOf(nameToken);
    // STRING_AGG(x, d) OVER comes as LAG (adapter-tokens.ts): an aggregate, bound as one.
    if (!WINDOW_FUNCTIONS.includes(fn) && fn !== 'string_agg') {
      throw notSupported(`window function ${fn.toUpperCase()}`, pos, WINDOW_FUNCTIONS_HINT);
    }
    this.expect(LParen);
    if (isWordText(this.peek(), 'distinct')) throw notSupported('DISTINCT in a window function', this.here());
    const args = callArguments(child(node, 'args')).map((arg, i) => {
      if (i > 0) this.comma();
      return this.expression(arg).expr;
    });
    this.expect(RParen);
    if (isWordText(this.peek(), 'ignore') || isWordText(this.peek(), 'respect'))
      throw notSupported(`${this.peek()!.image.toUpperCase()} NULLS`, this.here());
    if (isWordText(this.peek(), 'from'))
      throw notSupported(
        `${fn.toUpperCase()} ... FROM ${this.peek(1)?.image.toUpperCase() ?? ''}`,
        this.here(),
      );
    const over = this.windowSpec(node);
    return { kind: 'function', name: fn, args, distinct: false, star: false, over, pos };
  }

  /** `OVER ([PARTITION BY exprs] [ORDER BY items] [ROWS frame])` after a call. */
  protected windowSpec(node: Node): WindowSpec {
    const overToken = this.word('over');
    const window = child(node, 'over');
    const spec = child(child(window ?? {}, 'as_window_specification') ?? {}, 'window_specification');
    if (spec === undefined) throw notSupported('named window', this.here());
    this.expect(LParen);
    const partitionBy: Expr[] = [];
    if (isWordText(this.peek(), 'partition')) {
      this.word('partition');
      this.word('by');
      // Columns alone node-sql-parser read; other items were hidden from it and parsed apart
      // (hiddenPartitionItems).
      const partitions = list(spec, 'partitionby');
      let i = 0;
      do {
        const item = partitions[i++];
        const hidden = this.hiddenExpression(this.index - 1);
        partitionBy.push(hidden ?? this.expression(isNode(item) ? item['expr'] : item).expr);
      } while (this.optionalComma());
    }
    const orderBy = this.orderByList(spec);
    // The frame is read from our tokens only (renderTokens hides it from node-sql-parser).
    const frame = ['rows', 'range', 'groups'].some((w) => isWordText(this.peek(), w))
      ? this.windowFrame()
      : undefined;
    this.expect(RParen);
    return { partitionBy, orderBy, ...(frame !== undefined ? { frame } : {}), pos: posOf(overToken) };
  }

  /**
   * `ROWS start` or `ROWS BETWEEN start AND end` (read from our tokens), each bound UNBOUNDED
   * PRECEDING, n PRECEDING, CURRENT ROW, n FOLLOWING or UNBOUNDED FOLLOWING, with PostgreSQL's
   * checks of their order. RANGE/GROUPS frames and EXCLUDE are NOT_SUPPORTED.
   */
  protected windowFrame(): WindowFrameSpec {
    const unit = this.peek();
    const pos = this.here();
    if (!isWordText(unit, 'rows')) {
      throw notSupported(
        `${unit?.image.toUpperCase() ?? ''} window frame`,
        pos,
        'write ROWS BETWEEN … AND …, or no frame (RANGE UNBOUNDED PRECEDING)',
      );
    }
    this.index++;
    const between = this.optionalWord('between') !== undefined;
    const start = this.frameBound(true);
    const end = between
      ? (this.word('and'), this.frameBound(false))
      : { offset: 0, unbounded: false, pos: start.pos };
    const invalid = (message: string, at: Pos): SluiceError =>
      new SluiceError('INVALID_DEFINITION', message, { position: at });
    if (start.unbounded && start.offset !== null && start.offset > 0)
      throw invalid('frame start cannot be UNBOUNDED FOLLOWING', start.pos);
    if (end.unbounded && end.offset !== null && end.offset < 0)
      throw invalid('frame end cannot be UNBOUNDED PRECEDING', end.pos);
    const s = start.unbounded ? null : start.offset;
    const e = end.unbounded ? null : end.offset;
    if (!between && s !== null && s > 0)
      throw invalid('frame starting from following row cannot end with current row', start.pos);
    if (s === 0 && e !== null && e < 0)
      throw invalid('frame starting from current row cannot have preceding rows', end.pos);
    if (s !== null && s > 0 && e !== null && e <= 0)
      throw invalid('frame starting from following row cannot have preceding rows', end.pos);
    if (isWordText(this.peek(), 'exclude')) throw notSupported('window frame EXCLUDE', this.here());
    const rangeError = start.rangeError ?? end.rangeError;
    return { start: s, end: e, pos, ...(rangeError === undefined ? {} : { rangeError }) };
  }

  /**
   * One frame bound as an offset from the current row (negative: PRECEDING, 0: CURRENT ROW); an
   * UNBOUNDED bound has `unbounded` set and the offset's sign (-1 PRECEDING, 1 FOLLOWING).
   */
  protected frameBound(start: boolean): {
    offset: number | null;
    unbounded: boolean;
    pos: Pos;
    rangeError?: { message: string; pos: Pos };
  } {
    const pos = this.here();
    let rangeError: { message: string; pos: Pos } | undefined;
    if (this.optionalWord('current') !== undefined) {
      this.word('row');
      return { offset: 0, unbounded: false, pos };
    }
    let n = 1;
    const unbounded = this.optionalWord('unbounded') !== undefined;
    if (!unbounded) {
      // A number or a constant integer expression (`1 + 1 PRECEDING`), computed here
      const offset = readFrameOffset((ahead) => this.peek(ahead));
      this.index += offset.taken;
      rangeError = offset.rangeError;
      if (offset.value < 0n) {
        // PostgreSQL's own order: the range error when folding, then the sign when running
        if (rangeError !== undefined) {
          throw new SluiceError('NUMERIC_OVERFLOW', rangeError.message, { position: rangeError.pos });
        }
        const which = start ? 'starting' : 'ending';
        throw new SluiceError('INVALID_DEFINITION', `frame ${which} offset must not be negative`, {
          position: pos,
        });
      }
      // An offset beyond 2^53 - 1 rows reaches as far as UNBOUNDED in any partition this engine can
      // hold, so it is kept as that many (PostgreSQL takes any bigint offset).
      n = offset.value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(offset.value);
    }
    const sign = this.optionalWord('following') !== undefined ? 1 : (this.word('preceding'), -1);
    return { offset: sign * n || 0, unbounded, pos, ...(rangeError === undefined ? {} : { rangeError }) };
  }

  protected functionCallNode(node: Node): Expr {
    const lower = this.functionName(node);
    if (lower === 'exists' && isWordText(this.peek(), 'exists')) return this.existsNode(node);
    if (lower === 'any' || lower === 'some' || lower === 'all') return this.quantifier(node, lower);
    if (present(node, 'over') && WINDOW_FUNCTIONS.includes(lower)) return this.windowCall(node);
    const nameToken = this.name();
    const pos = posOf(nameToken);
    if (present(node, 'over'))
      throw notSupported(`window function ${nameToken.image.toUpperCase()}`, pos, WINDOW_FUNCTIONS_HINT);
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
    const names: (ArgName | undefined)[] = [];
    const args = rawArgs.map((arg, i) => {
      if (i > 0) this.comma();
      if (isNode(arg) && arg['type'] === 'origin') {
        throw notSupported(
          `${nameToken.image.toUpperCase()}(... ${String(arg['value']).toUpperCase()} ...)`,
          pos,
        );
      }
      const named = this.argumentName();
      if (named === undefined && names.some((n) => n !== undefined)) {
        // PostgreSQL's grammar: positional arguments come first
        throw parseError('positional argument cannot follow named argument', this.here());
      }
      if (named !== undefined && names.some((n) => n?.name === named.name)) {
        throw parseError(`argument name "${named.name}" used more than once`, named.pos);
      }
      names.push(named);
      return this.expression(arg).expr;
    });
    this.expect(RParen);
    const filter = this.filterClause(node) ?? this.hiddenFilter();
    this.rejectCallSuffix({ ...node, filter: null }, pos);
    const call = functionCall(identName(nameToken), args, { distinct }, pos);
    const named = names.some((n) => n !== undefined) && call.kind === 'function';
    return withFilter(named ? { ...call, argNames: names } : call, filter);
  }

  /** `name =>` or `name :=` before an argument (hidden from node-sql-parser, see renderTokens). */
  private argumentName(): ArgName | undefined {
    if (!isNamedArgument(this.peek(), this.peek(1), this.peek(2))) return undefined;
    const token = this.peek() as IToken;
    this.index += 3;
    return { name: identName(token), pos: posOf(token) };
  }

  /**
   * `TRIM([BOTH | LEADING | TRAILING] [chars] FROM s)` and `TRIM([spec] [FROM] s [, chars])` as
   * btrim / ltrim / rtrim (s [, chars]), the names PostgreSQL gives them.
   */
  protected trimArguments(rawArgs: readonly unknown[], pos: Pos): Expr {
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
  protected positionArguments(rawArgs: readonly unknown[], pos: Pos): Expr {
    const first = this.expression(rawArgs[0]).expr;
    const written = isWordText(this.peek(), 'in'); // rendered as a comma, see markPosition
    this.comma();
    const second = this.expression(rawArgs[1]).expr;
    return functionCall('position', written ? [second, first] : [first, second], {}, pos);
  }

  protected aggregateNode(node: Node): Expr {
    const nameToken = this.name();
    const pos = posOf(nameToken);
    const args = child(node, 'args');
    if (args === undefined) this.lost();
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
    // `agg(x, … ORDER BY y [DESC] …)`: the binder decides which aggregates take it.
    const orderBy = this.orderByList(args);
    this.expect(RParen);
    const filter = this.filterClause(node);
    if (present(node, 'over')) {
      if (orderBy.length > 0) throw notSupported('ORDER BY inside a window aggregate', orderBy[0]!.pos);
      return this.windowAggregate(node, values, distinct, filter, pos);
    }
    this.rejectCallSuffix({ ...node, filter: null }, pos);
    const call = functionCall(identName(nameToken), values, { distinct }, pos);
    return withFilter(orderBy.length > 0 && call.kind === 'function' ? { ...call, orderBy } : call, filter);
  }

  /** `agg(x) OVER (...)`: an aggregate as a window function (no DISTINCT, no FILTER). */
  protected windowAggregate(
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
      throw notSupported(`window function ${name.toUpperCase()}`, pos, WINDOW_FUNCTIONS_HINT);
    const over = this.windowSpec(node);
    return { kind: 'function', name, args, distinct: false, star: args.length === 0, over, pos };
  }

  /**
   * The expression after tokens[before] that node-sql-parser did not see, parsed apart
   * (from-converter.ts reads it), the cursor moved past it; undefined when node-sql-parser saw it.
   */
  protected abstract hiddenExpression(before: number): Expr | undefined;

  /** A comma at the cursor, consumed; whether there was one. */
  private optionalComma(): boolean {
    if (this.peek()?.tokenType !== Comma) return false;
    this.index++;
    return true;
  }

  /** A FILTER clause node-sql-parser did not see (from-converter.ts reads it): its condition. */
  protected hiddenFilter(): Expr | undefined {
    return undefined;
  }

  /** `FILTER (WHERE cond)` after an aggregate's parentheses: the condition, or undefined. */
  protected filterClause(node: Node): Expr | undefined {
    const filter = child(node, 'filter');
    if (filter === undefined || !present(filter, 'where')) return undefined;
    this.word('filter');
    this.expect(LParen);
    this.word('where');
    const cond = this.expression(filter['where']).expr;
    this.expect(RParen);
    return cond;
  }

  protected rejectCallSuffix(node: Node, pos: Pos): void {
    if (present(node, 'filter')) throw notSupported('aggregate FILTER', pos);
    if (present(node, 'over')) throw notSupported('window function', pos);
    if (present(node, 'within_group') || isWordText(this.peek(), 'within')) {
      throw notSupported('WITHIN GROUP', pos);
    }
  }

  protected caseNode(node: Node): Expr {
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
}
