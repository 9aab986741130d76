// The Reduce's output-column builder: a step's changes leave column by column (a ColumnBatch of
// columns and weights), each group's -old taken from its record where the record mirrors it, else
// from its old row object. The changes are written into scratch columns kept between steps. A
// step of a few changes (an epoch of one event) is lent in columns of exactly its length kept for
// that length; the next step writes straight into the columns of the last step's length, so an
// epoch that makes as many changes as the one before (a group's -old/+new every time) copies
// nothing. A larger step's scratch columns are lent to the batch itself, trimmed to its length: a
// step of 10,000 orders makes ≈ 19,000 changes, and a copy of that many values is a large object
// (beyond 128 KB), mapped and faulted in afresh each step and a good part of the GC; a step of 100
// orders makes ≈ 200, whose copies were 67 of the 77 bytes the canonical pipeline allocated per
// event at batch 100 once the table's columns were lent (table-lent-columns.ts).
// A lent batch is valid until this Reduce's next step (its epoch is over by then): the buffer
// expires it, so any read after that throws instead of seeing the next step's changes.
import type { Value } from '../../common/types.ts';
import { ColumnBatch, type ZBatch } from '../zset.ts';
import type { GroupRecords } from './aggregates.ts';
import { F_KEY, F_OUT, KEY_IN_RECORD, OUT_IN_RECORD } from './reduce-record.ts';

/** Scratch kept between steps, in changes (a larger step's is handed over and not kept). */
const MAX_KEPT_CHANGES = 1 << 16;
/**
 * Up to this many changes (a one-row step: a group's -old/+new, a downstream bucket's two) a step's
 * changes go into columns of exactly their length kept for that length, lent like a large step's:
 * the step allocates its batch object alone, not an array per column and the weights besides.
 */
const EXACT_UP_TO = 4;

/**
 * A change column of `n` zeros (never read: every cell is written before a batch is lent), made in
 * V8's double-elements kind. A numeric column then keeps that one kind at every step size: the
 * scratch columns used to start as small integers, turn to doubles at the first write of a
 * fractional value and to tagged values at a later write of a plain number (the write sites are
 * shared with the small steps' columns, made tagged by their `null` fill, and a store site that has
 * seen both kinds turns a double array tagged whatever it stores). The consumers (the next Reduce's
 * row pass, the Output) then read one kind. A column that is written a NULL, a bigint or text turns
 * tagged as any array would; only the speed of its loads depends on the kind, never a value.
 * A buffer that has written only numbers makes its columns here, one that has written anything else
 * in `valueColumn`: each literal has an allocation site of its own, which V8 turns tagged (every array
 * made there after starts tagged) when a young array made there is written a non-number.
 */
function numberColumn(n: number): Value[] {
  const col: Value[] = [0.5];
  col.length = 0;
  for (let i = 0; i < n; i++) col.push(0);
  return col;
}

/** A change column of a buffer that has written a NULL, a bigint or text (see numberColumn). */
function valueColumn(n: number): Value[] {
  const col: Value[] = [0.5];
  col.length = 0;
  for (let i = 0; i < n; i++) col.push(0);
  return col;
}

// The store sites. V8 keeps one set of feedback per function, shared by every buffer in the process,
// and a site that has stored into a tagged array turns each double array it stores into tagged: one
// Reduce that writes NULLs or text anywhere made every Reduce's columns tagged. A buffer writes through
// `setNumber`/`copyNumbers` while it has written only numbers (so those sites see numbers into double
// columns alone), and through `setValue`/`copyValues` from its first other value on, in columns made
// afresh (see ChangeBuffer.generalize). The values stored are the same either way.
function setNumber(col: Value[], i: number, v: Value): void {
  col[i] = v;
}
function setValue(col: Value[], i: number, v: Value): void {
  col[i] = v;
}
function copyNumbers(to: Value[], from: Value[], n: number): void {
  for (let i = 0; i < n; i++) to[i] = from[i] as Value;
}
function copyValues(to: Value[], from: Value[], n: number): void {
  for (let i = 0; i < n; i++) to[i] = from[i] as Value;
}

