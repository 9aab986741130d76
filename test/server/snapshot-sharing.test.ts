// Subscribers snapshotting one view at one epoch share its encoded chunks: before, each one
// converted and stringified every row itself (N subscribers, N times the rows). Counted, not timed:
// rows the runtime encoded into snapshot chunks, and the chunks it sent from the shared cache.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FoldedView, request, sqlOk, startServer, waitUntil, WsClient, type TestServer } from './helpers.ts';

describe('shared snapshot chunks', () => {
  let server: TestServer;
  const ROWS = 3000;

  before(async () => {
    server = await startServer({ heartbeatMs: 100, snapshotChunkRows: 100 });
    await sqlOk(
      server.base,
      'CREATE TABLE pts (id BIGINT NOT NULL, label TEXT, PRIMARY KEY (id)); ' +
        'CREATE MATERIALIZED VIEW pts_v AS SELECT id, label FROM pts',
    );
    const rows = Array.from({ length: ROWS }, (_, id) => ({ id, label: `row ${id} é😀` }));
    const r = await request(server.base, 'POST', '/v1/tables/pts/rows?wait=true', rows);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => {
    await server.close();
  });

  test('four subscribers at one epoch encode the rows about once, and each folds to the view', async () => {
    const cache = server.app.sluice.snapshotChunks;
    const encodedBefore = cache.rowsEncoded;
    const clients = Array.from(
      { length: 4 },
      () => new WsClient(`${server.wsBase}/v1/views/pts_v/subscribe?snapshot=true`),
    );
    try {
      const ends = await Promise.all(clients.map((c) => c.waitFor((m) => m.type === 'snapshot_end')));
      assert.ok(ends.every((e) => e.epoch === ends[0]?.epoch && e.rows === ROWS));
      for (const c of clients) {
        const folded = new FoldedView();
        for (const m of c.messages) folded.apply(m);
        assert.equal(folded.rows.size, ROWS);
        assert.equal(c.of('snapshot').length, ROWS / 100);
      }
      const encoded = cache.rowsEncoded - encodedBefore;
      // Each subscriber encoding its own chunks made 4 × ROWS; a stream that starts late or falls
      // behind encodes its first chunks again, hence the margin.
      assert.ok(encoded < 2 * ROWS, `encoded ${encoded} rows for 4 subscribers of ${ROWS}`);
      await waitUntil(() => cache.heldBytes === 0, 10_000, 'chunks dropped with the last stream');
    } finally {
      for (const c of clients) c.close();
    }
  });
});
