// INSERT, UPDATE and DELETE statements: each resolved to one batch of row changes on one table and
// applied as one epoch through the engine. VALUES are bound and assignment-cast per column (with
// DEFAULTs and NOT NULL), UPDATE/DELETE read the rows their WHERE selects — by key when it pins the
// primary key (src/exec/key-lookup.ts), else the whole table — counting the rows they examine; one
// with a subquery or a FROM (USING) list is handed the rows its query read (dml-query.ts).
import { SluiceError } from '../common/errors.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import type { Row, SqlType, Value } from '../common/types.ts';
import { typeName } from '../common/types.ts';
import { bigintAsText, encodeValues } from '../common/values.ts';
import type { DmlFrom, Expr, Pos, SelectStmt, Statement } from '../parser/ast.ts';
import { bindExpr } from '../planner/bind-expr.ts';
import type { ColumnMeta, TableDef } from '../planner/catalog.ts';
import type { StatementResult, TableChanges } from './api.ts';
import type { ApplyOptions } from './engine-types.ts';
import { refuseAppendOnlyStatement } from './engine-writes.ts';
import {
  type QueriedRows,
  refuseChangedSince,
  statementQuery,
  statementWord,
  type UpdateOrDelete,
} from './dml-query.ts';
import { onePerTableRow } from './dml-from-rows.ts';
import { bindReturning, type ReturningList } from './dml-returning.ts';
import type { ResultLimits } from './result-size.ts';
import { pinnedKeys } from './key-lookup.ts';
import { asSluiceError, assignCast } from './table-definition.ts';
import type { TableStore } from './table-store.ts';

/** What DML needs of the engine. */
export interface DmlEngine {
  /** The table a statement may write (a view, sink or source is refused at `pos`). */
  tableForWrite(name: string, pos: { line: number; column: number }): TableStore;
  /** Applies one batch to a table as one epoch, validated whole. */
  applyChanges(
    table: string,
    changes: TableChanges,
    options?: ApplyOptions,
  ): { accepted: number; epoch: number };
  currentEpoch(): number;
  /** The bounds of an ad-hoc SELECT's result, which a RETURNING list's rows keep too. */
  resultLimits(): ResultLimits;
}

export class DmlStatements {
  /** Table rows UPDATE and DELETE have examined, all statements together. */
  rowsExamined = 0;
  /**
   * Most rows one UPDATE or DELETE may change. Its changes are one epoch, applied in one piece on
   * the caller's thread (a 1M-row DELETE held a server's event loop ≈ 4 s, an UPDATE ≈ 8 s); the
   * server sets a bound, an embedding program may keep none.
   */
  maxRows = Infinity;

  constructor(private readonly engine: DmlEngine) {}

  /**
   * INSERT … VALUES, or INSERT … SELECT with `selected`, the query's result (read at the current
   * epoch, before this write): either way one batch, one epoch, every value assignment-cast to its
   * column and checked whole before anything is applied.
   */
  insert(
    stmt: Extract<Statement, { kind: 'insert' }>,
    selected?: { readonly columns: readonly ColumnMeta[]; readonly rows: readonly (readonly Value[])[] },
  ): StatementResult {
    const { table, targets } = this.insertTarget(stmt);
    const def = table.def;
    const returning = bindReturning(stmt, def, this.engine.resultLimits());
    const rows =
      selected === undefined
        ? this.valuesRows(stmt, def, targets)
        : selectedRows(stmt, def, targets, selected);
    // Computed before the write: an error in it, or too many rows, leaves the table as it was.
    const returned = returning === null ? null : returning.rows(insertedRows(table, rows, stmt.pos));
    // One INSERT repeating a key is refused whole, where a request's later row would replace it.
    const r = this.applyWrite(def.name, { insert: rows }, stmt.pos, { refuseRepeatedKeys: true });
    return { statement: 'INSERT', object: def.name, rowCount: rows.length, epoch: r.epoch, ...returned };
  }

