// A JSON number beyond a double (1e400, -1e400) is refused by the HTTP body parser itself, with the
// column, table and row it is in (nested in a jsonb value, where in it), never read as Infinity; a
// double column's NaN and ±Infinity are sent as the text "NaN", "Infinity", "-Infinity" or written by
// SQL, and the write path takes them as values: they survive a restart from the journal and from a
// checkpoint after a crash (the data directory copied while the server runs, as kill -9 leaves it).
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Value } from '../../src/common/types.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { type TestServer, openRuntime, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

describe('the HTTP body parser refuses a number beyond a double', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await sqlOk(
      server.base,
      'CREATE TABLE t (id INTEGER PRIMARY KEY, d DOUBLE PRECISION, i INTEGER, j JSONB, n NUMERIC(5,2))',
    );
  });
  after(() => server.close());

  const cases: [string, string, string][] = [
    ['[{"id":1,"d":1e400}]', 'd', 'in insert row 1'],
    ['[{"id":1,"i":-1e400}]', 'i', 'in insert row 1'],
    ['{"insert":[{"id":1},{"id":2,"n":1E+999}]}', 'n', 'in insert row 2'],
    ['{"delete":[{"id":1,"d":-1e400}]}', 'd', 'in delete row 1'],
    ['[{"id":1,"j":{"a":[1,1e400]}}]', 'j', 'in insert row 1 at $.a[1] of its value'],
    // a run of 16 digits elsewhere selects the exact parser: it refuses the same way
    ['[{"id":1,"j":1234567890123456789,"d":-1e400}]', 'd', 'in insert row 1'],
  ];
  for (const [body, column, detail] of cases) {
    test(body, async () => {
      const r = await request(server.base, 'POST', '/v1/tables/t/rows', undefined, body);
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(r.body.error, {
        code: 'INVALID_VALUE',
        message: `invalid value for column "${column}" of table "t": number out of range for type double precision`,
        detail,
      });
    });
  }

  test('a number beyond a double elsewhere in a body is refused with its path', async () => {
    const r = await request(server.base, 'POST', '/v1/sql', undefined, '{"sql":"SELECT 1","x":[2e400]}');
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body.error, {
      code: 'INVALID_VALUE',
      message: 'number out of range for type double precision',
      detail: 'at $.x[0]',
    });
  });

  test('NaN and ±Infinity as text are values of a double column; an integer column refuses them', async () => {
    const ok = await request(server.base, 'POST', '/v1/tables/t/rows', [
      { id: 10, d: 'NaN' },
      { id: 11, d: 'Infinity' },
      { id: 12, d: '-Infinity' },
    ]);
    assert.equal(ok.status, 200, ok.text);
    const rows = await request(server.base, 'GET', '/v1/tables/t/rows');
    const d = (rows.body.rows as { id: number; d: unknown }[])
      .filter((r) => r.id >= 10)
      .sort((a, b) => a.id - b.id)
      .map((r) => r.d);
    assert.deepEqual(d, ['NaN', 'Infinity', '-Infinity']);
    const bad = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: 13, i: 'NaN' }]);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error?.code, 'INVALID_VALUE');
  });
});

const SCHEMA = `CREATE TABLE f (id integer PRIMARY KEY, x double precision);
CREATE TABLE g (x double precision, y integer);
CREATE MATERIALIZED VIEW fv AS SELECT id, x FROM f;
CREATE MATERIALIZED VIEW gv AS SELECT x, COUNT(*) AS n FROM g GROUP BY x`;

function state(rt: SluiceRuntime): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const v of ['fv', 'gv']) {
    out[v] = rt.engine
      .viewSnapshot(v)
      .rows.map((r) => (Object.values(r) as Value[]).map((x) => String(x)).join('|'))
      .sort();
  }
  return out;
}

test('NaN and ±Infinity from HTTP text and from SQL survive a crash, from a checkpoint and from the journal', () => {
  const dir = tempDir();
  const crashed = tempDir();
  try {
    const first = openRuntime(dir);
    first.executeScript(SCHEMA);
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
    const expected = {
      fv: ['1|NaN', '2|Infinity', '3|Infinity'],
      gv: ['-Infinity|1', 'NaN|1'],
    };
    assert.deepEqual(state(first), expected);
    first.flush();
    cpSync(dir, crashed, { recursive: true });
    first.close();
    const again = openRuntime(crashed);
    try {
      assert.deepEqual(state(again), expected, 'the same after the crash');
      assert.notEqual(again.recovery.checkpointEpoch, null, 'restored from the checkpoint');
      assert.ok(again.recovery.replayedEntries > 0, 'then the tail replayed from the journal');
      again.executeScript('DELETE FROM f; DELETE FROM g');
      assert.deepEqual(state(again), { fv: [], gv: [] });
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
    removeDir(crashed);
  }
});
