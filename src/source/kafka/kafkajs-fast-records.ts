// kafkajs, loaded with a faster reading of fetched record batches. kafkajs 2.2.4 decodes every
// record through a Decoder object of its own and turns its offset and timestamp into strings via
// BigInt-backed Longs (parse the batch's first offset, add the delta, print), and its consumer's
// Batch parses every offset again to compare it with the fetch position. The Kafka source's profile
// had those per-record Long conversions and the objects they leave behind at ≈ 10% of the server's
// thread (bench/README.md, kafka-e2e.ts). Here the record batch decoder and the Batch class are
// replaced, before kafkajs first loads them, by versions that read a record straight from the fetch
// buffer with plain numbers and hand back the same message objects (same fields, same strings).
// Anything outside the plain case — headers, offsets or timestamps beyond 2^53, a malformed record —
// is read by kafkajs's own code, so the output never differs (kafkajs-fast-records.test.ts compares
// both on encoded batches). With another kafkajs version, or when kafkajs was already loaded in the
// process (a test that uses kafkajs itself), what its loaded parts use is not replaced.
import Module, { createRequire } from 'node:module';

type KafkajsModule = typeof import('kafkajs');

/** The parts of kafkajs's protocol Decoder that the batch decoder uses (kafkajs/src/protocol/decoder.js). */
interface KDecoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readInt64(): { toString(): string };
  readVarIntBytes(): Buffer | null;
  readAll(): Buffer;
  slice(size: number): KDecoder;
  forward(size: number): void;
}
type KDecoderClass = new (buffer: Buffer) => KDecoder;

/** What the record batch context holds (kafkajs/src/protocol/recordBatch/v0/decoder.js). */
interface RecordContext {
  readonly firstOffset: string;
  readonly firstTimestamp: string;
  readonly partitionLeaderEpoch: number;
  readonly inTransaction: boolean;
  readonly isControlBatch: boolean;
  readonly lastOffsetDelta: number;
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly firstSequence: number;
  readonly maxTimestamp: string;
  readonly timestampType: number;
  readonly magicByte: number;
}

/** One decoded record as kafkajs hands it to its consumer (field for field what its decoder builds). */
export interface KafkajsRecordMessage {
  readonly magicByte: number;
  readonly attributes: number;
  readonly timestamp: string;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, unknown>;
  readonly isControlRecord: boolean;
  readonly batchContext: RecordContext;
}

/**
 * A plain record's message: kafkajs's fields, but its value, offset and timestamp strings and empty
 * headers are made only when read (kafkajs itself reads just the offset of a batch's last record;
 * the Kafka source reads none of them): the value stays bytes [valueStart, valueEnd) of the fetch
 * buffer, the offset and timestamp stay numbers. Reads give what kafkajs's own decoder builds. It is
 * also the source's `KafkaRecord` (kafka-client.ts) as it is: the reader hands these messages over
 * without a second object per record.
 */
export class PlainRecordMessage implements KafkajsRecordMessage {
  private valueBuffer: Buffer | null | undefined = undefined;

  constructor(
    readonly magicByte: number,
    readonly attributes: number,
    /** The timestamp as a number (create time), unless `appendTime` (log-append time) is set. */
    private readonly timestampNumber: number,
    private readonly appendTime: string | null,
    readonly offsetNumber: number,
    readonly key: Buffer | null,
    readonly fetched: Buffer,
    /** -1: the record has no value (null). */
    readonly valueStart: number,
    readonly valueEnd: number,
    readonly isControlRecord: boolean,
    readonly batchContext: RecordContext,
  ) {}

  get offset(): string {
    return String(this.offsetNumber);
  }

  get timestamp(): string {
    return this.appendTime ?? String(this.timestampNumber);
  }

  get value(): Buffer | null {
    if (this.valueBuffer === undefined) {
      this.valueBuffer = this.valueStart < 0 ? null : this.fetched.subarray(this.valueStart, this.valueEnd);
    }
    return this.valueBuffer;
  }

  get headers(): Record<string, unknown> {
    return {};
  }
}

type RecordDecodeFn = (decoder: KDecoder, context: RecordContext) => KafkajsRecordMessage;
export type RecordBatchDecodeFn = (
  fetchDecoder: KDecoder,
) => Promise<Omit<RecordContext, 'magicByte'> & { records: KafkajsRecordMessage[] }>;

interface Codec {
  decompress(buffer: Buffer): Promise<Buffer>;
}

const SUPPORTED_VERSION = '2.2.4';
const TIMESTAMP_TYPE_FLAG_MASK = 0x8;
const TRANSACTIONAL_FLAG_MASK = 0x10;
const CONTROL_FLAG_MASK = 0x20;
const LOG_APPEND_TIME = 1;
const CREATE_TIME = 0;
/** Seven varint bytes hold 49 bits: a timestamp delta that long is still exact as a number. */
const MAX_NUMBER_VARLONG_BYTES = 7;

