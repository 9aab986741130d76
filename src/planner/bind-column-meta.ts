// What a select-list expression's output column is: PostgreSQL's default name for it, and whether
// its values can be NULL (conservatively, from the expression's form).
import type { Expr } from '../parser/ast.ts';
import type { ScalarExpr, ScalarFn } from '../common/scalar-expr.ts';
import type { ColumnMeta } from './catalog.ts';
import { ARRAY_CONSTRUCTOR, ARRAY_SUBSCRIPT, COLLATE_CALL } from '../parser/expr-builder.ts';

/** PostgreSQL's default output column name for a select-list expression. */
export function defaultColumnName(e: Expr): string {
  switch (e.kind) {
    case 'column':
      return e.name;
    case 'function':
      // PostgreSQL: ARRAY[...] is "array", x[i] is named as x is
      if (e.name === ARRAY_CONSTRUCTOR) return 'array';
      if (e.name === ARRAY_SUBSCRIPT) return defaultColumnName(e.args[0] as Expr);
      // x COLLATE "C" is named as x is ('?column?' for a literal)
      if (e.name === COLLATE_CALL) return defaultColumnName(e.args[0] as Expr);
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

/** Functions that yield a boolean whatever their arguments. */
const NEVER_NULL: ReadonlySet<ScalarFn> = new Set<ScalarFn>([
  'is_null',
  'is_not_null',
  'is_distinct_from',
  'is_not_distinct_from',
]);

/** Whether an expression can yield NULL (conservative). */
export function nullable(e: ScalarExpr, columns: readonly ColumnMeta[]): boolean {
  switch (e.kind) {
    case 'const':
      return e.value === null;
    case 'col':
      return columns[e.index]?.nullable ?? true;
    case 'call':
      if (NEVER_NULL.has(e.fn)) return false;
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
