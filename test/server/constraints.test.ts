// Column DEFAULTs and UNIQUE constraints over the REST API: ingested rows that omit a column get
// its default, a batch breaking a UNIQUE constraint is a 400 UNIQUE_VIOLATION with nothing applied
// (epoch unchanged), the table description shows both, and both survive restarts — a graceful one
// (state from the checkpoint, UNIQUE indexes rebuilt from its rows) and kill -9 (journal replay).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type TestServer, removeDir, request, spawnServer, sqlOk, startServer, tempDir } from './helpers.ts';

const DDL =
  "CREATE TABLE accounts (id INT PRIMARY KEY, email TEXT UNIQUE, plan TEXT NOT NULL DEFAULT 'free', credit INT DEFAULT 10 * 3, region TEXT, zone INT, UNIQUE (region, zone))";

async function rows(base: string): Promise<unknown[]> {
  const q = await sqlOk(base, 'SELECT id, email, plan, credit, region, zone FROM accounts ORDER BY id');
  return ((q.body.results as { rows: unknown[] }[])[0] as { rows: unknown[] }).rows;
}

async function ingest(
  base: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return request(base, 'POST', '/v1/tables/accounts/rows', body);
}

async function assertConstraintsHold(base: string, epoch: number, rowCount: number): Promise<void> {
  const taken = await ingest(base, [{ id: 50, email: 'a@x' }]);
  assert.equal(taken.status, 400, JSON.stringify(taken.body));
  assert.equal((taken.body.error as { code: string }).code, 'UNIQUE_VIOLATION');
  const pair = await ingest(base, [{ id: 51, region: 'eu', zone: 1 }]);
  assert.equal((pair.body.error as { code: string }).code, 'UNIQUE_VIOLATION');
  const info = await request(base, 'GET', '/v1/tables/accounts');
  assert.equal(info.status, 200);
  assert.deepEqual(info.body.unique, [
    { name: 'accounts_email_key', columns: ['email'] },
    { name: 'accounts_region_zone_key', columns: ['region', 'zone'] },
  ]);
  const columns = info.body.columns as { name: string; default?: string }[];
  assert.deepEqual(
    columns.map((c) => [c.name, c.default ?? null]),
    [
      ['id', null],
      ['email', null],
      ['plan', "'free'"],
      ['credit', '10 * 3'],
      ['region', null],
      ['zone', null],
    ],
  );
  assert.equal(info.body.rowCount, rowCount);
  // A rejected batch leaves the epoch where it was.
  const probe = await ingest(base, { insert: [] });
  assert.equal(probe.body.epoch, epoch);
}

test(
  'REST ingest: defaults for omitted fields, UNIQUE_VIOLATION as a 400 with nothing applied, across restarts',
  {
    timeout: 120_000,
  },
  async () => {
    const dir = tempDir();
    let server: TestServer | undefined;
    try {
      server = await startServer({ dataDir: dir });
      await sqlOk(server.base, DDL);
      const first = await ingest(server.base, [
        { id: 1, email: 'a@x', region: 'eu', zone: 1 },
        { id: 2, plan: 'pro', credit: null },
        { id: 3, email: null, region: 'eu', zone: null },
      ]);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.epoch, 1);
      const expected = [
        { id: 1, email: 'a@x', plan: 'free', credit: 30, region: 'eu', zone: 1 },
        { id: 2, email: null, plan: 'pro', credit: null, region: null, zone: null },
        { id: 3, email: null, plan: 'free', credit: 30, region: 'eu', zone: null },
      ];
      assert.deepEqual(await rows(server.base), expected);

      // One bad row rejects the whole request: the good row with it is not applied either.
      const dup = await ingest(server.base, [
        { id: 4, email: 'new@x' },
        { id: 5, email: 'a@x' },
      ]);
      assert.equal(dup.status, 400);
      assert.deepEqual(dup.body.error, {
        code: 'UNIQUE_VIOLATION',
        message: 'duplicate key value violates unique constraint "accounts_email_key"',
        detail: 'Key (email)=(a@x) already exists.',
        hint: 'in table "accounts"',
      });
      const inBatch = await ingest(server.base, [
        { id: 4, email: 'same@x' },
        { id: 5, email: 'same@x' },
      ]);
      assert.equal((inBatch.body.error as { code: string }).code, 'UNIQUE_VIOLATION');
      // NOT NULL still applies after the default: an explicit null is not replaced by it.
      const nullPlan = await ingest(server.base, [{ id: 6, plan: null }]);
      assert.equal((nullPlan.body.error as { code: string }).code, 'NOT_NULL_VIOLATION');
      assert.deepEqual(await rows(server.base), expected);
      await assertConstraintsHold(server.base, 1, 3);

      // Graceful restart: state comes back from the checkpoint taken at shutdown.
      await server.close();
      server = await startServer({ dataDir: dir });
      assert.equal(server.app.sluice.recovery.checkpointEpoch, 1, 'restored from the checkpoint');
      assert.deepEqual(await rows(server.base), expected);
      await assertConstraintsHold(server.base, 1, 3);
      // Deletes apply first: a value freed in a request can be taken in the same request.
      const swap = await ingest(server.base, {
        delete: [{ id: 1 }],
        insert: [{ id: 7, email: 'a@x', region: 'eu', zone: 1 }],
      });
      assert.equal(swap.status, 200, JSON.stringify(swap.body));
      assert.equal(swap.body.epoch, 2);
      const restore = await ingest(server.base, {
        delete: [{ id: 7 }],
        insert: [{ id: 1, email: 'a@x', region: 'eu', zone: 1 }],
      });
      assert.equal(restore.body.epoch, 3);
      await server.close();
      server = undefined;

      // kill -9: the journal replays (DDL, then the resolved batches with their defaults filled in).
      const child = await spawnServer(dir);
      const more = await request(child.base, 'POST', '/v1/tables/accounts/rows', [{ id: 8, zone: 2 }]);
      assert.equal(more.status, 200, JSON.stringify(more.body));
      assert.equal(more.body.epoch, 4);
      const refused = await request(child.base, 'POST', '/v1/tables/accounts/rows', [
        { id: 9, email: 'a@x' },
      ]);
      assert.equal(refused.status, 400);
      child.child.kill('SIGKILL');
      await child.exited;
      server = await startServer({ dataDir: dir });
      assert.ok(server.app.sluice.recovery.replayedEntries >= 1, 'the batches after the checkpoint replayed');
      const row8 = { id: 8, email: null, plan: 'free', credit: 30, region: null, zone: 2 };
      assert.deepEqual(await rows(server.base), [...expected, row8]);
      await assertConstraintsHold(server.base, 4, 4);
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);
