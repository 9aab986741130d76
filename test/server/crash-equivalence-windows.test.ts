// Crash equivalence of windowed views, part of the crash-equivalence suite (crash-equivalence.test.ts
// is the relational half): on the manual clock, a seeded workload of SET CLOCK steps and inserts,
// updates and deletes (some rows late) over a table with a WATERMARK feeds a TUMBLE GROUP BY view, a
// HOP view, EMIT ON WINDOW CLOSE views (one with an ALLOWED LATENESS), a SESSION view and a
// temporal-filter view. It runs once without a crash (the reference), then again while the server is
// killed at every named crash point (SLUICE_CRASH_POINT, varying counts) and from outside, restarting
// on the same data directory and checkpointing every few epochs. Each step is one statement, so the
// one in flight when the server died is resolved by the (epoch, clock) the restarted server reports.
// At the end the stored changelog (clock and watermarks included), the journal, the recorded time of
// every epoch and SHOW WATERMARKS equal the reference's byte for byte, and subscribers resuming after
// every restart received the reference's messages.
//
//   SLUICE_SEED=<n>  replay one run
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import {
  type CrashableServer,
  ResumingSubscriber,
  isConnectionError,
  killHard,
  spawnCrashable,
} from '../support/crash-harness.ts';
import { removeDir, request, tempDir, waitUntil } from './helpers.ts';

const SEED = process.env.SLUICE_SEED !== undefined ? Number(process.env.SLUICE_SEED) : Date.now() % 1_000_000;
const SERVER_ARGS = [
  '--clock',
  'manual',
  '--checkpoint-interval-ms',
  '50',
  '--checkpoint-epochs',
  '3',
  '--heartbeat-ms',
  '50',
];
const POINTS = ['before-commit', 'after-commit', 'while-publishing', 'during-checkpoint', 'after-checkpoint'];
const BASE = Date.UTC(2024, 0, 1, 10) / 1000;

const VIEWS = ['per_window', 'hopping', 'closed', 'closed_late', 'sessions', 'recent'];
const DDL = `CREATE TABLE bids (id integer PRIMARY KEY, auction integer NOT NULL, price integer NOT NULL,
    ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '4' SECOND);
  CREATE MATERIALIZED VIEW per_window AS SELECT window_start, auction, count(*) AS n, sum(price) AS total
    FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_start, auction;
  CREATE MATERIALIZED VIEW hopping AS SELECT window_start, window_end, max(price) AS hi, count(*) AS n
    FROM HOP(bids, ts, INTERVAL '5' SECOND, INTERVAL '15' SECOND) GROUP BY window_start, window_end;
  CREATE MATERIALIZED VIEW closed AS SELECT window_end, auction, count(*) AS n, sum(price) AS total
    FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end, auction EMIT ON WINDOW CLOSE;
  CREATE MATERIALIZED VIEW closed_late AS SELECT window_end, count(*) AS n, sum(price) AS total
    FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end
    EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '6' SECOND;
  CREATE MATERIALIZED VIEW sessions AS SELECT auction, window_start, window_end, count(*) AS n
    FROM SESSION(bids PARTITION BY auction, ts, INTERVAL '5' SECOND) GROUP BY auction, window_start, window_end;
  CREATE MATERIALIZED VIEW recent AS SELECT id, auction, price FROM bids WHERE ts > now() - INTERVAL '20' SECOND`;
/**
 * One step per statement: a kill can land between two statements of a script, and a DDL statement
 * changes neither the epoch nor the clock, so only the catalog (stateOf) tells whether it applied.
 */
const DDL_STATEMENTS = DDL.split(/;\s*\n/).map((sql) => sql.trim());
/** Steps before the views exist: the clock, then the DDL. */
const SETUP_STEPS = 1 + DDL_STATEMENTS.length;

function stamp(sec: number): string {
  return `${new Date((BASE + sec) * 1000).toISOString().replace('T', ' ').replace('.000Z', '')}+00`;
}

/** The statements: one each, the clock moving forward by 1–3 s, bids mostly near it (some late). */
function steps(rnd: () => number, count: number): string[] {
  const int = (n: number): number => Math.floor(rnd() * n);
  const out = [`SET CLOCK TO '${stamp(0)}'`, ...DDL_STATEMENTS];
  const live: number[] = [];
  let clock = 0;
  let next = 1;
  while (out.length < count) {
    const r = rnd();
    if (r < 0.2) {
      clock += 1 + int(3);
      out.push(`SET CLOCK TO '${stamp(clock)}'`);
    } else if (r < 0.75 || live.length === 0) {
      const rows = Array.from({ length: 1 + int(4) }, () => {
        const id = next++;
        live.push(id);
        // Mostly within the watermark's 4 s; about one in six 5–12 s behind (late when the
        // watermark has passed it); some a little ahead of the clock.
        const t = rnd() < 0.16 ? clock - 5 - int(8) : clock - int(4) + int(3);
        return `(${id}, ${int(3)}, ${1 + int(50)}, '${stamp(t)}')`;
      });
      out.push(`INSERT INTO bids VALUES ${rows.join(', ')}`);
    } else if (r < 0.9) {
      const id = live[int(live.length)] as number;
      out.push(`UPDATE bids SET price = price + ${1 + int(9)} WHERE id = ${id}`);
    } else {
      const at = int(live.length);
      const id = live[at] as number;
      live.splice(at, 1);
      out.push(`DELETE FROM bids WHERE id = ${id}`);
    }
  }
  return out;
}

