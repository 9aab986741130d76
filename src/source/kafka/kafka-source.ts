// A Kafka source's reading loop: records of every partition are decoded into row operations and cut
// into batches (max_batch_rows / max_batch_ms) bound to exact per-partition offset ranges; each batch
// is handed to `deliver`, which applies it synchronously (one epoch) together with the source's
// positions, in one transaction (the server's group commit: published once durable). Positions
// live in Sluice, not in the consumer group: a restart resumes from the delivered positions, so
// every record is applied exactly once. Poison records follow on_error.
// A pacer (the tenant's ingest rates) may hold a batch back: the source then reads nothing more until
// it is delivered — backpressure on the broker, never a dropped or skipped record.
// A batch whose epoch would make the views build more rows than the engine's bound is delivered in
// parts that fit (deliverInParts), each a prefix of every partition's records.
import { CONNECT_TIMEOUT_MS, withDeadline } from './deadline.ts';
import {
  type ConnectorLogger,
  type KafkaReader,
  type KafkaRecord,
  type PartitionWatermarks,
} from './kafka-client.ts';
import { PoisonRecord, rawText } from './record-decoder.ts';
import { SourceBatchFilling } from './source-batch-filling.ts';
import { SourceCounters, sourceStatus } from './source-counters.ts';
import { SourceHold } from './source-hold.ts';
import { startPositions } from './start-positions.ts';
import type {
  KafkaSourceConfig,
  SourceBatch,
  SourceError,
  SourcePacer,
  SourceState,
  SourceStatus,
} from './kafka-source-types.ts';

const MAX_BACKOFF_MS = 30_000;
/**
 * A batch is handed over once its records hold this many key and value bytes, whatever
 * max_batch_rows and max_batch_ms say: a batch is kept in memory until then, and a window of minutes
 * over large records (10,000 rows of 1 MiB is within the defaults' row bound) would hold gigabytes.
 */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024;

export class KafkaSourceRunner extends SourceBatchFilling {
  private state: SourceState = 'starting';
  private error: SourceError | null = null;
  /** Delivered positions: partition → next offset. */
  private readonly applied: Map<number, number>;
  private readonly high = new Map<number, number>();
  private reader: KafkaReader | null = null;
  private stopped = false;
  private retries = 0;
  private backoffTimer: NodeJS.Timeout | null = null;
  /**
   * Reading a backlog: a partition was behind its log end at the start, or a fetch stopped short of
   * it. The backlog's last batch is handed over once every partition is read to its end.
   */
  private catchingUp = false;
  private batchTimer: NodeJS.Timeout | null = null;
  /** A batch the pacer held back (source-hold.ts): reading waits on it. */
  private readonly hold: SourceHold;
  /** The pacer's batch bound, asked once per fetched chunk rather than once per record. */
  private bound: { readonly rows: number | null; readonly bytes: number | null } | null = null;
  private generation = 0;
  private readonly counters = new SourceCounters();
  private lastProgressReport = 0;

  constructor(
    config: KafkaSourceConfig,
    private readonly newReader: () => KafkaReader,
    stored: ReadonlyMap<number, number>,
    private readonly deliver: (batch: SourceBatch) => void,
    private readonly logger: ConnectorLogger,
    private readonly pacer: SourcePacer | null = null,
  ) {
    super(config);
    this.applied = new Map(stored);
    this.hold = new SourceHold(logger, { source: config.name, topic: config.topic });
  }

  start(): void {
    void this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation += 1;
    if (this.state !== 'failed') this.state = 'stopped';
    this.clearTimers();
    const reader = this.reader;
    this.reader = null;
    await reader?.close();
  }

  status(): SourceStatus {
    return sourceStatus(this.counters.read(), {
      state: this.state,
      error: this.error,
      topic: this.config.topic,
      applied: this.applied,
      high: this.high,
      retries: this.retries,
      rateWaits: this.hold.rateWaits,
      pausedAtStateQuota: this.hold.pausedAtStateQuota,
      stateQuotaPauses: this.hold.stateQuotaPauses,
    });
  }

