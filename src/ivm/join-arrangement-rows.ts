// A join side's rows by join key (a join's own arrangements and the shared ones), laid out for the
// join's two hot paths without a Map per key or an object per row: a key is its own slot while the
// keys are small non-negative integers held densely (serial ids), else is interned to a dense slot
// (GroupIndex: int keys in typed arrays), rows live by row id (join-row-store.ts: parallel typed
// arrays of their numbers), chained per slot in arrival order, and are found by value through one
// open-addressing table over (slot, row hash) (join-row-table.ts) — or, while no two rows share a first-column value (a relation's primary key,
// usually), through an index of that value, which a serial id fills in order (see `byFirst`).
// Its checkpoint entries (exactly those of the indexed `Arrangement`) are written and read by the
// concrete class in join-arrangement.ts.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues } from '../common/values.ts';
import { arrangedEntryId, hashRow, sameRow } from './arrangement.ts';
import { GroupIndex, isDenseId, NO_SLOT } from './group-index.ts';
import type { JoinKey } from './join-key.ts';
import { keyBytes, rowBytes, TABLE_ROW_BYTES } from './join-state-bytes.ts';
import { mix, RowTable } from './join-row-table.ts';
import { grownI32 } from './typed-growth.ts';
import { JoinRowStore } from './join-row-store.ts';
import {
  HEAD,
  newSlots,
  readTotal,
  SIZE,
  SLOT_STRIDE,
  slotsByKey,
  TAIL,
  TOTAL,
  WIDE_TOTAL,
  writeTotal,
} from './join-slot-records.ts';

/** "No row" in the per-slot chains and in `head`/`next`. */
export const NO_ROW = -1;

export { MAX_KEPT_COLUMNS } from './join-row-store.ts';

/** While a key is its own slot (`keyIsSlot`), slots allowed per key held (group-index.ts `isDenseId`). */
const KEY_SLOTS_PER_KEY = 2;
/** Keys held before indexed keys may become slots again. */
const MIN_RESLOT_KEYS = 1024;

/** Work counted for tests: `keysToSlots` renumberings of indexed keys into keys as slots. */
export const joinArrangementWork = { keysToSlots: 0 };

/**
 * Key → the rows under it, each with its multiplicity, arrival order (`seq`, kept by checkpoints so a
 * restored bucket lists its rows in the original order) and, for outer joins with a residual, its
 * summed matches. Iterate a key's rows as
 * `for (let id = a.head(slot); id !== NO_ROW; id = a.next(id))` with `slot = a.slotOf(key)`; ids and
 * slots are valid until the next change to the arrangement. A multiplicity never goes negative.
 */
export abstract class JoinArrangementRows extends JoinRowStore {
  /**
   * While true, every key held is a small non-negative integer and is its own slot (a slot whose
   * record has no row is free): finding a key's slot reads no index, only the record the caller
   * reads next anyway — one cache miss a probe and a fold fewer once the keys outgrow the cache.
   * The first key that is not such an integer, or lies too far past the keys held
   * (KEY_SLOTS_PER_KEY), moves every key into `index`, slots staying put, until the keys held are
   * dense ints again (`noteIndexedKey`) or a reset.
   */
  private keyIsSlot = true;
  /** Key → slot once `keyIsSlot` is false (empty before). */
  private readonly index = new GroupIndex();
  /**
   * While keys are in `index`: whether every key held is a non-negative int, the greatest at most
   * `keyCeiling`; once they are dense (KEY_SLOTS_PER_KEY) and at least `reslotAt` are held, each
   * becomes its own slot again (`noteIndexedKey`). The first keys of a side keyed by a foreign key
   * (bids by auction) are sparse, yet a few batches later they are dense: from then on a fold and a
   * probe read no index.
   */
  private intKeysOnly = true;
  private keyCeiling = -1;
  private reslotAt = 0;
  private keysHeld = 0;
  // Per slot.
  protected slotKeys: (JoinKey | undefined)[] = [];
  /**
   * A slot's numbers side by side (SLOT_STRIDE int32 cells: head, tail, size, total), so an append
   * touches one cache line of them, not one in each of four arrays (a miss each once the keys
   * outgrow the cache). Int32, not doubles: a probe reads head, size and total of a random slot, and
   * at 32 B a slot the records of 25,000 keys (800 KB) no longer stayed in the core's cache where
   * four separate arrays had (a probe read 16 B of them per slot), which cost the quarter-size join
   * bench its probe speed.
   */
  protected slots = newSlots(16);
  /** Totals that do not fit a TOTAL cell (see WIDE_TOTAL), by slot. */
  private readonly wideTotals = new Map<number, number>();
  private freeSlots: number[] = [];
  /**
   * While non-null, the lookup table is not kept: every row held has its own first-column value (a
   * number or a string: values a GroupIndex, like a Z-set, tells apart and equates), and a row is
   * found through this index of that value — a direct table for serial ids, written in order
   * instead of at a random cell of the table. The first row that breaks this (a value held by
   * another row, or of another type) switches to the table for good (until a reset).
   */
  protected byFirst: GroupIndex | null = new GroupIndex();
  /**
   * While true (with `byFirst`), every row is under a key equal to its first column (a table by its
   * own id), so its key's slot, which holds only it, is that index and `byFirst` stays empty; the
   * first row under another key fills `byFirst` from the slots (`indexFirsts`) until a reset.
   */
  private firstIsKey = true;
  /** The rows by value while `byFirst` is null (empty otherwise). */
  private readonly table = new RowTable();
  /** The most distinct rows one slot has held since the last reset (mostRowsUnderOneKey). */
  private mostUnderOneSlot = 0;
  protected nextSeq = 0;
  protected readonly dirty = new Map<string, { readonly key: JoinKey; readonly row: readonly Value[] }>();

