// Scalar expressions as plain data (part of the DataflowPlan): the node kinds, the functions a call
// may name, and a node's children. The printer and the closure compiler are ./scalar-expr.ts, the
// code generator ./scalar-codegen.ts; the generator reads trees from here, so it does not import
// the compiler that calls it.
import type { SqlType, Value } from './types.ts';
import { FUNCTION_FNS, type FunctionFn } from './functions/compile-function.ts';

const CORE_FNS = [
  'add',
  'sub',
  'mul',
  'div',
  'mod',
  'neg',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'not',
  'is_null',
  'is_not_null',
  // IS [NOT] DISTINCT FROM: `=` / `<>` with NULL a value like any other (never NULL themselves)
  'is_distinct_from',
  'is_not_distinct_from',
  'like',
  'ilike',
  'concat',
  'abs',
  'floor',
  'ceil',
  'round',
  'lower',
  'upper',
  'length',
  'substring',
  'nullif',
  // A scalar subquery's value from its row count and its value (bind-scalar-subquery.ts).
  'subquery_value',
] as const;
/** Every function a call node may name: the operators above and the named functions of ./functions. */
export const SCALAR_FNS = [...CORE_FNS, ...FUNCTION_FNS] as const;
export type ScalarFn = (typeof CORE_FNS)[number] | FunctionFn;

export function isCoreFn(fn: ScalarFn): fn is (typeof CORE_FNS)[number] {
  return (CORE_FNS as readonly string[]).includes(fn);
}

export type ScalarExpr =
  | { readonly kind: 'const'; readonly value: Value; readonly type: SqlType }
  | { readonly kind: 'col'; readonly index: number; readonly name: string; readonly type: SqlType }
  | {
      readonly kind: 'call';
      readonly fn: ScalarFn;
      readonly args: readonly ScalarExpr[];
      readonly type: SqlType;
    }
  | { readonly kind: 'and' | 'or'; readonly args: readonly ScalarExpr[]; readonly type: SqlType }
  | {
      readonly kind: 'case';
      readonly whens: readonly { readonly when: ScalarExpr; readonly then: ScalarExpr }[];
      readonly else: ScalarExpr | null;
      readonly type: SqlType;
    }
  | { readonly kind: 'coalesce'; readonly args: readonly ScalarExpr[]; readonly type: SqlType }
  | {
      readonly kind: 'in';
      readonly operand: ScalarExpr;
      readonly list: readonly ScalarExpr[];
      readonly negated: boolean;
      readonly type: SqlType;
    }
  | { readonly kind: 'cast'; readonly operand: ScalarExpr; readonly type: SqlType };

export type RowFn = (row: readonly Value[]) => Value;

/** The operands of one expression node, in order (for walks over a tree). */
export function scalarChildren(e: ScalarExpr): readonly ScalarExpr[] {
  switch (e.kind) {
    case 'const':
    case 'col':
      return [];
    case 'call':
    case 'and':
    case 'or':
    case 'coalesce':
      return e.args;
    case 'case': {
      const out: ScalarExpr[] = [];
      for (const w of e.whens) out.push(w.when, w.then);
      if (e.else !== null) out.push(e.else);
      return out;
    }
    case 'in':
      return [e.operand, ...e.list];
    case 'cast':
      return [e.operand];
  }
}
