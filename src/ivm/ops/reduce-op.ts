// Reduce + Merge. Reduce: the batch's rows are combined per group into one partial (a hot key costs
// one partial per batch, not one per row). Merge: each partial folds into the group's stored state,
// and the operator emits -old/+new only when the group's output row actually changed. Groups whose
// row count reaches zero disappear; the global group (no keys) always keeps its one row.
// State is column-wise: a group is a slot number; counts and aggregate fields live in typed arrays.
// A group key of equal values that print differently (1.5 and 1.50 are one group) shows the text of
// one of the group's current rows, the first in compareExact's order (group-key-texts.ts).
// Its parts: the per-row pass (reduce-row-pass.ts), the lookup-and-mark pass (reduce-lookup.ts), the
// record layout (reduce-record.ts), the groups' output rows (reduce-group-rows.ts), the output columns (reduce-changes.ts) and the generated merge
// of COUNT / integer SUM / AVG Reduces (reduce-merge-kernel.ts), its checkpoint (reduce-checkpoint.ts).
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import type { ZBatch } from '../zset.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import type { AggColumn, GroupRecords } from './aggregates.ts';
import { aggregateColumn, recordWidth } from './aggregates.ts';
import { InvertibleColumn } from './invertible-aggregate.ts';
import { GroupKeyTexts, keyTextsNeeded } from './group-key-texts.ts';
import { identicalRows } from '../exact-rows.ts';
import { InterpretedRowPass, type FusedMap, type RowPass } from './reduce-row-pass.ts';
import { GeneratedRowPass } from './reduce-kernel.ts';
import { fitTouches, lookupAndMark, StepTouches, type GroupLookup, type StepRows } from './reduce-lookup.ts';
import { ChangeBuffer } from './reduce-changes.ts';
import { mergeKernel, type MergeFn } from './reduce-merge-kernel.ts';
import { errorText, ReduceCheckpoint, type CheckpointGroups } from './reduce-checkpoint.ts';
import {
  F_FLAGS,
  F_KEY,
  F_OUT,
  fitRecord,
  HAS_OUT,
  KEY_IN_RECORD,
  OUT_IN_RECORD,
  RECORD_KEY,
  sameAggregates,
  sameAsRecord,
} from './reduce-record.ts';
import { sampledSize } from './sampled-size.ts';
import { GroupRows } from './reduce-group-rows.ts';

export type { FusedMap } from './reduce-row-pass.ts';

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

