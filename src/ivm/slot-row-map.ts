// A Map of key → row for large keyed state (a keyed table's rows): keys are interned into slots by a
// GroupIndex (int32 keys in typed arrays, so a lookup of a serial id is one array read instead of a
// Map's hash bucket and entry), and the keys and rows sit in two arrays by slot (or the rows alone,
// when each row says its key: a keyed table's, `keyOf`). It keeps a Map's
// iteration order exactly: a new key takes the next slot, setting a present key keeps its slot, and a
// deleted key's slot stays empty (a key deleted and set again comes at the end). An iterator walks
// the slots as they are when it reaches them, so like a Map's it sees keys added after it started
// and skips keys deleted since. Empty slots are squeezed out by `compact`, which the owner calls only
// while no iterator is open (it renumbers the slots an open iterator is walking).
import type { Value } from '../common/types.ts';
import { GroupIndex } from './group-index.ts';

type Row = readonly Value[];

/** What a unique arrangement needs of its rows: a subset of `Map`, which also satisfies it. */
export interface RowMap<K> extends Iterable<[K, Row]> {
  readonly size: number;
  get(key: K): Row | undefined;
  has(key: K): boolean;
  set(key: K, row: Row): unknown;
  delete(key: K): boolean;
  values(): IterableIterator<Row>;
  clear(): void;
  /** Sets `key`'s row only if it has none; false (nothing changed) when it has one (a Map has not). */
  add?(key: K, row: Row): boolean;
  /** Deletes `key` and returns its row, or undefined when absent (a Map has not). */
  take?(key: K): Row | undefined;
  /** `out[i] = get(keys[i])` for i < n, the lookups done a pass at a time (a Map has not). */
  getMany?(keys: readonly K[], n: number, out: (Row | undefined)[]): void;
  /** `out[i] = take(keys[i])` for i < n in order, the lookups done a pass at a time (a Map has not). */
  takeMany?(keys: readonly K[], n: number, out: (Row | undefined)[]): void;
  /**
   * At least every number key held (-Infinity when none; a Map has none): a key above it is absent
   * without a lookup.
   */
  readonly numberCeiling?: number;
  /** Whether `compact` is worth its pass (a Map has neither). */
  readonly wantsCompaction?: boolean;
  /** Squeezes out deleted entries' room; called only while no iterator is open. */
  compact?(): void;
}

/** Empty slots are squeezed out once there are this many and more than live ones (by default). */
const COMPACT_MIN = 4096;

export class SlotRowMap<K extends Value> implements RowMap<K> {
  private index = new GroupIndex();
  /**
   * Key by slot (in an empty slot: undefined, or the key it last held until `compact`); unused (empty)
   * when the rows say their keys (`keyOf`).
   */
  private keys: (K | undefined)[] = [];
  /** Row by slot (undefined in an empty slot). */
  private rows: (Row | undefined)[] = [];
  private live = 0;
  /** The greatest number key set since `clear` (deletes leave it: an upper bound). */
  private ceiling = -Infinity;
  /** `getMany`'s slots (reused, grown as batches need). */
  private slots = new Int32Array(0);
  private compacted = 0;
  private replaced = 0;

  /**
   * Empty slots are squeezed out once there are `compactMin` of them and more than `compactRatio`
   * times the live ones (tests compact early to exercise it).
   */
  constructor(
    private readonly compactMin = COMPACT_MIN,
    private readonly compactRatio = 1,
    /**
     * The key every row is set under, when it is a function of the row (a keyed table's primary key):
     * the keys are then not kept by slot but read from the rows when iterated or compacted, which
     * spares a push per new key and the array (a keyed table's insert path).
     */
    private readonly keyOf: ((row: Row) => K) | null = null,
  ) {}

  get size(): number {
    return this.live;
  }

  get numberCeiling(): number {
    return this.ceiling;
  }

  get(key: K): Row | undefined {
    const slot = this.index.get(key);
    return slot < 0 ? undefined : this.rows[slot];
  }

  has(key: K): boolean {
    return this.index.get(key) >= 0;
  }

  /** The slot of `key` (where `scan` finds it), or -1 when absent. */
  slotOf(key: K): number {
    return this.index.get(key);
  }

  /**
   * The row in `slot` (undefined in an empty one). Slots stay put until `compact` (`compactions`
   * counts them), so a reader holding slots (a join probing a table's rows) may use them until then.
   */
  rowAt(slot: number): Row | undefined {
    return this.rows[slot];
  }

  /** Slots used so far (live and empty): every slot `slotOf` gives is below it. */
  get slotCount(): number {
    return this.rows.length;
  }

  /** Rows set in place of their key's row, in its slot (a reader that copied cells by slot rereads them). */
  get replacements(): number {
    return this.replaced;
  }

  /** Times `compact` renumbered the slots (a reader that kept slots must find them again). */
  get compactions(): number {
    return this.compacted;
  }

  /**
   * The rows of many keys: every key's slot first, then every slot's row. On a large table each
   * lookup misses the cache twice (slot, then row pointer); a pass of independent lookups lets the
   * processor overlap the misses that one key's chain (slot → row → its values) serializes.
   */
  getMany(keys: readonly K[], n: number, out: (Row | undefined)[]): void {
    const slots = this.slotsOf(keys, n);
    const rows = this.rows;
    for (let i = 0; i < n; i++) {
      const slot = slots[i] as number;
      out[i] = slot < 0 ? undefined : rows[slot];
    }
  }

