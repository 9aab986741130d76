// The resume contract on the one-table form of ended histories (changelog_history_ends with a
// reason): what a client that applied epoch e of a view gets when it resumes after the view's name
// went through DDL. Refused (RESUME_TOO_OLD) whenever the view it would be served is not the one
// the client followed up to e; served, with exactly the stored changes after e, otherwise — over
// NDJSON and the WebSocket, and after a restart from the checkpoint or from the journal alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import {
  type TestServer,
  WsClient,
  afterCrash,
  ndjsonResume,
  removeDir,
  request,
  sql,
  sqlOk,
  startServer,
  tempDir,
} from './helpers.ts';
import { OPERATOR_TOKEN, TEST_KDF, call, startAuthServer } from './auth-helpers.ts';

const SETUP = `CREATE TABLE t (id INTEGER NOT NULL, v INTEGER, PRIMARY KEY (id));
  CREATE MATERIALIZED VIEW u AS SELECT id, v FROM t WHERE v > 0;
  CREATE MATERIALIZED VIEW d AS SELECT COUNT(*) AS n FROM u;
  CREATE MATERIALIZED VIEW w AS SELECT id FROM t`;

async function insert(server: TestServer, rows: { id: number; v: number }[]): Promise<number> {
  const res = await request(server.base, 'POST', '/v1/tables/t/rows', rows);
  assert.equal(res.status, 200, res.text);
  return res.body.epoch as number;
}

const REFUSED = { status: 410, code: 'RESUME_TOO_OLD' };
const SERVED = { status: 200 };

/** The WebSocket resume's first message. */
async function wsFirst(server: TestServer, view: string, from: number): Promise<Record<string, unknown>> {
  const client = new WsClient(`${server.wsBase}/v1/views/${view}/subscribe?resumeFrom=${from}`);
  try {
    return await client.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
  } finally {
    client.close();
  }
}

async function expectResumes(
  server: TestServer,
  expected: readonly [view: string, from: number, answer: typeof REFUSED | typeof SERVED][],
  when: string,
): Promise<void> {
  for (const [view, from, answer] of expected) {
    assert.deepEqual(await ndjsonResume(server, view, from), answer, `${when}: ${view} from ${from}`);
  }
}

test(
  'DROP … CASCADE, a script re-creating what it dropped, CREATE OR REPLACE, across restarts',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir('sluice-resume-history-');
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir });
      await sqlOk(server.base, SETUP);
      const e1 = await insert(server, [
        { id: 1, v: 1 },
        { id: 2, v: -2 },
      ]);
      // No CREATE OR REPLACE for views: refused, nothing changes, resumes go on.
      const replace = await sql(server.base, 'CREATE OR REPLACE MATERIALIZED VIEW u AS SELECT id, v FROM t');
      assert.equal(replace.status, 400, replace.text);
      await expectResumes(
        server,
        [
          ['u', e1, SERVED],
          ['d', e1, SERVED],
        ],
        'after CREATE OR REPLACE',
      );

      // u replaced by a script; d, over it, dropped by the CASCADE and created again over the new u.
      await sqlOk(
        server.base,
        `DROP MATERIALIZED VIEW u CASCADE;
       CREATE MATERIALIZED VIEW u AS SELECT id, v FROM t WHERE v < 0;
       CREATE MATERIALIZED VIEW d AS SELECT COUNT(*) AS n FROM u`,
      );
      const first = await wsFirst(server, 'd', e1);
      assert.equal(first.code, 'RESUME_TOO_OLD');
      assert.match(String(first.message), /created again at epoch/);
      const e2 = await insert(server, [{ id: 3, v: -3 }]);

      // A CASCADE alone, then each name created again at that epoch by its own request.
      await sqlOk(server.base, 'DROP MATERIALIZED VIEW u CASCADE');
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW u AS SELECT id, v FROM t');
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW d AS SELECT COUNT(*) AS n FROM u');
      const expected: [string, number, typeof REFUSED | typeof SERVED][] = [
        ['u', e1, REFUSED],
        ['d', e1, REFUSED],
        ['u', e2, REFUSED],
        ['d', e2, REFUSED],
        ['w', e1, SERVED],
        ['w', e2, SERVED],
      ];
      await expectResumes(server, expected, 'live');
      await server.close(); // with a checkpoint
      server = null;
      server = await startServer({ dataDir: dir, checkpoint: false });
      await expectResumes(server, expected, 'from the journal alone');
      await server.close();
      server = null;
      server = await startServer({ dataDir: dir });
      await expectResumes(server, expected, 'from the checkpoint');
      const e3 = await insert(server, [{ id: 4, v: 4 }]);
      await expectResumes(
        server,
        [
          ['u', e3, SERVED],
          ['d', e3, SERVED],
          ['w', e2, SERVED],
        ],
        'after a write',
      );
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);