/**
 * Up to this many surplus cells a column is trimmed by `pop`s, beyond it by its `length` setter. A
 * step of 100 orders writes about as many changes as the one before (a few more or fewer), and the
 * setter is a call into the runtime (≈ 1.6% of the canonical pipeline at batch 100 for three columns a
 * step), where a pop is inlined; the setter also gives back the unused room of a column that shrinks
 * by more than half, which the next larger step then allocates again.
 */
const TRIM_BY_POPS_UP_TO = 64;

/** Shortens `col` to `n` cells (it holds at least `n`); returns whether the length setter did it. */
function trimTo(col: unknown[], n: number): boolean {
  const surplus = col.length - n;
  if (surplus > TRIM_BY_POPS_UP_TO) {
    col.length = n;
    return true;
  }
  for (let k = 0; k < surplus; k++) col.pop();
  return false;
}

function allNumbers(row: readonly Value[], width: number): boolean {
  for (let c = 0; c < width; c++) if (typeof row[c] !== 'number') return false;
  return true;
}

export class ChangeBuffer {
  /** Where changes are written: the scratch columns, or the columns kept for `cap` changes. */
  private weights: number[] = [];
  private cols: Value[][];
  /**
   * The write target holds at most this many changes (Infinity: the scratch). After a step of n ≤
   * EXACT_UP_TO changes the next step writes into the columns kept for n (the batch they were lent
   * to expires at the first write, as before): an epoch of one event makes as many changes as the
   * one before, so its batch lends them with no copy. A step that writes more spills to the scratch.
   */
  private cap = Infinity;
  private scratchWeights: number[] = [];
  private scratchCols: Value[][];
  private n = 0;
  private uncopied = 0;
  /** The batch the scratch columns are lent to, until the next change is written. */
  private lent: ColumnBatch | null = null;
  /** The sum of the weights written since the last take (replace2 adds none). */
  private net = 0;
  /** The sum of the weights of the batch `take` returned last. */
  private takenNet = 0;
  /** By length n ≤ EXACT_UP_TO: columns and weights of exactly n values (made at first use). */
  private exact: ({ readonly cols: Value[][]; readonly weights: number[] } | undefined)[] = [];
  /** Columns and weights trimmed by their length setter rather than by pops (see trimTo), for tests. */
  lengthSets = 0;
  /** Only numbers written so far (by every step): the columns and store sites are numberColumn's. */
  private numeric = true;

  constructor(private readonly width: number) {
    this.scratchCols = Array.from({ length: width }, () => numberColumn(0));
    this.cols = this.scratchCols;
    this.weights = this.scratchWeights;
  }

  /**
   * The step writes more changes than the kept columns hold: the ones so far move to the columns
   * kept for EXACT_UP_TO (a one-event epoch's other common count), else to the scratch.
   */
  private spill(written: number): void {
    if (written < EXACT_UP_TO) {
      const exact = this.exactSet(EXACT_UP_TO);
      this.moveTo(exact.cols, exact.weights, written, EXACT_UP_TO);
    } else this.moveTo(this.scratchCols, this.scratchWeights, written, Infinity);
  }

  /** The first `written` changes copied to `cols`/`weights`, which take the next ones (up to `cap`). */
  private moveTo(cols: Value[][], weights: number[], written: number, cap: number): void {
    const copy = this.numeric ? copyNumbers : copyValues;
    for (let c = 0; c < this.width; c++) copy(cols[c] as Value[], this.cols[c] as Value[], written);
    for (let i = 0; i < written; i++) weights[i] = this.weights[i] as number;
    this.cols = cols;
    this.weights = weights;
    this.cap = cap;
  }

