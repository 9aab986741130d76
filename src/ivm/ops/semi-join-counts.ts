// A semi-join's right side: per probe key, how many subquery rows carry it. The counts live in typed
// arrays by slot (keys interned through a GroupIndex: an INT key is one Int32Array cell), so a
// left row's probe is a typed-array read and a right row's fold allocates nothing unless its key is
// new — where the general Arrangement it replaces paid a bucket object, a Map per key and an entry
// object, and a second lookup table (KeyTotals) mirrored its totals for the probe. Checkpoint
// entries are exactly the Arrangement's (same ids, same stored form), so checkpoints written before
// load unchanged.
//
// A fold (`beginFold` … `endFold`) also lists the slots it touched, each with its total as of the
// fold's start, in the order first touched: the operator re-evaluates exactly those keys, without a
// Map of them. A key whose total reaches 0 keeps its slot until `endFold`, so a key that leaves and
// comes back within one fold is one slot, touched once.
//
// The probe reads a small non-negative integer key's total straight from a table indexed by the key
// (`byValue`, kept beside the slots while the keys are dense, as GroupIndex keeps its direct table):
// one random read per probe where key → slot → total was two dependent ones, each a cache miss once
// the keys outgrow the cache (100,000 auctions: the probe side's largest single cost).
import type { StoredRow as StoredArrangedRow } from '../arrangement.ts';
import { arrangedEntryId, inArrivalOrder, sameRow } from '../arrangement.ts';
import { ArrangementDelta, type Upserts } from '../arrangement-delta.ts';
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { encodeExactValues } from '../../common/values.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import type { JoinKey } from '../join-key.ts';
import { grownF64 } from '../typed-growth.ts';

/** The entry format of an Arrangement, keyed by its key text. */
type StoredRow = StoredArrangedRow<string, readonly Value[]>;

/**
 * The stored row of a one-column key that is its value (a number, text or boolean): the key is the
 * row, so none is kept per key (rows read back as `[key]`).
 */
const KEY_ROW: readonly Value[] = Object.freeze([]);

/**
 * Estimated heap bytes of one key held: its index cell, total, seq and stamp, the stored row (the
 * key's values) and its key text when a string. An estimate for metrics.
 */
function keyBytes(key: JoinKey, row: readonly Value[]): number {
  if (row === KEY_ROW) return 72 + boxedBytes(key) + (typeof key === 'string' ? key.length : 0);
  let boxed = 0;
  for (const v of row) boxed += boxedBytes(v);
  return 64 + 8 * row.length + boxed + (typeof key === 'string' ? key.length : 0);
}

function boxedBytes(v: Value): number {
  return typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= 2 ** 30 ? 16 : 0;
}

/** `byValue` may be this long whatever few keys are held; beyond it, BY_VALUE_SLACK cells a key. */
const BY_VALUE_START = 1024;
const BY_VALUE_SLACK = 4;
/** No key this large is kept by value (16 MiB of table). */
const BY_VALUE_MAX = 1 << 22;

export class MatchCounts extends ArrangementDelta {
  private readonly index = new GroupIndex();
  // Per slot.
  private totals = new Float64Array(16);
  /** The entry's arrival number (a checkpoint keeps it, as the Arrangement's entries did). */
  private seqs = new Float64Array(16);
  /** The fold that last touched the slot. */
  private stamps = new Float64Array(16);
  /**
   * The stored row (the key's values, as first seen while the key is held; KEY_ROW: the key itself);
   * null: free slot.
   */
  private rows: (readonly Value[] | null)[] = [];
  private keys: (JoinKey | null)[] = [];
  private freeSlots: number[] = [];
  private nextSeq = 0;
  private held = 0;
  private bytes = 0;
  // The current fold.
  private fold = 0;
  private readonly touched: number[] = [];
  private readonly touchedBefore: number[] = [];
  private readonly dirty = new Map<string, { readonly key: JoinKey; readonly row: readonly Value[] }>();
  /**
   * Totals by key value for the integer keys in [0, byValue.length): every held key in that range
   * has its total there, and a cell of 0 is a key not held. Grown (doubled) to cover a new key
   * while its length stays within BY_VALUE_SLACK cells per key held; null for good once a total
   * leaves the int32 range.
   */
  private byValue: Int32Array<ArrayBuffer> | null = new Int32Array(0);
  /** Whether `columns` are a row's first columns (a row of exactly those is stored as it is). */
  private readonly leading: boolean;
  /** Probes that went through the slot index (`total`); tests count them. */
  slotProbes = 0;