/** Records read each way since load (for tests and the curious: the fallback should be rare). */
export const fastRecordCounts = { fast: 0, fallback: 0 };

const requireHere = createRequire(import.meta.url);

function kafkajsFile(path: string): string {
  return requireHere.resolve(`kafkajs/src/${path}`);
}

/** Puts `exports` in the CommonJS cache under `filename`, so that a later require() gets it. */
function seedModule(filename: string, exports: unknown): void {
  const seeded = new Module(filename);
  seeded.filename = filename;
  seeded.loaded = true;
  seeded.exports = exports;
  requireHere.cache[filename] = seeded;
}

/**
 * kafkajs's record decoding with plain numbers: `original` (kafkajs's own) reads any record the
 * plain path does not (headers, offsets beyond 2^53, a length that does not fit the buffer).
 */
export function makeRecordBatchDecoder(deps: {
  readonly Decoder: KDecoderClass;
  readonly originalRecord: RecordDecodeFn;
  readonly lookupCodecByAttributes: (attributes: number) => Codec | null | undefined;
  readonly PartialMessageError: new (message: string) => Error;
}): RecordBatchDecodeFn {
  const { Decoder, originalRecord, lookupCodecByAttributes, PartialMessageError } = deps;

  /** kafkajs's decodeRecord: the record's bytes in a Decoder of their own, then its record decoder. */
  const slowRecord = (decoder: KDecoder, context: RecordContext): KafkajsRecordMessage => {
    fastRecordCounts.fallback += 1;
    const recordBuffer = decoder.readVarIntBytes();
    return originalRecord(new Decoder(recordBuffer as Buffer), context);
  };

  const readRecords = (decoder: KDecoder, count: number, context: RecordContext): KafkajsRecordMessage[] => {
    const baseOffset = Number(context.firstOffset);
    const baseTimestamp = Number(context.firstTimestamp);
    const appendTime =
      context.timestampType === LOG_APPEND_TIME && context.maxTimestamp ? context.maxTimestamp : null;
    const plain = Number.isSafeInteger(baseOffset) && Number.isSafeInteger(baseTimestamp);
    const records = new Array<KafkajsRecordMessage>(count);
    for (let i = 0; i < count; i++) {
      const record = plain ? readPlainRecord(decoder, context, baseOffset, baseTimestamp, appendTime) : null;
      records[i] = record ?? slowRecord(decoder, context);
    }
    return records;
  };

  return async (fetchDecoder) => {
    // The batch header exactly as kafkajs reads it.
    const firstOffset = fetchDecoder.readInt64().toString();
    const length = fetchDecoder.readInt32();
    const decoder = fetchDecoder.slice(length);
    fetchDecoder.forward(length);
    const remainingBytes = Buffer.byteLength(decoder.buffer);
    if (remainingBytes < length) {
      throw new PartialMessageError(
        `Tried to decode a partial record batch: remainingBytes(${remainingBytes}) < recordBatchLength(${length})`,
      );
    }
    const partitionLeaderEpoch = decoder.readInt32();
    const magicByte = decoder.readInt8();
    decoder.readInt32(); // CRC, not checked (as kafkajs)
    const attributes = decoder.readInt16();
    const lastOffsetDelta = decoder.readInt32();
    const firstTimestamp = decoder.readInt64().toString();
    const maxTimestamp = decoder.readInt64().toString();
    const producerId = decoder.readInt64().toString();
    const producerEpoch = decoder.readInt16();
    const firstSequence = decoder.readInt32();
    const recordContext = {
      firstOffset,
      firstTimestamp,
      partitionLeaderEpoch,
      inTransaction: (attributes & TRANSACTIONAL_FLAG_MASK) > 0,
      isControlBatch: (attributes & CONTROL_FLAG_MASK) > 0,
      lastOffsetDelta,
      producerId,
      producerEpoch,
      firstSequence,
      maxTimestamp,
      timestampType: (attributes & TIMESTAMP_TYPE_FLAG_MASK) > 0 ? LOG_APPEND_TIME : CREATE_TIME,
    };
    const context: RecordContext = { ...recordContext, magicByte };
    const codec = lookupCodecByAttributes(attributes);
    let records: KafkajsRecordMessage[];
    if (!codec) {
      const count = decoder.readInt32();
      records = count === -1 ? [] : readRecords(decoder, count, context);
    } else {
      const count = decoder.readInt32();
      if (count <= 0) records = [];
      else {
        const decompressed = await codec.decompress(decoder.readAll());
        records = readRecords(new Decoder(decompressed), count, context);
      }
    }
    return { ...recordContext, records };
  };
}

