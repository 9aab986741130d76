// The limits of src/common/limits.ts that concern one statement: its tokens (count and nesting, checked
// before any parser runs, so no parser recursion can exhaust the stack) and its tree (expression
// depth and list lengths, checked before binding, so every later pass is bounded too). Each error
// points at the construct that crosses the limit.
import type { IToken } from 'chevrotain';
import type { Expr, FromItem, SelectStmt, Statement } from './ast.ts';
import { ARRAY_CONSTRUCTOR } from './expr-builder.ts';
import { SluiceError, type SourcePosition } from '../common/errors.ts';
import { parseDecimal } from '../common/decimal.ts';
import { MAX_NUMERIC_INTEGER_DIGITS, REPLAY_SQL_LIMITS, type SqlLimits } from '../common/limits.ts';
import {
  Case,
  Comma,
  End,
  False,
  Ident,
  identName,
  isType,
  isWordText,
  LParen,
  LBracket,
  Minus,
  niladicTypes,
  Not,
  Null,
  NumberLit,
  Plus,
  posOf,
  RBracket,
  RParen,
  StringLit,
  True,
} from './lexer.ts';

function tooDeep(max: number, position: SourcePosition): SluiceError {
  return new SluiceError('NESTING_TOO_DEEP', `expression is nested too deeply (more than ${max} levels)`, {
    position,
    detail: 'parentheses, function calls, CASE and prefix operators (NOT, unary minus) each add a level',
    hint: 'simplify the expression, or compute part of it in a view of its own',
  });
}

/** Refuses an identifier longer than `max` code points (its image may be longer: quotes, `""`). */
function checkIdentifier(token: IToken, max: number): void {
  const name = identName(token);
  let length = 0;
  for (let i = 0; i < name.length; i += name.codePointAt(i)! > 0xffff ? 2 : 1) {
    if (++length > max) {
      throw new SluiceError('NAME_TOO_LONG', `identifier is longer than ${max} characters`, {
        position: posOf(token),
        hint: 'choose a shorter name',
      });
    }
  }
}

/**
 * A numeric literal beyond numeric's range (131072 digits before the point, 16383 after) is
 * NUMERIC_OVERFLOW here, before node-sql-parser reads its digits with a big-integer library whose
 * work grows with the square of their count: a literal of a million digits held the event loop for
 * seconds, and then came back as a value numeric cannot hold.
 */
function checkNumberLiteral(token: IToken): void {
  try {
    parseDecimal(token.image);
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
    throw new SluiceError(error.code, error.message, {
      ...(error.detail !== undefined ? { detail: error.detail } : {}),
      position: posOf(token),
    });
  }
}

/**
 * Refuses the name `__proto__`: rows cross the API as JSON objects, where a field of that name sets
 * the object's prototype instead of holding a value, so such a column would vanish from every row.
 */
function checkNotProto(token: IToken): void {
  if (identName(token) !== '__proto__') return;
  throw new SluiceError('RESERVED_NAME', 'the name "__proto__" is reserved', {
    position: posOf(token),
    detail: 'rows are JSON objects, in which a field named "__proto__" cannot hold a value',
    hint: 'choose another name',
  });
}

/** Words that end a FROM clause (at its own nesting level). */
const FROM_ENDS = [
  'where',
  'group',
  'having',
  'order',
  'limit',
  'offset',
  'union',
  'intersect',
  'except',
  'window',
  'fetch',
  'for',
];

/** Words that end a select list (at its own nesting level). */
const SELECT_LIST_ENDS = ['from', 'into', ...FROM_ENDS];

/** Whether `token` ends an operand, so that a following `-`/`+` is infix rather than a sign. */
function endsOperand(token: IToken | undefined): boolean {
  if (token === undefined) return false;
  const type = token.tokenType;
  return (
    isType(token, Ident) ||
    type === NumberLit ||
    type === StringLit ||
    type === RParen ||
    type === RBracket ||
    type === End ||
    type === True ||
    type === False ||
    type === Null ||
    niladicTypes.includes(type)
  );
}

