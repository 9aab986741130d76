// Runs the catalog's Kafka sources and sinks next to the engine: one reading loop per source, one
// writing loop per sink, started and stopped as CREATE/DROP statements commit. It owns no data: a
// source's batches are applied by the runtime (one committed epoch with the source's positions),
// a sink reads the view's stored changelog. Status and errors are kept here for REST and metrics.
import { SluiceError } from '../common/errors.ts';
import type { SinkInfo, SourceInfo } from '../exec/api.ts';
import type { RowTyping } from '../common/row-typing.ts';
import { KafkaSinkRunner, type SinkFeed, type SinkStatus } from '../sink/kafka-sink.ts';
import { ConnectorHosts } from '../source/kafka/connector-hosts.ts';
import type { ConnectorLogger, KafkaReader, KafkaTransactionalWriter } from '../source/kafka/kafka-client.ts';
import { withDeadline, CONNECT_TIMEOUT_MS } from '../source/kafka/deadline.ts';
import {
  deleteConsumerGroup,
  KafkajsReader,
  KafkajsTransactionalWriter,
} from '../source/kafka/kafkajs-client.ts';
import { KafkaSourceRunner } from '../source/kafka/kafka-source.ts';
import type { SourceBatch, SourcePacer, SourceStatus } from '../source/kafka/kafka-source-types.ts';

export interface ConnectorHost {
  /** Applies one source batch as one committed epoch, with its positions and skipped records. */
  applySourceBatch(source: string, incarnation: number, batch: SourceBatch): void;
  /** The source's delivered positions (partition → next offset) for this incarnation. */
  storedOffsets(source: string, incarnation: number): Map<number, number>;
  rowCheck(source: string): (row: Record<string, unknown>) => string | null;
  /** The source's typing of decoded rows (validated once, by the decoder); null: rows go as objects. */
  rowTyping(source: string): RowTyping | null;
  /** A keyed source's key identity (one per key its typing reads as one); throws when a key does not fit. */
  keyIdentity(source: string): (key: Record<string, unknown>) => unknown;
  /** A source with a WATERMARK: a row's event time in µs (null: none); null for other sources. */
  eventTime(source: string): ((row: Record<string, unknown>) => number | null) | null;
  /**
   * Rows a batch's epoch would make the views build, when past the engine's bound (null: fits):
   * the source then cuts it into epochs that fit.
   */
  epochOverBound(source: string, batch: SourceBatch): { readonly rows: number; readonly view: string } | null;
  /** Whether an epoch of `rows` rows to the source could pass the engine's bound (counts alone). */
  epochMayPassBound(source: string, rows: number): boolean;
  sinkFeed(sink: SinkInfo): SinkFeed;
  /** Paces every source's batches (the tenant's ingest rates). */
  readonly pacer: SourcePacer;
}

interface RunningSource {
  readonly sql: string;
  readonly incarnation: number;
  readonly info: SourceInfo;
  readonly runner: KafkaSourceRunner;
}

interface RunningSink {
  readonly sql: string;
  readonly incarnation: number;
  readonly info: SinkInfo;
  readonly runner: KafkaSinkRunner;
}

export interface SourceReport {
  readonly name: string;
  readonly topic: string;
  readonly format: string;
  readonly onError: string;
  readonly status: SourceStatus;
}

export interface SinkReport {
  readonly name: string;
  readonly view: string;
  readonly topic: string;
  readonly format: string;
  readonly status: SinkStatus;
}

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * The connector-host allow-list once recovery rebuilt the catalog: `configured` (--connector-hosts),
 * or by default loopback plus the broker hosts of the sources and sinks recovered.
 */
export function connectorHostsAfterRecovery(
  configured: readonly string[] | null,
  catalog: { readonly sources: readonly SourceInfo[]; readonly sinks: readonly SinkInfo[] },
): ConnectorHosts {
  const brokers = [...catalog.sources, ...catalog.sinks].flatMap((c) => c.options.brokers);
  return ConnectorHosts.create(configured, brokers);
}