/**
 * What a data directory holds once its server is gone: changelog, journal (without times) and each
 * epoch's recorded clock and watermarks (what asOf pages and resumed subscriptions say).
 */
function stored(dir: string): { changelog: string; journal: string; epochTimes: string } {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true });
  try {
    const all = (q: string): string =>
      db
        .prepare(q)
        .all()
        .map((r) => JSON.stringify(r))
        .join('\n');
    return {
      changelog: all('SELECT view, epoch, message FROM changelog ORDER BY view, epoch'),
      journal: all(
        'SELECT log_offset, kind, epoch, target, payload, positions FROM journal ORDER BY log_offset',
      ),
      epochTimes: all('SELECT epoch, clock, watermarks FROM epoch_times ORDER BY epoch'),
    };
  } finally {
    db.close();
  }
}

/** The server's (epoch, manual clock, relations): which steps it has applied. */
async function stateOf(base: string): Promise<string> {
  const r = await request(base, 'POST', '/v1/sql', { sql: 'SHOW CLOCK' });
  assert.equal(r.status, 200, r.text);
  const results = r.body['results'] as { rows: { source: string }[] }[];
  const ready = await request(base, 'GET', '/readyz');
  const tables = await request(base, 'GET', '/v1/tables');
  const views = await request(base, 'GET', '/v1/views');
  const relations = (tables.body['tables'] as unknown[]).length + (views.body['views'] as unknown[]).length;
  return `${String(ready.body['epoch'])} ${results[0]?.rows[0]?.source ?? ''} ${relations}`;
}

async function runStep(base: string, sql: string): Promise<void> {
  const r = await request(base, 'POST', '/v1/sql', { sql });
  assert.equal(r.status, 200, `${sql}\n${r.text}`);
}

/** The server died while this was going on (its process exited): a kill, not a failure. */
class ServerDied extends Error {}

const servers: CrashableServer[] = [];
const subscribers: ResumingSubscriber[] = [];
after(async () => {
  for (const s of subscribers) s.disconnect();
  for (const s of servers) await killHard(s);
});

async function start(dir: string, env: Record<string, string> = {}): Promise<CrashableServer | null> {
  const outcome = await spawnCrashable(dir, { args: SERVER_ARGS, env });
  if (outcome.kind === 'exited') {
    assert.match(
      outcome.output,
      /crash point "[a-z-]+" reached/,
      `the server exited on its own:\n${outcome.output}`,
    );
    return null;
  }
  servers.push(outcome.server);
  return outcome.server;
}

/** Subscribers of every view: connected after the catalog exists, resumed after every restart. */
function subscribe(): ResumingSubscriber[] {
  const subs = VIEWS.map((v) => new ResumingSubscriber(v, v));
  subscribers.push(...subs);
  return subs;
}

async function caughtUp(subs: readonly ResumingSubscriber[], base: string): Promise<void> {
  const epoch = Number((await request(base, 'GET', '/readyz')).body['epoch']);
  await waitUntil(() => subs.every((s) => s.epoch >= epoch), 30_000, `subscribers at epoch ${epoch}`);
  for (const s of subs) assert.deepEqual(s.problems, [], `${s.name}: a well-formed stream`);
}

const messages = (subs: readonly ResumingSubscriber[]): string[] =>
  subs.map((s) => s.changes.map((m) => JSON.stringify(m)).join('\n'));