  private async run(): Promise<void> {
    const generation = ++this.generation;
    const reader = this.newReader();
    this.reader = reader;
    const deadlineMs = this.config.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    const noAnswer = (step: string) => () =>
      `no answer from ${this.brokersText()} within ${deadlineMs / 1000} s while ${step} (is it a reachable Kafka broker?)`;
    try {
      const marks = await withDeadline(
        reader.watermarks(),
        deadlineMs,
        noAnswer('reading the topic offsets'),
      );
      // Stopped or superseded meanwhile: this attempt's reader must not outlive it.
      if (generation !== this.generation) {
        await reader.close();
        return;
      }
      const from = this.startPositions(marks);
      if (from === null) {
        await reader.close();
        return;
      }
      this.resetPending(from);
      this.catchingUp = [...from].some(([p, offset]) => offset < (this.high.get(p) ?? 0));
      await withDeadline(
        reader.start(
          from,
          async (partition, records, high, next) =>
            this.onRecords(generation, partition, records, high, next),
          (error) => this.retry(generation, error),
          () => {
            if (generation === this.generation) this.counters.fetched();
          },
        ),
        deadlineMs,
        noAnswer('joining the topic'),
      );
      if (generation !== this.generation) {
        await reader.close();
        return;
      }
      if (this.state !== 'failed') {
        this.state = 'running';
        if (this.retries > 0) this.logger.info({ source: this.config.name }, 'Kafka source reading again');
        this.error = null;
      }
    } catch (error) {
      this.retry(generation, error instanceof Error ? error : new Error(String(error)));
    }
  }

  private brokersText(): string {
    const b = this.config.brokers;
    return b === undefined || b.length === 0 ? 'the brokers' : `brokers ${b.join(',')}`;
  }

  /** Where each partition starts: the delivered position, else the `start` option. Null: failed. */
  private startPositions(marks: readonly PartitionWatermarks[]): Map<number, number> | null {
    for (const m of marks) this.high.set(m.partition, m.high);
    const plan = startPositions(marks, this.applied, this.config.start, this.config.topic);
    if ('error' in plan) {
      // Past the log's end: shown as the retry's error and checked again at each retry (never read
      // on silently; not failed for good, in case the broker's answer was only momentarily behind).
      if (plan.beyondEnd === true) throw new Error(plan.error);
      this.fail(plan.error, { partition: plan.partition, offset: plan.offset });
      return null;
    }
    for (const [partition, offset] of plan.from)
      if (!this.applied.has(partition)) this.applied.set(partition, offset);
    return plan.from;
  }

  private async onRecords(
    generation: number,
    partition: number,
    records: readonly KafkaRecord[],
    high: number,
    covered: number,
  ): Promise<void> {
    if (this.hold.waiting !== null) await this.hold.waiting;
    if (this.halted(generation)) return;
    this.high.set(partition, high);
    if (!this.pendingFrom.has(partition)) this.partitionAdded(partition, records, covered);
    const position = this.pendingNext.get(partition) ?? 0;
    if (high < position) {
      // The log now ends below what was read of it: the topic was deleted and recreated (or
      // truncated) while this attempt kept fetching, and the client went on from its own reset
      // position. A retry checks the positions against the log again, and says so (start-positions.ts).
      this.retry(
        generation,
        new Error(
          `partition ${partition} of topic "${this.config.topic}" now ends at ${high}, below offset ${position} already read`,
        ),
      );
      return;
    }
    this.bound = this.pacer === null ? null : this.pacer.bound();
    // A keyed source's upsert of a held key writes two rows (the old one out, the new one in).
    this.keepsTaken =
      this.config.epochMayPassBound?.(this.config.maxBatchRows * (this.keyed ? 2 : 1)) ?? false;
    if (this.typed) await this.takeTypedRecords(generation, partition, records);
    else
      for (const record of records) {
        // A held batch stops reading (the broker's fetches wait on this handler) until it is delivered.
        if (this.hold.waiting !== null) await this.hold.waiting;
        if (this.halted(generation)) return;
        this.takeRecord(generation, partition, record);
      }
    // The fetch also covered what read-committed filtered out (aborted records, markers): move past it.
    if (!this.halted(generation) && covered > (this.pendingNext.get(partition) ?? 0)) {
      this.pendingNext.set(partition, covered);
      this.pendingAdvance = true;
      this.batchTimer ??= setTimeout(() => this.flush(generation), this.config.maxBatchMs);
    }
    if (this.halted(generation)) return;
    // The end of a backlog: no record is there to join the batch, so max_batch_ms would only hold
    // the backlog's last epoch back (and a longer window would catch up later). A batch of a live
    // stream (every fetch reaching its partition's end) still waits for the window.
    if (covered < high) this.catchingUp = true;
    else if (this.catchingUp && this.readToEnd()) {
      this.catchingUp = false;
      this.flush(generation);
    }
  }