/**
 * Consumer groups named `sluice-…` are the server's own: a source's default group and a sink's
 * progress group (`sluice-<instance>-sink-<name>-<n>-progress`, which a broker lists to anyone). A
 * source naming one in `group_id` would join it, and a sink whose progress group another consumer
 * commits to could skip or repeat epochs after a restart.
 */
export const RESERVED_GROUP_PREFIX = 'sluice-';

/**
 * The longest `group_id` a source can run with, in UTF-8 bytes. Kafka's protocol writes a group id
 * as a string of at most 32,767 bytes, and each reading attempt joins `<group_id>-r<8 hex digits>`
 * (kafkajs-client.ts): a longer id was accepted and then retried for ever ("Failed to find group
 * coordinator"), a source the server took but could never run.
 */
export const MAX_GROUP_ID_BYTES = 32_767 - '-r00000000'.length;

/**
 * The check of a CREATE SOURCE/SINK asked for: brokers the allow-list refuses, or a `group_id` in
 * the server's reserved names; null when neither.
 */
export function connectorError(
  hosts: ConnectorHosts,
  connector: { readonly brokers: readonly string[]; readonly groupId?: string },
): { error: SluiceError; option: 'brokers' | 'group_id' } | null {
  const refused = hosts.refused(connector.brokers);
  if (refused !== null) {
    const error = new SluiceError(
      'FORBIDDEN_BROKER',
      `broker "${refused}" is not an allowed connector host`,
      {
        hint: hosts.hintFor(refused),
      },
    );
    return { error, option: 'brokers' };
  }
  const group = connector.groupId;
  const groupBytes = group === undefined ? 0 : Buffer.byteLength(group, 'utf8');
  if (groupBytes > MAX_GROUP_ID_BYTES) {
    const error = new SluiceError(
      'INVALID_OPTION',
      `consumer group id of ${groupBytes} bytes is too long: at most ${MAX_GROUP_ID_BYTES} bytes (UTF-8)`,
      { hint: "Kafka's protocol carries a group id of at most 32,767 bytes; the source adds a suffix of 10" },
    );
    return { error, option: 'group_id' };
  }
  if (group !== undefined && group.toLowerCase().startsWith(RESERVED_GROUP_PREFIX)) {
    const error = new SluiceError(
      'INVALID_OPTION',
      `consumer group "${group}" is reserved: names beginning "${RESERVED_GROUP_PREFIX}" are the server's own groups`,
      { hint: 'name a group of your own, or leave group_id out (the source then uses one of its own)' },
    );
    return { error, option: 'group_id' };
  }
  return null;
}

function refusedMessage(hosts: ConnectorHosts, broker: string): string {
  return `broker "${broker}" is not an allowed connector host (${hosts.hintFor(broker)})`;
}

/** Stands in for a client whose brokers are not allowed (a connector recovered under a narrower list). */
class RefusedReader implements KafkaReader {
  constructor(private readonly message: string) {}
  watermarks(): Promise<never> {
    return Promise.reject(new Error(this.message));
  }
  start(): Promise<never> {
    return Promise.reject(new Error(this.message));
  }
  async commit(): Promise<void> {}
  async close(): Promise<void> {}
}

class RefusedWriter implements KafkaTransactionalWriter {
  constructor(private readonly message: string) {}
  connect(): Promise<never> {
    return Promise.reject(new Error(this.message));
  }
  committedEpoch(): Promise<never> {
    return Promise.reject(new Error(this.message));
  }
  writeEpoch(): Promise<never> {
    return Promise.reject(new Error(this.message));
  }
  async close(): Promise<void> {}
}

export class ConnectorManager {
  private readonly sources = new Map<string, RunningSource>();
  private readonly sinks = new Map<string, RunningSink>();
  /** Consumer groups of dropped connectors being deleted (close() waits for them). */
  private readonly retiring = new Set<Promise<void>>();
  /** Cuts the deletions still running when the server closes (a broker that is down cannot hold it). */
  private readonly closing = new AbortController();
  private closed = false;

