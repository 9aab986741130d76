// The counted mode of an arrangement: the key is the whole row, holding its multiplicity (keyless
// tables and views, Distinct, set operations). Rows are told apart by their exact texts (1.5 and
// 1.50 are two rows); with `byValue`, rows are also grouped by SQL equality, for an owner that shows
// one row per group (Distinct, set operations) or matches a row by value (a keyless table's delete).
// See arrangement.ts for the modes.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues, encodeValues } from '../common/values.ts';
import { compareExactRows } from './exact-rows.ts';
import { hashRow, sameRow } from './arrangement.ts';
import { ArrangementDelta, type Upserts } from './arrangement-delta.ts';

export interface CountedRow {
  readonly row: readonly Value[];
  count: number;
}

/**
 * The key is the whole row: each distinct row once, with its multiplicity. Rows are found by a hash
 * of their values in an open-addressed table and compared in full (`sameRow`, the identity of their
 * exact encodings), so no row is encoded to a string to be counted; held in arrival order (the order
 * `entries` gives, as a Map's would). A checkpoint entry is `{ r: row, c: count }` under the row's
 * exact encoding, built when exported; an operator holding more than one gives each an
 * `entryPrefix`, which its entry ids start with and its entries carry (`a`).
 */
export class CountedArrangement extends ArrangementDelta {
  /** The rows held, by arrival; null where a row left (compacted when holes outnumber rows). */
  private held: (CountedRow | null)[] = [];
  /** hashRow of `held[p]`. */
  private hashes = new Int32Array(16);
  /** Open-addressed by Fibonacci hashing, linear probing: a position in `held`, or -1 (free). */
  private table = new Int32Array(32).fill(-1);
  private shift = 27;
  private distinct = 0;
  private rowTotal = 0;
  /** Entries changed since the last export (an entry whose count reached 0 stands for its row's delete). */
  private readonly dirty = new Set<CountedRow>();
  /**
   * SQL encoding (encodeValues) → the rows held of that value, each of another text (derived, never
   * checkpointed; almost always one row). Built on first use (`byValue` owners use it every step; a
   * keyless table only when a delete names a text no row holds), then kept up to date.
   */
  private groups: Map<string, CountedRow[]> | null = null;

  /**
   * `label` names the arrangement's owner in internal errors; `byValue`: the owner asks for equal
   * rows at every step, so the index is kept from the start.
   */
  constructor(
    private readonly label: string,
    private readonly entryPrefix: string | null = null,
    byValue = false,
  ) {
    super();
    if (byValue) this.groups = new Map();
  }

  private grouped(): Map<string, CountedRow[]> {
    if (this.groups === null) {
      this.groups = new Map();
      for (const entry of this.entries()) this.group(entry, true, undefined);
    }
    return this.groups;
  }

  /**
   * The rows held that are SQL-equal to the row encoded (by encodeValues) as `valueKey`, in no
   * particular order; empty when none.
   */
  equalRows(valueKey: string): readonly CountedRow[] {
    return this.grouped().get(valueKey) ?? NO_ROWS;
  }

  /** Of the rows SQL-equal to `valueKey`, the one whose text sorts first (compareExactRows), or null. */
  representative(valueKey: string): CountedRow | null {
    const rows = this.grouped().get(valueKey);
    if (rows === undefined) return null;
    let best = rows[0] as CountedRow;
    for (let i = 1; i < rows.length; i++) {
      const r = rows[i] as CountedRow;
      if (compareExactRows(r.row, best.row) < 0) best = r;
    }
    return best;
  }

  private group(entry: CountedRow, on: boolean, valueKey: string | undefined): void {
    const groups = this.groups as Map<string, CountedRow[]>;
    const key = valueKey ?? encodeValues(entry.row);
    const rows = groups.get(key);
    if (on) {
      if (rows === undefined) groups.set(key, [entry]);
      else rows.push(entry);
    } else if (rows !== undefined) {
      if (rows.length === 1) groups.delete(key);
      else rows.splice(rows.indexOf(entry), 1);
    }
  }

  /** Whether a stored entry (a value `takeDelta` wrote) belongs to this arrangement. */
  owns(entry: unknown): boolean {
    return (entry as { a?: string }).a === (this.entryPrefix ?? undefined);
  }

  /** Distinct rows held. */
  get size(): number {
    return this.distinct;
  }

  /** Sum of the multiplicities. */
  get total(): number {
    return this.rowTotal;
  }

  /** The multiplicity of `row` (0 when absent). */
  count(row: readonly Value[]): number {
    const slot = this.find(row, hashRow(row));
    return slot < 0 ? 0 : (this.held[this.table[slot] as number] as CountedRow).count;
  }

