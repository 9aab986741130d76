// Binding of arrays (section 9.19 of PostgreSQL's manual): ARRAY[...] with PostgreSQL's element type
// unification, subscripts, the array functions and operators (|| @> <@ && and x op ANY/ALL (a)),
// regexp_match / regexp_split_to_array (text[]) and jsonb's ?| ?&; plan functions in
// src/common/functions/array.ts.
import { SluiceError } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { SqlType } from '../common/types.ts';
import { T, arrayOf, typeName } from '../common/types.ts';
import type { QuantifiedOp } from '../common/functions/array.ts';
import { checkSearchFlags } from '../common/functions/compile-function.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { ARRAY_ALL, ARRAY_ANY, ARRAY_CONSTRUCTOR, ARRAY_SUBSCRIPT } from '../parser/expr-builder.ts';
import { call, checkPattern, coerce, isConst, isStringLiteral, unify, unpadChar } from './bind-coerce.ts';
import { commonType } from './types-resolve.ts';

type FunctionExpr = Extract<Expr, { kind: 'function' }>;

function mismatch(name: string, args: readonly ScalarExpr[], pos: Pos): SluiceError {
  return new SluiceError(
    'UNKNOWN_FUNCTION',
    `function ${name}(${args.map((a) => typeName(a.type)).join(', ')}) does not exist`,
    {
      position: pos,
      hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
    },
  );
}

function operatorMismatch(l: ScalarExpr, op: string, r: ScalarExpr, pos: Pos): SluiceError {
  return new SluiceError(
    'TYPE_MISMATCH',
    `operator does not exist: ${typeName(l.type)} ${op} ${typeName(r.type)}`,
    {
      position: pos,
      hint: 'no operator matches the given name and argument types; you might need to add explicit type casts',
    },
  );
}

const isArray = (t: SqlType): t is Extract<SqlType, { kind: 'array' }> => t.kind === 'array';

/** An argument that must be an array; a string literal stays unresolved (PostgreSQL cannot type it). */
function arrayArg(
  name: string,
  a: ScalarExpr | undefined,
  args: readonly ScalarExpr[],
  pos: Pos,
): ScalarExpr {
  if (a === undefined || !isArray(a.type)) throw mismatch(name, args, pos);
  return a;
}

/** An argument that must be text (a NULL or a string literal is text). */
function textArg(name: string, a: ScalarExpr | undefined, args: readonly ScalarExpr[], pos: Pos): ScalarExpr {
  if (a === undefined) throw mismatch(name, args, pos);
  if (a.type.kind === 'unknown') return coerce(a, T.text, pos);
  if (a.type.kind !== 'text') throw mismatch(name, args, pos);
  return unpadChar(a);
}

function intArg(name: string, a: ScalarExpr | undefined, args: readonly ScalarExpr[], pos: Pos): ScalarExpr {
  if (a === undefined) throw mismatch(name, args, pos);
  if (a.type.kind === 'int') return a;
  if (a.type.kind === 'unknown' || isStringLiteral(a)) return coerce(a, T.int32, pos);
  throw mismatch(name, args, pos);
}

/**
 * An element for an array of `element`: literals adapt, a narrower type widens (an integer into a
 * bigint[]); another type is `fail` (PostgreSQL would widen the array instead: cast it first).
 */
function elementArg(a: ScalarExpr, element: SqlType, pos: Pos, fail: () => SluiceError): ScalarExpr {
  if (a.type.kind === 'unknown' || isStringLiteral(a)) return coerce(a, element, pos);
  const t = commonType([a.type, element]);
  if (t === null || typeName(t) !== typeName(element)) throw fail();
  return coerce(a, element, pos);
}

/** Element types an array may have: the scalar types (not jsonb, not arrays). */
function checkElement(t: SqlType, pos: Pos): void {
  if (t.kind === 'array')
    throw new SluiceError('NOT_SUPPORTED', 'multidimensional arrays are not supported', { position: pos });
  if (t.kind === 'jsonb')
    throw new SluiceError('NOT_SUPPORTED', 'arrays of type jsonb are not supported', {
      position: pos,
      hint: 'build a jsonb array with jsonb_build_array or jsonb_agg',
    });
}