  constructor(
    private readonly host: ConnectorHost,
    private readonly logger: ConnectorLogger,
    /** Distinguishes this data directory's consumer groups and transactional ids from others'. */
    private readonly instanceId: string,
    /** Checked again before connecting: a connector recovered under a narrower list never connects. */
    private readonly hosts: ConnectorHosts,
    /** Longest wait for a broker while connecting (default 15 s; tests shorten it). */
    private readonly connectTimeoutMs?: number,
  ) {}

  /** Starts what the catalog has and this does not run, stops what the catalog no longer has. */
  sync(
    sources: readonly SourceInfo[],
    sinks: readonly SinkInfo[],
    incarnationOf: (name: string) => number,
  ): void {
    if (this.closed) return;
    for (const [name, running] of this.sources) {
      const info = sources.find((s) => s.name === name);
      if (info === undefined || info.sql !== running.sql || incarnationOf(name) !== running.incarnation) {
        this.sources.delete(name);
        // A group named by the user is theirs to keep; the server's own one only this source read.
        const own = running.info.options.groupId === undefined;
        const group = own ? this.sourceGroupId(name, running.incarnation) : null;
        this.retire(running.runner.stop(), group, running.info.options.brokers, `source ${name}`);
      }
    }
    for (const info of sources)
      if (!this.sources.has(info.name)) this.startSource(info, incarnationOf(info.name));
    for (const [name, running] of this.sinks) {
      const info = sinks.find((s) => s.name === name);
      if (info === undefined || info.sql !== running.sql || incarnationOf(name) !== running.incarnation) {
        this.sinks.delete(name);
        const group = `${this.sinkId(name, running.incarnation)}-progress`;
        this.retire(running.runner.stop(), group, running.info.options.brokers, `sink ${name}`);
      }
    }
    for (const info of sinks) if (!this.sinks.has(info.name)) this.startSink(info, incarnationOf(info.name));
  }

  /** New epochs committed: sinks write them. */
  committed(): void {
    for (const s of this.sinks.values()) s.runner.wake();
  }

  sourceReports(): SourceReport[] {
    return [...this.sources.entries()].map(([name, s]) => ({
      name,
      topic: s.info.options.topic,
      format: s.info.options.format,
      onError: s.info.options.onError,
      status: s.runner.status(),
    }));
  }

  sinkReports(): SinkReport[] {
    return [...this.sinks.entries()].map(([name, s]) => ({
      name,
      view: s.info.view,
      topic: s.info.options.topic,
      format: s.info.options.format,
      status: s.runner.status(),
    }));
  }

  /** The oldest epoch a sink still needs from a view's changelog (retention must keep after it). */
  sinkFloor(view: string): number | null {
    let floor: number | null = null;
    for (const s of this.sinks.values()) {
      if (s.info.view !== view) continue;
      const epoch = s.runner.status().epoch;
      if (epoch !== null && (floor === null || epoch < floor)) floor = epoch;
    }
    return floor;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const stops = [...this.sources.values()].map((s) => s.runner.stop());
    stops.push(...[...this.sinks.values()].map((s) => s.runner.stop()));
    this.sources.clear();
    this.sinks.clear();
    await Promise.allSettled([...stops, ...this.retiring]);
  }

  /** The consumer group a source reports its progress to unless `group_id` names one. */
  private sourceGroupId(name: string, incarnation: number): string {
    return `sluice-${this.instanceId}-${name}-${incarnation}`;
  }

  /** A sink's transactional id (its progress group adds `-progress`). */
  private sinkId(name: string, incarnation: number): string {
    // A sink created again (even with the same SQL) starts afresh: its own producer and progress.
    return `sluice-${this.instanceId}-sink-${name}-${incarnation}`;
  }