  /**
   * A partition the topic did not have when this reading attempt started (partitions were added;
   * the client finds them at its next metadata refresh and reads them from their first record).
   * Its range starts with the batch being filled: a batch's positions list only the partitions of
   * `pendingFrom`, so its first records were applied with no position saved, and read and applied
   * again after a restart.
   */
  private partitionAdded(partition: number, records: readonly KafkaRecord[], covered: number): void {
    const first = records.length > 0 ? (records[0] as KafkaRecord).offsetNumber : covered;
    const from = this.applied.get(partition) ?? first;
    this.pendingFrom.set(partition, from);
    if (!this.pendingNext.has(partition)) this.pendingNext.set(partition, from);
  }

  /** Every partition is read up to its log end as last fetched (nothing more to read just now). */
  private readToEnd(): boolean {
    for (const [p, high] of this.high) if ((this.pendingNext.get(p) ?? 0) < high) return false;
    return true;
  }

  /**
   * A typed `json` source's records of one fetched chunk: what `takeRecord` does for each, with the
   * partition's next offset kept in a local between flushes (the runner's own per-record work was
   * ≈ 100 ns, against ≈ 200 ns for reading and typing the record itself).
   */
  private async takeTypedRecords(
    generation: number,
    partition: number,
    records: readonly KafkaRecord[],
  ): Promise<void> {
    const decoder = this.decoder;
    const pendingNext = this.pendingNext;
    let i = 0;
    while (i < records.length) {
      // A held batch stops reading (the broker's fetches wait on this handler) until it is delivered.
      if (this.hold.waiting !== null) await this.hold.waiting;
      if (this.halted(generation)) return;
      // Up to the next flush (which reads and resets the positions) nothing else runs meanwhile.
      let next = pendingNext.get(partition) ?? 0;
      let flushed = false;
      while (i < records.length && !flushed) {
        const record = records[i++] as KafkaRecord;
        try {
          this.takeTyped(partition, decoder.decodeTyped(record));
        } catch (error) {
          pendingNext.set(partition, next);
          if (!this.poisoned(generation, partition, record, error)) return;
        }
        if (this.keepsTaken) this.keep(partition, record);
        if (record.offsetNumber + 1 > next) next = record.offsetNumber + 1;
        if (this.counted(generation, record)) {
          pendingNext.set(partition, next);
          this.flush(generation);
          flushed = true;
        }
      }
      if (!flushed) pendingNext.set(partition, next);
    }
  }

  private takeRecord(generation: number, partition: number, record: KafkaRecord): void {
    if (this.take(generation, partition, record) && this.counted(generation, record)) this.flush(generation);
  }

  /**
   * Counts a taken record into the pending batch: true when the batch is full (the caller notes the
   * partition's position and flushes), else the batch's timer runs.
   */
  private counted(generation: number, record: KafkaRecord): boolean {
    this.countIn(record);
    if (this.batchFull()) return true;
    if (this.batchTimer === null) {
      this.batchTimer = setTimeout(() => this.flush(generation), this.config.maxBatchMs);
    }
    return false;
  }

