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
// reached them. Over a slot map a key read unchanged and changed later is marked read, so it is read
// once (a table written whole is stored in blocks, which would hold it twice); over a Map, whose
// walk position can't be told from a key, it can be read twice, with the same value both times.
// An incremental checkpoint reads only its changed keys the same way, from a set handed over to it.
import type { Value } from '../common/types.ts';
import { SluiceError } from '../common/errors.ts';
import { iteratorReader, registerEntryReader, type EntryReader } from '../common/state-delta.ts';
import { encodeOne } from '../common/value-key.ts';

type Row = readonly Value[];
type Entry = readonly [string, unknown];

/**
 * A snapshot's reader whose keys are Values encoded by value-key.ts's `encodeOne` (a table's or an
 * arrangement's keys) offers them unencoded too (`readRaw`, as `read` with each key as the Map holds
 * it): a writer that puts a key's text straight into its bytes (a table's column blocks,
 * table-blocks.ts) then makes no string per entry — the three short-lived strings an entry that were
 * two thirds of what a full checkpoint of a keyed table allocated.
 */
export interface ValueKeyReader extends EntryReader {
  readRaw(keys: Value[], values: unknown[], max: number): number;
}

export function isValueKeyReader(reader: EntryReader): reader is ValueKeyReader {
  return reader instanceof CowSnapshot && reader.valueKeys;
}

/** The Map a snapshot reads: a `Map`, or a SlotRowMap (slot-row-map.ts) iterating like one. */
export interface SnapshotMap<K> extends Iterable<readonly [K, Row]> {
  get(key: K): Row | undefined;
  has(key: K): boolean;
  /** The entries the iterator gives, a batch at a time from `cursor.slot` (a slot map's). */
  scan?(cursor: { slot: number }, keys: K[], rows: Row[], max: number): number;
  /** The slot `scan` finds `key` in, or -1 (a slot map's, with `scan`). */
  slotOf?(key: K): number;
}

/** Where a snapshot's reading is: not started, the walk of the live Map, the before-images left, a
 * fixed set of keys (an incremental delta's), or over. */
type Phase = 0 | 1 | 2 | 3 | 4;
const UNSTARTED = 0;
const WALK = 1;
const BEFORE = 2;
const KEYS = 3;
const DONE = 4;

