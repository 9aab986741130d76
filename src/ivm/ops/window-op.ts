// Window functions: every input row is arranged under its partition key (one indexed Arrangement,
// checkpointed) and kept in a list per partition sorted by ORDER BY (peers by the whole row), one
// slot per copy, each slot holding the window values it was last emitted with and, for running
// aggregates, the aggregate of the rows up to it. A changed row dirties only the slots whose values
// it can change — from it to the partition's end for ranks and running frames, the n slots after it
// for LAG n and ROWS n PRECEDING, the n before it for LEAD n, its peers for peer-shared values — and
// only those are recomputed (each from its predecessor's values) and re-emitted if they differ.
import type { Value } from '../../common/types.ts';
import { Decimal, add, div, sub } from '../../common/decimal.ts';
import { checkInt, normalizeBigInt, compareValues, valuesEqual } from '../../common/values.ts';
import { compareByKeys, compareRows, mergeByRow } from '../../common/top-n.ts';
import type { WindowFn } from '../../common/window.ts';
import type { Arrangement } from '../arrangement.ts';
import { PartitionedRows, type PartitionKey } from './partitioned-rows.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { Operator } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { consolidate, type ZBatch } from '../zset.ts';

type WindowNode = Extract<DataflowNode, { kind: 'window' }>;
type Row = readonly Value[];

/** An aggregate's state over some rows: the non-NULL inputs counted and their sum, min or max. */
interface Acc {
  readonly n: number;
  readonly v: Value;
}

const EMPTY: Acc = { n: 0, v: null };

/** One copy of an input row in its partition's order. */
interface Slot {
  readonly row: Row;
  /** The window values last emitted for this slot (null: never emitted). */
  values: Value[] | null;
  /** Per function: the running aggregate of the partition's slots up to this one (ROWS semantics). */
  acc: Acc[];
}

/** A partition's key: '' for none, the value itself for one column, the encoding otherwise. */

/** How far a change at a slot reaches, per function. */
type Reach = { readonly back: number; readonly ahead: number; readonly peers: boolean };

/** Changes to one partition up to this many slots go in by binary search; more by sort and merge. */
const SPLICE_LIMIT = 16;

export class WindowOp implements Operator, Stateful {
  readonly stateId: string;
  private readonly partitioned: PartitionedRows;
  private readonly arranged: Arrangement<PartitionKey>;
  /** Partition key → its slots in order (derived from `arranged`; never stored). */
  private readonly partitions = new Map<PartitionKey, Slot[]>();
  private readonly compare: (a: Row, b: Row) => number;
  private readonly peers: (a: Row, b: Row) => number;
  private readonly functions: readonly WindowFn[];
  /** Per function, how far a change reaches (Infinity: to the partition's end). */
  private readonly reach: readonly Reach[];
  /** Slots whose window values were computed (tests count the work an epoch does with it). */
  slotsComputed = 0;
  /** Slots stepped over while widening dirty ranges to whole peer groups (counted by tests). */
  slotsWalked = 0;
  /** Rows folded into ROWS n PRECEDING frames one by one (float and fractional sums only). */
  rowsFolded = 0;

  constructor(private readonly node: WindowNode) {
    this.stateId = node.stateId;
    this.partitioned = new PartitionedRows(`window n${node.id}`, node.partitionBy);
    this.arranged = this.partitioned.arranged;
    this.compare = compareRows(node.orderBy);
    this.peers = compareByKeys(node.orderBy);
    this.functions = node.functions;
    this.reach = node.functions.map(reachOf);
  }

  get nodeId(): number {
    return this.node.id;
  }

  trackChanges(on: boolean): void {
    this.arranged.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.arranged.takeDelta(full);
  }

  loadState(values: Iterable<unknown>): void {
    this.partitions.clear();
    for (const [key, entries] of this.partitioned.load(values, this.compare)) {
      const slots: Slot[] = [];
      for (const e of entries) for (let c = 0; c < e.count; c++) slots.push(newSlot(e.row));
      this.partitions.set(key, slots);
      // The values are recomputed, not emitted: the view's state was checkpointed with them.
      this.recompute(slots, 0, slots.length - 1, [], []);
    }
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = inputs[0];
    if (input === undefined || input.rows.length === 0) return { rows: [], weights: [], consolidated: true };
    const batch = input.consolidated ? input : consolidate(input);
    const byPartition = this.partitioned.group(batch.rows);
    const rows: Row[] = [];
    const weights: number[] = [];
    for (const [key, indexes] of byPartition) {
      const old = this.partitions.get(key) ?? [];
      const slots = this.apply(key, old, batch, indexes, rows, weights);
      if (slots.length === 0) {
        this.partitions.delete(key);
        continue;
      }
      this.partitions.set(key, slots);
      const changed = indexes.map((i) => batch.rows[i] as Row);
      for (const [lo, hi] of this.dirty(slots, changed)) this.recompute(slots, lo, hi, rows, weights);
    }
    return consolidate({ rows, weights, consolidated: false });
  }

