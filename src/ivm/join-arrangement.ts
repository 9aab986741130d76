// A join side's rows by join key (join-arrangement-rows.ts holds them) with its checkpoint entries:
// exactly those of the indexed `Arrangement` (same ids, same stored form), so either loads the
// other's.
import type { StoredRow as StoredArrangedRow } from './arrangement.ts';
import type { Value } from '../common/types.ts';
import type { Upserts } from './arrangement-delta.ts';
import { hashRow, inArrivalOrder } from './arrangement.ts';
import { NO_SLOT } from './group-index.ts';
import type { JoinKey } from './join-key.ts';
import { JoinArrangementRows, NO_ROW } from './join-arrangement-rows.ts';
import { HEAD, SIZE, SLOT_STRIDE } from './join-slot-records.ts';

export { MAX_KEPT_COLUMNS, NO_ROW, joinArrangementWork } from './join-arrangement-rows.ts';

/**
 * The largest batch whose keys' records `warm` reads ahead of its adds: 1,024 records are at most
 * 64 KB of lines, which stay in the core's cache until the adds.
 */
export const WARM_MAX_ROWS = 1024;

/** The entry format of an Arrangement, keyed by its key text. */
type StoredRow = StoredArrangedRow<string, readonly Value[]>;

/**
 * Key → the rows under it (join-arrangement-rows.ts), with the checkpoint deltas of an `Arrangement`.
 */
export class JoinArrangement extends JoinArrangementRows {
  /** What `warm` read (kept only so its loads are made). */
  private warmed = 0;

  /**
   * Reads the slot records of `keys[0..n)` ahead of their adds, one independent load a key, while
   * each key is its own slot: `add` reads its key's record first and waits for it, a cache miss a
   * row once the records outgrow the cache (the largest line of a small batch's fold); in a pass
   * of its own the misses are in flight together. Only for a batch whose records stay in the cache
   * until its adds (WARM_MAX_ROWS): a pre-read pass over batches of 10,000 cost more than it saved.
   */
  warm(keys: readonly (JoinKey | null)[], n: number): void {
    if (!this.keysAreSlots || n > WARM_MAX_ROWS) return;
    const slots = this.slots;
    // Keys past the last slot ever held have no record to read (see `slotOf`): a table's new ids.
    const end = this.slotKeys.length;
    let held = 0;
    for (let i = 0; i < n; i++) {
      const key = keys[i];
      if (typeof key !== 'number' || (key | 0) !== key || key < 0 || key >= end) continue;
      held += slots[key * SLOT_STRIDE + SIZE] as number;
    }
    this.warmed = held;
  }

  /** Empties the arrangement; the next delta replaces every stored entry. */
  clear(): void {
    this.reset();
    this.markCleared();
  }

  /** Replaces the contents with entries written by `takeDelta` (of this or an `Arrangement`). */
  load(entries: readonly unknown[], keyOf: (row: readonly Value[]) => JoinKey): void {
    this.reset();
    const { sorted, nextSeq } = inArrivalOrder<StoredRow>(entries);
    for (const e of sorted) {
      this.nextSeq = e.s;
      this.add(keyOf(e.r), e.r, e.c, e.m);
    }
    this.nextSeq = nextSeq;
    this.markLoaded();
  }

  /** Whether a stored entry (a value `takeDelta` wrote) belongs to this arrangement. */
  owns(entry: unknown): boolean {
    return (entry as StoredRow).a === this.entryPrefix;
  }

  protected exportAll(upserts: Upserts): void {
    const keys = this.slotKeys;
    for (let slot = 0; slot < keys.length; slot++) {
      const key = keys[slot];
      if (key === undefined) continue;
      for (
        let id = this.slots[slot * SLOT_STRIDE + HEAD] as number;
        id !== NO_ROW;
        id = this.nexts[id] as number
      )
        upserts.push([this.entryId(key, this.row(id)), this.stored(key, id)]);
    }
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const [entry, { key, row }] of this.dirty) {
      const slot = this.slotOf(key);
      const id = slot === NO_SLOT ? NO_ROW : this.find(slot, row, this.byFirst === null ? hashRow(row) : 0);
      if (id === NO_ROW) deletes.push(entry);
      else upserts.push([entry, this.stored(key, id)]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }

  private stored(key: JoinKey, id: number): StoredRow {
    return {
      a: this.entryPrefix,
      k: this.keyId(key),
      r: this.row(id),
      c: this.counts[id] as number,
      m: this.matches(id),
      s: this.seqs[id] as number,
    };
  }
}
