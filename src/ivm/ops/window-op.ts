// Window functions: every input row is arranged under its partition key (one indexed Arrangement,
// checkpointed) and kept in a list per partition sorted by ORDER BY (peers by the whole row), one
// slot per copy, each slot holding the window values it was last emitted with and, per aggregate,
// the state of its frame (RANGE: the rows up to it). A changed row dirties only the slots whose
// values it can change — the slots whose frame holds it (ROWS n PRECEDING AND m FOLLOWING: n after
// it and m before it; UNBOUNDED on a side: to that end), from it to the partition's end for ranks
// and RANGE frames, n after / before it for LAG / LEAD n, its peers for peer-shared values, the whole
// partition for NTILE, PERCENT_RANK and CUME_DIST (they read its size) — and only those are
// recomputed (each from its predecessor's values) and re-emitted if they differ. A slot whose
// STRING_AGG would pass the text limit emits no row but a row error (its input row's), retracted
// when a change brings it back under (or removes the row), as a Reduce's group reports its own.
import type { Value } from '../../common/types.ts';
import { compareByKeys, compareRows, mergeByRow } from '../../common/top-n.ts';
import type { WindowFn } from '../../common/window.ts';
import { stringTooLong } from '../../common/functions/text.ts';
import {
  EMPTY,
  SlidingExtreme,
  edgeOf,
  finish,
  fold,
  ntile,
  reachOf,
  readsGroupEnd,
  sameValues,
  type Acc,
  type Reach,
} from './window-frames.ts';
import { framed, newSlot, suffixes, type FrameSink, type Slot } from './window-rows-frame.ts';
import { WindowTextChars, textChars, textWeight } from './window-text-chars.ts';
import type { JoinBudget } from './join-output-size.ts';
import type { Arrangement } from '../arrangement.ts';
import { PartitionedRows, type PartitionKey } from './partitioned-rows.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { consolidate, type ZBatch } from '../zset.ts';
import { DRAIN_SLOTS, type DeferredOutput } from './deferred-output.ts';

type WindowNode = Extract<DataflowNode, { kind: 'window' }>;
type Row = readonly Value[];

/** Changes to one partition up to this many slots go in by binary search; more by sort and merge. */
const SPLICE_LIMIT = 16;

/** Row errors of a state loaded from a checkpoint: the view's error multiset was checkpointed with it. */
const LOADED: RowErrorSink = { report() {} };

export class WindowOp implements Operator, Stateful, DeferredOutput, FrameSink {
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
  /** Whether a function reads the partition's first or last slot for every slot (`edgeOf`). */
  private readonly edges: ReadonlySet<'first' | 'last'>;
  /** Slots whose window values were computed (tests count the work an epoch does with it). */
  slotsComputed = 0;
  /** Slots stepped over while widening dirty ranges to whole peer groups (counted by tests). */
  slotsWalked = 0;
  /** Rows folded into ROWS n PRECEDING frames one by one (float and fractional sums only). */
  rowsFolded = 0;
  /** Whether a value of the slot being computed was a STRING_AGG past the text limit (`valueOf`). */
  private failing = false;
  /** The input's columns, describing a failed slot's row in its error. */
  private readonly inputColumns: readonly ColumnSpec[];
  /** Slots of every partition, kept by `step` and `loadState`: a write's row-free count reads it. */
  heldSlots = 0;
  /** With a STRING_AGG: its characters per partition, what a write's bound weighs rows by. */
  readonly text: WindowTextChars | null;
  /** Characters of the STRING_AGG values the slots hold (stateSize: two bytes each). */
  private valueChars = 0;
  /** A view's first build: rows a STRING_AGG window emits, weighed by their texts, count against it. */
  private budget: JoinBudget | null = null;
  /**
   * Deferring its output (deferred-output.ts): per partition changed since, its rows added and not
   * yet in its slot list (sorted in once, when it is recomputed); the map's order is first change.
   */
  private deferred: Map<PartitionKey, Slot[]> | null = null;
  /** Draining: each step recomputes deferred partitions, up to DRAIN_SLOTS slots (at least one). */
  private drainOn = false;

  constructor(private readonly node: WindowNode) {
    this.stateId = node.stateId;
    this.partitioned = new PartitionedRows(`window n${node.id}`, node.partitionBy);
    this.arranged = this.partitioned.arranged;
    this.compare = compareRows(node.orderBy);
    this.peers = compareByKeys(node.orderBy);
    this.functions = node.functions;
    this.reach = node.functions.map(reachOf);
    this.edges = new Set(node.functions.map(edgeOf).filter((e) => e !== null));
    // The row an error names: the input's own columns, not the trailing ones the binder computed
    // for the window (`?window…`: an argument may be a text near the limit, kept out of the error).
    const input = node.columns.slice(0, node.columns.length - node.functions.length);
    let own = input.length;
    while (own > 0 && (input[own - 1] as ColumnSpec).name.startsWith('?window')) own--;
    this.inputColumns = input.slice(0, own);
    this.text = WindowTextChars.of(node.functions);
  }

