// Crash equivalence: a seeded workload (inserts, updates and deletes in random batch sizes over two
// keyed tables, feeding grouped, MIN/MAX, COUNT(DISTINCT), filter and view-over-view views) runs
// against a real server process that is killed with SIGKILL over and over — from outside while a
// request is in flight, and at every named crash point (SLUICE_CRASH_POINT) with varying counts —
// and restarted on the same data directory, checkpointing often. The same batches go to an
// in-process Engine (the reference, with its per-epoch changelog) and to SQLite. After every
// restart: each view over REST equals the reference and SQLite at the same epoch; WebSocket
// subscribers that resume from their last folded epoch saw every reference epoch of their view
// exactly once, in order, with the reference's changes, and their fold equals REST; recovery
// replayed only the journal tail after the last checkpoint (nothing after a graceful stop).
//
// Each batch is sent alone, so the one in flight when the server died is resolved by the epoch the
// restarted server reports: applied (as the next epoch) or not (then it is sent again).
//
//   SLUICE_SEED=<n>         replay one run
//   SLUICE_CRASH_KILLS=<n>  total kills (default 52: 6 per crash point, the rest from outside)
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Engine } from '../../src/index.ts';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import {
  type CrashableServer,
  ResumingSubscriber,
  isConnectionError,
  killHard,
  metricValue,
  spawnCrashable,
} from '../support/crash-harness.ts';
import { SqliteOracle, canonicalRows, multisetDiff } from '../support/sqlite-oracle.ts';
import {
  type Message,
  removeDir,
  request,
  sortedRows,
  sqlOk,
  tempDir,
  viewRowsAtOneEpoch,
  waitUntil,
} from './helpers.ts';

const SEED = process.env.SLUICE_SEED !== undefined ? Number(process.env.SLUICE_SEED) : Date.now() % 1_000_000;
const KILLS = Number(process.env.SLUICE_CRASH_KILLS ?? 52);
const PER_POINT = Math.max(1, Math.min(6, Math.floor(KILLS / 8)));
const CKPT_EPOCHS = 7;
const SERVER_ARGS = [
  '--checkpoint-interval-ms',
  '50',
  '--checkpoint-epochs',
  String(CKPT_EPOCHS),
  '--heartbeat-ms',
  '50',
];
const POINTS = ['before-commit', 'after-commit', 'while-publishing', 'during-checkpoint', 'after-checkpoint'];

const TABLES = [
  {
    name: 'customers',
    columns: [
      { name: 'cid', sqlType: 'integer', nullable: false },
      { name: 'region', sqlType: 'text', nullable: false },
      { name: 'tier', sqlType: 'integer', nullable: false },
      { name: 'credit', sqlType: 'integer', nullable: true },
    ],
    primaryKey: ['cid'],
  },
  {
    name: 'orders',
    columns: [
      { name: 'id', sqlType: 'bigint', nullable: false },
      { name: 'cid', sqlType: 'integer', nullable: false },
      { name: 'product', sqlType: 'text', nullable: true },
      { name: 'amount', sqlType: 'integer', nullable: false },
    ],
    primaryKey: ['id'],
  },
];
const DDL_TABLES = [
  'CREATE TABLE customers (cid INTEGER NOT NULL, region TEXT NOT NULL, tier INTEGER NOT NULL, credit INTEGER, PRIMARY KEY (cid))',
  'CREATE TABLE orders (id BIGINT NOT NULL, cid INTEGER NOT NULL, product TEXT, amount INTEGER NOT NULL, PRIMARY KEY (id))',
];
const VIEWS: [string, string][] = [
  ['cust_totals', 'SELECT cid, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY cid'],
  [
    'cust_range',
    'SELECT cid, MIN(amount) AS lo, MAX(amount) AS hi, COUNT(DISTINCT product) AS products FROM orders GROUP BY cid',
  ],
  [
    'total_hist',
    'SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS custs, SUM(n) AS orders FROM cust_totals GROUP BY FLOOR(total / 100)',
  ],
  ['big_orders', 'SELECT id, cid, amount FROM orders WHERE amount > 80'],
  [
    'region_stats',
    'SELECT region, COUNT(*) AS n, MIN(tier) AS lo, MAX(tier) AS hi, COUNT(DISTINCT tier) AS tiers, SUM(credit) AS credit FROM customers GROUP BY region',
  ],
  ['gold', 'SELECT cid, region, credit FROM customers WHERE tier >= 3'],
  // Joins: PK–FK (keyed by the order id), an outer join with a residual under an aggregate, and a
  // join of two views.
  ['cust_orders', 'SELECT o.id, o.amount, c.region, c.tier FROM orders o JOIN customers c ON o.cid = c.cid'],
  [
    'region_revenue',
    'SELECT c.region, COUNT(o.id) AS orders, SUM(o.amount) AS revenue FROM customers c LEFT JOIN orders o ON o.cid = c.cid AND o.amount > 20 GROUP BY c.region',
  ],
  ['gold_totals', 'SELECT g.cid, g.region, t.total FROM gold g LEFT JOIN cust_totals t USING (cid)'],
];
const DDL = [
  ...DDL_TABLES,
  ...VIEWS.map(([name, select]) => `CREATE MATERIALIZED VIEW ${name} AS ${select}`),
];

