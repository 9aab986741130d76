// Binds AST expressions to typed ScalarExprs: resolves column names against a scope, checks and
// coerces types (PostgreSQL's rules, simplified), folds constants and names output columns.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { castValue } from '../common/cast.ts';
import { normalizeBigInt } from '../common/values.ts';
import { Decimal, decimalFromShortest, parseDecimal } from '../common/decimal.ts';
import type { ScalarExpr, ScalarFn } from '../common/scalar-expr.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import { compileRegex, similarToRegex } from '../common/functions/regex.ts';
import type { SqlType, Value } from '../common/types.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import type { ColumnMeta } from './catalog.ts';
import { commonType, numericResultType, resolveTypeName } from './types-resolve.ts';
import { bindFunction } from './bind-functions.ts';
import { bindJsonbEditOperator, bindJsonbOperator, isJsonbOp } from './bind-jsonb.ts';
import { bindByteaConcat } from './bind-binary.ts';
import { bindArrayConstructor, bindArrayOperator, bindQuantified, isQuantified } from './bind-array.ts';
import { ARRAY_CONSTRUCTOR, ARRAY_SUBSCRIPT } from '../parser/expr-builder.ts';
import { bindTimeArithmetic, bindTimeNegation } from './bind-time.ts';
import { MORE_AGGREGATES } from './bind-aggregate-more.ts';
import { positionalCall } from './bind-named-args.ts';

/** One relation of a FROM with several: its columns sit at `offset` in the joined row. */
export interface ScopeRelation {
  /** What qualifies its columns: the alias, else the relation's name. */
  readonly name: string;
  readonly offset: number;
  readonly columns: readonly ColumnMeta[];
}

/** A column as an unqualified name or `*` sees it: a USING column merged from both sides is one. */
export interface VisibleColumn {
  readonly name: string;
  readonly expr: ScalarExpr;
}

export interface Scope {
  /** The relation's name and alias as a query may qualify columns with. */
  readonly relationNames: readonly string[];
  readonly relationLabel: string;
  /** The columns of the row expressions are bound over. */
  readonly columns: readonly ColumnMeta[];
  /**
   * A FROM with joins: qualified names resolve in `relations`, unqualified names and `*` in
   * `visible` (PostgreSQL's join column list: USING columns once, then each side's other columns).
   */
  readonly relations?: readonly ScopeRelation[];
  readonly visible?: readonly VisibleColumn[];
}

/** The columns `*` stands for (and unqualified names can reach). */
export function starColumns(scope: Scope): readonly { readonly name: string }[] {
  return scope.visible ?? scope.columns;
}

export interface BindContext {
  readonly scope: Scope | null;
  /** Called on every node first; returning an expression replaces binding that node. */
  readonly intercept?: (e: Expr) => ScalarExpr | undefined;
  /** Where aggregates are not allowed, e.g. "WHERE"; undefined means they are intercepted. */
  readonly aggregateContext?: string;
  /**
   * Results of binding subtrees in this context (which must have no `intercept`): once a tree is
   * bound, binding any of its subtrees again is a lookup.
   */
  readonly memo?: WeakMap<Expr, ScalarExpr>;
}

export const AGGREGATE_NAMES = new Set(['count', 'sum', 'avg', 'min', 'max', ...MORE_AGGREGATES.keys()]);

/** An aggregate call (one with OVER is a window function, bound by bind-window-functions.ts). */
export function isAggregateCall(e: Expr): boolean {
  return e.kind === 'function' && AGGREGATE_NAMES.has(e.name) && e.over === undefined;
}

/** The first aggregate call in `e` (pre-order), or undefined. An explicit stack: no recursion. */
export function findAggregate(e: Expr): Expr | undefined {
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (isAggregateCall(x)) return x;
    const children = exprChildren(x);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Expr);
  }
  return undefined;
}

export function containsAggregate(e: Expr): boolean {
  return findAggregate(e) !== undefined;
}

/** The direct subexpressions of an expression. */
export const childrenOf = exprChildren;

function typeMismatch(message: string, pos: Pos, hint?: string): SluiceError {
  return new SluiceError('TYPE_MISMATCH', message, {
    position: pos,
    ...(hint !== undefined ? { hint } : {}),
  });
}