  /**
   * The table an INSERT writes and the column index of each of its target columns; refused (a view
   * or source, an unknown or repeated column) before an INSERT … SELECT's query is run.
   */
  insertTarget(stmt: Extract<Statement, { kind: 'insert' }>): { table: TableStore; targets: number[] } {
    const table = this.engine.tableForWrite(stmt.table, stmt.pos);
    const def = table.def;
    const names = stmt.columns ?? def.columns.map((c) => c.name);
    const targets = names.map((n) => {
      const i = def.columns.findIndex((c) => c.name === n);
      if (i < 0)
        throw new SluiceError('UNKNOWN_COLUMN', `column "${n}" of relation "${def.name}" does not exist`, {
          position: stmt.pos,
        });
      return i;
    });
    if (new Set(names).size !== names.length) {
      throw new SluiceError('DUPLICATE_COLUMN', 'column specified more than once', { position: stmt.pos });
    }
    return { table, targets };
  }

  private valuesRows(
    stmt: Extract<Statement, { kind: 'insert' }>,
    def: TableDef,
    targets: readonly number[],
  ): Row[] {
    return stmt.rows.map((values, r) => {
      if (values.length > targets.length) {
        throw new SluiceError('INVALID_DEFINITION', 'INSERT has more expressions than target columns', {
          position: values[targets.length]?.pos ?? stmt.pos,
        });
      }
      if (values.length < targets.length) {
        throw new SluiceError('INVALID_DEFINITION', 'INSERT has more target columns than expressions', {
          position: values[0]?.pos ?? stmt.pos,
        });
      }
      const row: Row = {};
      values.forEach((expr, k) => {
        const index = targets[k] as number;
        const col = def.columns[index] as ColumnMeta;
        let value: Value;
        if (expr.kind === 'default') {
          const d = def.defaults?.[index] ?? null;
          // The table computes a clock default at the batch's epoch clock.
          if (d?.atClock !== undefined) return;
          value = d?.value ?? null;
        } else {
          const bound = bindExpr(expr, { scope: null, aggregateContext: 'VALUES' });
          refuseTextAssignment(bound.type, col, expr.pos, expr);
          try {
            value = assignCast(compileScalar(bound)([]), bound.type, col);
          } catch (error) {
            throw asSluiceError(error).at(expr.pos);
          }
        }
        if (value === null && !col.nullable) throw notNullViolation(def, col, r, expr.pos);
        row[col.name] = value;
      });
      return withOmittedColumns(def, row, r, values[0]?.pos ?? stmt.pos);
    });
  }

  /**
   * The table's rows a statement's query read (its first columns), bounded as matchingRows bounds
   * them, and refused if any changed after the query read them.
   */
  private queriedRows(table: TableStore, queried: QueriedRows, stmt: UpdateOrDelete): (readonly Value[])[] {
    const width = table.def.columns.length;
    this.rowsExamined += queried.examined;
    const rows = queried.rows.map((row) => (row.length === width ? row : row.slice(0, width)));
    // Rows joined to a FROM list are checked once each table row is taken once (checkedOnce).
    if (stmt.from === undefined) this.checkQueried(table, rows, queried.readAt, statementWord(stmt));
    return rows;
  }

  /** The bound on rows, and a refusal if a row read was changed since (a query run in slices). */
  private checkQueried(
    table: TableStore,
    rows: readonly (readonly Value[])[],
    readAt: number,
    statement: 'UPDATE' | 'DELETE',
  ): void {
    if (rows.length > this.maxRows) throw tooManyRows(statement, table.def.name, this.maxRows);
    if (readAt !== this.engine.currentEpoch()) refuseChangedSince(table, rows, statement);
  }

  /** UPDATE … FROM's or DELETE … USING's rows, each table row once (dml-from-rows.ts), checked. */
  private checkedOnce(
    table: TableStore,
    stmt: UpdateOrDelete,
    joined: readonly (readonly Value[])[],
    inserts: readonly Value[][] | null,
    readAt: number,
  ): { matched: readonly (readonly Value[])[]; inserts: Value[][] } {
    const once = onePerTableRow(table, joined, inserts, readAt, (stmt.from as DmlFrom).pos);
    this.checkQueried(table, once.matched, readAt, statementWord(stmt));
    return once;
  }

