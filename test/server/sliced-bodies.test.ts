// A large ingest body is read a slice of BODY_SLICE_BYTES per turn of the event loop (other
// requests go on between), and nothing applies before it is read whole: counted here by slices, with
// a bad last row refusing the whole batch, a last row the byte reader declines taking the general
// path, an idempotency key still answering once, and a restart giving back every acknowledged row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BODY_SLICE_BYTES, bodySlicesRead } from '../../src/server/request-bodies.ts';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

/** `n` rows from id `from`, about 60 bytes each, and an optional last row as raw JSON text. */
function rowsBody(n: number, from: number, last?: string): string {
  const rows: string[] = [];
  for (let i = from; i < from + n; i++)
    rows.push(`{"id":${i},"g":${i % 7},"s":"row ${String(i).padStart(20, '0')}"}`);
  if (last !== undefined) rows.push(last);
  return `[${rows.join(',')}]`;
}

describe('large ingest bodies are read in slices', () => {
  let dir: string;
  let server: TestServer;

  before(async () => {
    dir = tempDir();
    server = await startServer({ dataDir: dir });
    await sqlOk(
      server.base,
      `CREATE TABLE t (id BIGINT PRIMARY KEY, g INTEGER, s TEXT, x DOUBLE);
       CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) AS n FROM t GROUP BY g`,
    );
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  const ingest = (raw: string) => request(server.base, 'POST', '/v1/tables/t/rows', undefined, raw);
  const ingestKeyed = async (raw: string, key: string) => {
    const r = await fetch(`${server.base}/v1/tables/t/rows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: raw,
    });
    return { status: r.status, replayed: r.headers.get('idempotent-replayed'), text: await r.text() };
  };
  const count = async (): Promise<number> => {
    const r = await sqlOk(server.base, 'SELECT count(*) AS n FROM t');
    const results = (r.body as { results: { rows: { n: number | string }[] }[] }).results;
    return Number(results[0]?.rows[0]?.n);
  };

  test('a body of many slices is read a slice per turn and stored whole', async () => {
    const body = rowsBody(40_000, 0);
    const before = bodySlicesRead.count;
    const r = await ingest(body);
    assert.equal(r.status, 200, r.text);
    const slices = bodySlicesRead.count - before;
    // Each slice reads BODY_SLICE_BYTES and then to its row's end: no fewer, and at most one more.
    const least = Math.ceil(Buffer.byteLength(body) / (BODY_SLICE_BYTES + 100));
    assert.ok(
      slices >= least && slices <= Math.ceil(Buffer.byteLength(body) / BODY_SLICE_BYTES) + 1,
      `${slices} slices`,
    );
    assert.equal(await count(), 40_000);
  });

  test('a bad row at the end refuses the whole batch after every slice was read', async () => {
    const before = bodySlicesRead.count;
    const r = await ingest(rowsBody(40_000, 100_000, '{"id":1,"g":"not a number"}'));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error?.code, 'INVALID_VALUE');
    assert.ok(bodySlicesRead.count - before > 5);
    assert.equal(await count(), 40_000);
  });

  test('a last row the byte reader declines takes the general path, which stores it all', async () => {
    const before = bodySlicesRead.count;
    const r = await ingest(rowsBody(40_000, 200_000, '{"id":-1,"x":1.5,"s":"\\u00e9"}'));
    assert.equal(r.status, 200, r.text);
    assert.ok(bodySlicesRead.count - before > 5);
    assert.equal(await count(), 80_001);
    const last = await sqlOk(server.base, 'SELECT x, s FROM t WHERE id = -1');
    assert.deepEqual((last.body as { results: { rows: unknown[] }[] }).results[0]?.rows, [
      { x: 1.5, s: 'é' },
    ]);
  });

  test('an idempotency key answers a sliced body once', async () => {
    const body = rowsBody(20_000, 300_000);
    const first = await ingestKeyed(body, 'sliced-1');
    assert.equal(first.status, 200, first.text);
    const again = await ingestKeyed(body, 'sliced-1');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
    assert.equal(await count(), 100_001);
  });

  test('what was acknowledged is there after a restart', async () => {
    await server.close();
    server = await startServer({ dataDir: dir });
    assert.equal(await count(), 100_001);
  });
});
