// A view rebuilt at recovery because its plan changed makes the views reading it (directly, through
// a join's shared arrangement, or through another view) rebuilt too, so their stored histories end
// there as well: a resume from before the restart is RESUME_TOO_OLD, a snapshot is the rows the
// same SELECT answers, and a resume after the next write goes on. The plan change is simulated by
// rewriting g's fingerprint in the checkpoint's header (with its checksum), as in
// plan-change-history.test.ts; the readers' fingerprints are left as they were.
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

const G = 'SELECT d::text AS k, COUNT(*) AS n FROM t GROUP BY d::text';
const SELECTS: Record<string, string> = {
  dd: `SELECT k, n FROM (${G}) AS g WHERE n > 0`,
  jn: `SELECT g.k, g.n, l.label FROM (${G}) AS g JOIN l ON g.k = l.k`,
  ddd: `SELECT k, n * 2 AS twice FROM (${G}) AS g WHERE n > 0`,
};

async function snapshotRows(server: TestServer, view: string): Promise<string[]> {
  const ws = new WsClient(`${server.wsBase}/v1/views/${view}/subscribe`);
  try {
    await ws.waitFor((m) => m.type === 'snapshot_end');
    return sortedRows(ws.of('snapshot').flatMap((m) => m.rows as Record<string, unknown>[]));
  } finally {
    ws.close();
  }
}

test(
  'the readers of a view rebuilt at recovery are rebuilt too and have their histories ended',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir('sluice-rebuilt-readers-');
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir });
      await sqlOk(
        server.base,
        [
          'CREATE TABLE t (id INTEGER NOT NULL, d DOUBLE PRECISION, PRIMARY KEY (id))',
          'CREATE TABLE l (k TEXT NOT NULL, label TEXT, PRIMARY KEY (k))',
          `CREATE MATERIALIZED VIEW g AS ${G}`,
          'CREATE MATERIALIZED VIEW dd AS SELECT k, n FROM g WHERE n > 0',
          'CREATE MATERIALIZED VIEW jn AS SELECT g.k, g.n, l.label FROM g JOIN l ON g.k = l.k',
          'CREATE MATERIALIZED VIEW ddd AS SELECT k, n * 2 AS twice FROM dd',
        ].join('; '),
      );
      await request(server.base, 'POST', '/v1/tables/l/rows', [
        { k: '1e+20', label: 'big' },
        { k: '2.5', label: 'plain' },
      ]);
      const epochs: number[] = [];
      for (const [id, d] of [
        [1, 1e20],
        [2, 2.5],
        [3, 1e20],
      ] as const) {
        const r = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id, d }]);
        epochs.push(r.body.epoch as number);
      }
      const last = epochs[epochs.length - 1] as number;
      for (const view of Object.keys(SELECTS))
        assert.deepEqual(await ndjsonResume(server, view, epochs[0] as number), { status: 200 }, view);
      await server.close(); // writes the checkpoint
      server = null;
      changeStoredPlan(dir, 'g');

      server = await startServer({ dataDir: dir });
      for (const view of ['g', ...Object.keys(SELECTS)]) {
        assert.deepEqual(
          await ndjsonResume(server, view, last),
          { status: 410, code: 'RESUME_TOO_OLD' },
          view,
        );
      }
      for (const [view, select] of Object.entries(SELECTS)) {
        const adHoc = await sqlOk(server.base, select);
        const expected = (adHoc.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
        assert.deepEqual(await snapshotRows(server, view), sortedRows(expected), view);
      }
      assert.equal((await snapshotRows(server, 'jn')).length, 2);
      const next = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: 9, d: 2.5 }]);
      for (const view of Object.keys(SELECTS))
        assert.deepEqual(await ndjsonResume(server, view, next.body.epoch as number), { status: 200 }, view);
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);
