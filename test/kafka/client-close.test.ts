// Closing a Kafka connector ends every broker connection its client opened, at whatever point the
// client is (joined and fetching, still joining, writing a transaction), and nothing reconnects after
// it: a leftover socket kept a test process alive until the broker dropped it ten minutes later.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kafka, Producer } from 'kafkajs';
import { createTopic } from '../support/kafka-topics.ts';
import { connectProducer, kafkaSuite, uniqueName, waitFor } from '../support/kafka.ts';
import { KafkajsReader, KafkajsTransactionalWriter } from '../../src/source/kafka/kafkajs-client.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Kafka clients close every connection (real broker)', kafkaSuite('Kafka client close'), () => {
  let brokers = '';
  let kafka: Kafka;
  let producer: Producer;

  before(async () => {
    ({ brokers, kafka, producer } = await connectProducer('sluice-close-test'));
  });
  after(async () => {
    await producer?.disconnect();
  });

  function reader(topic: string): KafkajsReader {
    return new KafkajsReader({
      brokers: brokers.split(','),
      topic,
      groupId: uniqueName('close-group'),
      clientId: uniqueName('close-reader'),
    });
  }

  it('a reader closed while fetching, or while still joining its group, holds no connection', async () => {
    const topic = uniqueName('close-topic');
    await createTopic(kafka, topic, 2);
    await producer.send({ topic, messages: [{ value: '1' }, { value: '2' }] });

    const fetching = reader(topic);
    let seen = 0;
    await fetching.start(
      new Map(),
      async (_p, records) => {
        seen += records.length;
      },
      () => undefined,
    );
    await waitFor(() => seen >= 2, { what: 'the reader got both records' });
    assert.ok(fetching.openConnections > 0);
    await fetching.close();
    assert.equal(fetching.openConnections, 0, 'fetching reader');

    // Closed right after start was called: the join is still in flight.
    for (let i = 0; i < 3; i++) {
      const joining = reader(topic);
      const started = joining
        .start(
          new Map(),
          async () => undefined,
          () => undefined,
        )
        .catch(() => undefined);
      await sleep(20 * i);
      await joining.close();
      await started;
      assert.equal(joining.openConnections, 0, `joining reader ${i}, closed after ${20 * i} ms`);
      await sleep(300); // a retry still running in the library must not open a connection again
      assert.equal(joining.openConnections, 0, `joining reader ${i}, later`);
    }
  });

  it('a transactional writer closed after an epoch holds no connection', async () => {
    const topic = uniqueName('close-sink');
    await createTopic(kafka, topic, 1);
    const writer = new KafkajsTransactionalWriter({
      brokers: brokers.split(','),
      topic,
      clientId: uniqueName('close-writer'),
      transactionalId: uniqueName('close-tx'),
      progressGroupId: uniqueName('close-progress'),
    });
    await writer.connect();
    await writer.writeEpoch(1, [{ key: 'k', value: 'v', headers: {} }]);
    assert.equal(await writer.committedEpoch(), 1);
    assert.ok(writer.openConnections > 0);
    await writer.close();
    assert.equal(writer.openConnections, 0);
    await assert.rejects(writer.committedEpoch(), /closed/);
  });

  it('a process whose reader (committing progress) and writer are closed exits on its own', async () => {
    const topic = uniqueName('close-exit');
    await createTopic(kafka, topic, 1);
    await producer.send({ topic, messages: [{ value: '1' }] });
    // The committing reader closes 0, 200, 1,000 and 2,500 ms into its commit: before and during the group join kafkajs runs for it, and while that consumer waits for its fetch.
    for (const delayMs of [0, 200, 1000, 2500]) {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(new URL('./close-exit-child.ts', import.meta.url)),
          topic,
          String(delayMs),
        ],
        { env: { ...process.env, SLUICE_TEST_KAFKA_BROKERS: brokers }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      // It normally exits within a second or two of closing; a client left restarting or holding a
      // socket keeps it for minutes or for ever, so 60 s is far above normal and far below that.
      const code = await new Promise<number | string>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve('still running after 60 s');
        }, 60_000);
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c ?? -1);
        });
      });
      assert.equal(code, 0, `closed ${delayMs} ms into the commit: ${out}`);
      assert.match(out, /closed after [1-9]\d* records/);
    }
  });
});
