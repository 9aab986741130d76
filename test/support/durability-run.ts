// A long durability attack on a real server process: a seeded driver interleaves ingest (inserts,
// updates and deletes of a keyed and a keyless table, UPDATE/DELETE statements), DDL (CREATE and
// DROP of tables and of views: joins, LEFT JOIN, Top-N per group, window functions, DISTINCT,
// GROUP BY with HAVING, views over views) and frequent checkpoints, and kills the server with
// SIGKILL at random moments: from outside while a request is in flight, right after a DDL's answer,
// and at the named crash points (inside a checkpoint among them). After every restart:
//  - the catalog and every table equal the driver's model of what was acknowledged (the one request
//    in flight at the kill is either wholly present or wholly absent, and the model adopts which);
//  - every view equals SQLite running its SELECT over the model's tables;
//  - WebSocket subscribers of two permanent views resume from their last folded epoch and their
//    fold equals the view over REST at the same epoch, with no epoch seen twice;
//  - now and then, a copy of the data directory without its checkpoint (the journal alone, replayed
//    whole) gives the same catalog, tables and views as the restart from the checkpoint.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import {
  ALL_VIEWS,
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
import { SqliteOracle, canonicalRows, multisetDiff } from './sqlite-oracle.ts';
import { removeDir, request, sortedRows, tempDir, viewRowsAtOneEpoch, waitUntil } from '../server/helpers.ts';

export interface DurabilityRunOptions {
  readonly seed: number;
  /** Server processes killed in the run. */
  readonly kills: number;
  /** Every this many restarts, compare the restart from the checkpoint with the journal alone. */
  readonly journalOnlyEvery: number;
  /** Rows loaded into the large table at the start (default 20,000). */
  readonly bigRows?: number;
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
}

const SERVER_ARGS = ['--checkpoint-interval-ms', '30', '--checkpoint-epochs', '3', '--heartbeat-ms', '50'];
const CRASH_POINTS = [
  'before-commit',
  'after-commit',
  'while-publishing',
  'during-checkpoint',
  'between-checkpoint-slices',
  'after-checkpoint',
];

/** What the server holds: catalog, tables' rows and views' rows, canonical. */
interface ServedState {
  readonly epoch: number;
  readonly tables: Map<string, string[]>;
  readonly views: Map<string, { columns: ColumnInfo[]; rows: string[]; raw: Row[]; epoch: number }>;
}

async function readServed(base: string): Promise<ServedState> {
  const tablesRes = await request(base, 'GET', '/v1/tables');
  const viewsRes = await request(base, 'GET', '/v1/views');
  const tableNames = (tablesRes.body.tables as { name: string }[]).map((t) => t.name).sort();
  const viewNames = (viewsRes.body.views as { name: string }[]).map((v) => v.name).sort();
  const tables = new Map<string, string[]>();
  for (const t of tableNames) {
    // The large table in parts: one result holds at most --max-result-rows.
    const parts = t === 'big' ? ['id % 4 = 0', 'id % 4 = 1', 'id % 4 = 2', 'id % 4 = 3'] : ['TRUE'];
    const rows: Row[] = [];
    for (const where of parts) {
      const r = await request(base, 'POST', '/v1/sql', { sql: `SELECT * FROM ${t} WHERE ${where}` });
      if (r.status !== 200) throw new Error(`SELECT * FROM ${t}: ${r.text}`);
      rows.push(...((r.body.results as { rows: Row[] }[])[0] as { rows: Row[] }).rows);
    }
    tables.set(t, sortedRows(rows));
  }
  const views = new Map<string, { columns: ColumnInfo[]; rows: string[]; raw: Row[]; epoch: number }>();
  let epoch = 0;
  for (const v of viewNames) {
    const info = await request(base, 'GET', `/v1/views/${v}`);
    const columns = info.body.columns as ColumnInfo[];
    const at = await viewRowsAtOneEpoch(base, v);
    epoch = Math.max(epoch, at.epoch);
    views.set(v, {
      columns,
      rows: canonicalRows(columns, at.rows as Row[]),
      raw: at.rows as Row[],
      epoch: at.epoch,
    });
  }
  return { epoch, tables, views };
}

