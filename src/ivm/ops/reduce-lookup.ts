// The Reduce's lookup-and-mark pass: each kept input row finds (or allocates) its group's slot and
// marks the group touched, in first-appearance order. One tight loop over the batch, so the cache
// misses of many rows (the index cells and records of a large group set are far apart) are in
// flight at once instead of one after the other between the expression calls. The touch marks are
// an Int32Array by slot, not a field of the group's record: 4 bytes a group (400 KB for 100,000
// groups, within the L2 cache beside the index's direct table) where the records are tens of bytes
// a group; the pass reads no record, and the merge is the only pass that misses on one.
// A middling step (64 to 1,024 rows) of a keyed Reduce marks its groups in a table of its own
// instead (`StepTouches`): 8 bytes a cell, 2 to 4 cells a row (2 KB at 100 rows, 16 KB at most),
// where each row's mark in the by-slot array was one more cache miss (a random one of 400 KB at
// 100,000 groups). A small group set (marks of ≤ 4,096 slots, 16 KB: a histogram's buckets) keeps
// the by-slot marks at every size: they are in L1, and hashing into a step table cost more.
import type { Value } from '../../common/types.ts';
import { type GroupIndex, NO_SLOT } from '../group-index.ts';
import type { GroupKeyTexts } from './group-key-texts.ts';
import type { ZeroSign } from './zero-sign.ts';
import { grownI32 } from '../typed-growth.ts';

/**
 * The step's per-row scratch the pass reads (ids, keys, weights) and writes (slots, touch indexes):
 * one object per Reduce, reused by every step.
 */
export interface StepRows {
  n: number;
  weights: readonly number[];
  /** In: NO_SLOT for a row filtered out or failed; out: the row's group slot. */
  rowSlots: Int32Array;
  /** Out: the row's group's touch index in the step. */
  rowTouches: Int32Array;
  readonly rowIds: Value[];
  /** A single key's value, else the key array. */
  readonly rowKeys: (Value | Value[])[];
}

/** The Reduce's group state the pass reads and extends. */
export interface GroupLookup {
  readonly index: GroupIndex;
  readonly keyCount: number;
  readonly keyTexts: GroupKeyTexts | null;
  /** The zero group's -0 rows, for a Reduce grouping by one float column (zero-sign.ts). */
  readonly zeroSign: ZeroSign | null;
  /**
   * Slots touched by the step, in first-touch order: the first `count` (the pass appends). A count
   * rather than the array's length, so a step ends without a `length = 0` (a runtime call).
   */
  readonly touched: number[];
  count: number;
  /** Per slot, the group's touch index in the step plus one (0: not touched); grown by `allocate`. */
  touches: Int32Array;
  /**
   * A new group's slot (may grow `records.data`); `key` as `StepRows.rowKeys` holds it (a single
   * key's value, else the key array).
   */
  readonly allocate: (id: Value, key: Value | Value[]) => number;
  /** The index's read-ahead sum, kept so its reads are not dead code. */
  sink: number;
  /** The middling steps' own touch table (see the header); the Reduce keeps one. */
  readonly stepTouches: StepTouches;
}

/**
 * A middling step's touch marks, hashed by slot: cell 2h holds slot + 1 (0: empty), cell 2h + 1
 * the touch index. Emptied (one fill of a few KB) at the start of each step that uses it.
 */
export class StepTouches {
  cells = new Int32Array(0);
  /** Steps marked here rather than in `touches` (a count the tests read). */
  steps = 0;
  /**
   * Whether at least 7/8 of the last by-slot step's rows were first touches: the next one then
   * marks with a branch on the mark (predicted), else without one (see lookupAndMark).
   */
  mostlyNew = false;
}

/** Grows the by-slot touch marks (doubling) to hold `slot`'s. */
export function fitTouches(g: GroupLookup, slot: number): void {
  if (slot >= g.touches.length) g.touches = grownI32(g.touches, slot + 1);
}

/** Above this many rows a step's own table would leave L1: the by-slot marks are used again. */
const LOCAL_TOUCHES_UP_TO = 1024;

/** Marks of at most this many slots (16 KB) stay in L1: no step table, no read-ahead. */
const SMALL_TOUCHES = 4096;

/** Below this many rows a step looks up and marks in one loop (no misses to overlap, less setup). */
const SPLIT_FROM = 64;

