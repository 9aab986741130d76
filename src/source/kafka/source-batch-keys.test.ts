// A keyed source whose rows go to the engine as objects (no row typing: a DEFAULT now() column)
// keeps the last row of each key within a batch. Two different keys must stay two: a composite key
// of texts that joined with a separator read the same ("x\u0000" + "y" and "x" + "\u0000y"), and
// jsonb or array keys, which all read "[object Object]" or their elements joined, lost every row
// of the batch but the last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaReader, KafkaRecord, PartitionWatermarks, RecordHandler } from './kafka-client.ts';
import { KafkaSourceRunner } from './kafka-source.ts';
import type { SourceBatch } from './kafka-source-types.ts';

class OneFetchReader implements KafkaReader {
  handler: RecordHandler | null = null;
  constructor(private readonly high: number) {}
  async watermarks(): Promise<PartitionWatermarks[]> {
    return [{ partition: 0, low: 0, high: this.high }];
  }
  async start(_from: ReadonlyMap<number, number>, onRecords: RecordHandler): Promise<void> {
    this.handler = onRecords;
  }
  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

async function batchOf(columns: string[], primaryKey: string[], values: unknown[]): Promise<SourceBatch> {
  const reader = new OneFetchReader(values.length);
  const delivered: SourceBatch[] = [];
  const runner = new KafkaSourceRunner(
    {
      name: 's',
      topic: 't',
      maxBatchRows: 1000,
      maxBatchMs: 60_000,
      onError: 'skip',
      start: 'earliest',
      decode: {
        format: 'json',
        columns,
        primaryKey,
        maxMessageBytes: 10_000,
        checkRow: () => null,
        typing: null,
      },
    },
    () => reader,
    new Map(),
    (batch) => delivered.push(batch),
    { info: () => undefined, warn: () => undefined, error: () => undefined },
    null,
  );
  runner.start();
  try {
    const end = Date.now() + 10_000;
    while (reader.handler === null) {
      if (Date.now() > end) throw new Error('the runner did not start reading');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const records: KafkaRecord[] = values.map((v, o) => ({
      offsetNumber: o,
      key: null,
      value: Buffer.from(JSON.stringify(v)),
    }));
    // The partition read to its end: the batch is handed over at once.
    await reader.handler(0, records, values.length, values.length);
    assert.equal(delivered.length, 1);
    return delivered[0] as SourceBatch;
  } finally {
    await runner.stop();
  }
}

test('a composite text key holding NUL keeps two different keys two within a batch', async () => {
  const batch = await batchOf(
    ['a', 'b', 'n'],
    ['a', 'b'],
    [
      { a: 'x\u0000', b: 'y', n: 1 },
      { a: 'x', b: '\u0000y', n: 2 },
      { a: 'x', b: '\u0000y', n: 3 }, // the same key again: the last row wins
    ],
  );
  assert.deepEqual(
    batch.upserts.map((r) => r.n),
    [1, 3],
  );
});

test('jsonb and array keys keep different keys apart within a batch', async () => {
  const batch = await batchOf(
    ['k', 'n'],
    ['k'],
    [
      { k: { a: 1 }, n: 1 },
      { k: { a: 2 }, n: 2 },
      { k: [1, 2], n: 3 },
      { k: ['1,2'], n: 4 },
    ],
  );
  assert.deepEqual(
    batch.upserts.map((r) => r.n),
    [1, 2, 3, 4],
  );
});
