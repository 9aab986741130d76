// A data directory written by an older Sluice (test/fixtures/upgrade-188a23a, made at 188a23a) opens
// on this one: tables and the views it computes as then answer exactly what the old server did,
// including a WebSocket resume of an old epoch; a view this version computes differently (SUM(bigint)
// now numeric, numerics now exact strings) no longer resumes across the upgrade — its stored history
// does not lead to its current rows, so a resume is RESUME_TOO_OLD and the client takes a snapshot —
// and the directory keeps accepting writes and restarts again.
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type Message,
  type TestServer,
  WsClient,
  removeDir,
  request,
  sortedRows,
  sqlOk,
  startServer,
  FIXTURE_RETENTION,
  tempDir,
} from './helpers.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/upgrade-188a23a/', import.meta.url));

interface Answered {
  readonly tables: Record<string, Record<string, unknown>[]>;
  readonly views: Record<string, { readonly rows: Record<string, unknown>[] }>;
  readonly resumed: Record<string, Message[]>;
}
const answered = JSON.parse(readFileSync(join(FIXTURE, 'answered.json'), 'utf8')) as Answered;
/** The old server's last epoch (its last write). */
const OLD_EPOCH = 7;

/** Subscribes with resumeFrom and returns what arrived once the stream is idle or refused. */
async function resume(server: TestServer, view: string, from: number, upTo: number): Promise<Message[]> {
  const client = new WsClient(
    `${server.wsBase}/v1/views/${view}/subscribe?snapshot=false&resumeFrom=${from}`,
  );
  try {
    await client.waitFor(
      (m) =>
        m.type === 'error' ||
        (m.type === 'subscribed' && from >= upTo) ||
        ((m.type === 'changes' || m.type === 'progress') && (m.epoch ?? 0) >= upTo),
      10_000,
      `${view} resumed from ${from}`,
    );
    return client.messages.filter((m) => m.type !== 'progress');
  } finally {
    client.close();
  }
}

const changesOf = (messages: readonly Message[]): Message[] => messages.filter((m) => m.type === 'changes');

test(
  'a data directory written at 188a23a opens, answers as then, refuses stale resumes, and keeps going',
  {
    timeout: 60_000,
  },
  async () => {
    const dir = tempDir('sluice-upgrade-');
    cpSync(join(FIXTURE, 'data-dir'), dir, { recursive: true });
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir, ...FIXTURE_RETENTION });
      // Tables: every row as the old server had it (bigints past 2^53 exact).
      const events = await sqlOk(server.base, 'SELECT * FROM events');
      const eventRows = (events.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
      assert.deepEqual(sortedRows(eventRows), sortedRows(answered.tables.events ?? []));
      // A view computed and sent as then: same rows, and a resume of an old epoch gets the same changes.
      const positives = await request(server.base, 'GET', '/v1/views/positives/rows');
      assert.equal(positives.body.epoch, OLD_EPOCH);
      assert.deepEqual(
        sortedRows(positives.body.rows as Record<string, unknown>[]),
        sortedRows(answered.views.positives?.rows ?? []),
      );
      assert.deepEqual(
        changesOf(await resume(server, 'positives', 2, OLD_EPOCH)),
        changesOf(answered.resumed.positives ?? []),
      );
      // Views whose rows this version computes differently than their stored changelog says: their
      // rows are today's, and no resume of an epoch before the upgrade is served (not even the last).
      const sums = await request(server.base, 'GET', '/v1/views/sums/rows');
      assert.deepEqual(
        sortedRows(sums.body.rows as Record<string, unknown>[]),
        sortedRows([
          { c: 1, k: 3, s: '-9223372036854775808' },
          { c: 1, k: 4, s: '40' },
          { c: 2, k: 1, s: '9007199254741000' },
          { c: 2, k: 2, s: '17' },
        ]),
      );
      for (const [view, from] of [
        ['sums', 2],
        ['sums', OLD_EPOCH],
        ['price_list', 2],
        ['price_list', OLD_EPOCH],
      ] as const) {
        const refused = await resume(server, view, from, OLD_EPOCH);
        assert.equal(refused[0]?.type, 'error', `${view} from ${from}: ${JSON.stringify(refused)}`);
        assert.equal(refused[0]?.code, 'RESUME_TOO_OLD');
        assert.match(String(refused[0]?.message), /written by an earlier version of Sluice/);
      }

      // It keeps accepting writes, and a snapshot subscriber of a changed view follows them.
      const watcher = new WsClient(`${server.wsBase}/v1/views/sums/subscribe?snapshot=true`);
      await watcher.waitFor((m) => m.type === 'snapshot_end');
      const write = await request(server.base, 'POST', '/v1/tables/events/rows', [{ k: 4, v: 2 }]);
      assert.equal(write.status, 200, write.text);
      const epoch = write.body.epoch as number;
      assert.equal(epoch, OLD_EPOCH + 1);
      const change = await watcher.waitFor((m) => m.type === 'changes' && m.epoch === epoch);
      watcher.close();
      assert.deepEqual(change.changes, [
        { op: '-U', row: { k: 4, s: '40', c: 1 } },
        { op: '+U', row: { k: 4, s: '42', c: 2 } },
      ]);
      await server.close();
      server = null;

      // Restarts again on the upgraded directory: same rows, the new history resumes, the old stays ended.
      server = await startServer({ dataDir: dir, ...FIXTURE_RETENTION });
      const again = await request(server.base, 'GET', '/v1/views/sums/rows');
      assert.equal(again.body.epoch, epoch);
      assert.deepEqual(
        sortedRows(again.body.rows as Record<string, unknown>[]),
        sortedRows([
          { c: 1, k: 3, s: '-9223372036854775808' },
          { c: 2, k: 1, s: '9007199254741000' },
          { c: 2, k: 2, s: '17' },
          { c: 2, k: 4, s: '42' },
        ]),
      );
      const resumed = await resume(server, 'sums', epoch, epoch);
      assert.equal(resumed[0]?.type, 'subscribed', JSON.stringify(resumed));
      assert.equal((await resume(server, 'sums', 2, epoch))[0]?.code, 'RESUME_TOO_OLD');
      const positivesAgain = changesOf(await resume(server, 'positives', 2, epoch));
      assert.deepEqual(positivesAgain.slice(0, -1), changesOf(answered.resumed.positives ?? []));
      assert.deepEqual(positivesAgain.at(-1)?.changes, [{ op: '+I', row: { k: 4, v: 2 } }]);
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);
