// Crash equivalence under concurrent ingest, as the outside attack ran it: N clients (default 4) send
// batches of 1–200 orders (or 1–50 clicks into a keyless table) plus up to 20 deletes of rows they saw
// acknowledged, to a real server process that checkpoints every few epochs, writes each checkpoint in
// many slices with epochs running between them (--checkpoint-slice-ms 0), and is killed with SIGKILL
// at random moments and at every named crash point (between-checkpoint-slices included), then
// restarted on the same data directory. After every restart:
//  - the server starts (a refused start fails with its output), and no start fell back to the whole
//    journal (a fallback means a checkpoint disagreed with the journal);
//  - each batch whose answer was lost is resolved by reading the table (batches are atomic and
//    in-flight batches touch disjoint keys), and the server's epoch counts exactly the applied batches;
//  - both tables equal the expected contents and every view over REST equals SQLite running the same
//    SELECT over them;
//  - WebSocket subscribers that resume from their last folded epoch see no epoch twice or out of
//    order, and a fold equal to REST at the same epoch; a grouped view's subscriber sees every
//    acknowledged epoch whose batch changed a group's row count, and none of another table's;
//  - recovery used the checkpoint (replayed only a journal tail), and once it has, it always does.
// The seed fixes the kill plan and each client's batch stream; timing (which batch a kill lands on)
// is not reproducible, so a replay runs the same plan against the same workload, not the same crash.
//
//   SLUICE_SEED=<n>               replay one run's plan and workload
//   SLUICE_CRASH_KILLS=<n>        kills (default 32; long profile 400)
//   SLUICE_CRASH_CLIENTS=<n>      concurrent clients (default 4)
//   SLUICE_CRASH_LONG=1           the long run: 400 kills, external kills every 1.5–4 s, a larger state
//   SLUICE_CRASH_KILL_MS=<a>-<b>  ingest time before an external kill (default 150-1000; long 1500-4000)
//   SLUICE_KEEP_DIR=1             keep the data directory (a failed run always keeps it)
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import { CRASH_POINTS as ALL_CRASH_POINTS, type CrashPoint } from '../../src/server/crash-points.ts';

// The points an ingest workload passes; a tenant's creation (tenant-before-listed) has its own crash
// test in test/server/tenants.test.ts, and journal retention (during-journal-trim, which a run
// shorter than the retention never reaches) in test/server/journal-retention-crash.test.ts.
const CRASH_POINTS = ALL_CRASH_POINTS.filter(
  (p) => p !== 'tenant-before-listed' && p !== 'during-journal-trim',
);
import { mulberry32 } from '../support/checkpoint-workload.ts';
import {
  type CrashableServer,
  ResumingSubscriber,
  isConnectionError,
  killHard,
  metricValue,
  spawnCrashable,
} from '../support/crash-harness.ts';
import {
  CRASH_DDL,
  CRASH_TABLES,
  CRASH_VIEWS,
  type CrashBatch,
  CrashClient,
  PROBE_COLUMN,
  batchApplied,
  changesGroupCount,
  readTableRows,
  readViewRows,
} from '../support/crash-workload.ts';
import { SqliteOracle, canonicalRows, multisetDiff } from '../support/sqlite-oracle.ts';
import { removeDir, request, sortedRows, sqlOk, tempDir, waitUntil } from './helpers.ts';

const env = process.env;
const LONG = env.SLUICE_CRASH_LONG === '1';
const SEED = env.SLUICE_SEED !== undefined ? Number(env.SLUICE_SEED) : Date.now() % 1_000_000;
const KILLS = Number(env.SLUICE_CRASH_KILLS ?? (LONG ? 400 : 32));
const CLIENTS = Number(env.SLUICE_CRASH_CLIENTS ?? 4);
const [KILL_MIN_MS, KILL_MAX_MS] = (env.SLUICE_CRASH_KILL_MS ?? (LONG ? '1500-4000' : '150-1000'))
  .split('-')
  .map(Number) as [number, number];
const SHAPE = LONG
  ? { sellers: 1000, orderCap: 8000, clickCap: 1500 }
  : { sellers: 400, orderCap: 1500, clickCap: 400 };
/** Share of kills at named crash points (the rest from outside). */
const POINT_SHARE = LONG ? 1 / 3 : 1 / 2;
/** A crash point not reached within this much ingest is given up on (killed from outside, counted). */
const POINT_PATIENCE_MS = LONG ? 20_000 : 8_000;
const SERVER_ARGS = [
  '--checkpoint-interval-ms',
  '200',
  '--checkpoint-epochs',
  '25',
  '--checkpoint-slice-ms',
  '0',
  '--heartbeat-ms',
  '50',
];