interface Batch {
  readonly table: string;
  readonly insert: Row[];
  readonly delete: Row[];
}

/** The seeded batch source: inserts, updates (a live key re-inserted), deletes by key. */
class Workload {
  private readonly orders = new Set<number>();
  private readonly customers = new Set<number>();
  private nextOrder = 1;

  constructor(private readonly rnd: () => number) {}

  private int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  private pick(keys: Set<number>): number {
    const all = [...keys];
    return all[this.int(all.length)] as number;
  }

  next(): Batch {
    const r = this.rnd();
    const size = r < 0.05 ? 50 + this.int(250) : r < 0.3 ? 1 : 1 + this.int(25);
    const touched = new Set<number>();
    const insert: Row[] = [];
    const del: Row[] = [];
    if (this.rnd() < 0.7) {
      for (let i = 0; i < size; i++) {
        const op = this.rnd();
        if (op < 0.2 && this.orders.size > 0) {
          const id = this.pick(this.orders);
          if (touched.has(id)) continue;
          touched.add(id);
          del.push({ id });
          this.orders.delete(id);
        } else {
          const id = op < 0.4 && this.orders.size > 0 ? this.pick(this.orders) : this.nextOrder++;
          if (touched.has(id)) continue;
          touched.add(id);
          insert.push({
            id,
            cid: this.int(40),
            product: this.rnd() < 0.1 ? null : `p${this.int(6)}`,
            amount: 1 + this.int(120),
          });
          this.orders.add(id);
        }
      }
      return { table: 'orders', insert, delete: del };
    }
    for (let i = 0; i < Math.min(size, 30); i++) {
      const cid = this.int(60);
      if (touched.has(cid)) continue;
      touched.add(cid);
      if (this.customers.has(cid) && this.rnd() < 0.3) {
        del.push({ cid });
        this.customers.delete(cid);
      } else {
        insert.push({
          cid,
          region: `r${this.int(5)}`,
          tier: this.int(5),
          credit: this.rnd() < 0.15 ? null : this.int(1000),
        });
        this.customers.add(cid);
      }
    }
    return { table: 'customers', insert, delete: del };
  }
}

type Plan =
  | { readonly kind: 'point'; readonly point: string; readonly count: number }
  | { readonly kind: 'external'; readonly afterBatches: number; readonly delayMs: number }
  | { readonly kind: 'graceful'; readonly afterBatches: number };

function makePlan(rnd: () => number): Plan[] {
  const int = (n: number): number => Math.floor(rnd() * n);
  const kills: Plan[] = [];
  for (const point of POINTS) {
    for (let i = 0; i < PER_POINT; i++) {
      const count =
        point === 'while-publishing' ? 1 + int(20) : point.includes('checkpoint') ? 1 + int(3) : 1 + int(8);
      kills.push({ kind: 'point', point, count });
    }
  }
  while (kills.length < KILLS) kills.push({ kind: 'external', afterBatches: int(6), delayMs: int(6) });
  for (let i = kills.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [kills[i], kills[j]] = [kills[j] as Plan, kills[i] as Plan];
  }
  // Two graceful restarts in the mix (not kills): recovery after them replays nothing.
  kills.splice(Math.floor(kills.length / 3), 0, { kind: 'graceful', afterBatches: 5 + int(10) });
  kills.splice(Math.floor((2 * kills.length) / 3), 0, { kind: 'graceful', afterBatches: 5 + int(10) });
  return kills;
}