  private matchingRows(
    table: TableStore,
    stmt: UpdateOrDelete,
    statement: 'UPDATE' | 'DELETE',
  ): (readonly Value[])[] {
    const where = stmt.where;
    const scope = {
      relationNames: [stmt.alias ?? table.def.name],
      relationLabel: `table "${table.def.name}"`,
      columns: table.def.columns,
    };
    const bound = where === undefined ? null : bindExpr(where, { scope, aggregateContext: 'WHERE' });
    const predicate = bound === null ? null : compileScalar(bound);
    const out: (readonly Value[])[] = [];
    const pk = table.def.primaryKey;
    const keys = bound !== null && pk !== null ? pinnedKeys(bound, pk, table.def.columns) : null;
    if (keys !== null) {
      // The WHERE pins the primary key: read those rows, not the table.
      for (const key of keys) {
        const row = table.rowWithKey(key);
        this.rowsExamined++;
        if (row !== undefined && (predicate === null || predicate(row) === true)) out.push(row);
      }
      if (out.length > this.maxRows) throw tooManyRows(statement, table.def.name, this.maxRows);
      return out;
    }
    for (const [row, n] of table.entries()) {
      this.rowsExamined++;
      if (predicate !== null && predicate(row) !== true) continue;
      for (let i = 0; i < n; i++) out.push(row);
      // Refused as soon as it is known, before the rest of the table is read.
      if (out.length > this.maxRows) throw tooManyRows(statement, table.def.name, this.maxRows);
    }
    return out;
  }

  /**
   * An UPDATE or DELETE whose rows a query reads (a subquery in its SET or WHERE, dml-query.ts): its
   * target checked (a view or source, an append-only table, an unknown SET column) before the query
   * runs, and the query.
   */
  statementQuery(stmt: UpdateOrDelete): SelectStmt {
    const table = this.engine.tableForWrite(stmt.table, stmt.pos);
    refuseAppendOnlyStatement(table.def, statementWord(stmt), stmt.pos);
    if (stmt.kind === 'update') setTargets(stmt, table.def);
    return statementQuery(stmt, table.def);
  }

  /**
   * UPDATE; with `queried`, the rows its query read at epoch `readAt` (the table's columns, then each
   * SET value), checked to be still stored as read when other writes applied since.
   */
  update(stmt: Extract<Statement, { kind: 'update' }>, queried?: QueriedRows): StatementResult {
    const table = this.engine.tableForWrite(stmt.table, stmt.pos);
    const def = table.def;
    refuseAppendOnlyStatement(def, 'UPDATE', stmt.pos);
    const targets = setTargets(stmt, def);
    const returning = bindReturning(stmt, def, this.engine.resultLimits());
    let sets: readonly SetValue[];
    let matched: readonly (readonly Value[])[];
    if (queried === undefined) {
      const scope = {
        relationNames: [stmt.alias ?? def.name],
        relationLabel: `table "${def.name}"`,
        columns: def.columns,
      };
      sets = stmt.assignments.map((a, k) => {
        const index = targets[k] as number;
        const bound = bindExpr(a.value, { scope, aggregateContext: 'UPDATE' });
        refuseTextAssignment(bound.type, def.columns[index] as ColumnMeta, a.value.pos, a.value);
        const fn = compileScalar(bound);
        return { index, value: (row: readonly Value[]) => fn(row), type: bound.type, pos: a.value.pos };
      });
      if (stmt.where !== undefined) {
        const w = bindExpr(stmt.where, { scope, aggregateContext: 'WHERE' });
        if (w.type.kind !== 'bool' && w.type.kind !== 'unknown') {
          throw new SluiceError(
            'TYPE_MISMATCH',
            `argument of WHERE must be type boolean, not type ${typeName(w.type)}`,
            { position: stmt.where.pos },
          );
        }
      }
      matched = this.matchingRows(table, stmt, 'UPDATE');
    } else {
      const width = def.columns.length;
      matched = this.queriedRows(table, queried, stmt);
      sets = stmt.assignments.map((a, k) => {
        const index = targets[k] as number;
        // a quoted literal takes its column's type, as in a statement without a subquery
        const type = isQuotedLiteral(a.value)
          ? UNKNOWN_TYPE
          : ((queried.columns[width + k] as ColumnMeta).type as SqlType);
        refuseTextAssignment(type, def.columns[index] as ColumnMeta, a.value.pos, a.value);
        const at = width + k;
        return {
          index,
          value: (_row: readonly Value[], r: number) => queried.rows[r]?.[at] ?? null,
          type,
          pos: a.value.pos,
        };
      });
    }
    // The new rows, each normalised once as the table normalises an insert; the old rows go to the
    // table as it stores them (statementRows), not as objects normalised again.
    let inserts: Value[][] = [];
    for (let r = 0; r < matched.length; r++) {
      const row = matched[r] as readonly Value[];
      const next = [...row];
      for (const s of sets) {
        const col = def.columns[s.index] as ColumnMeta;
        try {
          next[s.index] = assignCast(s.value(row, r), s.type, col);
        } catch (error) {
          throw asSluiceError(error).at(s.pos);
        }
        if (next[s.index] === null && !col.nullable) {
          throw new SluiceError(
            'NOT_NULL_VIOLATION',
            `null value in column "${col.name}" of table "${def.name}" violates not-null constraint`,
            { position: s.pos, detail: `failing row: ${JSON.stringify(table.toRow(row), bigintAsText)}` },
          );
        }
      }
      inserts.push(table.normalizeRow(table.toRow(next), 'insert', r));
    }
    // Joined to a FROM list: each table row once, its new values the same from every match.
    if (queried !== undefined && stmt.from !== undefined)
      ({ matched, inserts } = this.checkedOnce(table, stmt, matched, inserts, queried.readAt));
    const pk = def.primaryKey;
    // A SET of no key column keeps every row's key: the new keys are the old ones, distinct and
    // all deleted by this statement, so none can collide.
    const keysKept = pk !== null && !sets.some((s) => pk.includes(s.index));
    if (pk !== null && !keysKept) {
      const deletedKeys = new Set(matched.map((row) => encodeValues(row, pk)));
      const newKeys = new Set<string>();
      for (const row of inserts) {
        const k = encodeValues(row, pk);
        if (newKeys.has(k) || (table.hasKeyOf(row) && !deletedKeys.has(k))) {
          throw new SluiceError(
            'UNIQUE_VIOLATION',
            `duplicate key value violates the primary key of table "${def.name}"`,
            { position: stmt.pos },
          );
        }
        newKeys.add(k);
      }
    }
    const returned = returnedRows(returning, inserts);
    if (matched.length === 0) {
      const epoch = this.engine.currentEpoch();
      return { statement: 'UPDATE', object: def.name, rowCount: 0, epoch, ...returned };
    }
    // With the keys kept, each new row replaces the row under its key (the table's upsert): the same
    // deletes, in the same order, found by one lookup per row instead of a delete pass and a lookup.
    const r = this.applyWrite(def.name, NO_CHANGES, stmt.pos, {
      statementRows: { deletes: keysKept ? NO_ROWS : matched, inserts },
    });
    return { statement: 'UPDATE', object: def.name, rowCount: matched.length, epoch: r.epoch, ...returned };
  }