  /** The columns and weights kept for steps of n changes (made at first use). */
  private exactSet(n: number): { readonly cols: Value[][]; readonly weights: number[] } {
    let exact = this.exact[n];
    if (exact === undefined) {
      // Pushed, so packed (a `new Array(n)` is holey, a different kind for the loads downstream);
      // in the scratch columns' kind (see numberColumn).
      const cols: Value[][] = [];
      const weights: number[] = [];
      const column = this.numeric ? numberColumn : valueColumn;
      for (let c = 0; c < this.width; c++) cols.push(column(n));
      for (let i = 0; i < n; i++) weights.push(0);
      exact = { cols, weights };
      this.exact[n] = exact;
    }
    return exact;
  }

  /**
   * The first value that is not a number: the buffer moves to columns and store sites of its own for
   * good (see setNumber), the changes written so far in this step copied over. Its number columns are
   * dropped, never written a non-number, so their allocation site and store sites stay double.
   */
  private generalize(): void {
    this.numeric = false;
    const written = this.n;
    this.exact = [];
    this.scratchWeights = this.weights.slice(0, written);
    const from = this.cols;
    this.scratchCols = Array.from({ length: this.width }, () => valueColumn(0));
    this.cols = this.scratchCols;
    this.weights = this.scratchWeights;
    this.cap = Infinity;
    for (let c = 0; c < this.width; c++)
      copyValues(this.scratchCols[c] as Value[], from[c] as Value[], written);
  }

  /** +row: the group's new row (`row` may be a scratch row: its values are copied). */
  insert(row: readonly Value[]): void {
    if (this.lent !== null) this.reclaim();
    if (this.numeric && !allNumbers(row, this.width)) this.generalize();
    const i = this.n++;
    if (i >= this.cap) this.spill(i);
    this.weights[i] = 1;
    this.net++;
    const cols = this.cols;
    const set = this.numeric ? setNumber : setValue;
    for (let c = 0; c < cols.length; c++) set(cols[c] as Value[], i, row[c] as Value);
  }

  /**
   * A two-column Reduce's (one key, one aggregate) -old/+new of a group, written together: one
   * check of the lent batch and the room for both, no loop over the columns, no row to copy from
   * (the generated merge's common change).
   */
  replace2(key: Value, oldValue: Value, newValue: Value): void {
    if (
      this.numeric &&
      (typeof key !== 'number' || typeof oldValue !== 'number' || typeof newValue !== 'number')
    )
      this.generalize();
    const i = this.n;
    if (this.lent !== null || i + 2 > this.cap) {
      this.put2(-1, key, oldValue);
      this.put2(1, key, newValue);
      return;
    }
    this.n = i + 2;
    const weights = this.weights;
    weights[i] = -1;
    weights[i + 1] = 1;
    const c0 = this.cols[0] as Value[];
    const c1 = this.cols[1] as Value[];
    const set = this.numeric ? setNumber : setValue;
    set(c0, i, key);
    set(c1, i, oldValue);
    set(c0, i + 1, key);
    set(c1, i + 1, newValue);
  }

  /** A two-column Reduce's one change (see replace2). */
  put2(weight: number, key: Value, value: Value): void {
    if (this.lent !== null) this.reclaim();
    if (this.numeric && (typeof key !== 'number' || typeof value !== 'number')) this.generalize();
    const i = this.n++;
    if (i >= this.cap) this.spill(i);
    this.weights[i] = weight;
    this.net += weight;
    const set = this.numeric ? setNumber : setValue;
    set(this.cols[0] as Value[], i, key);
    set(this.cols[1] as Value[], i, value);
  }

