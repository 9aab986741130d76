// A copy-on-write snapshot of a Map of immutable rows, read as checkpoint entries while later epochs
// change the Map: taking it allocates nothing proportional to the Map (no arrays of its keys and
// rows, whose allocation set off ~100 ms scavenges and mark-compacts on a 1M-row table).
//
// The owner calls `beforeChange(key, current)` before every set or delete while the snapshot is
// open; the first call for a key keeps its before-image (undefined: the key was inserted after the
// snapshot). The reader walks the live Map (a Map iterator sees later inserts, skips deleted keys,
// and a re-inserted key comes again at the end): a key without a before-image is unchanged and is
// read as it is now, a key with one is read as its before-image (once), a key inserted after the
// snapshot is skipped. After the walk, the before-images of keys no longer in the Map (deleted) are
// read. A key read unchanged and deleted later can be read twice, with the same value both times:
// writing a checkpoint entry twice with one value is idempotent (the store upserts by key). An
// incremental checkpoint reads only its changed keys the same way, from a set handed over to it.
import type { Value } from '../common/types.ts';
import { SluiceError } from '../common/errors.ts';

type Row = readonly Value[];
type Entry = readonly [string, unknown];

export class CowSnapshot<K> {
  /**
   * Before-images: the key's row at the snapshot, undefined when it was inserted after it. No
   * object per key: while a checkpoint is read every key ingest inserts gets one of these.
   */
  private readonly before = new Map<K, Row | undefined>();
  /** Keys whose before-image the walk read (the others are read after it, if deleted). */
  private readonly emitted = new Set<K>();
  /** Recording before-images: from the snapshot until the walk of the live Map is over. */
  private recording = true;
  private superseded = false;
  private started = false;

  constructor(
    private readonly map: ReadonlyMap<K, Row>,
    /** Entries at the snapshot: the Map's size then, or the keys of `only` present then. */
    readonly size: number,
    private readonly encode: (key: K) => string,
    /** Called once the snapshot needs no more notifications (read to its end, closed or superseded). */
    private readonly release: (snapshot: CowSnapshot<K>) => void,
    /**
     * Read only these keys (an incremental checkpoint's changed keys; the owner hands the set over
     * and never changes it), skipping those absent at the snapshot; null reads the whole Map.
     */
    private readonly only: ReadonlySet<K> | null = null,
  ) {}

  /** Before-images kept so far (bounded by the keys changed while the snapshot is read). */
  get changedKeys(): number {
    return this.before.size;
  }

  /** Called by the owner before it sets or deletes `key` in the Map; `current` is its row now. */
  beforeChange(key: K, current: Row | undefined): void {
    if (this.recording && !this.before.has(key)) this.before.set(key, current);
  }

  /**
   * The owner's Map is no longer the one this snapshot reads (cleared or reloaded into a new Map):
   * the old Map is frozen, so no more before-images are needed.
   */
  detach(): void {
    this.recording = false;
  }

  /** A newer snapshot replaced this one: reading on fails (its writer was abandoned). */
  supersede(): void {
    this.superseded = true;
    this.recording = false;
  }

  /** The entries at the snapshot, read once. */
  *entries(): Generator<Entry, void, undefined> {
    if (this.started) throw new SluiceError('INTERNAL_ERROR', 'a checkpoint snapshot is read only once');
    this.started = true;
    if (this.only !== null) {
      yield* this.keyEntries(this.only);
      return;
    }
    try {
      for (const [key, row] of this.map) {
        this.check();
        if (!this.before.has(key)) yield [this.encode(key), row];
        else {
          const old = this.before.get(key);
          if (old !== undefined && !this.emitted.has(key)) {
            this.emitted.add(key);
            yield [this.encode(key), old];
          }
        }
      }
      this.check();
      // The walk is over: every key of the snapshot was read or has a before-image. Keys still in
      // the Map were read by the walk (with their before-image, or unchanged before their change);
      // the others were deleted before the walk reached them.
      this.recording = false;
      this.release(this);
      const deleted: [K, Row][] = [];
      for (const [key, old] of this.before) {
        if (old !== undefined && !this.emitted.has(key) && !this.map.has(key)) deleted.push([key, old]);
      }
      this.before.clear();
      this.emitted.clear();
      for (const [key, row] of deleted) {
        this.check();
        yield [this.encode(key), row];
      }
    } finally {
      this.recording = false;
      this.before.clear();
      this.emitted.clear();
      this.release(this);
    }
  }