  stateSize(): number {
    let slots = 0;
    for (const s of this.partitions.values()) slots += s.length;
    return this.arranged.stateBytes + (48 + 16 * this.functions.length) * slots + 96 * this.partitions.size;
  }

  /**
   * Folds the partition's changes into the arrangement and its slot list (retracting the values of
   * removed slots) and returns the list in order again; new slots have no values yet.
   */
  private apply(
    key: PartitionKey,
    list: Slot[],
    batch: ZBatch,
    indexes: readonly number[],
    rows: Row[],
    weights: number[],
  ): Slot[] {
    const added: Slot[] = [];
    const removed = new Set<Slot>();
    for (const i of indexes) {
      const row = batch.rows[i] as Row;
      const w = batch.weights[i] as number;
      this.arranged.addRow(key, row, w, 0);
      if (w > 0) {
        for (let c = 0; c < w; c++) added.push(newSlot(row));
        continue;
      }
      // The last copies go: the earlier ones keep their places.
      const end = this.upperBound(list, row);
      for (let at = end - 1; at >= end + w; at--) {
        const slot = list[at] as Slot;
        removed.add(slot);
        if (slot.values !== null) {
          rows.push([...slot.row, ...slot.values]);
          weights.push(-1);
        }
      }
    }
    if (added.length + removed.size <= SPLICE_LIMIT) {
      for (const slot of removed) {
        const end = this.upperBound(list, slot.row);
        let at = end - 1;
        while (list[at] !== slot) at--;
        list.splice(at, 1);
      }
      for (const slot of added) list.splice(this.upperBound(list, slot.row), 0, slot);
      return list;
    }
    const kept = removed.size === 0 ? list : list.filter((s) => !removed.has(s));
    return mergeByRow(kept, added, this.compare);
  }