  /**
   * Once a dropped connector's runner stopped, deletes its consumer group from the cluster (when
   * `group` is the server's own): nothing reads or commits it again, and left there it is listed by
   * the broker, with a lag that grows with its topic, until offsets retention (7 days by default).
   * Not at shutdown (close() stops runners, the catalog still has them). A failure is logged only.
   */
  private retire(
    stopped: Promise<void>,
    group: string | null,
    brokers: readonly string[],
    what: string,
  ): void {
    if (group === null || this.hosts.refused(brokers) !== null) {
      void stopped;
      return;
    }
    const deadlineMs = this.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    const retiring = stopped
      .then(() =>
        withDeadline(
          deleteConsumerGroup(
            {
              brokers,
              clientId: 'sluice-retire',
              groupId: group,
              allowHost: (host, port) => this.hosts.allows(host, port),
            },
            this.closing.signal,
          ),
          deadlineMs,
          () =>
            `no answer from brokers ${brokers[0] ?? ''}${brokers.length > 1 ? ` (and ${brokers.length - 1} more)` : ''} within ${deadlineMs / 1000} s`,
        ),
      )
      .then(
        () => undefined,
        (error: unknown) => {
          this.logger.warn(
            { connector: what, group, err: error },
            'could not delete the consumer group of a dropped connector; the broker drops it after its offsets retention',
          );
        },
      )
      .finally(() => this.retiring.delete(retiring));
    this.retiring.add(retiring);
  }

  private startSource(info: SourceInfo, incarnation: number): void {
    const o = info.options;
    const runner = new KafkaSourceRunner(
      {
        name: info.name,
        topic: o.topic,
        maxBatchRows: o.maxBatchRows,
        maxBatchMs: o.maxBatchMs,
        onError: o.onError,
        start: o.start,
        brokers: o.brokers,
        ...(this.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.connectTimeoutMs } : {}),
        eventTime: this.host.eventTime(info.name),
        epochOverBound: (batch) => this.host.epochOverBound(info.name, batch),
        epochMayPassBound: (rows) => this.host.epochMayPassBound(info.name, rows),
        decode: {
          format: o.format,
          columns: info.columns.map((c) => c.name),
          primaryKey: info.primaryKey,
          maxMessageBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
          checkRow: this.host.rowCheck(info.name),
          typing: o.format === 'json' ? this.host.rowTyping(info.name) : null,
          keyIdentity: (info.primaryKey ?? []).length === 0 ? null : this.host.keyIdentity(info.name),
        },
      },
      () => {
        const refused = this.hosts.refused(o.brokers);
        if (refused !== null) return new RefusedReader(refusedMessage(this.hosts, refused));
        return new KafkajsReader({
          brokers: o.brokers,
          topic: o.topic,
          groupId: o.groupId ?? this.sourceGroupId(info.name, incarnation),
          clientId: `sluice-source-${info.name}`,
          allowHost: (host, port) => this.hosts.allows(host, port),
        });
      },
      this.host.storedOffsets(info.name, incarnation),
      (batch) => this.host.applySourceBatch(info.name, incarnation, batch),
      this.logger,
      this.host.pacer,
    );
    this.sources.set(info.name, { sql: info.sql, incarnation, info, runner });
    runner.start();
  }

  private startSink(info: SinkInfo, incarnation: number): void {
    const o = info.options;
    const id = this.sinkId(info.name, incarnation);
    const runner = new KafkaSinkRunner(
      {
        name: info.name,
        view: info.view,
        topic: o.topic,
        format: o.format,
        brokers: o.brokers,
        ...(this.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.connectTimeoutMs } : {}),
      },
      () => {
        const refused = this.hosts.refused(o.brokers);
        if (refused !== null) return new RefusedWriter(refusedMessage(this.hosts, refused));
        return new KafkajsTransactionalWriter({
          brokers: o.brokers,
          topic: o.topic,
          clientId: `sluice-sink-${info.name}`,
          transactionalId: id,
          progressGroupId: `${id}-progress`,
          allowHost: (host, port) => this.hosts.allows(host, port),
        });
      },
      this.host.sinkFeed(info),
      this.logger,
    );
    this.sinks.set(info.name, { sql: info.sql, incarnation, info, runner });
    runner.start();
  }
}