function literalType(value: Value, kind: string): SqlType {
  switch (kind) {
    case 'null':
      return T.unknown;
    case 'boolean':
      return T.bool;
    case 'string':
      return T.text;
    case 'numeric':
      return T.numeric;
    default: {
      const v = value as number | bigint;
      if (typeof v === 'number' && v >= -2147483648 && v <= 2147483647) return T.int32;
      if (v >= -(2n ** 63n) && v <= 2n ** 63n - 1n) return T.int64;
      return T.numeric;
    }
  }
}

/**
 * A literal's constant: a numeric one (with a point or exponent, or an integer beyond bigint) is the
 * exact decimal of its source text, as PostgreSQL reads it.
 */
function literalConst(e: Extract<Expr, { kind: 'literal' }>): Extract<ScalarExpr, { kind: 'const' }> {
  const type = literalType(e.value, e.literalType);
  if (type.kind !== 'numeric') return { kind: 'const', value: e.value, type };
  let value: Decimal | null;
  try {
    value = typeof e.value === 'bigint' ? Decimal.fromInt(e.value) : parseDecimal(e.text ?? String(e.value));
  } catch (err) {
    throw err instanceof SluiceError ? err.at(e.pos) : err;
  }
  return { kind: 'const', value: value ?? decimalFromShortest(e.value as number), type };
}

export function isConst(e: ScalarExpr): e is Extract<ScalarExpr, { kind: 'const' }> {
  return e.kind === 'const';
}

/** Folds an expression whose inputs are all constants; errors stay runtime errors (raised now). */
function fold(e: ScalarExpr): ScalarExpr {
  return { kind: 'const', value: compileScalar(e)([]), type: e.type };
}

function allConst(args: readonly ScalarExpr[]): boolean {
  return args.every(isConst);
}

