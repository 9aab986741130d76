// Which part of the engine runs each kind of statement a script holds: DDL (ddl.ts), DML (dml.ts,
// with the catalog's SQL functions inlined), EXPLAIN and SELECT (engine-queries.ts), SHOW and the
// logical clock's statements (clock-statements.ts, watermark-statements.ts).
import type { SelectStmt, Statement } from '../parser/ast.ts';
import type { SqlLimits } from '../common/limits.ts';
import type { Catalog } from '../planner/catalog.ts';
import { withSqlFunctions } from '../planner/sql-functions.ts';
import type { EngineJournal, StatementResult } from './api.ts';
import type { DdlStatements } from './ddl.ts';
import { type DmlStatements, queryRowsError } from './dml.ts';
import { queriedRows, readsSubquery, statementWord } from './dml-query.ts';
import type { EpochClock } from './engine-clock.ts';
import { explainStatement } from './engine-queries.ts';
import { clockValue, showClock } from './clock-statements.ts';
import type { ManualClock } from './logical-clock.ts';
import type { SelectJob } from './select-job.ts';
import type { TableStore } from './table-store.ts';
import { showWatermarks, type ClosingView } from './watermark-statements.ts';

/** What the statements reach of the engine. */
export interface StatementHost {
  readonly catalog: Catalog;
  readonly tables: ReadonlyMap<string, TableStore>;
  readonly ddl: DdlStatements;
  readonly dml: DmlStatements;
  clock(): EpochClock;
  journal(): EngineJournal | null;
  currentEpoch(): number;
  /** The limits of the script being run. */
  callLimits(): SqlLimits;
  /** How many workers run the partitioned Reduces (EXPLAIN notes them). */
  workers(): number;
  closingViews(): ClosingView[];
  /** A clock tick (Engine.tick): an epoch when a temporal filter's bound is crossed. */
  tick(): { readonly epoch: number; readonly ticked: boolean };
  prepareSelect(query: SelectStmt): SelectJob;
}

export function executeStatement(host: StatementHost, stmt: Statement): StatementResult {
  switch (stmt.kind) {
    case 'createTable':
      return host.ddl.createTable(stmt);
    case 'createView':
      return host.ddl.createView(stmt);
    case 'createSource':
      return host.ddl.createSource(stmt);
    case 'createSink':
      return host.ddl.createSink(stmt);
    case 'createFunction':
      return host.ddl.createFunction(stmt);
    case 'drop':
      return host.ddl.drop(stmt);
    case 'show':
      if (stmt.objectKind === 'watermarks')
        return showWatermarks(host.catalog.storedRelations(), host.tables, host.closingViews());
      return stmt.objectKind === 'clock'
        ? showClock(host.clock().source, host.clock().current)
        : host.ddl.show(stmt.objectKind);
    case 'setClock': {
      const clock = host.clock();
      const micros = clockValue(clock.source, stmt.value, stmt.valuePos, stmt.pos, clock.current);
      const manual = clock.source as ManualClock;
      const moved = micros > manual.now();
      manual.set(micros);
      // An epoch only when a temporal filter's bound is crossed; `epoch` is the latest either way.
      const tick = host.tick();
      // Without an epoch the setting is journaled on its own, so a restart does not lose it.
      if (!tick.ticked && moved)
        host.journal()?.appendClockSet?.({ epoch: host.currentEpoch(), clock: micros });
      return { statement: 'SET CLOCK', epoch: tick.epoch };
    }
    case 'explain':
      return explainStatement(host.catalog, stmt.query, stmt.dataflow, host.callLimits(), host.workers());
    // DML expressions may call SQL functions too: they are inlined as in a query.
    case 'insert': {
      if (stmt.query === undefined) return withSqlFunctions(host.catalog, () => host.dml.insert(stmt)).result;
      // INSERT … SELECT: the query runs whole at the current epoch (bounded like any ad-hoc SELECT's
      // result), then its rows are one write.
      host.dml.insertTarget(stmt);
      const job = host.prepareSelect(stmt.query);
      try {
        job.work(Infinity);
      } catch (error) {
        throw queryRowsError(error);
      }
      return host.dml.insert(stmt, job.rowValues());
    }
    case 'update':
    case 'delete': {
      if (!readsSubquery(stmt)) {
        return withSqlFunctions(host.catalog, () =>
          stmt.kind === 'update' ? host.dml.update(stmt) : host.dml.delete(stmt),
        ).result;
      }
      // A FROM (USING) list, or a subquery in SET or WHERE: the statement's rows are read by one query at the current epoch
      // (dml-query.ts), then written as one epoch.
      const job = host.prepareSelect(host.dml.statementQuery(stmt));
      try {
        job.work(Infinity);
      } catch (error) {
        throw queryRowsError(error, statementWord(stmt));
      }
      const queried = queriedRows(job);
      return stmt.kind === 'update' ? host.dml.update(stmt, queried) : host.dml.delete(stmt, queried);
    }
    case 'select': {
      const job = host.prepareSelect(stmt.query);
      job.work(Infinity);
      return job.result();
    }
  }
}