/**
 * Token count and nesting depth of one statement. Nesting is what the parsers recurse on: each
 * `(` and CASE opens a level (closed by its `)` or END), and each prefix operator nests its operand
 * one level deeper, so `NOT NOT (x)` is three levels deep.
 */
export function checkTokens(tokens: readonly IToken[], limits: SqlLimits): void {
  if (tokens.length > limits.maxStatementTokens) {
    throw new SluiceError(
      'STATEMENT_TOO_LARGE',
      `statement is too large (more than ${limits.maxStatementTokens} tokens)`,
      {
        position: posOf(tokens[limits.maxStatementTokens]!),
        hint: 'split it into several statements; send many rows through the ingest API',
      },
    );
  }
  const max = limits.maxNestingDepth;
  const opened: number[] = [];
  let level = 0;
  let prefixes = 0;
  // Items of a top-level select list so far (0: not in one). Counted here too, so that a list far
  // over the limit is refused before node-sql-parser spends ~10 µs on each of its tokens.
  let selectItems = 0;
  // Relations of the FROM being read (0: not in one): one, plus a JOIN or a top-level comma each.
  let fromRelations = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const type = token.tokenType;
    if (fromRelations > 0) {
      if (level === 0 && FROM_ENDS.some((w) => isWordText(token, w))) fromRelations = 0;
      else if ((level === 0 && type === Comma) || isWordText(token, 'join')) {
        if (++fromRelations > limits.maxFromRelations) {
          throw new SluiceError('TOO_MANY_ITEMS', `FROM has more than ${limits.maxFromRelations} relations`, {
            position: posOf(tokens[i + 1] ?? token),
            hint: 'join fewer relations in one view; a view over views can build on others',
          });
        }
      }
    } else if (level === 0 && isWordText(token, 'from')) fromRelations = 1;
    if (
      token.image.length > MAX_NUMERIC_INTEGER_DIGITS &&
      type === NumberLit &&
      limits !== REPLAY_SQL_LIMITS
    ) {
      checkNumberLiteral(token);
    }
    if (token.image.length > limits.maxIdentifierLength && isType(token, Ident)) {
      checkIdentifier(token, limits.maxIdentifierLength);
    }
    // A journal replay runs what an older version accepted (REPLAY_SQL_LIMITS), so it must not refuse it.
    if (
      token.image.length >= 9 &&
      token.image.length <= 11 &&
      isType(token, Ident) &&
      limits !== REPLAY_SQL_LIMITS
    )
      checkNotProto(token);
    if (level === 0) {
      if (isWordText(token, 'select')) selectItems = 1;
      else if (selectItems > 0 && SELECT_LIST_ENDS.some((w) => isWordText(token, w))) selectItems = 0;
      else if (selectItems > 0 && type === Comma && ++selectItems > limits.maxSelectItems) {
        throw new SluiceError(
          'TOO_MANY_ITEMS',
          `select list has more than ${limits.maxSelectItems} entries`,
          {
            position: posOf(tokens[i + 1] ?? token),
          },
        );
      }
    }
    // brackets (ARRAY[...], x[i]) nest as parentheses do: their commas are not the select list's
    if (type === LParen || type === Case || type === LBracket) {
      opened.push(level);
      level += prefixes + 1;
      prefixes = 0;
      if (level > max) throw tooDeep(max, posOf(token));
    } else if (type === RParen || type === End || type === RBracket) {
      level = opened.pop() ?? 0;
      prefixes = 0;
    } else if (type === Not || ((type === Minus || type === Plus) && !endsOperand(tokens[i - 1]))) {
      prefixes++;
      if (level + prefixes > max) throw tooDeep(max, posOf(token));
    } else prefixes = 0;
  }
}

/** The direct subexpressions of an expression. */
export function exprChildren(e: Expr): Expr[] {
  switch (e.kind) {
    case 'literal':
    case 'column':
    case 'subquery':
    case 'exists':
      // A nested query is a statement of its own: its limits were checked when it was parsed.
      return [];
    case 'unary':
    case 'isNull':
    case 'cast':
      return [e.operand];
    case 'binary':
      return [e.left, e.right];
    case 'between':
      return [e.operand, e.low, e.high];
    case 'inList':
      return [e.operand, ...e.list];
    case 'like':
      return [e.operand, e.pattern];
    case 'case': {
      const out: Expr[] = e.operand !== undefined ? [e.operand] : [];
      for (const w of e.whens) out.push(w.when, w.then);
      if (e.else !== undefined) out.push(e.else);
      return out;
    }
    case 'function':
      return e.filter === undefined ? [...e.args] : [...e.args, e.filter];
  }
}

