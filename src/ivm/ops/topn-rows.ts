// The state of a Top-N: partition key → its SortedPartition, each input row held once (a reference
// to the row, its image and, when it has copies, its multiplicity), and the checkpoint delta of it,
// written in the entry format of the arrangement it replaces (one entry per distinct row).
import { arrangedEntryId, type StoredRow as StoredArrangedRow } from '../arrangement.ts';
import type { Value } from '../../common/types.ts';
import { encodeExactValues, encodeOne, encodeValues, singleKey } from '../../common/values.ts';
import { ArrangementDelta, type Upserts } from '../arrangement-delta.ts';
import { PartitionTable } from './topn-partition-table.ts';
import type { KeyImage } from './topn-key-image.ts';
import { SortedPartition, type RowCompare } from './topn-partition.ts';

/** A partition's key: '' without PARTITION BY, one column's key, or the columns' encoding. */
export type PartitionKey = Value;

/** The entry format of an Arrangement, keyed by its key text. */
type StoredRow = StoredArrangedRow<string, readonly Value[]>;

const ENTRY_PREFIX = 't';

export class TopNRows extends ArrangementDelta {
  readonly partitions = new PartitionTable();
  /** Distinct rows held, and their approximate bytes (the row arrays, often shared with the input). */
  private rowCount = 0;
  private rowBytes = 0;
  /** Entry id → the partition and row whose multiplicity changed since the last delta. */
  private readonly dirty = new Map<string, { readonly key: PartitionKey; readonly row: readonly Value[] }>();
  /** Whether new partitions keep images (false: the ORDER BY has no first key). */
  private readonly withImages: boolean;

  constructor(
    private readonly partitionBy: readonly number[],
    private readonly compare: RowCompare,
    private readonly image: KeyImage,
    hasOrder: boolean,
  ) {
    super();
    this.withImages = hasOrder;
  }

  partitionOf(row: readonly Value[]): PartitionKey {
    const by = this.partitionBy;
    if (by.length === 0) return '';
    if (by.length === 1) return singleKey(row[by[0] as number] as Value);
    return encodeValues(row, by);
  }

  /** The partition of `key`, created empty when absent. */
  partition(key: PartitionKey): SortedPartition {
    let part = this.partitions.get(key);
    if (part === undefined) {
      part = new SortedPartition(this.withImages);
      this.partitions.set(key, part);
    }
    return part;
  }

  /**
   * Records a change of `row`'s multiplicity in partition `key`: `distinct` +1 when it is new, -1 when
   * it left, 0 otherwise (`row`: the kept row, which names the entry).
   */
  changed(key: PartitionKey, row: readonly Value[], distinct: number): void {
    if (distinct !== 0) {
      this.rowCount += distinct;
      this.rowBytes += distinct * (32 + 8 * row.length);
    }
    if (this.tracking) this.dirty.set(this.entryId(this.keyId(key), row), { key, row });
  }

  /** Drops a partition left empty (after all of an epoch's changes to it). */
  dropIfEmpty(key: PartitionKey, part: SortedPartition): void {
    if (part.length === 0) this.partitions.delete(key);
  }

  /** Distinct rows held. */
  get size(): number {
    return this.rowCount;
  }

  /** Approximate heap bytes: the partitions' arrays, the map and the rows. */
  stateBytes(): number {
    let bytes = this.rowBytes + 48 * this.partitions.size;
    for (const part of this.partitions.values()) bytes += part.bytes();
    return bytes;
  }

  /** Replaces the state with entries `takeDelta` wrote; each partition is sorted again. */
  load(values: Iterable<unknown>): void {
    this.partitions.clear();
    this.rowCount = 0;
    this.rowBytes = 0;
    const byKey = new Map<PartitionKey, { row: readonly Value[]; count: number }[]>();
    for (const value of values) {
      const e = value as StoredRow;
      const key = this.partitionOf(e.r);
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [{ row: e.r, count: e.c }]);
      else list.push({ row: e.r, count: e.c });
      this.rowCount += 1;
      this.rowBytes += 32 + 8 * e.r.length;
    }
    const compare = this.compare;
    for (const [key, list] of byKey) {
      list.sort((a, b) => compare(a.row, b.row));
      const part = new SortedPartition(this.withImages);
      part.fill(
        list.map((e) => e.row),
        list.map((e) => e.count),
        this.withImages ? this.image : null,
      );
      this.partitions.set(key, part);
    }
    this.markLoaded();
  }

  protected exportAll(upserts: Upserts): void {
    for (const [key, part] of this.partitions.entries()) {
      part.settle(this.compare);
      const k = this.keyId(key);
      for (let i = 0; i < part.length; i++) {
        const row = part.rows[i] as readonly Value[];
        upserts.push([this.entryId(k, row), stored(k, row, part.count(i))]);
      }
    }
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const [id, { key, row }] of this.dirty) {
      const part = this.partitions.get(key);
      const f = part?.keys === null ? NaN : this.image(row);
      const held = part === undefined ? null : part.find(row, f, this.compare);
      if (held === null) deletes.push(id);
      else upserts.push([id, stored(this.keyId(key), held.row, held.count)]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }

  /** A key as the stored entry writes it (the replaced arrangement's form). */
  private keyId(key: PartitionKey): string {
    return this.partitionBy.length === 1 ? encodeOne(key) : String(key);
  }

  private entryId(k: string, row: readonly Value[]): string {
    return arrangedEntryId(ENTRY_PREFIX, k, encodeExactValues(row));
  }
}

function stored(k: string, row: readonly Value[], count: number): StoredRow {
  return { a: ENTRY_PREFIX, k, r: row, c: count, m: 0, s: 0 };
}