  /**
   * A record that cannot be read: kept as skipped (true: reading goes on), or, with on_error 'fail',
   * the source stops at it (false). Errors other than a PoisonRecord are rethrown.
   */
  protected poisoned(generation: number, partition: number, record: KafkaRecord, error: unknown): boolean {
    if (!(error instanceof PoisonRecord)) throw error;
    if (this.config.onError === 'fail') {
      // Everything before the poison record is applied (at once, not paced); the source stops at it.
      this.flush(generation, true);
      this.fail(
        `cannot read record at offset ${record.offsetNumber} of partition ${partition}: ${error.message}`,
        {
          partition,
          offset: record.offsetNumber,
          reason: error.message,
        },
      );
      void this.closeReader(generation);
      return false;
    }
    this.pendingSkipped.push({
      topic: this.config.topic,
      partition,
      offset: record.offsetNumber,
      reason: error.message,
      raw: rawText(record, this.config.rawLimit ?? 4096),
    });
    return true;
  }

  /**
   * The batch being filled is as large as max_batch_rows, as MAX_BATCH_BYTES, or as a batch under
   * the pacer's rates.
   */
  private batchFull(): boolean {
    const rows = this.pendingOps.size + this.pendingAppends.length + this.pendingTyped.length;
    if (rows >= this.config.maxBatchRows || this.pendingBytes >= MAX_BATCH_BYTES) return true;
    if (this.pacer === null) return false;
    const bound = this.bound ?? this.pacer.bound();
    return (
      (bound.rows !== null && rows + this.pendingSkipped.length >= bound.rows) ||
      (bound.bytes !== null && this.pendingBytes >= bound.bytes)
    );
  }

  /** This reading attempt was superseded, or the source stopped or failed (flush may fail it). */
  private halted(generation: number): boolean {
    return generation !== this.generation || this.stopped || this.state === 'failed';
  }

  /**
   * Hands the batch being filled to the engine (synchronously: one committed epoch), unless the pacer
   * holds it back (`unpaced`: a last batch before the source stops).
   */
  private flush(generation: number, unpaced = false): void {
    if (this.batchTimer !== null) {
      clearTimeout(this.batchTimer);
      this.batchTimer = null;
    }
    if (generation !== this.generation || (this.pendingRecords === 0 && !this.pendingAdvance)) return;
    const batch = this.pendingBatch();
    // Held back whole (nothing dropped), reading paused: for the tenant's ingest rates, or while its
    // state is at its state quota (source-hold.ts); asked again after the wait.
    if (
      this.pacer !== null &&
      !unpaced &&
      this.hold.mustWait(
        this.pacer,
        batch.upserts.length +
          (batch.typedUpserts?.length ?? 0) +
          batch.deletes.length +
          batch.skipped.length,
        this.pendingBytes,
        () => this.flush(generation),
      )
    )
      return;
    // A batch whose records were not all kept (a view joining the source appeared while it was
    // filled) is applied whole, as before the cut.
    const over = this.keptWhole() ? (this.config.epochOverBound?.(batch) ?? null) : null;
    if (over === null) this.deliverBatch(generation, batch);
    else this.deliverInParts(generation, over);
  }

  /** Hands a batch to the engine (one committed epoch); false: it failed, and the source with it. */
  private deliverBatch(generation: number, batch: SourceBatch): boolean {
    try {
      this.deliver(batch);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.fail(`cannot apply a batch of ${batch.records} records: ${message}`, {});
      void this.closeReader(generation);
      return false;
    }
    for (const [p, next] of this.pendingNext) this.applied.set(p, next);
    this.counters.delivered(batch.records, batch.skipped.length);
    for (const s of batch.skipped) {
      this.logger.warn(
        {
          source: this.config.name,
          topic: s.topic,
          partition: s.partition,
          offset: s.offset,
          reason: s.reason,
        },
        'skipped a Kafka record that cannot be read',
      );
    }
    this.resetPending(this.applied);
    this.hold.release();
    this.reportProgress();
    return true;
  }

