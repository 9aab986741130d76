// The PostgreSQL forms UPDATE, DELETE, SQL functions and views newly take (ESCAPE e, x ISNULL::int,
// EXTRACT with a quoted or string field, x = ANY (array)) survive a restart: the journaled DDL
// replays to the same catalog and view contents, and the DML's writes to the same rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { afterCrash, sortedRows } from './helpers.ts';

const DDL = `CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, p TEXT, e TEXT, d DATE, n NUMERIC);
CREATE FUNCTION matches(s text, p text, e text) RETURNS boolean RETURN s LIKE p ESCAPE e;
CREATE FUNCTION in_month(d date, m integer) RETURNS boolean RETURN extract('MONTH' FROM d) = ANY (ARRAY[m]);
CREATE MATERIALIZED VIEW flags AS SELECT id, s ISNULL::int AS no_s, extract("Month" FROM d) AS m, matches(s, p, e) AS hit FROM t;
CREATE MATERIALIZED VIEW march AS SELECT id, n FROM t WHERE in_month(d, 3)`;

function contents(rt: SluiceRuntime): Record<string, unknown> {
  return {
    functions: rt.execute('SHOW FUNCTIONS')[0]?.rows ?? [],
    views: rt.execute('SHOW VIEWS')[0]?.rows ?? [],
    t: sortedRows(rt.execute('SELECT * FROM t')[0]?.rows ?? []),
    flags: sortedRows(rt.engine.viewSnapshot('flags').rows),
    march: sortedRows(rt.engine.viewSnapshot('march').rows),
  };
}

test('DDL and DML with the newly taken PostgreSQL forms replay after a crash', () => {
  let expected: Record<string, unknown> | undefined;
  afterCrash(
    (rt) => {
      rt.executeScript(DDL);
      rt.execute(`INSERT INTO t VALUES (1, 'a_b', 'a#_b', '#', DATE '2024-03-05', 0),
        (2, 'axb', 'a#_b', '#', DATE '2024-04-01', 0), (3, NULL, 'x', '', DATE '2024-03-31', 0)`);
      rt.execute('UPDATE t SET n = extract(day FROM d) WHERE s LIKE p ESCAPE e OR s ISNULL');
      rt.execute(`DELETE FROM t WHERE extract("month" FROM d) = ANY (ARRAY[4, 5])`);
      expected = contents(rt);
      assert.deepEqual(
        expected['t'],
        sortedRows([
          { id: 1, s: 'a_b', p: 'a#_b', e: '#', d: '2024-03-05', n: '5' },
          { id: 3, s: null, p: 'x', e: '', d: '2024-03-31', n: '31' },
        ]),
      );
      assert.equal((expected['march'] as unknown[]).length, 2);
    },
    (rt) => assert.deepEqual(contents(rt), expected),
  );
});
