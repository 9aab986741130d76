// Kafka sources and sinks against a real broker: views over a multi-partition topic equal SQLite over
// the same records (json, upsert with tombstones, debezium with updates and deletes); aborted
// producer transactions stay invisible; poison records stop the source or are recorded, with their
// offsets; a restart resumes at the stored positions; sinks write every epoch exactly once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { canonicalRows } from '../support/sqlite-oracle.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import { assertEpochsOnce, createTopic, readTopic, topicEnds } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir, type TestServer, restView } from '../server/helpers.ts';
import type { ColumnInfo } from '../../src/common/types.ts';

const SEED = Number(process.env.SLUICE_SEED ?? 20261130);
const VIEWS = {
  seller_totals:
    'SELECT seller, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi FROM orders GROUP BY seller',
  buckets: 'SELECT n / 3 AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY n / 3',
  distinct_amounts: 'SELECT seller % 3 AS s, COUNT(DISTINCT amount) AS d FROM orders GROUP BY seller % 3',
} as const;

interface Order {
  id: number;
  seller: number;
  amount: number;
}

/** SQLite holding the records' current rows, with the views' SELECTs (the oracle). */
class Oracle {
  readonly db = new Database(':memory:');
  constructor(keyed: boolean) {
    this.db.exec(
      `CREATE TABLE orders (id INTEGER ${keyed ? 'PRIMARY KEY' : ''}, seller INTEGER NOT NULL, amount INTEGER NOT NULL)`,
    );
    this.db.exec(`CREATE VIEW seller_totals AS ${VIEWS.seller_totals}`);
    this.db.exec(`CREATE VIEW buckets AS ${VIEWS.buckets}`);
    this.db.exec(`CREATE VIEW distinct_amounts AS ${VIEWS.distinct_amounts}`);
  }
  upsert(o: Order): void {
    this.db.prepare('INSERT OR REPLACE INTO orders VALUES (?, ?, ?)').run(o.id, o.seller, o.amount);
  }
  delete(id: number): void {
    this.db.prepare('DELETE FROM orders WHERE id = ?').run(id);
  }
  rows(view: string): Record<string, unknown>[] {
    return this.db.prepare(`SELECT * FROM ${view}`).all() as Record<string, unknown>[];
  }
}

async function assertViewsMatch(base: string, oracle: Oracle, context: string): Promise<void> {
  for (const view of Object.keys(VIEWS)) {
    const { columns, rows } = await restView(base, view);
    assert.deepEqual(
      canonicalRows(columns, rows),
      canonicalRows(columns, oracle.rows(view)),
      `${context}: view ${view} differs from SQLite (seed ${SEED})`,
    );
  }
}