  /**
   * Adds `weight` copies of `row`; returns its entry after the change (count 0: the row is gone,
   * and the entry holds the row that was stored). `count - weight` is the multiplicity before.
   * `valueKey` is the row's encodeValues (with `byValue`), when the caller has it.
   */
  add(row: readonly Value[], weight: number, valueKey?: string): CountedRow {
    const hash = hashRow(row);
    const slot = this.find(row, hash);
    const entry = slot < 0 ? undefined : (this.held[this.table[slot] as number] as CountedRow);
    const count = (entry?.count ?? 0) + weight;
    if (count < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    this.rowTotal += weight;
    if (entry === undefined) {
      const added: CountedRow = { row, count };
      if (count > 0) {
        this.insertAt(~slot, added, hash);
        if (this.groups !== null) this.group(added, true, valueKey);
        if (this.tracking) this.dirty.add(added);
      }
      return added;
    }
    entry.count = count;
    if (this.tracking) this.dirty.add(entry);
    if (count === 0) {
      this.removeAt(slot);
      if (this.groups !== null) this.group(entry, false, valueKey);
    }
    return entry;
  }

  /** The table slot holding `row` (of hash `hash`), or the complement of the free slot it would take. */
  private find(row: readonly Value[], hash: number): number {
    const table = this.table;
    const mask = table.length - 1;
    let slot = Math.imul(hash, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const p = table[slot] as number;
      if (p === -1) return ~slot;
      if (this.hashes[p] === hash && sameRow((this.held[p] as CountedRow).row, row)) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private insertAt(slot: number, entry: CountedRow, hash: number): void {
    const p = this.held.length;
    if (p === this.hashes.length) {
      const grown = new Int32Array(p * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.held.push(entry);
    this.hashes[p] = hash;
    this.table[slot] = p;
    this.distinct++;
    if (this.distinct * 2 > this.table.length) this.rebuild(this.table.length * 2);
  }

  /** Empties `slot`, moving later rows of its probe run back so every row stays reachable. */
  private removeAt(slot: number): void {
    const table = this.table;
    const mask = table.length - 1;
    this.held[table[slot] as number] = null;
    this.distinct--;
    let hole = slot;
    let at = slot;
    for (;;) {
      at = (at + 1) & mask;
      const p = table[at] as number;
      if (p === -1) break;
      const home = Math.imul(this.hashes[p] as number, 0x9e3779b1) >>> this.shift;
      // the row at `at` may move to `hole` when its home is not in the run (hole, at]
      if (hole <= at ? home <= hole || home > at : home <= hole && home > at) {
        table[hole] = p;
        hole = at;
      }
    }
    table[hole] = -1;
    if (this.held.length > 64 && this.held.length > this.distinct * 2) this.rebuild(this.table.length);
  }

  /** Drops the holes from `held` (arrival order kept) and re-slots every row in a table of `size`. */
  private rebuild(size: number): void {
    let n = 0;
    for (let p = 0; p < this.held.length; p++) {
      const e = this.held[p] as CountedRow | null;
      if (e === null) continue;
      this.held[n] = e;
      this.hashes[n] = this.hashes[p] as number;
      n++;
    }
    this.held.length = n;
    const table = size === this.table.length ? this.table.fill(-1) : new Int32Array(size).fill(-1);
    const mask = size - 1;
    this.shift = 32 - Math.log2(size);
    for (let p = 0; p < n; p++) {
      let slot = Math.imul(this.hashes[p] as number, 0x9e3779b1) >>> this.shift;
      while (table[slot] !== -1) slot = (slot + 1) & mask;
      table[slot] = p;
    }
    this.table = table;
  }

  *entries(): IterableIterator<CountedRow> {
    for (const e of this.held) if (e !== null) yield e;
  }

  clear(): void {
    this.held = [];
    this.table = new Int32Array(32).fill(-1);
    this.shift = 27;
    this.distinct = 0;
    this.groups?.clear();
    this.rowTotal = 0;
    this.markCleared();
  }

  /** Replaces the contents with entries written by `takeDelta`. */
  load(entries: Iterable<unknown>): void {
    this.clear();
    for (const v of entries) {
      const e = v as { r: Value[]; c: number };
      this.add(e.r, e.c);
    }
    this.markLoaded();
  }

  protected exportAll(upserts: Upserts): void {
    for (const e of this.entries()) upserts.push([this.entryId(e.row), this.stored(e)]);
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    const gone = new Set<string>();
    for (const e of this.dirty) {
      if (e.count > 0) upserts.push([this.entryId(e.row), this.stored(e)]);
      // a row that left and came back has a new entry, also marked: that one is exported
      else if (this.find(e.row, hashRow(e.row)) < 0) gone.add(this.entryId(e.row));
    }
    for (const id of gone) deletes.push(id);
  }

  private entryId(row: readonly Value[]): string {
    const rowKey = encodeExactValues(row);
    return this.entryPrefix === null ? rowKey : `${this.entryPrefix}${rowKey}`;
  }

  private stored(e: CountedRow): unknown {
    return this.entryPrefix === null
      ? { r: e.row, c: e.count }
      : { a: this.entryPrefix, r: e.row, c: e.count };
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }
}

const NO_ROWS: readonly CountedRow[] = [];
