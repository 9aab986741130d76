// The faster record reading of kafkajs-fast-records.ts against kafkajs's own: record batches encoded
// by kafkajs's encoder (plain, with headers, compressed, offsets past 2^53, log-append time, control
// and transactional batches) decode to the same messages, field for field, and the plain ones with
// no Long conversion at all; the consumer Batch filters and answers as kafkajs's does.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { mulberry32 as random } from '../../../test/support/checkpoint-workload.ts';
import type { Value } from '../../common/types.ts';
import { valueLength, type KafkaRecord } from './kafka-client.ts';
import { recordsOfBatch, type KafkajsMessageFields } from './kafkajs-client.ts';
import {
  fastRecordCounts,
  fastRecordsInstalled,
  kafkajsOriginals,
  loadKafkajs,
  PlainRecordMessage,
} from './kafkajs-fast-records.ts';
import { RecordDecoder } from './record-decoder.ts';

// Before anything else in this process touches kafkajs: the replacements go in.
loadKafkajs();
const requireHere = createRequire(import.meta.url);
const kafkajsModule = <T>(path: string): T => requireHere(`kafkajs/src/${path}`) as T;

interface Decoder {
  offset: number;
}
type DecoderClass = new (buffer: Buffer) => Decoder;
type BatchDecode = (decoder: Decoder) => Promise<unknown>;
interface LongLike {
  toString(): string;
}
interface LongStatic {
  fromValue(value: unknown): LongLike;
}
interface RecordSpec {
  offsetDelta: number;
  timestampDelta: number | LongLike;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, string | string[]>;
}

