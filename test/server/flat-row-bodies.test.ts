// An ingest body of flat rows in ASCII is read from its bytes (json-codec-rows.ts), not through
// JSON.parse: counted here, with the rows stored as sent and a restart replaying them the same.
// Bodies it declines (a duplicate key, a fraction, an escape, the {"insert": ...} form) take the
// general path as before and answer as before.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { flatRowBodiesRead } from '../../src/common/json-codec-rows.ts';
import { type TestServer, allViewRows, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

describe('flat row bodies read from their bytes', () => {
  let dir: string;
  let server: TestServer;

  before(async () => {
    dir = tempDir();
    server = await startServer({ dataDir: dir });
    await sqlOk(
      server.base,
      `CREATE TABLE t (id BIGINT NOT NULL, n INTEGER, x DOUBLE, s TEXT, b BOOLEAN, PRIMARY KEY (id));
       CREATE MATERIALIZED VIEW v AS SELECT id, n, x, s, b FROM t`,
    );
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  const ingest = (raw: string) => request(server.base, 'POST', '/v1/tables/t/rows', undefined, raw);
  const rowsOf = async (): Promise<string[]> =>
    (await allViewRows(server.base, 'v')).map((r) => JSON.stringify(r)).sort();

  test('a flat ASCII body takes the byte reader and stores what was sent', async () => {
    const before = flatRowBodiesRead.count;
    const body =
      ' [ {"id": 123456789012345, "n": -7, "x": -0, "s": "a b", "b": true},\n' +
      '{"id":2,"n":null,"x":3,"s":"","b":false}, {"n":5,"id":3} ] ';
    const r = await ingest(body);
    assert.equal(r.status, 200, r.text);
    assert.equal(flatRowBodiesRead.count - before, 1);
    assert.deepEqual(await rowsOf(), [
      '{"id":123456789012345,"n":-7,"x":0,"s":"a b","b":true}',
      '{"id":2,"n":null,"x":3,"s":"","b":false}',
      '{"id":3,"n":5,"x":null,"s":null,"b":null}',
    ]);
  });

  test('bodies it declines take the general path, which answers as before', async () => {
    const before = flatRowBodiesRead.count;
    assert.equal((await ingest('[{"id":10,"n":1,"n":2}]')).status, 200); // the last duplicate wins
    assert.equal((await ingest('[{"id":11,"x":1.5,"s":"\\u00e9"}]')).status, 200);
    assert.equal((await ingest('{"insert":[{"id":12,"n":4}]}')).status, 200);
    const bad = await ingest('[{"id":13,"n":01}]');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.code, 'INVALID_JSON');
    const big = await ingest('[{"id":9007199254740993}]');
    assert.equal(big.status, 200, big.text);
    assert.equal(flatRowBodiesRead.count, before);
    const rows = await rowsOf();
    assert.ok(rows.includes('{"id":10,"n":2,"x":null,"s":null,"b":null}'), rows.join('\n'));
    assert.ok(rows.includes('{"id":11,"n":null,"x":1.5,"s":"é","b":null}'));
    assert.ok(rows.includes('{"id":12,"n":4,"x":null,"s":null,"b":null}'));
    assert.ok(rows.includes('{"id":"9007199254740993","n":null,"x":null,"s":null,"b":null}'));
  });

  test('what was acknowledged is there after a restart', async () => {
    const rows = await rowsOf();
    await server.close();
    server = await startServer({ dataDir: dir });
    assert.deepEqual(await rowsOf(), rows);
  });
});
