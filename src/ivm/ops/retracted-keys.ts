// Whether a batch retracts and inserts one key (MapOp's test that a projection keeping the key keeps
// its rows distinct). A key of one numeric column, the common case, is looked up in an open-addressing
// table of doubles the operator keeps across epochs, so an epoch allocates nothing; other keys (text,
// decimals, several columns) go through a Set of their SQL identities made for the batch.
import type { Value } from '../../common/types.ts';
import { encodeValues, singleKey } from '../../common/values.ts';

/**
 * The most slots the kept table grows to (a batch retracting up to half as many numeric keys): a
 * larger batch uses a Set made for it, so one bulk epoch does not leave megabytes held for good.
 */
const MAX_SLOTS = 1 << 16;

export class RetractedKeys {
  private keys = new Float64Array(0);
  /** The use that wrote each slot: a slot of an older use is empty, so nothing is cleared. */
  private stamps = new Int32Array(0);
  private use = 0;
  /** Times the table was allocated: once per larger batch, not per epoch (tests count them). */
  allocations = 0;

  /**
   * Whether no key is both retracted and inserted: a consolidated keyed batch holds each key at most
   * once a sign, so its projected rows (which keep the key) are then distinct. Keys compare as SQL
   * values (1.5 and 1.50 alike), so a doubt counts as a collision.
   */
  noKeyBothWays(
    rows: readonly (readonly Value[])[],
    weights: readonly number[],
    key: readonly number[],
  ): boolean {
    if (key.length !== 1) return bySet(rows, weights, (row) => encodeValues(row, key));
    const column = key[0] as number;
    let retractions = 0;
    for (let i = 0; i < rows.length; i++) {
      if ((weights[i] as number) >= 0) continue;
      const v = (rows[i] as readonly Value[])[column];
      // NaN is not equal to itself in the table: a Set (SameValueZero) tells its copies apart.
      if (typeof v !== 'number' || v !== v)
        return bySet(rows, weights, (row) => singleKey(row[column] as Value));
      retractions++;
    }
    if (retractions === 0) return true;
    const slots = this.reserve(retractions);
    if (slots === 0) return bySet(rows, weights, (row) => singleKey(row[column] as Value));
    const mask = slots - 1;
    const keys = this.keys;
    const stamps = this.stamps;
    const use = this.use;
    for (let i = 0; i < rows.length; i++) {
      if ((weights[i] as number) >= 0) continue;
      const k = (rows[i] as readonly Value[])[column] as number;
      let at = hash(k) & mask;
      while (stamps[at] === use && keys[at] !== k) at = (at + 1) & mask;
      stamps[at] = use;
      keys[at] = k;
    }
    for (let i = 0; i < rows.length; i++) {
      if ((weights[i] as number) <= 0) continue;
      const v = (rows[i] as readonly Value[])[column];
      // A text or decimal key is never equal to a number as a SQL value of one column's type; a
      // doubt (another type) counts as a collision.
      if (typeof v !== 'number') return false;
      let at = hash(v) & mask;
      while (stamps[at] === use) {
        if (keys[at] === v) return false;
        at = (at + 1) & mask;
      }
    }
    return true;
  }

  /** Bytes the kept table holds. */
  bytes(): number {
    return this.keys.byteLength + this.stamps.byteLength;
  }

  /** Readies the table for `count` keys (at most half full) and starts a use; 0: too many, not kept. */
  private reserve(count: number): number {
    let slots = this.keys.length;
    if (slots < 2 * count) {
      let want = 16;
      while (want < 2 * count) want *= 2;
      if (want > MAX_SLOTS) return 0;
      slots = Math.max(want, 2 * slots);
      this.keys = new Float64Array(slots);
      this.stamps = new Int32Array(slots);
      this.use = 0;
      this.allocations++;
    }
    if (this.use === 0x7fffffff) {
      this.stamps.fill(0);
      this.use = 0;
    }
    this.use++;
    return slots;
  }
}

/** A double's slot hash: its integer part's 32 low bits and high bits mixed (fractions share a slot). */
function hash(k: number): number {
  const h = Math.imul((k | 0) ^ ((k / 4294967296) | 0), 0x9e3779b1);
  return h ^ (h >>> 15);
}

/** The general test: the retracted keys' SQL identities in a Set made for this batch. */
function bySet(
  rows: readonly (readonly Value[])[],
  weights: readonly number[],
  keyOf: (row: readonly Value[]) => Value,
): boolean {
  const retracted = new Set<Value>();
  for (let i = 0; i < rows.length; i++)
    if ((weights[i] as number) < 0) retracted.add(keyOf(rows[i] as readonly Value[]));
  for (let i = 0; i < rows.length; i++)
    if ((weights[i] as number) > 0 && retracted.has(keyOf(rows[i] as readonly Value[]))) return false;
  return true;
}