export class CowSnapshot<K> implements EntryReader {
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
  private phase: Phase = UNSTARTED;
  /** Whether the walk stopped at the first key inserted after the snapshot (not at the Map's end). */
  private stopped = false;
  /** Where the reading is: a slot map's scan position, or the iterator of the Map, keys or before-images. */
  private cursor: { slot: number } | Iterator<unknown> | null = null;
  /** A batch of the live Map's keys and rows, as the walk reads them (reused). */
  private rawKeys: K[] = [];
  private rawRows: Row[] = [];

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
    if (current !== undefined) {
      this.before.set(key, current);
      // Read already (the walk's scan has passed its slot, and it had no before-image then): as it
      // is now, which is its row at the snapshot. Marked read, so that neither its later place in
      // the walk (deleted and set again: at the end) nor the before-images read it twice — a block
      // of a table written whole would hold it twice (a Map can't tell where the walk is: over a
      // Map a key can still be read twice, with one value).
      if (this.passed(key)) this.emitted.add(key);
    } else {
      this.inserted.add(key);
      this.firstInserted ??= { key };
    }
  }

  /** Whether the walk of a slot map has read `key` (its slot is behind the scan's position). */
  private passed(key: K): boolean {
    const cursor = this.cursor;
    if (this.phase !== WALK || cursor === null || !('slot' in cursor) || this.map.slotOf === undefined)
      return false;
    const slot = this.map.slotOf(key);
    return slot >= 0 && slot < cursor.slot;
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

  /** The entries at the snapshot, read once (one at a time: tests and in-memory callers). */
  *entries(): Generator<Entry, void, undefined> {
    if (this.started) throw new SluiceError('INTERNAL_ERROR', 'a checkpoint snapshot is read only once');
    const keys: string[] = [];
    const values: unknown[] = [];
    try {
      while (this.read(keys, values, 1) === 1) yield [keys[0] as string, values[0]];
    } finally {
      this.close();
    }
  }

  /**
   * Reads the next entries at the snapshot, up to `max`, into `keys` and `values` from index 0;
   * returns how many (0: all were read). The checkpoint writers read a table this way, a batch per
   * call: no generator step and no `[key, row]` tuple per entry. A batch is read at once, so no
   * change falls inside it; between batches the owner's changes are recorded as for the generator.
   */
  read(keys: string[], values: unknown[], max: number): number {
    const raw = keys as unknown[];
    const n = this.readRaw(raw, values, max);
    for (let i = 0; i < n; i++) keys[i] = this.encode(raw[i] as K);
    return n;
  }

  /** As `read`, with the keys as the Map holds them (not encoded). */
  readRaw(keys: unknown[], values: unknown[], max: number): number {
    if (this.phase === DONE) return 0;
    if (this.phase === UNSTARTED) {
      if (this.started) throw new SluiceError('INTERNAL_ERROR', 'a checkpoint snapshot is read only once');
      this.started = true;
      this.phase = this.only !== null ? KEYS : WALK;
    }
    this.check();
    let n = 0;
    if (this.phase === KEYS) n = this.readKeys(keys, values, max);
    if ((this.phase as Phase) === WALK) n = this.readWalk(keys, values, max);
    if ((this.phase as Phase) === BEFORE) n = this.readBefore(keys, values, n, max);
    if ((this.phase as Phase) === DONE) this.close();
    return n;
  }

  /** Whether the keys are Values encoded by `encodeOne` (`readRaw` then hands them to a writer). */
  get valueKeys(): boolean {
    return (this.encode as unknown) === encodeOne;
  }

  /** Ends the reading (at its end, or abandoned): no more before-images are recorded. */
  close(): void {
    this.phase = DONE;
    this.started = true;
    this.recording = false;
    this.before.clear();
    this.inserted.clear();
    this.emitted.clear();
    this.cursor = null;
    this.rawKeys = [];
    this.rawRows = [];
    this.release(this);
  }

  /** The live Map's entries from the walk's position, until `max` are out or the walk ends. */
  private readWalk(keys: unknown[], values: unknown[], max: number): number {
    const map = this.map;
    const rawKeys = this.rawKeys;
    const rawRows = this.rawRows;
    const before = this.before;
    let n = 0;
    while (n < max) {
      // A slot map is scanned a batch at a time; a Map through its iterator, kept across calls.
      const want = max - n;
      let got = 0;
      if (map.scan !== undefined) {
        this.cursor ??= { slot: 0 };
        got = map.scan(this.cursor as { slot: number }, rawKeys, rawRows, want);
      } else {
        const it = (this.cursor ??= map[Symbol.iterator]()) as Iterator<readonly [K, Row]>;
        while (got < want) {
          const r = it.next();
          if (r.done === true) break;
          rawKeys[got] = r.value[0];
          rawRows[got++] = r.value[1];
        }
      }
      for (let i = 0; i < got; i++) {
        const key = rawKeys[i] as K;
        if (this.isInserted(key)) {
          this.endWalk(true);
          return n;
        }
        // Until something changes, no key has a before-image (a lookup in an empty Map is skipped).
        const old = before.size === 0 ? undefined : before.get(key);
        if (old === undefined) {
          keys[n] = key;
          values[n++] = rawRows[i];
        } else if (!this.emitted.has(key)) {
          this.emitted.add(key);
          keys[n] = key;
          values[n++] = old;
        }
      }
      // Fewer than asked for: the Map's end.
      if (got < want) {
        this.endWalk(false);
        break;
      }
    }
    return n;
  }

  /**
   * Every key of the snapshot was read or has a before-image: nothing more to record. A walk that
   * reached the Map's end read every key still in it; one that stopped early did not read the keys
   * deleted and set again since, so it reads every before-image not read yet.
   */
  private endWalk(stopped: boolean): void {
    this.stopped = stopped;
    this.recording = false;
    this.release(this);
    this.inserted.clear();
    this.cursor = this.before[Symbol.iterator]();
    this.phase = BEFORE;
  }

  /** The before-images the walk did not read, appended after the `n` entries read already. */
  private readBefore(keys: unknown[], values: unknown[], n: number, max: number): number {
    const it = this.cursor as Iterator<[K, Row]>;
    while (n < max) {
      const r = it.next();
      if (r.done === true) {
        this.phase = DONE;
        break;
      }
      const [key, old] = r.value;
      if (this.emitted.has(key) || (!this.stopped && this.map.has(key))) continue;
      keys[n] = key;
      values[n++] = old;
    }
    return n;
  }

  /** The entries of a fixed set of keys at the snapshot (each key once: the set does not change). */
  private readKeys(keys: unknown[], values: unknown[], max: number): number {
    const it = (this.cursor ??= (this.only as ReadonlySet<K>)[Symbol.iterator]()) as Iterator<K>;
    let n = 0;
    while (n < max) {
      const r = it.next();
      if (r.done === true) {
        this.phase = DONE;
        break;
      }
      const key = r.value;
      if (this.inserted.has(key)) continue;
      const row = this.before.get(key) ?? this.map.get(key);
      if (row !== undefined) {
        keys[n] = key;
        values[n++] = row;
      }
    }
    return n;
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
  const batches = (): EntryReader => {
    if (cache !== null || iterated) return iteratorReader(materialize());
    iterated = true;
    return snapshot;
  };
  // An empty target whose `length` the traps report: setting a million-element length on an array
  // allocates its whole (holey) backing store, 8 bytes an element.
  const target: Entry[] = [];
  const proxy = new Proxy(target, {
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
  registerEntryReader(proxy, batches);
  return proxy;
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