  set(key: K, row: Row): this {
    // A number key above every one set is absent (a serial id's insert): no lookup.
    if (typeof key === 'number' && key > this.ceiling) {
      this.append(key, row);
      return this;
    }
    const slot = this.index.get(key);
    if (slot >= 0) {
      this.rows[slot] = row;
      this.replaced++;
    } else this.append(key, row);
    return this;
  }

  add(key: K, row: Row): boolean {
    // One lookup where `has` then `set` took two.
    if (this.index.get(key) >= 0) return false;
    this.append(key, row);
    return true;
  }

  /** Puts an absent key in the next slot. */
  private append(key: K, row: Row): void {
    this.index.set(key, this.rows.length);
    if (typeof key === 'number' && key > this.ceiling) this.ceiling = key;
    // A Map keeps -0 as 0.
    if (this.keyOf === null) this.keys.push(key === 0 ? (0 as K) : key);
    this.rows.push(row);
    this.live++;
  }

  delete(key: K): boolean {
    return this.take(key) !== undefined;
  }

  take(key: K): Row | undefined {
    // One lookup where `get` then `delete` took two.
    const slot = this.index.get(key);
    if (slot < 0) return undefined;
    const row = this.rows[slot];
    this.index.delete(key);
    // The key stays in its empty slot (an empty row marks the slot empty; `compact` drops it): not
    // writing it spares a cache miss per delete of a large table, the keys array being apart.
    this.rows[slot] = undefined;
    this.live--;
    return row;
  }

  /**
   * `out[i] = take(keys[i])` for i < n, in order: every key's slot first, then every slot's row taken
   * (a keyed view's retractions of a step). As in `getMany`, the misses of a pass of independent
   * lookups overlap where one key's chain (slot, then row pointer) waited on each in turn. A key
   * given twice is taken once (its slot is read before either take, and empty at the second).
   */
  takeMany(keys: readonly K[], n: number, out: (Row | undefined)[]): void {
    const slots = this.slotsOf(keys, n);
    const index = this.index;
    const rows = this.rows;
    let taken = 0;
    for (let i = 0; i < n; i++) {
      const slot = slots[i] as number;
      const row = slot < 0 ? undefined : rows[slot];
      out[i] = row;
      if (row === undefined) continue;
      index.delete(keys[i] as K);
      rows[slot] = undefined;
      taken++;
    }
    this.live -= taken;
  }

  /** The slots of `keys[0..n)` (-1: absent) in the reused `slots` array: the lookup pass of getMany/takeMany. */
  private slotsOf(keys: readonly K[], n: number): Int32Array {
    if (this.slots.length < n) this.slots = new Int32Array(Math.max(n, 2 * this.slots.length));
    const slots = this.slots;
    const index = this.index;
    for (let i = 0; i < n; i++) slots[i] = index.get(keys[i] as K);
    return slots;
  }

  clear(): void {
    // The slots start over: a reader holding slots must find them again, as after `compact`.
    this.compacted++;
    this.index.clear();
    this.keys = [];
    this.rows = [];
    this.live = 0;
    this.ceiling = -Infinity;
  }

  /** Whether `compact` would squeeze out enough empty slots to be worth its pass. */
  get wantsCompaction(): boolean {
    const empty = this.rows.length - this.live;
    return empty >= this.compactMin && empty > this.live * this.compactRatio;
  }

  /** Squeezes out the empty slots, keeping the order (no iterator may be open: slots renumber). */
  compact(): void {
    const keys: (K | undefined)[] = [];
    const rows: (Row | undefined)[] = [];
    const index = new GroupIndex();
    // Its size is known: the direct table is sized for it at once, nothing moved as it grows.
    index.reserve(this.live);
    for (let i = 0; i < this.rows.length; i++) {
      const row = this.rows[i];
      if (row === undefined) continue;
      const key = this.keyAt(i, row);
      index.set(key, rows.length);
      if (this.keyOf === null) keys.push(key);
      rows.push(row);
    }
    this.index = index;
    this.keys = keys;
    this.rows = rows;
    this.compacted++;
  }

  *[Symbol.iterator](): IterableIterator<[K, Row]> {
    // The arrays are read afresh each step: `set` may have grown them (a new array after `clear`).
    for (let i = 0; i < this.rows.length; i++) {
      const row = this.rows[i];
      if (row !== undefined) yield [this.keyAt(i, row), row];
    }
  }

  /**
   * Up to `max` live entries from slot `cursor.slot` on, into `keys` and `rows` (from index 0), as
   * the iterator would give them; returns how many, advancing the cursor past the slots read. Fewer
   * than `max`: the slots ran out. A checkpoint's snapshot reads a table in batches this way, with
   * no tuple and no generator step per row.
   */
  scan(cursor: { slot: number }, keys: K[], rows: Row[], max: number): number {
    const all = this.rows;
    let i = cursor.slot;
    let n = 0;
    while (n < max && i < all.length) {
      const row = all[i];
      if (row !== undefined) {
        keys[n] = this.keyAt(i, row);
        rows[n++] = row;
      }
      i++;
    }
    cursor.slot = i;
    return n;
  }

  /** The key of the row in live slot `slot` (as a Map gives it: -0 as 0). */
  private keyAt(slot: number, row: Row): K {
    const keyOf = this.keyOf;
    if (keyOf === null) return this.keys[slot] as K;
    const key = keyOf(row);
    return key === 0 ? (0 as K) : key;
  }

  *values(): IterableIterator<Row> {
    for (let i = 0; i < this.rows.length; i++) {
      const row = this.rows[i];
      if (row !== undefined) yield row;
    }
  }
}