  /**
   * A first build's budget (null: none), charged per partition before its STRING_AGG values are
   * built (weighed by characters); a window without one emits no more rows than it reads.
   */
  limitRows(budget: JoinBudget | null): void {
    this.budget = this.text === null ? null : budget;
  }

  /** An aggregate's value over a frame state; one past the text limit fails the slot (NULL held). */
  valueOf(fn: WindowFn, acc: Acc): Value {
    if (acc.long === true) {
      this.failing = true;
      return null;
    }
    return finish(fn, acc);
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
    this.heldSlots = 0;
    this.valueChars = 0;
    // The characters are recomputed from the rows: they were never stored.
    this.text?.clear();
    for (const [key, entries] of this.partitioned.load(values, this.compare)) {
      const slots: Slot[] = [];
      for (const e of entries) {
        this.text?.add(key, e.row, e.count);
        for (let c = 0; c < e.count; c++) slots.push(newSlot(e.row));
      }
      this.heldSlots += slots.length;
      this.partitions.set(key, slots);
      // The values are recomputed, not emitted: the view's state was checkpointed with them.
      this.recompute(slots, 0, slots.length - 1, [], [], LOADED);
    }
  }

  deferOutput(): boolean {
    this.deferred = new Map();
    return true;
  }

  startDrain(): void {
    this.drainOn = true;
    if (this.deferred?.size === 0) this.deferred = null;
  }