/**
 * Finds each kept row's slot and touches its group; returns whether it set touch marks (the caller
 * clears them after the step). A keyed step of one row sets none: one row touches one group once,
 * and the mark's load (a cache miss per event in a large group set) is all it would cost.
 */
export function lookupAndMark(g: GroupLookup, s: StepRows): boolean {
  if (s.n === 1 && g.keyCount > 0 && g.count === 0) {
    lookupOne(g, s);
    return false;
  }
  if (s.n === 2 && g.keyCount > 0 && g.count === 0) {
    lookupTwo(g, s);
    return false;
  }
  if (s.n < SPLIT_FROM) {
    lookupAndMarkSmall(g, s);
    return true;
  }
  const { index, keyCount, keyTexts, touched } = g;
  const { n, weights, rowSlots, rowTouches, rowIds, rowKeys } = s;
  g.sink = index.readAhead(rowIds, n);
  // Two loops, not one: each row's slot, then each row's touch mark. The mark's load depends on the
  // slot's, so in one loop every row waited for two misses one after the other; in two short loops
  // the loads of many rows are independent and in flight together. Groups are still allocated, and
  // touched, in first-appearance order.
  for (let i = 0; i < n; i++) {
    if (rowSlots[i] === NO_SLOT) continue;
    const id = rowIds[i] as Value;
    let slot = index.get(id);
    if (slot === NO_SLOT) {
      slot = g.allocate(id, rowKeys[i] as Value | Value[]);
    }
    rowSlots[i] = slot;
  }
  // -0 rows, only when the step has a zero group (its rows made it, if no earlier one had)
  if (g.zeroSign !== null && index.get(0) !== NO_SLOT) g.zeroSign.countRows(rowKeys, weights, rowSlots, n);
  if (keyTexts !== null) {
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot === NO_SLOT) continue;
      const weight = weights[i] as number;
      if (keyCount > 1) keyTexts.add(slot, rowKeys[i] as Value[], weight);
      else keyTexts.addOne(slot, rowKeys[i] as Value, weight);
    }
  }
  const touches = g.touches;
  // A small group set's marks are in L1 already (the histogram's couple of hundred buckets): the
  // by-slot marks cost less there than hashing into a step table, and need no read-ahead.
  const small = touches.length <= SMALL_TOUCHES;
  if (!small) {
    if (n <= LOCAL_TOUCHES_UP_TO && keyCount > 0) {
      markInStepTable(g, s);
      return false;
    }
    // The marks read ahead, as the index's cells were: the marking loop below branches on each mark
    // it loads (first touch or not), which on a skewed batch mispredicts often and drops the loads
    // in flight behind it; this loop's loads are independent, so many rows' misses overlap.
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot !== NO_SLOT) sink += touches[slot] as number;
    }
    g.sink += sink;
  }
  const st = g.stepTouches;
  const before = g.count;
  let count = before;
  if (st.mostlyNew) {
    // The last step's rows nearly all touched a group first (uniform batch 10,000): the branch on
    // the mark is predicted, and the loop below's stores for every row cost more (≈ 1% there).
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot === NO_SLOT) continue;
      let t = touches[slot] as number;
      if (t === 0) {
        t = ++count;
        touched[t - 1] = slot;
        touches[slot] = t;
      }
      rowTouches[i] = t - 1;
    }
  } else {
    // Without a branch on the mark: whether a row's group is new to the step is a coin toss in a
    // histogram's -old/+new pairs or a skewed batch, and the mispredictions were most of this loop (a
    // stand-alone loop of 200 such rows over 190 groups: 5.8 ns a row with the branch, 2.4
    // without). The slot is written at `touched[count]` either way and kept only when `fresh` moves
    // the count past it.
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot === NO_SLOT) continue;
      const t = touches[slot] as number;
      touched[count] = slot;
      const fresh = (t - 1) >>> 31; // 1 when t is 0 (marks are ≥ 0)
      count += fresh;
      const mark = t + fresh * count;
      touches[slot] = mark;
      rowTouches[i] = mark - 1;
    }
  }
  st.mostlyNew = (count - before) * 8 >= n * 7;
  g.count = count;
  return true;
}

/**
 * The step's touch marks in its own small table (open addressing by a multiplicative hash of the
 * slot): the same touch indexes and first-touch order as the by-slot marks, and nothing to clear
 * in `touches` after the step.
 */
