// The counted mode of an arrangement: the key is the whole row, holding its multiplicity (keyless
// tables and views, Distinct, set operations). A row is keyed by its exact encoding (1.5 and 1.50
// are two rows); with `byValue`, rows are also grouped by SQL equality, for an owner that shows one
// row per group (Distinct, set operations) or matches a row by value (a keyless table's delete).
// See arrangement.ts for the modes.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues, encodeValues } from '../common/values.ts';
import { compareExactRows } from './exact-rows.ts';
import { ArrangementDelta, type Upserts } from './arrangement-delta.ts';

export interface CountedRow {
  readonly row: readonly Value[];
  count: number;
}

/**
 * The key is the whole row (its exact encoding): each distinct row once, with its multiplicity. A
 * checkpoint entry is `{ r: row, c: count }` under the row's encoding; an operator holding more
 * than one gives each an `entryPrefix`, which its entry ids start with and its entries carry (`a`).
 */
export class CountedArrangement extends ArrangementDelta {
  private readonly rows = new Map<string, CountedRow>();
  private rowTotal = 0;
  private readonly dirty = new Set<string>();
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
      for (const entry of this.rows.values()) this.group(entry, true, undefined);
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
    return this.rows.size;
  }

  /** Sum of the multiplicities. */
  get total(): number {
    return this.rowTotal;
  }

  /** The multiplicity of the row encoded as `rowKey` (0 when absent). */
  count(rowKey: string): number {
    return this.rows.get(rowKey)?.count ?? 0;
  }

  /**
   * Adds `weight` copies of `row`; returns its entry after the change (count 0: the row is gone,
   * and the entry holds the row that was stored). `count - weight` is the multiplicity before.
   * `rowKey` is the row's encodeExactValues, `valueKey` its encodeValues (with `byValue`), when the
   * caller has them.
   */
  add(
    row: readonly Value[],
    weight: number,
    rowKey: string = encodeExactValues(row),
    valueKey?: string,
  ): CountedRow {
    const entry = this.rows.get(rowKey);
    const count = (entry?.count ?? 0) + weight;
    if (count < 0) throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    if (this.tracking) this.dirty.add(rowKey);
    this.rowTotal += weight;
    if (entry === undefined) {
      const added: CountedRow = { row, count };
      if (count > 0) {
        this.rows.set(rowKey, added);
        if (this.groups !== null) this.group(added, true, valueKey);
      }
      return added;
    }
    entry.count = count;
    if (count === 0) {
      this.rows.delete(rowKey);
      if (this.groups !== null) this.group(entry, false, valueKey);
    }
    return entry;
  }

  entries(): IterableIterator<CountedRow> {
    return this.rows.values();
  }

  clear(): void {
    this.rows.clear();
    this.groups?.clear();
    this.rowTotal = 0;
    this.markCleared();
  }

  /** Replaces the contents with entries written by `takeDelta`. */
  load(entries: Iterable<unknown>): void {
    this.rows.clear();
    this.groups?.clear();
    this.rowTotal = 0;
    for (const v of entries) {
      const e = v as { r: Value[]; c: number };
      const entry: CountedRow = { row: e.r, count: e.c };
      this.rows.set(encodeExactValues(e.r), entry);
      if (this.groups !== null) this.group(entry, true, undefined);
      this.rowTotal += e.c;
    }
    this.markLoaded();
  }

  protected exportAll(upserts: Upserts): void {
    for (const [k, e] of this.rows) upserts.push([this.entryId(k), this.stored(e)]);
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const k of this.dirty) {
      const e = this.rows.get(k);
      if (e === undefined) deletes.push(this.entryId(k));
      else upserts.push([this.entryId(k), this.stored(e)]);
    }
  }

  private entryId(rowKey: string): string {
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
