// The unique mode of an arrangement: a key holds at most one row, kept as the Map's value (keyed
// tables and keyed view outputs). See arrangement.ts for the modes.
import type { Value } from '../common/types.ts';
import { encodeOne } from '../common/values.ts';
import { ArrangementDelta, type Upserts } from './arrangement-delta.ts';
import { CowSnapshot, snapshotEntries } from './cow-snapshot.ts';
import type { RowMap } from './slot-row-map.ts';

/** Incremental deltas of at least this many changed keys are read through a snapshot. */
const LAZY_CHANGED_MIN = 2048;

/**
 * A key holds at most one row, stored as the Map's value (no bucket, no count). Keys are Map keys
 * as `singleKey` or `encodeValues` make them; a checkpoint entry is the row under the key's encoding.
 * The Map is a `Map`, or what `newRows` makes: a keyed table's rows are a SlotRowMap (slot-row-map.ts).
 */
export class UniqueArrangement<K extends Value = Value> extends ArrangementDelta {
  /** Replaced (not cleared) by `clear` and `load`, so an open snapshot keeps reading the old Map. */
  private rows: RowMap<K>;
  /** Keys changed since the last delta (handed over whole to a large delta's snapshot). */
  private dirty = new Set<K>();
  /**
   * Of `dirty`, the keys deleted since the last delta (some set again since): a large delta's
   * deletes are looked for among these at the take, not among every changed key.
   */
  private removed = new Set<K>();
  /** Keys the last delta looked up in the rows when it was taken (for tests: the take's work). */
  private takeLookups = 0;
  /** The snapshot a full checkpoint is reading, while it needs before-images (cow-snapshot.ts). */
  private snapshot: CowSnapshot<K> | null = null;

  constructor(private readonly newRows: () => RowMap<K> = () => new Map<K, readonly Value[]>()) {
    super();
    this.rows = newRows();
  }

  get size(): number {
    return this.rows.size;
  }

  get(key: K): readonly Value[] | undefined {
    return this.rows.get(key);
  }

  has(key: K): boolean {
    return this.rows.has(key);
  }

  /** `out[i] = get(keys[i])` for i < n (a keyed table's batch of lookups: slot-row-map.ts `getMany`). */
  getMany(keys: readonly K[], n: number, out: (readonly Value[] | undefined)[]): void {
    const rows = this.rows;
    if (rows.getMany !== undefined) rows.getMany(keys, n, out);
    else for (let i = 0; i < n; i++) out[i] = rows.get(keys[i] as K);
  }

  /** At least every number key held (Infinity when the rows cannot tell: a Map). */
  get numberCeiling(): number {
    return this.rows.numberCeiling ?? Infinity;
  }

  /** Stores `row` as the key's row (replacing any). */
  set(key: K, row: readonly Value[]): void {
    if (this.snapshot !== null) this.snapshot.beforeChange(key, this.rows.get(key));
    this.rows.set(key, row);
    if (this.tracking) this.dirty.add(key);
  }

  /**
   * Stores `row` as the key's row if it has none; false (nothing changed) when it has one. One
   * lookup of the rows where `has` then `set` took two, unless a snapshot needs the before-image.
   */
  add(key: K, row: readonly Value[]): boolean {
    const rows = this.rows;
    if (this.snapshot === null && rows.add !== undefined) {
      if (!rows.add(key, row)) return false;
    } else {
      if (rows.has(key)) return false;
      this.snapshot?.beforeChange(key, undefined);
      rows.set(key, row);
    }
    if (this.tracking) this.dirty.add(key);
    return true;
  }

  /** Removes the key's row; returns it (undefined if there was none). */
  delete(key: K): readonly Value[] | undefined {
    const rows = this.rows;
    let row: readonly Value[] | undefined;
    if (this.snapshot === null && rows.take !== undefined) {
      // One lookup where `get` then `delete` took two.
      row = rows.take(key);
      if (row === undefined) return undefined;
    } else {
      row = rows.get(key);
      if (row === undefined) return undefined;
      this.snapshot?.beforeChange(key, row);
      rows.delete(key);
    }
    if (this.tracking) {
      this.dirty.add(key);
      this.removed.add(key);
    }
    // Renumbering slots would derail an open snapshot's walk of them: squeezed once it is over.
    if (this.snapshot === null && this.rows.wantsCompaction === true) this.rows.compact?.();
    return row;
  }