  /**
   * `label` names the arrangement in internal errors; `entryPrefix` keeps its checkpoint entries
   * apart; `keyId` writes a key in entry ids and stored entries.
   */
  constructor(
    private readonly label: string,
    protected readonly entryPrefix: string,
    protected readonly keyId: (key: JoinKey) => string,
  ) {
    super();
  }

  /** Whether rows are found by their first column's value (`byFirst`), not by the lookup table. */
  get findsByFirstColumn(): boolean {
    return this.byFirst !== null;
  }

  /** Whether every row is under its first column's value (`firstIsKey`), so `byFirst` stays empty. */
  get firstColumnIsKey(): boolean {
    return this.byFirst !== null && this.firstIsKey;
  }

  /** Keys held. */
  get keyCount(): number {
    return this.keysHeld;
  }

  /**
   * A high-water mark of the distinct rows one key has held since the arrangement was last emptied
   * (or loaded): it only grows, so no key holds more now. What lets a write's row-free join count
   * (join-fanout-probe.ts) bound a side whose rows spread over many keys by its busiest key, not by
   * its rows less its other keys.
   */
  get mostRowsUnderOneKey(): number {
    return this.mostUnderOneSlot;
  }

  /** Whether each key is its own slot (`keyIsSlot`), found without an index. */
  get keysAreSlots(): boolean {
    return this.keyIsSlot;
  }

  /** The slot of `key`, or NO_SLOT (-1) when no row is under it. */
  slotOf(key: JoinKey): number {
    if (!this.keyIsSlot) return this.index.get(key);
    if (typeof key !== 'number' || (key | 0) !== key || key < 0) return NO_SLOT;
    // A slot at or past `slotKeys`' end was never held: its record, not read, is known empty. A
    // table's new keys (ascending ids) all lie there, and their records are memory not yet touched
    // since the records grew: a read would fault its page in only for the write that follows to
    // fault it again. -0 is slot 0, as the index has it.
    return key < this.slotKeys.length && this.slots[key * SLOT_STRIDE + SIZE] !== 0 ? key | 0 : NO_SLOT;
  }

  /** Sum of the multiplicities under the slot. */
  total(slot: number): number {
    return readTotal(this.slots, this.wideTotals, slot);
  }

  /**
   * Distinct rows under the slot. With one (a key unique on this side), that row's count is the
   * slot's total: a probe reads neither its `next` nor its `count`, two cache misses once the rows
   * outgrow the cache.
   */
  rowsAt(slot: number): number {
    return this.slots[slot * SLOT_STRIDE + SIZE] as number;
  }