  /** `applyChanges` for a DML statement: a UNIQUE constraint it breaks is reported at the statement. */
  private applyWrite(
    table: string,
    changes: TableChanges,
    pos: { line: number; column: number },
    options?: ApplyOptions,
  ): { accepted: number; epoch: number } {
    try {
      return this.engine.applyChanges(table, changes, options);
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'UNIQUE_VIOLATION') throw error.at(pos);
      throw error;
    }
  }

  /** DELETE; with `queried`, the rows its query read (as for `update`). */
  delete(stmt: Extract<Statement, { kind: 'delete' }>, queried?: QueriedRows): StatementResult {
    const table = this.engine.tableForWrite(stmt.table, stmt.pos);
    refuseAppendOnlyStatement(table.def, 'DELETE', stmt.pos);
    const returning = bindReturning(stmt, table.def, this.engine.resultLimits());
    let matched: readonly (readonly Value[])[] =
      queried === undefined
        ? this.matchingRows(table, stmt, 'DELETE')
        : this.queriedRows(table, queried, stmt);
    // Joined to a USING list: each table row once.
    if (queried !== undefined && stmt.from !== undefined)
      matched = this.checkedOnce(table, stmt, matched, null, queried.readAt).matched;
    const returned = returnedRows(returning, matched);
    const name = table.def.name;
    if (matched.length === 0)
      return {
        statement: 'DELETE',
        object: name,
        rowCount: 0,
        epoch: this.engine.currentEpoch(),
        ...returned,
      };
    // The rows as the table stores them, resolved without being made objects and normalised again.
    const r = this.engine.applyChanges(name, NO_CHANGES, {
      statementRows: { deletes: matched, inserts: NO_ROWS },
    });
    return { statement: 'DELETE', object: name, rowCount: matched.length, epoch: r.epoch, ...returned };
  }
}

