// A long durability attack on a real server process: a seeded driver interleaves ingest (inserts,
// updates and deletes of a keyed and a keyless table, UPDATE/DELETE statements, INSERT … VALUES and
// INSERT … SELECT), DDL (CREATE and DROP of tables and of views: joins, LEFT JOIN, Top-N per group,
// window functions, DISTINCT, GROUP BY with HAVING, views over views, VALUES in FROM, a SQL function
// inlined; CREATE, CREATE OR REPLACE and DROP … CASCADE of that function), writes the server must
// refuse and does (EPOCH_TOO_LARGE, VIEW_TOO_LARGE, RESULT_TOO_LARGE, DEPENDENT_OBJECTS), query
// subscriptions (temporary views created and, after the linger, dropped through the journal) and
// frequent checkpoints, and kills the server with SIGKILL at random moments: from outside while a
// request is in flight, right after a DDL's answer, while a life starts (recovery), and at the named
// crash points (inside a checkpoint among them). After every restart:
//  - the catalog and every table equal the driver's model of what was acknowledged (the one request
//    in flight at the kill is either wholly present or wholly absent, and the model adopts which);
//  - every view equals SQLite running its SELECT over the model's tables, and so does every query
//    subscription's temporary view still there; the SQL function is the model's;
//  - recovery logged no disagreement (a checkpoint failing against the journal, a history ended,
//    a recorded catalog not rebuilt), and which path it took and how long it ran is counted;
//  - WebSocket subscribers of three permanent views and of a query resume from their last folded epoch and their
//    fold equals the view over REST at the same epoch, with no epoch seen twice;
//  - now and then, a copy of the data directory without its checkpoint (the journal alone, replayed
//    whole) gives the same catalog, tables and views as the restart from the checkpoint; with journal
//    retention on and batches deleted, that copy must refuse to start (STATE_ERROR) instead;
//  - with journal retention on and the fsync shadow preloaded (bench/fsync-shadow.c), a copy whose
//    checkpoint file is as of its last fsync (what a power loss leaves) starts and serves the same.
import { mkdirSync } from 'node:fs';
import WebSocket from 'ws';
import { join } from 'node:path';
import {
  Driver,
  Model,
  PERMANENT_VIEWS,
  type Step,
  type TableModel,
  post,
  bigRows,
  tableA,
  tableB,
  tableBig,
} from './durability-workload.ts';
import { mulberry32 } from './checkpoint-workload.ts';
import {
  type CrashableServer,
  ResumingSubscriber,
  isConnectionError,
  killHard,
  spawnCrashable,
} from './crash-harness.ts';
import { multisetDiff } from './sqlite-oracle.ts';
import { type ServedState, compareWithModel, readServed, sameServed } from './durability-state.ts';
import { startJournalOnlyCopy, startPowerLossCopy, truncatedThroughOf } from './durability-copies.ts';
import { removeDir, sortedRows, tempDir, viewRowsAtOneEpoch, waitUntil } from '../server/helpers.ts';

export interface DurabilityRunOptions {
  readonly seed: number;
  /** Server processes killed in the run. */
  readonly kills: number;
  /** Every this many restarts, compare the restart from the checkpoint with the journal alone. */
  readonly journalOnlyEvery: number;
  /** Rows loaded into the large table at the start (default 20,000). */
  readonly bigRows?: number;
  /**
   * --journal-retention-seconds of the server (default 0: keep the whole journal). On, the
   * journal-only copies are expected to refuse once batches were deleted, and the crash point inside
   * a retention slice is armed too.
   */
  readonly journalRetentionSeconds?: number;
  /** The writer thread's durable-point interval (SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS; default the server's). */
  readonly durableIntervalMs?: number;
  /**
   * A built bench/fsync-shadow.c: preloaded into every life, and every `powerLossEvery` kills a copy
   * of the data directory with checkpoint.db as of its last fsync is started and compared.
   */
  readonly fsyncShadow?: string;
  readonly powerLossEvery?: number;
  readonly log?: (line: string) => void;
}