test('retention past a re-created view’s creation epoch keeps both refusals apart', async () => {
  const server = await startServer({ retention: { epochs: 2, ms: null } });
  try {
    await sqlOk(server.base, SETUP);
    const e = await insert(server, [{ id: 1, v: 1 }]);
    await sqlOk(server.base, 'DROP MATERIALIZED VIEW w; CREATE MATERIALIZED VIEW w AS SELECT v FROM t');
    let last = e;
    for (let i = 2; i < 7; i++) last = await insert(server, [{ id: i, v: i }]);
    const atDrop = await wsFirst(server, 'w', e);
    assert.equal(atDrop.code, 'RESUME_TOO_OLD');
    assert.match(String(atDrop.message), /created again at epoch/);
    const pruned = await wsFirst(server, 'w', e + 1);
    assert.equal(pruned.code, 'RESUME_TOO_OLD');
    assert.match(String(pruned.message), /retained after epoch/);
    assert.equal((await wsFirst(server, 'w', last - 2)).type, 'subscribed');
  } finally {
    await server.close();
  }
});

test('a tenant’s view of the same name: another tenant’s drop and create end nothing of it', async () => {
  const server = await startAuthServer({ auth: { enabled: true, kdf: TEST_KDF } });
  try {
    const tokens: Record<string, string> = {};
    for (const tenant of ['acme', 'beta']) {
      assert.equal(
        (await call(server.base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: tenant } }))
          .status,
        201,
      );
      const r = await call(server.base, 'POST', `/v1/tenants/${tenant}/tokens`, {
        token: OPERATOR_TOKEN,
        body: { role: 'admin' },
      });
      tokens[tenant] = r.body.token as string;
      assert.equal(
        (await call(server.base, 'POST', '/v1/sql', { token: tokens[tenant], body: { sql: SETUP } })).status,
        200,
      );
    }
    const epochs: Record<string, number> = {};
    for (const tenant of ['acme', 'beta']) {
      const r = await call(server.base, 'POST', '/v1/tables/t/rows', {
        token: tokens[tenant],
        body: [{ id: 1, v: 1 }],
      });
      epochs[tenant] = r.body.epoch as number;
    }
    const script = 'DROP MATERIALIZED VIEW w; CREATE MATERIALIZED VIEW w AS SELECT v FROM t';
    assert.equal(
      (await call(server.base, 'POST', '/v1/sql', { token: tokens.acme, body: { sql: script } })).status,
      200,
    );
    const resume = async (tenant: string): Promise<number> => {
      const controller = new AbortController();
      const res = await fetch(`${server.base}/v1/views/w/changes?resumeFrom=${epochs[tenant]}`, {
        headers: { authorization: `Bearer ${tokens[tenant]}` },
        signal: controller.signal,
      });
      controller.abort();
      return res.status;
    };
    assert.equal(await resume('acme'), 410);
    assert.equal(await resume('beta'), 200);
  } finally {
    await server.close();
  }
});

/** The code a resume of `view` from `from` is refused with, or 'served'. */
function resumeAnswer(runtime: SluiceRuntime, view: string, from: number): string {
  try {
    runtime.checkSubscription(view, { snapshot: false, resumeFrom: from });
    return 'served';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

test('kill -9 after a checkpoint taken before the DDL: the journal tail replays the records as they were', () => {
  let e1 = 0;
  let e2 = 0;
  let e3 = 0;
  const answers = (runtime: SluiceRuntime): Record<string, string> => ({
    'u from e1': resumeAnswer(runtime, 'u', e1),
    'd from e1': resumeAnswer(runtime, 'd', e1),
    'u from e2': resumeAnswer(runtime, 'u', e2),
    'w from e2': resumeAnswer(runtime, 'w', e2),
    'w from e3': resumeAnswer(runtime, 'w', e3),
  });
  const expected = {
    'u from e1': 'RESUME_TOO_OLD',
    'd from e1': 'RESUME_TOO_OLD',
    'u from e2': 'served',
    'w from e2': 'RESUME_TOO_OLD',
    'w from e3': 'served',
  };
  for (const reopen of [{}, { checkpoint: null }]) {
    afterCrash(
      (first) => {
        first.executeScript(SETUP);
        e1 = first.ingest('t', { insert: [{ id: 1, v: 1 }] }).epoch;
        first.checkpoint();
        first.executeScript(
          `DROP MATERIALIZED VIEW u CASCADE;
           CREATE MATERIALIZED VIEW u AS SELECT id, v FROM t WHERE v < 0;
           CREATE MATERIALIZED VIEW d AS SELECT COUNT(*) AS n FROM u`,
        );
        e2 = first.ingest('t', { insert: [{ id: 2, v: -2 }] }).epoch;
        first.executeScript('DROP MATERIALIZED VIEW w; CREATE MATERIALIZED VIEW w AS SELECT v FROM t');
        e3 = first.ingest('t', { insert: [{ id: 3, v: 3 }] }).epoch;
        assert.deepEqual(answers(first), expected);
      },
      (again) => assert.deepEqual(answers(again), expected, JSON.stringify(reopen)),
      reopen,
    );
  }
});
