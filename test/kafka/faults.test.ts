// Fault injection for Kafka sources and sinks, with a real broker and real server processes: the
// engine SIGKILLed mid-stream (from outside and at exact crash points), a private broker SIGKILLed
// and restarted on its data dir, a broker SIGSTOPped past its clients' patience, and a topic whose
// log start moved past the source's stored position. After each fault, once the source caught up,
// every view equals SQLite over the same records and the sink topics (read-committed) hold every
// epoch exactly once and fold to the view. Waits are on conditions; SLUICE_SEED replays a run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Kafka, Producer } from 'kafkajs';
import { canonicalRows } from '../support/sqlite-oracle.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import { admin, assertEpochsOnce, createTopic, readTopic, topicEnds } from '../support/kafka-topics.ts';
import {
  kafkaClient,
  kafkaSuite,
  sharedBrokers,
  startPrivateBroker,
  uniqueName,
  waitFor,
  type Broker,
} from '../support/kafka.ts';
import { killHard, metricValue, spawnCrashable, type CrashableServer } from '../support/crash-harness.ts';
import { removeDir, request, sqlOk, tempDir, restView } from '../server/helpers.ts';

const SEED = Number(process.env.SLUICE_SEED ?? Date.now() % 1_000_000_007);
const KEYS = 160;
const VIEWS = {
  seller_totals:
    'SELECT seller, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi FROM orders GROUP BY seller',
  buckets:
    'SELECT n / 3 AS bucket, COUNT(*) AS sellers, SUM(total) AS total FROM seller_totals GROUP BY n / 3',
  distinct_amounts: 'SELECT seller % 3 AS s, COUNT(DISTINCT amount) AS d FROM orders GROUP BY seller % 3',
} as const;
const viewsSql = Object.entries(VIEWS)
  .map(([name, select]) => `CREATE MATERIALIZED VIEW ${name} AS ${select};`)
  .join('\n');