  /** The entries of a fixed set of keys at the snapshot (each key once: the set does not change). */
  private *keyEntries(keys: ReadonlySet<K>): Generator<Entry, void, undefined> {
    try {
      for (const key of keys) {
        this.check();
        const row = this.before.has(key) ? this.before.get(key) : this.map.get(key);
        if (row !== undefined) yield [this.encode(key), row];
      }
    } finally {
      this.recording = false;
      this.before.clear();
      this.release(this);
    }
  }

  private check(): void {
    if (this.superseded)
      throw new SluiceError('INTERNAL_ERROR', 'a checkpoint snapshot was read after a newer one was taken');
  }
}

/**
 * The snapshot as the array of entries a state delta holds. Iterating it (as the checkpoint writers
 * do) reads the snapshot's cursor, allocating nothing up front; indexing it (tests, in-memory
 * callers) first reads the whole snapshot into an array, once, without duplicates. Either way the
 * entries are those at the snapshot.
 */
export function snapshotEntries<K>(snapshot: CowSnapshot<K>): readonly Entry[] {
  let cache: Entry[] | null = null;
  let iterated = false;
  const materialize = (): Entry[] => {
    if (cache !== null) return cache;
    if (iterated) {
      throw new SluiceError('INTERNAL_ERROR', 'a checkpoint snapshot being read is not indexable');
    }
    iterated = true;
    const byKey = new Map<string, Entry>();
    for (const e of snapshot.entries()) byKey.set(e[0], e);
    cache = [...byKey.values()];
    return cache;
  };
  const iterate = (): Iterator<Entry> => {
    if (cache !== null || iterated) return materialize()[Symbol.iterator]();
    iterated = true;
    return snapshot.entries();
  };
  // An empty target whose `length` the traps report: setting a million-element length on an array
  // allocates its whole (holey) backing store, 8 bytes an element.
  const target: Entry[] = [];
  return new Proxy(target, {
    get: (t, prop, receiver): unknown => {
      if (prop === Symbol.iterator) return iterate;
      // Materialized without duplicates, the entries are exactly the snapshot's `size` keys.
      if (prop === 'length') return snapshot.size;
      if (typeof prop === 'string' && isIndex(prop)) return materialize()[Number(prop)];
      if (typeof prop === 'symbol' || prop in Array.prototype) {
        // Array methods (map, slice, find, …) read through the materialized entries.
        const v: unknown = Reflect.get(materialize(), prop);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(materialize()) : v;
      }
      return Reflect.get(t, prop, receiver);
    },
    has: (t, prop): boolean =>
      typeof prop === 'string' && isIndex(prop) ? Number(prop) < materialize().length : Reflect.has(t, prop),
    getOwnPropertyDescriptor: (t, prop): PropertyDescriptor | undefined => {
      if (typeof prop === 'string' && isIndex(prop)) {
        const list = materialize();
        const i = Number(prop);
        return i < list.length
          ? { value: list[i], writable: false, enumerable: true, configurable: true }
          : undefined;
      }
      const own = Reflect.getOwnPropertyDescriptor(t, prop);
      return prop === 'length' && own !== undefined ? { ...own, value: snapshot.size } : own;
    },
    ownKeys: (t): (string | symbol)[] => [
      ...Array.from({ length: materialize().length }, (_, i) => String(i)),
      ...Reflect.ownKeys(t),
    ],
  });
}

function isIndex(prop: string): boolean {
  const c = prop.charCodeAt(0);
  if (c < 48 || c > 57) return false;
  const n = Number(prop);
  return Number.isInteger(n) && n < 4294967295 && String(n) === prop;
}
