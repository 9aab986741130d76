// A batch whose one epoch would pass the engine's bound (the host's `epochOverBound`) is delivered
// as several epochs, each a prefix of every partition's records: positions stay exact (each part
// starts where the last ended), every record is applied once, and a record that alone passes the
// bound is applied alone and counted. No broker: a scripted reader and a counting bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaReader, KafkaRecord, PartitionWatermarks, RecordHandler } from './kafka-client.ts';
import type { KafkaSourceRunner } from './kafka-source.ts';
import { scriptedRunner } from '../../../test/support/kafka-source-runner.ts';
import type { SourceBatch } from './kafka-source-types.ts';

class ScriptedReader implements KafkaReader {
  handler: RecordHandler | null = null;
  constructor(private readonly highs: readonly number[]) {}
  async watermarks(): Promise<PartitionWatermarks[]> {
    return this.highs.map((high, partition) => ({ partition, low: 0, high }));
  }
  async start(_from: ReadonlyMap<number, number>, onRecords: RecordHandler): Promise<void> {
    this.handler = onRecords;
  }
  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

interface Run {
  readonly delivered: SourceBatch[];
  readonly counted: number[];
  readonly warned: Record<string, unknown>[];
  readonly status: ReturnType<KafkaSourceRunner['status']>;
}

/**
 * Reads `perPartition` records into one batch over partitions 0 and 1 (ids p*1000 + offset; a
 * record `{ big: true }` alone passes the bound) under a bound of `bound` rows per epoch.
 */
async function run(options: {
  readonly perPartition: readonly (readonly Record<string, unknown>[])[];
  readonly bound: number | null;
  readonly typed: boolean;
  readonly keyed: boolean;
  /** What the engine's row-free ceiling says of a full batch (default: it could pass the bound). */
  readonly mayPass?: boolean;
}): Promise<Run> {
  const highs = options.perPartition.map((records) => records.length);
  const reader = new ScriptedReader(highs);
  const counted: number[] = [];
  const warned: Record<string, unknown>[] = [];
  const bound = options.bound;
  const { runner, delivered } = scriptedRunner(reader, {
    maxBatchRows: 100_000,
    maxBatchMs: 60_000,
    typed: false,
    decode: {
      columns: ['id', 'big'],
      primaryKey: options.keyed ? ['id'] : null,
      maxMessageBytes: 10_000,
      typing: options.typed
        ? { typed: (row) => [row.id as number, (row.big as boolean | undefined) ?? null], eventTime: null }
        : null,
    },
    config:
      bound === null
        ? {}
        : {
            epochMayPassBound: () => options.mayPass ?? true,
            // One row per row written, and a million for a `big` one: the engine's count, modelled.
            epochOverBound: (batch: SourceBatch) => {
              const rows = [...batch.upserts, ...(batch.typedUpserts ?? []).map((r) => ({ big: r[1] }))];
              const built = rows.reduce((n, r) => n + (r.big === true ? 1_000_000 : 1), batch.deletes.length);
              counted.push(built);
              return built > bound ? { rows: built, view: 'v' } : null;
            },
          },
    logger: {
      info: () => undefined,
      warn: (o: Record<string, unknown>) => void warned.push(o),
      error: () => undefined,
    },
  });
  runner.start();
  try {
    const end = Date.now() + 10_000;
    while (reader.handler === null) {
      if (Date.now() > end) throw new Error('the runner did not start reading');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Partition 0 is handed over first, short of the end of partition 1: one batch of both.
    for (const [partition, values] of options.perPartition.entries()) {
      const records: KafkaRecord[] = values.map((v, o) => ({
        offsetNumber: o,
        key: null,
        // `raw`: the record's bytes as they are (not JSON: a record the source skips).
        value: Buffer.from(typeof v.raw === 'string' ? v.raw : JSON.stringify(v)),
      }));
      await reader.handler(partition, records, values.length, values.length);
    }
    return { delivered, counted, warned, status: runner.status() };
  } finally {
    await runner.stop();
  }
}

function rowsOf(batch: SourceBatch): number[] {
  return [
    ...batch.upserts.map((r) => r.id as number),
    ...(batch.typedUpserts ?? []).map((r) => r[0] as number),
  ];
}

/** Each partition's ranges follow each other from 0 to its end, and every id arrives once. */
function assertExact(delivered: readonly SourceBatch[], perPartition: readonly (readonly unknown[])[]): void {
  for (const [p, records] of perPartition.entries()) {
    let next = 0;
    for (const batch of delivered) {
      const range = batch.positions.partitions[String(p)];
      assert.ok(range !== undefined);
      assert.equal(range.from, next, `partition ${p} resumes where it stopped`);
      assert.ok(range.next >= range.from);
      next = range.next;
    }
    assert.equal(next, records.length, `partition ${p} is read to its end`);
  }
  const ids = delivered.flatMap(rowsOf).sort((a, b) => a - b);
  const expected = perPartition.flatMap((records) =>
    records.filter((r) => (r as { raw?: string }).raw === undefined).map((r) => (r as { id: number }).id),
  );
  assert.deepEqual(
    ids,
    expected.sort((a, b) => a - b),
  );
  assert.equal(
    delivered.reduce((n, b) => n + b.records, 0),
    perPartition.reduce((n, records) => n + records.length, 0),
  );
}

const ids = (partition: number, n: number): Record<string, unknown>[] =>
  Array.from({ length: n }, (_, i) => ({ id: partition * 1000 + i }));

for (const typed of [false, true]) {
  test(`a batch past the bound is applied in epochs that fit, positions exact (${typed ? 'typed' : 'objects'})`, async () => {
    const perPartition = [ids(0, 40), ids(1, 60)];
    const { delivered, counted, status } = await run({ perPartition, bound: 16, typed, keyed: false });
    // 100 rows under a bound of 16: at least seven epochs, each within it.
    assert.ok(delivered.length >= 7, `${delivered.length} epochs`);
    for (const batch of delivered) assert.ok(rowsOf(batch).length <= 16);
    assertExact(delivered, perPartition);
    assert.equal(status.splitBatches, 1);
    assert.equal(status.oversizedRecords, 0);
    assert.equal(status.batches, delivered.length);
    // Halving: a count of work proportional to the batch, not to its square.
    assert.ok(counted.length < 60, `${counted.length} counts`);
  });
}

test('a source that no epoch could take past the bound keeps no record and asks no count', async () => {
  const perPartition = [ids(0, 40), ids(1, 60)];
  const { delivered, counted } = await run({
    perPartition,
    bound: 16,
    typed: true,
    keyed: false,
    mayPass: false,
  });
  assert.equal(delivered.length, 1);
  assert.equal(counted.length, 0);
  assertExact(delivered, perPartition);
});

test('a batch within the bound is one epoch, counted once', async () => {
  const perPartition = [ids(0, 5), ids(1, 5)];
  const { delivered, counted, status } = await run({ perPartition, bound: 16, typed: false, keyed: true });
  assert.equal(delivered.length, 1);
  assert.equal(counted.length, 1);
  assert.equal(status.splitBatches, 0);
  assertExact(delivered, perPartition);
});

test('a record alone past the bound is applied alone, counted and logged; the rest still fit', async () => {
  const first = ids(0, 10);
  first[4] = { id: 4, big: true };
  const perPartition = [first, ids(1, 10)];
  const { delivered, warned, status } = await run({ perPartition, bound: 6, typed: true, keyed: true });
  assertExact(delivered, perPartition);
  const alone = delivered.filter((b) => (b.typedUpserts ?? []).some((r) => r[1] === true));
  assert.equal(alone.length, 1);
  assert.deepEqual(rowsOf(alone[0] as SourceBatch), [4]);
  for (const batch of delivered) if (batch !== alone[0]) assert.ok(rowsOf(batch).length <= 6);
  assert.equal(status.oversizedRecords, 1);
  assert.equal(warned.filter((w) => w.view === 'v' && w.offset === 4 && w.partition === 0).length, 1);
});

test('a skipped record in a cut batch is skipped once, in the part that holds it', async () => {
  const first: Record<string, unknown>[] = ids(0, 12);
  first[7] = { raw: '{not json' };
  const perPartition = [first, ids(1, 12)];
  const { delivered } = await run({ perPartition, bound: 5, typed: true, keyed: false });
  assertExact(delivered, perPartition);
  assert.equal(
    delivered.reduce((n, b) => n + b.skipped.length, 0),
    1,
  );
  const skipped = delivered.flatMap((b) => b.skipped);
  assert.equal(skipped[0]?.offset, 7);
  assert.ok(delivered.length >= 5);
});