/**
 * One record read from the decoder's buffer at its position with numbers; null (position unmoved)
 * when kafkajs's own decoder must read it: it has headers, a value beyond a number's exact range,
 * or bytes that do not fit its length.
 */
function readPlainRecord(
  decoder: KDecoder,
  context: RecordContext,
  baseOffset: number,
  baseTimestamp: number,
  appendTime: string | null,
): KafkajsRecordMessage | null {
  const b = decoder.buffer;
  let p = decoder.offset;
  // Varints as kafkajs reads them (zig-zag, 32-bit arithmetic).
  let byte: number;
  let raw = 0;
  let shift = 0;
  do {
    byte = b[p++] as number;
    raw += (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  const length = (raw >>> 1) ^ -(raw & 1);
  const start = p;
  const end = start + length;
  if (length < 1 || end > b.length) return null;
  const attributes = b.readInt8(p++);
  // The timestamp delta is a varlong: with at most 7 bytes it is exact as a number.
  let delta = 0;
  let scale = 1;
  let count = 0;
  do {
    if (count === MAX_NUMBER_VARLONG_BYTES) return null;
    byte = b[p++] as number;
    delta += (byte & 0x7f) * scale;
    scale *= 128;
    count++;
  } while (byte >= 0x80);
  const timestampDelta = delta % 2 === 0 ? delta / 2 : -(delta + 1) / 2;
  raw = 0;
  shift = 0;
  do {
    byte = b[p++] as number;
    raw += (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  const offsetDelta = (raw >>> 1) ^ -(raw & 1);
  raw = 0;
  shift = 0;
  do {
    byte = b[p++] as number;
    raw += (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  const keyLength = (raw >>> 1) ^ -(raw & 1);
  let key: Buffer | null = null;
  if (keyLength !== -1) {
    if (keyLength < 0 || p + keyLength > end) return null;
    key = b.slice(p, p + keyLength);
    p += keyLength;
  }
  raw = 0;
  shift = 0;
  do {
    byte = b[p++] as number;
    raw += (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  const valueLength = (raw >>> 1) ^ -(raw & 1);
  let valueStart = -1;
  if (valueLength !== -1) {
    if (valueLength < 0 || p + valueLength > end) return null;
    valueStart = p;
    p += valueLength;
  }
  // Headers: none (0, or -1 as kafkajs reads it) is the plain case.
  if (p >= end) return null;
  byte = b[p++] as number;
  if (byte !== 0 && byte !== 1) return null;
  const offset = baseOffset + offsetDelta;
  const timestamp = baseTimestamp + timestampDelta;
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(timestamp)) return null;
  decoder.offset = end;
  fastRecordCounts.fast += 1;
  return new PlainRecordMessage(
    context.magicByte,
    attributes,
    timestamp,
    appendTime,
    offset,
    key,
    b,
    valueStart,
    valueStart + valueLength,
    context.isControlBatch,
    context,
  );
}

interface KafkajsMessageLike {
  readonly offset: string;
}
interface PartitionDataLike {
  readonly messages: readonly KafkajsMessageLike[];
  readonly abortedTransactions?: unknown;
}
type BatchClass = new (
  topic: string,
  fetchedOffset: unknown,
  partitionData: PartitionDataLike,
) => {
  rawMessages: readonly KafkajsMessageLike[];
  messagesWithinOffset: readonly KafkajsMessageLike[];
  messages: readonly KafkajsMessageLike[];
};
type LongClass = {
  fromValue(value: unknown): { gte(other: unknown): boolean };
};

/**
 * kafkajs's consumer Batch whose filter of the records below the fetch position compares numbers
 * (kafkajs parses every record's offset into a Long for it); everything else is kafkajs's Batch.
 */
export function makeBatchClass(
  OriginalBatch: BatchClass,
  Long: LongClass,
  filterAbortedMessages: (args: {
    messages: readonly KafkajsMessageLike[];
    abortedTransactions: unknown;
  }) => readonly KafkajsMessageLike[],
): BatchClass {
  return class FastBatch extends OriginalBatch {
    constructor(topic: string, fetchedOffset: unknown, partitionData: PartitionDataLike) {
      super(topic, fetchedOffset, { ...partitionData, messages: [] });
      const messages = partitionData.messages;
      const floor =
        typeof fetchedOffset === 'string' || typeof fetchedOffset === 'number' ? Number(fetchedOffset) : NaN;
      const exact = Number.isSafeInteger(floor);
      this.rawMessages = messages;
      // Usually every record is a plain one at or past the fetch position, none is a control record
      // and no transaction was aborted: kafkajs's filters would copy the array twice to keep all of
      // it (two arrays as long as the fetch, ≈ 3% of the server's thread in the Kafka benchmark).
      // The same array is then every view of the batch; nothing in kafkajs writes to them.
      if (exact && noneAborted(partitionData.abortedTransactions) && allPlainFrom(messages, floor)) {
        this.messagesWithinOffset = messages;
        this.messages = messages;
        return;
      }
      const longFloor = Long.fromValue(fetchedOffset);
      this.messagesWithinOffset = messages.filter((message) => {
        const offset = !exact
          ? NaN
          : message instanceof PlainRecordMessage
            ? message.offsetNumber
            : Number(message.offset);
        if (Number.isSafeInteger(offset)) return offset >= floor;
        return Long.fromValue(message.offset).gte(longFloor);
      });
      this.messages = filterAbortedMessages({
        messages: this.messagesWithinOffset,
        abortedTransactions: partitionData.abortedTransactions,
      }).filter((message) => !(message as { isControlRecord?: boolean }).isControlRecord);
    }
  };
}

function noneAborted(abortedTransactions: unknown): boolean {
  return (
    abortedTransactions === undefined ||
    abortedTransactions === null ||
    (Array.isArray(abortedTransactions) && abortedTransactions.length === 0)
  );
}

/** Every message is a plain record (not a control record) whose offset is at least `floor`. */
function allPlainFrom(messages: readonly KafkajsMessageLike[], floor: number): boolean {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!(m instanceof PlainRecordMessage) || m.offsetNumber < floor || m.isControlRecord) return false;
  }
  return true;
}

/**
 * Which replacements are in place in this process. Each is made only before its user loads: the
 * record batch decoder before kafkajs's fetch decoding (loaded at the first fetch), the Batch before
 * kafkajs's consumer group (loaded with kafkajs itself); false: kafkajs's own runs.
 */
export const fastRecordsInstalled = { recordBatchDecoder: false, batch: false };
/** kafkajs's own record batch decoder and Batch, kept for comparison (tests). */
export const kafkajsOriginals: { recordBatchDecoder: RecordBatchDecodeFn | null; batch: BatchClass | null } =
  {
    recordBatchDecoder: null,
    batch: null,
  };

function install(): void {
  const version = (requireHere('kafkajs/package.json') as { version: string }).version;
  if (version !== SUPPORTED_VERSION) return;
  const batchDecoderFile = kafkajsFile('protocol/recordBatch/v0/decoder.js');
  const batchFile = kafkajsFile('consumer/batch.js');
  // A module already loaded holds kafkajs's own: replacing what it uses now would change nothing.
  const cache = requireHere.cache;
  if (cache[kafkajsFile('protocol/requests/fetch/v4/decodeMessages.js')] === undefined) {
    const Decoder = requireHere(kafkajsFile('protocol/decoder.js')) as KDecoderClass;
    const { lookupCodecByAttributes } = requireHere(kafkajsFile('protocol/message/compression/index.js')) as {
      lookupCodecByAttributes: (attributes: number) => Codec | null | undefined;
    };
    const { KafkaJSPartialMessageError } = requireHere(kafkajsFile('errors.js')) as {
      KafkaJSPartialMessageError: new (message: string) => Error;
    };
    const originalRecord = requireHere(
      kafkajsFile('protocol/recordBatch/record/v0/decoder.js'),
    ) as RecordDecodeFn;
    kafkajsOriginals.recordBatchDecoder = requireHere(batchDecoderFile) as RecordBatchDecodeFn;
    seedModule(
      batchDecoderFile,
      makeRecordBatchDecoder({
        Decoder,
        originalRecord,
        lookupCodecByAttributes,
        PartialMessageError: KafkaJSPartialMessageError,
      }),
    );
    fastRecordsInstalled.recordBatchDecoder = true;
  }
  if (cache[kafkajsFile('consumer/consumerGroup.js')] === undefined) {
    const Long = requireHere(kafkajsFile('utils/long.js')) as LongClass;
    const filterAbortedMessages = requireHere(kafkajsFile('consumer/filterAbortedMessages.js')) as Parameters<
      typeof makeBatchClass
    >[2];
    kafkajsOriginals.batch = requireHere(batchFile) as BatchClass;
    seedModule(batchFile, makeBatchClass(kafkajsOriginals.batch, Long, filterAbortedMessages));
    fastRecordsInstalled.batch = true;
  }
}

let kafkajs: KafkajsModule | null = null;

/** kafkajs, with the faster record reading installed first when it can be. */
export function loadKafkajs(): KafkajsModule {
  if (kafkajs !== null) return kafkajs;
  install();
  kafkajs = requireHere('kafkajs') as KafkajsModule;
  return kafkajs;
}
