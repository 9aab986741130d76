// Temporal filters in the server: on the real clock, a row leaves its view when the clock passes
// its bound with no data arriving (ticks every 50 ms, a lifetime of 2 s); on the manual clock, a
// kill -9 in the middle of a workload — recovered by replaying the whole journal, or from a
// checkpoint and the journal after it — leaves the same changelog, byte for byte, as a run without
// the crash (rows stamped by DEFAULT now() included), and a journal holding only the ticks that
// changed something.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../../src/exec/engine.ts';
import { ManualClock } from '../../src/exec/logical-clock.ts';
import { formatMicros } from '../../src/common/time/instant-micros.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { TableLog } from '../../src/storage/table-log.ts';
import {
  type ChildServer,
  WsClient,
  openRuntime,
  removeDir,
  request,
  spawnServer,
  sql,
  sqlOk,
  startServer,
  tempDir,
} from './helpers.ts';

test(
  'real clock: a row leaves its view when its bound passes, with no data arriving',
  { timeout: 30_000 },
  async () => {
    const server = await startServer({ clock: { tickMs: 50 } });
    const client: WsClient[] = [];
    try {
      await sqlOk(
        server.base,
        `CREATE TABLE sessions (id integer PRIMARY KEY, expires timestamptz NOT NULL);
       CREATE MATERIALIZED VIEW live AS SELECT id FROM sessions WHERE expires > now()`,
      );
      const ws = new WsClient(`${server.wsBase}/v1/views/live/subscribe?snapshot=false`);
      client.push(ws);
      await ws.waitFor((m) => m.type === 'subscribed');
      const expires = new Date(Date.now() + 2000).toISOString();
      const inserted = await sqlOk(server.base, `INSERT INTO sessions VALUES (1, '${expires}')`);
      const epoch = (inserted.body['results'] as { epoch: number }[])[0]?.epoch as number;
      const entered = await ws.waitFor((m) => m.type === 'changes' && m.epoch === epoch, 5000, 'the insert');
      assert.deepEqual(entered['changes'], [{ op: '+I', row: { id: 1 } }]);
      // No further request: only a clock tick can take it out, within a few seconds of its bound.
      const left = await ws.waitFor(
        (m) => m.type === 'changes' && (m.epoch as number) > epoch,
        10_000,
        'the tick',
      );
      assert.deepEqual(left['changes'], [{ op: '-D', row: { id: 1 } }]);
      const clock = await sqlOk(server.base, 'SHOW CLOCK');
      const row = (clock.body['results'] as { rows: Record<string, string>[] }[])[0]?.rows[0];
      assert.equal(row?.['mode'], 'real');
      assert.ok(
        Date.parse((row?.['clock'] as string).replace(' ', 'T').replace('+00', 'Z')) >= Date.parse(expires),
      );
      // The view's REST description carries the clock of the epoch it is read at.
      const info = await request(server.base, 'GET', '/v1/views/live');
      assert.equal(info.body['clock'], row?.['clock']);
      const refused = await sql(server.base, "SET CLOCK TO '2030-01-01'");
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error?.code, 'NOT_SUPPORTED');
    } finally {
      for (const c of client) c.close();
      await server.close();
    }
  },
);

const SCHEMA = `CREATE TABLE events (id integer PRIMARY KEY, ts timestamptz NOT NULL, kind text);
CREATE MATERIALIZED VIEW last_hour AS
  SELECT id, kind FROM events WHERE ts > now() - interval '1 hour' AND ts <= now();
CREATE MATERIALIZED VIEW per_kind AS SELECT kind, count(*) AS n FROM last_hour GROUP BY kind;
CREATE TABLE visits (id integer PRIMARY KEY, seen timestamptz NOT NULL DEFAULT now(), day date DEFAULT current_date);
CREATE MATERIALIZED VIEW recent_visits AS SELECT id, seen, day FROM visits WHERE seen > now() - interval '20 minutes'`;

/** The workload: SQL steps, the clock moving in between (some ticks cross bounds, some do not). */
function steps(): string[] {
  const out: string[] = ["SET CLOCK TO '2024-01-01 00:00:00+00'", SCHEMA];
  for (let i = 0; i < 24; i++) {
    const minute = 5 * i;
    const at = (m: number): string =>
      `2024-01-01 ${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00+00`;
    out.push(`INSERT INTO events VALUES (${i}, '${at(minute + 7)}', 'k${i % 3}')`);
    // Stamped with the epoch's clock (DEFAULT now()): replay must give the same times.
    if (i % 3 === 0) out.push(`INSERT INTO visits (id) VALUES (${i})`);
    if (i % 4 === 1) out.push(`DELETE FROM events WHERE id = ${i - 1}`);
    if (i % 5 === 2) out.push(`UPDATE events SET ts = '${at(minute + 20)}' WHERE id = ${i}`);
    out.push(`SET CLOCK TO '${at(minute + 5)}'`);
    if (i % 6 === 0) out.push(`SET CLOCK TO '${at(minute + 5)}'`); // the same time again: no epoch
  }
  out.push("SET CLOCK TO '2024-01-01 04:00:00+00'");
  return out;
}