  /**
   * Delivers the batch being filled, whose one epoch would pass the engine's bound, as several
   * epochs: the longest prefix of its records (halving) whose epoch fits, then the rest, cut again
   * if it must. A prefix of the records taken is a prefix of each partition's (a partition's records
   * are taken in offset order), so each part's positions are exact: nothing is lost or applied twice,
   * and a restart resumes after the last part delivered. A record whose epoch alone passes the bound
   * is applied alone, counted and logged: a source's data is never dropped for its cost.
   */
  private deliverInParts(
    generation: number,
    firstOver: { readonly rows: number; readonly view: string },
  ): void {
    const records = this.takenRecords.slice();
    const partitions = this.takenPartitions.slice();
    // Positions past the last record (read-committed filtered out the rest): the last part's.
    const end = new Map(this.pendingNext);
    if (records.length > 1) this.counters.split();
    let over: { readonly rows: number; readonly view: string } | null = firstOver;
    let start = 0;
    while (start < records.length) {
      // The batch being filled holds records [start, records.length) here.
      let length = records.length - start;
      while (over !== null && length > 1) {
        length = Math.ceil(length / 2);
        this.retake(generation, records, partitions, start, start + length, end, this.applied);
        over = this.config.epochOverBound?.(this.pendingBatch()) ?? null;
      }
      if (over !== null) this.oversized(over, partitions[start] as number, records[start] as KafkaRecord);
      if (!this.deliverBatch(generation, this.pendingBatch())) return;
      start += length;
      if (start === records.length) return;
      this.retake(generation, records, partitions, start, records.length, end, this.applied);
      over = this.config.epochOverBound?.(this.pendingBatch()) ?? null;
    }
  }

  /** A record whose epoch alone passes the engine's bound: applied whole, counted and logged. */
  private oversized(
    over: { readonly rows: number; readonly view: string },
    partition: number,
    record: KafkaRecord,
  ): void {
    this.counters.oversized();
    this.logger.warn(
      {
        source: this.config.name,
        topic: this.config.topic,
        partition,
        offset: record.offsetNumber,
        view: over.view,
        rows: over.rows,
      },
      `a Kafka record makes view "${over.view}" build ${over.rows} rows in one epoch, past the engine's bound; applied whole (one record cannot be cut)`,
    );
  }

  /** Group offsets for lag monitoring, at most once a second (a request of its own each time). */
  private reportProgress(): void {
    const now = performance.now();
    if (this.reader === null || now - this.lastProgressReport < 1000) return;
    this.lastProgressReport = now;
    void this.reader.commit(new Map(this.applied)).catch(() => undefined);
  }

  private fail(message: string, where: { partition?: number; offset?: number; reason?: string }): void {
    this.state = 'failed';
    this.error = { message, topic: this.config.topic, ...where, at: new Date().toISOString() };
    this.logger.error({ source: this.config.name, ...this.error }, 'Kafka source stopped');
  }

  /** The client gave up (broker down, topic gone): close, wait, read again from the delivered positions. */
  private retry(generation: number, error: Error): void {
    if (generation !== this.generation || this.stopped || this.state === 'failed') return;
    this.generation += 1;
    this.clearTimers();
    this.state = 'retrying';
    this.retries += 1;
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(8, this.retries - 1));
    this.error = {
      message: `${error.message}; retrying in ${delay} ms`,
      topic: this.config.topic,
      at: new Date().toISOString(),
    };
    this.logger.warn(
      { source: this.config.name, err: error, delayMs: delay },
      'Kafka source cannot read; retrying',
    );
    const reader = this.reader;
    this.reader = null;
    void reader?.close();
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = null;
      if (!this.stopped) void this.run();
    }, delay);
    this.backoffTimer.unref();
  }

  private async closeReader(generation: number): Promise<void> {
    if (generation !== this.generation) return;
    this.generation += 1;
    this.clearTimers();
    const reader = this.reader;
    this.reader = null;
    await reader?.close();
  }

  private clearTimers(): void {
    if (this.batchTimer !== null) clearTimeout(this.batchTimer);
    if (this.backoffTimer !== null) clearTimeout(this.backoffTimer);
    this.batchTimer = null;
    this.backoffTimer = null;
    // A handler waiting on a held batch returns (its attempt is over; the batch is read again).
    this.hold.clear();
  }
}