/**
 * Whether `child` continues `parent`'s chain of AND (or of OR) on its left: such chains are
 * evaluated flat, so the child does not add a level.
 */
function continuesChain(parent: Expr, child: Expr): boolean {
  return (
    parent.kind === 'binary' &&
    (parent.op === 'and' || parent.op === 'or') &&
    child === parent.left &&
    child.kind === 'binary' &&
    child.op === parent.op
  );
}

function tooManyItems(message: string, position: SourcePosition): SluiceError {
  return new SluiceError('TOO_MANY_ITEMS', message, { position });
}

/** Depth and list lengths of every expression of a statement (an explicit stack: no recursion). */
function checkExprs(roots: readonly Expr[], limits: SqlLimits, nested: SelectStmt[] = []): void {
  const stack: { expr: Expr; depth: number }[] = roots.map((expr) => ({ expr, depth: 1 }));
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { expr, depth } = item;
    if (depth > limits.maxExpressionDepth) {
      throw new SluiceError(
        'NESTING_TOO_DEEP',
        `expression is too deep (more than ${limits.maxExpressionDepth} levels)`,
        {
          position: expr.pos,
          detail:
            'each operator, function call, cast and CASE adds a level; a chain of AND or of OR counts once',
          hint: 'simplify the expression, or compute part of it in a view of its own',
        },
      );
    }
    if (expr.kind === 'subquery' || expr.kind === 'exists') nested.push(expr.query);
    if (expr.kind === 'inList' && expr.list.length > limits.maxListItems) {
      throw tooManyItems(
        `IN list has more than ${limits.maxListItems} items`,
        expr.list[limits.maxListItems]!.pos,
      );
    }
    if (expr.kind === 'case' && expr.whens.length > limits.maxListItems) {
      throw tooManyItems(
        `CASE has more than ${limits.maxListItems} WHEN clauses`,
        expr.whens[limits.maxListItems]!.when.pos,
      );
    }
    // ARRAY[...] is a list, bounded like an IN list (not like a call's arguments)
    if (expr.kind === 'function' && expr.name === ARRAY_CONSTRUCTOR) {
      if (expr.args.length > limits.maxListItems) {
        throw tooManyItems(
          `ARRAY[...] has more than ${limits.maxListItems} elements`,
          expr.args[limits.maxListItems]!.pos,
        );
      }
    } else if (expr.kind === 'function' && expr.args.length > limits.maxFunctionArgs) {
      throw tooManyItems(
        `cannot pass more than ${limits.maxFunctionArgs} arguments to a function`,
        expr.args[limits.maxFunctionArgs]!.pos,
      );
    }
    for (const child of exprChildren(expr)) {
      stack.push({ expr: child, depth: continuesChain(expr, child) ? depth : depth + 1 });
    }
  }
}

/** Every SELECT of a query: set operation branches, WITH queries and derived tables too (a loop). */
function checkSelect(root: SelectStmt, limits: SqlLimits): void {
  const queries: SelectStmt[] = [root];
  for (let query = queries.pop(); query !== undefined; query = queries.pop()) {
    checkOneSelect(query, limits, queries);
    if (query.setOp !== undefined) queries.push(query.setOp.right, query.setOp.left);
    for (const cte of query.with ?? []) queries.push(cte.query);
    const from: FromItem[] = query.from !== undefined ? [query.from] : [];
    for (let item = from.pop(); item !== undefined; item = from.pop()) {
      if (item.kind === 'join') from.push(item.right, item.left);
      else if (item.kind === 'subquery') queries.push(item.query);
      else if (item.kind === 'windowTvf') from.push(item.source);
    }
  }
}

