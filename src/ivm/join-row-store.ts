// A join arrangement's rows by row id (join-arrangement-rows.ts keys them, chains them per slot and
// finds them by value): the row arrays and each id's numbers in typed arrays by id (count, arrival
// order, its neighbours in its slot's chain, its slot), match sums for outer joins with a residual,
// and the columns kept by column. Ids are handed out and taken back here; what an id is chained to
// is the subclass's.
import type { Value } from '../common/types.ts';
import { ArrangementDelta } from './arrangement-delta.ts';
import { cells, grownCells, grownF64, grownI32 } from './typed-growth.ts';

/**
 * Columns an arrangement keeps by column at most (`keepColumn`): each costs 8 B per arranged row, and
 * a probe reading more of a row than this reads the row itself.
 */
export const MAX_KEPT_COLUMNS = 4;

export abstract class JoinRowStore extends ArrangementDelta {
  private rowArrays: (readonly Value[] | null)[] = [];
  /**
   * An array per number, not a record per id: with the numbers in one 32-byte record a row (tried),
   * the join bench ran no faster at batch 100 and behind at batch 10,000. The loads of one id's
   * numbers from these arrays are independent, so their misses overlap anyway.
   */
  protected counts = new Float64Array(16);
  protected seqs = new Float64Array(16);
  protected nexts = new Int32Array(16);
  protected prevs = new Int32Array(16);
  protected rowSlots = new Int32Array(16);
  /** Each row's hash for the lookup table, kept only while rows are found by it (empty before). */
  protected mixed = new Int32Array(0);
  /** Only as long as the last id with a non-zero sum (outer joins with a residual): 0 past it. */
  private matchCounts = new Float64Array(0);
  private freeRows: number[] = [];
  /**
   * Columns kept by column (`keepColumn`): `kept[k][id]` is the value of column `keptAt[k]` of row
   * `id` (null for a free id), so a probe that emits a column or two of many arranged rows reads one
   * array cell per value instead of the row array and its elements, two dependent cache misses.
   */
  protected readonly keptAt: number[] = [];
  private readonly kept: Value[][] = [];
  protected rowCount = 0;
  protected bytes = 0;

  /** Distinct rows arranged. */
  get size(): number {
    return this.rowCount;
  }

  /** Approximate heap bytes held, for state metrics. */
  get stateBytes(): number {
    return this.bytes;
  }

  next(id: number): number {
    return this.nexts[id] as number;
  }

  row(id: number): readonly Value[] {
    return this.rowArrays[id] as readonly Value[];
  }

  count(id: number): number {
    return this.counts[id] as number;
  }

  seq(id: number): number {
    return this.seqs[id] as number;
  }

  matches(id: number): number {
    return this.matchCounts[id] ?? 0;
  }

  /**
   * Keeps `columns` of every row by column from now on (filled from the rows held); returns each
   * one's index in `keptColumns`, or null (keeping none) when that would keep more than
   * MAX_KEPT_COLUMNS. A column stays kept for the arrangement's life (a shared one outlives the join
   * that asked).
   */
  keepColumns(columns: readonly number[]): number[] | null {
    const added = new Set(columns.filter((c) => !this.keptAt.includes(c)));
    if (this.keptAt.length + added.size > MAX_KEPT_COLUMNS) return null;
    for (const column of added) {
      const values = cells(this.rowCapacity);
      this.rowArrays.forEach((row, id) => (values[id] = row?.[column] ?? null));
      this.keptAt.push(column);
      this.kept.push(values);
      this.bytes += 8 * this.rowCount;
    }
    return columns.map((c) => this.keptAt.indexOf(c));
  }

  /** The kept columns (`keepColumn`), each by row id; valid until the next change. */
  get keptColumns(): readonly (readonly Value[])[] {
    return this.kept;
  }

  /** Row ids the records have room for. */
  protected get rowCapacity(): number {
    return this.counts.length;
  }

  /** One past the greatest row id handed out: ids below it are held or free. */
  protected get rowIdEnd(): number {
    return this.rowArrays.length;
  }

  /** The row at `id`, or null for a free id. */
  protected rowOrNull(id: number): readonly Value[] | null {
    return this.rowArrays[id] ?? null;
  }

  /** A free row id (room made in every per-id array) now holding `row` and its kept columns. */
  protected takeRowId(row: readonly Value[]): number {
    let id = this.freeRows.pop();
    if (id === undefined) {
      id = this.rowArrays.length;
      this.rowArrays.push(row);
      if (id >= this.rowCapacity) this.growRows(id + 1);
    } else this.rowArrays[id] = row;
    const keptAt = this.keptAt;
    for (let k = 0; k < keptAt.length; k++) (this.kept[k] as Value[])[id] = row[keptAt[k] as number] as Value;
    return id;
  }

  /** Frees row `id` (already unchained by the caller). */
  protected releaseRowId(id: number): void {
    this.rowArrays[id] = null;
    for (let k = 0; k < this.kept.length; k++) (this.kept[k] as Value[])[id] = null;
    this.freeRows.push(id);
  }

  protected setMatches(id: number, m: number): void {
    if (id >= this.matchCounts.length) {
      if (m === 0) return;
      this.matchCounts = grownF64(this.matchCounts, this.rowCapacity);
    }
    this.matchCounts[id] = m;
  }

  private growRows(min: number): void {
    this.counts = grownF64(this.counts, min);
    this.seqs = grownF64(this.seqs, min);
    this.nexts = grownI32(this.nexts, min);
    this.prevs = grownI32(this.prevs, min);
    this.rowSlots = grownI32(this.rowSlots, min);
    if (this.mixed.length !== 0) this.mixed = grownI32(this.mixed, min);
    for (let k = 0; k < this.kept.length; k++)
      this.kept[k] = grownCells(this.kept[k] as Value[], this.rowCapacity);
  }

  /** Forgets every row (kept columns stay kept, emptied). */
  protected resetRows(): void {
    this.rowArrays = [];
    this.counts = new Float64Array(16);
    this.seqs = new Float64Array(16);
    this.nexts = new Int32Array(16);
    this.prevs = new Int32Array(16);
    this.rowSlots = new Int32Array(16);
    this.mixed = new Int32Array(0);
    this.matchCounts = new Float64Array(0);
    this.freeRows = [];
    for (let k = 0; k < this.kept.length; k++) this.kept[k] = cells(16);
    this.rowCount = 0;
    this.bytes = 0;
  }
}
