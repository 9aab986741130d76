// kafkajs behind the narrow interfaces of kafka-client.ts: a read-committed group consumer whose
// positions Sluice sets itself (seek at start, duplicates below them dropped), and a transactional
// producer that commits an epoch's messages together with the sink's progress (sendOffsets).
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { Admin, Consumer, ISocketFactory, Kafka, Producer } from 'kafkajs';
import { KafkaFrameGuard } from './frame-guard.ts';
import { loadKafkajs, PlainRecordMessage } from './kafkajs-fast-records.ts';
import type {
  HostCheck,
  KafkaOutMessage,
  KafkaReader,
  KafkaReaderConfig,
  KafkaRecord,
  KafkaTransactionalWriter,
  KafkaWriterConfig,
  PartitionWatermarks,
  RecordHandler,
} from './kafka-client.ts';
import { FETCH_BYTES_PER_PARTITION } from './kafka-client.ts';

/**
 * A broker connection whose incoming bytes are checked before the client library reads them
 * (frame-guard.ts), and whose data handlers cannot throw out of the socket: the library throws
 * synchronously on some malformed answers, which would be an uncaught exception that ends the
 * process. Either way the connection is destroyed with the reason, which the library reports as a
 * connection error (and `problem` keeps, for the connector's status).
 */
class GuardedSocket extends Socket {
  private readonly frames = new KafkaFrameGuard();

  constructor(
    private readonly peer: string,
    private readonly problem: (message: string) => void,
  ) {
    super();
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'data') return super.emit(event, ...args);
    const chunk = args[0];
    const wrong = chunk instanceof Uint8Array ? this.frames.feed(chunk) : null;
    if (wrong !== null) return this.cut(`broker ${this.peer}: ${wrong}`);
    try {
      return super.emit(event, ...args);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return this.cut(`broker ${this.peer} sent an answer the Kafka client cannot read: ${message}`);
    }
  }

  private cut(message: string): boolean {
    this.problem(message);
    this.destroy(new Error(message));
    return false;
  }
}

/**
 * A client's broker connections: what went wrong on them lately (a malformed answer), for error
 * messages, and every socket still open, so that closing the connector ends them all. The client
 * library's disconnect() can leave a connection open when it races a request or a rejoin in flight
 * (seen as a test process kept alive until the broker dropped the idle sockets ten minutes later).
 */
class ClientConnections {
  private last: { message: string; at: number } | null = null;
  private readonly open = new Set<Socket>();
  private closed = false;

  record(message: string): void {
    this.last = { message, at: Date.now() };
  }

  /** `error`, explained by a recent connection problem when there was one. */
  explain(error: unknown): Error {
    const base = error instanceof Error ? error : new Error(String(error));
    const last = this.last;
    if (last === null || Date.now() - last.at > 120_000) return base;
    return new Error(`${last.message} (${base.message})`);
  }

  /**
   * Sockets for the client library. Every connection it opens passes here, the ones to broker
   * addresses learnt from metadata included, so `allowHost` holds for those too: a cluster cannot
   * point the server at a host the allow-list refuses.
   */
  socketFactory(allowHost: HostCheck | undefined): ISocketFactory {
    return ({ host, port, onConnect }) => {
      const socket = new GuardedSocket(`${host}:${port}`, (m) => this.record(m));
      if (this.closed) {
        // A reconnect after close (a retry still running in the library): never opened.
        socket.destroy(new Error('the Kafka client was closed'));
        return socket;
      }
      if (allowHost !== undefined && !allowHost(host, port)) {
        const message = `broker address ${host}:${port} (advertised by the cluster's metadata) is not an allowed connector host`;
        this.record(message);
        // Destroyed before it connects; the error is emitted on a later tick, after the library
        // has attached its handlers, and it retries (and reports) like any failed connection.
        socket.destroy(new Error(message));
        return socket;
      }
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
      socket.connect({ host, port }, onConnect);
      socket.setKeepAlive(true, 60_000);
      return socket;
    };
  }

  /** Ends every connection still open and refuses new ones: the client is closed for good. */
  closeAll(): void {
    this.closed = true;
    // With an error, which the library hears: it then fails what is in flight and stops the
    // connection's timers. A plain destroy() it does not notice, and its request queue's 1 ms
    // re-check timer runs for ever, keeping the process alive.
    for (const socket of this.open) socket.destroy(new Error('the Kafka client was closed'));
    this.open.clear();
  }