/** Implicit coercion of `e` to `to`: string literals adapt to any type; numbers widen. */
export function coerce(e: ScalarExpr, to: SqlType, pos: Pos): ScalarExpr {
  if (to.kind === 'unknown' || typeName(e.type) === typeName(to)) return e;
  if (e.type.kind === 'unknown')
    return isConst(e) ? { kind: 'const', value: null, type: to } : { ...e, type: to };
  if (isConst(e) && e.type.kind === 'text' && to.kind !== 'text') {
    try {
      return { kind: 'const', value: castValue(e.value, e.type, to), type: to };
    } catch (err) {
      throw err instanceof SluiceError ? err.at(pos) : err;
    }
  }
  if (to.kind === 'text' && e.type.kind === 'text') return e; // varchar/char → text keeps the value
  if (isNumeric(e.type) && isNumeric(to)) {
    if (to.kind === 'int' && e.type.kind !== 'int') {
      throw typeMismatch(`cannot implicitly convert ${typeName(e.type)} to ${typeName(to)}`, pos);
    }
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  if (e.type.kind === 'date' && to.kind === 'timestamp') return { kind: 'cast', operand: e, type: to };
  // int[] → bigint[] and the like: element by element, where the elements coerce (commonType chose `to`)
  const widened = e.type.kind === 'array' && to.kind === 'array' ? commonType([e.type, to]) : null;
  if (widened !== null && typeName(widened) === typeName(to)) {
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  if ((e.type.kind === 'date' || e.type.kind === 'timestamp') && to.kind === 'timestamptz') {
    const cast: ScalarExpr = { kind: 'cast', operand: e, type: to };
    return isConst(e) ? fold(cast) : cast;
  }
  throw typeMismatch(`cannot convert ${typeName(e.type)} to ${typeName(to)}`, pos);
}

function requireType(e: ScalarExpr, kind: SqlType['kind'], what: string, pos: Pos): ScalarExpr {
  if (e.type.kind === kind) return e;
  if (e.type.kind === 'unknown' || (isConst(e) && e.type.kind === 'text')) {
    return coerce(e, kind === 'bool' ? T.bool : kind === 'text' ? T.text : e.type, pos);
  }
  throw typeMismatch(
    `${what} must be type ${kind === 'bool' ? 'boolean' : kind}, not type ${typeName(e.type)}`,
    pos,
  );
}

export function call(fn: ScalarFn, args: ScalarExpr[], type: SqlType): ScalarExpr {
  const e: ScalarExpr = { kind: 'call', fn, args, type };
  return allConst(args) ? fold(e) : e;
}

const COMPARISONS: Partial<Record<string, ScalarFn>> = {
  '=': 'eq',
  '<>': 'ne',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
};
const ARITHMETIC: Partial<Record<string, ScalarFn>> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '/': 'div',
  '%': 'mod',
};

export function unify(args: ScalarExpr[], pos: Pos, what: string): ScalarExpr[] {
  // String constants take the type of the others when those agree on a non-text one, as PostgreSQL
  // resolves unknown literals ('1 day' in an IN list of intervals, '2024-01-01' in CASE over dates).
  const typed = args.filter((a) => !(isConst(a) && a.type.kind === 'text'));
  const others = commonType(typed.map((a) => a.type));
  if (typed.length < args.length && others !== null && others.kind !== 'text' && others.kind !== 'unknown')
    return args.map((a) => coerce(a, others, pos));
  const t = commonType(args.map((a) => a.type));
  if (t === null) {
    const names = [...new Set(args.map((a) => typeName(a.type)).filter((n) => n !== 'unknown'))];
    throw typeMismatch(`${what} types ${names.join(' and ')} cannot be matched`, pos);
  }
  // string literals compared with non-text adapt to the other side's type
  return args.map((a) => coerce(a, t, pos));
}

/** char(n) as text: PostgreSQL's bpchar semantics, trailing blanks are insignificant. */
export function unpadChar(e: ScalarExpr): ScalarExpr {
  if (e.type.kind !== 'text' || e.type.fixed !== true) return e;
  const c: ScalarExpr = { kind: 'cast', operand: e, type: T.text };
  return isConst(e) ? fold(c) : c;
}

function compare(fn: ScalarFn, opText: string, left: ScalarExpr, right: ScalarExpr, pos: Pos): ScalarExpr {
  let l = left.type.kind === 'text' && right.type.kind === 'text' ? unpadChar(left) : left;
  let r = left.type.kind === 'text' && right.type.kind === 'text' ? unpadChar(right) : right;
  if (isConst(l) && l.type.kind === 'text' && r.type.kind !== 'text' && r.type.kind !== 'unknown')
    l = coerce(l, r.type, pos);
  if (isConst(r) && r.type.kind === 'text' && l.type.kind !== 'text' && l.type.kind !== 'unknown')
    r = coerce(r, l.type, pos);
  const t = commonType([l.type, r.type]);
  if (t === null) {
    throw typeMismatch(
      `operator does not exist: ${typeName(l.type)} ${opText} ${typeName(r.type)}`,
      pos,
      'no operator matches the given name and argument types; you might need to add explicit type casts',
    );
  }
  return call(fn, [coerce(l, t, pos), coerce(r, t, pos)], T.bool);
}

/** Binds an expression. */
export function bindExpr(e: Expr, ctx: BindContext): ScalarExpr {
  const known = ctx.memo?.get(e);
  if (known !== undefined) return known;
  let bound: ScalarExpr;
  try {
    bound = bindNode(e, ctx);
  } catch (error) {
    // constant folding raises runtime errors at bind time: point them at the innermost node
    throw error instanceof SluiceError ? error.at(e.pos) : error;
  }
  ctx.memo?.set(e, bound);
  return bound;
}

/**
 * A chain of AND (or of OR) as one flat node. The chain is walked along its left spine by a loop,
 * so a chain of any length binds without deep recursion (each operand is bound on its own).
 */
function bindChain(e: Extract<Expr, { kind: 'binary' }>, op: 'and' | 'or', ctx: BindContext): ScalarExpr {
  const what = `argument of ${op.toUpperCase()}`;
  const spine: Extract<Expr, { kind: 'binary' }>[] = [e];
  let leftmost: Expr = e.left;
  let left: ScalarExpr | undefined;
  while (leftmost.kind === 'binary' && leftmost.op === op) {
    left = ctx.intercept?.(leftmost);
    if (left !== undefined) break;
    spine.push(leftmost);
    leftmost = leftmost.left;
  }
  const bottom = spine[spine.length - 1] as Extract<Expr, { kind: 'binary' }>;
  left ??= bindExpr(leftmost, ctx);
  const args: ScalarExpr[] = [];
  const add = (a: ScalarExpr): void => {
    if (a.kind === op) for (const x of a.args) args.push(x);
    else args.push(a);
  };
  add(requireType(left, 'bool', what, bottom.left.pos));
  for (let i = spine.length - 1; i >= 0; i--) {
    const node = spine[i] as Extract<Expr, { kind: 'binary' }>;
    try {
      add(requireType(bindExpr(node.right, ctx), 'bool', what, node.right.pos));
    } catch (error) {
      throw error instanceof SluiceError ? error.at(node.pos) : error;
    }
  }
  return { kind: op, args, type: T.bool };
}

/** NOT_SUPPORTED for a subquery where none is maintained (see bind-subquery.ts for where one is). */
export function subqueryHere(sub: Expr): SluiceError {
  const what =
    sub.kind === 'exists'
      ? 'EXISTS (subquery) other than as a condition of WHERE joined by AND'
      : 'a subquery in this position';
  return notSupported(
    what,
    sub.pos,
    'IN (SELECT …) and EXISTS go in WHERE, joined to the other conditions by AND; a scalar (SELECT …) in WHERE, HAVING or the select list',
  );
}

function bindNode(e: Expr, ctx: BindContext): ScalarExpr {
  const intercepted = ctx.intercept?.(e);
  if (intercepted !== undefined) return intercepted;
  const rec = (x: Expr): ScalarExpr => bindExpr(x, ctx);
  switch (e.kind) {
    case 'literal':
      return literalConst(e);
    case 'column':
      return resolveColumn(e.name, e.table, ctx.scope, e.pos);
    case 'unary': {
      if (e.op === 'not')
        return call('not', [requireType(rec(e.operand), 'bool', 'argument of NOT', e.pos)], T.bool);
      if (
        e.op === '-' &&
        e.operand.kind === 'literal' &&
        (e.operand.literalType === 'integer' || e.operand.literalType === 'numeric')
      ) {
        const c = literalConst(e.operand);
        if (c.value instanceof Decimal) return { ...c, value: c.value.neg() };
        const v = c.value as number | bigint;
        const value = typeof v === 'bigint' ? normalizeBigInt(-v) : -v;
        return { kind: 'const', value, type: literalType(value, e.operand.literalType) };
      }
      const operand = rec(e.operand);
      const o = operand.type.kind === 'unknown' ? coerce(operand, T.int32, e.pos) : operand;
      const negatedInterval = e.op === '-' ? bindTimeNegation(o) : undefined;
      if (negatedInterval !== undefined) return negatedInterval;
      if (!isNumeric(o.type))
        throw typeMismatch(`operator does not exist: ${e.op} ${typeName(o.type)}`, e.pos);
      return e.op === '+' ? o : call('neg', [o], o.type);
    }
    case 'binary': {
      if (e.op === 'and' || e.op === 'or') return bindChain(e, e.op, ctx);
      const left = rec(e.left);
      if (isQuantified(e.right)) {
        const quantified = e.right.args[0] as Expr;
        const array = quantified.kind === 'subquery' ? left : rec(quantified);
        return bindQuantified(e.op, left, e.right, array, e.pos);
      }
      const right = rec(e.right);
      if (e.op === '~' || e.op === '~*' || e.op === '!~' || e.op === '!~*') {
        return bindRegexMatch(e.op, left, right, e.right.pos, e.pos);
      }
      const arrayOp = bindArrayOperator(e.op, left, right, e.pos);
      if (arrayOp !== undefined) return arrayOp;
      if (isJsonbOp(e.op)) return bindJsonbOperator(e.op, left, right, e.pos, e.right.pos);
      const edited = bindJsonbEditOperator(e.op, left, right, e.pos);
      if (edited !== undefined) return edited;
      const cmp = COMPARISONS[e.op];
      if (cmp !== undefined) return compare(cmp, e.op, left, right, e.pos);
      if (e.op === '||') {
        const bytes = bindByteaConcat(left, right, e.pos);
        if (bytes !== undefined) return bytes;
        if (
          left.type.kind !== 'text' &&
          right.type.kind !== 'text' &&
          !(left.type.kind === 'unknown' || right.type.kind === 'unknown')
        ) {
          throw typeMismatch(
            `operator does not exist: ${typeName(left.type)} || ${typeName(right.type)}`,
            e.pos,
          );
        }
        return call('concat', [unpadChar(left), unpadChar(right)], T.text);
      }
      const arith = ARITHMETIC[e.op] as ScalarFn;
      const temporal = bindTimeArithmetic(e.op, left, right, e.pos);
      if (temporal !== undefined) return temporal;
      let l = left;
      let r = right;
      if (isConst(l) && l.type.kind === 'text' && isNumeric(r.type)) l = coerce(l, r.type, e.pos);
      if (isConst(r) && r.type.kind === 'text' && isNumeric(l.type)) r = coerce(r, l.type, e.pos);
      const lt = l.type.kind === 'unknown' ? (r.type.kind === 'unknown' ? T.int32 : r.type) : l.type;
      const rt = r.type.kind === 'unknown' ? lt : r.type;
      if (!isNumeric(lt) || !isNumeric(rt)) {
        throw typeMismatch(
          `operator does not exist: ${typeName(lt)} ${e.op} ${typeName(rt)}`,
          e.pos,
          'no operator matches the given name and argument types; you might need to add explicit type casts',
        );
      }
      // PostgreSQL's `^` is power: numeric ^ numeric, else double precision (2 ^ 3 is a double)
      if (e.op === '^') {
        const p = lt.kind === 'numeric' || rt.kind === 'numeric' ? T.numeric : T.float64;
        return call('power', [coerce(l, p, e.pos), coerce(r, p, e.pos)], p);
      }
      const t = numericResultType(lt, rt);
      return call(arith, [coerce(l, t, e.pos), coerce(r, t, e.pos)], t);
    }
    case 'isNull': {
      const operand = rec(e.operand);
      return call(e.negated ? 'is_not_null' : 'is_null', [operand], T.bool);
    }
    case 'between': {
      const x = rec(e.operand);
      const ge = compare('ge', '>=', x, rec(e.low), e.pos);
      const le = compare('le', '<=', x, rec(e.high), e.pos);
      const both: ScalarExpr = { kind: 'and', args: [ge, le], type: T.bool };
      return e.negated ? call('not', [both], T.bool) : both;
    }
    case 'subquery':
    case 'exists':
      throw subqueryHere(e);
    case 'inList': {
      if (e.list.length === 1 && e.list[0]?.kind === 'subquery') throw subqueryHere(e.list[0]);
      const all = unify([rec(e.operand), ...e.list.map(rec)], e.pos, 'IN');
      const [operand, ...list] = all as [ScalarExpr, ...ScalarExpr[]];
      return { kind: 'in', operand, list, negated: e.negated, type: T.bool };
    }
    case 'like': {
      const operand = unpadChar(requireType(rec(e.operand), 'text', 'argument of LIKE', e.operand.pos));
      const pattern = requireType(rec(e.pattern), 'text', 'pattern of LIKE', e.pattern.pos);
      if (e.similar === true) checkPattern(pattern, true, false, e.pattern.pos);
      const fn = e.similar === true ? 'similar_to' : e.caseInsensitive ? 'ilike' : 'like';
      const like = call(fn, [operand, pattern], T.bool);
      return e.negated ? call('not', [like], T.bool) : like;
    }
    case 'case': {
      const operand = e.operand === undefined ? undefined : rec(e.operand);
      const whens = e.whens.map((w) => ({
        when:
          operand === undefined
            ? requireType(rec(w.when), 'bool', 'argument of CASE/WHEN', w.when.pos)
            : compare('eq', '=', operand, rec(w.when), w.when.pos),
        then: rec(w.then),
      }));
      const elseExpr = e.else === undefined ? null : rec(e.else);
      const results = unify(
        [...whens.map((w) => w.then), ...(elseExpr === null ? [] : [elseExpr])],
        e.pos,
        'CASE',
      );
      const t = commonType(results.map((r) => r.type)) ?? T.unknown;
      return {
        kind: 'case',
        whens: whens.map((w, i) => ({ when: w.when, then: results[i] as ScalarExpr })),
        else: elseExpr === null ? null : (results[results.length - 1] as ScalarExpr),
        type: t,
      };
    }
    case 'cast': {
      const to = resolveTypeName(e.type);
      // ARRAY[] takes its type from the cast around it
      const emptyArray =
        e.operand.kind === 'function' && e.operand.name === ARRAY_CONSTRUCTOR && e.operand.args.length === 0;
      const operand = emptyArray ? bindArrayConstructor([], e.operand.pos, to) : rec(e.operand);
      const c: ScalarExpr = { kind: 'cast', operand, type: to };
      if (isConst(operand)) {
        try {
          return fold(c);
        } catch (err) {
          throw err instanceof SluiceError ? err.at(e.pos) : err;
        }
      }
      return c;
    }
    case 'function':
      if (e.argNames !== undefined) return bindExpr(positionalCall(e, ctx), ctx); // bind-named-args.ts
      if (e.filter !== undefined && !AGGREGATE_NAMES.has(e.name)) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `FILTER specified, but ${e.name} is not an aggregate function`,
          {
            position: e.pos,
          },
        );
      }
      return bindFunction(e, ctx);
  }
}