const knobs = ['SLUICE_CRASH_KILLS', 'SLUICE_CRASH_CLIENTS', 'SLUICE_CRASH_LONG', 'SLUICE_CRASH_KILL_MS']
  .filter((k) => env[k] !== undefined)
  .map((k) => `${k}=${env[k]} `)
  .join('');
const REPLAY = `SLUICE_SEED=${SEED} ${knobs}node --import tsx --test test/server/crash-concurrent.test.ts`;

type Plan =
  | { readonly kind: 'point'; readonly point: CrashPoint; readonly count: number }
  | { readonly kind: 'external'; readonly afterMs: number }
  | { readonly kind: 'graceful'; readonly afterMs: number };

/** The n-th pass at which a point fires: spread over what one incarnation passes in a second or two. */
function pointCount(point: CrashPoint, int: (n: number) => number): number {
  switch (point) {
    case 'before-commit':
    case 'after-commit':
      return 1 + int(60); // one pass per group commit
    case 'while-publishing':
      return 1 + int(400); // one per epoch and subscribed view
    case 'between-checkpoint-slices':
      return 1 + int(20); // one per slice of ~256 entries
    default:
      return 1 + int(3); // one per checkpoint (paced: at least 10× the last one's writing time apart)
  }
}

function makePlan(rnd: () => number): Plan[] {
  const int = (n: number): number => Math.floor(rnd() * n);
  const afterMs = (): number => KILL_MIN_MS + int(KILL_MAX_MS - KILL_MIN_MS + 1);
  // Kills inside a sliced checkpoint write (where the attack's window was) count double.
  const weight = (p: CrashPoint): number => (p === 'between-checkpoint-slices' ? 2 : 1);
  const weights = CRASH_POINTS.reduce((sum, p) => sum + weight(p), 0);
  const perPoint = Math.max(1, Math.floor((KILLS * POINT_SHARE) / weights));
  const kills: Plan[] = [];
  for (const point of CRASH_POINTS) {
    for (let i = 0; i < perPoint * weight(point); i++) {
      kills.push({ kind: 'point', point, count: pointCount(point, int) });
    }
  }
  while (kills.length < KILLS) kills.push({ kind: 'external', afterMs: afterMs() });
  for (let i = kills.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [kills[i], kills[j]] = [kills[j] as Plan, kills[i] as Plan];
  }
  // The first server runs the DDL and must not crash inside it: it gets an external kill.
  const first = kills.findIndex((p) => p.kind === 'external');
  if (first > 0) [kills[0], kills[first]] = [kills[first] as Plan, kills[0] as Plan];
  // Graceful stops in the mix (not kills): recovery after them replays nothing.
  const graceful = Math.max(2, Math.floor(KILLS / 50));
  for (let g = 1; g <= graceful; g++) {
    kills.splice(Math.floor((g * kills.length) / (graceful + 1)), 0, {
      kind: 'graceful',
      afterMs: afterMs(),
    });
  }
  return kills;
}

/** Log lines of a start that mean recovery did not simply succeed (pino JSON level ≥ 40, fallbacks). */
function startTrouble(output: string): string[] {
  const listening = output.indexOf('listening on');
  const start = listening < 0 ? output : output.slice(0, listening);
  return start
    .split('\n')
    .filter(
      (l) =>
        /"level":([4-9]\d)/.test(l) ||
        /whole journal|fall(s|ing)? ?back|checkpoint is damaged|cannot be loaded/i.test(l),
    );
}

/** Error and fatal log lines anywhere in a server's output. */
function errorLines(output: string): string[] {
  return output.split('\n').filter((l) => /"level":([5-9]\d)/.test(l));
}

/** A check could not finish because the server process died (a crash point reached meanwhile). */
class ServerDied extends Error {}

const servers: CrashableServer[] = [];
const subscribers: ResumingSubscriber[] = [];
after(async () => {
  for (const s of subscribers) s.disconnect();
  for (const s of servers) await killHard(s);
});