export interface DurabilityRunSummary {
  readonly kills: number;
  readonly crashPointKills: number;
  /** Kills by crash point name (the rest were from outside). */
  readonly crashPointsReached: Record<string, number>;
  readonly inFlightApplied: number;
  readonly inFlightLost: number;
  readonly ddlStatements: number;
  readonly ingestRequests: number;
  readonly journalOnlyComparisons: number;
  readonly lastEpoch: number;
  /** Requests the server had to refuse, and did (nothing applied), by error code. */
  readonly refused: Record<string, number>;
  /** Query subscriptions opened and closed (each a temporary view created, then dropped after the linger). */
  readonly querySubscriptions: number;
  /** Lives killed from outside while starting, before they listened. */
  readonly startupKills: number;
  /** Restarts by the path recovery logged (from the checkpoint, the whole journal, nothing to replay). */
  readonly recoveryPaths: Record<string, number>;
  /** Recovery wall ms (server log) of the first and the last tenth of the restarts: does it grow with kills? */
  readonly recoveryMsFirstTenth: number;
  readonly recoveryMsLastTenth: number;
  /** Journal-only copies that refused to start because retention had deleted batches (as they must). */
  readonly journalOnlyRefused: number;
  /** The highest journal offset retention had deleted through at a kill (0: none deleted). */
  readonly truncatedThrough: number;
  /** Kills after which retention had deleted more than at the kill before. */
  readonly killsAfterTrim: number;
  /** Power-loss copies (checkpoint.db as of its last fsync) started and compared. */
  readonly powerLossCompared: number;
}

const SERVER_ARGS = [
  '--checkpoint-interval-ms',
  '30',
  '--checkpoint-epochs',
  '3',
  '--heartbeat-ms',
  '50',
  // Long enough that the resuming query subscriber's view outlives a connection the server closed
  // while this process was too busy to answer its heartbeat (at 3,000 ms a long run saw the view
  // dropped under it, then RESUME_TOO_OLD); the transient ones' views are dropped after it too.
  '--query-subscription-linger-ms',
  '20000',
  // Info: recovery logs which path it took and how long it ran.
  '--log-level',
  'info',
];
/** The queries of query subscriptions (each served by a temporary view `sluice_sub_…`); SQLite reads them as written. */
const QUERIES = [
  'SELECT g, COUNT(*) AS n, SUM(w) AS sw FROM b GROUP BY g',
  'SELECT * FROM a',
  'SELECT a.id, a.g, b.w FROM a JOIN b ON a.g = b.g WHERE a.v > 60 AND b.w = 1',
  "SELECT g, MAX(v) AS hi FROM a WHERE s <> '' GROUP BY g",
];
/** Recovery log lines that mean the checkpoint disagreed with the journal, or a view's history diverged. */
const RECOVERY_DEFECTS = [
  'recovery from the checkpoint failed',
  'the checkpoint is damaged',
  'replaying the journal gives these views other changes',
  'the recorded live catalog did not rebuild',
  'views whose plan changed were rebuilt',
];
const CRASH_POINTS = [
  'before-commit',
  'after-commit',
  'while-publishing',
  'during-checkpoint',
  'between-checkpoint-slices',
  'after-checkpoint',
];

/** The fsync shadow's kill (SHADOW_KILL_AT, bench/fsync-shadow.c), named as its stderr line names it. */
const FSYNC_KILL = 'checkpoint-file-fsync';

/** A life's output without the line every checkpoint logs. */
function quietOutput(output: string): string {
  return output
    .split('\n')
    .filter((line) => !line.includes('"msg":"checkpoint written"'))
    .join('\n');
}