  /** Connections open now (for tests). */
  get openCount(): number {
    return this.open.size;
  }
}

function client(
  brokers: readonly string[],
  clientId: string,
  connections: ClientConnections,
  allowHost: HostCheck | undefined,
): Kafka {
  // kafkajs with the faster record reading of kafkajs-fast-records.ts.
  const kafkajs = loadKafkajs();
  return new kafkajs.Kafka({
    clientId,
    brokers: [...brokers],
    logLevel: kafkajs.logLevel.NOTHING,
    // Fail fast and let the connector's own backoff (with a visible status) do the retrying.
    retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 },
    connectionTimeout: 3000,
    requestTimeout: 30000,
    socketFactory: connections.socketFactory(allowHost),
  });
}

/**
 * One admin request on a connection of its own, always disconnected afterwards: a kafkajs admin
 * whose disconnect() races a request in flight reconnects and stays open, so admins are never kept.
 */
async function withAdmin<T>(kafka: Kafka, call: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await call(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** The part of kafkajs's consumer message a record is made of. */
export interface KafkajsMessageFields {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/**
 * A fetched batch's messages as records, those below `floor` dropped (the caller's position: the
 * group's committed offsets may lag it, and each offset is handed over at most once per start).
 * Messages read by the fast decoder are records themselves (their value still in the fetch buffer,
 * their offset a number): when every one is at or past `floor`, the batch's own array is handed
 * over, with no object or array made per fetch.
 */
export function recordsOfBatch(
  messages: readonly KafkajsMessageFields[],
  floor: number,
): readonly KafkaRecord[] {
  let whole = true;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!(m instanceof PlainRecordMessage) || m.offsetNumber < floor) {
      whole = false;
      break;
    }
  }
  if (whole) return messages as readonly PlainRecordMessage[];
  const records: KafkaRecord[] = [];
  for (const m of messages) {
    if (m instanceof PlainRecordMessage) {
      if (m.offsetNumber >= floor) records.push(m);
      continue;
    }
    const offsetNumber = Number(m.offset);
    if (offsetNumber < floor) continue;
    records.push({ offsetNumber, key: m.key ?? null, value: m.value ?? null });
  }
  return records;
}

/**
 * How old the reader's cluster metadata may grow. Partitions added to the topic are found (and then
 * read) at a refresh: at kafkajs's default of 5 minutes, their records waited that long, unread and
 * not in the source's status.
 */
export const METADATA_MAX_AGE_MS = 10_000;

/** How long closing a reader waits for a progress commit in flight before cutting its connections. */
const COMMIT_WAIT_MS = 10_000;

/** Resolves when `p` settles or after `ms`, whichever is first; never rejects. */
async function withDeadlineOrNot(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * How often a pending record handler asks kafkajs to heartbeat. kafkajs sends one only when its
 * heartbeat interval (3 s by default) has passed since the last, so asking more often costs nothing.
 */
export const HANDLER_HEARTBEAT_MS = 1_000;

/**
 * Awaits `handled` while heartbeating the group. kafkajs heartbeats between fetches, not while
 * eachBatch awaits: a batch held (source-hold.ts: the tenant's state quota, its ingest rates) past
 * the session timeout got the member evicted and the group rebalanced (kafkajs joined again as a
 * new member once the handler returned; the records below the positions were still dropped, see
 * `next` below). A failed heartbeat (a rebalance already under way) is left to kafkajs, which
 * rejoins once the handler returns.
 */
async function whileHeartbeating(handled: Promise<void>, heartbeat: () => Promise<void>): Promise<void> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), HANDLER_HEARTBEAT_MS);
  try {
    await handled;
  } finally {
    clearInterval(timer);
  }
}

export class KafkajsReader implements KafkaReader {
  private readonly kafka: Kafka;
  private readonly connections = new ClientConnections();
  private consumer: Consumer | null = null;
  private closed = false;
  private committing: Promise<void> | null = null;

