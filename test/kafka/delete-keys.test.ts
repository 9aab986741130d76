// Deletes from Kafka (upsert tombstones, Debezium deletes and key-changing updates), against a real
// broker: a delete whose key does not fit the source's key columns is a poison record of its own
// (skipped with its offset under on_error 'skip'; the source stops at it under 'fail', the records
// before it applied) instead of a batch the engine refuses whole, with no offset, whatever on_error
// says; and keys the source's typing reads as one ("01" and 1 for a bigint) are one key within a
// batch, so a tombstone after an upsert of the same key deletes it, also after a restart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, restView, sqlOk, startServer, tempDir } from '../server/helpers.ts';

interface Status {
  state: string;
  error?: { offset?: number; partition?: number; reason?: string; message?: string } | null;
  partitions: { partition: number; next: number }[];
}

async function sourceStatus(base: string, name: string): Promise<Status> {
  const r = await request(base, 'GET', `/v1/sources/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.body as unknown as Status;
}

/** Waits until the source has read partition 0 up to `end` (it must not fail meanwhile). */
async function caughtUp(base: string, name: string, end: number): Promise<void> {
  await waitFor(
    async () => {
      const s = await sourceStatus(base, name);
      if (s.state === 'failed') throw new Error(`source ${name} failed: ${JSON.stringify(s.error)}`);
      return (s.partitions.find((p) => p.partition === 0)?.next ?? -1) >= end;
    },
    { what: `source ${name} caught up to ${end}` },
  );
}

async function skippedOffsets(base: string, name: string): Promise<{ offset: number; reason: string }[]> {
  const r = await request(base, 'GET', `/v1/sources/${name}/errors`);
  assert.equal(r.status, 200, r.text);
  return r.body.errors as { offset: number; reason: string }[];
}

const sortedIds = (rows: readonly Record<string, unknown>[]): string[] =>
  rows.map((r) => `${String(r.id)}:${String(r.t)}`).sort();

describe('Kafka deletes by key (real broker)', kafkaSuite('Kafka deletes by key'), () => {
  const fx = kafkaSuiteFixture('sluice-delete-keys-test');

  it('upsert: a tombstone of a key that does not fit is poison at its offset; "01" deletes key 1 in the same batch', async () => {
    const topic = uniqueName('upsert-keys');
    await createTopic(fx.kafka, topic, 1);
    await fx.producer.send({
      topic,
      messages: [
        { key: '{"id":1}', value: '{"t":"a"}' }, // 0
        { key: '{"id":"01"}', value: null }, // 1: deletes key 1 (the same bigint)
        { key: '{"id":"abc"}', value: null }, // 2: poison, not a bigint
        { key: '{"id":2}', value: '{"t":"b"}' }, // 3
        { key: '{"id":{"x":1}}', value: null }, // 4: poison
        { key: '{"id":3}', value: '{"t":"c"}' }, // 5
      ],
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await startServer({ dataDir: dir });
    // One batch for all six records (the backlog's end hands it over), so the tombstones meet
    // the upserts they follow inside one batch.
    await sqlOk(
      s.base,
      `CREATE SOURCE lenient (id bigint PRIMARY KEY, t text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'upsert', on_error 'skip', max_batch_ms 5000);
       CREATE SOURCE strict (id bigint PRIMARY KEY, t text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'upsert', on_error 'fail', max_batch_ms 5000);
       CREATE MATERIALIZED VIEW lenient_rows AS SELECT id, t FROM lenient;`,
    );
    await caughtUp(s.base, 'lenient', 6);
    const skipped = await skippedOffsets(s.base, 'lenient');
    assert.deepEqual(
      skipped.map((e) => e.offset),
      [2, 4],
    );
    assert.match(skipped[0]?.reason ?? '', /column "id".*expected an integer \(bigint\), got "abc"/);
    assert.deepEqual(sortedIds((await restView(s.base, 'lenient_rows')).rows), ['2:b', '3:c']);

    const failed = await waitFor(
      async () => {
        const st = await sourceStatus(s.base, 'strict');
        return st.state === 'failed' ? st : undefined;
      },
      { what: 'strict source to fail' },
    );
    assert.equal(failed.error?.offset, 2, JSON.stringify(failed.error));
    assert.match(failed.error?.message ?? '', /offset 2 of partition 0/);
    // The records before the poison one are applied: key 1 written and deleted.
    const strictRows = await sqlOk(s.base, 'SELECT id, t FROM strict');
    assert.deepEqual((strictRows.body.results as { rows: unknown[] }[])[0]?.rows, []);

    // A restart resumes where the source stopped: nothing doubled, nothing lost.
    await s.close();
    s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await fx.producer.send({
      topic,
      messages: [
        { key: '3', value: null },
        { key: '4', value: '{"t":"d"}' },
      ],
    });
    await caughtUp(s.base, 'lenient', 8);
    assert.deepEqual(sortedIds((await restView(s.base, 'lenient_rows')).rows), ['2:b', '4:d']);
    assert.deepEqual(
      (await skippedOffsets(s.base, 'lenient')).map((e) => e.offset),
      [2, 4],
    );
  });

  it('upsert: keys spelled differently but one bigint ("01", " 1", 1) are one key within a batch', async () => {
    const topic = uniqueName('upsert-spellings');
    await createTopic(fx.kafka, topic, 1);
    await fx.producer.send({
      topic,
      messages: [
        { key: '{"id":1}', value: '{"t":"a"}' },
        { key: '{"id":"01"}', value: null }, // the last word on key 1: deleted
        { key: '{"id":" 2"}', value: '{"t":"b"}' },
        { key: '2', value: '{"t":"c"}' }, // the last word on key 2
        { key: '{"id":"+3"}', value: '{"t":"d"}' },
      ],
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await sqlOk(
      s.base,
      `CREATE SOURCE spelled (id bigint PRIMARY KEY, t text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'upsert', max_batch_ms 5000);
       CREATE MATERIALIZED VIEW spelled_rows AS SELECT id, t FROM spelled;`,
    );
    await caughtUp(s.base, 'spelled', 5);
    assert.deepEqual(sortedIds((await restView(s.base, 'spelled_rows')).rows), ['2:c', '3:d']);
  });

  it('debezium: a delete or key-changing update whose old key does not fit is poison; the source goes on', async () => {
    const topic = uniqueName('debezium-keys');
    await createTopic(fx.kafka, topic, 1);
    const env = (op: string, before: unknown, after: unknown): string =>
      JSON.stringify({ op, before, after });
    await fx.producer.send({
      topic,
      messages: [
        { value: env('c', null, { id: 1, t: 'a' }) }, // 0
        { value: env('d', { id: 'x' }, null) }, // 1: poison
        { value: env('c', null, { id: 2, t: 'b' }) }, // 2
        { value: env('u', { id: 'y' }, { id: 2, t: 'c' }) }, // 3: poison
        { value: env('u', { id: '01' }, { id: 1, t: 'a2' }) }, // 4: the same key, updated in place
        { value: env('d', { id: '02' }, null) }, // 5: deletes key 2
      ],
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const s = await startServer({ dataDir: dir });
    fx.servers.push(s);
    await sqlOk(
      s.base,
      `CREATE SOURCE cdc (id bigint PRIMARY KEY, t text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', format 'debezium', on_error 'skip', max_batch_ms 5000);
       CREATE MATERIALIZED VIEW cdc_rows AS SELECT id, t FROM cdc;`,
    );
    await caughtUp(s.base, 'cdc', 6);
    assert.deepEqual(
      (await skippedOffsets(s.base, 'cdc')).map((e) => e.offset),
      [1, 3],
    );
    assert.deepEqual(sortedIds((await restView(s.base, 'cdc_rows')).rows), ['1:a2']);
  });
});