/** A constant pattern is compiled while binding, so a malformed one is an error at its position. */
export function checkPattern(
  pattern: ScalarExpr,
  similar: boolean,
  caseInsensitive: boolean,
  pos: Pos,
): void {
  if (!isConst(pattern) || typeof pattern.value !== 'string') return;
  try {
    compileRegex(similar ? similarToRegex(pattern.value) : pattern.value, caseInsensitive);
  } catch (err) {
    throw err instanceof SluiceError ? err.at(pos) : err;
  }
}

function bindRegexMatch(
  op: '~' | '~*' | '!~' | '!~*',
  left: ScalarExpr,
  right: ScalarExpr,
  patternPos: Pos,
  pos: Pos,
): ScalarExpr {
  const isText = (a: ScalarExpr): boolean => a.type.kind === 'text' || a.type.kind === 'unknown';
  if (!isText(left) || !isText(right)) {
    throw typeMismatch(
      `operator does not exist: ${typeName(left.type)} ${op} ${typeName(right.type)}`,
      pos,
      'no operator matches the given name and argument types; you might need to add explicit type casts',
    );
  }
  const l = unpadChar(coerce(left, T.text, pos));
  const r = unpadChar(coerce(right, T.text, pos));
  const insensitive = op.endsWith('*');
  checkPattern(r, false, insensitive, patternPos);
  const match = call(insensitive ? 'regex_imatch' : 'regex_match', [l, r], T.bool);
  return op.startsWith('!') ? call('not', [match], T.bool) : match;
}

