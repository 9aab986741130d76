// Smoke test of the real-Kafka test infrastructure through kafkajs (the engine's client): topics,
// JSON produce/consume, transactions under read-committed, a SIGKILLed broker's durability and a
// SIGSTOPped broker's recovery.
// Every wait is on a condition with a generous timeout; nothing asserts on elapsed time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import {
  kafkaClient,
  kafkaSuite,
  sharedBrokers,
  startPrivateBroker,
  uniqueName,
  waitFor,
} from '../support/kafka.ts';
import type { Broker } from '../support/kafka.ts';

/** The state letter of a Linux process (`T` = stopped by a signal), from /proc/<pid>/stat. */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

interface Seen {
  partition: number;
  offset: string;
  value: unknown;
}

/** Consumes `topic` from the beginning into `seen` until `stop()`; read-committed unless told otherwise. */
async function consumeAll(
  kafka: Kafka,
  topic: string,
  { readUncommitted = false }: { readUncommitted?: boolean } = {},
): Promise<{ seen: Seen[]; consumer: Consumer }> {
  const consumer = kafka.consumer({ groupId: uniqueName('g'), readUncommitted });
  const seen: Seen[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }: EachBatchPayload) => {
      for (const m of batch.messages) {
        seen.push({
          partition: batch.partition,
          offset: m.offset,
          value: JSON.parse(m.value?.toString() ?? 'null'),
        });
      }
    },
  });
  return { seen, consumer };
}

describe('real Kafka broker through kafkajs', kafkaSuite('test/kafka/broker.test.ts'), () => {
  let kafka: Kafka;
  const consumers: Consumer[] = [];

  before(async () => {
    kafka = kafkaClient(await sharedBrokers(), 'broker-smoke');
  });

  after(async () => {
    await Promise.all(consumers.map((c) => c.disconnect()));
  });

  it('creates a 3-partition topic and round-trips JSON messages by key', async () => {
    const topic = uniqueName('orders');
    const admin = kafka.admin();
    await admin.connect();
    assert.equal(
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true }),
      true,
    );
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(meta.topics[0]?.partitions.length, 3);
    await admin.disconnect();

    const orders = Array.from({ length: 300 }, (_, i) => ({
      order_id: i,
      seller_id: i % 17,
      amount: i * 1.5,
    }));
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: orders.map((o) => ({ key: String(o.seller_id), value: JSON.stringify(o) })),
    });
    await producer.disconnect();

    const { seen, consumer } = await consumeAll(kafka, topic);
    consumers.push(consumer);
    await waitFor(() => seen.length >= orders.length, { what: `${orders.length} messages on ${topic}` });
    assert.deepEqual(
      seen
        .map((s) => s.value)
        .sort((a, b) => (a as { order_id: number }).order_id - (b as { order_id: number }).order_id),
      orders,
    );
    // Keyed messages land in one partition per key, in order.
    const partitionsBySeller = new Map<number, Set<number>>();
    for (const s of seen) {
      const seller = (s.value as { seller_id: number }).seller_id;
      partitionsBySeller.set(seller, (partitionsBySeller.get(seller) ?? new Set()).add(s.partition));
    }
    for (const [seller, parts] of partitionsBySeller)
      assert.equal(parts.size, 1, `seller ${seller} spans partitions`);
    assert.ok(new Set(seen.map((s) => s.partition)).size > 1, 'all messages went to one partition');
  });

  it('a read-committed consumer sees a committed transaction and never an aborted one', async () => {
    const topic = uniqueName('tx');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();

    const producer = kafka.producer({
      transactionalId: uniqueName('txid'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const aborted = await producer.transaction();
    await aborted.send({
      topic,
      messages: [1, 2, 3].map((n) => ({ value: JSON.stringify({ tx: 'aborted', n }) })),
    });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({
      topic,
      messages: [1, 2, 3].map((n) => ({ value: JSON.stringify({ tx: 'committed', n }) })),
    });
    await committed.commit();
    await producer.disconnect();

    // The committed records follow the aborted ones in the single partition: once a consumer has
    // all three, it has read past the aborted ones.
    const rc = await consumeAll(kafka, topic);
    consumers.push(rc.consumer);
    await waitFor(() => rc.seen.filter((s) => (s.value as { tx: string }).tx === 'committed').length === 3, {
      what: 'the committed transaction (read-committed)',
    });
    assert.deepEqual(
      rc.seen.map((s) => s.value),
      [1, 2, 3].map((n) => ({ tx: 'committed', n })),
    );

    // Sensitivity: the aborted records are in the log, so read-uncommitted must see them.
    const ru = await consumeAll(kafka, topic, { readUncommitted: true });
    consumers.push(ru.consumer);
    await waitFor(() => ru.seen.length >= 6, { what: 'all six records (read-uncommitted)' });
    assert.deepEqual(
      ru.seen.map((s) => (s.value as { tx: string }).tx),
      ['aborted', 'aborted', 'aborted', 'committed', 'committed', 'committed'],
    );
  });

  describe('a private broker', () => {
    let broker: Broker;

    before(async () => {
      broker = await startPrivateBroker();
    });

    after(async () => {
      await broker?.stop();
    });

    it('keeps acknowledged messages when SIGKILLed and restarted on the same data dir', async () => {
      const topic = uniqueName('durable');
      const client = kafkaClient(broker.brokers, 'kill-restart');
      const admin = client.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
      await admin.disconnect();
      const producer = client.producer({
        transactionalId: uniqueName('txid'),
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await producer.connect();
      const tx = await producer.transaction();
      await tx.send({
        topic,
        messages: Array.from({ length: 50 }, (_, n) => ({ value: JSON.stringify({ n }) })),
      });
      await tx.commit();
      await producer.disconnect();

      const pid = broker.pid;
      await broker.kill();
      assert.equal(broker.running, false);
      assert.throws(() => process.kill(pid ?? -1, 0), 'the JVM is gone after kill()');
      await broker.restart();
      assert.notEqual(broker.pid, pid);

      const after = kafkaClient(broker.brokers, 'kill-restart-after');
      const { seen, consumer } = await consumeAll(after, topic);
      try {
        await waitFor(() => seen.length >= 50, { what: '50 committed messages after the restart' });
        assert.deepEqual(
          seen.map((s) => (s.value as { n: number }).n).sort((a, b) => a - b),
          Array.from({ length: 50 }, (_, n) => n),
        );
      } finally {
        await consumer.disconnect();
      }
    });

    it('stalls under SIGSTOP and answers again after SIGCONT', async () => {
      const topic = uniqueName('stall');
      const client = kafkaClient(broker.brokers, 'stall', { retry: { retries: 0 }, requestTimeout: 1000 });
      const admin = client.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const pid = broker.pid ?? -1;
      broker.pause();
      try {
        // Signal delivery is asynchronous: wait until the kernel shows the JVM stopped.
        await waitFor(() => processState(pid) === 'T', { what: `pid ${pid} stopped (state T)` });
        // A stopped process can never answer, so this rejects whatever the machine's speed.
        await assert.rejects(admin.fetchTopicMetadata({ topics: [topic] }));
      } finally {
        broker.resume();
      }
      await waitFor(() => processState(pid) !== 'T', { what: `pid ${pid} running again` });
      await admin.disconnect();
      const again = kafkaClient(broker.brokers, 'stall-after').admin();
      await again.connect();
      const meta = await again.fetchTopicMetadata({ topics: [topic] });
      assert.equal(meta.topics[0]?.partitions.length, 1);
      await again.disconnect();
    });
  });
});