test(
  `crash equivalence under concurrent ingest: ${KILLS} kills, ${CLIENTS} clients (seed ${SEED})`,
  { timeout: Math.max(600_000, KILLS * 30_000) },
  async (t) => {
    const rnd = mulberry32(SEED);
    const dir = tempDir('sluice-crash-concurrent-');
    const oracle = new SqliteOracle();
    const started = performance.now();
    const clients = Array.from({ length: CLIENTS }, (_, i) => new CrashClient(i, SEED, SHAPE));
    const killCounts: Record<string, number> = {};
    const missed: Record<string, number> = {};
    const stats = {
      restarts: 0,
      killedInRecovery: 0,
      killedInChecks: 0,
      acked: 0,
      resolvedApplied: 0,
      resolvedLost: 0,
      killsWithSeveralInFlight: 0,
      checkpointRecoveries: 0,
      fullReplays: 0,
      gracefulRecoveries: 0,
      maxReplayed: 0,
      /** Largest recovery time a start reported (sluice_recovery_seconds). */
      maxRecoverySeconds: 0,
    };
    /** Seconds spent starting servers, checking them and running the workload. */
    const seconds = { start: 0, checks: 0, workload: 0 };
    const timed = async <T>(what: keyof typeof seconds, call: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await call();
      } finally {
        seconds[what] += (performance.now() - t0) / 1000;
      }
    };
    let applied = 0;
    let epoch0 = 0;
    let phase = 'start';
    let sawCheckpointRecovery = false;
    let failed = false;
    /**
     * Every acknowledged epoch: its table, and whether its batch changed a group's row count in the
     * view checked for that table (then the view must have changed in it); and those not yet
     * checked against the subscribers.
     */
    const ackedEpochs = new Map<number, { table: CrashBatch['table']; countChanged: boolean }>();
    let uncheckedAcks: number[] = [];
    let lastEpoch = 0;
    const progress = (): string =>
      `${Object.values(killCounts).reduce((a, b) => a + b, 0)} kills ${JSON.stringify(killCounts)}, ` +
      `epoch ${lastEpoch}, ${JSON.stringify(stats)}, seconds ${JSON.stringify(seconds, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}` +
      (Object.keys(missed).length > 0 ? `, crash points not reached ${JSON.stringify(missed)}` : '');
    try {
      for (const spec of CRASH_TABLES) oracle.createTable(spec);
      for (const [name, select] of CRASH_VIEWS) oracle.createView(name, select);
      const subs: ResumingSubscriber[] = [];
      for (const [name] of CRASH_VIEWS) subs.push(new ResumingSubscriber(name, `${name}#a`, { keep: false }));
      subs.push(
        new ResumingSubscriber('seller_totals', 'seller_totals#b', { keep: false }),
        new ResumingSubscriber('hot_clicks', 'hot_clicks#b', { keep: false }),
      );
      subscribers.push(...subs);
      /**
       * Subscribers (resumed after every restart) of a view grouping one table by `column` with a
       * COUNT(*): each acknowledged epoch of that table that changed a group's count reached them,
       * and no epoch of another table did.
       */
      const coverage = new Map<
        ResumingSubscriber,
        { table: CrashBatch['table']; seen: Set<number>; taken: number }
      >([
        [subs[0] as ResumingSubscriber, { table: 'orders', seen: new Set(), taken: 0 }],
        [subs[2] as ResumingSubscriber, { table: 'clicks', seen: new Set(), taken: 0 }],
      ]);
      const GROUP_COLUMN = { orders: 'seller_id', clicks: 'channel' } as const;

      /** Counts a kill: at its crash point, or from outside (also a point given up on). */
      const countKill = (plan: Plan, reached = true): void => {
        if (plan.kind === 'graceful') return;
        const key = plan.kind === 'point' && reached ? plan.point : 'external';
        killCounts[key] = (killCounts[key] ?? 0) + 1;
        const total = Object.values(killCounts).reduce((a, b) => a + b, 0);
        if (LONG && total % 25 === 0) console.error(`crash-concurrent seed ${SEED}: ${progress()}`);
      };

      /** The checks after a (re)start; `graceful`: the previous server stopped cleanly. */
      const verify = async (server: CrashableServer, graceful: boolean): Promise<void> => {
        phase = `verify after restart ${stats.restarts}`;
        const trouble = startTrouble(server.output());
        assert.deepEqual(
          trouble,
          [],
          `the start logged trouble (a fallback is a failure):\n${server.output()}`,
        );
        const ready = await request(server.base, 'GET', '/readyz');
        assert.equal(ready.status, 200, ready.text);
        const epoch = ready.body.epoch as number;
        lastEpoch = epoch;

        // Batches whose answers were lost: applied or not, each as a whole.
        for (const c of clients) {
          if (c.inFlight === null) continue;
          if (await batchApplied(server.base, c.inFlight)) {
            const b = c.acknowledge();
            oracle.apply(b.table, { insert: b.insert, delete: b.delete });
            applied += 1;
            stats.resolvedApplied += 1;
          } else {
            c.lose();
            stats.resolvedLost += 1;
          }
        }
        assert.equal(
          epoch - epoch0,
          applied,
          `the server's epoch ${epoch} counts every applied batch (${applied}, epoch0 ${epoch0}), no more`,
        );

        const metrics = await request(server.base, 'GET', '/metrics');
        const replayed = metricValue(metrics.text, 'sluice_recovery_replayed_entries');
        assert.notEqual(replayed, undefined, 'sluice_recovery_replayed_entries is exported');
        const recoverySeconds = metricValue(metrics.text, 'sluice_recovery_seconds') ?? 0;
        stats.maxRecoverySeconds = Math.max(
          stats.maxRecoverySeconds,
          Math.round(recoverySeconds * 100) / 100,
        );
        const entries = CRASH_DDL.length + applied;
        const r = replayed as number;
        if (stats.restarts > 0) {
          if (graceful) {
            assert.equal(r, 0, 'a graceful stop checkpoints: nothing to replay');
            stats.gracefulRecoveries += 1;
          } else if (r < entries) {
            stats.checkpointRecoveries += 1;
            sawCheckpointRecovery = true;
            stats.maxReplayed = Math.max(stats.maxReplayed, r);
          } else {
            assert.equal(r, entries, `replayed ${r} journal entries, the journal holds ${entries}`);
            // A crash never removes a committed checkpoint: a full replay now means it was dropped.
            assert.ok(
              !sawCheckpointRecovery,
              `a full replay of ${entries} entries after a checkpoint had been used`,
            );
            stats.fullReplays += 1;
          }
        }

        // Tables: exactly the applied batches.
        for (const spec of CRASH_TABLES) {
          const names = spec.columns.map((c) => c.name);
          const got = await readTableRows(server.base, spec.name, names, PROBE_COLUMN[spec.name] as string);
          assert.equal(got.epoch, epoch, `table ${spec.name} is read at the server's epoch`);
          const cols: ColumnInfo[] = spec.columns.map((c) => ({
            name: c.name,
            type: c.sqlType,
            nullable: c.nullable,
          }));
          const diff = multisetDiff(
            canonicalRows(cols, oracle.query(`SELECT ${names.join(', ')} FROM ${spec.name}`)),
            canonicalRows(cols, got.rows),
          );
          assert.deepEqual(
            { missing: diff.missing.slice(0, 20), extra: diff.extra.slice(0, 20) },
            { missing: [], extra: [] },
            `table ${spec.name} holds exactly the applied batches at epoch ${epoch} ` +
              `(${diff.missing.length} missing, ${diff.extra.length} extra)`,
          );
        }
        // Views: SQLite over the same contents.
        const restRows = new Map<string, Row[]>();
        for (const [name, select] of CRASH_VIEWS) {
          const rest = await readViewRows(server.base, name);
          assert.equal(rest.epoch, epoch, `${name} is read at the server's epoch`);
          restRows.set(name, rest.rows);
          const diff = multisetDiff(
            canonicalRows(rest.columns, oracle.query(select)),
            canonicalRows(rest.columns, rest.rows),
          );
          assert.deepEqual(
            { missing: diff.missing.slice(0, 20), extra: diff.extra.slice(0, 20) },
            { missing: [], extra: [] },
            `${name} equals SQLite at epoch ${epoch} (${diff.missing.length} missing, ${diff.extra.length} extra)`,
          );
        }

        // Subscribers: the #a ones resume after every restart, the #b ones after about half.
        const resuming = subs.filter((s) => s.name.endsWith('#a') || s.epoch < 0 || rnd() < 0.5);
        await Promise.all(resuming.map((s) => s.connect(server.wsBase)));
        for (const s of resuming) {
          await waitUntil(() => s.epoch >= epoch || server.dead(), 30_000, `${s.name} at epoch ${epoch}`);
          if (server.dead()) throw new ServerDied(`the server died while ${s.name} caught up`);
          assert.deepEqual(s.problems, [], `${s.name}: a well-formed stream`);
          assert.equal(s.epoch, epoch, `${s.name} is at the server's epoch`);
          assert.deepEqual(
            s.folded.sorted(),
            sortedRows(restRows.get(s.view) as Row[]),
            `${s.name}: the fold equals REST at epoch ${epoch}`,
          );
          const cover = coverage.get(s);
          if (cover === undefined) continue;
          for (; cover.taken < s.epochs.length; cover.taken++)
            cover.seen.add(s.epochs[cover.taken] as number);
          for (const e of uncheckedAcks) {
            if (e <= s.startEpoch) continue;
            const ack = ackedEpochs.get(e) as { table: CrashBatch['table']; countChanged: boolean };
            if (ack.table !== cover.table)
              assert.ok(!cover.seen.has(e), `${s.name}: changes at epoch ${e}, a batch of ${ack.table}`);
            else if (ack.countChanged)
              assert.ok(cover.seen.has(e), `${s.name}: no changes at epoch ${e}, whose batch changed counts`);
          }
        }
        uncheckedAcks = [];
        phase = `workload after restart ${stats.restarts}`;
      };

      /** The clients' loop against one server: until it dies or `stop` is set. */
      const runClients = (server: CrashableServer, stop: { requested: boolean }, floor: number) =>
        Promise.all(
          clients.map(async (c) => {
            while (!stop.requested && !server.dead()) {
              const b = c.next();
              let r;
              try {
                r = await request(server.base, 'POST', `/v1/tables/${b.table}/rows`, {
                  insert: b.insert,
                  delete: b.delete,
                });
              } catch (error) {
                if (isConnectionError(error)) return; // in flight: resolved after the restart
                throw error;
              }
              assert.equal(r.status, 200, `client ${c.id}: ingest into ${b.table} answered ${r.text}`);
              const e = r.body.epoch as number;
              assert.ok(e > floor, `client ${c.id}: acknowledged epoch ${e} is after the start's ${floor}`);
              assert.ok(!ackedEpochs.has(e), `epoch ${e} acknowledged twice`);
              ackedEpochs.set(e, {
                table: b.table,
                countChanged: changesGroupCount(b, GROUP_COLUMN[b.table]),
              });
              uncheckedAcks.push(e);
              c.acknowledge();
              oracle.apply(b.table, { insert: b.insert, delete: b.delete });
              applied += 1;
              stats.acked += 1;
            }
          }),
        );

      /** Runs the workload on a verified server until the plan ends it; false: a point not reached. */
      const runUntilEnd = async (server: CrashableServer, plan: Plan, floor: number): Promise<boolean> => {
        const stop = { requested: false };
        const running = runClients(server, stop, floor);
        running.catch(() => undefined); // awaited below; a failure meanwhile is not unhandled
        let timer: NodeJS.Timeout | undefined;
        let gaveUp = false;
        if (plan.kind === 'external') timer = setTimeout(() => server.child.kill('SIGKILL'), plan.afterMs);
        if (plan.kind === 'point') {
          timer = setTimeout(() => {
            gaveUp = true;
            server.child.kill('SIGKILL');
          }, POINT_PATIENCE_MS);
        }
        if (plan.kind === 'graceful') {
          await new Promise((r) => setTimeout(r, plan.afterMs));
          stop.requested = true;
          await running;
          server.child.kill('SIGTERM');
          const exit = await server.exited;
          assert.equal(exit.code, 0, `a graceful stop exits 0:\n${server.output()}`);
          return true;
        }
        // A client failure ends the run at once; clients that stop on their own (connection errors
        // while the server lives) leave the end to the plan.
        await Promise.race([server.exited, running]);
        const exit = await server.exited;
        clearTimeout(timer);
        await running;
        assert.equal(exit.signal, 'SIGKILL', `killed, not exited:\n${server.output()}`);
        if (plan.kind === 'point') {
          if (gaveUp) missed[plan.point] = (missed[plan.point] ?? 0) + 1;
          else assert.match(server.output(), new RegExp(`crash point "${plan.point}" reached`));
        }
        const inFlight = clients.filter((c) => c.inFlight !== null).length;
        if (inFlight >= 2) stats.killsWithSeveralInFlight += 1;
        return !gaveUp;
      };

      // First start: the catalog, then the first (external) kill.
      const plans = makePlan(rnd);
      phase = 'first start';
      const first = await spawnCrashable(dir, { args: SERVER_ARGS });
      assert.equal(first.kind, 'listening', first.kind === 'exited' ? first.output : '');
      let server = (first as { server: CrashableServer }).server;
      servers.push(server);
      await sqlOk(server.base, CRASH_DDL.join(';\n'));
      epoch0 = (await request(server.base, 'GET', '/readyz')).body.epoch as number;
      let graceful = false;
      let firstRun = true;
      const queue: Plan[] = [...plans, { kind: 'graceful', afterMs: 300 }];
      for (let i = 0; i < queue.length; i++) {
        const plan = queue[i] as Plan;
        if (!firstRun) {
          phase = `restart ${stats.restarts + 1} (${JSON.stringify(plan)})`;
          const spawnEnv: Record<string, string> =
            plan.kind === 'point' ? { SLUICE_CRASH_POINT: `${plan.point}:${plan.count}` } : {};
          const outcome = await timed('start', () =>
            spawnCrashable(dir, { args: SERVER_ARGS, env: spawnEnv, timeoutMs: 120_000 }),
          );
          if (outcome.kind === 'exited') {
            // Only a crash point reached before listening (e.g. a checkpoint on the first tick) may do this.
            assert.ok(
              plan.kind === 'point' && /crash point "[a-z-]+" reached/.test(outcome.output),
              `the server refused to start (exit ${outcome.code}, signal ${outcome.signal}):\n${outcome.output}`,
            );
            assert.deepEqual(
              startTrouble(outcome.output),
              [],
              `the start logged trouble:\n${outcome.output}`,
            );
            stats.restarts += 1;
            countKill(plan);
            stats.killedInRecovery += 1;
            graceful = false;
            continue;
          }
          server = outcome.server;
          servers.push(server);
          stats.restarts += 1;
        }
        firstRun = false;
        try {
          await timed('checks', () => verify(server, graceful));
        } catch (error) {
          // A crash point may be reached while the checks run (a checkpoint is due at any time).
          // Only a failure because it died is forgiven; a failed check stays one, whatever came next.
          await Promise.race([server.exited, new Promise((r) => setTimeout(r, 2000))]);
          const died =
            error instanceof ServerDied ||
            isConnectionError(error) ||
            /closed before open/.test(String(error));
          if (plan.kind !== 'point' || !server.dead() || !died) throw error;
          assert.match(server.output(), new RegExp(`crash point "${plan.point}" reached`));
          stats.killedInChecks += 1;
          countKill(plan);
          graceful = false;
          continue;
        }
        const reached = await timed('workload', () => runUntilEnd(server, plan, lastEpoch));
        assert.deepEqual(errorLines(server.output()), [], `the server logged errors:\n${server.output()}`);
        countKill(plan, reached);
        // A point not reached in time (a slow machine) is tried again soon after, sooner in its count.
        if (!reached && plan.kind === 'point' && plan.count > 1)
          queue.splice(i + 1, 0, { ...plan, count: Math.max(1, Math.floor(plan.count / 4)) });
        graceful = plan.kind === 'graceful';
      }
      // Last: a clean start after the final graceful stop, checked once more.
      phase = 'last start';
      const last = await spawnCrashable(dir, { args: SERVER_ARGS, timeoutMs: 120_000 });
      assert.equal(last.kind, 'listening', last.kind === 'exited' ? last.output : '');
      server = (last as { server: CrashableServer }).server;
      servers.push(server);
      stats.restarts += 1;
      await verify(server, true);
      server.child.kill('SIGTERM');
      assert.equal((await server.exited).code, 0);

      const total = Object.values(killCounts).reduce((a, b) => a + b, 0);
      t.diagnostic(`seed ${SEED}: ${progress()}, ${((performance.now() - started) / 1000).toFixed(1)} s`);
      assert.ok(total >= KILLS, `${total} kills`);
      for (const p of CRASH_POINTS) assert.ok((killCounts[p] ?? 0) > 0, `crash point ${p} was reached`);
      const killRestarts = stats.checkpointRecoveries + stats.fullReplays;
      assert.ok(
        stats.checkpointRecoveries >= killRestarts / 2,
        `recovery used the checkpoint in most restarts (${stats.checkpointRecoveries} of ${killRestarts})`,
      );
    } catch (error) {
      failed = true;
      const msg =
        `crash-concurrent failed, seed ${SEED} (replay: ${REPLAY}), phase: ${phase}, ` +
        `${progress()}, data dir kept: ${dir}`;
      console.error(msg);
      if (error instanceof Error) error.message = `${error.message}\n${msg}`;
      throw error;
    } finally {
      for (const s of subscribers) s.disconnect();
      for (const s of servers) await killHard(s);
      oracle.close();
      // A failed run's data directory is kept: it is the evidence (start it with `sluice start`).
      if (!failed && env.SLUICE_KEEP_DIR === undefined) removeDir(dir);
    }
  },
);