function markInStepTable(g: GroupLookup, s: StepRows): void {
  const { n, rowSlots, rowTouches } = s;
  const touched = g.touched;
  let bits = 4;
  while (1 << bits < 2 * n) bits++;
  const cap = 1 << bits;
  // The cell pair's index, kept an int32: `h >>> shift` is typed as any uint32, and `2 * h` of it
  // as a double, so every cell access took a float index (a stand-alone loop over 100 random slots
  // of 100,000: 6.1 ns a row, against 3.7 with the index shifted left once and masked).
  const mask = (cap - 1) << 1;
  const shift = 32 - bits;
  const st = g.stepTouches;
  if (st.cells.length < 2 * cap) st.cells = new Int32Array(2 * cap);
  const cells = st.cells;
  cells.fill(0, 0, 2 * cap);
  st.steps++;
  let count = g.count;
  for (let i = 0; i < n; i++) {
    const slot = rowSlots[i] as number;
    if (slot === NO_SLOT) continue;
    const k = slot + 1;
    let h = (Math.imul(k, 0x9e3779b1) >>> shift) << 1;
    let t: number;
    for (;;) {
      const c = cells[h] as number;
      if (c === k) {
        t = cells[h + 1] as number;
        break;
      }
      if (c === 0) {
        t = count++;
        touched[t] = slot;
        cells[h] = k;
        cells[h + 1] = t;
        break;
      }
      h = (h + 2) & mask;
    }
    rowTouches[i] = t;
  }
  g.count = count;
}

/**
 * Row `i`'s group slot (a new group allocated), its key text counted where the Reduce keeps them: the
 * lookup of the one-, two- and few-row steps (the large step looks up and counts in separate passes).
 */
function slotOfRow(g: GroupLookup, s: StepRows, i: number): number {
  const id = s.rowIds[i] as Value;
  let slot = g.index.get(id);
  if (slot === NO_SLOT) slot = g.allocate(id, s.rowKeys[i] as Value | Value[]);
  const keyTexts = g.keyTexts;
  if (keyTexts !== null) {
    if (g.keyCount > 1) keyTexts.add(slot, s.rowKeys[i] as Value[], s.weights[i] as number);
    else keyTexts.addOne(slot, s.rowKeys[i] as Value, s.weights[i] as number);
  }
  if (g.zeroSign !== null) g.zeroSign.countOne(slot, s.rowKeys[i] as Value, s.weights[i] as number);
  return slot;
}

/** A keyed step's one row: its slot, touched first, with no touch mark (see lookupAndMark). */
function lookupOne(g: GroupLookup, s: StepRows): void {
  if (s.rowSlots[0] === NO_SLOT) return;
  const slot = slotOfRow(g, s, 0);
  s.rowSlots[0] = slot;
  g.touched[0] = slot;
  g.count = 1;
  s.rowTouches[0] = 0;
}

/**
 * A keyed step's two rows (a group's -old/+new from a Reduce upstream, the one-event epoch of a view
 * over a view): their slots and touch indexes by comparing the two slots, with no touch marks to
 * set and clear (the same allocations and touch order as lookupAndMarkSmall).
 */
function lookupTwo(g: GroupLookup, s: StepRows): void {
  const touched = g.touched;
  const { rowSlots, rowTouches } = s;
  let count = 0;
  for (let i = 0; i < 2; i++) {
    if (rowSlots[i] === NO_SLOT) continue;
    const slot = slotOfRow(g, s, i);
    rowSlots[i] = slot;
    if (count === 1 && touched[0] === slot) {
      rowTouches[i] = 0;
      continue;
    }
    touched[count] = slot;
    rowTouches[i] = count++;
  }
  g.count = count;
}

/** A small step's lookup and marks, one row at a time (the same allocations and touch order). */
function lookupAndMarkSmall(g: GroupLookup, s: StepRows): void {
  const touched = g.touched;
  const { n, rowSlots, rowTouches } = s;
  for (let i = 0; i < n; i++) {
    if (rowSlots[i] === NO_SLOT) continue;
    const slot = slotOfRow(g, s, i);
    rowSlots[i] = slot;
    const touches = g.touches;
    let t = touches[slot] as number;
    if (t === 0) {
      t = g.count + 1;
      touched[t - 1] = slot;
      g.count = t;
      touches[slot] = t;
    }
    rowTouches[i] = t - 1;
  }
}