  /** The slot's first row (in arrival order), or NO_ROW. */
  head(slot: number): number {
    return this.slots[slot * SLOT_STRIDE + HEAD] as number;
  }

  /** Adds `w` to the row's matches (marking it for the next checkpoint delta); returns the new sum. */
  addMatches(id: number, w: number): number {
    const m = this.matches(id) + w;
    this.setMatches(id, m);
    if (this.tracking) this.mark(this.slotKeys[this.rowSlots[id] as number] as JoinKey, this.row(id));
    return m;
  }

  /** Every key held, in slot order (for an operator rebuilding a derived index after a load). */
  *keys(): IterableIterator<JoinKey> {
    for (const key of this.slotKeys) if (key !== undefined) yield key;
  }

  /** Distinct rows under `key` (0 when none), for tests. */
  rowsUnder(key: JoinKey): number {
    const slot = this.slotOf(key);
    return slot === NO_SLOT ? 0 : (this.slots[slot * SLOT_STRIDE + SIZE] as number);
  }

  /**
   * Adds `weight` copies of `row` under `key` (found by value: a row equal to one held adds to its
   * count); `matches` is a new row's initial match sum.
   */
  add(key: JoinKey, row: readonly Value[], weight: number, matches: number): void {
    if (weight === 0) return;
    // The row held equal to `row`, found once: through the first-column index while it stands.
    let id = NO_ROW;
    let hash = 0;
    let slot = this.slotOf(key);
    const byFirst = this.byFirst;
    if (byFirst !== null) {
      const first = row[0];
      let held = NO_ROW - 1;
      if (typeof first === 'number' || typeof first === 'string') {
        if (this.firstIsKey && first !== key) this.indexFirsts();
        held = !this.firstIsKey ? byFirst.get(first) : slot === NO_SLOT ? NO_ROW : this.head(slot);
      }
      const same = held >= 0 && this.rowSlots[held] === slot && sameRow(this.row(held), row);
      // Another row with this value (or a value the index cannot hold): the table from now on. A
      // retraction of a row not held needs no table: it fails below either way.
      if (held < NO_ROW || (held !== NO_ROW && weight > 0 && !same)) this.useTable();
      else if (same) id = held;
    }
    if (this.byFirst === null) {
      hash = hashRow(row);
      if (slot !== NO_SLOT) id = this.find(slot, row, hash);
    }
    const count = (id === NO_ROW ? 0 : (this.counts[id] as number)) + weight;
    if (count < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    if (this.tracking) this.mark(key, id === NO_ROW ? row : this.row(id));
    if (slot === NO_SLOT) slot = this.newSlot(key);
    const at = slot * SLOT_STRIDE + TOTAL;
    const total = (this.slots[at] as number) + weight;
    // A total outside int32 (or a wide one before) goes through the map.
    if ((total | 0) === total && total !== WIDE_TOTAL && this.slots[at] !== WIDE_TOTAL)
      this.slots[at] = total;
    else writeTotal(this.slots, this.wideTotals, slot, this.total(slot) + weight);
    if (id === NO_ROW) {
      id = this.newRow(slot, row, hash, count, matches);
      return;
    }
    if (count === 0) {
      this.removeRow(id, slot);
      if (this.slots[slot * SLOT_STRIDE + SIZE] === 0) this.freeSlot(slot, key);
    } else this.counts[id] = count;
  }

  private mark(key: JoinKey, row: readonly Value[]): void {
    this.dirty.set(this.entryId(key, row), { key, row });
  }

  protected entryId(key: JoinKey, row: readonly Value[]): string {
    return arrangedEntryId(this.entryPrefix, this.keyId(key), encodeExactValues(row));
  }

  /** The id of the row equal to `row` under `slot` (`hash`: its hashRow, or 0 by `byFirst`), or NO_ROW. */
  protected find(slot: number, row: readonly Value[], hash: number): number {
    const byFirst = this.byFirst;
    if (byFirst !== null) {
      const first = row[0];
      if (typeof first !== 'number' && typeof first !== 'string') return NO_ROW;
      // Under `firstIsKey` a slot holds one row, and a row equal to `row` can only be that one.
      const id = !this.firstIsKey ? byFirst.get(first) : this.head(slot);
      return id !== NO_ROW && this.rowSlots[id] === slot && sameRow(this.row(id), row) ? id : NO_ROW;
    }
    const h = mix(slot, hash);
    const t = this.table.cells;
    const mask = this.table.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = t[2 * i + 1] as number;
      if (s === 0) return NO_ROW;
      if (t[2 * i] === h) {
        const id = s - 1;
        if (this.rowSlots[id] === slot && sameRow(this.row(id), row)) return id;
      }
    }
  }

