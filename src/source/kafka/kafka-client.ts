// The narrow Kafka client interface the source and sink connectors are written against. Only
// kafkajs-client.ts knows the client library; swapping it (e.g. for @platformatic/kafka) touches
// that file alone. Offsets are plain numbers (exact up to 2^53, beyond any real topic's offsets).

/**
 * A fetched record as the source reads it. The Kafka client hands its own message objects over
 * when they have these fields (kafkajs-fast-records.ts's `PlainRecordMessage`: no second object per
 * record), so the offset, a number here, is `offsetNumber` (kafkajs's messages keep theirs, a
 * string, in `offset`).
 */
export interface KafkaRecord {
  readonly offsetNumber: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /**
   * Set on a record read straight from a fetch's bytes: its value is bytes [valueStart, valueEnd)
   * of this buffer (valueStart -1: no value), which a decoder can read without making `value`.
   */
  readonly fetched?: Buffer;
  readonly valueStart?: number;
  readonly valueEnd?: number;
}

/** A record's value length in bytes (0 when null), without making its value Buffer. */
export function valueLength(record: KafkaRecord): number {
  const fetched = record.fetched;
  if (fetched !== undefined) {
    const start = record.valueStart as number;
    return start < 0 ? 0 : (record.valueEnd as number) - start;
  }
  return record.value?.length ?? 0;
}

export interface PartitionWatermarks {
  readonly partition: number;
  /** The first offset still held (log start). */
  readonly low: number;
  /** The offset the next record will get (log end; the last stable offset for read-committed). */
  readonly high: number;
}

/**
 * The most one fetch brings of a partition, against kafkajs's 1 MiB (≈ 4 MiB for a 4-partition
 * answer): a backlog arrives in chunks of a few thousand records, so a chunk is read soon after its
 * bytes arrive instead of after several epochs have run. In paired catch-ups of 1,000,000 records the
 * server spent less CPU per event with it (median ≈ 7%, near the runs' spread; bench/README.md,
 * kafka-e2e.ts). A record batch larger than this still comes whole (the broker returns at least one),
 * so no message is too large for it. The bench's raw kafkajs peer reads with the same bound.
 */
export const FETCH_BYTES_PER_PARTITION = 256 * 1024;

export interface KafkaReaderConfig {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly groupId: string;
  readonly clientId: string;
  /** Consumer group session timeout: how long the broker waits before it calls us dead. */
  readonly sessionTimeoutMs?: number;
  /** Which hosts the client may open connections to, the addresses brokers advertise included. */
  readonly allowHost?: HostCheck;
}

/**
 * True when a connection to `host:port` is allowed. The bootstrap `brokers` are checked when the
 * connector is created; this also covers the addresses the cluster's metadata hands back.
 */
export type HostCheck = (host: string, port: number) => boolean;

/**
 * Fetched records of one partition, handed over in offset order; awaited (backpressure). `next` is
 * the offset after everything the fetch covered, including what read-committed filtered out
 * (aborted records, transaction markers), so a position can move past them. A fetch that held only
 * such records arrives with no records.
 */
export type RecordHandler = (
  partition: number,
  records: readonly KafkaRecord[],
  highWatermark: number,
  next: number,
) => Promise<void>;

/** Reads every partition of one topic, read-committed, from positions the caller owns. */
export interface KafkaReader {
  /** The topic's partitions and their watermarks; throws when the topic does not exist. */
  watermarks(): Promise<PartitionWatermarks[]>;
  /**
   * Starts reading at `from` (partition → next offset; partitions absent start at the log start)
   * and hands records to `onRecords`. Resolves once reading runs; `onFailure` is called when the
   * client gives up (the caller then closes and starts again with its own positions).
   */
  start(
    from: ReadonlyMap<number, number>,
    onRecords: RecordHandler,
    onFailure: (error: Error) => void,
    /** Every answered fetch, records or not: the broker is alive. */
    onFetch?: () => void,
  ): Promise<void>;
  /**
   * Records progress as the offsets of the (member-less) consumer group `groupId`, for lag
   * monitoring only: positions live in Sluice.
   */
  commit(next: ReadonlyMap<number, number>): Promise<void>;
  close(): Promise<void>;
}

export interface KafkaOutMessage {
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

export interface KafkaWriterConfig {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
  /** Same id across restarts: the broker fences a zombie producer and aborts its open transaction. */
  readonly transactionalId: string;
  /** Consumer group whose committed offset on partition 0 records the last epoch written. */
  readonly progressGroupId: string;
  /** Which hosts the client may open connections to, the addresses brokers advertise included. */
  readonly allowHost?: HostCheck;
}

/** Writes each epoch's messages and the sink's progress in one Kafka transaction. */
export interface KafkaTransactionalWriter {
  connect(): Promise<void>;
  /** The last epoch committed to the topic (from the progress group), or null when none. */
  committedEpoch(): Promise<number | null>;
  /**
   * One transaction: the messages, then progress = epoch; commits. On any error the transaction is
   * aborted (or its outcome is unknown): the caller recreates the writer and resumes from
   * `committedEpoch()`.
   */
  writeEpoch(epoch: number, messages: readonly KafkaOutMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** Where connectors report what happens to them (the server passes its pino logger). */
export interface ConnectorLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