const SERVER_ARGS = ['--checkpoint-interval-ms', '100', '--checkpoint-epochs', '5'];
const T0 = Date.now();
const log = (msg: string): void =>
  console.log(`[faults seed=${SEED} +${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);

/** SQLite holding the records' current rows (latest value per key, tombstones delete), with the views. */
class Oracle {
  readonly db = new Database(':memory:');
  constructor() {
    this.db.exec(
      'CREATE TABLE orders (id INTEGER PRIMARY KEY, seller INTEGER NOT NULL, amount INTEGER NOT NULL)',
    );
    for (const [name, select] of Object.entries(VIEWS)) this.db.exec(`CREATE VIEW ${name} AS ${select}`);
  }
  upsert(id: number, seller: number, amount: number): void {
    this.db.prepare('INSERT OR REPLACE INTO orders VALUES (?, ?, ?)').run(id, seller, amount);
  }
  delete(id: number): void {
    this.db.prepare('DELETE FROM orders WHERE id = ?').run(id);
  }
  rows(view: string): Record<string, unknown>[] {
    return this.db.prepare(`SELECT * FROM ${view}`).all() as Record<string, unknown>[];
  }
}

/** A seeded upsert workload on one topic: keys 0..KEYS-1, ~20% tombstones; the oracle follows. */
class Workload {
  readonly oracle = new Oracle();
  readonly rnd: () => number;
  sent = 0;
  private flowing: Promise<void> | null = null;
  private stopFlow = false;

  constructor(
    private readonly producer: Producer,
    readonly topic: string,
    seed: number,
  ) {
    this.rnd = mulberry32(seed);
  }

  async send(count: number): Promise<void> {
    const messages = [];
    for (let i = 0; i < count; i++) {
      const id = Math.floor(this.rnd() * KEYS);
      const key = JSON.stringify({ id });
      if (this.rnd() < 0.2) {
        messages.push({ key, value: null });
        this.oracle.delete(id);
      } else {
        const seller = Math.floor(this.rnd() * 14);
        const amount = Math.floor(this.rnd() * 50);
        messages.push({ key, value: JSON.stringify({ seller, amount }) });
        this.oracle.upsert(id, seller, amount);
      }
    }
    // Sequential sends of an idempotent producer: per key (one partition) the oracle's order holds.
    await this.producer.send({ topic: this.topic, messages });
    this.sent += count;
  }

  /** Keeps sending small rounds until `stop()` (at most `limit` records). */
  flow(limit = 600): void {
    this.stopFlow = false;
    const until = this.sent + limit;
    this.flowing = (async () => {
      while (!this.stopFlow && this.sent < until) {
        await this.send(25);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopFlow = true;
    await this.flowing;
    this.flowing = null;
  }
}

async function getJson(base: string, path: string): Promise<Record<string, unknown>> {
  const r = await request(base, 'GET', path);
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.body;
}

async function viewsAsRest(base: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const view of Object.keys(VIEWS)) {
    const { columns, rows } = await restView(base, view);
    out.set(view, canonicalRows(columns, rows));
  }
  return out;
}

async function assertViewsMatch(base: string, oracle: Oracle, context: string): Promise<void> {
  for (const view of Object.keys(VIEWS)) {
    const { columns, rows } = await restView(base, view);
    assert.deepEqual(
      canonicalRows(columns, rows),
      canonicalRows(columns, oracle.rows(view)),
      `${context}: view ${view} differs from SQLite (SLUICE_SEED=${SEED})`,
    );
  }
}

/** Waits until the source applied everything up to each partition's end offset (fails fast on 'failed'). */
async function caughtUp(base: string, kafka: Kafka, topic: string, timeoutMs = 90_000): Promise<void> {
  const ends = await topicEnds(kafka, topic);
  let last: unknown;
  await waitFor(
    async () => {
      const s = await getJson(base, '/v1/sources/orders');
      last = s;
      if (s.state === 'failed') throw new Error(`source failed: ${JSON.stringify(s.error)}`);
      const parts = s.partitions as { partition: number; next: number }[];
      return [...ends].every(([p, end]) => (parts.find((x) => x.partition === p)?.next ?? -1) >= end);
    },
    { timeoutMs, what: `source orders caught up with ${JSON.stringify([...ends])}` },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}; last status ${JSON.stringify(last)} (SLUICE_SEED=${SEED})`);
  });
}

interface SinkSpec {
  readonly name: string;
  readonly view: string;
  readonly topic: string;
  readonly format: 'upsert' | 'changelog';
}

