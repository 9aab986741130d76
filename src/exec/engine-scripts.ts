// Running a SQL script in steps: parsed whole first, then statement by statement, a SELECT (and the
// query of an INSERT … SELECT) in slices of its input, under the script's limits; and the parse-only
// checks a caller makes of SQL text.
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import type { SelectStmt, Statement } from '../parser/ast.ts';
import { parseStatements, parseStepwise } from '../parser/parse.ts';
import type { ScriptResult, StatementResult } from './api.ts';
import type { ExecuteOptions, ScriptRun } from './engine-types.ts';
import type { SelectJob } from './select-job.ts';
import { queryRowsError } from './dml.ts';
import { queriedRows, readsSubquery, type QueriedRows, type UpdateOrDelete } from './dml-query.ts';

type InsertStatement = Extract<Statement, { kind: 'insert' }>;
import { asSluiceError } from './table-definition.ts';

/** What a script runs its statements with (the Engine). */
export interface ScriptHost {
  /** The limits the statements being run bind under: the script's while it steps, else the engine's. */
  setCallLimits(limits: SqlLimits | null): void;
  prepareSelect(query: SelectStmt): SelectJob;
  executeStatement(stmt: Statement): StatementResult;
  /** Refuses an INSERT's target (a view or source, an unknown or repeated column) before its query runs. */
  checkInsertTarget(stmt: InsertStatement): void;
  /** INSERT … SELECT's write, once its query's job is done (its rows, in column order). */
  insertSelected(stmt: InsertStatement, selected: ReturnType<SelectJob['rowValues']>): StatementResult;
  /**
   * The query reading the rows of an UPDATE or DELETE with a subquery, its target checked first
   * (dml-query.ts).
   */
  statementQuery(stmt: UpdateOrDelete): SelectStmt;
  /** That UPDATE's or DELETE's write, once its query's job is done. */
  writeQueried(stmt: UpdateOrDelete, queried: QueriedRows): StatementResult;
  /** Table rows UPDATE and DELETE have examined so far (a running count). */
  dmlRowsExamined(): number;
}

/**
 * A script to run in steps, so a long one need not hold the caller's thread: parsed whole first
 * (a script that does not parse runs nothing), then statement by statement, a SELECT in slices of
 * its input. Between steps the engine may apply other batches and statements; each statement sees
 * the catalog and data as they are when it runs (a SELECT: when it starts; an INSERT … SELECT
 * writes, when its query is done, the rows the query read as of its start).
 */
export function runScript(
  host: ScriptHost,
  sql: string,
  options: ExecuteOptions,
  defaultLimits: SqlLimits,
): ScriptRun {
  const limits = options.limits ?? defaultLimits;
  const results: StatementResult[] = [];
  const parsing = parseStepwise(sql, limits);
  let statements: Statement[] | null = null;
  let next = 0;
  let select: SelectJob | null = null;
  /** The INSERT … SELECT, or UPDATE or DELETE with a subquery, whose query `select` is (null: a plain SELECT). */
  let writer: InsertStatement | UpdateOrDelete | null = null;
  let ended: ScriptResult | null = null;
  const run: ScriptRun = {
    rowsRead: 0,
    dmlRowsRead: 0,
    step: (deadline) => {
      if (ended !== null) return ended;
      host.setCallLimits(limits);
      try {
        do {
          if (statements === null) {
            const parsed = parsing.next();
            if (parsed.done === true) statements = parsed.value;
          } else if (select !== null) {
            const before = select.rowsRead;
            let ready: boolean;
            try {
              ready = select.work(deadline);
            } catch (error) {
              throw writer === null ? error : queryRowsError(error, statementOf(writer));
            }
            if (writer?.kind === 'update' || writer?.kind === 'delete')
              run.dmlRowsRead += select.rowsRead - before;
            else run.rowsRead += select.rowsRead - before;
            if (ready) {
              // The rows were read as of the query's start; they are written now, as one epoch (an
              // UPDATE or DELETE refused if a row it read was changed by a write since).
              results.push(writtenOrResult(host, select, writer));
              select = null;
              writer = null;
            }
          } else {
            const stmt = statements[next++];
            if (stmt === undefined) return (ended = { results });
            if (stmt.kind === 'select') select = host.prepareSelect(stmt.query);
            else if (stmt.kind === 'insert' && stmt.query !== undefined) {
              // A target it cannot write is refused before the query reads anything.
              host.checkInsertTarget(stmt);
              select = host.prepareSelect(stmt.query);
              writer = stmt;
            } else if ((stmt.kind === 'update' || stmt.kind === 'delete') && readsSubquery(stmt)) {
              select = host.prepareSelect(host.statementQuery(stmt));
              writer = stmt;
            } else {
              if (options.reservedPrefix !== undefined) refuseReserved(stmt, options.reservedPrefix);
              const before = host.dmlRowsExamined();
              try {
                results.push(host.executeStatement(stmt));
              } finally {
                run.dmlRowsRead += host.dmlRowsExamined() - before;
              }
            }
          }
        } while (performance.now() < deadline);
        return null;
      } catch (error) {
        return (ended = { results, error: asSluiceError(error) });
      } finally {
        host.setCallLimits(null);
      }
    },
    stop: (error) => (ended ??= { results, error }),
  };
  return run;
}

/**
 * Checks that `text` is one SELECT statement and nothing else (a trailing `;` aside), as a caller
 * must before putting it inside a statement of its own; throws the parse error, or
 * INVALID_REQUEST naming what else the text holds. Binding is left to the statement it goes into.
 */
export function checkSingleSelect(text: string, limits: SqlLimits): void {
  const statements = parseStatements(text, limits);
  const first = statements[0];
  if (statements.length === 1 && first?.kind === 'select') return;
  throw new SluiceError(
    'INVALID_REQUEST',
    statements.length === 0
      ? 'the query is empty: expected one SELECT statement'
      : statements.length > 1
        ? `expected one SELECT statement, not ${statements.length} statements`
        : 'expected a SELECT statement: a subscription takes a query, not other statements',
    first !== undefined && first.kind !== 'select' && 'pos' in first ? { position: first.pos } : {},
  );
}

/** CREATE of an object whose name starts with `prefix`: RESERVED_NAME. */
function refuseReserved(stmt: Statement, prefix: string): void {
  if (
    stmt.kind !== 'createTable' &&
    stmt.kind !== 'createView' &&
    stmt.kind !== 'createSource' &&
    stmt.kind !== 'createSink'
  )
    return;
  if (!stmt.name.startsWith(prefix)) return;
  throw new SluiceError('RESERVED_NAME', `names starting with "${prefix}" are reserved`, {
    position: stmt.pos,
    detail: `"${stmt.name}" would look like one of the server's own views`,
    hint: 'choose another name',
  });
}

function statementOf(writer: InsertStatement | UpdateOrDelete): 'INSERT' | 'UPDATE' | 'DELETE' {
  return writer.kind === 'insert' ? 'INSERT' : writer.kind === 'update' ? 'UPDATE' : 'DELETE';
}

/** A finished query's statement result: the SELECT's rows, or the write its rows make. */
function writtenOrResult(
  host: ScriptHost,
  select: SelectJob,
  writer: InsertStatement | UpdateOrDelete | null,
): StatementResult {
  if (writer === null) return select.result();
  if (writer.kind === 'insert') return host.insertSelected(writer, select.rowValues());
  // Its rows examined are the engine's count as for a statement run whole; the script has counted
  // them slice by slice as the query read them (dmlRowsRead), so this write is outside that count.
  return host.writeQueried(writer, queriedRows(select));
}
