// A join arrangement's rows by row id (join-arrangement-rows.ts keys them, chains them per slot and
// finds them by value): the row arrays, each id's record (join-row-records.ts) and next row in its
// chain, match sums for outer joins with a residual, and the columns kept by column. Ids are handed
// out and taken back here; what an id is chained to is the subclass's.
import type { Value } from '../common/types.ts';
import { ArrangementDelta } from './arrangement-delta.ts';
import { COUNT, grownRowRecords, newRowRecords, ROW_STRIDE, SEQ } from './join-row-records.ts';
import { cells, grownCells, grownF64, grownI32 } from './typed-growth.ts';

/**
 * Columns an arrangement keeps by column at most (`keepColumn`): each costs 8 B per arranged row, and
 * a probe reading more of a row than this reads the row itself.
 */
export const MAX_KEPT_COLUMNS = 4;

export abstract class JoinRowStore extends ArrangementDelta {
  private rowArrays: (readonly Value[] | null)[] = [];
  /**
   * Each row id's record (join-row-records.ts: count, seq, prev, slot, mixed), through two views of
   * one buffer: `rowF[id * ROW_STRIDE + COUNT]`, `rowI[id * ROW_STRIDE_I32 + PREV]`.
   */
  protected rowF: Float64Array<ArrayBuffer>;
  protected rowI: Int32Array<ArrayBuffer>;
  /**
   * Each row id's next row in its slot's chain, apart from the records: an append writes it at the
   * slot's last row, a random id among the recent ones, and 4 B a row keep those in the cache where
   * 32 B records do not.
   */
  protected nexts = new Int32Array(16);
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

  constructor() {
    super();
    const records = newRowRecords(16);
    this.rowF = records.f64;
    this.rowI = records.i32;
  }

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
    return this.rowF[id * ROW_STRIDE + COUNT] as number;
  }

  seq(id: number): number {
    return this.rowF[id * ROW_STRIDE + SEQ] as number;
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
  private get rowCapacity(): number {
    return this.rowF.length / ROW_STRIDE;
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
    const records = grownRowRecords({ f64: this.rowF, i32: this.rowI }, min);
    this.rowF = records.f64;
    this.rowI = records.i32;
    this.nexts = grownI32(this.nexts, this.rowCapacity);
    for (let k = 0; k < this.kept.length; k++)
      this.kept[k] = grownCells(this.kept[k] as Value[], this.rowCapacity);
  }

  /** Forgets every row (kept columns stay kept, emptied). */
  protected resetRows(): void {
    this.rowArrays = [];
    const records = newRowRecords(16);
    this.rowF = records.f64;
    this.rowI = records.i32;
    this.nexts = new Int32Array(16);
    this.matchCounts = new Float64Array(0);
    this.freeRows = [];
    for (let k = 0; k < this.kept.length; k++) this.kept[k] = cells(16);
    this.rowCount = 0;
    this.bytes = 0;
  }
}
