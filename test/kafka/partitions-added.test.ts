// Partitions added to a topic under a running source (real broker). The client found them only at
// its metadata refresh, 5 minutes later (their records waited, unread and absent from the status),
// and the first batch holding their records saved no position for them: a restart read and applied
// those records again (ids 10 and 11 twice, after a clean restart). Now they are found within
// METADATA_MAX_AGE_MS and their positions are saved with the first batch that holds them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir } from '../server/helpers.ts';

interface Status {
  state: string;
  partitions: { partition: number; next: number }[];
}

async function sourceStatus(base: string): Promise<Status> {
  const r = await request(base, 'GET', '/v1/sources/grown');
  assert.equal(r.status, 200, r.text);
  return r.body as unknown as Status;
}

async function ids(base: string): Promise<unknown[]> {
  const r = await sqlOk(base, 'SELECT id FROM grown ORDER BY id');
  return ((r.body.results as { rows: { id: unknown }[] }[])[0]?.rows ?? []).map((row) => row.id);
}

describe('Kafka partitions added under a source (real broker)', kafkaSuite('Kafka partitions added'), () => {
  const fx = kafkaSuiteFixture('sluice-partitions-added-test');

  it("a new partition's records are read soon, once each, also after a restart", async () => {
    const topic = uniqueName('grown');
    await createTopic(fx.kafka, topic, 1);
    const send = (partition: number, values: number[]) =>
      fx.producer.send({
        topic,
        messages: values.map((id) => ({ partition, value: JSON.stringify({ id }) })),
      });
    await send(0, [1, 2, 3]);
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await startServer({ dataDir: dir });
    await sqlOk(
      s.base,
      `CREATE SOURCE grown (id bigint) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}')`,
    );
    await waitFor(async () => (await sourceStatus(s.base)).partitions[0]?.next === 3, {
      what: 'the first records',
    });

    await admin(fx.kafka, (a) => a.createPartitions({ topicPartitions: [{ topic, count: 2 }] }));
    // A producer of its own: the suite's one does not know partition 1 yet (kafkajs drops a message
    // for a partition missing from its metadata without an error).
    const producer = fx.kafka.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: [10, 11].map((id) => ({ partition: 1, value: JSON.stringify({ id }) })),
    });
    await producer.disconnect();
    const ends = await admin(fx.kafka, (a) => a.fetchTopicOffsets(topic));
    assert.deepEqual(ends.map((e) => [e.partition, e.high]).sort(), [
      [0, '3'],
      [1, '2'],
    ]);

    // Bounded at 60 s, six times the metadata refresh (it was 5 minutes).
    await waitFor(async () => (await ids(s.base)).length === 5, {
      what: "the new partition's records",
      timeoutMs: 60_000,
    });
    assert.deepEqual(await ids(s.base), [1, 2, 3, 10, 11]);

    // The batch that brought them saved their position: a restart reads nothing again.
    await s.close();
    s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await send(0, [4]);
    await waitFor(async () => (await sourceStatus(s.base)).partitions[0]?.next === 4, {
      what: 'the record after the restart',
    });
    assert.deepEqual(
      (await sourceStatus(s.base)).partitions.map((p) => [p.partition, p.next]),
      [
        [0, 4],
        [1, 2],
      ],
    );
    assert.deepEqual(await ids(s.base), [1, 2, 3, 4, 10, 11]);
  });
});