/** One SELECT's lists and expressions; the queries nested in its expressions go to `nested`. */
function checkOneSelect(query: SelectStmt, limits: SqlLimits, nested: SelectStmt[]): void {
  const max = limits.maxSelectItems;
  if (query.items.length > max) {
    throw tooManyItems(`select list has more than ${max} entries`, query.items[max]!.pos);
  }
  if (query.groupBy.length > max) {
    throw tooManyItems(`GROUP BY has more than ${max} items`, query.groupBy[max]!.pos);
  }
  if (query.orderBy.length > max) {
    throw tooManyItems(`ORDER BY has more than ${max} items`, query.orderBy[max]!.pos);
  }
  const roots: Expr[] = [];
  for (const item of query.items) if (item.kind === 'expr') roots.push(item.expr);
  // The conditions of ON, from a join tree that may be thousands deep (a loop, no recursion).
  const from: FromItem[] = query.from !== undefined ? [query.from] : [];
  for (let item = from.pop(); item !== undefined; item = from.pop()) {
    if (item.kind === 'windowTvf') roots.push(...item.args);
    if (item.kind === 'unnest') roots.push(...item.args);
    if (item.kind === 'values') {
      if (item.rows.length > limits.maxListItems) {
        throw tooManyItems(
          `VALUES has more than ${limits.maxListItems} rows`,
          item.rows[limits.maxListItems]![0]?.pos ?? item.pos,
        );
      }
      for (const row of item.rows) {
        if (row.length > max) throw tooManyItems(`VALUES has more than ${max} columns`, row[max]!.pos);
        roots.push(...row);
      }
    }
    if (item.kind !== 'join') continue;
    if (item.on !== undefined) roots.push(item.on);
    from.push(item.right, item.left);
  }
  if (query.where !== undefined) roots.push(query.where);
  roots.push(...query.groupBy);
  if (query.having !== undefined) roots.push(query.having);
  for (const o of query.orderBy) roots.push(o.expr);
  if (query.limit !== undefined) roots.push(query.limit);
  if (query.offset !== undefined) roots.push(query.offset);
  checkExprs(roots, limits, nested);
}

/** List lengths and expression depths of a parsed statement. */
export function checkStatement(stmt: Statement, limits: SqlLimits): void {
  switch (stmt.kind) {
    case 'createTable':
    case 'createSource':
      if (stmt.columns.length > limits.maxColumns) {
        const kind = stmt.kind === 'createTable' ? 'tables' : 'sources';
        throw tooManyItems(
          `${kind} can have at most ${limits.maxColumns} columns`,
          stmt.columns[limits.maxColumns]!.pos,
        );
      }
      return;
    case 'createView':
    case 'explain':
    case 'select':
      return checkSelect(stmt.query, limits);
    case 'insert': {
      if (stmt.query !== undefined) return checkSelect(stmt.query, limits);
      if (stmt.rows.length > limits.maxListItems) {
        const row = stmt.rows[limits.maxListItems]!;
        throw tooManyItems(`VALUES has more than ${limits.maxListItems} rows`, row[0]?.pos ?? stmt.pos);
      }
      const roots: Expr[] = [];
      for (const row of stmt.rows) {
        if (row.length > limits.maxColumns) {
          throw tooManyItems(
            `a VALUES row has more than ${limits.maxColumns} values`,
            row[limits.maxColumns]!.pos,
          );
        }
        for (const item of row) if (item.kind !== 'default') roots.push(item);
      }
      return checkExprs(roots, limits);
    }
    case 'update':
    case 'delete': {
      const roots = stmt.kind === 'update' ? stmt.assignments.map((a) => a.value) : [];
      if (stmt.from !== undefined) {
        // FROM (USING) and WHERE as the query they are read as (src/parser/dml-from.ts)
        checkExprs(roots, limits);
        return checkSelect(
          {
            kind: 'select',
            distinct: false,
            items: [],
            from: stmt.from.items,
            ...(stmt.where !== undefined ? { where: stmt.where } : {}),
            groupBy: [],
            orderBy: [],
            pos: stmt.pos,
          },
          limits,
        );
      }
      if (stmt.where !== undefined) roots.push(stmt.where);
      return checkExprs(roots, limits);
    }
    case 'createSink':
    case 'drop':
    case 'show':
      return;
  }
}
