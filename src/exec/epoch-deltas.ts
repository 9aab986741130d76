// An epoch's deltas by relation name: the written table's, then each stepped view's, which later views
// read. One per engine, emptied around each epoch: a fresh Map per epoch was a seventh of the garbage
// of a one-row epoch (≈ 200 B), and a Map cleared and reused kept its old tables alive past the young
// generation. Few entries (a table and the views that changed) are found by a scan of two arrays.
import type { ZBatch } from '../ivm/zset.ts';
import { emptyBatch } from '../ivm/zset.ts';

/** What a view's step reads of an epoch's deltas (a Map of them also fits). */
export interface DeltaReader {
  get(name: string): ZBatch | undefined;
  has(name: string): boolean;
}

/** Scanned up to this many entries; past it, a Map of them answers (an epoch over many views). */
const SCAN_LIMIT = 8;

/** What an emptied slot holds: no batch of a past epoch is kept alive by the scratch. */
const CLEARED: ZBatch = emptyBatch();

export class EpochDeltas implements DeltaReader {
  private readonly names: string[] = [];
  private readonly batches: ZBatch[] = [];
  private count = 0;
  /** Every entry, once there are more than SCAN_LIMIT of them (null until then). */
  private index: Map<string, ZBatch> | null = null;

  get size(): number {
    return this.count;
  }

  /** The name of the `i`th entry set this epoch (0 ≤ i < size). */
  nameAt(i: number): string {
    return this.names[i] as string;
  }

  /** The delta of the `i`th entry set this epoch (0 ≤ i < size). */
  batchAt(i: number): ZBatch {
    return this.batches[i] as ZBatch;
  }

  get(name: string): ZBatch | undefined {
    if (this.index !== null) return this.index.get(name);
    const names = this.names;
    for (let i = 0; i < this.count; i++) if (names[i] === name) return this.batches[i];
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Sets `name`'s delta (replacing an earlier one of this epoch). */
  set(name: string, batch: ZBatch): void {
    const index = this.index;
    if (index !== null) {
      // The arrays only hold what `clear` empties; the Map answers.
      if (!index.has(name)) this.append(name, batch);
      index.set(name, batch);
      return;
    }
    const names = this.names;
    for (let i = 0; i < this.count; i++) {
      if (names[i] === name) {
        this.batches[i] = batch;
        return;
      }
    }
    this.append(name, batch);
    if (this.count > SCAN_LIMIT) {
      const built = new Map<string, ZBatch>();
      for (let i = 0; i < this.count; i++) built.set(names[i] as string, this.batches[i] as ZBatch);
      this.index = built;
    }
  }

  private append(name: string, batch: ZBatch): void {
    const at = this.count++;
    if (at < this.names.length) {
      this.names[at] = name;
      this.batches[at] = batch;
    } else {
      this.names.push(name);
      this.batches.push(batch);
    }
  }

  /**
   * Forgets every entry (the slots stay, holding no batch). The names stay too: nothing past `count`
   * is read, and a relation's name is held by its catalog entry anyway.
   */
  clear(): void {
    for (let i = 0; i < this.count; i++) this.batches[i] = CLEARED;
    this.count = 0;
    this.index = null;
  }
}