/** `ARRAY[...]`; `to` is the type of a cast around it (which types an empty constructor). */
export function bindArrayConstructor(args: ScalarExpr[], pos: Pos, to?: SqlType): ScalarExpr {
  if (args.length === 0) {
    if (to === undefined || !isArray(to))
      throw new SluiceError('TYPE_MISMATCH', 'cannot determine type of empty array', {
        position: pos,
        hint: 'explicitly cast to the desired type, for example ARRAY[]::integer[]',
      });
    return call('array_make', [], to);
  }
  const unified = unify(args, pos, 'ARRAY').map(unpadChar);
  let element = commonType(unified.map((u) => u.type)) ?? T.unknown;
  // PostgreSQL: ARRAY[NULL] and ARRAY['a'] are text[]
  if (element.kind === 'unknown') element = T.text;
  checkElement(element, pos);
  return call(
    'array_make',
    unified.map((u) => coerce(u, element, pos)),
    arrayOf(element),
  );
}

/** The array functions; undefined for a name that is not one. */
export function bindArrayFunction(e: FunctionExpr, args: ScalarExpr[]): ScalarExpr | undefined {
  const n = args.length;
  const [a0, a1, a2] = args;
  const pos = e.pos;
  switch (e.name) {
    case ARRAY_CONSTRUCTOR:
      return bindArrayConstructor(args, pos);
    case ARRAY_SUBSCRIPT: {
      const base = a0 as ScalarExpr;
      if (!isArray(base.type))
        throw new SluiceError(
          'TYPE_MISMATCH',
          `cannot subscript type ${typeName(base.type)} because it does not support subscripting`,
          { position: pos },
        );
      return call('array_subscript', [base, intArg('subscript', a1, args, pos)], base.type.element);
    }
    case ARRAY_ANY:
    case ARRAY_ALL:
      throw new SluiceError(
        'INVALID_DEFINITION',
        `${e.name === ARRAY_ANY ? 'ANY' : 'ALL'} (array) must follow a comparison operator`,
        { position: pos, hint: 'write x = ANY (array) or x <> ALL (array)' },
      );
    case 'unnest':
      throw new SluiceError('NOT_SUPPORTED', 'unnest in the select list is not supported', {
        position: pos,
        hint: 'unnest in FROM: SELECT t.id, u.x FROM t, unnest(t.a) AS u(x)',
      });
    case 'cardinality':
      if (n !== 1) throw mismatch(e.name, args, pos);
      return call('cardinality', [arrayArg(e.name, a0, args, pos)], T.int32);
    case 'array_length':
      if (n !== 2) throw mismatch(e.name, args, pos);
      return call('array_length', [arrayArg(e.name, a0, args, pos), intArg(e.name, a1, args, pos)], T.int32);
    case 'array_position': {
      if (n !== 2 && n !== 3) throw mismatch(e.name, args, pos);
      const arr = arrayArg(e.name, a0, args, pos);
      const element = (arr.type as Extract<SqlType, { kind: 'array' }>).element;
      const x = elementArg(a1 as ScalarExpr, element, pos, () => mismatch(e.name, args, pos));
      return call(
        'array_position',
        [arr, x, ...(a2 === undefined ? [] : [intArg(e.name, a2, args, pos)])],
        T.int32,
      );
    }
    case 'array_to_string':
      if (n !== 2 && n !== 3) throw mismatch(e.name, args, pos);
      return call(
        'array_to_string',
        [arrayArg(e.name, a0, args, pos), ...args.slice(1).map((a) => textArg(e.name, a, args, pos))],
        T.text,
      );
    case 'string_to_array':
      if (n !== 2 && n !== 3) throw mismatch(e.name, args, pos);
      return call(
        'string_to_array',
        args.map((a) => textArg(e.name, a, args, pos)),
        arrayOf(T.text),
      );
    case 'array_append':
    case 'array_prepend': {
      if (n !== 2) throw mismatch(e.name, args, pos);
      const [arrArg, elemArg] = e.name === 'array_append' ? [a0, a1] : [a1, a0];
      const arr = arrayArg(e.name, arrArg, args, pos);
      const element = (arr.type as Extract<SqlType, { kind: 'array' }>).element;
      const x = elementArg(elemArg as ScalarExpr, element, pos, () => mismatch(e.name, args, pos));
      return call(e.name, e.name === 'array_append' ? [arr, x] : [x, arr], arr.type);
    }
    case 'array_cat':
      if (n !== 2) throw mismatch(e.name, args, pos);
      return bindArrayCat(a0 as ScalarExpr, a1 as ScalarExpr, pos, () => mismatch(e.name, args, pos));
    case 'regexp_match':
    case 'regexp_split_to_array': {
      if (n !== 2 && n !== 3) throw mismatch(e.name, args, pos);
      const bound = args.map((a) => textArg(e.name, a, args, pos));
      const flags = bound[2];
      if (flags !== undefined && isConst(flags) && typeof flags.value === 'string') {
        try {
          if (e.name === 'regexp_match') checkSearchFlags(e.name, flags.value);
          else for (const f of flags.value) if (f !== 'i' && f !== 'c') checkSearchFlags(e.name, f);
        } catch (err) {
          throw err instanceof SluiceError ? err.at((e.args[2] as Expr).pos) : err;
        }
      }
      const insensitive = flags !== undefined && isConst(flags) && /i[^c]*$/.test(String(flags.value));
      checkPattern(bound[1] as ScalarExpr, false, insensitive, (e.args[1] as Expr).pos);
      return call(e.name, bound, arrayOf(T.text));
    }
    default:
      return undefined;
  }
}

