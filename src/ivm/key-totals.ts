// Running totals by join key in typed arrays (a semi-join's match counts per key): keys interned to
// dense slots through a GroupIndex, so the per-row lookup of the probe side is a typed-array read,
// not a Map lookup of a bucket. A derived index: its owner keeps the stored form and rebuilds it.
import { GroupIndex, NO_SLOT } from './group-index.ts';
import type { JoinKey } from './join-key.ts';

export class KeyTotals {
  private readonly index = new GroupIndex();
  private totals = new Float64Array(16);
  private readonly free: number[] = [];
  private slots = 0;

  /** The key's total (0 when it has none). */
  get(key: JoinKey): number {
    const slot = this.index.get(key);
    return slot === NO_SLOT ? 0 : (this.totals[slot] as number);
  }

  /** Adds `w` to the key's total; a key whose total returns to 0 is forgotten. */
  add(key: JoinKey, w: number): void {
    if (w === 0) return;
    let slot = this.index.get(key);
    if (slot === NO_SLOT) {
      slot = this.free.pop() ?? this.slots++;
      if (slot >= this.totals.length) {
        const grown = new Float64Array(this.totals.length * 2);
        grown.set(this.totals);
        this.totals = grown;
      }
      this.totals[slot] = 0;
      this.index.set(key, slot);
    }
    const total = (this.totals[slot] as number) + w;
    if (total === 0) {
      this.index.delete(key);
      this.free.push(slot);
    } else this.totals[slot] = total;
  }

  clear(): void {
    this.index.clear();
    this.totals = new Float64Array(16);
    this.free.length = 0;
    this.slots = 0;
  }

  /** Estimated heap bytes (index cell and total per key), for state metrics. */
  get stateBytes(): number {
    return 16 * (this.slots - this.free.length);
  }
}
