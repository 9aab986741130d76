// Binding of the aggregates beyond COUNT/SUM/AVG/MIN/MAX: BOOL_AND, BOOL_OR, EVERY and the variance
// family (VAR_POP, VAR_SAMP, VARIANCE, STDDEV_POP, STDDEV_SAMP, STDDEV), STRING_AGG, JSONB_AGG and
// ARRAY_AGG and JSONB_OBJECT_AGG, with PostgreSQL's result types.
import { SluiceError, type SourcePosition, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, arrayOf, typeName } from '../common/types.ts';
import type { AggregateCall } from './logical-plan.ts';
import type { AggregateFn } from '../common/aggregate-fn.ts';
import { hasJsonbForm } from '../common/json/to-jsonb.ts';

/** SQL name → the aggregate it computes (EVERY is BOOL_AND; VARIANCE and STDDEV the sample forms). */
export const MORE_AGGREGATES: ReadonlyMap<string, AggregateFn> = new Map<string, AggregateFn>([
  ['bool_and', 'bool_and'],
  ['bool_or', 'bool_or'],
  ['every', 'bool_and'],
  ['var_pop', 'var_pop'],
  ['var_samp', 'var_samp'],
  ['variance', 'var_samp'],
  ['stddev_pop', 'stddev_pop'],
  ['stddev_samp', 'stddev_samp'],
  ['stddev', 'stddev_samp'],
  ['string_agg', 'string_agg'],
  ['jsonb_agg', 'jsonb_agg'],
  // Sluice's one JSON type is jsonb (docs/sql.md): json_agg is jsonb_agg
  ['json_agg', 'jsonb_agg'],
  ['array_agg', 'array_agg'],
  ['jsonb_object_agg', 'jsonb_object_agg'],
]);

/** Whether `fn` is one of the variance family (numeric or double precision result). */
export function isVarianceFn(fn: string): boolean {
  return fn === 'var_pop' || fn === 'var_samp' || fn === 'stddev_pop' || fn === 'stddev_samp';
}

/**
 * Binds `name(arg)` for a name in MORE_AGGREGATES. `mismatch` is the caller's "function does not
 * exist" error for an argument type the aggregate does not take.
 */
export function bindMoreAggregate(
  name: string,
  arg: ScalarExpr,
  distinct: boolean,
  pos: SourcePosition | undefined,
  mismatch: () => SluiceError,
  second?: ScalarExpr,
): AggregateCall {
  const fn = MORE_AGGREGATES.get(name) as AggregateFn;
  if (fn === 'string_agg') return bindStringAgg(arg, second as ScalarExpr, distinct, pos);
  if (fn === 'jsonb_agg') return bindJsonbAgg(name, arg, distinct, pos);
  if (fn === 'array_agg') return bindArrayAgg(arg, distinct, pos);
  if (fn === 'jsonb_object_agg') return bindJsonbObjectAgg(arg, second as ScalarExpr);
  if (fn === 'bool_and' || fn === 'bool_or') {
    if (arg.type.kind !== 'bool') throw mismatch();
    // DISTINCT cannot change a conjunction or disjunction: the same aggregate.
    return { fn, distinct: false, arg, column: { name, type: T.bool, nullable: true } };
  }
  const k = arg.type.kind;
  if (k !== 'int' && k !== 'numeric' && k !== 'float') throw mismatch();
  if (distinct) {
    throw notSupported(
      `${name.toUpperCase()}(DISTINCT ...)`,
      pos,
      'aggregate over SELECT DISTINCT in a derived table',
    );
  }
  // PostgreSQL: numeric for integer and numeric arguments, double precision for real and double.
  const type = k === 'float' ? T.float64 : T.numeric;
  return { fn, distinct: false, arg, column: { name, type, nullable: true } };
}

/**
 * STRING_AGG(text, delimiter): the delimiter must be a constant (PostgreSQL lets it vary per row,
 * each row's delimiter preceding its value; one constant keeps the result a function of the
 * group's multiset of values). A NULL delimiter joins with nothing, as PostgreSQL.
 */
