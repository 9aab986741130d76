// The batch a Kafka source (kafka-source.ts) is filling: its records decoded into row operations
// (a keyed source keeps a key's last), typed rows, skipped records, per-partition offset ranges and
// event times, and the records themselves when the engine counts epochs, so that a batch past the
// engine's bound can be taken again in parts. The runner extends it with reading, pacing and
// delivery.
import type { Value } from '../../common/types.ts';
import { valueLength, type KafkaRecord } from './kafka-client.ts';
import { keyText, RecordDecoder, type RowOp } from './record-decoder.ts';
import type { KafkaSourceConfig, PartitionRange, SkippedRecord, SourceBatch } from './kafka-source-types.ts';

const NO_OPS: RowOp[] = [];

export abstract class SourceBatchFilling {
  protected readonly decoder: RecordDecoder;
  protected readonly keyed: boolean;
  protected pendingOps = new Map<unknown, RowOp>();
  protected pendingAppends: Record<string, unknown>[] = [];
  /** Rows of a typed `json` source (every record's row, in order; the engine keeps a key's last). */
  protected pendingTyped: (readonly Value[])[] = [];
  /** A `json` source whose decoder types rows itself (one validation per row, none in the engine). */
  protected readonly typed: boolean;
  protected pendingSkipped: SkippedRecord[] = [];
  protected pendingRecords = 0;
  /** Key and value bytes of the records of the batch being filled (the byte rate). */
  protected pendingBytes = 0;
  /** Positions moved past records read-committed filtered out (worth recording without rows). */
  protected pendingAdvance = false;
  protected pendingFrom = new Map<number, number>();
  protected readonly pendingNext = new Map<number, number>();
  /** Per partition, the largest event time of the batch being filled (sources with a watermark). */
  protected readonly pendingTimes = new Map<number, number>();
  /**
   * The records of the batch being filled and their partitions, in the order taken, kept only when
   * the engine counts epochs (`epochOverBound`): a batch past its bound is taken again from them in
   * parts (a keyed batch keeps only a key's last row, so its rows alone cannot be cut).
   */
  protected readonly takenRecords: KafkaRecord[] = [];
  protected readonly takenPartitions: number[] = [];
  /**
   * Whether the records taken are kept: asked per fetched chunk (`epochMayPassBound`), since keeping
   * a batch's records until its delivery costs the garbage collector (they outlive the young
   * generation) and most sources feed no view a batch could take past the bound.
   */
  protected keepsTaken = false;

  constructor(protected readonly config: KafkaSourceConfig) {
    this.decoder = new RecordDecoder(config.decode);
    this.keyed = config.decode.primaryKey !== null && config.decode.primaryKey.length > 0;
    this.typed =
      config.decode.format === 'json' && config.decode.typing !== undefined && config.decode.typing !== null;
  }

  /**
   * A record that cannot be read: kept as skipped (true: reading goes on), or, with on_error 'fail',
   * the source stops at it (false). Errors other than a PoisonRecord are rethrown.
   */
  protected abstract poisoned(
    generation: number,
    partition: number,
    record: KafkaRecord,
    error: unknown,
  ): boolean;

  /** Takes a record into the batch being filled; false: the source stopped at it (on_error 'fail'). */
  protected take(generation: number, partition: number, record: KafkaRecord): boolean {
    let ops: RowOp[] = NO_OPS;
    try {
      if (this.typed) this.takeTyped(partition, this.decoder.decodeTyped(record));
      else ops = this.decoder.decode(record);
    } catch (error) {
      if (!this.poisoned(generation, partition, record, error)) return false;
      ops = [];
    }
    for (const op of ops) this.addOp(op);
    const eventTime = this.config.eventTime;
    if (eventTime !== undefined && eventTime !== null) this.noteTimes(partition, ops, eventTime);
    this.pendingNext.set(partition, Math.max(record.offsetNumber + 1, this.pendingNext.get(partition) ?? 0));
    if (this.keepsTaken) this.keep(partition, record);
    return true;
  }

  protected keep(partition: number, record: KafkaRecord): void {
    this.takenRecords.push(record);
    this.takenPartitions.push(partition);
  }

  protected countIn(record: KafkaRecord): void {
    this.pendingRecords += 1;
    this.pendingBytes += (record.key?.length ?? 0) + valueLength(record);
  }

