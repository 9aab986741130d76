// A join step's by-column probe of the other side's arrangement in passes over the whole delta,
// not row by row: first every delta row's key and slot, then every slot's record (taking a one-row
// slot's total with it; in the first pass where a key is its own slot), then the ids of every
// many-row slot's rows (all chains walked side by side, `gather`), then the first kept column's cell
// of each row found, then the emission. Each probe is a chain of dependent
// cache misses once the arrangement outgrows the cache (the key index, the slot's record, the kept
// column of its row); done row by row, the next row's misses wait for this row's. In passes, a
// pass's loads do not depend on each other, so the core has many of them in flight at once. Same
// rows, same order as the row-by-row loop.
import type { Value } from '../../common/types.ts';
import type { JoinSideRows } from '../join-table-side.ts';
import { NO_ROW, WARM_MAX_ROWS } from '../join-arrangement.ts';
import type { JoinKey, KeyFn } from '../join-key.ts';
import type { ZBatch } from '../zset.ts';
import type { PairKeptColumns } from './join-rows.ts';

/** A delta row with no slot to probe (a NULL key, or one whose key failed). */
const NO_KEY = -2;
/** A slot with more than one row: its chain is walked when emitting, each row's count read. */
const MANY: number = -3;
/**
 * A slot with more than one row, each held once (the slot's total is its size, and no count is
 * below 1): its chain is walked without reading the counts, a cache miss a row.
 */
const MANY_ONCE: number = -4;

/** Keys the probes computed, over all probes (tests count them). */
export const stagedProbeWork = { keysComputed: 0 };

/** The most chain ids kept between steps (4 MB): a batch of 10,000 ten-row keys needs 100,000. */
const KEEP_CHAIN_IDS = 1 << 20;

export class StagedProbe {
  /** Per delta row: its slot in the probed arrangement, NO_SLOT (-1) or NO_KEY. */
  private slots = new Int32Array(0);
  /** Per delta row: the slot's only row, MANY or MANY_ONCE, or NO_ROW when the slot is absent. */
  private heads = new Int32Array(0);
  /** Per delta row whose slot has one row: the slot's total. */
  private totals = new Float64Array(0);
  /** Per delta row whose slot has many rows: where its rows' ids start in `chainIds`. */
  private starts = new Int32Array(0);
  /** The ids of every many-row slot's rows, slot after slot in delta order, each slot's in chain order. */
  private chainIds = new Int32Array(0);
  /** `gather`'s scratch: per chain still being walked, its next id and where that id goes. */
  private cursors = new Int32Array(0);
  private writeAt = new Int32Array(0);
  /** Kept cells found absent by the pre-read passes (kept only so the reads are made). */
  private absent = 0;
  /** Per delta row: its key (null: none), for the fold that follows the probe. */
  readonly keys: (JoinKey | null)[] = [];

