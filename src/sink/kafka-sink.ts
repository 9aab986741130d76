// A Kafka sink: follows one view's stored changelog and writes each epoch's changes to a topic in
// one Kafka transaction together with the sink's progress (the epoch), so after any crash the topic
// holds every epoch exactly once for read-committed consumers. Progress lives in Kafka (committed
// atomically with the messages); the changelog in Sluice's store is what is replayed from it.
import { CONNECT_TIMEOUT_MS, withDeadline } from '../source/kafka/deadline.ts';
import { stringifyWire } from '../common/json-codec.ts';
import type {
  ConnectorLogger,
  KafkaOutMessage,
  KafkaTransactionalWriter,
} from '../source/kafka/kafka-client.ts';

export type SinkFormat = 'upsert' | 'debezium' | 'changelog';

export interface KafkaSinkConfig {
  readonly name: string;
  readonly view: string;
  readonly topic: string;
  readonly format: SinkFormat;
  /** Longest wait for the broker while connecting before an error and a retry (default 15 s). */
  readonly connectTimeoutMs?: number;
  /** The bootstrap brokers, for messages. */
  readonly brokers?: readonly string[];
}

/** One change of the wire `changes` message (values in wire JSON: bigints as strings). */
export interface WireChange {
  readonly op: '+I' | '-D' | '-U' | '+U';
  readonly row: Record<string, unknown>;
  readonly n?: number;
}

export interface EpochChanges {
  readonly epoch: number;
  readonly changes: readonly WireChange[];
}

/** What the sink needs from the server: the view's changelog, its snapshot, its key. */
export interface SinkFeed {
  /** The view's unique key columns, or null. */
  key(): readonly string[] | null;
  /** The last committed epoch. */
  committedEpoch(): number;
  /** Oldest epoch the stored changelog can still be read after. */
  horizon(): number;
  /** Stored changes of epochs in (after, upTo], oldest first, at most `limit` epochs. */
  read(after: number, upTo: number, limit: number): EpochChanges[];
  /** The view's rows at the committed epoch (for a sink that has written nothing yet). */
  snapshot(): { epoch: number; rows: readonly Record<string, unknown>[] };
}

export type SinkState = 'starting' | 'running' | 'retrying' | 'failed' | 'stopped';

export interface SinkStatus {
  readonly state: SinkState;
  readonly error: { readonly message: string; readonly at: string } | null;
  /** The last epoch committed to the topic. */
  readonly epoch: number | null;
  readonly lagEpochs: number | null;
  readonly messages: number;
  readonly transactions: number;
  readonly retries: number;
}

const PAGE = 64;
const MAX_BACKOFF_MS = 30_000;