/**
 * The query of an INSERT … SELECT, or of an UPDATE or DELETE with a subquery, that passed the result
 * limit: said as the statement's (the SELECT's own hint speaks of reading a result by pages); any
 * other error as it is.
 */
export function queryRowsError(
  error: unknown,
  statement: 'INSERT' | 'UPDATE' | 'DELETE' = 'INSERT',
): unknown {
  if (!(error instanceof SluiceError) || error.code !== 'RESULT_TOO_LARGE') return error;
  const rows = statement === 'INSERT' ? 'the rows of INSERT … SELECT' : `the rows this ${statement} reads`;
  const verb = statement.toLowerCase();
  return new SluiceError('RESULT_TOO_LARGE', error.message.replace(/^the SELECT result/, rows), {
    hint: `${verb} them in parts (narrower WHERE ranges, one statement each), or raise --max-result-rows and --max-result-bytes`,
  });
}

const UNKNOWN_TYPE: SqlType = { kind: 'unknown' };

/** The RETURNING rows of the rows written, as result fields; none without a list. */
function returnedRows(
  returning: ReturningList | null,
  written: readonly (readonly Value[])[],
): ReturnType<ReturningList['rows']> | null {
  return returning === null ? null : returning.rows(written);
}

/**
 * An INSERT's rows as the table will store them, for its RETURNING list. A column left to a clock
 * default (`DEFAULT now()`) takes its value from the epoch's clock only as the batch is applied,
 * after the list must be computed: such an INSERT with RETURNING is refused (nothing is written).
 */
function insertedRows(table: TableStore, rows: readonly Row[], pos: Pos): Value[][] {
  const def = table.def;
  const clocked = def.columns.filter((c, i) => def.defaults?.[i]?.atClock !== undefined);
  return rows.map((row, r) => {
    const missing = clocked.find((c) => !(c.name in row));
    if (missing !== undefined) {
      throw new SluiceError(
        'NOT_SUPPORTED',
        `RETURNING with column "${missing.name}" left to its clock default is not supported`,
        { position: pos, hint: `give "${missing.name}" a value, or leave RETURNING out` },
      );
    }
    return table.normalizeRow(row, 'insert', r);
  });
}

/** One SET column of an UPDATE: its value for the `r`-th row read (`row`). */
interface SetValue {
  readonly index: number;
  readonly value: (row: readonly Value[], r: number) => Value;
  readonly type: SqlType;
  readonly pos: Pos;
}

/**
 * The column index of each SET target, in order; an unknown column refused at its name, and a column
 * set twice at its second name (PostgreSQL refuses it; the last value silently won here before).
 */
function setTargets(stmt: Extract<Statement, { kind: 'update' }>, def: TableDef): number[] {
  const seen = new Set<number>();
  return stmt.assignments.map((a) => {
    const i = def.columns.findIndex((c) => c.name === a.column);
    if (i < 0)
      throw new SluiceError(
        'UNKNOWN_COLUMN',
        `column "${a.column}" of relation "${def.name}" does not exist`,
        {
          position: a.pos,
        },
      );
    if (seen.has(i))
      throw new SluiceError('DUPLICATE_COLUMN', `multiple assignments to same column "${a.column}"`, {
        position: a.pos,
      });
    seen.add(i);
    return i;
  });
}

/** An UPDATE's or DELETE's request: its rows travel as `statementRows`. */
const NO_CHANGES: TableChanges = {};
const NO_ROWS: readonly (readonly Value[])[] = [];

function isQuotedLiteral(expr: Expr): boolean {
  return expr.kind === 'literal' && expr.literalType === 'string';
}