  private newSlot(key: JoinKey): number {
    if (this.keyIsSlot && !this.fitsAsSlot(key)) this.indexKeys();
    if (!this.keyIsSlot) this.noteIndexedKey(key);
    let slot: number;
    if (this.keyIsSlot) {
      slot = (key as number) | 0;
      if (slot * SLOT_STRIDE >= this.slots.length)
        this.slots = grownI32(this.slots, (slot + 1) * SLOT_STRIDE);
      // Filled up to the slot, never past the end: an array with a gap would turn into a dictionary.
      while (this.slotKeys.length < slot) this.slotKeys.push(undefined);
      this.slotKeys[slot] = key;
    } else {
      const free = this.freeSlots.pop();
      if (free === undefined) {
        slot = this.slotKeys.length;
        this.slotKeys.push(key);
        if (slot * SLOT_STRIDE >= this.slots.length) this.slots = grownI32(this.slots, 0);
      } else {
        slot = free;
        this.slotKeys[slot] = key;
      }
      this.index.set(key, slot);
    }
    this.keysHeld++;
    const at = slot * SLOT_STRIDE;
    this.slots[at + HEAD] = NO_ROW;
    this.slots[at + TAIL] = NO_ROW;
    this.slots[at + SIZE] = 0;
    this.slots[at + TOTAL] = 0;
    this.bytes += keyBytes(key);
    return slot;
  }

  private freeSlot(slot: number, key: JoinKey): void {
    if (this.slots[slot * SLOT_STRIDE + TOTAL] === WIDE_TOTAL) this.wideTotals.delete(slot);
    this.slotKeys[slot] = undefined;
    // A key that is its own slot frees it by having no row (SIZE 0): its key may come back.
    if (!this.keyIsSlot) {
      this.index.delete(key);
      this.freeSlots.push(slot);
    }
    this.keysHeld--;
    this.bytes -= keyBytes(key);
  }

  /** Whether `key` can be its own slot: a small non-negative integer not far past the keys held. */
  private fitsAsSlot(key: JoinKey): boolean {
    return typeof key === 'number' && (key | 0) === key && isDenseId(key, this.keysHeld, KEY_SLOTS_PER_KEY);
  }

  /** Leaves `keyIsSlot`: every key held goes into the index at its slot; the other slots are free. */
  private indexKeys(): void {
    this.keyIsSlot = false;
    this.intKeysOnly = true;
    this.keyCeiling = this.slotKeys.length - 1;
    // Not back to slots before the keys held double: each renumbering is paid for by the keys added.
    this.reslotAt = Math.max(MIN_RESLOT_KEYS, 2 * this.keysHeld);
    const keys = this.slotKeys;
    // Pushed from the last, so the lowest free slot is taken first.
    for (let slot = keys.length - 1; slot >= 0; slot--) {
      const key = keys[slot];
      if (key === undefined) this.freeSlots.push(slot);
      else this.index.set(key, slot);
    }
  }

  /** Notes a new key going into `index`; back to keys as slots when they are all dense ints. */
  private noteIndexedKey(key: JoinKey): void {
    if (typeof key === 'number' && (key | 0) === key && key >= 0) {
      if (key > this.keyCeiling) this.keyCeiling = key;
    } else this.intKeysOnly = false;
    // The lookup table's cells hash the slot: only while rows are found by their first column.
    if (
      !this.intKeysOnly ||
      this.byFirst === null ||
      this.keysHeld < this.reslotAt ||
      !isDenseId(this.keyCeiling, this.keysHeld, KEY_SLOTS_PER_KEY)
    )
      return;
    const to = slotsByKey(
      this.slots,
      this.slotKeys,
      this.keyCeiling,
      this.nexts,
      this.rowSlots,
      this.wideTotals,
    );
    this.slots = to.slots;
    this.slotKeys = to.slotKeys;
    this.index.clear();
    this.freeSlots = [];
    this.keyIsSlot = true;
    joinArrangementWork.keysToSlots++;
  }