  /**
   * -old (`old` null: the record holds the whole row), its columns from the group's record where
   * they are mirrored there.
   */
  retract(
    records: GroupRecords,
    slot: number,
    old: readonly Value[] | null,
    flags: number,
    keyCount: number,
  ): void {
    if (this.lent !== null) this.reclaim();
    if (this.numeric && old !== null && !allNumbers(old, this.width)) this.generalize();
    const i = this.n++;
    if (i >= this.cap) this.spill(i);
    this.weights[i] = -1;
    this.net--;
    const cols = this.cols;
    const data = records.data;
    const at = slot * records.stride;
    const set = this.numeric ? setNumber : setValue;
    if ((flags & KEY_IN_RECORD) !== 0) set(cols[0] as Value[], i, data[at + F_KEY] as number);
    else for (let k = 0; k < keyCount; k++) set(cols[k] as Value[], i, (old as Value[])[k] as Value);
    const nAggs = cols.length - keyCount;
    if ((flags & OUT_IN_RECORD) !== 0)
      for (let a = 0; a < nAggs; a++) set(cols[keyCount + a] as Value[], i, data[at + F_OUT + a] as number);
    else
      for (let a = 0; a < nAggs; a++)
        set(cols[keyCount + a] as Value[], i, (old as Value[])[keyCount + a] as Value);
  }

  /**
   * The changes written since the last take, as a batch; the buffer empties. The batch holds the
   * scratch columns themselves, or for a few changes the columns kept for their length (valid until
   * the next change is written).
   */
  take(): ColumnBatch {
    const n = this.n;
    this.n = 0;
    this.takenNet = this.net;
    this.net = 0;
    const width = this.width;
    if (n <= EXACT_UP_TO) return this.lendExact(n);
    // Trimmed to the step's length (a batch's size is its weights' length): the arrays keep their
    // capacity (pops never give it back, the setter only when most of it is unused), so the next
    // large step writes into the same memory.
    const cols = this.cols;
    let setLengths = 0;
    for (let c = 0; c < width; c++) if (trimTo(cols[c] as Value[], n)) setLengths++;
    if (trimTo(this.weights, n)) setLengths++;
    this.lengthSets += setLengths;
    const batch = new ColumnBatch(cols.slice(), this.weights);
    if (n > MAX_KEPT_CHANGES) {
      // Handed over for good: the next step starts small scratch columns of its own.
      this.scratchWeights = [];
      const column = this.numeric ? numberColumn : valueColumn;
      this.scratchCols = Array.from({ length: width }, () => column(0));
      this.weights = this.scratchWeights;
      this.cols = this.scratchCols;
    } else this.lent = batch;
    return batch;
  }

  /**
   * A small step's changes copied into the columns kept for their length, lent to the batch. The
   * batch lent before expires here if no change expired it (a step of no changes writes none).
   */
  private lendExact(n: number): ColumnBatch {
    if (this.lent !== null) this.reclaim();
    const exact = this.exactSet(n);
    const cols = exact.cols;
    const weights = exact.weights;
    // Written elsewhere (the scratch, or the columns kept for another count): copied, and the next
    // step writes into these columns (see `cap`).
    if (this.cols !== cols) this.moveTo(cols, weights, n, n);
    else this.uncopied++;
    // The outer array too is shared: expiring a batch replaces its fields, not the arrays they held.
    const batch = new ColumnBatch(cols, weights);
    this.lent = batch;
    return batch;
  }

  /** The lent batch expires: its arrays are about to take another step's changes. */
  private reclaim(): void {
    (this.lent as ColumnBatch).expire();
    this.lent = null;
  }

  /**
   * Starts a step (the Reduce calls it before its merge) or drops the changes of a step that threw.
   * The batch lent by the step before expires here, once, so the step's first change pair takes
   * replace2's one-check path instead of two put2 calls that each look for a lent batch.
   */
  clear(): void {
    this.n = 0;
    this.net = 0;
    if (this.lent !== null) this.reclaim();
  }

  /**
   * The sum of `batch`'s weights, counted as its changes were written, if it is the batch lent last
   * and not expired; else null. A view's Output that borrows the Reduce's rows counts them by it
   * instead of summing the batch's weights again (≈ 1% of the canonical pipeline at batch 100).
   */
  netWeightOf(batch: ZBatch): number | null {
    return batch === this.lent ? this.takenNet : null;
  }

  /** Small steps whose changes were lent without a copy, for tests (see `cap`). */
  get uncopiedSteps(): number {
    return this.uncopied;
  }
}