  /** The first index whose row is not before `row`. */
  private lowerBound(list: readonly Slot[], row: Row): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare((list[mid] as Slot).row, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first index whose row is after `row`. */
  private upperBound(list: readonly Slot[], row: Row): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare((list[mid] as Slot).row, row) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The slot ranges [lo, hi] (merged, in order) whose values the changed rows can change: each
   * changed row's copies (or the gap they left) widened by every function's reach.
   */
  private dirty(slots: readonly Slot[], changed: readonly Row[]): [number, number][] {
    const last = slots.length - 1;
    const shared = this.reach.some((r) => r.peers);
    const ranges: [number, number][] = [];
    for (const row of changed) {
      const p = this.lowerBound(slots, row);
      const q = this.upperBound(slots, row) - 1; // q = p - 1: no copy left, a gap before p
      // Peers of the changed row share a value: a peer before it starts the range (its whole group
      // is covered below, where each range is widened to whole groups).
      let lo = shared && p > 0 && this.peers((slots[p - 1] as Slot).row, row) === 0 ? p - 1 : p;
      let hi = Math.max(p, q);
      if (p === 0 && this.functions.some(firstValueUnbounded)) hi = last;
      for (const r of this.reach) {
        lo = Math.min(lo, p - r.back);
        hi = Math.max(hi, q + r.ahead);
      }
      lo = Math.max(lo, 0);
      hi = Math.min(hi, last);
      if (lo <= hi) ranges.push([lo, hi]);
    }
    ranges.sort((x, y) => x[0] - y[0]);
    // Merged in order; with shared values each range widened to whole peer groups, merging again
    // as it goes, so every slot is walked at most once whatever the number of changes.
    const merged: [number, number][] = [];
    for (const [from, to] of ranges) {
      let lo = from;
      let hi = to;
      const top = merged[merged.length - 1];
      if (top !== undefined && lo <= top[1] + 1) {
        if (hi <= top[1]) continue;
        lo = top[0];
        merged.pop();
      } else if (shared) {
        while (lo > 0 && this.peers((slots[lo - 1] as Slot).row, (slots[lo] as Slot).row) === 0) {
          lo--;
          this.slotsWalked++;
        }
        const before = merged[merged.length - 1];
        if (before !== undefined && lo <= before[1] + 1) {
          lo = before[0];
          merged.pop();
        }
      }
      if (shared) {
        while (hi < last && this.peers((slots[hi + 1] as Slot).row, (slots[hi] as Slot).row) === 0) {
          hi++;
          this.slotsWalked++;
        }
      }
      merged.push([lo, hi]);
    }
    return merged;
  }

  /**
   * An aggregate over ROWS BETWEEN n PRECEDING AND CURRENT ROW at slot j: COUNT, and SUM/AVG of
   * integers, as the difference of two running aggregates (O(1)); MIN/MAX from the sliding queue;
   * SUM/AVG of floats and fractional numerics by folding the frame's rows in order (O(n)), as
   * PostgreSQL does (a difference of float sums is not the sum, nor of numerics its scale).
   */
  private framed(
    slots: readonly Slot[],
    j: number,
    f: number,
    fn: WindowFn,
    n: number,
    running: Acc,
    window: SlidingExtreme | null | undefined,
  ): Value {
    const start = j - n;
    if (start <= 0) return finish(fn, running);
    if (window != null) return window.at(j, start);
    const exact = difference(fn, running, (slots[start - 1] as Slot).acc[f] ?? EMPTY);
    if (exact !== null) return finish(fn, exact);
    let frame = EMPTY;
    for (let k = start; k <= j; k++) {
      this.rowsFolded++;
      frame = fold(fn, frame, fn.arg === null ? null : ((slots[k] as Slot).row[fn.arg] as Value));
    }
    return finish(fn, frame);
  }

  /**
   * Recomputes slots lo..hi (whole peer groups when a function shares values among peers), each
   * from its predecessor's values, and emits the slots whose values changed.
   */
  private recompute(slots: Slot[], lo: number, hi: number, rows: Row[], weights: number[]): void {
    const fns = this.functions;
    // The values each slot had (null: a new slot), to emit only what changed.
    const before: (Value[] | null)[] = [];
    // MIN/MAX over ROWS n PRECEDING slide a monotonic queue over the range (filled with the n slots
    // before it), so each slot costs O(1) amortized rather than a fold of its n + 1 rows.
    const windows = fns.map((fn) =>
      (fn.fn === 'min' || fn.fn === 'max') && fn.frame.kind === 'rows' && fn.frame.preceding !== null
        ? new SlidingExtreme(fn.fn, Math.max(0, lo - fn.frame.preceding), slots, fn.arg as number)
        : null,
    );
    // Forward: ranks, running aggregates (ROWS up to the slot), LAG/LEAD, frames of n rows.
    for (let j = lo; j <= hi; j++) {
      const slot = slots[j] as Slot;
      const prev = j > 0 ? (slots[j - 1] as Slot) : undefined;
      const newPeer = prev === undefined || this.peers(prev.row, slot.row) !== 0;
      this.slotsComputed++;
      const values: Value[] = new Array<Value>(fns.length);
      const acc: Acc[] = new Array<Acc>(fns.length);
      for (let f = 0; f < fns.length; f++) {
        const fn = fns[f] as WindowFn;
        const arg = fn.arg === null ? null : (slot.row[fn.arg] as Value);
        switch (fn.fn) {
          case 'row_number':
            values[f] = j + 1;
            break;
          case 'rank':
            values[f] = newPeer ? j + 1 : (((prev as Slot).values as Value[])[f] as Value);
            break;
          case 'dense_rank': {
            const dense = prev === undefined ? 0 : (((prev.values as Value[])[f] as number) ?? 0);
            values[f] = newPeer ? dense + 1 : dense;
            break;
          }
          case 'lag':
          case 'lead': {
            const at = fn.fn === 'lag' ? j - fn.offset : j + fn.offset;
            const other = slots[at];
            values[f] =
              other !== undefined
                ? (other.row[fn.arg as number] as Value)
                : fn.defaultArg === null
                  ? null
                  : (slot.row[fn.defaultArg] as Value);
            break;
          }
          case 'first_value': {
            const from =
              fn.frame.kind === 'rows' && fn.frame.preceding !== null
                ? Math.max(0, j - fn.frame.preceding)
                : 0;
            values[f] = (slots[from] as Slot).row[fn.arg as number] as Value;
            break;
          }
          case 'last_value':
            // A ROWS frame ends at the slot; RANGE at its last peer (set below).
            values[f] = arg;
            break;
          default: {
            // Aggregates: the running one (ROWS up to this slot), then the frame's.
            const running = fold(fn, prev === undefined ? EMPTY : (prev.acc[f] ?? EMPTY), arg);
            acc[f] = running;
            if (fn.frame.kind === 'rows' && fn.frame.preceding !== null) {
              values[f] = this.framed(slots, j, f, fn, fn.frame.preceding, running, windows[f]);
            } else values[f] = finish(fn, running);
          }
        }
      }
      slot.acc = acc;
      // The next slot's rank reads these values: they replace the old ones now.
      before.push(slot.values);
      slot.values = values;
    }
    // Backward: RANGE frames give every peer the value at its group's last slot.
    const ranged = fns.some((fn) => fn.frame.kind === 'range' && readsRange(fn));
    if (ranged) {
      let end = hi;
      for (let j = hi; j >= lo; j--) {
        const slot = slots[j] as Slot;
        if (j < hi && this.peers(slot.row, (slots[j + 1] as Slot).row) !== 0) end = j;
        const last = slots[end] as Slot;
        for (let f = 0; f < fns.length; f++) {
          const fn = fns[f] as WindowFn;
          if (fn.frame.kind !== 'range' || !readsRange(fn)) continue;
          (slot.values as Value[])[f] =
            fn.fn === 'last_value' ? (last.row[fn.arg as number] as Value) : finish(fn, last.acc[f] ?? EMPTY);
        }
      }
    }
    for (let j = lo; j <= hi; j++) {
      const slot = slots[j] as Slot;
      const old = before[j - lo] ?? null;
      const now = slot.values as Value[];
      if (old !== null && sameValues(old, now)) {
        // Keep the objects emitted: a retraction carries them (and so matches what was emitted).
        slot.values = old;
        continue;
      }
      if (old !== null) {
        rows.push([...slot.row, ...old]);
        weights.push(-1);
      }
      rows.push([...slot.row, ...now]);
      weights.push(1);
    }
  }
}

function newSlot(row: Row): Slot {
  return { row, values: null, acc: [] };
}

/** Functions whose RANGE frame makes peers share the value of the group's last slot. */
function readsRange(fn: WindowFn): boolean {
  return (
    fn.fn !== 'row_number' &&
    fn.fn !== 'rank' &&
    fn.fn !== 'dense_rank' &&
    fn.fn !== 'lag' &&
    fn.fn !== 'lead' &&
    fn.fn !== 'first_value'
  );
}

/** How far a change at a slot reaches for one function. */
function reachOf(fn: WindowFn): Reach {
  const to = Infinity;
  switch (fn.fn) {
    case 'row_number':
    case 'rank':
    case 'dense_rank':
      return { back: 0, ahead: to, peers: false };
    case 'lag':
      return { back: 0, ahead: fn.offset, peers: false };
    case 'lead':
      return { back: fn.offset, ahead: 0, peers: false };
    case 'first_value':
      // An unbounded frame starts at the partition's first slot: a change there reaches every slot.
      if (fn.frame.kind === 'rows' && fn.frame.preceding !== null)
        return { back: 0, ahead: fn.frame.preceding, peers: false };
      return { back: 0, ahead: 0, peers: false };
    case 'last_value':
      return { back: 0, ahead: 0, peers: fn.frame.kind === 'range' };
    default:
      if (fn.frame.kind === 'rows') {
        // Running aggregates: the slots after it carry it; n PRECEDING: the n after it.
        return { back: 0, ahead: fn.frame.preceding ?? to, peers: false };
      }
      return { back: 0, ahead: to, peers: true };
  }
}

/** A FIRST_VALUE over a frame from the partition's start: a change of the first slot reaches all. */
function firstValueUnbounded(fn: WindowFn): boolean {
  return fn.fn === 'first_value' && !(fn.frame.kind === 'rows' && fn.frame.preceding !== null);
}

/**
 * The aggregate of the rows after `b` up to `a` (both running aggregates of one partition), when
 * subtracting is exact: counts, integer sums, numeric sums of integers (scale 0); else null.
 */
function difference(fn: WindowFn, a: Acc, b: Acc): Acc | null {
  if (fn.fn === 'count' || fn.fn === 'count_star') return { n: a.n - b.n, v: null };
  if (fn.fn !== 'sum' && fn.fn !== 'avg') return null;
  const n = a.n - b.n;
  if (n === 0) return EMPTY;
  const x = a.v;
  const y = b.v;
  if (y === null) return a;
  if (x instanceof Decimal && y instanceof Decimal) {
    return x.scale === 0 && y.scale === 0 ? { n, v: sub(x, y) } : null;
  }
  if (fn.type.kind === 'float' || (typeof x === 'number' && !Number.isInteger(x))) return null;
  if (typeof x === 'number' && typeof y === 'number') return { n, v: x - y };
  if ((typeof x === 'number' || typeof x === 'bigint') && (typeof y === 'number' || typeof y === 'bigint'))
    return { n, v: normalizeBigInt(BigInt(x) - BigInt(y)) };
  return null;
}

/**
 * The MIN or MAX of a sliding frame: slot indexes whose values are still candidates, in order, their
 * values monotonic (each slot enters and leaves once). NULLs never enter.
 */
class SlidingExtreme {
  private readonly queue: number[] = [];
  private head = 0;
  private next: number;