  private newRow(slot: number, row: readonly Value[], hash: number, count: number, matches: number): number {
    const id = this.takeRowId(row);
    const byFirst = this.byFirst;
    if (byFirst === null) this.table.reserve(this.rowCount);
    const h = byFirst === null ? mix(slot, hash) : 0;
    this.counts[id] = count;
    this.seqs[id] = this.nextSeq++;
    this.setMatches(id, matches);
    this.rowSlots[id] = slot;
    // Read only by the lookup table (`useTable` fills it for every row when it starts).
    if (byFirst === null) this.mixed[id] = h;
    // Appended to the slot's chain: its rows are listed in arrival order.
    const slots = this.slots;
    const at = slot * SLOT_STRIDE;
    const tail = slots[at + TAIL] as number;
    this.prevs[id] = tail;
    this.nexts[id] = NO_ROW;
    if (tail === NO_ROW) slots[at + HEAD] = id;
    else this.nexts[tail] = id;
    slots[at + TAIL] = id;
    const size = (slots[at + SIZE] as number) + 1;
    slots[at + SIZE] = size;
    if (size > this.mostUnderOneSlot) this.mostUnderOneSlot = size;
    if (byFirst === null) this.table.insert(h, id);
    else if (!this.firstIsKey) byFirst.set(row[0] as Value, id);
    this.rowCount++;
    this.bytes += rowBytes(row) + 8 * this.keptAt.length + (byFirst === null ? TABLE_ROW_BYTES : 0);
    return id;
  }

  private removeRow(id: number, slot: number): void {
    const prev = this.prevs[id] as number;
    const next = this.nexts[id] as number;
    const slots = this.slots;
    const at = slot * SLOT_STRIDE;
    if (prev === NO_ROW) slots[at + HEAD] = next;
    else this.nexts[prev] = next;
    if (next === NO_ROW) slots[at + TAIL] = prev;
    else this.prevs[next] = prev;
    slots[at + SIZE] = (slots[at + SIZE] as number) - 1;
    if (this.byFirst === null) this.table.remove(this.mixed[id] as number, id);
    else if (!this.firstIsKey) this.byFirst.delete(this.row(id)[0] as Value);
    this.bytes -=
      rowBytes(this.row(id)) + 8 * this.keptAt.length + (this.byFirst === null ? TABLE_ROW_BYTES : 0);
    this.releaseRowId(id);
    this.rowCount--;
  }

  /** Leaves `firstIsKey`: `byFirst` gets the row of every slot held (each slot's only row). */
  private indexFirsts(): void {
    this.firstIsKey = false;
    const byFirst = this.byFirst as GroupIndex;
    const keys = this.slotKeys;
    for (let slot = 0; slot < keys.length; slot++) {
      if (keys[slot] === undefined) continue;
      const id = this.slots[slot * SLOT_STRIDE + HEAD] as number;
      byFirst.set(this.row(id)[0] as Value, id);
    }
  }

  /** Leaves `byFirst` for the lookup table, indexing every row held. */
  private useTable(): void {
    this.byFirst = null;
    this.firstIsKey = false;
    this.mixed = new Int32Array(this.rowCapacity);
    this.bytes += TABLE_ROW_BYTES * this.rowCount;
    this.table.reset(this.rowCount);
    for (let id = 0; id < this.rowIdEnd; id++) {
      const row = this.rowOrNull(id);
      if (row === null) continue;
      const h = mix(this.rowSlots[id] as number, hashRow(row));
      this.mixed[id] = h;
      this.table.insert(h, id);
    }
  }

  protected reset(): void {
    this.keyIsSlot = true;
    this.intKeysOnly = true;
    this.keyCeiling = -1;
    this.reslotAt = 0;
    this.index.clear();
    this.keysHeld = 0;
    this.slotKeys = [];
    this.slots = newSlots(16);
    this.wideTotals.clear();
    this.freeSlots = [];
    this.resetRows();
    this.table.reset(0);
    this.byFirst = new GroupIndex();
    this.firstIsKey = true;
    this.mostUnderOneSlot = 0;
    this.nextSeq = 0;
  }
}
