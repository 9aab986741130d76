// A view whose stored plan fingerprint in the checkpoint differs from the plan this version builds
// (what an upgrade that plans the view differently leaves) is rebuilt from its inputs at recovery,
// and its stored history ends there: a resume from any epoch up to the recovered one is
// RESUME_TOO_OLD (the old plan's operator state, not its rows, was kept, so nothing proves the rows
// follow from the stored changes), also after a further restart; a snapshot answers the view's rows
// and a resume after the next write goes on. The plan change is simulated by rewriting the
// fingerprint in the checkpoint's header (with its checksum), so no older tree is needed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeStoredPlan } from '../support/stored-plan.ts';
import {
  type TestServer,
  WsClient,
  removeDir,
  request,
  sortedRows,
  sqlOk,
  startServer,
  tempDir,
  ndjsonResume,
} from './helpers.ts';

test(
  'a view rebuilt at recovery because its plan changed has its history ended',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir('sluice-plan-change-');
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir });
      await sqlOk(
        server.base,
        'CREATE TABLE t (id INTEGER NOT NULL, g TEXT, v INTEGER, PRIMARY KEY (id)); CREATE MATERIALIZED VIEW totals AS SELECT g, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY g',
      );
      const epochs: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: i, g: `g${i % 2}`, v: i }]);
        epochs.push(r.body.epoch as number);
      }
      const last = epochs[epochs.length - 1] as number;
      // Before the change, resumes within the changelog are served.
      assert.deepEqual(await ndjsonResume(server, 'totals', epochs[0] as number), { status: 200 });
      await server.close(); // writes the checkpoint
      server = null;
      changeStoredPlan(dir, 'totals');

      server = await startServer({ dataDir: dir });
      const health = await request(server.base, 'GET', '/v1/views/totals/rows');
      assert.equal(health.body.epoch, last);
      for (const from of [epochs[0] as number, last]) {
        assert.deepEqual(
          await ndjsonResume(server, 'totals', from),
          { status: 410, code: 'RESUME_TOO_OLD' },
          `from ${from}`,
        );
      }
      const ws = new WsClient(`${server.wsBase}/v1/views/totals/subscribe?resumeFrom=${last}`);
      try {
        const first = await ws.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
        assert.equal(first.code, 'RESUME_TOO_OLD');
        assert.match(String(first.message), /recomputed at epoch/);
      } finally {
        ws.close();
      }
      // A snapshot is the view's rows, as the same SELECT answers them.
      const snapshot = new WsClient(`${server.wsBase}/v1/views/totals/subscribe`);
      try {
        await snapshot.waitFor((m) => m.type === 'snapshot_end');
        const rows = snapshot.of('snapshot').flatMap((m) => m.rows as Record<string, unknown>[]);
        const adHoc = await sqlOk(server.base, 'SELECT g, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY g');
        const expected = (adHoc.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
        assert.deepEqual(sortedRows(rows), sortedRows(expected));
      } finally {
        snapshot.close();
      }
      const next = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: 9, g: 'g0', v: 9 }]);
      const after = next.body.epoch as number;
      assert.deepEqual(await ndjsonResume(server, 'totals', after), { status: 200 });

      // The end is kept across a restart (the checkpoint now has this version's plan).
      await server.close();
      server = await startServer({ dataDir: dir });
      assert.deepEqual(await ndjsonResume(server, 'totals', last), { status: 410, code: 'RESUME_TOO_OLD' });
      assert.deepEqual(await ndjsonResume(server, 'totals', after), { status: 200 });
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);