function bindArrayCat(l: ScalarExpr, r: ScalarExpr, pos: Pos, fail: () => SluiceError): ScalarExpr {
  const lt = l.type.kind === 'unknown' ? r.type : l.type;
  const rt = r.type.kind === 'unknown' ? l.type : r.type;
  const t = commonType([lt, rt]);
  if (t === null || !isArray(t)) throw fail();
  return call('array_cat', [coerce(l, t, pos), coerce(r, t, pos)], t);
}

const QUANTIFIED: Partial<Record<string, QuantifiedOp>> = {
  '=': 'eq',
  '<>': 'ne',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
};

/** Whether `right` is `ANY (…)` / `ALL (…)`, which the comparison `op` takes as a whole. */
export function isQuantified(right: Expr): right is FunctionExpr {
  return right.kind === 'function' && (right.name === ARRAY_ANY || right.name === ARRAY_ALL);
}

/** `x op ANY (a)` / `x op ALL (a)` with `a` bound from the quantifier's one argument. */
export function bindQuantified(
  op: string,
  left: ScalarExpr,
  quantifier: FunctionExpr,
  array: ScalarExpr,
  pos: Pos,
): ScalarExpr {
  const fnOp = QUANTIFIED[op];
  const word = quantifier.name === ARRAY_ANY ? 'ANY' : 'ALL';
  if (fnOp === undefined)
    throw new SluiceError('NOT_SUPPORTED', `operator ${op} ${word} (array) is not supported`, {
      position: pos,
    });
  // `= ANY (SELECT …)` and `<> ALL (SELECT …)` are IN and NOT IN (the parser writes them so).
  if (quantifier.args[0]?.kind === 'subquery')
    throw new SluiceError('NOT_SUPPORTED', `operator ${op} ${word} (subquery) is not supported`, {
      position: quantifier.pos,
      hint:
        word === 'ANY'
          ? 'compare with the MIN or MAX of the subquery (a scalar subquery), or write EXISTS (SELECT … WHERE …)'
          : 'compare with the MIN or MAX of the subquery (a scalar subquery), or write NOT EXISTS (SELECT … WHERE …)',
    });
  let arr = array;
  if (
    isConst(arr) &&
    (arr.type.kind === 'text' || arr.type.kind === 'unknown') &&
    left.type.kind !== 'unknown'
  )
    arr = coerce(arr, arrayOf(left.type.kind === 'text' ? T.text : left.type), pos);
  if (!isArray(arr.type)) {
    throw new SluiceError('TYPE_MISMATCH', `op ${word} (array) requires array on right side`, {
      position: pos,
    });
  }
  const element = arr.type.element;
  const t = commonType([left.type, element]);
  if (t === null) throw operatorMismatch(left, op, { ...arr, type: element }, pos);
  const x = coerce(unpadChar(left), t, pos);
  const a = typeName(t) === typeName(element) ? arr : coerce(arr, arrayOf(t), pos);
  return call(
    quantifier.name === ARRAY_ANY ? 'array_any' : 'array_all',
    [x, a, { kind: 'const', value: fnOp, type: T.text }],
    T.bool,
  );
}

