// The aggregates of ROWS frames over a partition's slot list (window-op.ts keeps the list and
// decides which slots to recompute): each slot's frame state from its predecessor's where that is
// exact, suffixes folded backward for frames ending at UNBOUNDED FOLLOWING, else the frame folded.
import type { Value } from '../../common/types.ts';
import type { WindowFn } from '../../common/window.ts';
import {
  EMPTY,
  fold,
  foldBefore,
  isAggregate,
  slide,
  type Acc,
  type SlidingExtreme,
} from './window-frames.ts';

type Row = readonly Value[];

/** One copy of an input row in its partition's order. */
export interface Slot {
  readonly row: Row;
  /** The window values last emitted for this slot (null: never emitted). */
  values: Value[] | null;
  /** Per function: the running aggregate of the partition's slots up to this one (ROWS semantics). */
  acc: Acc[];
  /** Whether the values last computed hold a STRING_AGG past the text limit: a row error, no row. */
  failed: boolean;
}

export function newSlot(row: Row): Slot {
  return { row, values: null, acc: [], failed: false };
}

/** What the frame functions report to the operator: rows folded, and a frame's value read. */
export interface FrameSink {
  /** Rows folded into frames one by one (tests count the work with it). */
  rowsFolded: number;
  /** The aggregate's value over a frame state (the operator notes a STRING_AGG past the limit). */
  valueOf(fn: WindowFn, acc: Acc): Value;
}

/** Folds the argument of slots s..e (in order) into an aggregate's state. */
function foldRange(sink: FrameSink, slots: readonly Slot[], fn: WindowFn, s: number, e: number): Acc {
  let acc = EMPTY;
  for (let k = s; k <= e; k++) {
    sink.rowsFolded++;
    acc = fold(fn, acc, fn.arg === null ? null : ((slots[k] as Slot).row[fn.arg] as Value));
  }
  return acc;
}

/**
 * An aggregate over ROWS BETWEEN start AND end at slot j (frame slots s..e), its state stored in
 * the slot: from UNBOUNDED PRECEDING, the predecessor's plus the slot entering (PostgreSQL's order,
 * so floats agree); to UNBOUNDED FOLLOWING, the suffix from the frame's start (filled backward
 * before, see `suffixes`); else the predecessor's with the entering slot added and the leaving one
 * taken out when that is exact (counts, integer sums), MIN/MAX from the sliding queue, and floats,
 * fractional numerics and texts by folding the frame (bounded by the binder), as PostgreSQL does.
 */
export function framed(
  sink: FrameSink,
  slots: readonly Slot[],
  j: number,
  f: number,
  fn: WindowFn & { readonly frame: { readonly kind: 'rows' } },
  window: SlidingExtreme | null | undefined,
): { acc: Acc; value: Value } {
  const last = slots.length - 1;
  const { start, end } = fn.frame;
  const prev = j > 0 ? (slots[j - 1] as Slot) : undefined;
  const argAt = (k: number): Value => (fn.arg === null ? null : ((slots[k] as Slot).row[fn.arg] as Value));
  if (end === null) {
    if (start === null) {
      const acc = prev !== undefined ? (prev.acc[f] ?? EMPTY) : foldRange(sink, slots, fn, 0, last);
      return { acc, value: sink.valueOf(fn, acc) };
    }
    const from = Math.max(0, j + start);
    const own = (slots[j] as Slot).acc[f] ?? EMPTY; // the suffix, filled by `suffixes`
    return {
      acc: own,
      value: sink.valueOf(fn, from > last ? EMPTY : ((slots[from] as Slot).acc[f] ?? EMPTY)),
    };
  }
  const e = Math.min(last, j + end);
  if (start === null) {
    let acc: Acc;
    if (prev === undefined) acc = e < 0 ? EMPTY : foldRange(sink, slots, fn, 0, e);
    else {
      acc = prev.acc[f] ?? EMPTY;
      if (j + end >= 0 && j + end <= last) acc = fold(fn, acc, argAt(j + end));
    }
    return { acc, value: sink.valueOf(fn, acc) };
  }
  const s = Math.max(0, j + start);
  if (window != null) return { acc: EMPTY, value: window.at(e, s) };
  if (start > end || s > e) return { acc: EMPTY, value: sink.valueOf(fn, EMPTY) };
  let acc: Acc | null = null;
  if (prev !== undefined) {
    const enters = j + end >= 0 && j + end <= last;
    const leaves = j - 1 + start >= 0 && j - 1 + start <= Math.min(last, j - 1 + end);
    acc = slide(
      fn,
      prev.acc[f] ?? EMPTY,
      enters,
      enters ? argAt(j + end) : null,
      leaves,
      leaves ? argAt(j - 1 + start) : null,
    );
  }
  acc ??= foldRange(sink, slots, fn, s, e);
  return { acc, value: sink.valueOf(fn, acc) };
}

/**
 * Frames ending at UNBOUNDED FOLLOWING (not starting at UNBOUNDED PRECEDING): each slot of hi..lo
 * stores the aggregate of itself and every slot after it, folded backward from hi + 1's (which
 * no change reached: a change reaches every slot before it, so lo is 0).
 */
export function suffixes(
  functions: readonly WindowFn[],
  slots: readonly Slot[],
  lo: number,
  hi: number,
): void {
  functions.forEach((fn, f) => {
    if (fn.frame.kind !== 'rows' || fn.frame.end !== null || fn.frame.start === null || !isAggregate(fn))
      return;
    let acc = hi + 1 < slots.length ? ((slots[hi + 1] as Slot).acc[f] ?? EMPTY) : EMPTY;
    for (let j = hi; j >= lo; j--) {
      const slot = slots[j] as Slot;
      acc = foldBefore(fn, acc, fn.arg === null ? null : (slot.row[fn.arg] as Value));
      slot.acc[f] = acc;
    }
  });
}
