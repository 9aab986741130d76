// A topic deleted and recreated under a running source (real broker): the new topic's log ends
// below the position the source read the old one to, and reading on from that position would skip
// the new topic's first records without a word. The source must say so (retrying, its error naming
// partition and offsets) and read nothing from the new topic, also after a restart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir } from '../server/helpers.ts';

interface Status {
  state: string;
  error?: { message?: string } | null;
  partitions: { partition: number; next: number }[];
}

async function sourceStatus(base: string, name: string): Promise<Status> {
  const r = await request(base, 'GET', `/v1/sources/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.body as unknown as Status;
}

async function ids(base: string): Promise<unknown[]> {
  const r = await sqlOk(base, 'SELECT id FROM recreated ORDER BY id');
  return ((r.body.results as { rows: { id: unknown }[] }[])[0]?.rows ?? []).map((row) => row.id);
}

describe('Kafka topic recreated under a source (real broker)', kafkaSuite('Kafka topic recreated'), () => {
  const fx = kafkaSuiteFixture('sluice-topic-recreated-test');

  it('a position past the new log end is an error the source shows, never a silent skip', async () => {
    const topic = uniqueName('recreated');
    await createTopic(fx.kafka, topic, 1);
    await fx.producer.send({
      topic,
      messages: [1, 2, 3, 4, 5].map((id) => ({ value: JSON.stringify({ id }) })),
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await startServer({ dataDir: dir });
    await sqlOk(
      s.base,
      `CREATE SOURCE recreated (id bigint) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}')`,
    );
    await waitFor(async () => (await sourceStatus(s.base, 'recreated')).partitions[0]?.next === 5, {
      what: 'the source to read the first topic',
    });

    await admin(fx.kafka, (a) => a.deleteTopics({ topics: [topic] }));
    await waitFor(async () => !(await admin(fx.kafka, (a) => a.listTopics())).includes(topic), {
      what: 'the topic to be deleted',
    });
    // The source notices the topic is gone (and retries) before it comes back: a topic recreated
    // faster than that is not told apart yet (its fetch's offset-out-of-range is reset by the client).
    await waitFor(async () => (await sourceStatus(s.base, 'recreated')).state === 'retrying', {
      what: 'the source to notice the deleted topic',
    });
    await createTopic(fx.kafka, topic, 1);
    await fx.producer.send({ topic, messages: [6, 7].map((id) => ({ value: JSON.stringify({ id }) })) });

    const past = /offset 5 of partition 0 is past the end of topic .* \(the log ends at 2\)/;
    const shown = await waitFor(
      async () => {
        const st = await sourceStatus(s.base, 'recreated');
        return past.test(st.error?.message ?? '') ? st : undefined;
      },
      { what: 'the source to report its position past the log end' },
    );
    assert.equal(shown.state, 'retrying');
    assert.deepEqual(await ids(s.base), [1, 2, 3, 4, 5]);

    // The same after a restart: the journal's position stays, nothing of the new topic is read.
    await s.close();
    s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await waitFor(async () => past.test((await sourceStatus(s.base, 'recreated')).error?.message ?? ''), {
      what: 'the restarted source to report its position past the log end',
    });
    assert.deepEqual(await ids(s.base), [1, 2, 3, 4, 5]);
  });
});
