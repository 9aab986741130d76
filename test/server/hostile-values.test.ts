// Hostile values from an outside attack, against a real server: an ingested value nested 100,000
// deep (valid JSON) was a 500 (the error message's JSON.stringify exhausted the stack); a 5 MB
// string of digits for an integer column was converted by BigInt (seconds of event loop) and
// echoed whole in the error; a view whose LIKE has many wildcards, fed a long text, backtracked for
// minutes. Each is now a 400 with a bounded message, or an answer, and the batch has no effect.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestServer, request, sqlOk, startServer } from './helpers.ts';

describe('hostile ingested values are refused with a bounded 400, and LIKE does not backtrack', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await sqlOk(
      server.base,
      'CREATE TABLE h (id INTEGER NOT NULL, n BIGINT, doc JSONB, s TEXT, PRIMARY KEY (id));' +
        "CREATE MATERIALIZED VIEW hv AS SELECT id FROM h WHERE s LIKE '%a%a%a%a%a%a%a%a%a%a%b'",
    );
  });
  after(() => server.close());

  const rows = async (): Promise<number> => {
    const r = await request(server.base, 'GET', '/v1/tables/h/rows');
    return (r.body.rows as unknown[]).length;
  };

  for (const column of ['n', 'doc', 's']) {
    test(`a value nested 100,000 deep for ${column} is a 400 with a short message`, async () => {
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      const r = await request(
        server.base,
        'POST',
        '/v1/tables/h/rows',
        undefined,
        `[{"id":1,"${column}":${deep}}]`,
      );
      assert.equal(r.status, 400, r.text.slice(0, 300));
      assert.equal(r.body.error?.code, 'INVALID_VALUE');
      assert.ok(r.text.length < 1000, `message of ${r.text.length} bytes`);
      assert.equal(await rows(), 0);
    });
  }

  test('5 MB of digits for a bigint is out of range, and the message does not repeat them', async () => {
    const r = await request(server.base, 'POST', '/v1/tables/h/rows', [
      { id: 1, n: 1 },
      { id: 2, n: `-${'9'.repeat(5_000_000)}` },
    ]);
    assert.equal(r.status, 400);
    assert.equal(r.body.error?.code, 'INVALID_VALUE');
    assert.match(
      r.body.error?.message ?? '',
      /within the range of bigint, got "-9{199}"\.\.\. \(5000001 characters\)/,
    );
    assert.ok(r.text.length < 1000, `message of ${r.text.length} bytes`);
    assert.equal(await rows(), 0);
    // The same digits in SQL: the cast refuses them as out of range too.
    const cast = await request(server.base, 'POST', '/v1/sql', {
      sql: `SELECT CAST('${'9'.repeat(100_000)}' AS BIGINT) AS x`,
    });
    assert.equal(cast.body.error?.code, 'NUMERIC_OVERFLOW');
    // Leading zeros do not count: this is 7.
    const zeros = await request(server.base, 'POST', '/v1/tables/h/rows?wait=true', [
      { id: 3, n: ` +${'0'.repeat(100)}7 ` },
    ]);
    assert.equal(zeros.status, 200, zeros.text);
    const read = await request(server.base, 'GET', '/v1/tables/h/rows?id=3');
    assert.deepEqual(
      (read.body.rows as { n: unknown }[]).map((row) => row.n),
      [7],
    );
  });

  test("STRING_AGG past a text value's limit is STRING_TOO_LONG, not a 500 from the engine", async () => {
    await sqlOk(server.base, 'CREATE TABLE many (i INTEGER)');
    const ingest = await request(
      server.base,
      'POST',
      '/v1/tables/many/rows?wait=true',
      Array.from({ length: 600 }, (_, i) => ({ i })),
    );
    assert.equal(ingest.status, 200, ingest.text);
    // 600 copies of a million characters: past the engine's own string limit, not only Sluice's.
    const r = await request(server.base, 'POST', '/v1/sql', {
      sql: "SELECT length(string_agg(repeat('x', 1000000), ',')) AS n FROM many",
    });
    assert.equal(r.status, 400, r.text.slice(0, 300));
    assert.equal(r.body.error?.code, 'STRING_TOO_LONG');
  });

  test('a view with many LIKE wildcards keeps up with a long text that does not match', async () => {
    const r = await request(server.base, 'POST', '/v1/tables/h/rows?wait=true', [
      { id: 10, s: 'a'.repeat(100_000) },
      { id: 11, s: `${'a'.repeat(1000)}b` },
    ]);
    assert.equal(r.status, 200, r.text);
    const view = await request(server.base, 'GET', '/v1/views/hv/rows');
    assert.deepEqual(
      (view.body.rows as { id: number }[]).map((row) => row.id),
      [11],
    );
  });
});
