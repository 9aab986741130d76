// An ad-hoc SELECT with a window function is stepped a slice of input at a time; over one large
// partition in scattered order each slice recomputes most of the partition, so the work grew with
// the square of the input (a million rows ran for minutes and held the server's loop seconds a
// slice). The recomputed rows are now charged to the query's row budget: it fails with
// RESULT_TOO_LARGE after a bounded number of slices. Work is counted (input rows read), not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { parseStatements } from '../src/parser/parse.ts';
import { SluiceError } from '../src/common/errors.ts';
import type { SelectJob } from '../src/exec/select-job.ts';

const ROWS = 200_000;

function engineWithRows(): Engine {
  const engine = new Engine();
  engine.execute('CREATE TABLE t (k bigint PRIMARY KEY, v bigint)');
  const rows = Array.from({ length: ROWS }, (_, k) => ({ k, v: (k * 7919) % 100_003 }));
  engine.applyChanges('t', { insert: rows, delete: [] });
  return engine;
}

function job(engine: Engine, sql: string): SelectJob {
  const [statement] = parseStatements(sql);
  assert.equal(statement?.kind, 'select');
  return engine.prepareSelect(statement.query);
}

/** Steps the job a slice at a time (deadline 0), as the server does between other requests. */
function runSliced(select: SelectJob): void {
  while (!select.work(0));
}

test('a window over one partition in scattered order fails early instead of recomputing it per slice', () => {
  const engine = engineWithRows();
  const select = job(engine, 'SELECT k, row_number() OVER (ORDER BY v) AS r FROM t LIMIT 3');
  assert.throws(
    () => runSliced(select),
    (e: unknown) =>
      e instanceof SluiceError && e.code === 'RESULT_TOO_LARGE' && /window functions/.test(e.message),
  );
  assert.ok(select.rowsRead < ROWS * 0.8, `read ${select.rowsRead} of ${ROWS} rows before failing`);
});

test('a window whose slices only append (ORDER BY the input order) or over small partitions is not refused', () => {
  const engine = engineWithRows();
  for (const sql of [
    'SELECT k, row_number() OVER (ORDER BY k) AS r FROM t ORDER BY k LIMIT 3',
    'SELECT k, row_number() OVER (PARTITION BY v ORDER BY k) AS r FROM t ORDER BY k LIMIT 3',
  ]) {
    const select = job(engine, sql);
    runSliced(select);
    assert.deepEqual(
      (select.result().rows ?? []).map((row) => Number(row['k'])),
      [0, 1, 2],
      sql,
    );
    assert.equal(select.rowsRead, ROWS);
  }
});