function modelTableRows(t: TableModel): string[] {
  return sortedRows([...t.rows.values()]);
}

/** Differences between what the server holds and the model (empty when they agree). */
function compareWithModel(served: ServedState, model: Model): string[] {
  const problems: string[] = [];
  const wantTables = [...model.tables.keys()].sort().join(',');
  const gotTables = [...served.tables.keys()].join(',');
  if (wantTables !== gotTables) problems.push(`tables ${gotTables}, model ${wantTables}`);
  const wantViews = [...model.views].sort().join(',');
  const gotViews = [...served.views.keys()].join(',');
  if (wantViews !== gotViews) problems.push(`views ${gotViews}, model ${wantViews}`);
  if (problems.length > 0) return problems;
  for (const [name, t] of model.tables) {
    const d = multisetDiff(modelTableRows(t), served.tables.get(name) as string[]);
    if (d.missing.length + d.extra.length > 0) problems.push(`table ${name}: ${JSON.stringify(d)}`);
  }
  const oracle = new SqliteOracle();
  try {
    for (const t of model.tables.values()) {
      oracle.createTable({ name: t.name, columns: t.columns, primaryKey: t.key === null ? null : [t.key] });
      oracle.apply(t.name, { insert: [...t.rows.values()] });
    }
    for (const v of ALL_VIEWS) if (model.views.has(v.name)) oracle.createView(v.name, v.select);
    for (const v of ALL_VIEWS) {
      const got = served.views.get(v.name);
      if (got === undefined) continue;
      const want = canonicalRows(got.columns, oracle.query(`SELECT * FROM ${v.name}`) as Row[]);
      const d = multisetDiff(want, got.rows);
      if (d.missing.length + d.extra.length > 0)
        problems.push(`view ${v.name} vs SQLite: ${JSON.stringify(d)}`);
    }
  } finally {
    oracle.close();
  }
  return problems;
}

function sameServed(a: ServedState, b: ServedState): string[] {
  const problems: string[] = [];
  if (a.epoch !== b.epoch) problems.push(`epoch ${a.epoch} against ${b.epoch}`);
  const ka = [...a.tables.keys()].join(',') + '|' + [...a.views.keys()].join(',');
  const kb = [...b.tables.keys()].join(',') + '|' + [...b.views.keys()].join(',');
  if (ka !== kb) return [...problems, `catalog ${ka} against ${kb}`];
  for (const [n, rows] of a.tables)
    if (rows.join('\n') !== (b.tables.get(n) as string[]).join('\n')) problems.push(`table ${n} differs`);
  for (const [n, v] of a.views) {
    const d = multisetDiff(v.rows, (b.views.get(n) as { rows: string[] }).rows);
    if (d.missing.length + d.extra.length > 0) problems.push(`view ${n} differs: ${JSON.stringify(d)}`);
  }
  return problems;
}