function canonicalChange(columns: readonly ColumnInfo[], c: { op: string; row: Row; n?: number }): string {
  return `${c.op} x${c.n ?? 1} ${canonicalRows(columns, [c.row])[0]}`;
}

/** The server died while this was going on (its process exited): a kill, not a failure. */
class ServerDied extends Error {}

const servers: CrashableServer[] = [];
const subscribers: ResumingSubscriber[] = [];
after(async () => {
  for (const s of subscribers) s.disconnect();
  for (const s of servers) await killHard(s);
});

test(`crash equivalence under ${KILLS} kills (seed ${SEED})`, { timeout: 600_000 }, async (t) => {
  const rnd = mulberry32(SEED);
  const dir = tempDir('sluice-crash-');
  const oracle = new SqliteOracle();
  const reference = new Engine();
  const started = performance.now();
  const killCounts: Record<string, number> = {};
  const replayed: number[] = [];
  let restarts = 0;
  let phase = 'start';
  try {
    for (const spec of TABLES) oracle.createTable(spec);
    for (const [name, select] of VIEWS) oracle.createView(name, select);
    reference.execute(DDL.join(';\n'));
    const epoch0 = reference.epoch;
    const refChanges = new Map<string, Map<number, ViewChangeSet>>();
    for (const [name] of VIEWS) {
      const byEpoch = new Map<number, ViewChangeSet>();
      refChanges.set(name, byEpoch);
      reference.subscribe(name, (c) => {
        if (c.changes.length > 0 || (c.errors?.length ?? 0) > 0) byEpoch.set(c.epoch, c);
      });
    }
    const columns = new Map<string, ColumnInfo[]>();
    for (const [name] of VIEWS) columns.set(name, [...reference.viewSnapshot(name).columns]);

    const workload = new Workload(mulberry32(SEED ^ 0x5eed));
    const batches: Batch[] = [];
    let landed = 0;
    const batchAt = (i: number): Batch => {
      while (batches.length <= i) batches.push(workload.next());
      return batches[i] as Batch;
    };
    const land = (): void => {
      const b = batchAt(landed);
      reference.applyChanges(b.table, { insert: b.insert, delete: b.delete });
      oracle.apply(b.table, { insert: b.insert, delete: b.delete });
      landed += 1;
    };
    const subs: ResumingSubscriber[] = [];
    for (const [name] of VIEWS) {
      subs.push(new ResumingSubscriber(name, `${name}#a`), new ResumingSubscriber(name, `${name}#b`));
    }
    subscribers.push(...subs);

    // First start: the catalog.
    phase = 'first start';
    const first = await spawnCrashable(dir, { args: SERVER_ARGS });
    assert.equal(first.kind, 'listening');
    let server = (first as { server: CrashableServer }).server;
    servers.push(server);
    await sqlOk(server.base, DDL.join(';\n'));

    /** Throws ServerDied when a call failed because the process died. */
    let pending = false;
    const guard = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (error instanceof ServerDied) throw error;
        if (server.dead() || isConnectionError(error) || /closed before open|timed out/.test(String(error))) {
          await Promise.race([server.exited, new Promise((r) => setTimeout(r, 2000))]);
          if (server.dead()) throw new ServerDied(String(error));
        }
        throw error;
      }
    };

    /** The checks after a (re)start: resolution of the batch in flight, REST, SQLite, changelogs. */
    const verify = async (graceful: boolean): Promise<void> => {
      phase = `verify after restart ${restarts}`;
      const ready = await guard(() => request(server.base, 'GET', '/readyz'));
      assert.equal(ready.status, 200, ready.text);
      const epoch = ready.body.epoch as number;
      const serverLanded = epoch - epoch0;
      const inFlight = pending;
      if (serverLanded === landed + 1 && pending) land();
      pending = false;
      assert.equal(
        serverLanded,
        landed,
        `the server's epoch ${epoch} after the restart: ${landed} batches acknowledged${inFlight ? ', one in flight' : ''}`,
      );
      assert.equal(reference.epoch, epoch);
      const metrics = await guard(() => request(server.base, 'GET', '/metrics'));
      const replay = metricValue(metrics.text, 'sluice_recovery_replayed_entries');
      assert.notEqual(replay, undefined, 'sluice_recovery_replayed_entries is exported');
      replayed.push(replay as number);
      const entries = DDL.length + landed;
      if (graceful) assert.equal(replay, 0, 'a graceful stop checkpoints: nothing to replay');
      else {
        // Checkpoints are due every CKPT_EPOCHS epochs, but each is written in slices while epochs
        // go on, and kills at 'during-checkpoint' (or from outside) can land before several in a
        // row commit: the tail is not bounded by CKPT_EPOCHS alone. What must hold is that a
        // restart does not replay the whole history once checkpoints exist (the max is printed).
        if (entries > 3 * (CKPT_EPOCHS + 2))
          assert.ok((replay as number) < entries, `recovery replayed all ${entries} journal entries`);
      }
      for (const [name, select] of VIEWS) {
        const cols = columns.get(name) as ColumnInfo[];
        const rest = await guard(() => viewRowsAtOneEpoch(server.base, name));
        assert.equal(rest.epoch, epoch, `${name} is read at the server's epoch`);
        const got = canonicalRows(cols, rest.rows as Row[]);
        const want = canonicalRows(cols, reference.viewSnapshot(name).rows);
        assert.deepEqual(
          multisetDiff(want, got),
          { missing: [], extra: [] },
          `${name} equals the reference at epoch ${epoch}`,
        );
        const sqlite = canonicalRows(cols, oracle.query(select) as Row[]);
        assert.deepEqual(
          multisetDiff(sqlite, got),
          { missing: [], extra: [] },
          `${name} equals SQLite at epoch ${epoch}`,
        );
      }
      // Subscribers: #a resumes after every restart, #b after about half of them.
      const resuming = subs.filter((s) => s.name.endsWith('#a') || s.epoch < 0 || rnd() < 0.5);
      for (const s of resuming) await guard(() => s.connect(server.wsBase));
      for (const s of resuming) {
        await guard(() =>
          waitUntil(() => s.epoch >= epoch || server.dead(), 30_000, `${s.name} at epoch ${epoch}`),
        );
        if (server.dead()) throw new ServerDied(`${s.name} catching up`);
        assert.deepEqual(s.problems, [], `${s.name}: a well-formed stream`);
        assert.equal(s.epoch, epoch);
        const cols = columns.get(s.view) as ColumnInfo[];
        const ref = refChanges.get(s.view) as Map<number, ViewChangeSet>;
        const seen = s.changes.map((m) => m.epoch as number);
        const expected = [...ref.keys()].filter((e) => e > s.startEpoch && e <= epoch).sort((x, y) => x - y);
        assert.deepEqual(seen, expected, `${s.name}: every epoch with changes, once, in order`);
        for (const m of s.changes as (Message & { changes: { op: string; row: Row; n?: number }[] })[]) {
          const r = ref.get(m.epoch as number) as ViewChangeSet;
          assert.deepEqual(
            m.changes.map((c) => canonicalChange(cols, c)).sort(),
            r.changes.map((c) => canonicalChange(cols, c)).sort(),
            `${s.name}: the changes of epoch ${m.epoch} equal the reference's`,
          );
        }
        const rest = await guard(() => viewRowsAtOneEpoch(server.base, s.view));
        assert.deepEqual(s.folded.sorted(), sortedRows(rest.rows as Row[]), `${s.name}: fold equals REST`);
      }
      phase = `workload after restart ${restarts}`;
    };

    /** Sends batches one at a time until the server dies; returns whether one was in flight. */
    const runUntilDeath = async (plan: Plan): Promise<boolean> => {
      for (let sent = 0; sent < 400; sent++) {
        if (server.dead()) return false;
        const b = batchAt(landed);
        const req = request(server.base, 'POST', `/v1/tables/${b.table}/rows`, {
          insert: b.insert,
          delete: b.delete,
        });
        if (plan.kind === 'external' && sent === plan.afterBatches) {
          const s = server;
          setTimeout(() => s.child.kill('SIGKILL'), plan.delayMs);
        }
        if (plan.kind === 'graceful' && sent === plan.afterBatches) {
          await req.then((r) => assert.equal(r.status, 200, r.text));
          land();
          server.child.kill('SIGTERM');
          const exit = await server.exited;
          assert.equal(exit.code, 0, `graceful stop exits 0:\n${server.output()}`);
          return false;
        }
        let r;
        try {
          r = await req;
        } catch (error) {
          if (!isConnectionError(error)) throw error;
          await server.exited;
          return true;
        }
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.epoch, epoch0 + landed + 1, 'the acknowledged epoch is the next one');
        land();
      }
      throw new Error(`the server did not die within 400 batches (${JSON.stringify(plan)})`);
    };

    let plans = makePlan(rnd);
    let graceful = false;
    // The first server (no crash point) gets the first external kill or graceful stop.
    const firstIdx = plans.findIndex((p) => p.kind !== 'point');
    const firstPlan = plans[firstIdx] as Plan;
    plans = [...plans.slice(0, firstIdx), ...plans.slice(firstIdx + 1)];
    await verify(false);
    pending = await runUntilDeath(firstPlan);
    graceful = firstPlan.kind === 'graceful';
    const count = (plan: Plan): void => {
      if (plan.kind === 'graceful') return;
      const key = plan.kind === 'point' ? plan.point : 'external';
      killCounts[key] = (killCounts[key] ?? 0) + 1;
    };
    count(firstPlan);
    for (const plan of [...plans, { kind: 'graceful', afterBatches: 3 } as Plan]) {
      restarts += 1;
      phase = `restart ${restarts} (${JSON.stringify(plan)})`;
      const env: Record<string, string> =
        plan.kind === 'point' ? { SLUICE_CRASH_POINT: `${plan.point}:${plan.count}` } : {};
      const outcome = await spawnCrashable(dir, { args: SERVER_ARGS, env });
      if (outcome.kind === 'exited') {
        // Reached during recovery or before listening (a checkpoint on the first tick).
        assert.equal(plan.kind, 'point', `the server exited on its own:\n${outcome.output}`);
        assert.match(outcome.output, /crash point "[a-z-]+" reached/);
        count(plan);
        graceful = false;
        continue;
      }
      server = outcome.server;
      servers.push(server);
      try {
        await verify(graceful);
        pending = await runUntilDeath(plan);
      } catch (error) {
        if (!(error instanceof ServerDied)) throw error;
      }
      graceful = plan.kind === 'graceful';
      const exit = await server.exited;
      if (plan.kind === 'point') {
        assert.equal(exit.signal, 'SIGKILL');
        assert.match(server.output(), new RegExp(`crash point "${plan.point}" reached`));
      } else if (plan.kind === 'external') assert.equal(exit.signal, 'SIGKILL');
      count(plan);
    }
    // Last: a clean restart after the final graceful stop, checked once more.
    restarts += 1;
    const last = await spawnCrashable(dir, { args: SERVER_ARGS });
    assert.equal(last.kind, 'listening');
    server = (last as { server: CrashableServer }).server;
    servers.push(server);
    await verify(true);
    server.child.kill('SIGTERM');
    assert.equal((await server.exited).code, 0);
    const total = Object.values(killCounts).reduce((a, b) => a + b, 0);
    t.diagnostic(
      `seed ${SEED}: ${total} kills ${JSON.stringify(killCounts)}, ${restarts} restarts, ${landed} batches, ` +
        `epoch ${reference.epoch}, replayed entries max ${Math.max(...replayed)}, ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    assert.ok(total >= Math.min(KILLS, 50), `${total} kills`);
    for (const p of POINTS) assert.ok((killCounts[p] ?? 0) >= Math.min(PER_POINT, 1), `kills at ${p}`);
  } catch (error) {
    const msg = `crash equivalence failed, seed ${SEED} (replay: SLUICE_SEED=${SEED} node --import tsx --test test/server/crash-equivalence.test.ts), phase: ${phase}, kills so far ${JSON.stringify(killCounts)}, data dir ${dir}`;
    console.error(msg);
    if (error instanceof Error) error.message = `${error.message}\n${msg}`;
    throw error;
  } finally {
    for (const s of subscribers) s.disconnect();
    for (const s of servers) await killHard(s);
    oracle.close();
    if (process.env.SLUICE_KEEP_DIR === undefined) removeDir(dir);
  }
});
