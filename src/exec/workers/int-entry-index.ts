// A step's index from small-integer group ids to entries: open addressing over typed arrays, cleared in
// O(1) by a stamp. A fold looks every change's downstream group up (≈ 10,000 a step for each partition
// of the canonical histogram, whose ids are integer buckets); a `Map` keyed by numbers hashes each id
// and allocates an entry per new group, this table neither.

/** Entry `NOT_FOUND`: the id has no entry yet in this step. */
export const NOT_FOUND = -1;

export class IntEntryIndex {
  private keys = new Int32Array(INITIAL_SLOTS);
  private entries = new Int32Array(INITIAL_SLOTS);
  /** A slot is in use in this step when its stamp is the current one. */
  private stamps = new Int32Array(INITIAL_SLOTS);
  private stamp = 1;
  private size = 0;
  private shift = 32 - Math.log2(INITIAL_SLOTS);

  /** Forgets every id (a new step). */
  clear(): void {
    this.size = 0;
    if (this.stamp === 0x7fffffff) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
    this.stamp++;
  }

  /**
   * The entry of `id` (an int32), or NOT_FOUND after recording `entry` for it: one probe sequence
   * for the lookup and the insertion.
   */
  entryOrAdd(id: number, entry: number): number {
    const keys = this.keys;
    const stamps = this.stamps;
    const mask = keys.length - 1;
    let slot = Math.imul(id, 0x9e3779b1) >>> this.shift;
    for (;;) {
      if (stamps[slot] !== this.stamp) break;
      if (keys[slot] === id) return this.entries[slot] as number;
      slot = (slot + 1) & mask;
    }
    keys[slot] = id;
    this.entries[slot] = entry;
    stamps[slot] = this.stamp;
    if (++this.size * 2 > keys.length) this.grow();
    return NOT_FOUND;
  }

  /** Doubles the slots, re-placing this step's ids (the table stays at most half full). */
  private grow(): void {
    const { keys, entries, stamps, stamp } = this;
    const slots = 2 * keys.length;
    this.keys = new Int32Array(slots);
    this.entries = new Int32Array(slots);
    this.stamps = new Int32Array(slots);
    this.shift--;
    this.size = 0;
    this.stamp = 1;
    for (let s = 0; s < keys.length; s++)
      if (stamps[s] === stamp) this.entryOrAdd(keys[s] as number, entries[s] as number);
  }
}

const INITIAL_SLOTS = 256;
