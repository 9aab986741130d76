// The counted mode of an arrangement: the key is the whole row, holding its multiplicity (keyless
// tables and views, Distinct, set operations). Rows are told apart by their exact texts (1.5 and
// 1.50 are two rows); with `byValue`, rows are also grouped by SQL equality, for an owner that shows
// one row per group (Distinct, set operations) or matches a row by value (a keyless table's delete).
// See arrangement.ts for the modes.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues, encodeValues } from '../common/values.ts';
import { compareExactRows } from './exact-rows.ts';
import { hashRow } from './arrangement.ts';
import { RowHashTable } from './row-hash-table.ts';
import { ArrangementDelta, type Upserts } from './arrangement-delta.ts';

export interface CountedRow {
  readonly row: readonly Value[];
  count: number;
}

/**
 * The key is the whole row: each distinct row once, with its multiplicity. Rows are found by hash
 * and compared in full (row-hash-table.ts), so no row is encoded to a string to be counted; held in
 * arrival order (the order `entries` gives, as a Map's would). A checkpoint entry is `{ r: row, c: count }` under the row's
 * exact encoding, built when exported; an operator holding more than one gives each an
 * `entryPrefix`, which its entry ids start with and its entries carry (`a`).
 */
export class CountedArrangement extends ArrangementDelta {
  /** The rows held, by arrival (row-hash-table.ts). */
  private held = new RowHashTable<CountedRow>((e) => e.row);
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
    return this.held.size;
  }

  /** Sum of the multiplicities. */
  get total(): number {
    return this.rowTotal;
  }

  /** The multiplicity of `row` (0 when absent). */
  count(row: readonly Value[]): number {
    const slot = this.held.find(row, hashRow(row));
    return slot < 0 ? 0 : this.held.at(slot).count;
  }

  /**
   * Adds `weight` copies of `row`; returns its entry after the change (count 0: the row is gone,
   * and the entry holds the row that was stored). `count - weight` is the multiplicity before.
   * `valueKey` is the row's encodeValues (with `byValue`), when the caller has it.
   */
  add(row: readonly Value[], weight: number, valueKey?: string): CountedRow {
    const hash = hashRow(row);
    const slot = this.held.find(row, hash);
    const entry = slot < 0 ? undefined : this.held.at(slot);
    const count = (entry?.count ?? 0) + weight;
    if (count < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    this.rowTotal += weight;
    if (entry === undefined) {
      const added: CountedRow = { row, count };
      if (count > 0) {
        this.held.insert(slot, added, hash);
        if (this.groups !== null) this.group(added, true, valueKey);
        if (this.tracking) this.dirty.add(added);
      }
      return added;
    }
    entry.count = count;
    if (this.tracking) this.dirty.add(entry);
    if (count === 0) {
      this.held.removeAt(slot);
      if (this.groups !== null) this.group(entry, false, valueKey);
    }
    return entry;
  }

  *entries(): IterableIterator<CountedRow> {
    for (const e of this.held.entries) if (e !== null) yield e;
  }

  clear(): void {
    this.held.reset(0);
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
      else if (this.held.find(e.row, hashRow(e.row)) < 0) gone.add(this.entryId(e.row));
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