  constructor(
    private readonly kind: 'min' | 'max',
    from: number,
    private readonly slots: readonly Slot[],
    private readonly arg: number,
  ) {
    this.next = from;
  }

  /** The extreme of slots start..j (called with j increasing by one, start ≤ j). */
  at(j: number, start: number): Value {
    for (; this.next <= j; this.next++) {
      const x = (this.slots[this.next] as Slot).row[this.arg] as Value;
      if (x === null) continue;
      while (this.queue.length > this.head) {
        const last = (this.slots[this.queue[this.queue.length - 1] as number] as Slot).row[this.arg] as Value;
        const c = compareValues(last, x);
        if (this.kind === 'min' ? c < 0 : c > 0) break;
        this.queue.pop();
      }
      this.queue.push(this.next);
    }
    while (this.queue.length > this.head && (this.queue[this.head] as number) < start) this.head++;
    const best = this.queue[this.head];
    return best === undefined ? null : ((this.slots[best] as Slot).row[this.arg] as Value);
  }
}

/** Adds one input to an aggregate's state (NULL inputs count only for COUNT(*)). */
function fold(fn: WindowFn, acc: Acc, x: Value): Acc {
  if (fn.fn === 'count_star') return { n: acc.n + 1, v: null };
  if (x === null) return acc;
  switch (fn.fn) {
    case 'count':
      return { n: acc.n + 1, v: null };
    case 'min':
      return { n: acc.n + 1, v: acc.v === null || compareValues(x, acc.v) < 0 ? x : acc.v };
    case 'max':
      return { n: acc.n + 1, v: acc.v === null || compareValues(x, acc.v) > 0 ? x : acc.v };
    default:
      return { n: acc.n + 1, v: acc.v === null ? start(fn, x) : plus(fn, acc.v, x) };
  }
}

/** The sum's first value in the result's arithmetic: numeric sums as Decimals. */
function start(fn: WindowFn, x: Value): Value {
  if (fn.type.kind === 'numeric') return x instanceof Decimal ? x : Decimal.fromInt(x as number | bigint);
  if (fn.fn === 'avg' && fn.type.kind === 'float') return Number(x);
  return x;
}

function plus(fn: WindowFn, s: Value, x: Value): Value {
  if (s instanceof Decimal) return add(s, x instanceof Decimal ? x : Decimal.fromInt(x as number | bigint));
  if (fn.type.kind === 'float') return (s as number) + Number(x);
  // Integer sums (bigint results): exact.
  if (typeof s === 'number' && typeof x === 'number') {
    const r = s + x;
    if (Number.isSafeInteger(r)) return r;
  }
  return checkInt(BigInt(s as number | bigint) + BigInt(x as number | bigint), 64);
}

function finish(fn: WindowFn, acc: Acc): Value {
  switch (fn.fn) {
    case 'count':
    case 'count_star':
      return acc.n;
    case 'avg':
      if (acc.n === 0) return null;
      // PostgreSQL's numeric avg: sum / count with select_div_scale.
      if (acc.v instanceof Decimal) return div(acc.v, Decimal.fromInt(acc.n));
      return (acc.v as number) / acc.n;
    default:
      return acc.n === 0 ? null : acc.v;
  }
}

/** Equal as a Z-set sees them (numerics of one value are one, whatever their scales). */
function sameValues(a: readonly Value[], b: readonly Value[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Value;
    const y = b[i] as Value;
    if (x === y) continue;
    if (x === null || y === null || !valuesEqual(x, y)) return false;
  }
  return true;
}