/** `||`, `@>`, `<@`, `&&` with an array side, and jsonb's `?|` `?&`; undefined when not one of them. */
function isUntypedNull(x: ScalarExpr): boolean {
  return isConst(x) && x.value === null && x.type.kind === 'unknown';
}

export function bindArrayOperator(
  op: string,
  l: ScalarExpr,
  r: ScalarExpr,
  pos: Pos,
): ScalarExpr | undefined {
  if (op === '?|' || op === '?&') {
    const j = l.type.kind === 'unknown' || isStringLiteral(l) ? coerce(l, T.jsonb, pos) : l;
    const keys = r.type.kind === 'unknown' || isStringLiteral(r) ? coerce(r, arrayOf(T.text), pos) : r;
    if (j.type.kind !== 'jsonb' || !isArray(keys.type) || keys.type.element.kind !== 'text')
      throw operatorMismatch(l, op, r, pos);
    return call(op === '?|' ? 'jsonb_exists_any' : 'jsonb_exists_all', [j, keys], T.bool);
  }
  if (!isArray(l.type) && !isArray(r.type)) return undefined;
  const fail = (): SluiceError => operatorMismatch(l, op, r, pos);
  const literal = (x: ScalarExpr): boolean => x.type.kind === 'unknown' || isStringLiteral(x);
  switch (op) {
    case '||': {
      if (isArray(l.type) && isArray(r.type)) return bindArrayCat(l, r, pos, fail);
      // an untyped NULL takes the array's type, as PostgreSQL resolves it: `'{}'::int[] || NULL` is
      // array_cat with a NULL array ('{}'), not array_append of a NULL element ('{NULL}')
      if (isArray(l.type) && isUntypedNull(r)) return bindArrayCat(l, coerce(r, l.type, pos), pos, fail);
      if (isArray(r.type) && isUntypedNull(l)) return bindArrayCat(coerce(l, r.type, pos), r, pos, fail);
      // a string literal on the other side is an array literal (PostgreSQL resolves it so)
      if (isArray(l.type)) {
        if (
          isConst(r) &&
          r.type.kind === 'text' &&
          r.value !== null &&
          String(r.value).trimStart().startsWith('{')
        )
          return bindArrayCat(l, coerce(r, l.type, pos), pos, fail);
        return call('array_append', [l, elementArg(r, l.type.element, pos, fail)], l.type);
      }
      const at = r.type as Extract<SqlType, { kind: 'array' }>;
      if (
        isConst(l) &&
        l.type.kind === 'text' &&
        l.value !== null &&
        String(l.value).trimStart().startsWith('{')
      )
        return bindArrayCat(coerce(l, at, pos), r, pos, fail);
      return call('array_prepend', [elementArg(l, at.element, pos, fail), r], at);
    }
    case '@>':
    case '<@':
    case '&&': {
      const x = literal(l) && isArray(r.type) ? coerce(l, r.type, pos) : l;
      const y = literal(r) && isArray(x.type) ? coerce(r, x.type, pos) : r;
      const t = commonType([x.type, y.type]);
      if (t === null || !isArray(t)) throw fail();
      const fn = op === '@>' ? 'array_contains' : op === '<@' ? 'array_contained' : 'array_overlap';
      return call(fn, [coerce(x, t, pos), coerce(y, t, pos)], T.bool);
    }
    default:
      return undefined;
  }
}