  /**
   * Probes `theirs` with every row of `delta`, appending each match's picked columns (`append`) to
   * `cols` and its weight to `weights`; returns the matches emitted. Rows whose key fails go to
   * `reportKeyError` and, like NULL keys, get a null in `keys`.
   */
  probe(
    delta: ZBatch,
    keyOf: KeyFn,
    theirs: JoinSideRows,
    append: PairKeptColumns,
    cols: Value[][],
    weights: number[],
    reportKeyError: (error: unknown, row: readonly Value[], weight: number) => void,
  ): number {
    const rows = delta.rows;
    const n = rows.length;
    stagedProbeWork.keysComputed += n;
    if (this.slots.length < n) {
      this.slots = new Int32Array(n);
      this.heads = new Int32Array(n);
      this.totals = new Float64Array(n);
      this.starts = new Int32Array(n);
    }
    const slots = this.slots;
    const heads = this.heads;
    const totals = this.totals;
    const keys = this.keys;
    keys.length = n;
    // Nothing to match (the other side holds no row yet, as while a table's first rows arrive):
    // only the keys, which the fold that follows needs; no slot looked up, no record read.
    if (theirs.keyCount === 0) {
      for (let i = 0; i < n; i++) keys[i] = this.keyOrNull(delta, i, keyOf, reportKeyError);
      return 0;
    }
    // Where each key is its own slot, finding the slot reads the slot's record: the record's
    // numbers are taken in the same pass. Else the index's misses and then the records' are two
    // passes, so neither waits on the other row by row.
    const recordsNow = theirs.keysAreSlots;
    // Rows under many-row slots so far (their ids are gathered into `chainIds` before emitting).
    let chained = 0;
    // A small batch's records are read ahead in a tight pass of their own (`warm`): with the key's
    // computation in the same loop, fewer of their misses were in flight at once.
    const warmed = recordsNow && n <= WARM_MAX_ROWS;
    if (warmed) {
      for (let i = 0; i < n; i++) keys[i] = this.keyOrNull(delta, i, keyOf, reportKeyError);
      theirs.warm(keys, n);
    }
    for (let i = 0; i < n; i++) {
      const key = warmed ? (keys[i] as JoinKey | null) : this.keyOrNull(delta, i, keyOf, reportKeyError);
      keys[i] = key;
      const slot = key === null ? NO_KEY : theirs.slotOf(key);
      slots[i] = slot;
      if (recordsNow) chained = this.readRecord(theirs, i, slot, chained);
    }
    if (!recordsNow)
      for (let i = 0; i < n; i++) chained = this.readRecord(theirs, i, slots[i] as number, chained);
    if (chained > 0) this.gather(theirs, n, chained);
    const kept = theirs.keptColumns;
    // The kept cells the emission reads, loaded in passes of their own (one independent load a row)
    // so the emission finds them in the cache: one-row slots' rows, then many-row slots' rows.
    if (kept.length > 0) {
      const first = kept[0] as readonly Value[];
      let absent = 0;
      for (let i = 0; i < n; i++) {
        const head = heads[i] as number;
        if (head >= 0 && first[head] === undefined) absent++;
      }
      const chainIds = this.chainIds;
      for (let j = 0; j < chained; j++) if (first[chainIds[j] as number] === undefined) absent++;
      this.absent = absent;
    }
    let produced = 0;
    for (let i = 0; i < n; i++) {
      const head = heads[i] as number;
      if (head === NO_ROW) continue;
      const row = rows[i] as readonly Value[];
      const w = delta.weights[i] as number;
      if (head >= 0) {
        // One row under the key (their key is unique): its count is the slot's total.
        append(row, head, kept, cols);
        weights.push(w * (totals[i] as number));
        produced++;
        continue;
      }
      const chainIds = this.chainIds;
      const from = this.starts[i] as number;
      const to = from + theirs.rowsAt(slots[i] as number);
      if (head === MANY_ONCE)
        for (let j = from; j < to; j++) {
          append(row, chainIds[j] as number, kept, cols);
          weights.push(w);
        }
      else
        for (let j = from; j < to; j++) {
          const id = chainIds[j] as number;
          append(row, id, kept, cols);
          weights.push(w * theirs.count(id));
        }
      produced += to - from;
    }
    // A probe of a hot key can gather millions of ids: not kept past the step that needed them.
    if (this.chainIds.length > KEEP_CHAIN_IDS) this.chainIds = new Int32Array(0);
    return produced;
  }

  /** Row `i`'s key, or null (a NULL key, or one whose key failed: reported). */
  private keyOrNull(
    delta: ZBatch,
    i: number,
    keyOf: KeyFn,
    reportKeyError: (error: unknown, row: readonly Value[], weight: number) => void,
  ): JoinKey | null {
    const row = delta.rows[i] as readonly Value[];
    try {
      return keyOf(row);
    } catch (error) {
      reportKeyError(error, row, delta.weights[i] as number);
      return null;
    }
  }

  /**
   * Fills `chainIds` with the ids of every many-row slot's rows (`total` of them), walking all the
   * chains at once, a step of each in turn: a chain's next id depends on the load of its last one, a
   * cache miss a row once the arrangement outgrows the cache; walked one chain after another, every
   * step waits for the one before, while the steps of different chains do not depend on each other.
   */
  private gather(theirs: JoinSideRows, n: number, total: number): void {
    if (this.chainIds.length < total) this.chainIds = new Int32Array(total);
    if (this.cursors.length < n) {
      this.cursors = new Int32Array(n);
      this.writeAt = new Int32Array(n);
    }
    const { chainIds, cursors, writeAt, heads, slots, starts } = this;
    let live = 0;
    for (let i = 0; i < n; i++) {
      const head = heads[i] as number;
      if (head !== MANY && head !== MANY_ONCE) continue;
      cursors[live] = theirs.head(slots[i] as number);
      writeAt[live++] = starts[i] as number;
    }
    while (live > 0) {
      let kept = 0;
      for (let c = 0; c < live; c++) {
        const id = cursors[c] as number;
        const at = writeAt[c] as number;
        chainIds[at] = id;
        const next = theirs.next(id);
        // A chain that ends drops out; the rest move down, so the next round walks only live ones.
        if (next !== NO_ROW) {
          cursors[kept] = next;
          writeAt[kept++] = at + 1;
        }
      }
      live = kept;
    }
  }

  /**
   * Row `i`'s entry in `heads` (and `totals`, or `starts` for a many-row slot) from its slot's
   * record; `chained` is the many-row slots' rows before row `i`, and the sum after it is returned.
   */
  private readRecord(theirs: JoinSideRows, i: number, slot: number, chained: number): number {
    if (slot < 0) {
      this.heads[i] = NO_ROW;
      return chained;
    }
    const size = theirs.rowsAt(slot);
    // The total is read now, from the record line this pass loads anyway, not when emitting.
    const total = theirs.total(slot);
    if (size === 1) {
      this.heads[i] = theirs.head(slot);
      this.totals[i] = total;
      return chained;
    }
    this.heads[i] = total === size ? MANY_ONCE : MANY;
    this.starts[i] = chained;
    return chained + size;
  }
}
