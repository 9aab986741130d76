// Binds AST expressions to typed ScalarExprs, node by node: operators, CASE, casts, LIKE, IN, calls
// (typing rules in bind-coerce.ts, column names through bind-scope.ts, output columns in bind-column-meta.ts).
import { SluiceError, notSupported } from '../common/errors.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { normalizeBigInt } from '../common/values.ts';
import { Decimal } from '../common/decimal.ts';
import type { ScalarExpr, ScalarFn } from '../common/scalar-expr.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import { numericResultType, resolveTypeName } from './types-resolve.ts';
import { bindFunction } from './bind-functions.ts';
import { bindJsonbEditOperator, bindJsonbOperator, isJsonbOp } from './bind-jsonb.ts';
import { bindByteaConcat } from './bind-binary.ts';
import { bindArrayConstructor, bindArrayOperator, bindQuantified, isQuantified } from './bind-array.ts';
import { ARRAY_CONSTRUCTOR, isRow } from '../parser/expr-builder.ts';
import { bindTimeArithmetic, bindTimeNegation } from './bind-time.ts';
import { MORE_AGGREGATES } from './bind-aggregate-more.ts';
import { positionalCall } from './bind-named-args.ts';
import {
  call,
  checkPattern,
  coerce,
  compare,
  fold,
  isConst,
  isStringLiteral,
  markComputedText,
  literalConst,
  literalType,
  requireType,
  typeMismatch,
  unifyResults,
  unpadChar,
} from './bind-coerce.ts';
import { resolveColumn, type Scope } from './bind-scope.ts';
import { bindInList } from './bind-in-list.ts';
import { deriveCollation } from './bind-collation.ts';

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

