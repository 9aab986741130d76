// A paced source (the tenant's ingest rates) against a scripted reader: a batch the pacer holds back
// stops reading — the reader's next fetch waits on the handler — until the pacer admits it; then
// reading resumes, and in the end every record was delivered once, in order. Counted, never timed:
// the pacer's allowance is raised by the test step by step.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KafkaReader, KafkaRecord, PartitionWatermarks, RecordHandler } from './kafka-client.ts';
import type { SourceBatch, SourcePacer } from './kafka-source-types.ts';
import { scriptedRunner } from '../../../test/support/kafka-source-runner.ts';

const RECORDS = 200;
const FETCH = 25;
/** Records at these offsets are not JSON: skipped (on_error 'skip'), their positions still passed. */
const isPoison = (offset: number): boolean => offset % 37 === 36;
const GOOD = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => !isPoison(i));

/** Hands RECORDS records of partition 0 over in fetches of FETCH, each awaited (as kafkajs does). */
class ScriptedReader implements KafkaReader {
  fetchesStarted = 0;
  private closed = false;

  async watermarks(): Promise<PartitionWatermarks[]> {
    return [{ partition: 0, low: 0, high: RECORDS }];
  }

  async start(from: ReadonlyMap<number, number>, onRecords: RecordHandler): Promise<void> {
    const first = from.get(0) ?? 0;
    void (async () => {
      for (let offset = first; offset < RECORDS && !this.closed; offset += FETCH) {
        this.fetchesStarted += 1;
        const records: KafkaRecord[] = [];
        for (let o = offset; o < Math.min(RECORDS, offset + FETCH); o++)
          records.push({
            offsetNumber: o,
            key: null,
            value: Buffer.from(isPoison(o) ? '{"id":' : JSON.stringify({ id: o })),
          });
        await onRecords(0, records, RECORDS, offset + records.length);
      }
    })();
  }

  async commit(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Admits a batch while the rows delivered stay within `allowance` (raised by the test). */
class CountingPacer implements SourcePacer {
  allowance = 0;
  admitted = 0;
  refused = 0;
  constructor(private readonly batchRows: number) {}
  wait(rows: number): number {
    if (this.admitted + rows > this.allowance) {
      this.refused += 1;
      return 2;
    }
    this.admitted += rows;
    return 0;
  }
  bound(): { rows: number | null; bytes: number | null } {
    return { rows: this.batchRows, bytes: null };
  }
  /** The tenant's state at its quota (set by the test). */
  full = false;
  stateFull(): boolean {
    return this.full;
  }
}

const until = async (condition: () => boolean, what: string): Promise<void> => {
  const end = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

for (const typed of [false, true]) {
  test(`a held batch pauses reading until the pacer admits it; nothing is dropped (${typed ? 'typed rows' : 'row objects'})`, async () => {
    const reader = new ScriptedReader();
    const pacer = new CountingPacer(10);
    const { runner, delivered } = scriptedRunner(reader, { maxBatchRows: 1000, maxBatchMs: 5, typed, pacer });
    runner.start();
    try {
      const rowsOf = (b: SourceBatch): number[] =>
        typed ? (b.typedUpserts ?? []).map((r) => r[0] as number) : b.upserts.map((r) => r.id as number);
      const rows = (): number => delivered.reduce((n, b) => n + rowsOf(b).length, 0);
      // Nothing admitted: the first batch (cut at the pacer's bound of 10 rows) is held, and the
      // reader is not asked for a second fetch while it is.
      await until(() => pacer.refused >= 3, 'the pacer to hold the first batch');
      assert.equal(rows(), 0);
      assert.equal(reader.fetchesStarted, 1, 'reading paused while the batch is held');
      // Raised step by step: what is delivered never passes what was allowed, and reading resumes.
      for (let allowance = 10; allowance <= RECORDS; allowance += 30) {
        pacer.allowance = allowance;
        // Skipped records count against the allowance too.
        await until(() => rows() >= allowance - 20 || rows() === GOOD.length, `rows up to ${allowance}`);
        assert.ok(rows() <= allowance, `${rows()} rows delivered with ${allowance} allowed`);
      }
      pacer.allowance = Number.MAX_SAFE_INTEGER;
      await until(() => runner.status().partitions[0]?.next === RECORDS, 'every record');
      // Every record once, in offset order, each batch at most the pacer's bound; the batches'
      // positions follow one another with no gap or overlap, skipped records included.
      assert.deepEqual(delivered.flatMap(rowsOf), GOOD);
      assert.ok(delivered.every((b) => rowsOf(b).length + b.skipped.length <= 10));
      assert.deepEqual(
        delivered.flatMap((b) => b.skipped.map((k) => k.offset)),
        Array.from({ length: RECORDS }, (_, i) => i).filter(isPoison),
      );
      let at = 0;
      for (const b of delivered) {
        const range = b.positions.partitions['0'];
        assert.ok(range !== undefined);
        assert.equal(range.from, at);
        assert.ok(range.next > at);
        at = range.next;
      }
      assert.equal(at, RECORDS);
      assert.ok(runner.status().rateWaits > 0);
      assert.equal(runner.status().partitions[0]?.next, RECORDS);
    } finally {
      await runner.stop();
    }
  });
}

test("a batch held at the tenant's state quota pauses reading, keeps the position, is not taken from the rate, and goes once the state is below", async () => {
  const reader = new ScriptedReader();
  const pacer = new CountingPacer(10);
  pacer.allowance = Number.MAX_SAFE_INTEGER;
  pacer.full = true;
  const { runner, delivered } = scriptedRunner(reader, {
    maxBatchRows: 1000,
    maxBatchMs: 5,
    typed: false,
    pacer,
  });
  runner.start();
  try {
    await until(() => runner.status().pausedAtStateQuota, 'the source to pause at the state quota');
    // Held for several asks (STATE_QUOTA_POLL_MS apart): nothing delivered, nothing more fetched,
    // nothing taken from the rate buckets, the position where it was, the state not "stalled".
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(delivered.length, 0);
    assert.equal(reader.fetchesStarted, 1, 'reading paused while the batch is held');
    assert.equal(pacer.admitted, 0);
    const paused = runner.status();
    assert.equal(paused.state, 'running');
    assert.equal(paused.partitions[0]?.next, 0);
    assert.equal(paused.stateQuotaPauses, 1);
    assert.equal(paused.rateWaits, 0);
    // Below the quota again (a DELETE, a DROP, a raised quota): every record once, in order.
    pacer.full = false;
    await until(() => runner.status().partitions[0]?.next === RECORDS, 'every record');
    assert.deepEqual(
      delivered.flatMap((b) => b.upserts.map((r) => r.id as number)),
      GOOD,
    );
    assert.equal(runner.status().pausedAtStateQuota, false);
    assert.equal(runner.status().stateQuotaPauses, 1);
  } finally {
    await runner.stop();
  }
});
