// kafkajs behind the narrow interfaces of kafka-client.ts: a read-committed group consumer whose
// positions Sluice sets itself (seek at start, duplicates below them dropped), and a transactional
// producer that commits an epoch's messages together with the sink's progress (sendOffsets).
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import type {
  KafkaOutMessage,
  KafkaReader,
  KafkaReaderConfig,
  KafkaRecord,
  KafkaTransactionalWriter,
  KafkaWriterConfig,
  PartitionWatermarks,
  RecordHandler,
} from './kafka-client.ts';

function client(brokers: readonly string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    // Fail fast and let the connector's own backoff (with a visible status) do the retrying.
    retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 },
    connectionTimeout: 3000,
    requestTimeout: 30000,
  });
}

async function topicWatermarks(admin: Admin, topic: string): Promise<PartitionWatermarks[]> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets
    .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
    .sort((a, b) => a.partition - b.partition);
}

export class KafkajsReader implements KafkaReader {
  private readonly kafka: Kafka;
  private admin: Admin | null = null;
  private consumer: Consumer | null = null;

  constructor(private readonly config: KafkaReaderConfig) {
    this.kafka = client(config.brokers, config.clientId);
  }

  async watermarks(): Promise<PartitionWatermarks[]> {
    if (this.admin === null) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    return topicWatermarks(this.admin, this.config.topic);
  }

  async start(
    from: ReadonlyMap<number, number>,
    onRecords: RecordHandler,
    onFailure: (error: Error) => void,
  ): Promise<void> {
    const topic = this.config.topic;
    const consumer = this.kafka.consumer({
      groupId: this.config.groupId,
      readUncommitted: false,
      sessionTimeout: this.config.sessionTimeoutMs ?? 30000,
      maxWaitTimeInMs: 100,
      retry: { retries: 3, restartOnFailure: async () => false },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) onFailure(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    // Records below the caller's positions (the group's committed offsets may lag them) are
    // dropped here, so each offset is handed over at most once per start.
    const next = new Map(from);
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({ batch, isRunning, isStale }) => {
        if (!isRunning() || isStale()) return;
        const floor = next.get(batch.partition) ?? 0;
        const records: KafkaRecord[] = [];
        for (const m of batch.messages) {
          const offset = Number(m.offset);
          if (offset < floor) continue;
          records.push({ partition: batch.partition, offset, key: m.key ?? null, value: m.value ?? null });
        }
        const covered = Number(batch.lastOffset()) + 1;
        next.set(batch.partition, Math.max(floor, covered));
        await onRecords(batch.partition, records, Number(batch.highWatermark), covered);
      },
    });
    // A fetch holding only aborted records or transaction markers never reaches eachBatch; this event
    // still tells how far it went, so the position can move past them.
    consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
      const p = event.payload;
      const covered = Number(p.lastOffset) + 1;
      if (p.batchSize !== 0 || !Number.isSafeInteger(covered)) return;
      if (covered <= (next.get(p.partition) ?? 0)) return;
      next.set(p.partition, covered);
      void onRecords(p.partition, [], Number(p.highWatermark), covered);
    });
    for (const [partition, offset] of from) consumer.seek({ topic, partition, offset: String(offset) });
  }

  async commit(nextOffsets: ReadonlyMap<number, number>): Promise<void> {
    const consumer = this.consumer;
    if (consumer === null || nextOffsets.size === 0) return;
    await consumer.commitOffsets(
      [...nextOffsets].map(([partition, offset]) => ({
        topic: this.config.topic,
        partition,
        offset: String(offset),
      })),
    );
  }

  async close(): Promise<void> {
    const consumer = this.consumer;
    const admin = this.admin;
    this.consumer = null;
    this.admin = null;
    await Promise.allSettled([consumer?.disconnect(), admin?.disconnect()]);
  }
}

export class KafkajsTransactionalWriter implements KafkaTransactionalWriter {
  private readonly kafka: Kafka;
  private producer: Producer | null = null;
  private admin: Admin | null = null;

  constructor(private readonly config: KafkaWriterConfig) {
    this.kafka = client(config.brokers, config.clientId);
  }

  async connect(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    this.admin = admin;
    const producer = this.kafka.producer({
      transactionalId: this.config.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 60000,
    });
    // Connecting (InitProducerId) fences an older producer with the same id and aborts its open
    // transaction, so nothing it wrote and did not commit ever becomes visible.
    await producer.connect();
    this.producer = producer;
  }

  async committedEpoch(): Promise<number | null> {
    const admin = this.required(this.admin);
    const groups = await admin.fetchOffsets({
      groupId: this.config.progressGroupId,
      topics: [this.config.topic],
    });
    const partition0 = groups[0]?.partitions.find((p) => p.partition === 0);
    if (partition0 === undefined) return null;
    const epoch = Number(partition0.offset);
    return Number.isSafeInteger(epoch) && epoch >= 0 ? epoch : null;
  }

  async writeEpoch(epoch: number, messages: readonly KafkaOutMessage[]): Promise<void> {
    const producer = this.required(this.producer);
    const transaction = await producer.transaction();
    try {
      if (messages.length > 0) {
        await transaction.send({
          topic: this.config.topic,
          messages: messages.map((m) => ({ key: m.key, value: m.value, headers: { ...m.headers } })),
        });
      }
      await transaction.sendOffsets({
        consumerGroupId: this.config.progressGroupId,
        topics: [{ topic: this.config.topic, partitions: [{ partition: 0, offset: String(epoch) }] }],
      });
      await transaction.commit();
    } catch (error) {
      // The outcome may be unknown (kafkajs does not implement KIP-890): abort what can be aborted;
      // the caller recreates the producer, which fences this one, and resumes from committedEpoch().
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    const producer = this.producer;
    const admin = this.admin;
    this.producer = null;
    this.admin = null;
    await Promise.allSettled([producer?.disconnect(), admin?.disconnect()]);
  }

  private required<T>(value: T | null): T {
    if (value === null) throw new Error('the Kafka writer is not connected');
    return value;
  }
}