/** Binds an expression. */
export function bindExpr(e: Expr, ctx: BindContext): ScalarExpr {
  const known = ctx.memo?.get(e);
  if (known !== undefined) return known;
  let bound: ScalarExpr;
  try {
    bound = bindNode(e, ctx);
    deriveCollation(e, bound);
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

const COMPARISONS: Partial<Record<string, ScalarFn>> = {
  '=': 'eq',
  '<>': 'ne',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
};
const NULL_SAFE_COMPARISONS: Partial<Record<string, ScalarFn>> = {
  'is distinct from': 'is_distinct_from',
  'is not distinct from': 'is_not_distinct_from',
};
const ARITHMETIC: Partial<Record<string, ScalarFn>> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '/': 'div',
  '%': 'mod',
};

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
      const nullSafe = NULL_SAFE_COMPARISONS[e.op];
      // PostgreSQL resolves IS [NOT] DISTINCT FROM as the `=` operator of the two types (its errors
      // name `=`): the same coercions, the same equality, with NULL equal to NULL.
      if (nullSafe !== undefined) return compare(nullSafe, '=', left, right, e.pos);
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
      if (isStringLiteral(l) && isNumeric(r.type)) l = coerce(l, r.type, e.pos);
      if (isStringLiteral(r) && isNumeric(l.type)) r = coerce(r, l.type, e.pos);
      const lt = l.type.kind === 'unknown' ? (r.type.kind === 'unknown' ? T.int32 : r.type) : l.type;
      const rt = r.type.kind === 'unknown' ? lt : r.type;
      if (!isNumeric(lt) || !isNumeric(rt)) {
        throw typeMismatch(
          `operator does not exist: ${typeName(lt)} ${e.op} ${typeName(rt)}`,
          e.pos,
          'no operator matches the given name and argument types; you might need to add explicit type casts',
        );
      }
      // PostgreSQL's `^` is power: numeric ^ numeric, else double precision (2 ^ 3 is a double); a
      // float operand makes it double precision (float to numeric is not an implicit cast)
      if (e.op === '^') {
        const anyFloat = lt.kind === 'float' || rt.kind === 'float';
        const p = !anyFloat && (lt.kind === 'numeric' || rt.kind === 'numeric') ? T.numeric : T.float64;
        return call('power', [coerce(l, p, e.pos), coerce(r, p, e.pos)], p);
      }
      const t = numericResultType(lt, rt);
      return call(arith, [coerce(l, t, e.pos), coerce(r, t, e.pos)], t);
    }
    case 'isNull': {
      const operand =
        e.unknown === true
          ? requireType(
              rec(e.operand),
              'bool',
              `argument of IS ${e.negated ? 'NOT ' : ''}UNKNOWN`,
              e.operand.pos,
            )
          : rec(e.operand);
      return call(e.negated ? 'is_not_null' : 'is_null', [operand], T.bool);
    }
    case 'between': {
      const x = rec(e.operand);
      const low = rec(e.low);
      const high = rec(e.high);
      const within = (from: ScalarExpr, to: ScalarExpr): ScalarExpr => ({
        kind: 'and',
        args: [compare('ge', '>=', x, from, e.pos), compare('le', '<=', x, to, e.pos)],
        type: T.bool,
      });
      // SYMMETRIC: within the bounds in either order, as PostgreSQL writes it (an OR of both, so a
      // NULL bound gives what that gives, not what least/greatest would)
      const both: ScalarExpr =
        e.symmetric === true
          ? { kind: 'or', args: [within(low, high), within(high, low)], type: T.bool }
          : within(low, high);
      return e.negated ? call('not', [both], T.bool) : both;
    }
    case 'subquery':
    case 'exists':
      throw subqueryHere(e);
    case 'inList': {
      if (e.list.length === 1 && e.list[0]?.kind === 'subquery') throw subqueryHere(e.list[0]);
      // char(n) compares without its padding ('ab'::char(5) IN ('ab') is true), as in compare()
      return bindInList(rec(e.operand), e.list.map(rec), e.negated, e.pos);
    }
    case 'like': {
      // PostgreSQL's bpcharlike, bpchariclike and bpcharregexeq (SIMILAR TO) match a char(n) value
      // with its padding ('ab'::char(5) LIKE 'ab' is false); a char(n) pattern is cast to text.
      const operand = requireType(rec(e.operand), 'text', 'argument of LIKE', e.operand.pos);
      const pattern = unpadChar(requireType(rec(e.pattern), 'text', 'pattern of LIKE', e.pattern.pos));
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
      const thens = whens.map((w) => w.then);
      // PostgreSQL resolves the type from the ELSE first, then the THENs (charResultType)
      const { args: results, type: t } = unifyResults(
        [...thens, ...(elseExpr === null ? [] : [elseExpr])],
        e.pos,
        'CASE',
        elseExpr === null ? thens : [elseExpr, ...thens],
      );
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
          const folded = fold(c);
          // A varchar constant beside char(n) compares as char(n), as PostgreSQL's bpchar = varchar
          // resolves ('a'::char(3) = 'a '::varchar is true): only `text` is typed text.
          const varchar = to.kind === 'text' && !/^(?:text|string)$/i.test(e.type.name);
          return varchar ? markComputedText({ ...folded }) : folded;
        } catch (err) {
          throw err instanceof SluiceError ? err.at(e.pos) : err;
        }
      }
      return c;
    }
    case 'function':
      if (isRow(e)) {
        throw notSupported(
          'a row constructor outside a comparison of rows',
          e.pos,
          'compare a row with a row: (a, b) = (1, 2), (a, b) < (c, d), (a, b) IN ((1, 2), (3, 4)) or (a, b) IN (SELECT x, y …)',
        );
      }
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
  // A char(n) value is matched with its padding (PostgreSQL's bpcharregexeq), a char(n) pattern
  // as text; coerce would unpad the value, so it is left as it is when it is already text.
  const l = left.type.kind === 'text' ? left : coerce(left, T.text, pos);
  const r = unpadChar(coerce(right, T.text, pos));
  const insensitive = op.endsWith('*');
  checkPattern(r, false, insensitive, patternPos);
  const match = call(insensitive ? 'regex_imatch' : 'regex_match', [l, r], T.bool);
  return op.startsWith('!') ? call('not', [match], T.bool) : match;
}