async function sourceStatus(base: string, name: string): Promise<Record<string, unknown>> {
  const r = await request(base, 'GET', `/v1/sources/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** Waits until the source applied everything up to each partition's end offset. */
async function caughtUp(base: string, name: string, ends: Map<number, number>): Promise<void> {
  await waitFor(
    async () => {
      const s = await sourceStatus(base, name);
      if (s.state === 'failed') throw new Error(`source failed: ${JSON.stringify(s.error)}`);
      const parts = s.partitions as { partition: number; next: number }[];
      return [...ends].every(([p, end]) => (parts.find((x) => x.partition === p)?.next ?? -1) >= end);
    },
    { what: `source ${name} caught up with ${JSON.stringify([...ends])}` },
  );
}

const viewsSql = Object.entries(VIEWS)
  .map(([name, select]) => `CREATE MATERIALIZED VIEW ${name} AS ${select};`)
  .join('\n');

describe('Kafka sources and sinks (real broker)', kafkaSuite('Kafka sources and sinks'), () => {
  const fx = kafkaSuiteFixture('sluice-source-test');

  async function server(dataDir: string): Promise<TestServer> {
    const s = await startServer({ dataDir, checkpoint: { intervalMs: 200, epochs: 5 } });
    fx.servers.push(s);
    return s;
  }

  it('upsert: keyed records with tombstones over 3 partitions equal SQLite, also after a restart', async () => {
    const topic = uniqueName('orders-upsert');
    await createTopic(fx.kafka, topic, 3);
    const oracle = new Oracle(true);
    const rnd = mulberry32(SEED);
    const send = async (count: number): Promise<void> => {
      const messages = [];
      for (let i = 0; i < count; i++) {
        const id = Math.floor(rnd() * 150);
        if (rnd() < 0.2) {
          messages.push({ key: JSON.stringify({ id }), value: null });
          oracle.delete(id);
        } else {
          const o = { id, seller: Math.floor(rnd() * 12), amount: Math.floor(rnd() * 40) };
          messages.push({
            key: JSON.stringify({ id }),
            value: JSON.stringify({ seller: o.seller, amount: o.amount }),
          });
          oracle.upsert(o);
        }
      }
      await fx.producer.send({ topic, messages });
    };
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await server(dir);
    await send(300);
    await sqlOk(
      s.base,
      `CREATE SOURCE orders (id int, seller int NOT NULL, amount int NOT NULL, PRIMARY KEY (id))
         FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'upsert', max_batch_rows 37);
       ${viewsSql}`,
    );
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await assertViewsMatch(s.base, oracle, 'after the first 300 records');
    const status = await sourceStatus(s.base, 'orders');
    assert.equal((status.partitions as unknown[]).length, 3);
    // 300 records over at most 150 keys, cut at 37 rows (one row per key and batch): several epochs.
    assert.ok((status.batches as number) >= 150 / 37, `batches ${String(status.batches)}`);

    // Restart: the source resumes at its stored positions (nothing applied twice, nothing lost).
    await s.close();
    await send(200);
    s = await server(dir);
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await assertViewsMatch(s.base, oracle, 'after a restart and 200 more records');
    const metrics = await request(s.base, 'GET', '/metrics');
    assert.match(metrics.text, /sluice_source_state\{source="orders",state="running",tenant="default"\} 1/);
    assert.match(metrics.text, /sluice_source_lag\{source="orders",partition="0",tenant="default"\} 0/);
  });

  it('debezium: c/u/d envelopes become insertions and retractions', async () => {
    const topic = uniqueName('orders-cdc');
    await createTopic(fx.kafka, topic, 2);
    const oracle = new Oracle(true);
    const rnd = mulberry32(SEED + 1);
    const current = new Map<number, Order>();
    const messages = [];
    for (let i = 0; i < 400; i++) {
      const id = Math.floor(rnd() * 80);
      const before = current.get(id) ?? null;
      const key = JSON.stringify({ id });
      if (before !== null && rnd() < 0.25) {
        messages.push({ key, value: JSON.stringify({ before, after: null, op: 'd' }) });
        messages.push({ key, value: null }); // Debezium's tombstone after a delete
        current.delete(id);
        oracle.delete(id);
      } else {
        const after = { id, seller: Math.floor(rnd() * 9), amount: Math.floor(rnd() * 30) };
        messages.push({
          key,
          value: JSON.stringify({ schema: {}, payload: { before, after, op: before === null ? 'c' : 'u' } }),
        });
        current.set(id, after);
        oracle.upsert(after);
      }
    }
    await fx.producer.send({ topic, messages });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await server(dir);
    await sqlOk(
      s.base,
      `CREATE SOURCE orders (id int, seller int NOT NULL, amount int NOT NULL, PRIMARY KEY (id))
         FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'debezium');
       ${viewsSql}`,
    );
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await assertViewsMatch(s.base, oracle, 'debezium');
  });

  it('json: records of aborted producer transactions never reach a view', async () => {
    const topic = uniqueName('orders-txn');
    await createTopic(fx.kafka, topic, 2);
    const oracle = new Oracle(false);
    const txProducer = fx.kafka.producer({
      transactionalId: uniqueName('tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await txProducer.connect();
    try {
      for (let round = 0; round < 6; round++) {
        const tx = await txProducer.transaction();
        const orders = Array.from({ length: 20 }, (_, i) => ({
          id: round * 100 + i,
          seller: i % 5,
          amount: round + i,
        }));
        await tx.send({ topic, messages: orders.map((o) => ({ value: JSON.stringify(o) })) });
        if (round % 2 === 0) {
          await tx.commit();
          for (const o of orders) oracle.upsert(o);
        } else await tx.abort();
      }
    } finally {
      await txProducer.disconnect();
    }
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await server(dir);
    await sqlOk(
      s.base,
      `CREATE SOURCE orders (id int, seller int NOT NULL, amount int NOT NULL) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}');
       ${viewsSql}`,
    );
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await assertViewsMatch(s.base, oracle, 'aborted transactions');
    const { rows } = await restView(s.base, 'seller_totals');
    assert.equal(
      rows.reduce((n, r) => n + Number(r.n), 0),
      60,
      'three committed transactions of 20',
    );
  });

  it("poison records: 'fail' stops the source at the record, 'skip' records each one", async () => {
    const topic = uniqueName('orders-poison');
    await createTopic(fx.kafka, topic, 1);
    const good = (id: number): string => JSON.stringify({ id, seller: id % 4, amount: id });
    await fx.producer.send({
      topic,
      messages: [
        { value: good(1) },
        { value: good(2) },
        { value: '{"id": 3, "seller": ' }, // offset 2: invalid JSON
        { value: good(4) },
        { value: JSON.stringify({ id: 5, seller: 'five', amount: 5 }) }, // offset 4: wrong type
        { value: JSON.stringify({ id: 6, seller: 1, amount: 6, colour: 'red' }) }, // offset 5: unknown column
        { value: good(7) },
      ],
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await server(dir);
    await sqlOk(
      s.base,
      `CREATE SOURCE strict_orders (id int, seller int NOT NULL, amount int NOT NULL) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', on_error 'fail');
       CREATE SOURCE lenient_orders (id int, seller int NOT NULL, amount int NOT NULL) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', on_error 'skip');
       CREATE MATERIALIZED VIEW strict_count AS SELECT COUNT(*) AS n, SUM(id) AS ids FROM strict_orders;
       CREATE MATERIALIZED VIEW lenient_count AS SELECT COUNT(*) AS n, SUM(id) AS ids FROM lenient_orders;`,
    );
    const failed = await waitFor(
      async () => {
        const st = await sourceStatus(s.base, 'strict_orders');
        return st.state === 'failed' ? st : undefined;
      },
      { what: 'strict source to fail' },
    );
    const error = failed.error as {
      partition: number;
      offset: number;
      reason: string;
      topic: string;
      message: string;
    };
    assert.equal(error.topic, topic);
    assert.equal(error.partition, 0);
    assert.equal(error.offset, 2);
    assert.match(error.reason, /not valid JSON/);
    assert.match(error.message, /offset 2 of partition 0/);
    const strict = await restView(s.base, 'strict_count');
    assert.deepEqual(strict.rows, [{ n: 2, ids: 3 }], 'records before the poison one are applied');
    const metrics = await request(s.base, 'GET', '/metrics');
    assert.match(
      metrics.text,
      /sluice_source_state\{source="strict_orders",state="failed",tenant="default"\} 1/,
    );

    await caughtUp(s.base, 'lenient_orders', new Map([[0, 7]]));
    const lenient = await restView(s.base, 'lenient_count');
    assert.deepEqual(lenient.rows, [{ n: 4, ids: 14 }]);
    const skipped = await request(s.base, 'GET', '/v1/sources/lenient_orders/errors');
    const list = skipped.body.errors as { partition: number; offset: number; reason: string; raw: string }[];
    assert.deepEqual(
      list.map((e) => [e.partition, e.offset]),
      [
        [0, 2],
        [0, 4],
        [0, 5],
      ],
    );
    assert.match(list[0]?.reason ?? '', /not valid JSON/);
    assert.equal(list[0]?.raw, '{"id": 3, "seller": ');
    assert.match(list[1]?.reason ?? '', /column "seller"/);
    assert.match(list[2]?.reason ?? '', /unknown column "colour"/);
    const status = await sourceStatus(s.base, 'lenient_orders');
    assert.equal(status.skipped, 3);
    // The same records are rows of the source's errors relation, for SQL and views.
    const relation = await sqlOk(
      s.base,
      'SELECT kafka_partition, kafka_offset, reason, raw FROM lenient_orders_errors ORDER BY kafka_offset',
    );
    const rows = (relation.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
    assert.deepEqual(
      rows.map((r) => [r.kafka_partition, r.kafka_offset]),
      [
        [0, 2],
        [0, 4],
        [0, 5],
      ],
    );
    assert.equal(rows[0]?.raw, '{"id": 3, "seller": ');
    assert.match(String(rows[2]?.reason), /unknown column "colour"/);
  });

  it('sinks: upsert, debezium and changelog topics hold every epoch exactly once, across a restart', async () => {
    const topic = uniqueName('orders-for-sink');
    await createTopic(fx.kafka, topic, 2);
    const oracle = new Oracle(true);
    const rnd = mulberry32(SEED + 2);
    const send = async (count: number): Promise<void> => {
      const messages = [];
      for (let i = 0; i < count; i++) {
        const id = Math.floor(rnd() * 60);
        if (rnd() < 0.15) {
          messages.push({ key: String(id), value: null });
          oracle.delete(id);
        } else {
          const o = { id, seller: Math.floor(rnd() * 8), amount: Math.floor(rnd() * 20) };
          messages.push({ key: String(id), value: JSON.stringify(o) });
          oracle.upsert(o);
        }
      }
      await fx.producer.send({ topic, messages });
    };
    const sinkTopics = {
      upsert: uniqueName('totals-upsert'),
      debezium: uniqueName('totals-cdc'),
      changelog: uniqueName('totals-log'),
    };
    for (const t of Object.values(sinkTopics)) await createTopic(fx.kafka, t, 1);
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await server(dir);
    await send(150);
    await sqlOk(
      s.base,
      `CREATE SOURCE orders (id int, seller int NOT NULL, amount int NOT NULL, PRIMARY KEY (id))
         FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'upsert', max_batch_rows 25);
       ${viewsSql}
       CREATE SINK totals_upsert FROM seller_totals INTO KAFKA (brokers '${fx.brokers}', topic '${sinkTopics.upsert}', format 'upsert');
       CREATE SINK totals_cdc FROM seller_totals INTO KAFKA (brokers '${fx.brokers}', topic '${sinkTopics.debezium}', format 'debezium');
       CREATE SINK totals_log FROM seller_totals INTO KAFKA (brokers '${fx.brokers}', topic '${sinkTopics.changelog}', format 'changelog');`,
    );
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await s.close();
    await send(150);
    s = await server(dir);
    await caughtUp(s.base, 'orders', await topicEnds(fx.kafka, topic));
    await assertViewsMatch(s.base, oracle, 'sink run');
    const epoch = (await request(s.base, 'GET', '/v1/views/seller_totals')).body.epoch as number;
    for (const name of ['totals_upsert', 'totals_cdc', 'totals_log']) {
      await waitFor(
        async () => {
          const st = (await request(s.base, 'GET', `/v1/sinks/${name}`)).body;
          if (st.state === 'failed') throw new Error(`sink failed: ${JSON.stringify(st.error)}`);
          return (st.epoch as number | null) !== null && (st.epoch as number) >= epoch - 0 ? true : undefined;
        },
        { what: `sink ${name} to reach epoch ${epoch}` },
      ).catch(async (e: unknown) => {
        // A view that did not change in the last epochs has nothing more to write: lag 0 is enough.
        const st = (await request(s.base, 'GET', `/v1/sinks/${name}`)).body;
        if (st.lagEpochs !== 0) throw e;
      });
    }
    const expected = canonicalRows(
      [
        { name: 'seller', type: 'integer' },
        { name: 'n', type: 'bigint' },
        { name: 'total', type: 'bigint' },
        { name: 'lo', type: 'integer' },
        { name: 'hi', type: 'integer' },
      ] as ColumnInfo[],
      oracle.rows('seller_totals'),
    );
    const columns = (await restView(s.base, 'seller_totals')).columns;
    const read = await readTopic(fx.kafka, sinkTopics.upsert);
    const upsertFold = new Map<string, Record<string, unknown>>();
    for (const m of read) {
      if (m.value === null) upsertFold.delete(m.key ?? '');
      else upsertFold.set(m.key ?? '', JSON.parse(m.value) as Record<string, unknown>);
    }
    assert.deepEqual(
      canonicalRows(columns, [...upsertFold.values()]),
      expected,
      'upsert topic folds to the view',
    );
    assertEpochsOnce(read, 'upsert', SEED);

    const cdc = await readTopic(fx.kafka, sinkTopics.debezium);
    const cdcFold = new Map<string, Record<string, unknown>>();
    for (const m of cdc) {
      const e = JSON.parse(m.value ?? 'null') as {
        before: unknown;
        after: Record<string, unknown> | null;
        op: string;
      };
      if (e.op === 'd') cdcFold.delete(m.key ?? '');
      else cdcFold.set(m.key ?? '', e.after as Record<string, unknown>);
    }
    assert.deepEqual(
      canonicalRows(columns, [...cdcFold.values()]),
      expected,
      'debezium topic folds to the view',
    );
    assertEpochsOnce(cdc, 'debezium', SEED);

    const log = await readTopic(fx.kafka, sinkTopics.changelog);
    const logFold = new Map<string, Record<string, unknown>>();
    for (const m of log) {
      const c = JSON.parse(m.value ?? 'null') as { op: string; row: Record<string, unknown> };
      if (c.op === '-D' || c.op === '-U') logFold.delete(JSON.stringify(c.row.seller));
      if (c.op === '+I' || c.op === '+U') logFold.set(JSON.stringify(c.row.seller), c.row);
    }
    assert.deepEqual(
      canonicalRows(columns, [...logFold.values()]),
      expected,
      'changelog topic folds to the view',
    );
  });
});
