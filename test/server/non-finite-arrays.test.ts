// An element NaN or ±Infinity of a double precision[] or real[] column is a value like a scalar
// one: a server that accepted {"xs": [-0, "NaN", "Infinity"]} could not start again after kill -9
// (replay hands the journalled array back to the write path, whose element coercion refused the
// non-finite numbers as JSON overflows: STATE_ERROR "replay of log offset … failed"), and
// INSERT ... ARRAY[CAST('NaN' AS double precision)] and UPDATE or DELETE of a row holding such an
// array failed the same way. Checked after a restart from the journal alone and from a checkpoint
// with a journal tail after it, each from a copy of the data directory taken without closing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterCrash } from './helpers.ts';
import { parseJsonExact } from '../../src/common/json-codec.ts';
import type { TableChanges } from '../../src/exec/api.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';

const SCHEMA = `CREATE TABLE a (id integer PRIMARY KEY, xs double precision[], rs real[]);
CREATE TABLE b (xs double precision[], n integer);
CREATE MATERIALIZED VIEW av AS SELECT id, CAST(xs AS text) AS xs, CAST(rs AS text) AS rs FROM a;
CREATE MATERIALIZED VIEW bv AS SELECT CAST(xs AS text) AS xs, COUNT(*) AS n FROM b GROUP BY xs`;

/** Each view's rows as text (the arrays are cast to text in the views: NaN prints as NaN), sorted. */
function state(rt: SluiceRuntime): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const v of ['av', 'bv'])
    out[v] = rt.engine
      .viewSnapshot(v)
      .rows.map((r) => JSON.stringify(r))
      .sort();
  return out;
}

function body(json: string): TableChanges {
  return parseJsonExact(json) as TableChanges;
}

// A float array's text is PostgreSQL's: its -0 element keeps the sign ({-0,NaN,Infinity,NULL}).
const EXPECTED = {
  av: [
    '{"id":1,"xs":"{-0,NaN,Infinity,NULL}","rs":"{-Infinity}"}',
    '{"id":3,"xs":"{NaN,1.5}","rs":"{NaN}"}',
    '{"id":4,"xs":"{-Infinity,-Infinity}","rs":null}',
  ],
  bv: ['{"xs":"{Infinity}","n":1}', '{"xs":"{NaN}","n":1}'],
};

for (const withCheckpoint of [false, true]) {
  test(`non-finite array elements: accepted by ingest and SQL, kept across a restart (${withCheckpoint ? 'checkpoint and journal tail' : 'journal alone'})`, () => {
    afterCrash(
      (first) => {
        first.executeScript(SCHEMA);
        // As a request body holds them (JSON text, parsed as the server parses it).
        first.ingest(
          'a',
          body(`{"insert": [{"id": 1, "xs": [-0, "NaN", "Infinity", null], "rs": ["-Infinity"]},
                                          {"id": 2, "xs": ["NaN"], "rs": null}]}`),
        );
        first.ingest('b', body(`{"insert": [{"xs": ["NaN"], "n": 1}, {"xs": "{Infinity}", "n": 2}]}`));
        if (withCheckpoint) assert.ok(first.checkpoint() !== null, 'a checkpoint written');
        first.executeScript(
          `INSERT INTO a VALUES (3, ARRAY[CAST('NaN' AS double precision), 1.5], ARRAY[CAST('NaN' AS real)]);
         INSERT INTO a VALUES (4, ARRAY[CAST('-Infinity' AS double precision)], NULL);
         UPDATE a SET xs = array_append(xs, CAST('-Infinity' AS double precision)) WHERE id = 4;
         DELETE FROM a WHERE id = 2;
         INSERT INTO b VALUES (ARRAY[CAST('NaN' AS double precision)], 3);
         UPDATE b SET n = n + 10 WHERE n = 2;
         DELETE FROM b WHERE n = 1`,
        );
        first.ingest('b', body(`{"insert": [{"xs": ["NaN"], "n": 4}], "delete": [{"xs": ["NaN"], "n": 3}]}`));
        assert.deepEqual(state(first), EXPECTED);
      },
      (again) => {
        assert.deepEqual(state(again), EXPECTED, 'the same after the restart');
        again.executeScript('DELETE FROM a; DELETE FROM b');
        assert.deepEqual(state(again), { av: [], bv: [] });
      },
      { checkpoint: null },
    );
  });
}
