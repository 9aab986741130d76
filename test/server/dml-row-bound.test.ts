// The server bounds the rows one UPDATE or DELETE may change (--max-dml-rows): past it the statement
// is 400 EPOCH_TOO_LARGE and changes nothing; at it, the statement runs. The bound reaches every
// tenant's runtime through the server's options.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverFixture } from './helpers.ts';

const servers = serverFixture();

async function sql(base: string, text: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/v1/sql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test(
  'an UPDATE or DELETE past --max-dml-rows is refused whole; one at the bound runs',
  { timeout: 60_000 },
  async () => {
    const s = await servers.server({ maxDmlRows: 5 });
    const made = await sql(
      s.base,
      `CREATE TABLE t (id integer PRIMARY KEY, n integer);
     CREATE MATERIALIZED VIEW c AS SELECT count(*) AS rows, sum(n) AS total FROM t;
     INSERT INTO t VALUES (1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 1)`,
    );
    assert.equal(made.status, 200, JSON.stringify(made.body));
    for (const statement of ['DELETE FROM t', 'UPDATE t SET n = 2', 'DELETE FROM t WHERE id > 2']) {
      const refused = await sql(s.base, statement);
      assert.equal(refused.status, 400, statement);
      const error = refused.body.error as { code: string; message: string };
      assert.equal(error.code, 'EPOCH_TOO_LARGE', statement);
      assert.match(error.message, /more than 5 rows of table "t"/, statement);
    }
    const unchanged = await sql(s.base, 'SELECT * FROM c');
    assert.deepEqual((unchanged.body.results as { rows: unknown[] }[])[0]?.rows, [{ rows: 8, total: 8 }]);
    assert.equal((await sql(s.base, 'UPDATE t SET n = 2 WHERE id > 3')).status, 200);
    assert.equal((await sql(s.base, 'DELETE FROM t WHERE id <= 3')).status, 200);
    const after = await sql(s.base, 'SELECT * FROM c');
    assert.deepEqual((after.body.results as { rows: unknown[] }[])[0]?.rows, [{ rows: 5, total: 10 }]);
  },
);