export function resolveColumn(
  name: string,
  table: string | undefined,
  scope: Scope | null,
  pos: Pos,
): ScalarExpr {
  if (scope === null) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist`, {
      position: pos,
      hint: 'the query has no FROM clause',
    });
  }
  if (scope.relations !== undefined && scope.visible !== undefined)
    return resolveJoinColumn(name, table, scope.relations, scope.visible, pos);
  if (table !== undefined && !scope.relationNames.includes(table)) {
    throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${table}"`, {
      position: pos,
    });
  }
  const matches: number[] = [];
  scope.columns.forEach((c, i) => {
    if (c.name === name) matches.push(i);
  });
  if (matches.length > 1) {
    throw new SluiceError('AMBIGUOUS_COLUMN', `column reference "${name}" is ambiguous`, { position: pos });
  }
  const index = matches[0];
  if (index === undefined) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist in ${scope.relationLabel}`, {
      position: pos,
    });
  }
  const c = scope.columns[index] as ColumnMeta;
  return { kind: 'col', index, name: c.name, type: c.type };
}

function resolveJoinColumn(
  name: string,
  table: string | undefined,
  relations: readonly ScopeRelation[],
  visible: readonly VisibleColumn[],
  pos: Pos,
): ScalarExpr {
  if (table !== undefined) {
    const relation = relations.find((r) => r.name === table);
    if (relation === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${table}"`, {
        position: pos,
      });
    }
    const i = relation.columns.findIndex((c) => c.name === name);
    if (i < 0) {
      throw new SluiceError('UNKNOWN_COLUMN', `column ${table}.${name} does not exist`, { position: pos });
    }
    const c = relation.columns[i] as ColumnMeta;
    return { kind: 'col', index: relation.offset + i, name: c.name, type: c.type };
  }
  let found: ScalarExpr | undefined;
  for (const v of visible) {
    if (v.name !== name) continue;
    if (found !== undefined) {
      throw new SluiceError('AMBIGUOUS_COLUMN', `column reference "${name}" is ambiguous`, { position: pos });
    }
    found = v.expr;
  }
  if (found === undefined) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist`, { position: pos });
  }
  return found;
}

/** `left = right` typed as SQL compares them (both sides coerced to their common type). */
export function bindEquality(left: ScalarExpr, right: ScalarExpr, pos: Pos): ScalarExpr {
  return compare('eq', '=', left, right, pos);
}

/** PostgreSQL's default output column name for a select-list expression. */
export function defaultColumnName(e: Expr): string {
  switch (e.kind) {
    case 'column':
      return e.name;
    case 'function':
      // PostgreSQL: ARRAY[...] is "array", x[i] is named as x is
      if (e.name === ARRAY_CONSTRUCTOR) return 'array';
      if (e.name === ARRAY_SUBSCRIPT) return defaultColumnName(e.args[0] as Expr);
      return e.name === 'ceiling' ? 'ceiling' : e.name;
    case 'cast':
      return e.operand.kind === 'column' || e.operand.kind === 'function' || e.operand.kind === 'cast'
        ? defaultColumnName(e.operand)
        : lastTypeWord(e.type.name);
    case 'case':
      return 'case';
    case 'subquery': {
      // PostgreSQL names a scalar subquery by its one column (of its first branch, for a set op).
      let q = e.query;
      while (q.setOp !== undefined) q = q.setOp.left;
      const item = q.items[0];
      return item?.kind === 'expr' ? (item.alias ?? defaultColumnName(item.expr)) : '?column?';
    }
    default:
      return '?column?';
  }
}

function lastTypeWord(name: string): string {
  const map: Record<string, string> = {
    integer: 'int4',
    int: 'int4',
    bigint: 'int8',
    smallint: 'int2',
    'double precision': 'float8',
    real: 'float4',
    boolean: 'bool',
    'character varying': 'varchar',
    varchar: 'varchar',
  };
  return map[name] ?? name;
}

/** Functions that yield NULL from non-null arguments (an index out of range, no match, a NULL element). */
const MAY_BE_NULL: ReadonlySet<ScalarFn> = new Set<ScalarFn>([
  'array_subscript',
  'array_length',
  'array_position',
  'array_any',
  'array_all',
  'regexp_match',
]);

/** Whether an expression can yield NULL (conservative). */
export function nullable(e: ScalarExpr, columns: readonly ColumnMeta[]): boolean {
  switch (e.kind) {
    case 'const':
      return e.value === null;
    case 'col':
      return columns[e.index]?.nullable ?? true;
    case 'call':
      if (e.fn === 'is_null' || e.fn === 'is_not_null') return false;
      if (e.fn === 'nullif' || MAY_BE_NULL.has(e.fn)) return true;
      return e.args.some((a) => nullable(a, columns));
    case 'and':
    case 'or':
      return e.args.some((a) => nullable(a, columns));
    case 'coalesce':
      return e.args.every((a) => nullable(a, columns));
    case 'case':
      return e.else === null || nullable(e.else, columns) || e.whens.some((w) => nullable(w.then, columns));
    case 'in':
      return nullable(e.operand, columns) || e.list.some((a) => nullable(a, columns));
    case 'cast':
      return nullable(e.operand, columns);
  }
}