const Decoder = kafkajsModule<DecoderClass>('protocol/decoder.js');
const Long = kafkajsModule<LongStatic>('utils/long.js');
const encodeRecord = kafkajsModule<(r: RecordSpec) => unknown>('protocol/recordBatch/record/v0/index.js');
const { RecordBatch: encodeBatch } = kafkajsModule<{
  RecordBatch: (spec: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
}>('protocol/recordBatch/v0/index.js');
const fastDecode = kafkajsModule<BatchDecode>('protocol/recordBatch/v0/decoder.js');
const { Types: Compression } = kafkajsModule<{ Types: { None: number; GZIP: number } }>(
  'protocol/message/compression/index.js',
);

function records(next: () => number, count: number, withHeaders: boolean): RecordSpec[] {
  const out: RecordSpec[] = [];
  for (let i = 0; i < count; i++) {
    const pick = next();
    const wide = next() < 0.2;
    out.push({
      offsetDelta: i,
      // Small deltas, negative ones, and some past 32 bits (a varlong of 5–7 bytes) or past 49 bits.
      timestampDelta: wide
        ? Long.fromValue(String(Math.floor((next() - 0.5) * 2 ** (next() < 0.5 ? 40 : 60))))
        : Math.floor((next() - 0.3) * 5000),
      key: pick < 0.3 ? null : Buffer.from(`k${Math.floor(next() * 1e6)}`),
      value: pick > 0.9 ? null : Buffer.from(JSON.stringify({ order_id: i, amount: next() * 100 })),
      ...(withHeaders && next() < 0.5 ? { headers: { a: 'x', b: ['y', 'z'] } } : {}),
    });
  }
  return out;
}

async function batchBytes(
  specs: RecordSpec[],
  options: { firstOffset?: string; firstTimestamp?: number; compression?: number; transactional?: boolean },
): Promise<Buffer> {
  const encoded = await encodeBatch({
    compression: options.compression ?? Compression.None,
    firstOffset: Long.fromValue(options.firstOffset ?? '1000'),
    firstTimestamp: options.firstTimestamp ?? 1_764_000_000_000,
    maxTimestamp: (options.firstTimestamp ?? 1_764_000_000_000) + 5_000,
    lastOffsetDelta: specs.length - 1,
    transactional: options.transactional ?? false,
    records: specs.map(encodeRecord),
  });
  return encoded.buffer;
}

/** Sets attribute bits of an encoded batch (byte 22 holds the low byte of its attributes). */
function withAttributeBits(bytes: Buffer, bits: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[22] = (copy[22] as number) | bits;
  return copy;
}

const MESSAGE_FIELDS = [
  'magicByte',
  'attributes',
  'timestamp',
  'offset',
  'key',
  'value',
  'headers',
  'isControlRecord',
  'batchContext',
] as const;

/** A message as its reader sees it: kafkajs's fields, read through whatever accessors it has. */
function asRead(message: unknown): Record<string, unknown> {
  const m = message as Record<string, unknown>;
  return Object.fromEntries(MESSAGE_FIELDS.map((f) => [f, m[f]]));
}

async function decodeBoth(bytes: Buffer): Promise<{ fast: unknown; original: unknown }> {
  const original = kafkajsOriginals.recordBatchDecoder;
  assert.ok(original !== null);
  const a = new Decoder(bytes);
  const b = new Decoder(bytes);
  const fast = (await fastDecode(a)) as { records: unknown[] };
  const slow = (await original(b as never)) as { records: unknown[] };
  assert.equal(a.offset, b.offset, 'both read the whole batch');
  // kafkajs's own builds plain objects with exactly these fields.
  for (const r of slow.records) assert.deepEqual(Object.keys(r as object).sort(), [...MESSAGE_FIELDS].sort());
  return {
    fast: { ...fast, records: fast.records.map(asRead) },
    original: { ...slow, records: slow.records.map(asRead) },
  };
}

test('kafkajs loads with the faster record reading in place', () => {
  assert.deepEqual(fastRecordsInstalled, { recordBatchDecoder: true, batch: true });
  assert.notEqual(fastDecode, kafkajsOriginals.recordBatchDecoder);
});

test('record batches decode to the same messages as kafkajs decodes them', async () => {
  const next = random(20261203);
  for (let round = 0; round < 40; round++) {
    const specs = records(next, 1 + Math.floor(next() * 40), round % 3 === 0);
    const options = {
      firstOffset: round % 5 === 1 ? String(2n ** 60n + BigInt(round)) : String(Math.floor(next() * 1e9)),
      firstTimestamp: round % 7 === 2 ? -1 : 1_764_000_000_000 + round,
      compression: round % 4 === 3 ? Compression.GZIP : Compression.None,
      transactional: round % 6 === 4,
    };
    const bytes = await batchBytes(specs, options);
    const variants = [bytes, withAttributeBits(bytes, 0x08), withAttributeBits(bytes, 0x20)];
    for (const variant of variants) {
      const { fast, original } = await decodeBoth(variant);
      assert.deepStrictEqual(fast, original, `round ${round}`);
    }
  }
});

test('plain records are read without a single Long conversion; kafkajs converts two per record', async () => {
  const specs = records(random(7), 200, false).map((r, i) => ({ ...r, timestampDelta: i * 3 }));
  const bytes = await batchBytes(specs, { firstOffset: '123456789' });
  const longClass = Long as unknown as { fromValue: (value: unknown) => LongLike };
  const fromValue = longClass.fromValue;
  let conversions = 0;
  longClass.fromValue = function counted(this: unknown, value: unknown): LongLike {
    conversions += 1;
    return fromValue.call(this, value);
  };
  try {
    const before = { ...fastRecordCounts };
    const fast = (await fastDecode(new Decoder(bytes))) as { records: { offset: string }[] };
    assert.equal(conversions, 0);
    assert.equal(fastRecordCounts.fast - before.fast, 200);
    assert.equal(fastRecordCounts.fallback - before.fallback, 0);
    assert.equal(fast.records[199]?.offset, String(123456789 + 199));
    const original = kafkajsOriginals.recordBatchDecoder;
    assert.ok(original !== null);
    await original(new Decoder(bytes) as never);
    assert.ok(conversions >= 400, `kafkajs's own decoder converted ${conversions} times`);
  } finally {
    longClass.fromValue = fromValue;
  }
});

test('the consumer Batch keeps, filters and reports as kafkajs Batch does', async () => {
  interface BatchView {
    messages: { offset: string }[];
    messagesWithinOffset: unknown[];
    isEmpty(): boolean;
    isEmptyControlRecord(): boolean;
    firstOffset(): string | null;
    lastOffset(): string;
    offsetLag(): string;
    offsetLagLow(): string;
  }
  type BatchClass = new (topic: string, fetched: unknown, data: unknown) => BatchView;
  const FastBatch = kafkajsModule<BatchClass>('consumer/batch.js');
  const OriginalBatch = kafkajsOriginals.batch as unknown as BatchClass;
  assert.notEqual(FastBatch, OriginalBatch);
  const plain = (await fastDecode(new Decoder(await batchBytes(records(random(3), 30, true), {})))) as {
    records: unknown[];
  };
  const control = (await fastDecode(
    new Decoder(
      withAttributeBits(await batchBytes(records(random(4), 3, false), { firstOffset: '1030' }), 0x20),
    ),
  )) as { records: unknown[] };
  const messages = [...plain.records, ...control.records];
  // Every record read by the fast path (no headers, small timestamp deltas).
  const onlyPlain = (
    (await fastDecode(
      new Decoder(
        await batchBytes(
          records(random(5), 30, false).map((r, i) => ({ ...r, timestampDelta: i * 3 })),
          {},
        ),
      ),
    )) as { records: unknown[] }
  ).records;
  assert.ok(onlyPlain.every((m) => m instanceof PlainRecordMessage));
  const summary = (b: BatchView): unknown => ({
    messages: b.messages.map(asRead),
    within: b.messagesWithinOffset.map(asRead),
    isEmpty: b.isEmpty(),
    isEmptyControlRecord: b.isEmptyControlRecord(),
    first: b.firstOffset(),
    last: b.lastOffset(),
    lag: b.offsetLag(),
    lagLow: b.offsetLagLow(),
  });
  const cases: [unknown, unknown[]][] = [
    ['1000', messages],
    ['1017', messages],
    ['1031', messages],
    ['5000', messages],
    [Long.fromValue('1010'), messages],
    ['1030', control.records],
    // Plain records only: kept whole at or below their first offset, filtered past it.
    ['1000', onlyPlain],
    [1000, onlyPlain],
    ['1017', onlyPlain],
  ];
  const aborted = [{ producerId: '-1', firstOffset: '1005' }];
  for (const [fetched, list] of cases) {
    for (const abortedTransactions of [[], undefined, aborted]) {
      const data = { partition: 2, highWatermark: '1040', abortedTransactions, messages: list };
      assert.deepStrictEqual(
        summary(new FastBatch('t', fetched, data)),
        summary(new OriginalBatch('t', fetched, data)),
        `fetched ${String(fetched)}, aborted ${JSON.stringify(abortedTransactions)}`,
      );
    }
  }
  // A fetch that keeps every record shares the fetched array instead of copying it twice.
  const whole = new FastBatch('t', '1000', {
    partition: 2,
    highWatermark: '1040',
    abortedTransactions: [],
    messages: onlyPlain,
  });
  assert.equal(whole.messages, onlyPlain);
  assert.equal(whole.messagesWithinOffset, onlyPlain);
  const cut = new FastBatch('t', '1017', {
    partition: 2,
    highWatermark: '1040',
    abortedTransactions: [],
    messages: onlyPlain,
  });
  assert.notEqual(cut.messages, onlyPlain);
  assert.equal(cut.messages.length, 13);
});

test("the reader's records read values in the fetch buffer: same records, no value Buffer made", async () => {
  // Plain records (timestamp deltas a number holds): every one is read by the fast path; values
  // plain flat rows, some null.
  const specs = records(random(11), 300, false).map((r, i) => ({
    ...r,
    timestampDelta: i * 7,
    value: r.value === null ? null : Buffer.from(JSON.stringify({ order_id: i, amount: (i * 37) % 101 })),
  }));
  const bytes = await batchBytes(specs, { firstOffset: '5000' });
  const fast = (await fastDecode(new Decoder(bytes))) as { records: KafkajsMessageFields[] };
  const original = kafkajsOriginals.recordBatchDecoder;
  assert.ok(original !== null);
  const slow = (await original(new Decoder(bytes) as never)) as { records: KafkajsMessageFields[] };
  assert.ok(fast.records.every((m) => m instanceof PlainRecordMessage));
  // What kafkajs's own messages give (plain objects: the general loop) for every floor.
  const plainRecord = (r: KafkaRecord): unknown => ({ offset: r.offsetNumber, key: r.key, value: r.value });
  for (const floor of [0, 5000, 5123, 5299, 5300]) {
    const fetched = recordsOfBatch(fast.records, floor);
    // The fast decoder's messages are the records: no second object per record, and no new array
    // when the whole batch is at or past the floor.
    assert.ok(fetched.every((r) => r instanceof PlainRecordMessage));
    if (floor <= 5000) assert.equal(fetched, fast.records);
    else assert.notEqual(fetched, fast.records);
    assert.deepStrictEqual(
      fetched.map(plainRecord),
      recordsOfBatch(slow.records, floor).map(plainRecord),
      `floor ${floor}`,
    );
    assert.deepEqual(
      fetched.map((r) => valueLength(r)),
      slow.records.filter((m) => Number(m.offset) >= floor).map((m) => m.value?.length ?? 0),
    );
  }
  // A batch mixing them with kafkajs's own messages keeps each as it is read.
  const mixed = [...slow.records.slice(0, 3), ...fast.records.slice(3, 6)];
  const both = recordsOfBatch(mixed, 5001);
  assert.deepStrictEqual(both.map(plainRecord), recordsOfBatch(slow.records.slice(1, 6), 0).map(plainRecord));
  assert.ok(both.slice(2).every((r) => r instanceof PlainRecordMessage));
  // A json source decodes them without asking for a value Buffer (a poison record's raw text would).
  const decoder = new RecordDecoder({
    format: 'json',
    columns: ['order_id', 'amount'],
    primaryKey: null,
    maxMessageBytes: 1 << 20,
    checkRow: () => null,
    typing: {
      typed: (row) => [(row.order_id ?? null) as Value, (row.amount ?? null) as Value],
      eventTime: null,
    },
  });
  const valueGetter = Object.getOwnPropertyDescriptor(PlainRecordMessage.prototype, 'value');
  assert.ok(valueGetter?.get !== undefined);
  let valuesMade = 0;
  Object.defineProperty(PlainRecordMessage.prototype, 'value', {
    configurable: true,
    get(this: PlainRecordMessage) {
      valuesMade += 1;
      return valueGetter.get?.call(this) as Buffer | null;
    },
  });
  try {
    let read = 0;
    for (const r of recordsOfBatch(fast.records, 0)) {
      const expected = slow.records[r.offsetNumber - 5000]?.value;
      if (expected === null || expected === undefined) {
        assert.throws(() => decoder.decodeTyped(r), /message has no value/);
        continue;
      }
      const parsed = JSON.parse(expected.toString()) as { order_id: number; amount: number };
      assert.deepEqual(decoder.decodeTyped(r), [parsed.order_id, parsed.amount]);
      read += 1;
    }
    assert.ok(read > 200, `read ${read}`);
    assert.equal(valuesMade, 0);
  } finally {
    Object.defineProperty(PlainRecordMessage.prototype, 'value', valueGetter);
  }
});
