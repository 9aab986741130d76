// A copy-on-write snapshot of a Map of immutable rows, read as checkpoint entries while later epochs
// change the Map: taking it allocates nothing proportional to the Map (no arrays of its keys and
// rows, whose allocation set off ~100 ms scavenges and mark-compacts on a 1M-row table).
//
// The owner calls `beforeChange(key, current)` before every set or delete while the snapshot is
// open: the first change of a key present at the snapshot keeps its row (its before-image); a key
// absent then is remembered as inserted after it. The reader walks the live Map in its insertion
// order (a Map iterator skips deleted keys; a key deleted and set again comes again at the end): an
// unchanged key is read as it is now, a changed one as its before-image (once). Every key the Map
// gains after the snapshot comes after all the snapshot's keys that stayed in place, so the walk
// stops at the first inserted key: it never chases ingest through the new keys. Then the
// before-images not read yet are read: keys deleted (or deleted and set again) before the walk
// reached them. A key read unchanged and changed later can be read twice, with the same value both
// times: writing a checkpoint entry twice with one value is idempotent (the store upserts by key).
// An incremental checkpoint reads only its changed keys the same way, from a set handed over to it.
import type { Value } from '../common/types.ts';
import { SluiceError } from '../common/errors.ts';

type Row = readonly Value[];
type Entry = readonly [string, unknown];

/** The Map a snapshot reads: a `Map`, or a SlotRowMap (slot-row-map.ts) iterating like one. */
export interface SnapshotMap<K> extends Iterable<readonly [K, Row]> {
  get(key: K): Row | undefined;
  has(key: K): boolean;
}

export class CowSnapshot<K> {
  /** Keys present at the snapshot and changed since: their rows then. */
  private readonly before = new Map<K, Row>();
  /** Keys absent at the snapshot and set since (skipped; the first one ends the walk). */
  private readonly inserted = new Set<K>();
  /**
   * The first key inserted after the snapshot, where the walk stops: compared by identity, so the
   * walk need not look every key up in `inserted` (a set that grows with ingest). Once that key is
   * changed itself (it may move or go), the walk looks keys up in `inserted` instead.
   */
  private firstInserted: { readonly key: K } | null = null;
  private firstInsertedMoved = false;
  /** Keys whose before-image the walk read. */
  private readonly emitted = new Set<K>();
  /** Recording changes: from the snapshot until the walk of the live Map is over. */
  private recording = true;
  private superseded = false;
  private started = false;

  constructor(
    private readonly map: SnapshotMap<K>,
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

  /** Changes recorded so far (bounded by the keys changed while the snapshot is read). */
  get changedKeys(): number {
    return this.before.size + this.inserted.size;
  }

  /** Called by the owner before it sets or deletes `key` in the Map; `current` is its row now. */
  beforeChange(key: K, current: Row | undefined): void {
    if (!this.recording) return;
    if (this.firstInserted !== null && sameKey(key, this.firstInserted.key)) this.firstInsertedMoved = true;
    if (this.before.has(key) || this.inserted.has(key)) return;
    if (current !== undefined) this.before.set(key, current);
    else {
      this.inserted.add(key);
      this.firstInserted ??= { key };
    }
  }

  /** Whether the walk has come to the keys inserted after the snapshot. */
  private isInserted(key: K): boolean {
    const first = this.firstInserted;
    if (first === null) return false;
    return this.firstInsertedMoved ? this.inserted.has(key) : sameKey(key, first.key);
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
    try {
      if (this.only !== null) yield* this.keyEntries(this.only);
      else yield* this.walk();
    } finally {
      this.recording = false;
      this.before.clear();
      this.inserted.clear();
      this.emitted.clear();
      this.release(this);
    }
  }

  private *walk(): Generator<Entry, void, undefined> {
    let stopped = false;
    for (const [key, row] of this.map) {
      this.check();
      if (this.isInserted(key)) {
        stopped = true;
        break;
      }
      const old = this.before.get(key);
      if (old === undefined) yield [this.encode(key), row];
      else if (!this.emitted.has(key)) {
        this.emitted.add(key);
        yield [this.encode(key), old];
      }
    }
    this.check();
    // Every key of the snapshot was read or has a before-image: nothing more to record. A walk
    // that reached the Map's end read every key still in it; one that stopped early did not read
    // the keys deleted and set again since, so it reads every before-image not read yet.
    this.recording = false;
    this.release(this);
    this.inserted.clear();
    for (const [key, old] of this.before) {
      if (this.emitted.has(key) || (!stopped && this.map.has(key))) continue;
      this.check();
      yield [this.encode(key), old];
    }
  }

  /** The entries of a fixed set of keys at the snapshot (each key once: the set does not change). */
  private *keyEntries(keys: ReadonlySet<K>): Generator<Entry, void, undefined> {
    for (const key of keys) {
      this.check();
      if (this.inserted.has(key)) continue;
      const row = this.before.get(key) ?? this.map.get(key);
      if (row !== undefined) yield [this.encode(key), row];
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

/** Map key equality (SameValueZero): NaN is one key. */
function sameKey(a: unknown, b: unknown): boolean {
  return a === b || (a !== a && b !== b);
}

function isIndex(prop: string): boolean {
  const c = prop.charCodeAt(0);
  if (c < 48 || c > 57) return false;
  const n = Number(prop);
  return Number.isInteger(n) && n < 4294967295 && String(n) === prop;
}
