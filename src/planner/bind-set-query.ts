// A set operation (UNION / INTERSECT / EXCEPT) bound as a whole query: the branches through
// bind-set-op.ts, then the output's names (a view's listed names, duplicates refused in a view) and
// the ORDER BY, LIMIT and OFFSET that may follow the last branch.
import { SluiceError } from '../common/errors.ts';
import type { SelectStmt } from '../parser/ast.ts';
import type { Catalog } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';
import type { BoundRelation } from './bind-from.ts';
import { bindSetOperation } from './bind-set-op.ts';
import { constInt } from './bind-row-count.ts';
import { planKey } from './plan-key.ts';
import { applyListedNames, uniqueColumnNames } from './bind-select-items.ts';
import type { BindOptions, BoundQuery, OrderKey } from './bind-select.ts';

/**
 * A set operation as a whole query: its columns named as the view lists them, and ORDER BY (an
 * output column's name or ordinal, as PostgreSQL allows after a set operation), LIMIT and OFFSET.
 */
export function bindSetQuery(
  stmt: SelectStmt,
  catalog: Catalog,
  options: BindOptions,
  bindBranch: (query: SelectStmt) => BoundRelation,
): BoundQuery {
  const bound = bindSetOperation(stmt, bindBranch);
  const names = bound.columns.map((c) => c.name);
  applyListedNames(names, options, stmt.pos);
  if (options.forView) {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n)) {
        throw new SluiceError('DUPLICATE_COLUMN', `column "${n}" specified more than once`, {
          position: stmt.pos,
          hint: "give the first branch's columns distinct names with AS, or list the view's column names",
        });
      }
      seen.add(n);
    }
  } else uniqueColumnNames(names).forEach((n, i) => (names[i] = n));
  const columns = bound.columns.map((c, i) => ({ ...c, name: names[i] as string }));
  const plan = { ...bound.plan, columns } as LogicalPlan;
  const orderBy: OrderKey[] = stmt.orderBy.map((o) => {
    let index = -1;
    if (o.expr.kind === 'literal' && o.expr.literalType === 'integer') {
      index = Number(o.expr.value) - 1;
      if (index < 0 || index >= columns.length) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `ORDER BY position ${String(o.expr.value)} is not in select list`,
          { position: o.pos },
        );
      }
    } else if (o.expr.kind === 'column' && o.expr.table === undefined) {
      const name = o.expr.name;
      const matches = columns.flatMap((c, i) => (c.name === name ? [i] : []));
      if (matches.length > 1)
        throw new SluiceError('AMBIGUOUS_COLUMN', `ORDER BY "${name}" is ambiguous`, { position: o.pos });
      index = matches[0] ?? -1;
    }
    if (index < 0) {
      throw new SluiceError('INVALID_DEFINITION', 'invalid UNION/INTERSECT/EXCEPT ORDER BY clause', {
        position: o.pos,
        detail: 'only result column names or positions can be used, not expressions or functions',
      });
    }
    return { index, desc: o.desc, nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first' };
  });
  const limit = stmt.limit === undefined ? undefined : constInt(stmt.limit, 'LIMIT');
  const offset = stmt.offset === undefined ? undefined : constInt(stmt.offset, 'OFFSET');
  return {
    plan,
    columns,
    key: planKey(plan, catalog),
    dependsOn: bound.dependsOn,
    orderBy,
    ...(limit !== undefined ? { limit } : {}),
    ...(offset !== undefined ? { offset } : {}),
  };
}
