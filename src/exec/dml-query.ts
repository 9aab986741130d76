// UPDATE and DELETE whose SET values or WHERE hold a subquery (`DELETE FROM t WHERE id IN (SELECT
// id FROM u)`, `UPDATE t SET a = (SELECT max(b) FROM u WHERE u.k = t.k)`): the statement's rows are
// read by one ad-hoc SELECT over the table — its columns as stored, then each SET value, under the
// statement's WHERE — so subqueries, correlated or not, mean what they mean in a query; dml.ts then
// writes those rows as one epoch, as it writes the rows it finds itself for a statement without one.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues } from '../common/values.ts';
import type { Expr, Pos, SelectItem, SelectStmt, Statement } from '../parser/ast.ts';
import { findAggregate } from '../planner/bind-expr.ts';
import { findSubquery } from '../planner/bind-subquery.ts';
import { refuseWindowIn } from '../planner/bind-window.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { TableStore } from './table-store.ts';

export type UpdateOrDelete = Extract<Statement, { kind: 'update' | 'delete' }>;

/** Whether the statement's WHERE or a SET value holds a subquery: then its rows are read by a query. */
export function readsSubquery(stmt: UpdateOrDelete): boolean {
  if (stmt.where !== undefined && findSubquery(stmt.where) !== undefined) return true;
  return stmt.kind === 'update' && stmt.assignments.some((a) => findSubquery(a.value) !== undefined);
}

/**
 * The query reading an UPDATE's or DELETE's rows: the table's columns (as stored), then each SET
 * value, under the WHERE. A SET value is a select item here, so what the statement itself refuses
 * in it (an aggregate, a window function) is refused first; the WHERE's are refused by the binder.
 */
export function statementQuery(stmt: UpdateOrDelete, def: TableDef): SelectStmt {
  const values = stmt.kind === 'update' ? stmt.assignments.map((a) => a.value) : [];
  for (const value of values) {
    const aggregate = findAggregate(value);
    if (aggregate !== undefined) {
      throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in UPDATE', {
        position: aggregate.pos,
      });
    }
    refuseWindowIn(value, 'UPDATE');
  }
  const pos = stmt.pos;
  const items: SelectItem[] = def.columns.map((c) => ({
    kind: 'expr',
    expr: columnOf(def, c.name, pos),
    pos,
  }));
  for (const value of values) items.push({ kind: 'expr', expr: value, pos: value.pos });
  return {
    kind: 'select',
    distinct: false,
    items,
    from: { kind: 'table', name: def.name, pos },
    ...(stmt.where !== undefined ? { where: stmt.where } : {}),
    groupBy: [],
    orderBy: [],
    pos,
  };
}

function columnOf(def: TableDef, name: string, pos: Pos): Expr {
  return { kind: 'column', table: def.name, name, pos };
}

/**
 * The rows a statement's query read at an earlier epoch, refused if any of them is no longer in the
 * table as it was read (the query ran in slices while other writes applied): writing them would
 * bring back a row deleted since, or overwrite a newer value. Nothing is changed then.
 */
export function refuseChangedSince(
  table: TableStore,
  rows: readonly (readonly Value[])[],
  statement: 'UPDATE' | 'DELETE',
): void {
  const pk = table.def.primaryKey;
  const wanted = new Map<string, { row: readonly Value[]; n: number }>();
  for (const row of rows) {
    if (pk !== null) {
      const stored = table.rowWithKey(pk.map((i) => row[i] as Value));
      if (stored === undefined || encodeExactValues(stored) !== encodeExactValues(row))
        throw changed(statement);
      continue;
    }
    const k = encodeExactValues(row);
    const seen = wanted.get(k);
    if (seen === undefined) wanted.set(k, { row, n: 1 });
    else seen.n++;
  }
  for (const { row, n } of wanted.values()) if (table.copiesOf(row) < n) throw changed(statement);
}

function changed(statement: 'UPDATE' | 'DELETE'): SluiceError {
  return new SluiceError(
    'SERIALIZATION_FAILURE',
    `could not serialize this ${statement}: rows it read were changed by another write while its subquery ran`,
    {
      detail: 'nothing was changed',
      hint: 'run the statement again',
    },
  );
}
