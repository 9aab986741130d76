// A Top-N's partitions by key: the key's slot from a GroupIndex (an int key — the common PARTITION BY
// of an INT column — is a read of one Int32Array cell, a dense range of them a direct table), the
// partition in an array at that slot. Instead of a Map, whose lookup of a cold key is a bucket and
// then an entry, each a cache miss once there are thousands of partitions.
import type { Value } from '../../common/types.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import type { SortedPartition } from './topn-partition.ts';

export class PartitionTable {
  private readonly index = new GroupIndex();
  private parts: (SortedPartition | null)[] = [];
  private keys: Value[] = [];
  /** Slots freed by a deleted partition, reused first. */
  private free: number[] = [];

  get size(): number {
    return this.index.size;
  }

  get(key: Value): SortedPartition | undefined {
    const slot = this.index.get(key);
    return slot === NO_SLOT ? undefined : (this.parts[slot] as SortedPartition);
  }

  /** Adds a partition for `key`, which must have none. */
  set(key: Value, part: SortedPartition): void {
    const slot = this.free.pop() ?? this.parts.length;
    this.parts[slot] = part;
    this.keys[slot] = key;
    this.index.set(key, slot);
  }

  delete(key: Value): void {
    const slot = this.index.get(key);
    if (slot === NO_SLOT) return;
    this.index.delete(key);
    this.parts[slot] = null;
    this.keys[slot] = null;
    this.free.push(slot);
  }

  clear(): void {
    this.index.clear();
    this.parts = [];
    this.keys = [];
    this.free = [];
  }

  /** Every partition with its key (in slot order). */
  *entries(): Generator<[Value, SortedPartition]> {
    for (let slot = 0; slot < this.parts.length; slot++) {
      const part = this.parts[slot];
      if (part !== null && part !== undefined) yield [this.keys[slot] as Value, part];
    }
  }

  *values(): Generator<SortedPartition> {
    for (const part of this.parts) if (part !== null) yield part;
  }
}
