// A resume is only served when it is on the view incarnation the client followed. A view dropped and
// created again under the same name at the same epoch (no write in between, or in one script)
// has the same creation epoch as the old one's last: a client of the old view holding its rows at
// that epoch must not be handed the new definition's changes on top of them. A resume from the
// creation epoch of such a view is RESUME_TOO_OLD (also for a client of the new view that took its
// snapshot at that epoch: it subscribes again with a snapshot), across restarts, over the WebSocket,
// NDJSON /changes and query subscriptions alike; a resume after that epoch goes on as before.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type TestServer,
  WsClient,
  removeDir,
  request,
  sqlOk,
  startServer,
  tempDir,
  waitUntil,
  ndjsonResume,
} from './helpers.ts';

const SETUP = `CREATE TABLE t (id INTEGER NOT NULL, v INTEGER, PRIMARY KEY (id));
  CREATE MATERIALIZED VIEW v AS SELECT id, v FROM t WHERE v > 0`;

async function insert(server: TestServer, rows: { id: number; v: number }[]): Promise<number> {
  const res = await request(server.base, 'POST', '/v1/tables/t/rows', rows);
  assert.equal(res.status, 200, res.text);
  return res.body.epoch as number;
}

/** The WebSocket resume's first message (an error or `subscribed`). */
async function wsResume(server: TestServer, view: string, from: number): Promise<Record<string, unknown>> {
  const client = new WsClient(`${server.wsBase}/v1/views/${view}/subscribe?resumeFrom=${from}`);
  try {
    return await client.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
  } finally {
    client.close();
  }
}

describe('a resume across a re-created view', () => {
  test('dropped and created again at the same epoch: a resume from that epoch is refused', async () => {
    const server = await startServer();
    try {
      await sqlOk(server.base, SETUP);
      const e = await insert(server, [
        { id: 1, v: 1 },
        { id: 2, v: -1 },
      ]);
      // A client of the old view holds {1} at epoch e; the new view holds {2} at e.
      await sqlOk(server.base, 'DROP MATERIALIZED VIEW v');
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW v AS SELECT id, v FROM t WHERE v < 0');
      assert.deepEqual(await ndjsonResume(server, 'v', e), { status: 410, code: 'RESUME_TOO_OLD' });
      const ws = await wsResume(server, 'v', e);
      assert.equal(ws.type, 'error');
      assert.equal(ws.code, 'RESUME_TOO_OLD');
      assert.match(String(ws.message), /created again/);
      // After a write, a client of the new view resumes from it as before.
      const next = await insert(server, [{ id: 3, v: -3 }]);
      assert.equal((await wsResume(server, 'v', next)).type, 'subscribed');
      assert.deepEqual(await ndjsonResume(server, 'v', next), { status: 200 });
      // A drop and a create in one script.
      await sqlOk(server.base, 'DROP MATERIALIZED VIEW v; CREATE MATERIALIZED VIEW v AS SELECT id, v FROM t');
      assert.deepEqual(await ndjsonResume(server, 'v', next), { status: 410, code: 'RESUME_TOO_OLD' });
      // A view of a new name, or one created after a write since the drop, resumes from its creation.
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW w AS SELECT id FROM t');
      assert.deepEqual(await ndjsonResume(server, 'w', next), { status: 200 });
      await sqlOk(server.base, 'DROP MATERIALIZED VIEW w');
      const later = await insert(server, [{ id: 4, v: 4 }]);
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW w AS SELECT v FROM t');
      assert.deepEqual(await ndjsonResume(server, 'w', later), { status: 200 });
    } finally {
      await server.close();
    }
  });

  test('the refusal holds across restarts, also when the drop and the create straddle one', async () => {
    const dir = tempDir('sluice-resume-incarnation-');
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir });
      await sqlOk(server.base, SETUP);
      const e = await insert(server, [{ id: 1, v: 1 }]);
      await sqlOk(server.base, 'DROP MATERIALIZED VIEW v');
      await server.close();
      server = await startServer({ dataDir: dir });
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW v AS SELECT id, v FROM t WHERE v < 0');
      assert.deepEqual(await ndjsonResume(server, 'v', e), { status: 410, code: 'RESUME_TOO_OLD' });
      // Replayed from the whole journal (checkpoints off), then from the checkpoint written at close.
      await server.close();
      server = await startServer({ dataDir: dir, checkpoint: false });
      assert.deepEqual(await ndjsonResume(server, 'v', e), { status: 410, code: 'RESUME_TOO_OLD' });
      await server.close();
      server = await startServer({ dataDir: dir });
      assert.deepEqual(await ndjsonResume(server, 'v', e), { status: 410, code: 'RESUME_TOO_OLD' });
      const next = await insert(server, [{ id: 2, v: -2 }]);
      assert.deepEqual(await ndjsonResume(server, 'v', next), { status: 200 });
    } finally {
      await server?.close();
      removeDir(dir);
    }
  });

  test('a query subscription whose temporary view went and came back at the same epoch', async () => {
    const server = await startServer({ querySubscriptions: { lingerMs: 100 } });
    const clients: WsClient[] = [];
    try {
      await sqlOk(server.base, SETUP);
      await insert(server, [{ id: 1, v: 1 }]);
      const url = `${server.wsBase}/v1/subscribe?sql=${encodeURIComponent('SELECT id FROM t WHERE v > 0')}`;
      const first = new WsClient(url);
      clients.push(first);
      const end = await first.waitFor((m) => m.type === 'snapshot_end');
      first.close();
      const temporary = async (): Promise<number> => {
        const r = await request(server.base, 'GET', '/v1/views');
        return (r.body.views as { name: string }[]).filter((v) => v.name.startsWith('sluice_sub_')).length;
      };
      await waitUntil(async () => (await temporary()) === 0, 10_000, 'the temporary view dropped');
      // The view is created again for the resume, at the epoch it was dropped at.
      const resumed = new WsClient(`${url}&resumeFrom=${String(end.epoch)}`);
      clients.push(resumed);
      const answer = await resumed.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
      assert.equal(answer.type, 'error');
      assert.equal(answer.code, 'RESUME_TOO_OLD');
      assert.equal(await resumed.waitClosed(), 4409);
    } finally {
      for (const c of clients) c.close();
      await server.close();
    }
  });
});
