// Topic helpers shared by the real-broker suites: create a topic, its end offsets, read it whole
// (read-committed) and check that a sink's epochs appear once each, in order.
import assert from 'node:assert/strict';
import type { Kafka } from 'kafkajs';
import { uniqueName, waitFor } from './kafka.ts';

export async function admin<T>(kafka: Kafka, f: (a: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const a = kafka.admin();
  await a.connect();
  try {
    return await f(a);
  } finally {
    await a.disconnect();
  }
}

/**
 * Creates a topic and returns once every partition's leader answers for it: `waitForLeaders` only
 * waits for the controller's metadata, and under load a produce or offsets request sent right after
 * it was refused with UNKNOWN_TOPIC_OR_PARTITION (seen in tenants.test.ts in a loaded CI run).
 */
export const createTopic = (kafka: Kafka, topic: string, partitions: number): Promise<boolean> =>
  admin(kafka, async (a) => {
    const created = await a.createTopics({
      topics: [{ topic, numPartitions: partitions }],
      waitForLeaders: true,
    });
    await waitFor(
      async () => {
        try {
          return (await a.fetchTopicOffsets(topic)).length === partitions;
        } catch {
          return false;
        }
      },
      { what: `every partition of ${topic} to answer offsets` },
    );
    return created;
  });

export async function topicEnds(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const offsets = await admin(kafka, (a) => a.fetchTopicOffsets(topic));
  return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
}

export interface ReadMessage {
  key: string | null;
  value: string | null;
  epoch: number;
}

/** Every committed message of a topic (read-committed), in order, once the end is reached. */
export async function readTopic(kafka: Kafka, topic: string): Promise<ReadMessage[]> {
  const ends = await topicEnds(kafka, topic);
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), readUncommitted: false });
  const out: ReadMessage[] = [];
  const next = new Map<number, number>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          out.push({
            key: m.key?.toString() ?? null,
            value: m.value?.toString() ?? null,
            epoch: Number(m.headers?.['sluice-epoch']?.toString()),
          });
          next.set(batch.partition, Number(m.offset) + 1);
        }
        if (batch.messages.length === 0) next.set(batch.partition, Number(batch.highWatermark));
      },
    });
    // The last stable offset can sit one past the last message (the commit marker).
    await waitFor(() => [...ends].every(([p, end]) => (next.get(p) ?? 0) >= end - 1), {
      what: `read ${topic}`,
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}

/** Runs of equal epochs never repeat and epochs increase: no transaction is visible twice. */
export function assertEpochsOnce(messages: readonly ReadMessage[], what: string, seed: number): void {
  const runs: number[] = [];
  for (const m of messages) {
    assert.ok(Number.isSafeInteger(m.epoch), `${what}: every message carries its epoch`);
    if (runs[runs.length - 1] !== m.epoch) runs.push(m.epoch);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  assert.deepEqual(runs, sorted, `${what}: epochs in order (SLUICE_SEED=${seed})`);
  assert.equal(new Set(runs).size, runs.length, `${what}: each epoch once (SLUICE_SEED=${seed})`);
}
