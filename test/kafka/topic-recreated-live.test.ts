// A topic deleted and recreated at once while a source keeps fetching it (real broker). The client
// reset its fetch position on the new log by itself and the source read on, `running` with `next 5`
// over a log that ended at 2: the new topic's first records were never read, without a word. A fetch
// whose log end is below what the source already read now sends it through a retry, which checks
// its positions against the log and shows why it reads nothing (as when the source was away).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir } from '../server/helpers.ts';

interface Status {
  state: string;
  error?: { message?: string } | null;
  partitions: { partition: number; next: number; high: number | null }[];
}

async function sourceStatus(base: string): Promise<Status> {
  const r = await request(base, 'GET', '/v1/sources/live');
  assert.equal(r.status, 200, r.text);
  return r.body as unknown as Status;
}

async function ids(base: string): Promise<unknown[]> {
  const r = await sqlOk(base, 'SELECT id FROM live ORDER BY id');
  return ((r.body.results as { rows: { id: unknown }[] }[])[0]?.rows ?? []).map((row) => row.id);
}

describe(
  'Kafka topic recreated while a source reads it (real broker)',
  kafkaSuite('Kafka topic recreated live'),
  () => {
    const fx = kafkaSuiteFixture('sluice-topic-recreated-live-test');

    it('a fetch of a log that ends below the position read makes the source say so, never read on', async () => {
      const topic = uniqueName('live');
      await createTopic(fx.kafka, topic, 1);
      const values = (list: number[]) => list.map((id) => ({ value: JSON.stringify({ id }) }));
      await fx.producer.send({ topic, messages: values([1, 2, 3, 4, 5]) });
      const dir = tempDir('sluice-kafka-');
      fx.dirs.push(dir);
      const s = await startServer({ dataDir: dir });
      fx.servers.push(s);
      await sqlOk(
        s.base,
        `CREATE SOURCE live (id bigint) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}')`,
      );
      await waitFor(async () => (await sourceStatus(s.base)).partitions[0]?.next === 5, {
        what: 'the first topic',
      });

      // Deleted and created again at once, with no wait for the source to notice the deletion.
      await admin(fx.kafka, async (a) => {
        await a.deleteTopics({ topics: [topic] });
        await waitFor(
          async () => {
            try {
              return await a.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
            } catch {
              return false; // still being deleted
            }
          },
          { what: 'the topic to be created again' },
        );
      });
      const producer = fx.kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: values([6, 7]) });
      await producer.disconnect();

      const past = /offset 5 of partition 0 is past the end of topic .* \(the log ends at 2\)/;
      const shown = await waitFor(
        async () => {
          const st = await sourceStatus(s.base);
          return past.test(st.error?.message ?? '') ? st : undefined;
        },
        { what: 'the source to report its position past the log end', timeoutMs: 30_000 },
      );
      assert.equal(shown.state, 'retrying');
      assert.deepEqual(await ids(s.base), [1, 2, 3, 4, 5]);
    });
  },
);
