// A join side read straight from a keyed table's own rows, when the side is a scan of the table
// joined on exactly its primary key: the table holds each key's one row already, so arranging the
// rows again by the same key (a JoinArrangement) only copied them. The join reads the side through
// the calls it makes of an arrangement (`JoinSideRows`): a key's slot is the table's slot, its one
// row the slot's row, each held once. The table has applied the epoch's batch before any view
// steps, so the side is at the epoch's new state when the join steps — as a shared arrangement is
// (join-op.ts takes its delta first, against the other side's old state, and never folds it in).
// It holds no rows and writes no checkpoint entries: the table's checkpoint holds the rows, and a
// recovery loads the tables before the views. Columns a probe emits may be kept by slot, as an
// arrangement keeps them (one array cell a value, not the row and its element): the new slots'
// cells written when a probe reads them, a row replaced in place at its step, all of them rebuilt
// when the table's slots moved (a compaction, a load).
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { NO_SLOT } from './group-index.ts';
import type { JoinKey, KeyFn } from './join-key.ts';
import { MAX_KEPT_COLUMNS } from './join-arrangement-rows.ts';
import type { ZBatch } from './zset.ts';

type Row = readonly Value[];

/** A keyed table's rows by slot (the table's SlotRowMap). Slots hold until `compactions` moves. */
export interface TableSlots {
  readonly size: number;
  readonly slotCount: number;
  readonly compactions: number;
  readonly replacements: number;
  slotOf(key: Value): number;
  rowAt(slot: number): Row | undefined;
}

/** What a join reads of a side it probes (a JoinArrangement, or a table's rows). */
export interface JoinSideRows {
  readonly size: number;
  readonly keyCount: number;
  /**
   * A high-water mark of the distinct rows one key has held (since the side was last emptied): it
   * only grows, so it stays at least what any key holds now, a bound a count reads with no probe.
   */
  readonly mostRowsUnderOneKey: number;
  readonly keysAreSlots: boolean;
  readonly keptColumns: readonly (readonly Value[])[];
  keepColumns(columns: readonly number[]): number[] | null;
  warm(keys: readonly (JoinKey | null)[], n: number): void;
  slotOf(key: JoinKey): number;
  total(slot: number): number;
  rowsAt(slot: number): number;
  head(slot: number): number;
  next(id: number): number;
  count(id: number): number;
  row(id: number): Row;
  addMatches(id: number, delta: number): number;
  owns(entry: unknown): boolean;
}

const NO_ROW = -1;

/** The table's key for a join key: an integer past 2^53 is a bigint in a table, keyed as text. */
export function tableKey(key: JoinKey): Value {
  // One range test for the usual key (within ±2^53, or not an integer: the number itself).
  if (typeof key === 'number')
    return (key <= Number.MAX_SAFE_INTEGER && key >= -Number.MAX_SAFE_INTEGER) || !Number.isInteger(key)
      ? key
      : `n${BigInt(key)};`;
  return typeof key === 'bigint' ? `n${key};` : key;
}

/**
 * Work counted for tests: kept columns rebuilt whole (the table's slots moved), and kept cells
 * written for slots the table took since the last write.
 */
export const tableSideWork = { keptRebuilds: 0, keptWrites: 0 };

/**
 * What the kept cells were written against: the table's slots, their compactions and in-place
 * replacements then, and the slots whose cells are written (those below `slots`).
 */
interface KeptMark {
  readonly rows: TableSlots;
  readonly compactions: number;
  replacements: number;
  slots: number;
}

function markOf(rows: TableSlots): KeptMark {
  return { rows, compactions: rows.compactions, replacements: rows.replacements, slots: rows.slotCount };
}

export class TableJoinSide implements JoinSideRows {
  private slots: TableSlots;
  private mark: KeptMark;
  private readonly keptAt: number[] = [];
  private readonly kept: Value[][] = [];

  /**
   * `rowsOf`: the table's rows now (a checkpoint load or a rebuild may replace them; read again at
   * each step). `entryPrefix`: the prefix of the entries this side's own arrangement would have
   * written, so a checkpoint that still holds them (written before the side read the table) loads.
   */
  constructor(
    private readonly rowsOf: () => TableSlots,
    private readonly entryPrefix: string,
  ) {
    this.slots = rowsOf();
    this.mark = markOf(this.slots);
  }

  /** Whether the table's slots moved since the kept cells were written (a load, a compaction, a clear). */
  private slotsMoved(): boolean {
    return this.slots !== this.mark.rows || this.slots.compactions !== this.mark.compactions;
  }

