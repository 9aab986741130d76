// A source's batch is held in memory until it is handed over, and max_batch_rows and max_batch_ms
// bounded it by rows and time only: a long window over a backlog of large records gathered all of
// it (10,000 records of 1 MiB are within the default row bound) into one batch. A batch is now
// handed over at MAX_BATCH_BYTES of keys and values too (real broker; counts batches, not time).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir } from '../server/helpers.ts';
import { MAX_BATCH_BYTES } from '../../src/source/kafka/kafka-source.ts';

interface Status {
  state: string;
  batches: number;
  partitions: { partition: number; next: number }[];
}

describe('Kafka source batch bytes (real broker)', kafkaSuite('Kafka batch bytes'), () => {
  const fx = kafkaSuiteFixture('sluice-batch-bytes-test');

  it('a backlog of large records under a long max_batch_ms is cut into batches of bounded bytes', async () => {
    const topic = uniqueName('wide');
    await createTopic(fx.kafka, topic, 1);
    const valueBytes = 1_000_000;
    const records = Math.ceil((1.5 * MAX_BATCH_BYTES) / valueBytes);
    const pad = 'x'.repeat(valueBytes - 40);
    // One record a request: the broker takes a record batch of at most 1 MiB by default.
    for (let id = 0; id < records; id++) {
      await fx.producer.send({ topic, messages: [{ value: JSON.stringify({ id, s: pad }) }] });
    }
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await sqlOk(
      s.base,
      `CREATE SOURCE wide (id bigint, s text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', max_batch_ms 600000)`,
    );
    const done = await waitFor(
      async () => {
        const st = (await request(s.base, 'GET', '/v1/sources/wide')).body as unknown as Status;
        return st.partitions[0]?.next === records ? st : undefined;
      },
      { what: 'the backlog to be read' },
    );
    assert.equal(done.state, 'running');
    const total = records * valueBytes;
    assert.ok(
      done.batches >= Math.ceil(total / MAX_BATCH_BYTES),
      `${records} records of ${valueBytes} bytes in ${done.batches} batch(es): at most ${MAX_BATCH_BYTES} bytes a batch`,
    );
    const r = await sqlOk(
      s.base,
      'SELECT count(*) AS n, count(DISTINCT id) AS ids, min(length(s)) AS len FROM wide',
    );
    assert.deepEqual((r.body.results as { rows: unknown[] }[])[0]?.rows, [
      { n: records, ids: records, len: pad.length },
    ]);
  });
});