  protected takeTyped(partition: number, row: readonly Value[]): void {
    this.pendingTyped.push(row);
    const eventTime = this.config.decode.typing?.eventTime;
    if (eventTime === undefined || eventTime === null) return;
    const t = eventTime(row);
    const max = this.pendingTimes.get(partition);
    if (t !== null && (max === undefined || t > max)) this.pendingTimes.set(partition, t);
  }

  /** Raises the partition's largest event time by the upserted rows' (every record counts, even one a later one replaces). */
  protected noteTimes(
    partition: number,
    ops: readonly RowOp[],
    eventTime: (row: Record<string, unknown>) => number | null,
  ): void {
    for (const op of ops) {
      if (op.kind !== 'upsert') continue;
      const t = eventTime(op.row);
      const max = this.pendingTimes.get(partition);
      if (t !== null && (max === undefined || t > max)) this.pendingTimes.set(partition, t);
    }
  }

  protected addOp(op: RowOp): void {
    if (!this.keyed) {
      if (op.kind === 'upsert') this.pendingAppends.push(op.row);
      return;
    }
    // The decoder's identity is the key as the engine keys it ("01" and 1 are one bigint key).
    let key = op.identity;
    if (key === undefined) {
      const pk = this.config.decode.primaryKey as readonly string[];
      key = keyText(op.kind === 'upsert' ? op.row : op.key, pk);
    }
    // Only the last operation on a key within a batch counts (consolidation inside the batch).
    this.pendingOps.delete(key);
    this.pendingOps.set(key, op);
  }

  /** The batch being filled, with each partition's range [from, next). */
  protected pendingBatch(): SourceBatch {
    const partitions: Record<string, PartitionRange> = {};
    const timed = this.config.eventTime !== undefined && this.config.eventTime !== null;
    for (const [p, from] of this.pendingFrom) {
      const next = this.pendingNext.get(p) ?? from;
      partitions[String(p)] = timed
        ? { from, next, maxTime: this.pendingTimes.get(p) ?? null }
        : { from, next };
    }
    const upserts: Record<string, unknown>[] = [];
    const deletes: Record<string, unknown>[] = [];
    if (this.keyed) {
      for (const op of this.pendingOps.values()) {
        if (op.kind === 'upsert') upserts.push(op.row);
        else deletes.push(op.key);
      }
    } else upserts.push(...this.pendingAppends);
    return {
      upserts,
      ...(this.typed ? { typedUpserts: this.pendingTyped } : {}),
      deletes,
      positions: { topic: this.config.topic, partitions },
      skipped: this.pendingSkipped,
      records: this.pendingRecords,
    };
  }

  /**
   * Refills the batch being filled with records [from, to) from the positions `after`; the part
   * that ends the records ends at `end` (past records read-committed filtered out).
   */
  protected retake(
    generation: number,
    records: readonly KafkaRecord[],
    partitions: readonly number[],
    from: number,
    to: number,
    end: ReadonlyMap<number, number>,
    after: ReadonlyMap<number, number>,
  ): void {
    this.resetPending(after);
    for (let i = from; i < to; i++) {
      const record = records[i] as KafkaRecord;
      // Every record here was taken once already: one that cannot be read is skipped again.
      this.take(generation, partitions[i] as number, record);
      this.countIn(record);
    }
    if (to < records.length) return;
    for (const [p, next] of end) {
      if (next <= (this.pendingNext.get(p) ?? 0)) continue;
      this.pendingNext.set(p, next);
      this.pendingAdvance = true;
    }
  }

  /** Every record of the batch being filled was kept: it can be taken again in parts. */
  protected keptWhole(): boolean {
    return this.takenRecords.length > 0 && this.takenRecords.length === this.pendingRecords;
  }

  protected resetPending(from: ReadonlyMap<number, number>): void {
    this.pendingOps = new Map();
    this.pendingAppends = [];
    this.pendingTyped = [];
    this.pendingSkipped = [];
    this.pendingRecords = 0;
    this.pendingBytes = 0;
    this.pendingAdvance = false;
    this.pendingFrom = new Map(from);
    this.pendingNext.clear();
    this.pendingTimes.clear();
    this.takenRecords.length = 0;
    this.takenPartitions.length = 0;
    for (const [p, o] of from) this.pendingNext.set(p, o);
  }
}