export class KafkaSinkRunner {
  private state: SinkState = 'starting';
  private error: SinkStatus['error'] = null;
  private written: number | null = null;
  private writer: KafkaTransactionalWriter | null = null;
  private stopped = false;
  private busy = false;
  private wakeAgain = false;
  private retries = 0;
  private messages = 0;
  private transactions = 0;
  private backoffTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: KafkaSinkConfig,
    private readonly newWriter: () => KafkaTransactionalWriter,
    private readonly feed: SinkFeed,
    private readonly logger: ConnectorLogger,
  ) {}

  start(): void {
    this.wake();
  }

  /** New epochs were committed: write them (coalesced while a write is running). */
  wake(): void {
    if (this.stopped || this.state === 'failed') return;
    if (this.busy) {
      this.wakeAgain = true;
      return;
    }
    this.busy = true;
    void this.drain().finally(() => {
      this.busy = false;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.state !== 'failed') this.state = 'stopped';
    if (this.backoffTimer !== null) clearTimeout(this.backoffTimer);
    const writer = this.writer;
    this.writer = null;
    await writer?.close();
  }

  status(): SinkStatus {
    const committed = this.feed.committedEpoch();
    return {
      state: this.state,
      error: this.error,
      epoch: this.written,
      lagEpochs: this.written === null ? null : Math.max(0, committed - this.written),
      messages: this.messages,
      transactions: this.transactions,
      retries: this.retries,
    };
  }

  private async drain(): Promise<void> {
    try {
      if (this.writer === null) {
        const writer = this.newWriter();
        const deadlineMs = this.config.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
        const brokers = this.config.brokers?.join(',') ?? '';
        const noAnswer = (step: string) => () =>
          `no answer from ${brokers === '' ? 'the brokers' : `brokers ${brokers}`} within ${deadlineMs / 1000} s while ${step} (is it a reachable Kafka broker?)`;
        try {
          await withDeadline(writer.connect(), deadlineMs, noAnswer('connecting the producer'));
          if (this.stopped) {
            await writer.close();
            return;
          }
          this.writer = writer;
          this.written = await withDeadline(
            writer.committedEpoch(),
            deadlineMs,
            noAnswer('reading the progress'),
          );
        } catch (error) {
          // Not yet this.writer when connecting failed: close it here (retry closes this.writer).
          if (this.writer !== writer) void writer.close();
          throw error;
        }
        this.markRunning();
      }
      if (this.written === null) {
        // Nothing written yet: the view's current rows first, as the epoch they belong to.
        const snap = this.feed.snapshot();
        await this.write(
          snap.epoch,
          snap.rows.map((row) => ({ op: '+I', row })),
        );
      }
      for (;;) {
        if (this.stopped) return;
        const from = this.written as number;
        const upTo = this.feed.committedEpoch();
        if (from >= upTo) break;
        if (from < this.feed.horizon()) {
          this.fail(
            `sink "${this.config.name}" needs the changes of view "${this.config.view}" after epoch ${from}, but the changelog keeps them after epoch ${this.feed.horizon()} only`,
          );
          return;
        }
        const page = this.feed.read(from, upTo, PAGE);
        if (page.length === 0) {
          this.written = upTo; // no change of this view in between: nothing to write
          break;
        }
        for (const e of page) await this.write(e.epoch, e.changes);
      }
      this.markRunning();
    } catch (error) {
      this.retry(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private markRunning(): void {
    if (this.state === 'running' || this.state === 'failed' || this.stopped) return;
    if (this.retries > 0) this.logger.info({ sink: this.config.name }, 'Kafka sink writing again');
    this.state = 'running';
    this.error = null;
  }

  private async write(epoch: number, changes: readonly WireChange[]): Promise<void> {
    const writer = this.writer;
    if (writer === null) throw new Error('the sink is not connected');
    const messages = formatEpoch(this.config.format, epoch, changes, this.feed.key());
    await writer.writeEpoch(epoch, messages);
    this.written = epoch;
    this.messages += messages.length;
    this.transactions += 1;
  }

  private fail(message: string): void {
    this.state = 'failed';
    this.error = { message, at: new Date().toISOString() };
    this.logger.error({ sink: this.config.name, message }, 'Kafka sink stopped');
  }

  /**
   * A transaction failed or its outcome is unknown: drop the producer (a new one with the same
   * transactional id fences it and aborts what it left open) and resume from Kafka's progress.
   */
  private retry(error: Error): void {
    if (this.stopped) return;
    this.state = 'retrying';
    this.retries += 1;
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(8, this.retries - 1));
    this.error = { message: `${error.message}; retrying in ${delay} ms`, at: new Date().toISOString() };
    this.logger.warn(
      { sink: this.config.name, err: error, delayMs: delay },
      'Kafka sink cannot write; retrying',
    );
    const writer = this.writer;
    this.writer = null;
    this.written = null;
    void writer?.close();
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = null;
      this.wake();
    }, delay);
    this.backoffTimer.unref();
  }
}

/**
 * One epoch's changes as Kafka messages in the sink's format; each carries the epoch in a header.
 * Written by stringifyWire, so a jsonb value is JSON in the message, not a string holding it.
 */
export function formatEpoch(
  format: SinkFormat,
  epoch: number,
  changes: readonly WireChange[],
  key: readonly string[] | null,
): KafkaOutMessage[] {
  const headers = { 'sluice-epoch': String(epoch) };
  const keyOf = (row: Record<string, unknown>): string | null =>
    key === null ? null : stringifyWire(Object.fromEntries(key.map((k) => [k, row[k]])));
  const out: KafkaOutMessage[] = [];
  switch (format) {
    case 'changelog':
      for (const c of changes) {
        out.push({
          key: keyOf(c.row),
          value: stringifyWire({ epoch, op: c.op, row: c.row, ...(c.n !== undefined ? { n: c.n } : {}) }),
          headers,
        });
      }
      return out;
    case 'upsert':
      if (key === null) throw new Error('an upsert sink needs a view with a unique key');
      for (const c of changes) {
        // '-U' is followed by the '+U' of the same key in the same epoch: the upsert covers it.
        if (c.op === '-U') continue;
        out.push({ key: keyOf(c.row), value: c.op === '-D' ? null : stringifyWire(c.row), headers });
      }
      return out;
    case 'debezium': {
      const before = new Map<string, Record<string, unknown>>();
      for (const c of changes) if (c.op === '-U') before.set(keyOf(c.row) ?? stringifyWire(c.row), c.row);
      for (const c of changes) {
        const k = keyOf(c.row);
        const times = c.n ?? 1;
        for (let i = 0; i < Math.abs(times); i++) {
          if (c.op === '+I')
            out.push({ key: k, value: stringifyWire({ before: null, after: c.row, op: 'c' }), headers });
          else if (c.op === '-D')
            out.push({ key: k, value: stringifyWire({ before: c.row, after: null, op: 'd' }), headers });
          else if (c.op === '+U') {
            const old = before.get(k ?? stringifyWire(c.row)) ?? null;
            out.push({ key: k, value: stringifyWire({ before: old, after: c.row, op: 'u' }), headers });
          }
        }
      }
      return out;
    }
  }
}