  constructor(private readonly config: KafkaReaderConfig) {
    this.kafka = client(config.brokers, config.clientId, this.connections, config.allowHost);
  }

  async watermarks(): Promise<PartitionWatermarks[]> {
    const offsets = await withAdmin(this.kafka, (admin) => admin.fetchTopicOffsets(this.config.topic)).catch(
      (error: unknown) => {
        throw this.connections.explain(error);
      },
    );
    return offsets
      .map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
      .sort((a, b) => a.partition - b.partition);
  }

  async start(
    from: ReadonlyMap<number, number>,
    onRecords: RecordHandler,
    onFailure: (error: Error) => void,
    onFetch?: () => void,
  ): Promise<void> {
    try {
      await this.startConsumer(
        from,
        onRecords,
        (error) => onFailure(this.connections.explain(error)),
        onFetch,
      );
    } catch (error) {
      throw this.connections.explain(error);
    }
  }

  private async startConsumer(
    from: ReadonlyMap<number, number>,
    onRecords: RecordHandler,
    onFailure: (error: Error) => void,
    onFetch?: () => void,
  ): Promise<void> {
    const topic = this.config.topic;
    const consumer = this.kafka.consumer({
      // A group of this start alone: with the stable group, a killed predecessor's membership would
      // hold every partition until its session timed out (30 s of no reading after each crash).
      // Positions live in Sluice, so nothing is lost; the stable group only reports progress.
      groupId: `${this.config.groupId}-r${randomBytes(4).toString('hex')}`,
      readUncommitted: false,
      sessionTimeout: this.config.sessionTimeoutMs ?? 30000,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
      metadataMaxAge: METADATA_MAX_AGE_MS,
      retry: { retries: 3, restartOnFailure: async () => false },
    });
    this.consumer = consumer;
    if (onFetch !== undefined) consumer.on(consumer.events.FETCH, () => onFetch());
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) onFailure(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    // Closed while connecting: close() could not stop a consumer that was not running yet.
    if (this.closed) {
      await consumer.disconnect();
      return;
    }
    // Records below the caller's positions (the group's committed offsets may lag them) are
    // dropped here, so each offset is handed over at most once per start.
    const next = new Map(from);
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({ batch, isRunning, isStale, heartbeat }) => {
        if (!isRunning() || isStale()) return;
        const floor = next.get(batch.partition) ?? 0;
        const records = recordsOfBatch(batch.messages, floor);
        const covered = Number(batch.lastOffset()) + 1;
        next.set(batch.partition, Math.max(floor, covered));
        await whileHeartbeating(
          onRecords(batch.partition, records, Number(batch.highWatermark), covered),
          heartbeat,
        );
      },
    });
    // A fetch holding only aborted records or transaction markers never reaches eachBatch; this event
    // still tells how far it went, so the position can move past them.
    consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
      const p = event.payload;
      const covered = Number(p.lastOffset) + 1;
      if (p.batchSize !== 0 || !Number.isSafeInteger(covered)) return;
      if (covered <= (next.get(p.partition) ?? 0)) return;
      next.set(p.partition, covered);
      void onRecords(p.partition, [], Number(p.highWatermark), covered);
    });
    for (const [partition, offset] of from) consumer.seek({ topic, partition, offset: String(offset) });
  }

  async commit(nextOffsets: ReadonlyMap<number, number>): Promise<void> {
    // One at a time: two group joins of the stable group would see each other as a running member.
    if (this.closed || nextOffsets.size === 0 || this.committing !== null) return;
    // The stable group has no members, so its offsets can be set directly (lag monitoring tools
    // read them as this source's progress).
    const committing = withAdmin(this.kafka, (admin) =>
      admin.setOffsets({
        groupId: this.config.groupId,
        topic: this.config.topic,
        partitions: [...nextOffsets].map(([partition, offset]) => ({ partition, offset: String(offset) })),
      }),
    ).finally(() => {
      this.committing = null;
    });
    this.committing = committing;
    await committing;
  }

  async close(): Promise<void> {
    this.closed = true;
    const consumer = this.consumer;
    this.consumer = null;
    await consumer?.disconnect().catch(() => undefined);
    // kafkajs's setOffsets runs a consumer of its own, which restarts for ever when its connection
    // is cut (it has no retry options to say otherwise): let a commit in flight finish first.
    const committing = this.committing;
    if (committing !== null) await withDeadlineOrNot(committing, COMMIT_WAIT_MS);
    this.connections.closeAll();
  }

  /** Broker connections still open (0 once closed). */
  get openConnections(): number {
    return this.connections.openCount;
  }
}