  get draining(): boolean {
    return this.deferred !== null;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0];
    if (this.deferred !== null) return this.deferStep(input, this.deferred, errors);
    if (input === undefined || input.rows.length === 0) return { rows: [], weights: [], consolidated: true };
    const batch = input.consolidated ? input : consolidate(input);
    const byPartition = this.partitioned.group(batch.rows);
    const rows: Row[] = [];
    const weights: number[] = [];
    for (const [key, indexes] of byPartition) {
      const old = this.partitions.get(key) ?? [];
      // `apply` may splice `old` in place: its length is read first.
      this.heldSlots -= old.length;
      const slots = this.apply(key, old, batch, indexes, rows, weights, errors);
      this.heldSlots += slots.length;
      if (slots.length === 0) {
        this.partitions.delete(key);
        continue;
      }
      this.partitions.set(key, slots);
      const changed = indexes.map((i) => batch.rows[i] as Row);
      const ranges = this.dirty(slots, changed);
      if (this.budget !== null) this.charge(key, ranges);
      for (const [lo, hi] of ranges) this.recompute(slots, lo, hi, rows, weights, errors);
    }
    return consolidate({ rows, weights, consolidated: false });
  }

  /**
   * A deferring step: the input goes into the arrangement and each changed partition is marked; a
   * row added waits beside its partition's list (a retraction first sorts the waiting rows in). When
   * draining, whole partitions are then recomputed, up to DRAIN_SLOTS slots, and their rows emitted.
   */
  private deferStep(
    input: ZBatch | undefined,
    deferred: Map<PartitionKey, Slot[]>,
    errors: RowErrorSink,
  ): ZBatch {
    const rows: Row[] = [];
    const weights: number[] = [];
    if (input !== undefined && input.rows.length > 0) {
      const batch = input.consolidated ? input : consolidate(input);
      for (const [key, indexes] of this.partitioned.group(batch.rows)) {
        let waiting = deferred.get(key);
        if (waiting === undefined) deferred.set(key, (waiting = []));
        if (indexes.every((i) => (batch.weights[i] as number) > 0)) {
          for (const i of indexes) {
            const row = batch.rows[i] as Row;
            const w = batch.weights[i] as number;
            this.arranged.addRow(key, row, w, 0);
            this.text?.add(key, row, w);
            for (let c = 0; c < w; c++) waiting.push(newSlot(row));
          }
          continue;
        }
        const slots = this.apply(key, this.settle(key, waiting), batch, indexes, rows, weights, errors);
        deferred.set(key, []);
        if (slots.length === 0) this.partitions.delete(key);
        else this.partitions.set(key, slots);
      }
    }
    if (this.drainOn) {
      let budget = DRAIN_SLOTS;
      for (const [key, waiting] of deferred) {
        if (budget <= 0) break;
        deferred.delete(key);
        const slots = this.settle(key, waiting);
        if (slots.length === 0) continue;
        if (this.budget !== null) this.charge(key, [[0, slots.length - 1]]);
        this.recompute(slots, 0, slots.length - 1, rows, weights, errors);
        budget -= slots.length;
      }
      if (deferred.size === 0) {
        this.deferred = null;
        this.drainOn = false;
      }
    }
    return consolidate({ rows, weights, consolidated: false });
  }

  /** The partition's slot list with its waiting rows sorted in (stored back; deleted when empty). */
  private settle(key: PartitionKey, waiting: Slot[]): Slot[] {
    const list = this.partitions.get(key) ?? [];
    if (waiting.length === 0) return list;
    // stable: equal rows keep their arrival order, after the list's, as `apply` would place them
    const slots =
      list.length === 0
        ? waiting.sort((a, b) => this.compare(a.row, b.row))
        : mergeByRow(list, waiting, this.compare);
    if (slots.length === 0) this.partitions.delete(key);
    else this.partitions.set(key, slots);
    return slots;
  }

  /**
   * Held slots `changed` would dirty (orderKnown false: their partitions'), before the epoch runs.
   * `weighed` (a STRING_AGG window): the rows it would emit (a retraction and an insertion per held
   * slot dirtied, a row per changed row), weighed by their partition's characters and theirs.
   */
  heldSlotsTouched(changed: readonly Row[], orderKnown: boolean, weighed = false): number {
    const text = weighed ? this.text : null;
    const walked = this.slotsWalked;
    let counted = 0;
    for (const [key, at] of this.partitioned.group(changed)) {
      const list = this.partitions.get(key) ?? [];
      const rows = at.map((i) => changed[i] as Row);
      const ranges = orderKnown ? this.dirty(list, rows) : [[0, list.length - 1] as const];
      let slots = 0;
      for (const [lo, hi] of ranges) slots += hi - lo + 1;
      counted +=
        text === null ? slots : textWeight(2 * slots + rows.length, text.held(key) + text.charsOfRows(rows));
    }
    this.slotsWalked = walked; // the tests count the epoch's own walk, not the count's
    return counted;
  }

  /** A first build's charge for recomputing `ranges` of partition `key` (limitRows). */
  private charge(key: PartitionKey, ranges: readonly (readonly [number, number])[]): void {
    let slots = 0;
    for (const [lo, hi] of ranges) slots += hi - lo + 1;
    (this.text as WindowTextChars).charge(this.budget as JoinBudget, key, slots);
  }

  stateSize(): number {
    let slots = 0;
    for (const s of this.partitions.values()) slots += s.length;
    const perSlot = (48 + 16 * this.functions.length) * slots;
    return this.arranged.stateBytes + perSlot + 96 * this.partitions.size + 2 * this.valueChars;
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
    errors: RowErrorSink,
  ): Slot[] {
    const added: Slot[] = [];
    const removed = new Set<Slot>();
    for (const i of indexes) {
      const row = batch.rows[i] as Row;
      const w = batch.weights[i] as number;
      this.arranged.addRow(key, row, w, 0);
      this.text?.add(key, row, w);
      if (w > 0) {
        for (let c = 0; c < w; c++) added.push(newSlot(row));
        continue;
      }
      // The last copies go: the earlier ones keep their places.
      const end = this.upperBound(list, row);
      for (let at = end - 1; at >= end + w; at--) {
        const slot = list[at] as Slot;
        removed.add(slot);
        if (this.text !== null) this.valueChars -= textChars(slot.values);
        if (slot.failed) errors.report(stringTooLong(), slot.row, this.inputColumns, -1);
        else if (slot.values !== null) {
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
      // A FIRST_VALUE / LAST_VALUE that reads the partition's first / last slot: its change reaches all.
      if (p === 0 && this.edges.has('first')) hi = last;
      if (q === last && this.edges.has('last')) lo = 0;
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
   * Recomputes slots lo..hi (whole peer groups when a function shares values among peers), each
   * from its predecessor's values, and emits the slots whose values changed.
   */
  private recompute(
    slots: Slot[],
    lo: number,
    hi: number,
    rows: Row[],
    weights: number[],
    errors: RowErrorSink,
  ): void {
    const fns = this.functions;
    const last = slots.length - 1;
    // The values each slot had (null: a new slot), to emit only what changed.
    const before: (Value[] | null)[] = [];
    // Per slot, whether its new values hold a STRING_AGG past the text limit (then a row error).
    const failed: boolean[] = [];
    suffixes(fns, slots, lo, hi);
    // MIN/MAX over frames of n rows slide a monotonic queue over the range (filled from the first
    // frame's start), so each slot costs O(1) amortized rather than a fold of its frame.
    const windows = fns.map((fn) =>
      (fn.fn === 'min' || fn.fn === 'max') &&
      fn.frame.kind === 'rows' &&
      fn.frame.start !== null &&
      fn.frame.end !== null
        ? new SlidingExtreme(fn.fn, Math.max(0, lo + fn.frame.start), slots, fn.arg as number)
        : null,
    );
    // The first slot of the current peer group (PERCENT_RANK is its index over the partition's).
    let groupStart = lo;
    while (groupStart > 0 && this.peers((slots[groupStart - 1] as Slot).row, (slots[lo] as Slot).row) === 0) {
      groupStart--;
      this.slotsWalked++;
    }
    // Forward: ranks, running aggregates, LAG/LEAD, ROWS frames.
    for (let j = lo; j <= hi; j++) {
      const slot = slots[j] as Slot;
      const prev = j > 0 ? (slots[j - 1] as Slot) : undefined;
      const newPeer = prev === undefined || this.peers(prev.row, slot.row) !== 0;
      if (newPeer) groupStart = j;
      this.slotsComputed++;
      this.failing = false;
      const values: Value[] = new Array<Value>(fns.length);
      const acc: Acc[] = slot.acc;
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
          case 'ntile':
            values[f] = ntile(j, slots.length, fn.offset);
            break;
          case 'percent_rank':
            values[f] = slots.length === 1 ? 0 : groupStart / (slots.length - 1);
            break;
          case 'cume_dist':
            values[f] = null; // the group's end, set below
            break;
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
          case 'first_value':
          case 'last_value':
          case 'nth_value': {
            if (fn.frame.kind === 'range') {
              // FIRST_VALUE: the partition's first slot; the others: at the group's end (below).
              values[f] =
                fn.fn === 'first_value' ? ((slots[0] as Slot).row[fn.arg as number] as Value) : null;
              break;
            }
            const s = fn.frame.start === null ? 0 : Math.max(0, j + fn.frame.start);
            const e = fn.frame.end === null ? last : Math.min(last, j + fn.frame.end);
            const at = fn.fn === 'first_value' ? s : fn.fn === 'last_value' ? e : s + fn.offset - 1;
            values[f] = s <= e && at <= e ? ((slots[at] as Slot).row[fn.arg as number] as Value) : null;
            break;
          }
          default: {
            if (fn.frame.kind === 'rows') {
              const r = framed(this, slots, j, f, fn as WindowFn & { frame: { kind: 'rows' } }, windows[f]);
              acc[f] = r.acc;
              values[f] = r.value;
            } else {
              // RANGE: the running aggregate, read at the peer group's last slot (below).
              acc[f] = fold(fn, prev === undefined ? EMPTY : (prev.acc[f] ?? EMPTY), arg);
            }
          }
        }
      }
      // The next slot's rank reads these values: they replace the old ones now.
      before.push(slot.values);
      failed.push(this.failing);
      slot.values = values;
    }
    // Backward: values read at the peer group's last slot (RANGE frames, CUME_DIST).
    if (fns.some(readsGroupEnd)) {
      let end = hi;
      for (let j = hi; j >= lo; j--) {
        const slot = slots[j] as Slot;
        if (j < hi && this.peers(slot.row, (slots[j + 1] as Slot).row) !== 0) end = j;
        const lastPeer = slots[end] as Slot;
        this.failing = failed[j - lo] as boolean;
        for (let f = 0; f < fns.length; f++) {
          const fn = fns[f] as WindowFn;
          if (!readsGroupEnd(fn)) continue;
          const values = slot.values as Value[];
          if (fn.fn === 'cume_dist') values[f] = (end + 1) / slots.length;
          else if (fn.fn === 'last_value') values[f] = lastPeer.row[fn.arg as number] as Value;
          else if (fn.fn === 'nth_value')
            values[f] =
              fn.offset - 1 <= end ? ((slots[fn.offset - 1] as Slot).row[fn.arg as number] as Value) : null;
          else values[f] = this.valueOf(fn, lastPeer.acc[f] ?? EMPTY);
        }
        failed[j - lo] = this.failing;
      }
    }
    for (let j = lo; j <= hi; j++) {
      const slot = slots[j] as Slot;
      const old = before[j - lo] ?? null;
      const now = slot.values as Value[];
      if (this.text !== null) this.valueChars += textChars(now) - textChars(old);
      const wasFailed = slot.failed;
      const fails = failed[j - lo] as boolean;
      slot.failed = fails;
      // Failed before and now: one error, still reported (its message is the same whatever the values).
      if (old !== null && wasFailed && fails) continue;
      if (old !== null && !wasFailed && !fails && sameValues(old, now)) {
        // Keep the objects emitted: a retraction carries them (and so matches what was emitted).
        slot.values = old;
        continue;
      }
      if (old !== null) {
        if (wasFailed) errors.report(stringTooLong(), slot.row, this.inputColumns, -1);
        else {
          rows.push([...slot.row, ...old]);
          weights.push(-1);
        }
      }
      if (fails) errors.report(stringTooLong(), slot.row, this.inputColumns, 1);
      else {
        rows.push([...slot.row, ...now]);
        weights.push(1);
      }
    }
  }
}
