// A Kafka source is a relation whose rows GET /v1/tables/{name}/rows reads; GET /v1/tables/{name}
// answered UNKNOWN_TABLE for it. Both routes now agree: the entry comes in the tables' shape, and a
// name that is neither a table nor a source is still UNKNOWN_TABLE. No broker needed: the source
// exists in the catalog while its connector retries an address nothing listens on.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

describe('GET /v1/tables/{name} for a Kafka source', () => {
  const dirs: string[] = [];
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) removeDir(d);
  });

  test('answers the source as its rows route does, in the tables shape', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const server = await startServer({ dataDir: dir });
    servers.push(server);
    await sqlOk(
      server.base,
      "CREATE SOURCE clicks (k INTEGER NOT NULL, page TEXT, PRIMARY KEY (k)) FROM KAFKA (brokers 'localhost:1', topic 'clicks', format 'upsert');" +
        ' CREATE MATERIALIZED VIEW per_page AS SELECT page, count(*) AS n FROM clicks GROUP BY page',
    );

    const rows = await request(server.base, 'GET', '/v1/tables/clicks/rows');
    assert.equal(rows.status, 200);

    const entry = await request(server.base, 'GET', '/v1/tables/clicks');
    assert.equal(entry.status, 200, JSON.stringify(entry.body));
    const body = entry.body as Record<string, unknown>;
    assert.equal(body.name, 'clicks');
    assert.deepEqual(
      (body.columns as { name: string }[]).map((c) => c.name),
      ['k', 'page'],
    );
    assert.deepEqual(body.key, ['k']);
    assert.equal(body.rowCount, 0);
    assert.deepEqual(body.dependents, ['per_page']);
    assert.match(String(body.sql), /^CREATE SOURCE clicks/i);

    // The tables list is unchanged (sources are listed by GET /v1/sources).
    const list = await request(server.base, 'GET', '/v1/tables');
    assert.deepEqual((list.body as { tables: unknown[] }).tables, []);

    const missing = await request(server.base, 'GET', '/v1/tables/nothing_here');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error?.code, 'UNKNOWN_TABLE');
  });
});
