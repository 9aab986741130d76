// `x [NOT] IN (a, b, …)` where x or an item is char(n): typed item by item as PostgreSQL does, since
// there the padding decides the answer. Every other IN list keeps one common type over all its items.
import type { Pos } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T } from '../common/types.ts';
import { call, coerce, compare, isConst, unify, unpadChar } from './bind-coerce.ts';

const isChar = (e: ScalarExpr): boolean => e.type.kind === 'text' && e.type.fixed === true;

/** One `in` test over constants (or everything, when no char(n) is involved), in their common type. */
function inTest(operand: ScalarExpr, items: readonly ScalarExpr[], pos: Pos): ScalarExpr {
  // PostgreSQL's common type for string types is the first typed one: beside a char(n) operand even
  // constants typed text (`'ab '::text`, `upper(…)`) are read as char(n), so their trailing spaces
  // do not count ('ab'::char(4) IN ('ab '::text, 'zz'::text) is true, though = 'ab '::text is false).
  const first = [operand, ...items].find((e) => e.type.kind !== 'unknown');
  const typed =
    first !== undefined && isChar(first)
      ? items.map((e) =>
          isConst(e) && e.type.kind === 'text' && !isChar(e) ? coerce(e, first.type, pos) : e,
        )
      : items;
  const [x, ...list] = unify([operand, ...typed], pos, 'IN').map(unpadChar) as [ScalarExpr, ...ScalarExpr[]];
  return { kind: 'in', operand: x, list, negated: false, type: T.bool };
}

/**
 * PostgreSQL (transformAExprIn) splits an IN list: items that read a column are each an `x = item`
 * of their own (char(n) = text compares as text), and the other items, when there are two or more,
 * one `x = ANY (array)` in the common type of x and those items (char(n) when x is); a single one is
 * an `x = item` too. Joined with OR, which gives IN's NULL semantics.
 */
export function bindInList(
  operand: ScalarExpr,
  items: readonly ScalarExpr[],
  negated: boolean,
  pos: Pos,
): ScalarExpr {
  const constants = items.filter(isConst);
  const columns = items.filter((e) => !isConst(e));
  let test: ScalarExpr;
  if (!isChar(operand) && !items.some(isChar)) test = inTest(operand, items, pos);
  else {
    const tests = [...(constants.length > 1 ? [inTest(operand, constants, pos)] : constants), ...columns].map(
      (item) => (item.kind === 'in' ? item : compare('eq', '=', operand, item, pos)),
    );
    test = tests.length === 1 ? (tests[0] as ScalarExpr) : { kind: 'or', args: tests, type: T.bool };
  }
  if (!negated) return test;
  return test.kind === 'in' ? { ...test, negated: true } : call('not', [test], T.bool);
}
