// A source's group_id past what Kafka's protocol carries: the protocol writes a group id as a string
// of at most 32,767 bytes and a reading attempt joins `<group_id>-r<8 hex>`, so a longer id was
// accepted and the source then retried for ever ("Failed to find group coordinator"; probed on a
// real broker: 32,757 characters run, 32,758 never do). It is now refused at CREATE, at the option,
// and nothing is created. A real server; no broker is needed (the refused statement never connects).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type TestServer, request, sql, sqlOk, startServer } from './server/helpers.ts';
import { MAX_GROUP_ID_BYTES } from '../src/server/connectors.ts';

describe('Kafka source group_id length', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  test('a group id longer than the protocol carries (in UTF-8 bytes) is refused at CREATE', async () => {
    assert.equal(MAX_GROUP_ID_BYTES, 32_757);
    const server = await startServer();
    servers.push(server);
    const create = (name: string, group: string) =>
      sql(
        server.base,
        `CREATE SOURCE ${name} (a INTEGER) FROM KAFKA (brokers 'localhost:1', topic 't', group_id '${group}')`,
      );
    // 'é' is two bytes in UTF-8: 16,379 of them are 32,758 bytes though only 16,379 characters.
    for (const group of ['g'.repeat(MAX_GROUP_ID_BYTES + 1), 'é'.repeat(16_379), 'g'.repeat(100_000)]) {
      const r = await create('too_long', group);
      assert.equal(r.status, 400);
      assert.equal(r.body.error?.code, 'INVALID_OPTION');
      assert.match(
        r.body.error?.message ?? '',
        /consumer group id of \d+ bytes is too long: at most 32757 bytes/,
      );
      assert.deepEqual(r.body.error?.position, { line: 1, column: 91 });
    }
    assert.deepEqual((await request(server.base, 'GET', '/v1/sources')).body.sources, []);
    await sqlOk(
      server.base,
      `CREATE SOURCE longest (a INTEGER) FROM KAFKA (brokers 'localhost:1', topic 't', group_id '${'g'.repeat(MAX_GROUP_ID_BYTES)}')`,
    );
  });
});