  /**
   * Reads the table's rows afresh (at each step: a load may have replaced them). The kept cells of
   * the slots the table took since they were last written are written when a probe reads them
   * (`keptColumns`), not here: a table filled while the other side has no rows to probe it (the
   * join bench's auctions phase) writes no cell per row, and the first probe writes them all in one
   * pass. A row the table inserts takes a new slot (a key deleted and inserted again too, even
   * where the change leaves the pair out), so those are read in order, with no key looked up. Only
   * where the table set a row in place of its key's row (its `replacements` moved) are the rows
   * `delta` inserts (the table's change this step, `keyOf` their join keys) found by key, now, to
   * write the replaced rows' cells.
   */
  sync(delta: ZBatch, keyOf: KeyFn): void {
    const slots = (this.slots = this.rowsOf());
    const kept = this.kept;
    if (kept.length === 0) return;
    if (this.slotsMoved()) {
      this.rebuildKept();
      return;
    }
    const mark = this.mark;
    // Rows set in place of their key's row kept their slots: only then are inserted rows found by key.
    if (slots.replacements === mark.replacements) return;
    this.writeNewSlots();
    mark.replacements = slots.replacements;
    const keptAt = this.keptAt;
    const weights = delta.weights;
    const rows = delta.rows;
    for (let i = 0; i < rows.length; i++) {
      if ((weights[i] as number) <= 0) continue;
      const row = rows[i] as Row;
      const key = keyOf(row);
      const slot = key === null ? -1 : slots.slotOf(tableKey(key));
      if (slot < 0) continue;
      for (let k = 0; k < kept.length; k++) (kept[k] as Value[])[slot] = row[keptAt[k] as number] as Value;
    }
  }

  /** Writes the kept cells of the slots the table took since they were last written. */
  private writeNewSlots(): void {
    const slots = this.slots;
    const kept = this.kept;
    const keptAt = this.keptAt;
    const mark = this.mark;
    const from = mark.slots;
    const to = slots.slotCount;
    for (let k = 0; k < kept.length; k++) {
      const values = kept[k] as Value[];
      const column = keptAt[k] as number;
      for (let s = from; s < to; s++) values[s] = slots.rowAt(s)?.[column] ?? null;
    }
    tableSideWork.keptWrites += (to - from) * kept.length;
    mark.slots = to;
  }

  private rebuildKept(): void {
    tableSideWork.keptRebuilds++;
    const slots = this.slots;
    for (let k = 0; k < this.kept.length; k++) this.kept[k] = this.columnOf(this.keptAt[k] as number);
    this.mark = markOf(slots);
  }

  private columnOf(column: number): Value[] {
    const slots = this.slots;
    const n = slots.slotCount;
    const values = new Array<Value>(n);
    for (let s = 0; s < n; s++) values[s] = slots.rowAt(s)?.[column] ?? null;
    return values;
  }

  /** Bytes of the kept columns (the rows are the table's). */
  get stateBytes(): number {
    return this.kept.reduce((bytes, values) => bytes + 8 * values.length, 0);
  }

  get size(): number {
    return this.slots.size;
  }

  get keyCount(): number {
    return this.slots.size;
  }

  /** A table's side is joined on its primary key: one row under each key it holds. */
  get mostRowsUnderOneKey(): number {
    return this.slots.size === 0 ? 0 : 1;
  }

  get keysAreSlots(): boolean {
    return false;
  }

  /** The kept cells by slot, those of the slots taken since the last read written first. */
  get keptColumns(): readonly (readonly Value[])[] {
    if (this.mark.slots !== this.slots.slotCount) this.writeNewSlots();
    return this.kept;
  }

  /** Keeps `columns` by slot (as JoinArrangement.keepColumns: null past MAX_KEPT_COLUMNS). */
  keepColumns(columns: readonly number[]): number[] | null {
    const added = new Set(columns.filter((c) => !this.keptAt.includes(c)));
    if (this.keptAt.length + added.size > MAX_KEPT_COLUMNS) return null;
    this.slots = this.rowsOf();
    if (this.kept.length > 0) {
      if (this.slotsMoved()) this.rebuildKept();
      else this.writeNewSlots();
    }
    for (const column of added) {
      this.keptAt.push(column);
      this.kept.push(this.columnOf(column));
    }
    this.mark = markOf(this.slots);
    return columns.map((c) => this.keptAt.indexOf(c));
  }

  warm(): void {}

  slotOf(key: JoinKey): number {
    const slot = this.slots.slotOf(tableKey(key));
    return slot < 0 ? NO_SLOT : slot;
  }

  total(): number {
    return 1;
  }

  rowsAt(): number {
    return 1;
  }

  head(slot: number): number {
    return slot;
  }

  next(): number {
    return NO_ROW;
  }

  count(): number {
    return 1;
  }

  row(id: number): Row {
    return this.slots.rowAt(id) as Row;
  }

  addMatches(): number {
    // Lowering reads a table only where no match is counted (no outer join with a residual).
    throw new SluiceError('INTERNAL_ERROR', 'a join side read from a table counts no matches');
  }

  owns(entry: unknown): boolean {
    return (entry as { readonly a?: unknown }).a === this.entryPrefix;
  }
}
