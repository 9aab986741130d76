// A SELECT's list as items to bind: `*` expanded to the columns it stands for (bounded by the
// select-list limit), each item named as its output column will be. Also the naming of output columns
// (unique suffixes for ad-hoc results) and ORDER BY items stripped of COLLATE, which bind-select.ts
// matches against these items.
import { SluiceError } from '../common/errors.ts';
import type { Expr, OrderItem, Pos, SelectStmt } from '../parser/ast.ts';
import { COLLATE_CALL } from '../parser/expr-builder.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { DEFAULT_SQL_LIMITS } from '../common/limits.ts';
import type { Scope, VisibleColumn } from './bind-scope.ts';
import { starColumns } from './bind-scope.ts';
import { defaultColumnName } from './bind-column-meta.ts';
import type { SelectItem } from './bind-group-by.ts';

/**
 * A select item for one column of a join's `*`: a relation's own column as a qualified reference;
 * a merged USING column (which no qualifier names) as a name whose binding is recorded in `preBound`.
 */
function visibleColumnExpr(
  v: VisibleColumn,
  scope: Scope,
  pos: Pos,
  preBound: WeakMap<Expr, ScalarExpr>,
): Expr {
  const e = v.expr;
  if (e.kind === 'col') {
    const r = scope.relations?.find((x) => e.index >= x.offset && e.index < x.offset + x.columns.length);
    if (r !== undefined && r.columns[e.index - r.offset]?.name === v.name)
      return { kind: 'column', table: r.name, name: v.name, pos };
  }
  const node: Expr = { kind: 'column', name: v.name, pos };
  preBound.set(node, e);
  return node;
}

/**
 * The select list's items. `*` over a USING join stands for merged columns no name can qualify:
 * their expansion is bound here, and every later binding of the select list sees it (`preBound`).
 */
export function expandSelectItems(
  stmt: SelectStmt,
  scope: Scope | null,
  maxSelectItems: number | undefined,
): { items: SelectItem[]; preBound: WeakMap<Expr, ScalarExpr> } {
  const preBound = new WeakMap<Expr, ScalarExpr>();
  const maxItems = maxSelectItems ?? DEFAULT_SQL_LIMITS.maxSelectItems;
  const items: SelectItem[] = [];
  for (const item of stmt.items) {
    if (
      items.length >= maxItems ||
      (item.kind === 'star' && items.length + (scope === null ? 0 : starColumns(scope).length) > maxItems)
    ) {
      throw new SluiceError('TOO_MANY_ITEMS', `select list has more than ${maxItems} entries`, {
        position: item.pos,
        ...(item.kind === 'star' ? { detail: 'counting the columns that * stands for' } : {}),
      });
    }
    if (item.kind === 'star') {
      if (scope === null)
        throw new SluiceError('INVALID_DEFINITION', 'SELECT * with no tables specified is not valid', {
          position: item.pos,
        });
      if (item.table !== undefined && !scope.relationNames.includes(item.table)) {
        throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${item.table}"`, {
          position: item.pos,
        });
      }
      const relation =
        item.table === undefined ? undefined : scope.relations?.find((r) => r.name === item.table);
      if (relation !== undefined) {
        for (const c of relation.columns)
          items.push({
            expr: { kind: 'column', table: relation.name, name: c.name, pos: item.pos },
            name: c.name,
            pos: item.pos,
          });
      } else if (scope.visible !== undefined) {
        // An unqualified * over a join: each column bound as it is, USING columns once.
        for (const v of scope.visible) {
          items.push({ expr: visibleColumnExpr(v, scope, item.pos, preBound), name: v.name, pos: item.pos });
        }
      } else {
        // Bound by position: a derived table may repeat a column name, which `*` still reaches.
        scope.columns.forEach((c, index) => {
          const expr: Expr = { kind: 'column', name: c.name, pos: item.pos };
          preBound.set(expr, { kind: 'col', index, name: c.name, type: c.type });
          items.push({ expr, name: c.name, pos: item.pos });
        });
      }
    } else {
      items.push({ expr: item.expr, name: item.alias ?? defaultColumnName(item.expr), pos: item.pos });
    }
  }
  return { items, preBound };
}

/**
 * Result rows are JSON objects, so a repeated name gets a suffix: count, count_2, count_3, ... Each
 * base name remembers the next suffix to try (names are only ever added, so every smaller suffix is
 * still taken): linear in the number of names, however many share one.
 */
export function uniqueColumnNames(names: readonly string[]): string[] {
  const used = new Set<string>();
  const nextSuffix = new Map<string, number>();
  return names.map((n) => {
    let name = n;
    if (used.has(name)) {
      let k = nextSuffix.get(n) ?? 2;
      for (name = `${n}_${k}`; used.has(name); name = `${n}_${k}`) k++;
      nextSuffix.set(n, k + 1);
    }
    used.add(name);
    return name;
  });
}

/** An ORDER BY item without its COLLATE clauses (`s COLLATE "C"` is s), for matching select items. */
export function uncollated(item: OrderItem): OrderItem {
  let expr = item.expr;
  while (expr.kind === 'function' && expr.name === COLLATE_CALL && expr.args.length === 1)
    expr = expr.args[0] as Expr;
  return expr === item.expr ? item : { ...item, expr };
}

/**
 * A view's listed column names (`CREATE MATERIALIZED VIEW v (a, b) AS …`) over the query's own, in
 * order; more names than columns is refused at the statement.
 */
export function applyListedNames(
  names: string[],
  options: { readonly columnNames?: readonly string[] | undefined; readonly viewName?: string | undefined },
  pos: Pos,
): void {
  const listed = options.columnNames;
  if (listed === undefined) return;
  if (listed.length > names.length) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `view "${options.viewName ?? ''}" has ${names.length} columns but ${listed.length} column names were given`,
      { position: pos },
    );
  }
  listed.forEach((n, i) => (names[i] = n));
}
