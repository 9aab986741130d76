// A source holding a batch (its tenant at its state quota, or paced by its ingest rates) keeps its
// consumer awaiting the record handler inside kafkajs's eachBatch, where kafkajs sends no
// heartbeats of its own. Held past the session timeout, the broker evicted the member and the
// group rebalanced (a new member id, the partitions assigned again from the group's offsets).
// The reader now heartbeats while a handler is pending: held for over twice the session timeout,
// the member stays the same and every record arrives once, in order. A short session (6 s) keeps
// the test quick; the default is 30 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kafka, Producer } from 'kafkajs';
import { admin, createTopic } from '../support/kafka-topics.ts';
import { connectProducer, kafkaSuite, uniqueName, waitFor } from '../support/kafka.ts';
import { KafkajsReader } from '../../src/source/kafka/kafkajs-client.ts';

const SESSION_MS = 6_000;
const HOLD_MS = 2 * SESSION_MS + 3_000;

/** The members of the reader's own consumer group (named `${groupId}-r<random>`). */
async function members(kafka: Kafka, groupId: string): Promise<string[]> {
  return admin(kafka, async (a) => {
    const own = (await a.listGroups()).groups.filter((g) => g.groupId.startsWith(`${groupId}-r`));
    if (own.length === 0) return [];
    const described = await a.describeGroups(own.map((g) => g.groupId));
    return described.groups.flatMap((g) => g.members.map((m) => m.memberId));
  });
}

describe(
  'a held Kafka batch keeps its consumer in its group (real broker)',
  kafkaSuite('Kafka hold heartbeat'),
  () => {
    let kafka: Kafka;
    let producer: Producer;
    let brokers = '';

    before(async () => {
      ({ brokers, kafka, producer } = await connectProducer('sluice-hold-heartbeat-test'));
    });
    after(async () => {
      await producer?.disconnect();
    });

    it('a batch held for over twice the session timeout: same member, every record once, in order', async () => {
      const topic = uniqueName('hold-heartbeat');
      await createTopic(kafka, topic, 1);
      const value = (i: number): string => JSON.stringify({ i });
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: 20 }, (_, i) => ({ value: value(i) })),
      });
      const groupId = uniqueName('hold-heartbeat-group');
      const reader = new KafkajsReader({
        brokers: brokers.split(','),
        topic,
        groupId,
        clientId: uniqueName('hold-heartbeat-reader'),
        sessionTimeoutMs: SESSION_MS,
      });
      const offsets: number[] = [];
      const failures: Error[] = [];
      let holding = false;
      let held = false;
      try {
        await reader.start(
          new Map([[0, 5]]),
          async (_partition, records) => {
            for (const r of records) offsets.push(r.offsetNumber);
            if (held) return;
            held = true;
            holding = true;
            await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
            holding = false;
          },
          (error) => failures.push(error),
        );
        await waitFor(() => holding, { what: 'the first batch to be held' });
        const before = await waitFor(
          async () => {
            const m = await members(kafka, groupId);
            return m.length === 1 ? m : false;
          },
          { what: 'the reader to be a member of its group' },
        );
        await waitFor(() => !holding, { timeoutMs: HOLD_MS + 30_000, what: 'the hold to end' });
        await producer.send({
          topic,
          acks: -1,
          messages: Array.from({ length: 20 }, (_, i) => ({ value: value(20 + i) })),
        });
        await waitFor(() => offsets.length >= 35 && offsets.at(-1) === 39, {
          what: 'every record after the hold',
        });
        // Anything handed over twice would arrive meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        assert.deepEqual(
          offsets,
          Array.from({ length: 35 }, (_, i) => 5 + i),
        );
        assert.deepEqual(failures, []);
        assert.deepEqual(await members(kafka, groupId), before, 'the member held its place in the group');
      } finally {
        await reader.close();
      }
    });
  },
);
