// A JSON number beyond a double (1e400, -1e400) is refused by the HTTP body parser itself, with the
// column, table and row it is in (nested in a jsonb value, where in it), never read as Infinity; a
// double column's NaN and ±Infinity are sent as the text "NaN", "Infinity", "-Infinity" and taken as
// values (that they survive a crash is in non-finite-dml.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestServer, request, sqlOk, startServer } from './helpers.ts';

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
