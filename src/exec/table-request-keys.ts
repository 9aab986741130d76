// The keys one request has named so far and where (a keyed table's `prepare`: a key inserted twice,
// a key deleted then inserted). One table is kept per store and reused request after request: a
// generation stamp marks its live cells, so starting a request clears nothing and allocates nothing.
// Int32 keys (serial ids) sit in typed arrays; other keys in a Map cleared per request.
import type { Value } from '../common/types.ts';

/** `get` of a key the request has not named. */
export const ABSENT = -1;

export class RequestKeys {
  private keys = new Int32Array(64);
  private values = new Int32Array(64);
  /** The generation that set each cell (a cell of an older one is empty). */
  private stamps = new Int32Array(64);
  private mask = 63;
  private generation = 1;
  private count = 0;
  private readonly other = new Map<Value, number>();

  /** Forgets every key: a new request. */
  begin(): void {
    this.count = 0;
    if (this.other.size > 0) this.other.clear();
    if (++this.generation === 0x7fffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** The value set for `key` in this request, or ABSENT. */
  get(key: Value): number {
    if (typeof key === 'number' && (key | 0) === key) {
      const g = this.generation;
      let i = hash(key) & this.mask;
      for (;;) {
        if (this.stamps[i] !== g) return ABSENT;
        if (this.keys[i] === key) return this.values[i] as number;
        i = (i + 1) & this.mask;
      }
    }
    return this.other.get(key) ?? ABSENT;
  }

  /** Sets `key`'s value (0 or more) for this request. */
  set(key: Value, value: number): void {
    if (!(typeof key === 'number' && (key | 0) === key)) {
      this.other.set(key, value);
      return;
    }
    if (2 * (this.count + 1) > this.mask + 1) this.grow();
    if (this.put(key | 0, value)) this.count++;
  }

  /**
   * The value set for `key` in this request if any (it stays); else sets `value` and returns ABSENT.
   * One probe where `get` then `set` took two (every insert of a keyed table asks this).
   */
  claim(key: Value, value: number): number {
    if (!(typeof key === 'number' && (key | 0) === key)) {
      const had = this.other.get(key);
      if (had !== undefined) return had;
      this.other.set(key, value);
      return ABSENT;
    }
    // Grown first (as `set` does), so the probe below finds the cell to fill.
    if (2 * (this.count + 1) > this.mask + 1) this.grow();
    const g = this.generation;
    let i = hash(key) & this.mask;
    while (this.stamps[i] === g) {
      if (this.keys[i] === key) return this.values[i] as number;
      i = (i + 1) & this.mask;
    }
    this.stamps[i] = g;
    this.keys[i] = key;
    this.values[i] = value;
    this.count++;
    return ABSENT;
  }

  /** Puts `key` in its cell; true when the key is new. */
  private put(key: number, value: number): boolean {
    const g = this.generation;
    let i = hash(key) & this.mask;
    while (this.stamps[i] === g) {
      if (this.keys[i] === key) {
        this.values[i] = value;
        return false;
      }
      i = (i + 1) & this.mask;
    }
    this.stamps[i] = g;
    this.keys[i] = key;
    this.values[i] = value;
    return true;
  }

  private grow(): void {
    const { keys, values, stamps } = this;
    const g = this.generation;
    const size = keys.length * 2;
    this.keys = new Int32Array(size);
    this.values = new Int32Array(size);
    this.stamps = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < keys.length; i++)
      if (stamps[i] === g) this.put(keys[i] as number, values[i] as number);
  }
}

function hash(key: number): number {
  const h = Math.imul(key, 0x9e3779b1);
  return h ^ (h >>> 15);
}