/** The rows of INSERT … SELECT: the query's columns in order onto the target columns. */
function selectedRows(
  stmt: Extract<Statement, { kind: 'insert' }>,
  def: TableDef,
  targets: readonly number[],
  selected: { readonly columns: readonly ColumnMeta[]; readonly rows: readonly (readonly Value[])[] },
): Row[] {
  const items = stmt.query?.items ?? [];
  const at = (k: number): { line: number; column: number } => items[k]?.pos ?? items[0]?.pos ?? stmt.pos;
  const width = selected.columns.length;
  if (width > targets.length) {
    throw new SluiceError('INVALID_DEFINITION', 'INSERT has more expressions than target columns', {
      position: at(targets.length),
    });
  }
  if (width < targets.length) {
    throw new SluiceError('INVALID_DEFINITION', 'INSERT has more target columns than expressions', {
      position: at(0),
    });
  }
  // A quoted literal in the select list is of unknown type until its column gives it one, as in
  // PostgreSQL (`INSERT INTO t (id) SELECT '7'`); any other text expression needs a cast.
  const literalAt = (k: number): boolean => {
    const item = items.length === width && stmt.query?.setOp === undefined ? items[k] : undefined;
    return item?.kind === 'expr' && isQuotedLiteral(item.expr);
  };
  const from = selected.columns.map((c, k) => (literalAt(k) ? UNKNOWN_TYPE : c.type));
  for (let k = 0; k < width; k++) {
    const col = def.columns[targets[k] as number] as ColumnMeta;
    refuseTextAssignment(from[k] as SqlType, col, at(k));
  }
  return selected.rows.map((values, r) => {
    const row: Row = {};
    for (let k = 0; k < width; k++) {
      const col = def.columns[targets[k] as number] as ColumnMeta;
      let value: Value;
      try {
        value = assignCast(values[k] as Value, from[k] as SqlType, col);
      } catch (error) {
        throw asSluiceError(error).at(at(k));
      }
      if (value === null && !col.nullable) throw notNullViolation(def, col, r, at(k), undefined, 'SELECT');
      row[col.name] = value;
    }
    return withOmittedColumns(def, row, r, at(0), 'SELECT');
  });
}

/** A column the list leaves out gets its DEFAULT, or NULL: if NOT NULL, the row is refused at `pos`. */
function withOmittedColumns(
  def: TableDef,
  row: Row,
  r: number,
  pos: { line: number; column: number },
  rows: 'VALUES' | 'SELECT' = 'VALUES',
): Row {
  def.columns.forEach((col, i) => {
    if (col.name in row) return;
    const d = def.defaults?.[i] ?? null;
    if (d !== null && d.atClock === undefined) row[col.name] = d.value;
    if (!col.nullable && (d === null || d.value === null)) {
      const why = d === null ? 'it is not in the column list' : 'its default is NULL';
      throw notNullViolation(def, col, r, pos, why, rows);
    }
  });
  return row;
}

/** PostgreSQL's not-null message for a VALUES row (`row` is 0-based; messages count from 1). */
function notNullViolation(
  def: TableDef,
  col: ColumnMeta,
  row: number,
  position: { line: number; column: number },
  why?: string,
  rows: 'VALUES' | 'SELECT' = 'VALUES',
): SluiceError {
  return new SluiceError(
    'NOT_NULL_VIOLATION',
    `null value in column "${col.name}" of table "${def.name}" violates not-null constraint`,
    { position, detail: `in ${rows} row ${row + 1}${why !== undefined ? `: ${why}` : ''}` },
  );
}

/**
 * An UPDATE or DELETE changing more than `max` rows: refused before anything changes, as one epoch
 * that large would hold the server (an INSERT is bounded already: VALUES by the list limit, SELECT
 * by the result limit).
 */
function tooManyRows(statement: 'UPDATE' | 'DELETE', table: string, max: number): SluiceError {
  return new SluiceError(
    'EPOCH_TOO_LARGE',
    `this ${statement} would change more than ${max} rows of table "${table}", the most one statement may change`,
    {
      detail: 'its changes are one epoch, applied at once; nothing was changed',
      hint:
        statement === 'DELETE'
          ? 'delete in parts (narrower WHERE ranges, one statement each), or DROP TABLE and create it again to empty it'
          : 'update in parts (narrower WHERE ranges, one statement each)',
    },
  );
}

/**
 * A text expression (not a quoted literal, which is of unknown type) into a column of another type:
 * PostgreSQL has no assignment cast for it and refuses the statement; an explicit cast says it is meant.
 */
function refuseTextAssignment(
  from: SqlType,
  col: ColumnMeta,
  pos: { line: number; column: number },
  /** The expression assigned, when at hand: a quoted literal takes its column's type (SET n = '6'). */
  expr?: Expr,
): void {
  if (from.kind !== 'text' || col.type.kind === 'text' || (expr !== undefined && isQuotedLiteral(expr)))
    return;
  throw new SluiceError(
    'TYPE_MISMATCH',
    `column "${col.name}" is of type ${typeName(col.type)} but expression is of type ${typeName(from)}`,
    { position: pos, hint: `cast the expression: CAST(… AS ${typeName(col.type)})` },
  );
}
