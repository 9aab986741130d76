// A data directory written at e02f5e3 (test/fixtures/history-e02f5e3) holds both records of an ended
// view history of that version: a view rebuilt because its plan changed (`changelog_history_ends`)
// and names dropped at an epoch a view of the same name was created at (`changelog_drops`). Opened
// here, they become one table with a reason, and every resume answers as it did before: a resume
// refused there is refused here (with the same reason), one served there is served with the same
// changes — over the WebSocket and NDJSON, after a restart from the checkpoint and from the journal
// alone, and for a name dropped there and created again here at its drop epoch.
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import {
  type Message,
  type TestServer,
  WsClient,
  ndjsonResume,
  removeDir,
  request,
  sqlOk,
  startServer,
  FIXTURE_RETENTION,
  tempDir,
} from './helpers.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/history-e02f5e3/', import.meta.url));

interface Probe {
  readonly view: string;
  readonly from: number;
  /** The first message's type, or the error's code. */
  readonly answer: string;
  readonly changes: Message[];
}
interface Answered {
  readonly epochs: { readonly last: number };
  readonly probes: readonly Probe[];
}
const answered = JSON.parse(readFileSync(join(FIXTURE, 'answered.json'), 'utf8')) as Answered;

/** What a WebSocket resume answers now, in the fixture's terms (waiting for the changes expected). */
async function wsProbe(
  server: TestServer,
  view: string,
  from: number,
  expectChanges: number,
): Promise<Probe> {
  const client = new WsClient(
    `${server.wsBase}/v1/views/${view}/subscribe?snapshot=false&resumeFrom=${from}`,
  );
  try {
    const first = await client.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
    if (first.type === 'subscribed') {
      await client.waitFor(
        () => client.of('changes').length >= expectChanges,
        10_000,
        `${view} from ${from}`,
      );
      await sleep(100); // nothing more may come
    }
    return {
      view,
      from,
      answer: first.type === 'error' ? String(first.code) : first.type,
      changes: client.of('changes'),
    };
  } finally {
    client.close();
  }
}

/** Every probe of a view that exists now (`gone` was asked while it existed; see the test). */
async function answersAsBefore(server: TestServer, when: string): Promise<void> {
  for (const before of answered.probes.filter((p) => p.view !== 'gone')) {
    const now = await wsProbe(server, before.view, before.from, before.changes.length);
    assert.deepEqual(now, before, `${when}: ${before.view} from ${before.from}`);
    const ndjson = await ndjsonResume(server, before.view, before.from);
    assert.deepEqual(
      ndjson,
      before.answer === 'subscribed' ? { status: 200 } : { status: 410, code: before.answer },
      `${when}, NDJSON: ${before.view} from ${before.from}`,
    );
  }
}

function storedEnds(dir: string): { tables: string[]; ends: Record<string, unknown>[] } {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'changelog%' ORDER BY name")
      .all() as { name: string }[];
    const ends = db
      .prepare('SELECT view, epoch, reason FROM changelog_history_ends ORDER BY view')
      .all() as Record<string, unknown>[];
    return { tables: tables.map((t) => t.name), ends };
  } finally {
    db.close();
  }
}

test(
  'a data directory written at e02f5e3 keeps its refused and its served resumes',
  { timeout: 90_000 },
  async () => {
    // Both kinds of record, and a refusal of each, are what the fixture is for.
    const refused = new Set(answered.probes.filter((p) => p.answer === 'RESUME_TOO_OLD').map((p) => p.view));
    assert.ok(refused.has('again') && refused.has('totals') && refused.has('gone'));
    const dir = tempDir('sluice-history-e02f5e3-');
    cpSync(join(FIXTURE, 'data-dir'), dir, { recursive: true });
    let server: TestServer | null = null;
    try {
      server = await startServer({ dataDir: dir, ...FIXTURE_RETENTION });
      await answersAsBefore(server, 'opened');
      await server.close();
      server = null;
      const last = answered.epochs.last;
      assert.deepEqual(storedEnds(dir), {
        tables: ['changelog', 'changelog_history_ends', 'changelog_views'],
        ends: [
          { view: 'again', epoch: 3, reason: 'dropped' },
          { view: 'gone', epoch: last, reason: 'dropped' },
          { view: 'totals', epoch: 4, reason: 'recomputed' },
        ],
      });

      // From the journal alone (every view recomputed and compared with its stored changelog).
      server = await startServer({ dataDir: dir, checkpoint: false, ...FIXTURE_RETENTION });
      await answersAsBefore(server, 'replayed from the journal');
      await server.close();
      server = null;

      server = await startServer({ dataDir: dir, ...FIXTURE_RETENTION });
      await answersAsBefore(server, 'from the checkpoint again');
      // `gone` was dropped at the last epoch: created again at it, it is not resumed from it, as there.
      await sqlOk(server.base, 'CREATE MATERIALIZED VIEW gone AS SELECT id FROM t');
      const refusedThere = answered.probes.find((p) => p.view === 'gone');
      assert.equal(refusedThere?.answer, 'RESUME_TOO_OLD');
      assert.equal((await wsProbe(server, 'gone', last, 0)).answer, 'RESUME_TOO_OLD');
      const write = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: 7, v: 7 }]);
      assert.equal(write.status, 200, write.text);
      const next = write.body.epoch as number;
      assert.equal((await wsProbe(server, 'gone', next, 0)).answer, 'subscribed');
      assert.deepEqual(await ndjsonResume(server, 'totals', last), { status: 200 });
    } finally {
      await server?.close();
      removeDir(dir);
    }
  },
);
