// UPDATE … FROM and DELETE … USING across a kill -9: the statements are journaled as the row changes
// they made (the epoch's deletes and inserts), not as statements run again, so a data directory
// reopened from the journal alone, or from a checkpoint and the journal after it, holds exactly the
// rows it held, a keyless table's every copy included, and goes on like an engine that never stopped;
// the same through a server process killed with SIGKILL, whose refusal of an ambiguous UPDATE … FROM
// (HTTP 400, CARDINALITY_VIOLATION, at the FROM) left nothing behind in the journal either.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import {
  afterCrash,
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

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, g integer, v integer);
CREATE TABLE u (id integer PRIMARY KEY, w integer);
CREATE TABLE lake (g integer, v integer);
CREATE MATERIALIZED VIEW t_all AS SELECT id, g, v FROM t;
CREATE MATERIALIZED VIEW lake_by_g AS SELECT g, COUNT(*) AS n, SUM(v) AS total FROM lake GROUP BY g`;
const VIEWS = ['t_all', 'lake_by_g'];

const FILL = `INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 3, 40);
INSERT INTO u VALUES (1, 100), (2, 200), (3, 300);
INSERT INTO lake VALUES (1, 1), (1, 1), (2, 2), (3, 3), (3, 3)`;
/** Before the crash (and the checkpoint, when there is one, after the first two). */
const BEFORE = [
  'UPDATE t SET v = t.v + u.w FROM u WHERE t.id = u.id AND u.w < 300',
  'UPDATE lake SET v = lake.v * 10 FROM t WHERE t.g = lake.g AND t.id < 3',
  'DELETE FROM lake AS l USING t JOIN u ON t.id = u.id WHERE l.g = t.g AND u.w = 300',
  'UPDATE t x SET g = s.n FROM (SELECT g, COUNT(*) AS n FROM lake GROUP BY g) AS s WHERE s.g = x.g',
];
const AFTER = [
  'DELETE FROM t USING u WHERE t.id = u.id AND u.w > 100',
  'UPDATE lake SET v = 0 FROM u WHERE u.id = lake.g',
];

const snapshot = (e: Engine): string[] =>
  VIEWS.map((v) => `${v}: ${sortedRows(e.viewSnapshot(v).rows).join(' ')}`);

for (const withCheckpoint of [true, false]) {
  test(`UPDATE … FROM and DELETE … USING come back from ${withCheckpoint ? 'a checkpoint and the journal' : 'the journal alone'} exactly`, () => {
    const reference = new Engine();
    reference.executeScript(SCHEMA);
    reference.executeScript(FILL);
    for (const sql of [...BEFORE, ...AFTER]) reference.execute(sql);
    let before: string[] = [];
    afterCrash(
      (first) => {
        first.executeScript(SCHEMA);
        first.executeScript(FILL);
        for (const sql of BEFORE.slice(0, 2)) first.executeScript(sql);
        if (withCheckpoint) assert.ok(first.checkpoint() !== null, 'a checkpoint was written');
        for (const sql of BEFORE.slice(2)) assert.equal(first.executeScript(sql).error, undefined, sql);
        before = snapshot(first.engine);
      },
      (again) => {
        assert.deepEqual(snapshot(again.engine), before, 'right after the restart');
        for (const sql of AFTER) again.executeScript(sql);
        assert.deepEqual(snapshot(again.engine), snapshot(reference), 'after the statements that followed');
      },
    );
    // PostgreSQL 15 ends with these rows after the same statements (lake's g = 2 row deleted, both
    // copies of each other row written)
    assert.deepEqual(snapshot(reference), [
      't_all: [["g",2],["id",1],["v",110]] [["g",2],["id",4],["v",40]]',
      'lake_by_g: [["g",1],["n",2],["total",0]] [["g",3],["n",2],["total",0]]',
    ]);
  });
}

test('UPDATE … FROM and DELETE … USING through a server killed with SIGKILL come back exactly', async () => {
  const reference = new Engine();
  reference.executeScript(SCHEMA);
  reference.executeScript(FILL);
  for (const sql of [...BEFORE, ...AFTER]) reference.execute(sql);
  const dir = tempDir();
  let server: TestServer | undefined;
  try {
    const child = await spawnServer(dir);
    await sqlOk(child.base, `${SCHEMA};\n${FILL}`);
    for (const statement of BEFORE) await sqlOk(child.base, statement);
    // t's row 1 matches every lake row, whose values are 10 and 3: refused whole
    const refused = await sql(child.base, 'UPDATE t SET v = lake.v FROM lake WHERE t.id = 1');
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error?.code, 'CARDINALITY_VIOLATION');
    assert.deepEqual(refused.body.error?.position, { line: 1, column: 25 });
    const before = await Promise.all(VIEWS.map((v) => allViewRows(child.base, v)));
    child.child.kill('SIGKILL');
    await child.exited;
    server = await startServer({ dataDir: dir });
    const after = await Promise.all(VIEWS.map((v) => allViewRows(server!.base, v)));
    assert.deepEqual(after.map(sortedRows), before.map(sortedRows), 'right after the restart');
    for (const statement of AFTER) await sqlOk(server.base, statement);
    const last = await Promise.all(VIEWS.map((v) => allViewRows(server!.base, v)));
    assert.deepEqual(
      VIEWS.map((v, i) => `${v}: ${sortedRows(last[i]!).join(' ')}`),
      snapshot(reference),
      'after the statements that followed',
    );
  } finally {
    await server?.close();
    removeDir(dir);
  }
});