  /**
   * `out[i] = delete(keys[i])` for i < n, in order (a keyed view's retractions of a step): through the
   * rows' `takeMany` when they have it and no snapshot needs before-images, one lookup pass for all.
   */
  deleteMany(keys: readonly K[], n: number, out: (readonly Value[] | undefined)[]): void {
    const rows = this.rows;
    if (this.snapshot !== null || rows.takeMany === undefined) {
      for (let i = 0; i < n; i++) out[i] = this.delete(keys[i] as K);
      return;
    }
    rows.takeMany(keys, n, out);
    if (this.tracking)
      for (let i = 0; i < n; i++)
        if (out[i] !== undefined) {
          this.dirty.add(keys[i] as K);
          this.removed.add(keys[i] as K);
        }
    // Once for the batch, after its slots were used (compacting renumbers them).
    if (rows.wantsCompaction === true) rows.compact?.();
  }

  values(): IterableIterator<readonly Value[]> {
    return this.rows.values();
  }

  clear(): void {
    this.detachSnapshot();
    this.markCleared();
  }

  /** Replaces the contents with rows written by `takeDelta`, keyed again by `keyOf`. */
  load(entries: Iterable<unknown>, keyOf: (row: readonly Value[]) => K): void {
    this.detachSnapshot();
    for (const v of entries) {
      const row = v as readonly Value[];
      this.rows.set(keyOf(row), row);
    }
    this.markLoaded();
  }

  protected exportAll(upserts: Upserts): void {
    for (const [k, row] of this.rows) upserts.push([encodeOne(k), row]);
  }

  /**
   * The entries as they are now, read by the checkpoint writer across its slices while later epochs
   * change the rows: a copy-on-write snapshot (cow-snapshot.ts), so taking it allocates nothing
   * proportional to the table (arrays of a million keys and rows had set off ~100 ms GC pauses).
   */
  protected override allEntries(): readonly (readonly [string, unknown])[] {
    return this.openSnapshot(this.rows.size, null);
  }

  /**
   * A large incremental delta is read the same way: the changed keys are handed over to a snapshot
   * (a fresh set collects the next changes) and encoded as the writer reads them (tens of thousands
   * of changed rows had cost ~40 ms in one synchronous call). Only the deletes are found now, among
   * the keys deleted since the last delta: looking every changed key up for them had been the take's
   * longest piece (~15 ms for 100,000 new keys on the server bench, its loop run once a checkpoint,
   * so never warm), and it held the thread in one piece whatever the writer's slices.
   */
  protected override changedEntries(deletes: string[]): readonly (readonly [string, unknown])[] {
    if (this.dirty.size < LAZY_CHANGED_MIN) {
      // A snapshot still open is of an older delta, which must have been read by now: stop its
      // before-images from growing.
      this.snapshot?.supersede();
      this.snapshot = null;
      this.takeLookups = this.dirty.size;
      return super.changedEntries(deletes);
    }
    const keys = this.dirty;
    this.dirty = new Set();
    const removed = this.removed;
    this.removed = new Set();
    this.takeLookups = removed.size;
    for (const k of removed) if (!this.rows.has(k)) deletes.push(encodeOne(k));
    return this.openSnapshot(keys.size - deletes.length, keys);
  }

  /** Keys the last incremental delta looked up in the rows when it was taken (for tests). */
  get lastTakeLookups(): number {
    return this.takeLookups;
  }

  private openSnapshot(size: number, only: ReadonlySet<K> | null): readonly (readonly [string, unknown])[] {
    // One snapshot at a time: a newer one means the older one's writer was abandoned.
    this.snapshot?.supersede();
    const snapshot = new CowSnapshot<K>(
      this.rows,
      size,
      encodeOne,
      (s) => {
        if (this.snapshot === s) this.snapshot = null;
      },
      only,
    );
    this.snapshot = snapshot;
    return snapshotEntries(snapshot);
  }

  /** Keys whose before-image the open snapshot keeps (0 when none is open); for tests. */
  get snapshotChangedKeys(): number {
    return this.snapshot?.changedKeys ?? 0;
  }

  /** Leaves the current Map to an open snapshot (frozen from now on) and starts a new one. */
  private detachSnapshot(): void {
    if (this.snapshot === null) {
      this.rows.clear();
      return;
    }
    this.snapshot.detach();
    this.snapshot = null;
    this.rows = this.newRows();
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const k of this.dirty) {
      const row = this.rows.get(k);
      if (row === undefined) deletes.push(encodeOne(k));
      else upserts.push([encodeOne(k), row]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
    this.removed.clear();
  }
}
