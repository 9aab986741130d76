// `RETURNING …` of INSERT, UPDATE and DELETE: each item bound over the target table's row (by its
// alias when it has one) and computed for every row the statement writes — the inserted row, an
// UPDATE's new row, a DELETE's old row — before anything is applied, so an error in it or a result
// past the ad-hoc SELECT's bound (--max-result-rows/-bytes) refuses the statement whole. It only
// shapes the answer: the batch applied and journaled is the same with or without it.
import { SluiceError } from '../common/errors.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import type { Row, Value } from '../common/types.ts';
import type { SelectItem, Statement } from '../parser/ast.ts';
import { bindExpr } from '../planner/bind-expr.ts';
import { defaultColumnName, nullable } from '../planner/bind-column-meta.ts';
import { findSubquery } from '../planner/bind-subquery.ts';
import { refuseWindowIn } from '../planner/bind-window.ts';
import type { ColumnInfo } from '../common/types.ts';
import { columnInfos, type ColumnMeta, type TableDef } from '../planner/catalog.ts';
import { columnOverheads, resultTooLarge, rowJsonBytes, type ResultLimits } from './result-size.ts';
import { statementWord } from './dml-query.ts';
import { asSluiceError } from './table-definition.ts';

type DmlStatement = Extract<Statement, { kind: 'insert' | 'update' | 'delete' }>;

/** A statement's RETURNING list, bound: its output columns and how to compute them from a row. */
export interface ReturningList {
  readonly columns: readonly ColumnMeta[];
  /** The returned rows of the rows written (as the table stores them), or the statement's refusal. */
  rows(written: readonly (readonly Value[])[]): { columns: ColumnInfo[]; rows: Row[] };
}

const HINT = 'write fewer rows per statement (narrower WHERE ranges), or leave RETURNING out';

/**
 * Binds `stmt`'s RETURNING list over `def`'s row; null without one. What PostgreSQL refuses in it is
 * refused at the item (a window function here, an aggregate by the binder's `aggregateContext`); a
 * subquery, or a column of an UPDATE's FROM (a DELETE's USING) list, is not supported yet and refused
 * by name.
 */
export function bindReturning(stmt: DmlStatement, def: TableDef, limits: ResultLimits): ReturningList | null {
  const items = stmt.returning;
  if (items === undefined) return null;
  const statement = stmt.kind === 'insert' ? 'INSERT' : statementWord(stmt);
  const name = stmt.kind === 'insert' ? def.name : (stmt.alias ?? def.name);
  const scope = { relationNames: [name], relationLabel: `table "${def.name}"`, columns: def.columns };
  const from = stmt.kind === 'insert' ? undefined : stmt.from;
  const columns: ColumnMeta[] = [];
  const fns: ((row: readonly Value[]) => Value)[] = [];
  const positions: SelectItem['pos'][] = [];
  for (const item of items) {
    if (item.kind === 'star') {
      if (item.table !== undefined && item.table !== name) throw notInTarget(item.table, item.pos, from);
      // PostgreSQL's bare `*` there is the FROM (USING) list's columns too: refused, not cut short
      if (item.table === undefined && from !== undefined)
        throw notSupportedIn(`* over the ${statement === 'UPDATE' ? 'FROM' : 'USING'} list`, item.pos);
      def.columns.forEach((c, i) => {
        columns.push(c);
        fns.push((row) => row[i] as Value);
        positions.push(item.pos);
      });
      continue;
    }
    refuseWindowIn(item.expr, 'RETURNING');
    const subquery = findSubquery(item.expr);
    if (subquery !== undefined) throw notSupportedIn('a subquery', subquery.pos);
    let bound;
    try {
      bound = bindExpr(item.expr, { scope, aggregateContext: 'RETURNING' });
    } catch (error) {
      // A name the target does not have may be one of the FROM list's, which RETURNING cannot reach yet.
      const e = asSluiceError(error);
      if (from !== undefined && (e.code === 'UNKNOWN_COLUMN' || e.code === 'UNKNOWN_TABLE'))
        throw notSupportedIn(`a column of the ${statement === 'UPDATE' ? 'FROM' : 'USING'} list`, item.pos);
      throw e;
    }
    columns.push({
      name: item.alias ?? defaultColumnName(item.expr),
      type: bound.type,
      nullable: nullable(bound, def.columns),
    });
    fns.push(compileScalar(bound));
    positions.push(item.pos);
  }
  const overheads = columnOverheads(columns.map((c) => c.name));
  return {
    columns,
    rows(written) {
      const what = `the rows this ${statement} returns`;
      if (written.length > limits.maxRows) throw resultTooLarge(what, limits, HINT);
      const out: Row[] = [];
      let bytes = 0;
      const values: Value[] = [];
      for (const row of written) {
        const r: Row = {};
        for (let k = 0; k < fns.length; k++) {
          let v: Value;
          try {
            v = (fns[k] as (row: readonly Value[]) => Value)(row);
          } catch (error) {
            throw asSluiceError(error).at(positions[k] as SelectItem['pos']);
          }
          values[k] = v;
          r[(columns[k] as ColumnMeta).name] = v;
        }
        bytes += rowJsonBytes(values, overheads);
        if (bytes > limits.maxBytes) throw resultTooLarge(what, limits, HINT);
        out.push(r);
      }
      return { columns: columnInfos(columns), rows: out };
    },
  };
}

function notSupportedIn(what: string, position: SelectItem['pos']): SluiceError {
  return new SluiceError('NOT_SUPPORTED', `${what} in RETURNING is not supported`, {
    position,
    detail: "RETURNING reaches the target table's columns",
  });
}

/** `RETURNING u.*` for a relation other than the target. */
function notInTarget(table: string, position: SelectItem['pos'], from: unknown): SluiceError {
  if (from !== undefined) return notSupportedIn('a relation of the FROM (USING) list', position);
  return new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${table}"`, { position });
}
