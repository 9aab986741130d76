// UPDATE … FROM and DELETE … USING across a kill -9: the statements are journaled as the row changes
// they made (the epoch's deletes and inserts), not as statements run again, so a data directory
// reopened from the journal alone, or from a checkpoint and the journal after it, holds exactly the
// rows it held, a keyless table's every copy included, and goes on like an engine that never stopped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import { afterCrash, sortedRows } from './helpers.ts';

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