test(
  `crash equivalence of windowed views on the manual clock (seed ${SEED})`,
  { timeout: 600_000 },
  async (t) => {
    const rnd = mulberry32(SEED);
    const all = steps(mulberry32(SEED ^ 0x77), 160);
    const dirs = [tempDir('sluice-crashw-'), tempDir('sluice-crashw-')];
    const [refDir, dir] = dirs as [string, string];
    try {
      // The reference: no crash; the state after each step.
      const reference = (await start(refDir)) as CrashableServer;
      const refSubs = subscribe();
      const states: string[] = [];
      for (let i = 0; i < all.length; i++) {
        await runStep(reference.base, all[i] as string);
        if (i === SETUP_STEPS - 1) for (const s of refSubs) await s.connect(reference.wsBase);
        states.push(await stateOf(reference.base));
      }
      await caughtUp(refSubs, reference.base);
      const refWatermarks = await request(reference.base, 'POST', '/v1/sql', { sql: 'SHOW WATERMARKS' });
      for (const s of refSubs) s.disconnect();
      reference.child.kill('SIGTERM');
      assert.equal((await reference.exited).code, 0);
      const expected = stored(refDir);
      const lateRows = (refWatermarks.body['results'] as { rows: { late_rows: number }[] }[])[0]?.rows[0]
        ?.late_rows;
      assert.ok((lateRows ?? 0) >= 3, `the workload has late rows (${String(lateRows)})`);
      for (const v of VIEWS) assert.match(expected.changelog, new RegExp(`"view":"${v}"`), `${v} changed`);

      // The crashed run: a kill at each crash point twice (counts 1–4), and four from outside.
      const plans: { point: string | null; count: number }[] = [];
      for (const point of POINTS)
        for (let k = 0; k < 2; k++) plans.push({ point, count: 1 + Math.floor(rnd() * 4) });
      for (let k = 0; k < 4; k++) plans.push({ point: null, count: 2 + Math.floor(rnd() * 20) });
      for (let i = plans.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [plans[i], plans[j]] = [plans[j] as (typeof plans)[0], plans[i] as (typeof plans)[0]];
      }
      const subs = subscribe();
      let done = 0;
      let kills = 0;
      let server: CrashableServer | null = null;
      for (const plan of [...plans, null]) {
        const env: Record<string, string> =
          plan?.point != null && done < all.length
            ? { SLUICE_CRASH_POINT: `${plan.point}:${plan.count}` }
            : {};
        server = await start(dir, env);
        if (server === null) {
          kills += 1;
          continue;
        }
        const live = server;
        /** A call to a server that may die meanwhile (a crash point in its checkpoint thread, too). */
        const alive = async <T>(call: () => Promise<T>): Promise<T> => {
          try {
            return await call();
          } catch (error) {
            if (
              live.dead() ||
              isConnectionError(error) ||
              /closed before open|timed out/.test(String(error))
            ) {
              await Promise.race([live.exited, new Promise((r) => setTimeout(r, 2000))]);
              if (live.dead()) throw new ServerDied();
            }
            throw error;
          }
        };
        try {
          // Resolve the step in flight: applied or not, nothing else.
          const state = await alive(() => stateOf(live.base));
          if (done < all.length && state === states[done]) done += 1;
          else if (done > 0)
            assert.equal(state, states[done - 1], `the state after a restart (step ${done})`);
          if (done >= SETUP_STEPS) {
            for (const s of subs) await alive(() => s.connect(live.wsBase));
            await alive(() => caughtUp(subs, live.base));
          }
          const external = plan !== null && plan.point === null ? done + plan.count : Infinity;
          while (done < all.length) {
            if (done === external) {
              live.child.kill('SIGKILL');
              break;
            }
            await alive(() => runStep(live.base, all[done] as string));
            done += 1;
            if (done === SETUP_STEPS) for (const s of subs) await alive(() => s.connect(live.wsBase));
          }
        } catch (error) {
          if (!(error instanceof ServerDied)) throw error;
        }
        // The workload ended before this plan's kill came: the remaining plans are not needed.
        if (done === all.length && !live.dead()) break;
        const exit = await live.exited;
        assert.equal(exit.signal, 'SIGKILL', live.output());
        kills += 1;
        server = null;
      }
      if (server === null) {
        // The last plan's kill came with the last step: a clean start to finish on.
        server = (await start(dir)) as CrashableServer;
        for (const s of subs) await s.connect(server.wsBase);
      }
      await caughtUp(subs, server.base);
      const watermarks = await request(server.base, 'POST', '/v1/sql', { sql: 'SHOW WATERMARKS' });
      for (const s of subs) s.disconnect();
      server.child.kill('SIGTERM');
      await server.exited;
      const got = stored(dir);
      assert.equal(JSON.stringify(watermarks.body['results']), JSON.stringify(refWatermarks.body['results']));
      assert.equal(got.journal, expected.journal, 'the same journal');
      assert.equal(got.changelog, expected.changelog, 'the same changelog, clocks and watermarks included');
      assert.ok(expected.epochTimes.split('\n').length > 10, 'epoch times recorded');
      assert.equal(got.epochTimes, expected.epochTimes, 'the same recorded time of every epoch');
      const want = messages(refSubs);
      messages(subs).forEach((m, i) =>
        assert.equal(m, want[i], `${VIEWS[i]}: the resumed subscriber's messages`),
      );
      t.diagnostic(`seed ${SEED}: ${kills} kills, ${all.length} steps`);
      assert.ok(kills >= 8, `${kills} kills`);
    } finally {
      for (const s of subscribers) s.disconnect();
      for (const s of servers) await killHard(s);
      if (process.env.SLUICE_KEEP_DIR === undefined) for (const d of dirs) removeDir(d);
      else console.error(`kept ${dirs.join(' ')}`);
    }
  },
);
