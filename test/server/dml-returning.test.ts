// RETURNING through POST /v1/sql and across a kill -9: the answer of a statement with a RETURNING list
// is a SELECT's (columns, rows) beside its rowCount and epoch, one without keeps its shape; rows past
// the result bound (--max-result-rows, --max-result-bytes) refuse the statement whole (HTTP 400, nothing written). RETURNING shapes only
// the answer: a server killed with SIGKILL comes back with exactly the rows an engine that ran the
// same statements without RETURNING holds, and goes on like it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import {
  allViewRows,
  removeDir,
  spawnServer,
  sql,
  sqlOk,
  sortedRows,
  startServer,
  tempDir,
  type TestServer,
} from './helpers.ts';

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, g integer, v text);
CREATE TABLE u (id integer PRIMARY KEY, w integer);
CREATE TABLE lake (g integer, v integer);
CREATE MATERIALIZED VIEW t_all AS SELECT id, g, v FROM t;
CREATE MATERIALIZED VIEW lake_by_g AS SELECT g, COUNT(*) AS n, SUM(v) AS total FROM lake GROUP BY g`;
const VIEWS = ['t_all', 'lake_by_g'];

/** Each statement with its RETURNING list, and the rows PostgreSQL 15 returns for it (in order). */
const BEFORE: readonly (readonly [string, string, readonly Record<string, unknown>[]])[] = [
  [
    "INSERT INTO t VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')",
    ' RETURNING id, v',
    [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ],
  ],
  ['INSERT INTO u VALUES (1, 100), (3, 300)', ' RETURNING w / 100 AS h', [{ h: 1 }, { h: 3 }]],
  [
    'INSERT INTO lake SELECT g, id FROM t',
    ' RETURNING *',
    [
      { g: 1, v: 1 },
      { g: 1, v: 2 },
      { g: 2, v: 3 },
    ],
  ],
  [
    "UPDATE t SET v = v || '!' WHERE id IN (SELECT id FROM u)",
    ' RETURNING id, v',
    [
      { id: 1, v: 'a!' },
      { id: 3, v: 'c!' },
    ],
  ],
  [
    'DELETE FROM lake l USING u WHERE l.v = u.id',
    ' RETURNING l.g, l.v + 10 AS v10',
    [
      { g: 1, v10: 11 },
      { g: 2, v10: 13 },
    ],
  ],
];
const AFTER = ['UPDATE t SET g = g + 1 WHERE id < 3 RETURNING *', 'DELETE FROM t WHERE id = 3 RETURNING id'];

test('RETURNING answers through /v1/sql, is bounded, and a server killed with SIGKILL holds what it wrote', async () => {
  const reference = new Engine();
  reference.executeScript(SCHEMA);
  for (const [statement] of BEFORE) reference.execute(statement);
  for (const statement of AFTER) reference.execute(statement.replace(/ RETURNING .*$/, ''));
  const snapshot = VIEWS.map((v) => sortedRows(reference.viewSnapshot(v).rows as Record<string, unknown>[]));
  const dir = tempDir();
  let server: TestServer | undefined;
  try {
    const child = await spawnServer(dir);
    await sqlOk(child.base, SCHEMA);
    for (const [statement, returning, rows] of BEFORE) {
      const answer = await sqlOk(child.base, statement + returning);
      const result = (answer.body.results as Record<string, unknown>[])[0]!;
      assert.deepEqual(result.rows, rows, statement);
      assert.equal(result.rowCount, rows.length, statement);
      assert.equal(typeof result.epoch, 'number');
      assert.equal((result.columns as unknown[]).length, Object.keys(rows[0]!).length);
    }
    // without RETURNING, the answer as before; past the bound, refused and nothing written
    const plain = await sqlOk(child.base, 'INSERT INTO u VALUES (9, 900)');
    assert.deepEqual(Object.keys((plain.body.results as object[])[0]!).sort(), [
      'epoch',
      'object',
      'rowCount',
      'statement',
    ]);
    // 9,000 rows of 1,000 bytes each: past the default 8 MiB of a result (the query's own rows are not)
    const refused = await sql(
      child.base,
      "INSERT INTO u SELECT g + 10, 0 FROM generate_series(1, 9000) AS g RETURNING repeat('x', 1000)",
    );
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error?.code, 'RESULT_TOO_LARGE');
    await sqlOk(child.base, 'DELETE FROM u WHERE id = 9');
    const before = await Promise.all(VIEWS.map((v) => allViewRows(child.base, v)));
    child.child.kill('SIGKILL');
    await child.exited;
    server = await startServer({ dataDir: dir });
    const after = await Promise.all(VIEWS.map((v) => allViewRows(server!.base, v)));
    assert.deepEqual(after.map(sortedRows), before.map(sortedRows), 'right after the restart');
    for (const statement of AFTER) await sqlOk(server.base, statement);
    const last = await Promise.all(VIEWS.map((v) => allViewRows(server!.base, v)));
    assert.deepEqual(last.map(sortedRows), snapshot, 'as an engine that ran them without RETURNING');
    const count = await sqlOk(server.base, 'SELECT COUNT(*) AS n FROM u');
    assert.deepEqual((count.body.results as { rows: unknown }[])[0]!.rows, [{ n: 2 }]);
  } finally {
    await server?.close();
    removeDir(dir);
  }
});