/** Runs the attack; throws (with the seed) at the first disagreement. */
export async function runDurabilityAttack(options: DurabilityRunOptions): Promise<DurabilityRunSummary> {
  const { seed } = options;
  const log = options.log ?? (() => undefined);
  const rnd = mulberry32(seed);
  const driver = new Driver(rnd);
  const dataDir = tempDir('sluice-durability-');
  let server: CrashableServer | undefined;
  let model = new Model();
  const subs = PERMANENT_VIEWS.map((v) => new ResumingSubscriber(v.name, `${v.name}#sub`, { keep: false }));
  const history: string[] = [];
  const fail = (what: string): never => {
    throw new Error(
      `durability attack, seed ${seed} (replay: SLUICE_SEED=${seed}): ${what}\nlast steps:\n${history.slice(-12).join('\n')}\nserver output:\n${server?.output().slice(-3000) ?? ''}`,
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
  let lastEpoch = 0;
  let pending: Step | null = null;

  const start = async (env: Record<string, string>): Promise<CrashableServer | null> => {
    const outcome = await spawnCrashable(dataDir, { args: SERVER_ARGS, env });
    if (outcome.kind === 'exited') {
      if (outcome.signal === 'SIGKILL') {
        countCrashPoint(outcome.output);
        return null;
      }
      return fail(`the server did not start (${outcome.code}):\n${outcome.output}`);
    }
    return outcome.server;
  };

  /** Resolves the request in flight at the kill, checks everything, resumes the subscribers. */
  const checkAfterRestart = async (live: CrashableServer): Promise<void> => {
    const served = await readServed(live.base);
    if (pending !== null) {
      const before = compareWithModel(served, model);
      const afterProblems = before.length === 0 ? null : compareWithModel(served, pending.after);
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
      const problems = compareWithModel(served, model);
      if (problems.length > 0) fail(`after the restart:\n${problems.join('\n')}`);
    }
    if (served.epoch < lastEpoch) fail(`epoch went back from ${lastEpoch} to ${served.epoch}`);
    lastEpoch = Math.max(lastEpoch, served.epoch);
    for (const s of subs) await s.connect(live.wsBase);
    await checkSubscribers(live);
  };

  const checkSubscribers = async (live: CrashableServer): Promise<void> => {
    for (const s of subs) {
      const rest = await viewRowsAtOneEpoch(live.base, s.view);
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

  /** A copy of the data directory without the checkpoint: the journal replayed whole. */
  const journalOnly = async (): Promise<ServedState> => {
    const copy = tempDir('sluice-durability-journal-');
    try {
      cpSync(dataDir, copy, { recursive: true });
      for (const f of ['checkpoint.db', 'checkpoint.db-wal', 'checkpoint.db-shm'])
        rmSync(join(copy, f), { force: true });
      const outcome = await spawnCrashable(copy, {
        args: ['--checkpoint-interval-ms', '0', '--checkpoint-epochs', '1000000'],
      });
      if (outcome.kind === 'exited') return fail(`the journal-only copy did not start:\n${outcome.output}`);
      try {
        return await readServed(outcome.server.base);
      } finally {
        await killHard(outcome.server);
      }
    } finally {
      removeDir(copy);
    }
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
    for (const s of subs) await s.connect(server.base.replace('http', 'ws'));

    while (kills < options.kills) {
      // One life: a few steps, then a kill (a crash point may come first).
      const steps = 1 + driver.int(12);
      const killAfterDdlAnswer = driver.chance(0.25);
      for (let i = 0; i < steps && server !== undefined && !server.dead(); i++) {
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
          if (answer.status === 200) {
            model = step.after;
            pending = null;
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
      kills += 1;
      for (const s of subs) s.disconnect();

      let journal: ServedState | null = null;
      if (kills % options.journalOnlyEvery === 0 || kills === options.kills) journal = await journalOnly();

      // The next life: often armed with a crash point, which may also fire during recovery.
      const armed = driver.chance(0.5);
      const env: Record<string, string> = armed
        ? { SLUICE_CRASH_POINT: `${driver.pick(CRASH_POINTS)}:${1 + driver.int(4)}` }
        : {};
      let next = await start(env);
      while (next === null) {
        kills += 1;
        next = await start({});
      }
      server = next;
      try {
        await checkAfterRestart(server);
        if (journal !== null) {
          journalOnlyComparisons += 1;
          const problems = sameServed(await readServed(server.base), journal);
          if (problems.length > 0) fail(`the checkpoint disagrees with the journal:\n${problems.join('\n')}`);
        }
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
    const last = await start({});
    if (last === null) fail('the final start died');
    server = last as CrashableServer;
    await checkAfterRestart(server);
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
    };
  } finally {
    for (const s of subs) s.disconnect();
    await killHard(server);
    removeDir(dataDir);
  }
}