  /**
   * `label` names it in internal errors; `entryPrefix` keeps its checkpoint entries apart from the
   * operator's other arrangements; `keyId` writes a key in entry ids (a one-column key is the raw
   * value in memory, written as its encoding); `columns` are the columns of a right row that hold
   * the key's values (what an entry stores, in that order).
   */
  constructor(
    private readonly label: string,
    private readonly entryPrefix: string,
    private readonly keyId: (key: JoinKey) => string,
    private readonly columns: readonly number[],
  ) {
    super();
    this.leading = columns.every((c, i) => c === i);
  }

  /** Keys held (total > 0). */
  get size(): number {
    return this.held;
  }

  /** Approximate heap bytes held, for state metrics. */
  get stateBytes(): number {
    return this.bytes + (this.byValue === null ? 0 : this.byValue.byteLength);
  }

  /** The key's total (0 when it has none). */
  total(key: JoinKey): number {
    const byValue = this.byValue;
    // A number in the table's range is an integer there (-0 meets 0, as in the slot index).
    if (byValue !== null && typeof key === 'number' && key >= 0 && key < byValue.length && (key | 0) === key)
      return byValue[key] as number;
    this.slotProbes++;
    const slot = this.index.get(key);
    return slot === NO_SLOT ? 0 : (this.totals[slot] as number);
  }

  /** Starts a fold: the touched list is emptied. */
  beginFold(): void {
    this.fold++;
    this.touched.length = 0;
    this.touchedBefore.length = 0;
  }

  /** Slots touched by this fold, in the order first touched. */
  get touchedCount(): number {
    return this.touched.length;
  }

  /** The `i`-th touched key. */
  touchedKey(i: number): JoinKey {
    return this.keys[this.touched[i] as number] as JoinKey;
  }

  /** The `i`-th touched key's total before the fold. */
  totalBefore(i: number): number {
    return this.touchedBefore[i] as number;
  }

  /** The `i`-th touched key's total now. */
  totalNow(i: number): number {
    return this.totals[this.touched[i] as number] as number;
  }

  /** Adds `w` copies of a right row (`row`: its `columns` hold the key's values) under `key`. */
  add(key: JoinKey, row: readonly Value[], w: number): void {
    this.count(key, row, w, false);
  }

  /** The key's values in a right row, as an entry stores them. */
  private storedOf(key: JoinKey, row: readonly Value[]): readonly Value[] {
    const columns = this.columns;
    if (columns.length === 1) {
      const v = row[columns[0] as number] as Value;
      return v === key ? KEY_ROW : this.leading && row.length === 1 ? row : [v];
    }
    return this.leading && row.length === columns.length ? row : columns.map((c) => row[c] as Value);
  }

  /** The stored row of a held slot. */
  private rowAt(slot: number): readonly Value[] {
    const row = this.rows[slot] as readonly Value[];
    return row === KEY_ROW ? [this.keys[slot] as JoinKey] : row;
  }

