// The end of a backlog is handed over at once: a batch holding records of fetches that stopped short
// of their partition's end is delivered as soon as every partition is read to its end, not
// max_batch_ms later. A live stream's batch (every fetch reaching its partition's end) still waits for
// the window. Counted, never timed: the window is a minute, far past any wait of the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaReader, KafkaRecord, PartitionWatermarks, RecordHandler } from './kafka-client.ts';
import type { KafkaSourceRunner } from './kafka-source.ts';
import type { SourceBatch } from './kafka-source-types.ts';
import { scriptedRunner } from '../../../test/support/kafka-source-runner.ts';

/** Hands over the fetches the test scripts, each awaited as kafkajs does. */
class StepReader implements KafkaReader {
  handler: RecordHandler | null = null;

  constructor(private readonly highs: readonly number[]) {}

  async watermarks(): Promise<PartitionWatermarks[]> {
    return this.highs.map((high, partition) => ({ partition, low: 0, high }));
  }

  async start(_from: ReadonlyMap<number, number>, onRecords: RecordHandler): Promise<void> {
    this.handler = onRecords;
  }

  /** Records [from, to) of `partition`, in a fetch whose partition end is `high`. */
  async fetch(partition: number, from: number, to: number, high: number): Promise<void> {
    const records: KafkaRecord[] = [];
    for (let o = from; o < to; o++)
      records.push({ offsetNumber: o, key: null, value: Buffer.from(JSON.stringify({ id: o })) });
    await (this.handler as RecordHandler)(partition, records, high, to);
  }

  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

async function started(
  reader: StepReader,
  typed: boolean,
): Promise<{ runner: KafkaSourceRunner; delivered: SourceBatch[] }> {
  const { runner, delivered } = scriptedRunner(reader, { maxBatchRows: 100, maxBatchMs: 60_000, typed });
  runner.start();
  const end = Date.now() + 10_000;
  while (reader.handler === null) {
    if (Date.now() > end) throw new Error('the runner did not start reading');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { runner, delivered };
}

const recordsOf = (batches: readonly SourceBatch[]): number => batches.reduce((n, b) => n + b.records, 0);

for (const typed of [false, true]) {
  const how = typed ? 'typed rows' : 'row objects';

  test(`a backlog's last batch is delivered once every partition is read to its end (${how})`, async () => {
    const reader = new StepReader([250, 130]);
    const { runner, delivered } = await started(reader, typed);
    try {
      // Partition 0 is read in two fetches (the first stops short of its end), partition 1 in one.
      await reader.fetch(0, 0, 160, 250);
      assert.equal(recordsOf(delivered), 100, 'one full batch; the rest waits for more');
      await reader.fetch(1, 0, 130, 130);
      assert.equal(recordsOf(delivered), 200, 'partition 0 is not read to its end yet');
      await reader.fetch(0, 160, 250, 250);
      // Every partition at its end: the remainder (80 records) goes now, not a minute later.
      assert.equal(recordsOf(delivered), 380);
      const last = delivered.at(-1) as SourceBatch;
      assert.deepEqual(last.positions.partitions, {
        '0': { from: 170, next: 250 },
        '1': { from: 130, next: 130 },
      });
      assert.deepEqual(
        runner.status().partitions.map((p) => p.next),
        [250, 130],
      );
    } finally {
      await runner.stop();
    }
  });

  test(`a live stream's batch waits for max_batch_ms (${how})`, async () => {
    const reader = new StepReader([0, 0]);
    const { runner, delivered } = await started(reader, typed);
    try {
      // Each fetch reaches its partition's end: records arriving as they are produced.
      await reader.fetch(0, 0, 10, 10);
      await reader.fetch(1, 0, 10, 10);
      await reader.fetch(0, 10, 20, 20);
      assert.equal(recordsOf(delivered), 0, 'the batch waits for more records (the window)');
      assert.equal(runner.status().partitions[0]?.next, 0);
    } finally {
      await runner.stop();
    }
  });
}
