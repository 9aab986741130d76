// Between two batches cut from one fetched chunk the source gives the event loop a turn, so the
// server's requests and WebSocket deliveries are not held for a whole fetch (kafkajs hands a fetch's
// partitions over without one). Counted, never timed: a callback queued when a batch is delivered
// for the loop's next iteration (an immediate queued from an immediate: it runs after the next poll
// for I/O) runs before the chunk's next batch is delivered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaReader, KafkaRecord, PartitionWatermarks, RecordHandler } from './kafka-client.ts';
import { KafkaSourceRunner } from './kafka-source.ts';
import type { SourceBatch } from './kafka-source-types.ts';

const RECORDS = 35;
const BATCH = 10;

/** All RECORDS records of partition 0 in one fetched chunk. */
class OneChunkReader implements KafkaReader {
  async watermarks(): Promise<PartitionWatermarks[]> {
    return [{ partition: 0, low: 0, high: RECORDS }];
  }
  async start(_from: ReadonlyMap<number, number>, onRecords: RecordHandler): Promise<void> {
    const records: KafkaRecord[] = Array.from({ length: RECORDS }, (_, o) => ({
      partition: 0,
      offset: o,
      key: null,
      value: Buffer.from(JSON.stringify({ id: o })),
    }));
    void onRecords(0, records, RECORDS, RECORDS);
  }
  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

for (const typed of [false, true]) {
  test(`a chunk of several batches gives the event loop a turn after each (${typed ? 'typed rows' : 'row objects'})`, async () => {
    const delivered: SourceBatch[] = [];
    /** Batches delivered when each callback queued at a delivery ran. */
    const seenByTurn: number[] = [];
    const runner = new KafkaSourceRunner(
      {
        name: 's',
        topic: 't',
        maxBatchRows: BATCH,
        maxBatchMs: 5,
        onError: 'skip',
        start: 'earliest',
        decode: {
          format: 'json',
          columns: ['id'],
          primaryKey: null,
          maxMessageBytes: 1000,
          checkRow: () => null,
          typing: typed ? { typed: (row) => [row.id as number], eventTime: null } : null,
        },
      },
      () => new OneChunkReader(),
      new Map(),
      (batch) => {
        delivered.push(batch);
        setImmediate(() => setImmediate(() => seenByTurn.push(delivered.length)));
      },
      { info: () => undefined, warn: () => undefined, error: () => undefined },
    );
    runner.start();
    try {
      const end = Date.now() + 10_000;
      while (runner.status().partitions[0]?.next !== RECORDS) {
        if (Date.now() > end) throw new Error('timed out waiting for every record');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // Three full batches from the chunk, then the rest by max_batch_ms.
      assert.deepEqual(
        delivered.map((b) => b.records),
        [BATCH, BATCH, BATCH, RECORDS - 3 * BATCH],
      );
      // Each turn came before the next batch of the chunk was delivered.
      assert.deepEqual(seenByTurn.slice(0, 3), [1, 2, 3]);
      const rows = delivered.flatMap((b) =>
        typed ? (b.typedUpserts ?? []).map((r) => r[0] as number) : b.upserts.map((r) => r.id as number),
      );
      assert.deepEqual(
        rows,
        Array.from({ length: RECORDS }, (_, i) => i),
      );
    } finally {
      await runner.stop();
    }
  });
}