  /** `add`, or with `isStored` a stored row (an entry's) rather than a right row. */
  private count(key: JoinKey, row: readonly Value[], w: number, isStored: boolean): void {
    if (w === 0) return;
    let slot = this.index.get(key);
    if (slot === NO_SLOT) {
      if (w < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
      slot = this.newSlot(key);
    }
    const before = this.totals[slot] as number;
    if (this.stamps[slot] !== this.fold) {
      this.stamps[slot] = this.fold;
      this.touched.push(slot);
      this.touchedBefore.push(before);
    }
    const after = before + w;
    if (after < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    if (before === 0) {
      // A new entry (or one that left earlier in this fold): it stores this row, numbered afresh.
      const stored = isStored ? row : this.storedOf(key, row);
      this.rows[slot] = stored;
      this.seqs[slot] = this.nextSeq++;
      this.held++;
      this.bytes += keyBytes(key, stored);
    } else if (after === 0) {
      this.held--;
      this.bytes -= keyBytes(key, this.rows[slot] as readonly Value[]);
    }
    this.totals[slot] = after;
    const byValue = this.byValue;
    if (byValue !== null && typeof key === 'number' && key >= 0 && key < BY_VALUE_MAX && (key | 0) === key) {
      if (key < byValue.length || this.coverByValue(key)) {
        if ((after | 0) === after) (this.byValue as Int32Array)[key] = after;
        else this.byValue = null;
      }
    }
    if (this.tracking) {
      const stored = this.rowAt(slot);
      this.dirty.set(this.entryId(key, stored), { key, row: stored });
    }
  }

  /** Ends a fold: keys left at 0 give up their slots. */
  endFold(): void {
    const touched = this.touched;
    for (let i = 0; i < touched.length; i++) {
      const slot = touched[i] as number;
      if (this.totals[slot] !== 0 || this.rows[slot] === null) continue;
      this.index.delete(this.keys[slot] as JoinKey);
      this.rows[slot] = null;
      this.keys[slot] = null;
      this.freeSlots.push(slot);
    }
  }

  /**
   * Grows `byValue` to cover the integer `key` if that keeps it dense (at most BY_VALUE_SLACK cells
   * per key held, or BY_VALUE_START cells); fills the new cells from the keys held. Whether it did.
   */
  private coverByValue(key: number): boolean {
    const old = this.byValue as Int32Array<ArrayBuffer>;
    let length = Math.max(old.length, BY_VALUE_START);
    while (length <= key) length *= 2;
    if (length > BY_VALUE_START && length > BY_VALUE_SLACK * (this.held + 1)) return false;
    const grown = new Int32Array(length);
    grown.set(old);
    const keys = this.keys;
    for (let slot = 0; slot < keys.length; slot++) {
      const k = keys[slot];
      if (typeof k !== 'number' || !(k >= old.length && k < length) || (k | 0) !== k) continue;
      const total = this.totals[slot] as number;
      if ((total | 0) !== total) {
        this.byValue = null;
        return false;
      }
      grown[k] = total;
    }
    this.byValue = grown;
    return true;
  }

  private newSlot(key: JoinKey): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.rows.length;
      this.rows.push(null);
      this.keys.push(null);
      if (slot >= this.totals.length) {
        this.totals = grownF64(this.totals, slot + 1);
        this.seqs = grownF64(this.seqs, slot + 1);
        this.stamps = grownF64(this.stamps, slot + 1);
      }
    }
    this.keys[slot] = key;
    this.totals[slot] = 0;
    this.stamps[slot] = 0;
    this.index.set(key, slot);
    return slot;
  }

  /** Empties it; the next delta replaces every stored entry. */
  clear(): void {
    this.index.clear();
    this.totals = new Float64Array(16);
    this.seqs = new Float64Array(16);
    this.stamps = new Float64Array(16);
    this.rows = [];
    this.keys = [];
    this.freeSlots = [];
    this.nextSeq = 0;
    this.held = 0;
    this.bytes = 0;
    this.touched.length = 0;
    this.touchedBefore.length = 0;
    this.byValue = new Int32Array(0);
    this.markCleared();
  }

  /** Replaces the contents with entries `takeDelta` wrote (see `owns`); `keyOf` keys a stored row. */
  load(entries: readonly unknown[], keyOf: (row: readonly Value[]) => JoinKey): void {
    this.clear();
    const { sorted, nextSeq } = inArrivalOrder<StoredRow>(entries);
    this.beginFold();
    for (const e of sorted) {
      this.nextSeq = e.s;
      this.count(keyOf(e.r), e.r, e.c, true);
    }
    this.endFold();
    this.nextSeq = nextSeq;
    this.markLoaded();
  }

  /** Whether a stored entry (a value `takeDelta` wrote) belongs to this structure. */
  owns(entry: unknown): boolean {
    return (entry as StoredRow).a === this.entryPrefix;
  }

  protected exportAll(upserts: Upserts): void {
    for (let slot = 0; slot < this.rows.length; slot++) {
      const row = this.rows[slot];
      if (row === null || row === undefined || this.totals[slot] === 0) continue;
      const key = this.keys[slot] as JoinKey;
      upserts.push([this.entryId(key, this.rowAt(slot)), this.stored(key, slot)]);
    }
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const [id, { key, row }] of this.dirty) {
      // The key's entry may since be another row's (the key left and came back as another text).
      const slot = this.index.get(key);
      const held = slot === NO_SLOT || this.totals[slot] === 0 ? null : this.rowAt(slot);
      if (held === null || !sameRow(held, row)) deletes.push(id);
      else upserts.push([id, this.stored(key, slot)]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }

  private stored(key: JoinKey, slot: number): StoredRow {
    return {
      a: this.entryPrefix,
      k: this.keyId(key),
      r: this.rowAt(slot),
      c: this.totals[slot] as number,
      m: 0,
      s: this.seqs[slot] as number,
    };
  }

  private entryId(key: JoinKey, row: readonly Value[]): string {
    return arrangedEntryId(this.entryPrefix, this.keyId(key), encodeExactValues(row));
  }
}