/** Waits until every sink wrote everything committed, then checks its topic against the view. */
async function assertSinks(
  base: string,
  kafka: Kafka,
  sinks: readonly SinkSpec[],
  context: string,
): Promise<void> {
  for (const sink of sinks) {
    let last: unknown;
    await waitFor(
      async () => {
        const st = await getJson(base, `/v1/sinks/${sink.name}`);
        last = st;
        if (st.state === 'failed') throw new Error(`sink ${sink.name} failed: ${JSON.stringify(st.error)}`);
        return st.state === 'running' && st.lagEpochs === 0;
      },
      { timeoutMs: 90_000, what: `sink ${sink.name} to write every committed epoch` },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}; last status ${JSON.stringify(last)} (SLUICE_SEED=${SEED})`);
    });
    const { columns, key, rows } = await restView(base, sink.view);
    assert.ok(key !== null && key.length > 0, `${sink.view} is keyed`);
    const messages = await readTopic(kafka, sink.topic);
    assertEpochsOnce(messages, `${context}: sink ${sink.name}`, SEED);
    const fold = new Map<string, Record<string, unknown>>();
    const keyOf = (row: Record<string, unknown>): string =>
      JSON.stringify(Object.fromEntries(key.map((k) => [k, row[k]])));
    for (const m of messages) {
      if (sink.format === 'upsert') {
        if (m.value === null) fold.delete(m.key ?? '');
        else fold.set(m.key ?? '', JSON.parse(m.value) as Record<string, unknown>);
      } else {
        const c = JSON.parse(m.value ?? 'null') as { op: string; row: Record<string, unknown> };
        if (c.op === '-D' || c.op === '-U') fold.delete(keyOf(c.row));
        if (c.op === '+I' || c.op === '+U') fold.set(keyOf(c.row), c.row);
      }
    }
    assert.deepEqual(
      canonicalRows(columns, [...fold.values()]),
      canonicalRows(columns, rows),
      `${context}: sink ${sink.name} (${sink.format}) folds to view ${sink.view} (SLUICE_SEED=${SEED})`,
    );
  }
}

function pipelineSql(brokers: string, topic: string, sinks: readonly SinkSpec[]): string {
  return `CREATE SOURCE orders (id int, seller int NOT NULL, amount int NOT NULL, PRIMARY KEY (id))
       FROM KAFKA (brokers '${brokers}', topic '${topic}', format 'upsert', max_batch_rows 50);
     ${viewsSql}
     ${sinks
       .map(
         (s) =>
           `CREATE SINK ${s.name} FROM ${s.view} INTO KAFKA (brokers '${brokers}', topic '${s.topic}', format '${s.format}');`,
       )
       .join('\n')}`;
}

function sinkSpecs(): SinkSpec[] {
  return [
    { name: 'totals_upsert', view: 'seller_totals', topic: uniqueName('totals-upsert'), format: 'upsert' },
    { name: 'buckets_log', view: 'buckets', topic: uniqueName('buckets-log'), format: 'changelog' },
  ];
}

describe('Kafka source and sink faults (real broker, server processes)', kafkaSuite('Kafka faults'), () => {
  const servers: CrashableServer[] = [];
  const dirs: string[] = [];
  const producers: Producer[] = [];
  let privateBroker: Broker | undefined;

  before(() => log('seed (replay with SLUICE_SEED)'));
  after(async () => {
    for (const s of servers) await killHard(s).catch(() => undefined);
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await privateBroker?.stop().catch(() => undefined);
    for (const d of dirs) removeDir(d);
  });

  async function spawn(dir: string, env: Record<string, string> = {}): Promise<CrashableServer | null> {
    const outcome = await spawnCrashable(dir, { args: SERVER_ARGS, env });
    if (outcome.kind === 'exited') return null;
    servers.push(outcome.server);
    return outcome.server;
  }

  async function spawnOk(dir: string): Promise<CrashableServer> {
    const s = await spawn(dir);
    assert.ok(s !== null, 'a server without a crash point starts');
    return s;
  }

  async function stopGracefully(s: CrashableServer): Promise<void> {
    if (!s.dead()) s.child.kill('SIGTERM');
    await s.exited;
  }

  async function newProducer(kafka: Kafka): Promise<Producer> {
    const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    producers.push(p);
    return p;
  }

  it('engine SIGKILLed mid-stream (outside kills and crash points): views equal SQLite after every restart, sinks exactly once', async () => {
    const brokers = await sharedBrokers();
    const kafka = kafkaClient(brokers, 'sluice-faults-engine');
    const topic = uniqueName('orders-faults');
    await createTopic(kafka, topic, 3);
    const sinks = sinkSpecs();
    for (const s of sinks) await createTopic(kafka, s.topic, 1);
    const work = new Workload(await newProducer(kafka), topic, SEED);
    const rnd = mulberry32(SEED ^ 0x5eed);
    const dir = tempDir('sluice-faults-');
    dirs.push(dir);

    await work.send(400);
    let s = await spawnOk(dir);
    await sqlOk(s.base, pipelineSql(brokers, topic, sinks));
    const points = ['before-commit', 'after-commit', 'during-checkpoint'];
    const kills: string[] = [];
    // Each restart after a SIGKILL waits for the dead consumer's group session (30 s) to expire
    // before it reads anything, so every kill costs ~30 s: 4 cycles of 2 kills by default.
    const cycles = Number(process.env.SLUICE_FAULT_CYCLES ?? 4);
    for (let cycle = 0; cycle < cycles; cycle++) {
      // An outside SIGKILL at a random moment while records arrive and are being read.
      work.flow();
      await new Promise((r) => setTimeout(r, 50 + Math.floor(rnd() * 900)));
      await killHard(s);
      kills.push('outside');
      await work.stop();
      await work.send(300);

      // A self-kill at an exact moment: the n-th time the process passes the crash point.
      const point = points[cycle % points.length] as string;
      const n = 1 + Math.floor(rnd() * 3); // small: a crashing server reads only a few hundred records
      work.flow();
      const crashing = await spawn(dir, { SLUICE_CRASH_POINT: `${point}:${n}` });
      if (crashing !== null) {
        let timer: NodeJS.Timeout | undefined;
        const exit = await Promise.race([
          crashing.exited,
          new Promise<null>((r) => (timer = setTimeout(() => r(null), 60_000))),
        ]);
        clearTimeout(timer);
        if (exit === null) await killHard(crashing);
        kills.push(exit === null ? `${point}:${n} (not reached; killed from outside)` : `${point}:${n}`);
        if (exit !== null) assert.equal(exit.signal, 'SIGKILL', crashing.output());
      } else kills.push(`${point}:${n} (during recovery)`);
      await work.stop();

      s = await spawnOk(dir);
      log(`cycle ${cycle}: restarted after ${kills.slice(-2).join(', ')}; ${work.sent} records sent`);
      await caughtUp(s.base, kafka, topic);
      log(`cycle ${cycle}: caught up`);
      await assertViewsMatch(s.base, work.oracle, `cycle ${cycle}, after kills ${kills.join(', ')}`);
    }
    log(`engine kills (${kills.length}): ${kills.join(', ')}; records ${work.sent}`);
    assert.ok(kills.length >= 2 * cycles);
    await work.send(200);
    await caughtUp(s.base, kafka, topic);
    await assertViewsMatch(s.base, work.oracle, 'after the last restart');
    await assertSinks(s.base, kafka, sinks, `after ${kills.length} engine kills`);
    await stopGracefully(s);
  });

  it('broker SIGKILLed and restarted on its data dir: source and sinks retry, then recover exactly once', async () => {
    privateBroker = await startPrivateBroker();
    const broker = privateBroker;
    const kafka = kafkaClient(broker.brokers, 'sluice-faults-broker', { retry: { retries: 30 } });
    const topic = uniqueName('orders-bkill');
    await createTopic(kafka, topic, 3);
    const sinks = sinkSpecs();
    const manualTopic = uniqueName('manual-out');
    for (const t of [...sinks.map((x) => x.topic), manualTopic]) await createTopic(kafka, t, 1);
    const work = new Workload(await newProducer(kafka), topic, SEED + 1);
    const dir = tempDir('sluice-faults-');
    dirs.push(dir);
    const s = await spawnOk(dir);
    await work.send(300);
    await sqlOk(
      s.base,
      `${pipelineSql(broker.brokers, topic, sinks)}
       CREATE TABLE manual (id int, seller int NOT NULL, PRIMARY KEY (id));
       CREATE MATERIALIZED VIEW manual_totals AS SELECT seller, COUNT(*) AS n FROM manual GROUP BY seller;
       CREATE SINK manual_out FROM manual_totals INTO KAFKA (brokers '${broker.brokers}', topic '${manualTopic}', format 'upsert');`,
    );
    const allSinks = [
      ...sinks,
      { name: 'manual_out', view: 'manual_totals', topic: manualTopic, format: 'upsert' as const },
    ];
    await caughtUp(s.base, kafka, topic);
    await assertViewsMatch(s.base, work.oracle, 'before the broker kill');

    // A backlog in flight, then the broker dies.
    await work.send(1500);
    await broker.kill();
    // A table write makes the sinks' next transaction meet the dead broker.
    let manualId = 0;
    const insertManual = async (): Promise<void> => {
      const rows = Array.from({ length: 5 }, () => ({ id: manualId, seller: manualId++ % 4 }));
      const r = await request(s.base, 'POST', '/v1/tables/manual/rows?wait=true', rows);
      assert.equal(r.status, 200, r.text);
    };
    await insertManual();
    const source = await waitFor(
      async () => {
        const st = await getJson(s.base, '/v1/sources/orders');
        return st.state === 'retrying' ? st : undefined;
      },
      { timeoutMs: 90_000, what: 'source orders to be retrying' },
    );
    const sinkSt = await waitFor(
      async () => {
        const st = await getJson(s.base, '/v1/sinks/manual_out');
        return st.state === 'retrying' ? st : undefined;
      },
      { timeoutMs: 90_000, what: 'sink manual_out to be retrying' },
    );
    log(
      `broker killed: source ${JSON.stringify(source.error)}; sink manual_out ${JSON.stringify(sinkSt.error)}`,
    );
    for (const st of [source, sinkSt]) {
      const error = st.error as { message?: string } | null;
      assert.ok(
        error !== null && typeof error.message === 'string' && error.message.length > 0,
        JSON.stringify(st),
      );
      assert.match(error.message, /retrying in \d+ ms/);
    }
    const metrics = (await request(s.base, 'GET', '/metrics')).text;
    assert.equal(metricValue(metrics, 'sluice_source_state', 'source="orders",state="retrying"'), 1);
    assert.equal(metricValue(metrics, 'sluice_sink_state', 'sink="manual_out",state="retrying"'), 1);
    const others = await Promise.all(sinks.map((x) => getJson(s.base, `/v1/sinks/${x.name}`)));
    log(
      `other sinks while the broker is down: ${others.map((o) => `${String(o.name)}=${String(o.state)}`).join(', ')}`,
    );

    await broker.restart();
    log('broker restarted');
    await waitFor(
      async () => {
        const src = await getJson(s.base, '/v1/sources/orders');
        const sk = await Promise.all(allSinks.map((x) => getJson(s.base, `/v1/sinks/${x.name}`)));
        return src.state === 'running' && sk.every((x) => x.state === 'running');
      },
      { timeoutMs: 120_000, what: 'source and sinks running again after the broker restart' },
    );
    log('source and sinks running again after the broker restart');
    await work.send(300);
    await insertManual();
    await caughtUp(s.base, kafka, topic);
    log('caught up after the broker restart');
    await assertViewsMatch(s.base, work.oracle, 'after the broker kill and restart');
    await assertSinks(s.base, kafka, allSinks, 'after the broker kill and restart');
    const m2 = (await request(s.base, 'GET', '/metrics')).text;
    assert.equal(metricValue(m2, 'sluice_source_state', 'source="orders",state="running"'), 1);

    // ---- broker SIGSTOP (a stall longer than the client's request and retry budget), then SIGCONT.
    await work.send(1500);
    broker.pause();
    await insertManual();
    const pauseMs = Number(process.env.SLUICE_KAFKA_PAUSE_MS ?? 15_000);
    const seen = new Set<string>();
    const pausedUntil = Date.now() + pauseMs;
    while (Date.now() < pausedUntil) {
      const src = await getJson(s.base, '/v1/sources/orders');
      const sk = await getJson(s.base, '/v1/sinks/manual_out');
      seen.add(
        `source=${String(src.state)}${src.error ? ` (${(src.error as { message: string }).message})` : ''}`,
      );
      seen.add(
        `manual_out=${String(sk.state)}${sk.error ? ` (${(sk.error as { message: string }).message})` : ''}`,
      );
      await new Promise((r) => setTimeout(r, 250));
    }
    broker.resume();
    log(`broker paused ${pauseMs} ms; states seen: ${[...seen].join(' | ')}`);
    // A hung broker shows on the source: no fetch answered for 10 s makes it `stalled` (or the
    // client's own timeout makes it `retrying`), never a silent `running`.
    if (pauseMs >= 13_000) {
      assert.ok(
        [...seen].some((x) => /^source=(stalled|retrying)/.test(x)),
        `the source showed the stall (seen: ${[...seen].join(' | ')})`,
      );
    }
    await waitFor(
      async () => {
        const src = await getJson(s.base, '/v1/sources/orders');
        const sk = await Promise.all(allSinks.map((x) => getJson(s.base, `/v1/sinks/${x.name}`)));
        return src.state === 'running' && sk.every((x) => x.state === 'running');
      },
      { timeoutMs: 120_000, what: 'source and sinks running again after SIGCONT' },
    );
    log('source and sinks running again after SIGCONT');
    await work.send(300);
    await insertManual();
    await caughtUp(s.base, kafka, topic);
    log('caught up after SIGCONT');
    await assertViewsMatch(s.base, work.oracle, 'after the broker SIGSTOP/SIGCONT');
    await assertSinks(s.base, kafka, allSinks, 'after the broker SIGSTOP/SIGCONT');
    await stopGracefully(s);
  });

  it('retention deleted the offsets the source needs: the source fails naming partition and offset, views keep their state', async () => {
    const brokers = await sharedBrokers();
    const kafka = kafkaClient(brokers, 'sluice-faults-retention');
    const topic = uniqueName('orders-retention');
    await createTopic(kafka, topic, 3);
    const work = new Workload(await newProducer(kafka), topic, SEED + 2);
    const dir = tempDir('sluice-faults-');
    dirs.push(dir);
    await work.send(300);
    let s = await spawnOk(dir);
    await sqlOk(s.base, pipelineSql(brokers, topic, []));
    await caughtUp(s.base, kafka, topic);
    await assertViewsMatch(s.base, work.oracle, 'before the records are deleted');
    const before = await viewsAsRest(s.base);
    const stored = (
      (await getJson(s.base, '/v1/sources/orders')).partitions as { partition: number; next: number }[]
    ).find((p) => p.partition === 1)?.next;
    assert.ok(stored !== undefined);
    await stopGracefully(s);

    // While the server is down: more records, then the log start of partition 1 moves past them all.
    await work.send(300);
    const ends = await topicEnds(kafka, topic);
    const end1 = ends.get(1) ?? 0;
    assert.ok(end1 > stored, 'partition 1 received records while the server was down');
    await admin(kafka, async (a) => {
      await a.fetchTopicMetadata({ topics: [topic] });
      await a.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: String(end1) }] });
    });

    s = await spawnOk(dir);
    const failed = await waitFor(
      async () => {
        const st = await getJson(s.base, '/v1/sources/orders');
        return st.state === 'failed' ? st : undefined;
      },
      { timeoutMs: 60_000, what: 'the source to fail on the deleted offsets' },
    );
    const error = failed.error as { message: string; partition: number; offset: number; topic: string };
    log(`retention: source error ${JSON.stringify(error)}`);
    assert.equal(error.topic, topic);
    assert.equal(error.partition, 1);
    assert.equal(error.offset, stored);
    assert.match(error.message, new RegExp(`offset ${stored} of partition 1`));
    assert.match(error.message, new RegExp(`log starts at ${end1}`));
    const part1 = (failed.partitions as { partition: number; next: number }[]).find((p) => p.partition === 1);
    assert.equal(part1?.next, stored, 'no silent reset of the position');
    assert.deepEqual(await viewsAsRest(s.base), before, 'the views keep their state');
    const metrics = (await request(s.base, 'GET', '/metrics')).text;
    assert.equal(metricValue(metrics, 'sluice_source_state', 'source="orders",state="failed"'), 1);
    await stopGracefully(s);
  });
});