export class ReduceOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  /** group id (the key value, or its encoding) → slot */
  private readonly index = new GroupIndex();
  private readonly keys: (readonly Value[] | undefined)[] = [];
  /**
   * Per-group record: [count, key, flags, ...emitted values, ...invertible aggregate fields].
   * (The group's touch mark is in `lookup.touches`, by slot.) `key` holds a single numeric key and `emitted` the last output row's aggregate
   * values when they are all numbers (flags KEY_IN_RECORD, OUT_IN_RECORD): then the merge builds the
   * group's change from this one record without reading the key array or the old row, which sit
   * elsewhere in the heap (a cache and TLB miss each on this memory-bound path). The batch's
   * partials are not in the record (so a SUM group's record is 6 doubles, within a cache line's 8).
   */
  private readonly records: GroupRecords;
  /**
   * The step's partials, dense by touch index: [partial count, ...aggregate partials]. Written in
   * touch order and read back in the same order by the merge, so they stay in the cache, and the
   * record is read once per batch, by the merge.
   */
  private readonly partials: GroupRecords;
  /** Per input row of the step, its group id and its key (the value of a single key, else the array). */
  private readonly rowIds: Value[] = [];
  private readonly rowKeys: (Value | Value[])[] = [];
  /** The step's per-row scratch: each row's group slot (NO_SLOT: filtered out or failed), touch index. */
  private readonly stepRows: StepRows = {
    n: 0,
    weights: [],
    rowSlots: new Int32Array(64),
    rowTouches: new Int32Array(64),
    rowIds: this.rowIds,
    rowKeys: this.rowKeys,
  };
  /** Per input row of the step, its aggregate arguments (row i's at i × aggregates). */
  private readonly rowArgs: Value[] = [];
  /** The groups' output rows (reduce-group-rows.ts). */
  private readonly rows: GroupRows;
  private readonly errorsBySlot = new Map<number, unknown>();
  private readonly free: number[] = [];
  private slotCount = 0;
  private stepNo = 0;
  private readonly columns: AggColumn[];
  /** The columns when all are invertible (their partials all in `partials`), else null. */
  private readonly invertible: InvertibleColumn[] | null;
  private readonly keyCount: number;
  /** Pass 1: each input row's key and arguments (reduce-row-pass.ts). */
  private readonly rowPass: RowPass;
  private readonly keyColumns: readonly ColumnSpec[];
  private globalEmitted = false;
  private tracking = false;
  /** Groups changed since the last checkpoint take, and the take itself (reduce-checkpoint.ts). */
  private readonly checkpoint = new ReduceCheckpoint();
  private readonly scratch: Value[];
  /** Sum of the merge's early record reads (kept so the reads are not dead code). */
  private touchSink = 0;
  /** The step's changes out (reduce-changes.ts). */
  private readonly changes: ChangeBuffer;
  /** Slots touched by the current step, in first-touch order: the first `lookup.count`. */
  private readonly touched: number[] = [];
  /** Per group, its rows' key texts (null: the key's values always print alike). */
  private readonly keyTexts: GroupKeyTexts | null;
  /** What the lookup-and-mark pass (reduce-lookup.ts) reads and extends. */
  private readonly lookup: GroupLookup;
  /** The generated merge (reduce-merge-kernel.ts), null: the interpreted `mergeGroup` for all. */
  private readonly mergeFn: MergeFn | null;
  /** The current step's row-error sink, for `mergeGroup`. */
  private stepErrors: RowErrorSink = NO_ERRORS;
  /** The generated merge's calls back: a group it leaves to `mergeGroup`, a group to checkpoint. */
  private readonly slowMerge = (t: number): void => {
    this.slowMerges++;
    this.mergeGroup(t);
  };
  /** Groups the generated merge left to `mergeGroup` (a count of work, for tests). */
  private slowMerges = 0;
  /** A group the generated merge found empty (its -old written): released without `mergeGroup`. */
  private readonly mergeRelease = (slot: number): void => {
    this.mergeReleases++;
    this.release(slot);
  };
  /** Groups the generated merge released itself (a count of work, for tests). */
  private mergeReleases = 0;
  /** Marks a changed group for the next checkpoint take (GroupChanges, reduce-checkpoint.ts). */
  private readonly track = (slot: number): void => {
    if (this.keyTexts !== null) this.checkpoint.changed.markKey(this.keyAt(slot));
    else this.checkpoint.changed.mark(slot);
  };

  constructor(node: ReduceNode, inputColumns: readonly ColumnSpec[], fused: FusedMap | null) {
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.keyCount = node.keyCount;
    let stride = F_OUT + node.aggregates.length;
    let pstride = 1;
    const bases = node.aggregates.map((a) => {
      const base = stride;
      const width = recordWidth(a);
      stride += width;
      pstride += width;
      return [base, pstride - width] as const;
    });
    this.records = { data: new Float64Array(16 * stride), stride };
    this.partials = { data: new Float64Array(16 * pstride), stride: pstride };

    this.columns = node.aggregates.map((a, i) => {
      const [base, pbase] = bases[i] as readonly [number, number];
      return aggregateColumn(a, this.records, base, this.partials, pbase);
    });
    this.invertible = this.columns.every((c) => c instanceof InvertibleColumn)
      ? (this.columns as InvertibleColumn[])
      : null;
    this.keyColumns = node.columns.slice(0, node.keyCount);
    this.keyTexts = keyTextsNeeded(this.keyColumns) ? new GroupKeyTexts() : null;
    this.rows = new GroupRows(
      this.records,
      this.keys,
      this.keyTexts === null,
      node.keyCount,
      node.aggregates.length,
    );
    this.scratch = new Array<Value>(node.keyCount + node.aggregates.length);
    this.changes = new ChangeBuffer(node.keyCount + node.aggregates.length);
    this.lookup = {
      index: this.index,
      keyCount: this.keyCount,
      keyTexts: this.keyTexts,
      touched: this.touched,
      count: 0,
      touches: new Int32Array(16),
      // The key as a row holds it (a single key's value, else the array): a number key, which the
      // record holds, costs no array (one per new group, garbage at once).
      allocate:
        node.keyCount === 1
          ? (id, key) =>
              typeof key === 'number'
                ? this.allocateSlot(id, RECORD_KEY, key)
                : this.allocateSlot(id, [key as Value], 0)
          : (id, key) => this.allocateSlot(id, node.keyCount === 0 ? [] : (key as Value[]), 0),
      stepTouches: new StepTouches(),
      sink: 0,
    };
    const pass = this.partials.stride;
    this.rowPass =
      node.kernel === 'generated' && fused !== null
        ? new GeneratedRowPass({
            keyCount: node.keyCount,
            fused,
            argColumns: node.aggregates.map((a) => a.argColumn),
            columns: this.columns,
            pstride: pass,
          })
        : new InterpretedRowPass(node.keyCount, node.aggregates, inputColumns, fused, this.columns, pass);
    this.mergeFn =
      node.kernel === 'generated' && this.keyTexts === null
        ? (mergeKernel({
            keyCount: node.keyCount,
            columns: this.columns,
            records: this.records,
            keys: this.keys,
            pstride: pass,
            changes: this.changes,
            ahead: MERGE_AHEAD,
            release: this.mergeRelease,
          })?.fn ?? null)
        : null;
  }

  private idOf(key: readonly Value[]): Value {
    return this.keyCount === 0 ? '' : this.keyCount === 1 ? singleKey(key[0] as Value) : encodeValues(key);
  }

  private allocate(id: Value, key: readonly Value[]): number {
    const k0 = key[0];
    return this.keyCount === 1 && typeof k0 === 'number'
      ? this.allocateSlot(id, RECORD_KEY, k0)
      : this.allocateSlot(id, key, 0);
  }

  /** A new group's slot for `id`: its key is `key`, or `k0` held in the record when `key` is RECORD_KEY. */
  private allocateSlot(id: Value, key: readonly Value[], k0: number): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.slotCount++;
      fitRecord(this.records, slot);
      fitTouches(this.lookup, slot);
    }
    const at = slot * this.records.stride;
    const data = this.records.data;
    data[at] = 0;
    this.lookup.touches[slot] = 0;
    this.keys[slot] = key;
    if (key === RECORD_KEY) {
      // The key lives in the record only: no key array per group.
      data[at + F_KEY] = k0;
      data[at + F_FLAGS] = KEY_IN_RECORD;
    } else data[at + F_FLAGS] = 0;
    this.rows.clear(slot);
    for (const c of this.columns) c.clear(slot);
    this.index.set(id, slot);
    return slot;
  }

  /** The group's key values (rebuilt when the record holds the key). */
  private keyAt(slot: number): readonly Value[] {
    const key = this.keys[slot] as readonly Value[];
    if (key !== RECORD_KEY) return key;
    return [this.records.data[slot * this.records.stride + F_KEY] as number];
  }

  private release(slot: number): void {
    const key = this.keys[slot] as readonly Value[];
    if (this.tracking && this.keyTexts === null) this.checkpoint.changed.release(slot, key, this.records);
    // a key held in the record is its own id (idOf of a single number), with no array rebuilt
    this.index.delete(
      key === RECORD_KEY ? (this.records.data[slot * this.records.stride + F_KEY] as number) : this.idOf(key),
    );
    this.keys[slot] = undefined;
    this.rows.clear(slot);
    if (this.errorsBySlot.size !== 0) this.errorsBySlot.delete(slot);
    this.keyTexts?.release(slot);
    this.free.push(slot);
  }

  /** Live slots in slot order (a released slot is reused by a later group). */
  private *slots(): Generator<number> {
    const keys = this.keys;
    for (let slot = 0; slot < this.slotCount; slot++) if (keys[slot] !== undefined) yield slot;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    // Scratch lists: step is synchronous and keeps none of them after it returns.
    const touched = this.touched;
    const lookup = this.lookup;
    if (lookup.count > 0) this.untouch();
    const index = this.index;
    const keyCount = this.keyCount;
    const columns = this.columns;
    const nAggs = columns.length;
    const stride = this.records.stride;
    const n = input.weights.length;
    const stepRows = this.stepRows;
    if (stepRows.rowSlots.length < n) {
      const len = Math.max(n, 2 * stepRows.rowSlots.length);
      stepRows.rowSlots = new Int32Array(len);
      stepRows.rowTouches = new Int32Array(len);
    }
    const rowArgs = this.rowArgs;
    const rowIds = this.rowIds;
    const rowKeys = this.rowKeys;
    // Reduce, in passes over the batch: (1) each row's key and arguments; (2) its group's slot and
    // its touch index from the group's record — a tight loop, so the cache misses of many rows (the
    // index cells and records of a large group set are far apart) are in flight at once instead of
    // one after the other between the expression calls; (3) the rows fold into their group's
    // partial, dense by touch index. Groups are allocated and touched in first-appearance
    // order, as in one pass: touch order is the order of the changes out.
    stepRows.n = n;
    stepRows.weights = input.weights;
    this.rowPass.evaluate(input, stepRows, rowArgs, errors);
    const marked = lookupAndMark(this.lookup, stepRows);
    if (keyCount === 0 && !this.globalEmitted) {
      let slot = index.get('');
      if (slot === NO_SLOT) slot = this.allocate('', []);
      if (lookup.touches[slot] === 0) {
        touched[lookup.count] = slot;
        lookup.touches[slot] = ++lookup.count;
      }
    }
    this.globalEmitted = true;
    const nTouched = lookup.count;
    // The marks are done with (the merge goes by touch index): cleared here, in the small array.
    if (marked) {
      const touches = lookup.touches;
      for (let t = 0; t < nTouched; t++) touches[touched[t] as number] = 0;
    }
    const pstride = this.partials.stride;
    if (nTouched * pstride > this.partials.data.length) {
      this.partials.data = new Float64Array(Math.max(nTouched * pstride, 2 * this.partials.data.length));
    }
    const pd = this.partials.data;
    const invertible = this.invertible;
    if (invertible !== null) {
      // one fill, not a call per group and aggregate: every partial is in `pd` (or a side map);
      // a small one by a loop (`fill` is a call into the runtime, most of a batch-1 step's cost)
      const end = nTouched * pstride;
      if (end > 64) pd.fill(0, 0, end);
      else for (let i = 0; i < end; i++) pd[i] = 0;
      for (let a = 0; a < invertible.length; a++) (invertible[a] as InvertibleColumn).resetSidePartials();
    } else {
      for (let t = 0; t < nTouched; t++) {
        pd[t * pstride] = 0;
        for (let a = 0; a < nAggs; a++) (columns[a] as AggColumn).resetPartial(touched[t] as number, t);
      }
    }
    this.rowPass.accumulate(stepRows, rowArgs, pd);
    if (rowArgs.length > MAX_KEPT_ARGS) rowArgs.length = 0;
    if (rowIds.length > MAX_KEPT_ARGS) {
      rowIds.length = 0;
      rowKeys.length = 0;
    } else if (keyCount !== 1 || typeof rowKeys[0] !== 'number') rowKeys.fill(null, 0, n); // no key arrays kept

    // Merge: fold each partial into its group and emit the change of the group's row, with the
    // batch's columns beside its rows for a Reduce downstream.
    const changes = this.changes;
    changes.clear();
    this.stepErrors = errors;
    let sink = 0;
    const merge = this.mergeFn;
    if (merge !== null) {
      sink = merge(
        touched,
        nTouched,
        this.records.data,
        pd,
        this.scratch,
        this.errorsBySlot,
        this.tracking ? this.track : null,
        this.slowMerge,
      );
    } else {
      for (let t = 0; t < nTouched; t++) {
        if ((t & (MERGE_AHEAD - 1)) === 0) {
          // Read the next records in a tight loop first: their cache misses overlap, where the merge's
          // work between two groups would otherwise serialise them.
          const d = this.records.data;
          const end = Math.min(nTouched, t + MERGE_AHEAD);
          for (let u = t; u < end; u++) {
            const at = (touched[u] as number) * stride;
            // both ends: a record can straddle two cache lines
            sink += (d[at] as number) + (d[at + stride - 1] as number);
          }
        }
        this.mergeGroup(t);
      }
    }
    this.stepErrors = NO_ERRORS;
    lookup.count = 0;
    this.touchSink = sink;
    return changes.take();
  }

  /** For a view's Output borrowing these rows: see ChangeBuffer.netWeightOf. */
  netWeightOf(batch: ZBatch): number | null {
    return this.changes.netWeightOf(batch);
  }

  /** The interpreted merge of the step's t-th touched group (every case; the generated merge's rest). */
  private mergeGroup(t: number): void {
    const slot = this.touched[t] as number;
    const keyCount = this.keyCount;
    const columns = this.columns;
    const nAggs = columns.length;
    const stride = this.records.stride;
    const pd = this.partials.data;
    const pstride = this.partials.stride;
    const changes = this.changes;
    const scratch = this.scratch;
    const errors = this.stepErrors;
    if (this.tracking) this.track(slot);
    const data = this.records.data;
    const at = slot * stride;
    const count = (data[at] as number) + (pd[t * pstride] as number);
    data[at] = count;
    for (let a = 0; a < nAggs; a++) (columns[a] as AggColumn).merge(slot, t);
    if (count < 0)
      throw new SluiceError('INTERNAL_ERROR', `group of reduce n${this.nodeId} has a negative row count`);
    const flags = data[at + F_FLAGS] as number;
    const hasOld = (flags & HAS_OUT) !== 0;
    // The old row object exists only for groups the record does not hold entirely.
    const old = this.rows.old(slot, flags);
    const oldError = this.errorsBySlot.size === 0 ? undefined : this.errorsBySlot.get(slot);
    if (count === 0 && keyCount > 0) {
      if (hasOld) changes.retract(this.records, slot, old, flags, keyCount);
      if (oldError !== undefined) errors.report(oldError, this.keyOf(slot, old), this.keyColumns, -1);
      this.release(slot);
      return;
    }
    // The key shown: the group's first key text among its current rows, when that changed.
    const keyChanged = this.keyTexts !== null && this.updateKeyText(slot);
    let error: unknown;
    try {
      if ((flags & KEY_IN_RECORD) !== 0) scratch[0] = data[at + F_KEY] as number;
      else {
        const key = keyChanged ? this.keyAt(slot) : this.keyOf(slot, old);
        for (let k = 0; k < keyCount; k++) scratch[k] = key[k] as Value;
      }
      for (let a = 0; a < nAggs; a++) scratch[keyCount + a] = (columns[a] as AggColumn).result(slot, count);
    } catch (e) {
      error = e;
    }
    if (oldError !== undefined && (error === undefined || errorText(error) !== errorText(oldError))) {
      errors.report(oldError, this.keyOf(slot, old), this.keyColumns, -1);
      this.errorsBySlot.delete(slot);
    }
    if (error !== undefined) {
      if (!this.errorsBySlot.has(slot)) {
        errors.report(error, this.keyOf(slot, old), this.keyColumns, 1);
        this.errorsBySlot.set(slot, error);
      }
      if (hasOld) {
        changes.retract(this.records, slot, old, flags, keyCount);
        this.rows.set(slot, null);
      }
      return;
    }
    if (hasOld) {
      if (
        !keyChanged &&
        ((flags & OUT_IN_RECORD) !== 0
          ? sameAsRecord(data, at + F_OUT, scratch, keyCount)
          : sameAggregates(old as Value[], scratch, keyCount))
      )
        return;
      changes.retract(this.records, slot, old, flags, keyCount);
    }
    changes.insert(scratch);
    this.rows.set(slot, scratch);
  }

  /** Clears the touch marks a step that threw left. */
  private untouch(): void {
    const touches = this.lookup.touches;
    for (let t = 0; t < this.lookup.count; t++) {
      const slot = this.touched[t] as number;
      if (slot < this.slotCount) touches[slot] = 0;
    }
    this.lookup.count = 0;
  }

  /**
   * Sets the group's key to its representative text (GroupKeyTexts); whether it changed. A group
   * being released (no rows) keeps its key.
   */
  private updateKeyText(slot: number): boolean {
    const rep = (this.keyTexts as GroupKeyTexts).settle(slot);
    const current = this.keys[slot];
    if (rep === null || rep === current || current === RECORD_KEY) return false;
    // Another array of the same texts (the first batch, a load): adopt it, so the next is by reference.
    const changed = current === undefined || !identicalRows(rep, current);
    this.keys[slot] = rep;
    return changed;
  }

  /** The group's key: from its old output row when there is one (read anyway), else its key array. */
  private keyOf(slot: number, old: readonly Value[] | null): readonly Value[] {
    return old ?? this.keyAt(slot);
  }

  /**
   * Drops every group whose key `expired` selects, emitting nothing: their rows have left with the
   * windows they fed (HOP's panes under EMIT ON WINDOW CLOSE, pane-close-op.ts). Returns how many.
   */
  evict(expired: (key: readonly Value[]) => boolean): number {
    let n = 0;
    for (const slot of [...this.slots()]) {
      const key = this.keyAt(slot);
      if (!expired(key)) continue;
      if (this.tracking) this.track(slot);
      for (const c of this.columns) c.clear(slot);
      this.release(slot);
      n++;
    }
    return n;
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.checkpoint.changed.forget();
  }

  /** Groups the checkpoint serialised at its take and as its entries were read (for tests). */
  get checkpointCounts(): { readonly atTake: number; readonly onRead: number } {
    return this.checkpoint.counts;
  }

  /** The groups as the checkpoint (reduce-checkpoint.ts) sees them. */
  private checkpointGroups(): CheckpointGroups {
    return {
      records: this.records,
      columns: this.columns,
      keyTexts: this.keyTexts,
      errorsBySlot: this.errorsBySlot,
      keyAt: (slot) => this.keyAt(slot),
      outRow: (slot) => this.rows.row(slot),
      slots: () => this.slots(),
      live: (slot) => this.keys[slot] !== undefined,
      groupCount: () => this.index.size,
      slotOf: (key) => this.index.get(this.idOf(key)),
      allocate: (key) => this.allocate(this.idOf(key), key),
      release: (slot) => this.release(slot),
      setOut: (slot, row) => this.rows.set(slot, row),
    };
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.checkpoint.take(this.checkpointGroups(), full);
  }

  loadState(values: Iterable<unknown>): void {
    this.checkpoint.load(this.checkpointGroups(), values);
    this.globalEmitted = this.keyCount > 0 || this.index.has('');
  }

  /** Current output rows, for a view whose arrangement is this operator's state. */
  *outputRows(): Generator<readonly Value[]> {
    for (const slot of this.slots()) {
      const out = this.rows.row(slot);
      if (out !== null) yield out;
    }
  }

  /** Approximate bytes of state, sampled (sampled-size.ts). */
  stateSize(): number {
    return sampledSize(this.slots(), this.index.size, (slot) => {
      const keyBytes = this.keys[slot] === RECORD_KEY ? 0 : 32 + this.keyCount * 16;
      let bytes = 48 + keyBytes + this.rows.objectWidth(slot) * 16 + 24 + this.records.stride * 8;
      for (const c of this.columns) bytes += c.bytes(slot);
      return bytes;
    });
  }

  groupCount(): number {
    return this.index.size;
  }

  /**
   * Counts of work, for tests: groups the generated merge left to the interpreted one, groups it
   * released itself (no rows left), and output rows copied into objects (reduce-group-rows.ts).
   */
  get mergeCounts(): {
    readonly slowMerges: number;
    readonly mergeReleases: number;
    readonly rowCopies: number;
  } {
    return { slowMerges: this.slowMerges, mergeReleases: this.mergeReleases, rowCopies: this.rows.copies };
  }
}

/**
 * Groups whose records the merge reads ahead at a time (a power of two). 128 records are at most 256
 * cache lines (16 KB), within L1d, so they are still there when their group's turn comes; 1024 was
 * slower (their lines evicted before use).
 */
const MERGE_AHEAD = 128;
/** Argument scratch kept between steps, in values (a larger batch's is dropped after its step). */
const MAX_KEPT_ARGS = 1 << 16;
/** The row-error sink between steps (`mergeGroup` runs only inside one). */
const NO_ERRORS: RowErrorSink = {
  report(): void {
    throw new SluiceError('INTERNAL_ERROR', 'reduce merge outside a step');
  },
};
