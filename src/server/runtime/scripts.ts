// Clients' SQL scripts: run one at a time, in slices between which other requests and epochs go on;
// each slice is one write (commit.ts), and the rows its DML wrote are metered.
import { SluiceError } from '../../common/errors.ts';
import type { ScriptResult, StatementResult } from '../../exec/api.ts';
import type { ExecuteOptions } from '../../exec/engine.ts';
import { yieldToLoop } from './base.ts';
import { RuntimeCommit, busyMicros } from './commit.ts';

/** How long one slice of a client's SQL script (statements, or a SELECT's input) may hold the event loop. */
const SCRIPT_SLICE_MS = 8;

export abstract class RuntimeScripts extends RuntimeCommit {
  /** Clients' scripts run one at a time: the last one queued settles this. */
  private scripts: Promise<void> = Promise.resolve();

  executeScript(sql: string): ScriptResult {
    return this.write(() => this.engine.executeScript(sql));
  }

  /**
   * Runs a script for a client (POST /v1/sql) in slices of about SCRIPT_SLICE_MS: between them other
   * requests, ingest and epochs go on, so no script holds the server however long it is (600 views
   * in one request, a SELECT over millions of rows). Each slice commits what its statements did and
   * publishes their epochs. Scripts run one at a time, in the order they arrived. `abandoned`: whether
   * the client went away (its connection closed): the script stops at its next slice, as at shutdown
   * (the statements before were run; the rest are not), and a query no one will read stops counting.
   * `admit`: asked when the script's turn comes, before its first statement; an error it returns
   * refuses the script whole. A check made when the request arrived is stale by then: the scripts
   * queued before this one may have created objects or added state meanwhile.
   */
  executeSql(
    sql: string,
    options: ExecuteOptions = {},
    abandoned: () => boolean = never,
    admit: () => SluiceError | null = admitAll,
  ): Promise<ScriptResult> {
    const run = this.scripts.then(() => {
      const refused = admit();
      return refused !== null ? { results: [], error: refused } : this.runSliced(sql, options, abandoned);
    });
    this.scripts = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async runSliced(
    sql: string,
    options: ExecuteOptions,
    abandoned: () => boolean,
  ): Promise<ScriptResult> {
    const run = this.engine.runScript(sql, options);
    try {
      for (;;) {
        if (abandoned()) {
          return run.stop(
            new SluiceError('UNAVAILABLE', 'the client disconnected', {
              detail: 'the statements before this one were run; the rest were not',
            }),
          );
        }
        const started = performance.now();
        let result: ScriptResult | null;
        try {
          result = this.write(() => run.step(started + SCRIPT_SLICE_MS));
        } finally {
          this.hooks.epochCpu?.(busyMicros(started));
        }
        if (result !== null) {
          this.meterWrites(result.results);
          return result;
        }
        await yieldToLoop();
        if (this.failure !== null) return run.stop(this.failure);
        if (this.closing) {
          return run.stop(
            new SluiceError('UNAVAILABLE', 'server is shutting down', {
              detail: 'the statements before this one were run; the rest were not',
            }),
          );
        }
      }
    } finally {
      if (run.rowsRead > 0) this.hooks.rowsExamined?.('select', run.rowsRead);
      if (run.dmlRowsRead > 0) this.hooks.rowsExamined?.('dml', run.dmlRowsRead);
    }
  }

  execute(sql: string): readonly StatementResult[] {
    const results = this.write(() => this.engine.execute(sql));
    this.meterWrites(results);
    return results;
  }

  /** Counts the rows a script's INSERT/UPDATE/DELETE statements wrote. */
  private meterWrites(results: readonly StatementResult[]): void {
    const rows = rowsWritten(results);
    if (rows > 0) this.hooks.rowsWritten?.(rows);
  }
}

/** A script every tenant may run (the default). */
function admitAll(): null {
  return null;
}

/** A client that never goes away (the default). */
function never(): boolean {
  return false;
}

/** The rows a script's INSERT, UPDATE and DELETE statements wrote (metering, ingest rates). */
export function rowsWritten(results: readonly StatementResult[]): number {
  let rows = 0;
  for (const r of results) {
    if (r.statement === 'INSERT' || r.statement === 'UPDATE' || r.statement === 'DELETE')
      rows += r.rowCount ?? 0;
  }
  return rows;
}
