// Text that is not well-formed Unicode is refused at the door with INVALID_TEXT and has no effect: a
// lone surrogate ("\ud800") anywhere in the SQL text of POST /v1/sql (with its line and column), in
// any value or key of an ingested row (the whole batch is refused), and request bytes that are not
// UTF-8. Before, such text was stored as bytes that did not match their checksum and the data
// directory no longer started. Real server with a data directory, restarted after each attempt.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loneSurrogateIndex } from '../../src/common/json-codec.ts';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

/** POST with a body given as exact JSON text (escapes such as \ud800 kept as written) or bytes. */
async function post(
  base: string,
  path: string,
  body: string | Buffer,
): Promise<{
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string; position?: unknown } };
}> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('ill-formed text is refused with INVALID_TEXT and the data directory keeps starting', () => {
  let dir: string;
  let server: TestServer;
  const restart = async (): Promise<void> => {
    await server.close();
    server = await startServer({ dataDir: dir });
  };

  before(async () => {
    dir = tempDir();
    server = await startServer({ dataDir: dir });
    await sqlOk(server.base, 'CREATE TABLE t (id INTEGER NOT NULL, name TEXT, PRIMARY KEY (id))');
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  test('a lone surrogate in DDL is INVALID_TEXT at its line and column; nothing is created', async () => {
    const cases: { json: string; position: { line: number; column: number } }[] = [
      { json: String.raw`{"sql":"CREATE TABLE \"\ud800\" (x INT)"}`, position: { line: 1, column: 15 } },
      {
        json: String.raw`{"sql":"CREATE TABLE ok1 (x INT);\nCREATE TABLE u (x TEXT DEFAULT 'a\udc00')"}`,
        position: { line: 2, column: 34 },
      },
      { json: String.raw`{"sql":"INSERT INTO t VALUES (1, 'x\udbff')"}`, position: { line: 1, column: 28 } },
    ];
    for (const c of cases) {
      const r = await post(server.base, '/v1/sql', c.json);
      assert.equal(r.status, 400, c.json);
      assert.equal(r.body.error?.code, 'INVALID_TEXT');
      assert.deepEqual(r.body.error?.position, c.position, c.json);
    }
    await restart();
    const tables = (await request(server.base, 'GET', '/v1/tables')).body.tables as { name: string }[];
    assert.deepEqual(
      tables.map((t) => t.name),
      ['t'],
      'no statement of a refused script ran',
    );
    assert.equal((await request(server.base, 'GET', '/v1/tables/t')).body.rowCount, 0);
  });

  test('a lone surrogate in any ingested value or key refuses the whole batch', async () => {
    const epoch = (await request(server.base, 'GET', '/readyz')).body.epoch;
    for (const body of [
      String.raw`[{"id": 1, "name": "fine"}, {"id": 2, "name": "bad \ud800"}]`,
      String.raw`{"insert": [{"id": 3, "name": "ok"}], "delete": [{"id": 1, "name": "\udfff"}]}`,
      String.raw`[{"id": 4, "na\ud800me": "x"}]`,
    ]) {
      const r = await post(server.base, '/v1/tables/t/rows', body);
      assert.equal(r.status, 400, body);
      assert.equal(r.body.error?.code, 'INVALID_TEXT', body);
      assert.ok(
        r.body.error !== undefined && loneSurrogateIndex(r.body.error.message) === -1,
        'the message itself is well-formed',
      );
    }
    assert.equal((await request(server.base, 'GET', '/readyz')).body.epoch, epoch, 'nothing applied');
    await restart();
    assert.equal((await request(server.base, 'GET', '/v1/tables/t')).body.rowCount, 0);
  });

  test('request bytes that are not UTF-8 are INVALID_TEXT, never replaced silently', async () => {
    const bytes = Buffer.concat([
      Buffer.from('[{"id": 5, "name": "'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}]'),
    ]);
    const r = await post(server.base, '/v1/tables/t/rows', bytes);
    assert.equal(r.status, 400);
    assert.equal(r.body.error?.code, 'INVALID_TEXT');
    const sqlBytes = Buffer.concat([
      Buffer.from('{"sql":"CREATE TABLE x'),
      Buffer.from([0xff]),
      Buffer.from(' (a INT)"}'),
    ]);
    assert.equal((await post(server.base, '/v1/sql', sqlBytes)).body.error?.code, 'INVALID_TEXT');
  });

  test('well-formed text outside the BMP (a surrogate pair) is accepted and survives restarts', async () => {
    const ok = await post(
      server.base,
      '/v1/tables/t/rows',
      String.raw`[{"id": 6, "name": "smile \ud83d\ude00 / 好"}]`,
    );
    assert.equal(ok.status, 200);
    await sqlOk(server.base, 'CREATE TABLE "t😀" (x TEXT)');
    await restart();
    const rows = await request(server.base, 'GET', '/v1/tables/t');
    assert.equal(rows.body.rowCount, 1);
    const read = await request(server.base, 'POST', '/v1/sql', { sql: 'SELECT name FROM t WHERE id = 6' });
    const results = read.body.results as { rows: { name: string }[] }[];
    assert.deepEqual(results[0]?.rows, [{ name: 'smile 😀 / 好' }]);
    const tables = (await request(server.base, 'GET', '/v1/tables')).body.tables as { name: string }[];
    assert.ok(tables.some((t) => t.name === 't😀'));
  });
});