function bindStringAgg(
  arg: ScalarExpr,
  delimiter: ScalarExpr,
  distinct: boolean,
  pos: SourcePosition | undefined,
): AggregateCall {
  const dk = delimiter.type.kind;
  if (arg.type.kind !== 'text' || (dk !== 'text' && dk !== 'unknown')) {
    throw new SluiceError(
      'UNKNOWN_FUNCTION',
      `function string_agg(${typeName(arg.type)}, ${typeName(delimiter.type)}) does not exist`,
      {
        ...(pos !== undefined ? { position: pos } : {}),
        hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
      },
    );
  }
  if (delimiter.kind !== 'const') {
    throw notSupported('STRING_AGG with a delimiter that is not a constant', pos);
  }
  const text = delimiter.value === null ? '' : String(delimiter.value);
  return {
    fn: 'string_agg',
    distinct,
    arg,
    delimiter: text,
    column: { name: 'string_agg', type: T.text, nullable: true },
  };
}

/**
 * JSONB_AGG(x): the argument becomes its jsonb element (a SQL NULL a JSON null, which PostgreSQL
 * keeps in the array), so the group's multiset holds jsonb values and the array lists them in
 * jsonb's order.
 */
function bindJsonbAgg(
  name: string,
  arg: ScalarExpr,
  distinct: boolean,
  pos: SourcePosition | undefined,
): AggregateCall {
  if (!hasJsonbForm(arg.type)) {
    throw notSupported(`${name.toUpperCase()}(${typeName(arg.type)})`, pos, 'cast the value to text first');
  }
  const element: ScalarExpr = { kind: 'call', fn: 'jsonb_agg_elem', args: [arg], type: T.jsonb };
  return { fn: 'jsonb_agg', distinct, arg: element, column: { name, type: T.jsonb, nullable: true } };
}

/**
 * ARRAY_AGG(x): each row's value wrapped as a one-element array, so a NULL (which ARRAY_AGG keeps)
 * is a value of the group's multiset like any other; the result lists them in the element type's
 * order (NULLs last), or in the ORDER BY written inside the call.
 */
function bindArrayAgg(arg: ScalarExpr, distinct: boolean, pos: SourcePosition | undefined): AggregateCall {
  if (arg.type.kind === 'array') throw notSupported('ARRAY_AGG of an array (a multidimensional array)', pos);
  if (arg.type.kind === 'jsonb') throw notSupported('ARRAY_AGG(jsonb)', pos, 'use JSONB_AGG');
  const type = arrayOf(arg.type);
  const element: ScalarExpr = { kind: 'call', fn: 'array_make', args: [arg], type };
  return { fn: 'array_agg', distinct, arg: element, column: { name: 'array_agg', type, nullable: true } };
}

/**
 * JSONB_OBJECT_AGG(key, value): each row's pair as one jsonb element [key text, value]
 * (object-agg-pair.ts; a NULL key is the row's error there), so the group keeps a multiset of pairs
 * like JSONB_AGG's elements and a delete retracts its pair. JSON_OBJECT_AGG is not this: json keeps
 * duplicate keys and input order, and Sluice has no json type.
 */
function bindJsonbObjectAgg(key: ScalarExpr, value: ScalarExpr): AggregateCall {
  const k: ScalarExpr = key.type.kind === 'unknown' ? { ...key, type: T.text } : key;
  const v: ScalarExpr = value.type.kind === 'unknown' ? { ...value, type: T.text } : value;
  const pair: ScalarExpr = { kind: 'call', fn: 'jsonb_object_agg_pair', args: [k, v], type: T.jsonb };
  // DISTINCT cannot change the object: each key keeps one value whatever the multiplicities
  return {
    fn: 'jsonb_object_agg',
    distinct: false,
    arg: pair,
    column: { name: 'jsonb_object_agg', type: T.jsonb, nullable: true },
  };
}
