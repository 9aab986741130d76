// UPDATE … FROM u and DELETE … USING u, and UPDATE and DELETE whose SET values or WHERE hold a
// subquery (`DELETE FROM t WHERE id IN (SELECT id FROM u)`, `UPDATE t SET a = (SELECT max(b) FROM u
// WHERE u.k = t.k)`): the statement's rows are read by one ad-hoc SELECT over the table — its columns
// as stored, then each SET value, the table joined to the FROM (USING) list under the statement's
// WHERE — so joins and subqueries, correlated or not, mean what they mean in a query; dml.ts then
// writes those rows as one epoch (each table row once: dml-from-rows.ts), as it writes the rows it
// finds itself for a statement without one.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues } from '../common/values.ts';
import type { FromItem, SelectItem, SelectStmt, Statement } from '../parser/ast.ts';
import { findAggregate } from '../planner/bind-expr.ts';
import { findSubquery } from '../planner/bind-subquery.ts';
import { refuseWindowIn } from '../planner/bind-window.ts';
import type { ColumnMeta, TableDef } from '../planner/catalog.ts';
import type { SelectJob } from './select-job.ts';
import type { TableStore } from './table-store.ts';

export type UpdateOrDelete = Extract<Statement, { kind: 'update' | 'delete' }>;

/** The statement's word, as its errors name it. */
export function statementWord(stmt: UpdateOrDelete): 'UPDATE' | 'DELETE' {
  return stmt.kind === 'update' ? 'UPDATE' : 'DELETE';
}

/**
 * Whether the statement's rows are read by a query: it joins a FROM (USING) list, or its WHERE or a
 * SET value holds a subquery.
 */
export function readsSubquery(stmt: UpdateOrDelete): boolean {
  if (stmt.from !== undefined) return true;
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
  // The table by its alias when it has one: the statement's expressions call it by that name alone.
  const name = stmt.alias ?? def.name;
  const items: SelectItem[] = def.columns.map((c) => ({
    kind: 'expr',
    expr: { kind: 'column', table: name, name: c.name, pos },
    pos,
  }));
  for (const value of values) items.push({ kind: 'expr', expr: value, pos: value.pos });
  const target: FromItem = {
    kind: 'table',
    name: def.name,
    ...(stmt.alias !== undefined ? { alias: stmt.alias } : {}),
    pos,
  };
  return {
    kind: 'select',
    distinct: false,
    items,
    // FROM u, v (USING u, v): joined to the table as a FROM list is, by the WHERE (the table first,
    // as PostgreSQL's plan names it; the rows are the same in any order)
    from:
      stmt.from === undefined
        ? target
        : {
            kind: 'join',
            joinKind: 'cross',
            left: target,
            right: stmt.from.items,
            natural: false,
            pos: stmt.from.pos,
          },
    ...(stmt.where !== undefined ? { where: stmt.where } : {}),
    groupBy: [],
    orderBy: [],
    pos,
  };
}

/** The rows an UPDATE's or DELETE's query read: the table's columns, then each SET value. */
export interface QueriedRows {
  readonly columns: readonly ColumnMeta[];
  readonly rows: readonly (readonly Value[])[];
  /** The epoch the query read the table at. */
  readonly readAt: number;
  /** Table rows the query examined (all of them, however many slices it ran in). */
  readonly examined: number;
}

/**
 * A finished statement query's rows, as the write takes them: the one place they are made, for a
 * statement run whole and for a script's run in slices alike.
 */
export function queriedRows(job: SelectJob): QueriedRows {
  return { ...job.rowValues(), readAt: job.epoch, examined: job.rowsRead };
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
        throw changedSinceRead(statement);
      continue;
    }
    const k = encodeExactValues(row);
    const seen = wanted.get(k);
    if (seen === undefined) wanted.set(k, { row, n: 1 });
    else seen.n++;
  }
  for (const { row, n } of wanted.values()) if (table.copiesOf(row) < n) throw changedSinceRead(statement);
}

/** SERIALIZATION_FAILURE: rows the statement's query read were changed before its write. */
export function changedSinceRead(statement: 'UPDATE' | 'DELETE'): SluiceError {
  return new SluiceError(
    'SERIALIZATION_FAILURE',
    `could not serialize this ${statement}: rows it read were changed by another write while its subquery ran`,
    {
      detail: 'nothing was changed',
      hint: 'run the statement again',
    },
  );
}