export class KafkajsTransactionalWriter implements KafkaTransactionalWriter {
  private readonly kafka: Kafka;
  private readonly connections = new ClientConnections();
  private producer: Producer | null = null;
  private closed = false;

  constructor(private readonly config: KafkaWriterConfig) {
    this.kafka = client(config.brokers, config.clientId, this.connections, config.allowHost);
  }

  async connect(): Promise<void> {
    const producer = this.kafka.producer({
      transactionalId: this.config.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 60000,
    });
    // Connecting (InitProducerId) fences an older producer with the same id and aborts its open
    // transaction, so nothing it wrote and did not commit ever becomes visible.
    await producer.connect().catch((error: unknown) => {
      throw this.connections.explain(error);
    });
    if (this.closed) {
      await producer.disconnect();
      throw new Error('the Kafka writer was closed');
    }
    this.producer = producer;
  }

  async committedEpoch(): Promise<number | null> {
    const groups = await withAdmin(this.kafka, (admin) =>
      admin.fetchOffsets({ groupId: this.config.progressGroupId, topics: [this.config.topic] }),
    ).catch((error: unknown) => {
      throw this.connections.explain(error);
    });
    const partition0 = groups[0]?.partitions.find((p) => p.partition === 0);
    if (partition0 === undefined) return null;
    const epoch = Number(partition0.offset);
    return Number.isSafeInteger(epoch) && epoch >= 0 ? epoch : null;
  }

  async writeEpoch(epoch: number, messages: readonly KafkaOutMessage[]): Promise<void> {
    const producer = this.required(this.producer);
    const transaction = await producer.transaction();
    try {
      if (messages.length > 0) {
        await transaction.send({
          topic: this.config.topic,
          messages: messages.map((m) => ({ key: m.key, value: m.value, headers: { ...m.headers } })),
        });
      }
      await transaction.sendOffsets({
        consumerGroupId: this.config.progressGroupId,
        topics: [{ topic: this.config.topic, partitions: [{ partition: 0, offset: String(epoch) }] }],
      });
      await transaction.commit();
    } catch (error) {
      // The outcome may be unknown (kafkajs does not implement KIP-890): abort what can be aborted;
      // the caller recreates the producer, which fences this one, and resumes from committedEpoch().
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect().catch(() => undefined);
    this.connections.closeAll();
  }

  /** Broker connections still open (0 once closed). */
  get openConnections(): number {
    return this.connections.openCount;
  }

  private required<T>(value: T | null): T {
    if (value === null) throw new Error('the Kafka writer is not connected');
    return value;
  }
}

/** Where a consumer group the server no longer uses is deleted (a dropped source's or sink's). */
export interface GroupDeletion {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly allowHost?: HostCheck;
}

/**
 * Deletes a consumer group from the cluster: true when deleted, false when the cluster had no such
 * group (nothing was ever committed to it). A group whose offsets are never deleted stays listed by
 * the broker, with a lag growing as its topic does, for `offsets.retention.minutes` (7 days by
 * default): every dropped source and sink left one behind.
 */
export async function deleteConsumerGroup(target: GroupDeletion, signal?: AbortSignal): Promise<boolean> {
  const connections = new ClientConnections();
  const kafka = client(target.brokers, target.clientId, connections, target.allowHost);
  // Aborted (the server is closing): its connections are cut, so what is in flight fails at once.
  const abort = (): void => connections.closeAll();
  if (signal?.aborted === true) abort();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    return await withAdmin(kafka, async (admin) => {
      try {
        await admin.deleteGroups([target.groupId]);
        return true;
      } catch (error) {
        const groups = (error as { groups?: readonly { error?: { type?: string } }[] }).groups;
        if (groups !== undefined && groups.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND')) return false;
        throw connections.explain(error);
      }
    });
  } finally {
    signal?.removeEventListener('abort', abort);
    connections.closeAll();
  }
}
