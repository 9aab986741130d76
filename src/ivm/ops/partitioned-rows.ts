// The rows of a node that works partition by partition (Top-N, Window): every input row arranged by
// its PARTITION BY key, the batch's changes grouped by partition, and the arrangement reloaded from a
// checkpoint with each partition's rows sorted again (the order is derived, never stored).
import type { Value } from '../../common/types.ts';
import { encodeOne, encodeValues, singleKey } from '../../common/values.ts';
import { Arrangement, type ArrangedRow } from '../arrangement.ts';

/** A partition's key: '' without PARTITION BY, one column's key, or the columns' encoding. */
export type PartitionKey = Value;

export class PartitionedRows {
  readonly arranged: Arrangement<PartitionKey>;

  constructor(
    owner: string,
    private readonly partitionBy: readonly number[],
  ) {
    this.arranged = new Arrangement<PartitionKey>(owner, 't', (key) =>
      partitionBy.length === 1 ? encodeOne(key) : String(key),
    );
  }

  partitionOf(row: readonly Value[]): PartitionKey {
    const by = this.partitionBy;
    if (by.length === 0) return '';
    if (by.length === 1) return singleKey(row[by[0] as number] as Value);
    return encodeValues(row, by);
  }

  /** The indexes of `rows` per partition, partitions in the order they first occur. */
  group(rows: readonly (readonly Value[])[]): Map<PartitionKey, number[]> {
    const byPartition = new Map<PartitionKey, number[]>();
    for (let i = 0; i < rows.length; i++) {
      const key = this.partitionOf(rows[i] as readonly Value[]);
      const at = byPartition.get(key);
      if (at === undefined) byPartition.set(key, [i]);
      else at.push(i);
    }
    return byPartition;
  }

  /** Replaces the arrangement with stored entries; each partition's rows come back sorted by `compare`. */
  load(
    values: Iterable<unknown>,
    compare: (a: readonly Value[], b: readonly Value[]) => number,
  ): Map<PartitionKey, ArrangedRow[]> {
    const keys = new Set<PartitionKey>();
    this.arranged.load([...values], (row) => {
      const key = this.partitionOf(row);
      keys.add(key);
      return key;
    });
    const sorted = new Map<PartitionKey, ArrangedRow[]>();
    for (const key of keys) {
      const bucket = this.arranged.get(key);
      if (bucket !== undefined)
        sorted.set(
          key,
          [...bucket.rows.values()].sort((a, b) => compare(a.row, b.row)),
        );
    }
    return sorted;
  }
}
