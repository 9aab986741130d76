// A double column's NaN and ±Infinity are values (PostgreSQL's too): a statement may insert them,
// and a row holding one — sent through the API as "NaN" or written by a statement — can be updated
// and deleted by SQL like any other, in a keyed and a keyless table, and survives a restart from
// the journal, and from a checkpoint and the journal's tail after it. (A JSON number beyond a
// double, 1e400, is refused where it is read: non-finite-readers.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Value } from '../../src/common/types.ts';
import { afterCrash } from './helpers.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';

const SCHEMA = `CREATE TABLE f (id integer PRIMARY KEY, x double precision, y integer);
CREATE TABLE g (x real, y integer);
CREATE MATERIALIZED VIEW fv AS SELECT id, x, y FROM f WHERE y > 0;
CREATE MATERIALIZED VIEW gv AS SELECT x, COUNT(*) AS n FROM g GROUP BY x`;

/** Rows with each value as its JavaScript text (so NaN and -0 compare as themselves), sorted. */
function texts(rows: readonly (readonly Value[])[]): string[] {
  return rows
    .map((row) =>
      row
        .map((v) => (typeof v === 'number' ? String(Object.is(v, -0) ? '-0' : v) : JSON.stringify(v)))
        .join('|'),
    )
    .sort();
}

function state(rt: SluiceRuntime): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const v of ['fv', 'gv'])
    out[v] = texts(rt.engine.viewSnapshot(v).rows.map((r) => Object.values(r) as Value[]));
  return out;
}

test('NaN and ±Infinity in a double column: inserted by SQL, updated and deleted by SQL, kept across a restart', () => {
  const expected = {
    fv: texts([
      [1, NaN, 10],
      [3, NaN, 3],
      [4, -Infinity, 4],
      [5, 1.5, 5],
    ]),
    gv: texts([
      [Infinity, 1],
      [-Infinity, 1],
    ]),
  };
  afterCrash(
    (first) => {
      first.executeScript(SCHEMA);
      first.ingest('f', {
        insert: [
          { id: 1, x: 'NaN', y: 1 },
          { id: 2, x: '-Infinity', y: 2 },
          { id: 5, x: 1.5, y: 5 },
        ],
      });
      first.ingest('g', {
        insert: [
          { x: 'Infinity', y: 1 },
          { x: 'NaN', y: 2 },
        ],
      });
      first.executeScript(
        `INSERT INTO f VALUES (3, CAST('NaN' AS double precision), 3), (4, 'Infinity', 4);
       INSERT INTO g VALUES ('-Infinity', 3);
       UPDATE f SET y = 10 WHERE id = 1;
       UPDATE f SET x = x * -1 WHERE id = 4;
       DELETE FROM f WHERE id = 2;
       UPDATE g SET y = y + 100 WHERE y = 1;
       DELETE FROM g WHERE y = 2`,
      );
      assert.deepEqual(state(first), expected);
    },
    (again) => {
      assert.deepEqual(state(again), expected, 'the same after a restart from the journal');
      again.executeScript('DELETE FROM f; DELETE FROM g');
      assert.deepEqual(state(again), { fv: [], gv: [] });
    },
  );
});

/** The checkpoint test's tables: a keyed and a keyless double column, a view over each. */
const CHECKPOINT_SCHEMA = `CREATE TABLE f (id integer PRIMARY KEY, x double precision);
CREATE TABLE g (x double precision, y integer);
CREATE MATERIALIZED VIEW fv AS SELECT id, x FROM f;
CREATE MATERIALIZED VIEW gv AS SELECT x, COUNT(*) AS n FROM g GROUP BY x`;

test('NaN and ±Infinity from HTTP text and from SQL survive a crash, from a checkpoint and from the journal', () => {
  const expected = {
    fv: ['1|NaN', '2|Infinity', '3|Infinity'],
    gv: ['-Infinity|1', 'NaN|1'],
  };
  afterCrash(
    (first) => {
      first.executeScript(CHECKPOINT_SCHEMA);
      first.ingest('f', {
        insert: [
          { id: 1, x: 'NaN' },
          { id: 2, x: '-Infinity' },
        ],
      });
      first.ingest('g', { insert: [{ x: 'Infinity', y: 1 }] });
      first.executeScript(`INSERT INTO g VALUES (CAST('NaN' AS double precision), 2)`);
      assert.ok(first.checkpoint() !== null, 'a checkpoint holding the values');
      // after the checkpoint, the journal's tail: more of them, and an update and a delete of them
      first.ingest('f', { insert: [{ id: 3, x: 'Infinity' }] });
      first.executeScript(`UPDATE f SET x = x * -1 WHERE id = 2; DELETE FROM g WHERE y = 1;
      INSERT INTO g VALUES ('-Infinity', 3)`);
      assert.deepEqual(state(first), expected);
    },
    (again) => {
      assert.deepEqual(state(again), expected, 'the same after the crash');
      assert.notEqual(again.recovery.checkpointEpoch, null, 'restored from the checkpoint');
      assert.ok(again.recovery.replayedEntries > 0, 'then the tail replayed from the journal');
      again.executeScript('DELETE FROM f; DELETE FROM g');
      assert.deepEqual(state(again), { fv: [], gv: [] });
    },
  );
});