/** Runs the attack; throws (with the seed) at the first disagreement. */
export async function runDurabilityAttack(options: DurabilityRunOptions): Promise<DurabilityRunSummary> {
  const { seed } = options;
  const log = options.log ?? (() => undefined);
  const rnd = mulberry32(seed);
  const retentionSeconds = options.journalRetentionSeconds ?? 0;
  // The journal-only comparisons replay the whole journal: without retention on purpose, none of it
  // may be deleted (the default, a week, is longer than any run; said so a shorter default cannot
  // break them).
  const serverArgs = [...SERVER_ARGS, '--journal-retention-seconds', String(retentionSeconds)];
  const crashPoints = [
    ...CRASH_POINTS,
    ...(retentionSeconds > 0 ? ['during-journal-trim'] : []),
    // Right after an fsync of checkpoint.db returns: inside a durable point, or the start's sync.
    ...(options.fsyncShadow !== undefined ? [FSYNC_KILL] : []),
  ];
  const shadowDir = tempDir('sluice-durability-disk-');
  const lifeEnv: Record<string, string> = {
    ...(options.durableIntervalMs !== undefined
      ? { SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS: String(options.durableIntervalMs) }
      : {}),
  };
  let journalOnlyRefused = 0;
  let truncatedThrough = 0;
  let killsAfterTrim = 0;
  let powerLossCompared = 0;
  const driver = new Driver(rnd);
  const dataDir = tempDir('sluice-durability-');
  if (options.fsyncShadow !== undefined) {
    mkdirSync(shadowDir, { recursive: true });
    Object.assign(lifeEnv, {
      LD_PRELOAD: options.fsyncShadow,
      SHADOW_MATCH: join(dataDir, 'checkpoint.db'),
      SHADOW_DIR: shadowDir,
    });
  }
  let server: CrashableServer | undefined;
  let model = new Model();
  const subs = [
    ...PERMANENT_VIEWS.map((v) => new ResumingSubscriber(v.name, `${v.name}#sub`, { keep: false })),
    // A query subscription resuming across restarts: its temporary view is recovered like any other.
    new ResumingSubscriber('query', 'query#sub', { keep: false, query: QUERIES[0] as string }),
  ];
  /** Temporary view name → its query, learnt from the `subscribed` messages. */
  const queries = new Map<string, string>();
  const refused: Record<string, number> = {};
  let querySubscriptions = 0;
  /** Lives killed from outside before they listened (during recovery). */
  let startupKills = 0;
  const recoveryPaths: Record<string, number> = {};
  const recoveryMs: number[] = [];
  /** Scans a life's log for how it recovered, and fails on a recovery that found a disagreement. */
  const scanRecovery = (output: string, copy = false): void => {
    for (const line of output.split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: { msg?: string; ms?: number; fallbackReason?: string | null };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const msg = entry.msg ?? '';
      const defect = RECOVERY_DEFECTS.find((d) => msg.startsWith(d));
      if (defect !== undefined) fail(`recovery logged "${msg}": ${line.slice(0, 2000)}`);
      if (!copy && (msg === 'recovered from the checkpoint' || msg === 'replayed the journal')) {
        const path =
          msg === 'replayed the journal'
            ? `journal${entry.fallbackReason ? ' (fallback)' : ''}`
            : 'checkpoint';
        recoveryPaths[path] = (recoveryPaths[path] ?? 0) + 1;
        if (typeof entry.ms === 'number') recoveryMs.push(entry.ms);
      }
    }
  };
  const history: string[] = [];
  const keepDataDir = process.env.SLUICE_KEEP_DATA_DIR === '1';
  const fail = (what: string): never => {
    if (keepDataDir) what += `\n(data directory kept: ${dataDir})`;
    throw new Error(
      `durability attack, seed ${seed} (replay: SLUICE_SEED=${seed}): ${what}\nlast steps:\n${history.slice(-12).join('\n')}\nsubscribers:\n${subs.map((s) => `${s.name}: ${s.events.slice(-8).join('; ')}`).join('\n')}\nserver output:\n${quietOutput(server?.output() ?? '').slice(-3000)}`,
    );
  };
  let kills = 0;
  let crashPointKills = 0;
  const crashPointsReached: Record<string, number> = {};
  const countCrashPoint = (output: string): void => {
    const m = /crash point "([a-z-]+)" reached/.exec(output);
    if (m === null) return;
    crashPointKills += 1;
    crashPointsReached[m[1] as string] = (crashPointsReached[m[1] as string] ?? 0) + 1;
  };
  let inFlightApplied = 0;
  let inFlightLost = 0;
  let ddlStatements = 0;
  let ingestRequests = 0;
  let journalOnlyComparisons = 0;
  /** `kills` at the last journal-only comparison made (a crash point during the checks skips one). */
  let comparedAtKill = 0;
  let lastEpoch = 0;
  let pending: Step | null = null;

  const start = async (
    env: Record<string, string>,
    killAfterMs?: number,
  ): Promise<CrashableServer | null> => {
    const outcome = await spawnCrashable(dataDir, {
      args: serverArgs,
      env: { ...lifeEnv, ...env },
      killAfterMs,
    });
    if (outcome.kind === 'exited') {
      if (outcome.signal === 'SIGKILL') {
        countCrashPoint(outcome.output);
        scanRecovery(outcome.output);
        return null;
      }
      return fail(`the server did not start (${outcome.code}):\n${outcome.output}`);
    }
    return outcome.server;
  };

  /** Resolves the request in flight at the kill, checks everything, resumes the subscribers. */
  const checkAfterRestart = async (live: CrashableServer): Promise<void> => {
    // Resumed first: the query subscriber's temporary view lingers only so long without it.
    await connectSubscribers(live);
    const served = await readServed(live.base);
    if (pending !== null) {
      const before = compareWithModel(served, model, queries);
      const afterProblems = before.length === 0 ? null : compareWithModel(served, pending.after, queries);
      if (before.length === 0) inFlightLost += 1;
      else if (afterProblems !== null && afterProblems.length === 0) {
        model = pending.after;
        inFlightApplied += 1;
      } else {
        fail(
          `after the restart the state is neither without nor with "${pending.what}":\nwithout: ${before.join('\n')}\nwith: ${(afterProblems ?? []).join('\n')}`,
        );
      }
      history.push(`  in flight: ${pending.what} → ${before.length === 0 ? 'lost' : 'applied'}`);
      pending = null;
    } else {
      const problems = compareWithModel(served, model, queries);
      if (problems.length > 0) fail(`after the restart:\n${problems.join('\n')}`);
    }
    if (served.epoch < lastEpoch) fail(`epoch went back from ${lastEpoch} to ${served.epoch}`);
    lastEpoch = Math.max(lastEpoch, served.epoch);
    await checkSubscribers(live);
  };

  /** Connects (or resumes) the subscribers; the query subscriber's view is named by its `subscribed`. */
  const connectSubscribers = async (live: CrashableServer): Promise<void> => {
    for (const s of subs) {
      await s.connect(live.wsBase);
      if (s.view !== 'query') continue;
      await waitUntil(() => s.servedView !== s.view || s.problems.length > 0, 10_000, 'the query subscriber');
      queries.set(s.servedView, QUERIES[0] as string);
    }
  };

  /** Opens a query subscription, waits for its snapshot, and leaves: its temporary view lingers, then goes. */
  const touchQuery = async (live: CrashableServer, query: string): Promise<void> => {
    querySubscriptions += 1;
    const socket = new WebSocket(
      `${live.wsBase}/v1/subscribe?sql=${encodeURIComponent(query)}&snapshot=true`,
    );
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`query subscription: no snapshot in 20 s (${query})`)),
          20_000,
        );
        const done = (error?: Error): void => {
          clearTimeout(timer);
          if (error === undefined) resolve();
          else reject(error);
        };
        socket.on('message', (data) => {
          const m = JSON.parse(String(data)) as { type: string; view?: string; code?: string };
          if (m.type === 'subscribed' && typeof m.view === 'string') queries.set(m.view, query);
          if (m.type === 'snapshot_end') done();
          if (m.type === 'error' && m.code !== 'UNAVAILABLE')
            done(new Error(`query subscription: ${String(data)}`));
        });
        // A kill closes it: the step in flight is resolved after the restart as usual.
        socket.on('close', () => done());
        socket.on('error', () => done());
      });
    } finally {
      socket.terminate();
    }
  };

  const checkSubscribers = async (live: CrashableServer): Promise<void> => {
    for (const s of subs) {
      const rest = await viewRowsAtOneEpoch(live.base, s.servedView);
      await waitUntil(() => s.epoch >= rest.epoch, 10_000, `${s.name} to reach epoch ${rest.epoch}`);
      if (s.epoch !== rest.epoch) continue; // a write came in between (not in this sequential driver)
      const want = sortedRows(rest.rows);
      const got = s.folded.sorted();
      if (want.join('\n') !== got.join('\n'))
        fail(
          `${s.name}: fold at epoch ${s.epoch} differs from REST:\n${JSON.stringify(multisetDiff(want, got))}`,
        );
      if (s.problems.length > 0) fail(`${s.name}: ${s.problems.join('; ')}`);
      for (let i = 1; i < s.epochs.length; i++)
        if ((s.epochs[i] as number) <= (s.epochs[i - 1] as number))
          fail(`${s.name}: epoch ${s.epochs[i]} after ${s.epochs[i - 1]}`);
    }
  };

  /** What a recovered server serves against a journal-only replay's state; counts the comparison. */
  const compareWithJournal = async (recovered: CrashableServer, journal: ServedState): Promise<void> => {
    const problems = sameServed(await readServed(recovered.base), journal);
    if (problems.length > 0) fail(`the checkpoint disagrees with the journal:\n${problems.join('\n')}`);
    journalOnlyComparisons += 1;
  };
  /** A copy of the data directory without the checkpoint (null: refused, retention deleted its start). */
  const journalOnly = async (): Promise<ServedState | null> => {
    const outcome = await startJournalOnlyCopy(dataDir);
    if (outcome.kind === 'failed') return fail(outcome.why);
    if (outcome.kind === 'refused') {
      journalOnlyRefused += 1;
      return null;
    }
    scanRecovery(outcome.output, true);
    return outcome.served;
  };
  /** What a power loss at this moment could leave (durability-copies.ts), started and read. */
  const powerLossCopy = async (): Promise<ServedState> => {
    const outcome = await startPowerLossCopy(dataDir, shadowDir);
    if (outcome.kind !== 'served') return fail(outcome.kind === 'failed' ? outcome.why : 'refused');
    scanRecovery(outcome.output, true);
    return outcome.served;
  };
  const compareWithPowerLoss = async (recovered: CrashableServer, lost: ServedState): Promise<void> => {
    const problems = sameServed(await readServed(recovered.base), lost);
    if (problems.length > 0) fail(`the power-loss copy disagrees with the restart:\n${problems.join('\n')}`);
    powerLossCompared += 1;
  };

  try {
    // The first life creates the fixed tables and the permanent views.
    server = (await start({})) as CrashableServer;
    for (const t of [tableA(), tableB(), tableBig()]) {
      const r = await post(server.base, '/v1/sql', { sql: t.ddl });
      if (r.status !== 200) fail(`${t.ddl}: ${r.text}`);
      model.tables.set(t.name, t);
    }
    const big = model.tables.get('big') as TableModel;
    const bigCount = options.bigRows ?? 20_000;
    for (let from = 0; from < bigCount; from += 5000) {
      const rows = bigRows(from, Math.min(5000, bigCount - from));
      const r = await post(server.base, '/v1/tables/big/rows', rows);
      if (r.status !== 200) fail(`loading big: ${r.text}`);
      for (const row of rows) big.rows.set(String(row['id']), row);
    }
    for (const v of PERMANENT_VIEWS) {
      const r = await post(server.base, '/v1/sql', {
        sql: `CREATE MATERIALIZED VIEW ${v.name} AS ${v.select}`,
      });
      if (r.status !== 200) fail(`${v.name}: ${r.text}`);
      model.views.add(v.name);
    }
    await connectSubscribers(server);

    while (kills < options.kills) {
      // One life: a few steps, then a kill (a crash point may come first).
      const steps = 1 + driver.int(12);
      const killAfterDdlAnswer = driver.chance(0.25);
      for (let i = 0; i < steps && server !== undefined && !server.dead(); i++) {
        if (driver.chance(0.1)) {
          await touchQuery(server, driver.pick(QUERIES));
          if (server.dead()) break;
        }
        const step = driver.next(model);
        const last = i === steps - 1;
        history.push(`${kills}: ${step.what}${last ? ' (kill)' : ''}`);
        if (step.isDdl) ddlStatements += 1;
        else ingestRequests += 1;
        const live: CrashableServer = server;
        let timer: NodeJS.Timeout | undefined;
        if (last && !(step.isDdl && killAfterDdlAnswer)) {
          timer = setTimeout(() => live.child.kill('SIGKILL'), driver.int(25));
        }
        try {
          pending = step;
          const answer = await step.send(live.base);
          if (answer.status === 200 && step.refusedWith !== undefined) {
            fail(`${step.what} was accepted; it must be refused with ${step.refusedWith}: ${answer.text}`);
          } else if (answer.status === 200) {
            model = step.after;
            pending = null;
          } else if (
            step.refusedWith !== undefined &&
            answer.status >= 400 &&
            answer.status < 500 &&
            answer.text.includes(`"code":"${step.refusedWith}"`)
          ) {
            model = step.after;
            pending = null;
            refused[step.refusedWith] = (refused[step.refusedWith] ?? 0) + 1;
          } else if (answer.status >= 400 && answer.status < 500) {
            fail(`${step.what} was refused: ${answer.status} ${answer.text}`);
          } else {
            // 5xx: the server is going down; resolved after the restart.
            history.push(`  answer ${answer.status}: ${answer.text.slice(0, 200)}`);
            break;
          }
        } catch (error) {
          if (!isConnectionError(error)) throw error;
          // The server died (a crash point, or the timer): this step is resolved after the restart.
          history.push('  no answer');
          break;
        } finally {
          if (timer !== undefined) clearTimeout(timer);
        }
        if (last && pending === null && step.isDdl && killAfterDdlAnswer) live.child.kill('SIGKILL');
        if (last && !live.dead()) live.child.kill('SIGKILL');
      }
      const dying: CrashableServer = server as CrashableServer;
      await killHard(dying);
      countCrashPoint(dying.output());
      scanRecovery(dying.output());
      kills += 1;
      for (const s of subs) s.disconnect();

      // Every `journalOnlyEvery` kills since the last comparison made, and at the last: a kill during a
      // start adds a second kill, so `kills` can step over a multiple (seed 64829 compared none).
      let journal: ServedState | null = null;
      if (kills - comparedAtKill >= options.journalOnlyEvery || kills >= options.kills) {
        journal = await journalOnly();
        if (journal === null) comparedAtKill = kills;
      }
      if (retentionSeconds > 0) {
        const through = truncatedThroughOf(dataDir);
        if (through > truncatedThrough) killsAfterTrim += 1;
        truncatedThrough = Math.max(truncatedThrough, through);
      }
      const powerLoss =
        options.fsyncShadow !== undefined && kills % (options.powerLossEvery ?? 2) === 0
          ? await powerLossCopy()
          : null;

      // Now and then a life killed from outside while it starts (recovery, checks, loading).
      if (driver.chance(0.15)) {
        const ms = 30 + driver.int(1500);
        const early = await start({}, ms);
        kills += 1;
        if (early === null) startupKills += 1;
        else await killHard(early);
        if (early !== null) scanRecovery(early.output());
        history.push(`  killed ${ms} ms into a start: ${early === null ? 'before' : 'after'} it listened`);
      }

      // The next life: often armed with a crash point, which may also fire during recovery.
      const armed = driver.chance(0.5);
      const point = armed ? driver.pick(crashPoints) : null;
      const env: Record<string, string> =
        point === null
          ? {}
          : point === FSYNC_KILL
            ? { SHADOW_KILL_AT: String(1 + driver.int(6)) }
            : { SLUICE_CRASH_POINT: `${point}:${1 + driver.int(4)}` };
      let next = await start(env);
      while (next === null) {
        kills += 1;
        next = await start({});
      }
      server = next;
      try {
        await checkAfterRestart(server);
        if (journal !== null) {
          await compareWithJournal(server, journal);
          comparedAtKill = kills;
        }
        if (powerLoss !== null) await compareWithPowerLoss(server, powerLoss);
      } catch (error) {
        // A crash point may fire while the checks read: the next life resolves it.
        if (!isConnectionError(error)) throw error;
        const dying = server;
        await Promise.race([dying.exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (!dying.dead()) throw error;
        history.push('  (crash point during the checks)');
      }
      log(`kill ${kills}: epoch ${lastEpoch}, views ${[...model.views].join(' ')}`);
    }
    await killHard(server);
    // A run whose comparisons all met a crash point during the checks still compares once, here.
    const finalJournal = journalOnlyComparisons === 0 ? await journalOnly() : null;
    const last = await start({});
    if (last === null) fail('the final start died');
    server = last as CrashableServer;
    await checkAfterRestart(server);
    if (finalJournal !== null) {
      await compareWithJournal(server, finalJournal);
    }
    scanRecovery(server.output());
    const tenth = Math.max(1, Math.floor(recoveryMs.length / 10));
    const mean = (xs: number[]): number => Math.round(xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length));
    return {
      kills,
      crashPointKills,
      crashPointsReached,
      inFlightApplied,
      inFlightLost,
      ddlStatements,
      ingestRequests,
      journalOnlyComparisons,
      lastEpoch,
      refused,
      querySubscriptions,
      startupKills,
      recoveryPaths,
      recoveryMsFirstTenth: mean(recoveryMs.slice(0, tenth)),
      recoveryMsLastTenth: mean(recoveryMs.slice(-tenth)),
      journalOnlyRefused,
      truncatedThrough,
      killsAfterTrim,
      powerLossCompared,
    };
  } finally {
    for (const s of subs) s.disconnect();
    await killHard(server);
    if (!keepDataDir) removeDir(dataDir);
    removeDir(shadowDir);
  }
}
