// A source's fetches are bounded per partition (kafka-client.ts, `FETCH_BYTES_PER_PARTITION`): a
// backlog arrives in chunks the source decodes while their bytes are fresh, not 1 MiB at a time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kafka, Producer } from 'kafkajs';
import { createTopic } from '../support/kafka-topics.ts';
import { connectProducer, kafkaSuite, uniqueName, waitFor } from '../support/kafka.ts';
import { FETCH_BYTES_PER_PARTITION, valueLength } from '../../src/source/kafka/kafka-client.ts';
import { KafkajsReader } from '../../src/source/kafka/kafkajs-client.ts';

describe('Kafka source fetch size (real broker)', kafkaSuite('Kafka fetch size'), () => {
  let brokers = '';
  let kafka: Kafka;
  let producer: Producer;

  before(async () => {
    ({ brokers, kafka, producer } = await connectProducer('sluice-fetch-size-test'));
  });
  after(async () => {
    await producer?.disconnect();
  });

  it('hands a 1.6 MB backlog of one partition over in chunks of at most the per-partition bound', async () => {
    const topic = uniqueName('fetch-size-topic');
    await createTopic(kafka, topic, 1);
    // 32 record batches of 500 records of ≈ 100 bytes: ≈ 50 KB a batch, ≈ 1.6 MB in all.
    const pad = 'x'.repeat(60);
    let total = 0;
    for (let b = 0; b < 32; b++) {
      const messages = Array.from({ length: 500 }, (_, i) => ({
        value: JSON.stringify({ order_id: b * 500 + i, seller_id: i, pad }),
      }));
      await producer.send({ topic, acks: -1, messages });
      total += messages.length;
    }
    const reader = new KafkajsReader({
      brokers: brokers.split(','),
      topic,
      groupId: uniqueName('fetch-size-group'),
      clientId: uniqueName('fetch-size-reader'),
    });
    const chunkBytes: number[] = [];
    let seen = 0;
    try {
      await reader.start(
        new Map(),
        async (_p, records) => {
          let bytes = 0;
          for (const r of records) bytes += valueLength(r);
          chunkBytes.push(bytes);
          seen += records.length;
        },
        () => undefined,
      );
      await waitFor(() => seen >= total, { what: 'the reader got every record' });
    } finally {
      await reader.close();
    }
    assert.equal(seen, total);
    const largest = Math.max(...chunkBytes);
    // kafkajs's default (1 MiB a partition) handed this backlog over in two chunks.
    assert.ok(chunkBytes.length >= 6, `chunks: ${chunkBytes.join(', ')}`);
    assert.ok(
      largest <= FETCH_BYTES_PER_PARTITION,
      `largest chunk ${largest} bytes: ${chunkBytes.join(', ')}`,
    );
  });

  it('still reads a record larger than the bound (the broker hands over at least one whole batch)', async () => {
    const topic = uniqueName('fetch-size-large');
    await createTopic(kafka, topic, 1);
    const large = JSON.stringify({ order_id: 1, pad: 'y'.repeat(FETCH_BYTES_PER_PARTITION + 100_000) });
    await producer.send({
      topic,
      acks: -1,
      messages: [{ value: '{"order_id":0}' }, { value: large }, { value: '{"order_id":2}' }],
    });
    const reader = new KafkajsReader({
      brokers: brokers.split(','),
      topic,
      groupId: uniqueName('fetch-size-group'),
      clientId: uniqueName('fetch-size-reader'),
    });
    const sizes: number[] = [];
    try {
      await reader.start(
        new Map(),
        async (_p, records) => {
          for (const r of records) sizes.push(valueLength(r));
        },
        () => undefined,
      );
      await waitFor(() => sizes.length >= 3, { what: 'the reader got all three records' });
    } finally {
      await reader.close();
    }
    assert.deepEqual(sizes, [14, Buffer.byteLength(large), 14]);
  });
});