const ARGS = ['--clock', 'manual', '--clock-tick-ms', '0'];

/** The stored changelog of every view and the journal's epochs, kinds and payloads. */
function stored(dir: string): { changelog: string; journal: string } {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true });
  try {
    const changelog = db
      .prepare('SELECT view, epoch, message FROM changelog ORDER BY view, epoch')
      .all()
      .map((r) => JSON.stringify(r))
      .join('\n');
    const journal = db
      .prepare('SELECT log_offset, kind, epoch, target, payload, positions FROM journal ORDER BY log_offset')
      .all()
      .map((r) => JSON.stringify(r))
      .join('\n');
    return { changelog, journal };
  } finally {
    db.close();
  }
}

async function run(dir: string, crashAfter: number | null, extra: string[] = []): Promise<void> {
  const all = steps();
  let server: ChildServer = await spawnServer(dir, [...ARGS, ...extra]);
  try {
    for (let i = 0; i < all.length; i++) {
      await sqlOk(server.base, all[i] as string);
      if (i === crashAfter) {
        server.child.kill('SIGKILL');
        await server.exited;
        server = await spawnServer(dir, [...ARGS, ...extra]);
      }
    }
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

test(
  'manual clock: a kill -9 mid-workload leaves the same changelog as a run without it',
  { timeout: 180_000 },
  async () => {
    const dirs = [tempDir(), tempDir(), tempDir()];
    try {
      const [plain, replayed, checkpointed] = dirs as [string, string, string];
      await run(plain, null);
      const crashAt = Math.floor(steps().length / 2);
      await run(replayed, crashAt);
      // Checkpoints every 3 epochs: the restart loads one and replays the journal after it.
      await run(checkpointed, crashAt, ['--checkpoint-epochs', '3']);
      const expected = stored(plain);
      assert.ok(expected.changelog.split('\n').length > 20, 'the workload changes the views');
      // Visit 3 is inserted after the clock was set to 00:15, its day from the same clock.
      assert.match(
        expected.changelog,
        /"view":"recent_visits".*\\"\+I\\",3,\\"2024-01-01 00:15:00\+00\\",\\"2024-01-01\\"/,
        'a DEFAULT now() row is stamped with its epoch clock',
      );
      assert.match(expected.journal, /"target":null,"payload":"\{\\"c\\":/, 'ticks are journaled');
      // A SET CLOCK that crossed no bound is journaled as a clock setting ("s": 1), not a tick.
      const clockEntries = expected.journal.split('\n').filter((l) => l.includes('"target":null'));
      const ticks = clockEntries.filter((l) => !l.includes('\\"s\\":1')).length;
      assert.equal(clockEntries.length - ticks > 0, true, 'clock settings without an epoch are journaled');
      const clockSets = steps().filter((s) => s.startsWith('SET CLOCK')).length;
      assert.ok(
        ticks < clockSets,
        `only the ${ticks} ticks that crossed a bound are journaled, of ${clockSets}`,
      );
      for (const dir of [replayed, checkpointed]) {
        const got = stored(dir);
        assert.equal(got.changelog, expected.changelog);
        assert.equal(got.journal, expected.journal);
      }
    } finally {
      for (const d of dirs) removeDir(d);
    }
  },
);

test('a journal from before the clock loads: a batch without one reads as the time it was journaled', () => {
  const dir = tempDir();
  try {
    const store = new SqliteStore({ dataDir: dir });
    const log = new TableLog(store, { beforeAppend: () => undefined, afterDdl: () => undefined });
    log.appendDdl({ epoch: 0, sql: 'CREATE TABLE t (id integer PRIMARY KEY, ts timestamptz)' });
    // As an older server wrote it: no "c" in the payload.
    log.appendBatch({
      epoch: 1,
      table: 't',
      columns: ['id', 'ts'],
      inserts: [[1, '2024-01-01 00:00:00+00']],
      deletes: [],
    });
    store.commit();
    const at = (store.db.prepare('SELECT at FROM journal WHERE log_offset = 2').get() as { at: number }).at;
    assert.doesNotMatch(
      (store.db.prepare('SELECT payload FROM journal WHERE log_offset = 2').get() as { payload: string })
        .payload,
      /"c"/,
    );
    store.close();
    const clock = new ManualClock();
    const runtime = openRuntime(dir, { checkpoint: null, createEngine: () => new Engine({ clock }) });
    try {
      assert.equal(runtime.engine.epoch, 1);
      assert.equal(formatMicros(runtime.engine.clock), formatMicros(at * 1000));
    } finally {
      runtime.close();
    }
  } finally {
    removeDir(dir);
  }
});
