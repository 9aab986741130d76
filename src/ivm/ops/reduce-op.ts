// Reduce + Merge. Reduce: the batch's rows are combined per group into one partial (a hot key costs
// one partial per batch, not one per row). Merge: each partial folds into the group's stored state,
// and the operator emits -old/+new only when the group's output row actually changed. Groups whose
// row count reaches zero disappear; the global group (no keys) always keeps its one row.
// State is column-wise: a group is a slot number; counts and aggregate fields live in typed arrays.
// A group key of equal values that print differently (1.5 and 1.50 are one group) shows the text of
// one of the group's current rows, the first in compareExact's order (group-key-texts.ts).
// The groups, their records and what is read of them outside a step are reduce-groups.ts; the
// per-row pass (reduce-row-pass.ts), the lookup-and-mark pass (reduce-lookup.ts), the
// record layout (reduce-record.ts), the groups' output rows (reduce-group-rows.ts), the output columns (reduce-changes.ts) and the generated merge
// of COUNT / integer SUM / AVG Reduces (reduce-merge-kernel.ts), its checkpoint (reduce-checkpoint.ts).
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { NO_SLOT } from '../group-index.ts';
import type { AggColumn } from './aggregates.ts';
import { InvertibleColumn } from './invertible-aggregate.ts';
import { MultisetColumn } from './multiset-aggregate.ts';
import { InterpretedRowPass, type FusedMap, type RowPass } from './reduce-row-pass.ts';
import { GeneratedRowPass, rowCode } from './reduce-kernel.ts';
import { lookupAndMark, type StepRows } from './reduce-lookup.ts';
import { ChangeBuffer } from './reduce-changes.ts';
import { mergeKernel, type MergeFn, type OneRowFn } from './reduce-merge-kernel.ts';
import { errorText } from './reduce-checkpoint.ts';
import {
  F_FLAGS,
  F_KEY,
  F_OUT,
  HAS_OUT,
  KEY_IN_RECORD,
  OUT_IN_RECORD,
  SIGNED_ZERO,
  sameAggregates,
  sameAsRecord,
} from './reduce-record.ts';
import { ReduceGroups, type ReduceNode } from './reduce-groups.ts';
import type { ZeroSign } from './zero-sign.ts';
import { DRAIN_GROUPS, type DeferredOutput } from './deferred-output.ts';

export type { FusedMap } from './reduce-row-pass.ts';

export class ReduceOp extends ReduceGroups implements Operator, Stateful, DeferredOutput {
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
  /** The columns when all are invertible (their partials all in `partials`), else null. */
  private readonly invertible: InvertibleColumn[] | null;
  /** Pass 1: each input row's key and arguments (reduce-row-pass.ts). */
  private readonly rowPass: RowPass;
  private readonly scratch: Value[];
  /** Sum of the merge's early record reads (kept so the reads are not dead code). */
  private touchSink = 0;
  /** The step's changes out (reduce-changes.ts). */
  private readonly changes: ChangeBuffer;
  /** The generated merge (reduce-merge-kernel.ts), null: the interpreted `mergeGroup` for all. */
  private readonly mergeFn: MergeFn | null;
  /**
   * The generated one-row step (reduce-merge-kernel.ts): an epoch of one event hands a Reduce one
   * row, and the general passes paid their set-up, the per-row staging arrays and the zeroed
   * partials for it. Null: the general passes for every step.
   */
  private readonly oneRowFn: OneRowFn | null;
  /**
   * The generated two-row step (reduce-merge-kernel.ts): the -old/+new of one upstream group, in two
   * groups of this Reduce (a view over a view at one event an epoch). Null when `oneRowFn` is.
   */
  private readonly twoRowFn: OneRowFn | null;
  /** Steps the one-row step took whole (a count of work, for tests: `mergeCounts`). */
  private oneRowSteps = 0;
  /** Steps the two-row step took whole (a count of work, for tests: `mergeCounts`). */
  private twoRowSteps = 0;
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
  /** Deferring its output (deferred-output.ts): merged groups are marked in `deferred`, not emitted. */
  private deferring = false;
  /** Draining: each step emits up to DRAIN_GROUPS of the `deferred` groups. */
  private drainOn = false;
  /** While draining, `mergeGroup` emits instead of marking. */
  private emitting = false;
  /** Groups changed while deferring, by slot, in first-change order (a released slot is skipped). */
  private readonly deferred = new Set<number>();
  /** Group output rows computed (the aggregates' results read): a count of work, for tests. */
  groupsComputed = 0;

  constructor(node: ReduceNode, inputColumns: readonly ColumnSpec[], fused: FusedMap | null) {
    super(node);
    this.invertible = this.columns.every((c) => c instanceof InvertibleColumn)
      ? (this.columns as InvertibleColumn[])
      : null;
    this.scratch = new Array<Value>(node.keyCount + node.aggregates.length);
    this.changes = new ChangeBuffer(node.keyCount + node.aggregates.length);
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
    const merge =
      node.kernel === 'generated' && this.keyTexts === null
        ? mergeKernel({
            keyCount: node.keyCount,
            columns: this.columns,
            records: this.records,
            keys: this.keys,
            pstride: pass,
            changes: this.changes,
            ahead: MERGE_AHEAD,
            release: this.mergeRelease,
            oneRow:
              fused !== null
                ? {
                    code: rowCode({
                      keyCount: node.keyCount,
                      fused,
                      argColumns: node.aggregates.map((a) => a.argColumn),
                    }),
                    index: this.index,
                    zeroSign: this.zeroSign !== null,
                  }
                : null,
          })
        : null;
    this.mergeFn = merge?.fn ?? null;
    this.oneRowFn = merge?.one ?? null;
    this.twoRowFn = merge?.two ?? null;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    // Scratch lists: step is synchronous and keeps none of them after it returns.
    const touched = this.touched;
    const lookup = this.lookup;
    if (lookup.count > 0) this.untouch();
    const one = this.oneRowFn;
    const rows = input.weights.length;
    if (one !== null && rows <= 2 && rows > 0 && !this.deferring && !this.drainOn) {
      const changes = this.changes;
      changes.clear();
      const fn = rows === 1 ? one : (this.twoRowFn as OneRowFn);
      if (fn(input, this.records.data, this.scratch, this.errorsBySlot, this.tracking ? this.track : null)) {
        if (rows === 1) this.oneRowSteps++;
        else this.twoRowSteps++;
        return changes.take();
      }
    }
    const index = this.index;
    const keyCount = this.keyCount;
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
    this.resetPartials(nTouched);
    const pd = this.partials.data;
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
    const merge = this.deferring ? null : this.mergeFn;
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
    if (this.drainOn) this.drainStep();
    this.stepErrors = NO_ERRORS;
    lookup.count = 0;
    this.touchSink = sink;
    return changes.take();
  }

  /** Zeroes the partials of the step's first `nTouched` touched groups (the buffer fits them). */
  private resetPartials(nTouched: number): void {
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
      const columns = this.columns;
      const touched = this.touched;
      for (let t = 0; t < nTouched; t++) {
        pd[t * pstride] = 0;
        for (let a = 0; a < columns.length; a++)
          (columns[a] as AggColumn).resetPartial(touched[t] as number, t);
      }
    }
  }

  /**
   * Defers the output (deferred-output.ts) when a group's output row costs more than its change:
   * an aggregate that is not invertible reads its whole group (or a tree of it) for its result.
   */
  deferOutput(): boolean {
    if (this.invertible !== null) return false;
    this.deferring = true;
    for (const column of this.columns) if (column instanceof MultisetColumn) column.deferSorting();
    return true;
  }

  startDrain(): void {
    if (!this.deferring) return;
    this.drainOn = true;
    if (this.deferred.size === 0) this.deferring = this.drainOn = false;
  }

  get draining(): boolean {
    return this.deferring;
  }

  /** Emits up to DRAIN_GROUPS deferred groups: merged with empty partials, so only their rows change. */
  private drainStep(): void {
    const touched = this.touched;
    let n = 0;
    for (const slot of this.deferred) {
      if (n >= DRAIN_GROUPS) break;
      this.deferred.delete(slot);
      if (this.keys[slot] !== undefined) touched[n++] = slot;
    }
    this.resetPartials(n);
    this.emitting = true;
    try {
      for (let t = 0; t < n; t++) this.mergeGroup(t);
    } finally {
      this.emitting = false;
    }
    if (this.deferred.size === 0) this.deferring = this.drainOn = false;
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
    if (this.deferring && !this.emitting) {
      this.deferred.add(slot);
      return;
    }
    this.groupsComputed++;
    // The key shown: the group's first key text among its current rows, when that changed; a float
    // zero's sign (zero-sign.ts), written to the record once the -old (which reads it) is out.
    const shownKey =
      (flags & SIGNED_ZERO) !== 0 ? (this.zeroSign as ZeroSign).key() : (data[at + F_KEY] as number);
    const keyChanged =
      this.keyTexts !== null
        ? this.updateKeyText(slot)
        : (flags & SIGNED_ZERO) !== 0 && !Object.is(shownKey, data[at + F_KEY]);
    let error: unknown;
    try {
      if ((flags & KEY_IN_RECORD) !== 0) scratch[0] = shownKey;
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
      if (keyChanged && (flags & KEY_IN_RECORD) !== 0) data[at + F_KEY] = shownKey;
      if ((flags & SIGNED_ZERO) !== 0) (this.zeroSign as ZeroSign).settle(at);
      return;
    }
    if (hasOld) {
      if (
        !keyChanged &&
        ((flags & OUT_IN_RECORD) !== 0
          ? sameAsRecord(data, at + F_OUT, scratch, keyCount)
          : sameAggregates(old as Value[], scratch, keyCount))
      ) {
        if ((flags & SIGNED_ZERO) !== 0) (this.zeroSign as ZeroSign).settle(at);
        return;
      }
      changes.retract(this.records, slot, old, flags, keyCount);
    }
    if (keyChanged && (flags & KEY_IN_RECORD) !== 0) data[at + F_KEY] = shownKey;
    changes.insert(scratch);
    this.rows.set(slot, scratch);
    if ((flags & SIGNED_ZERO) !== 0) (this.zeroSign as ZeroSign).settle(at);
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
   * Counts of work, for tests: groups the generated merge left to the interpreted one, groups it
   * released itself (no rows left), output rows copied into objects (reduce-group-rows.ts), and
   * steps the generated one-row and two-row steps took whole.
   */
  get mergeCounts(): {
    readonly slowMerges: number;
    readonly mergeReleases: number;
    readonly rowCopies: number;
    readonly oneRowSteps: number;
    readonly twoRowSteps: number;
  } {
    return {
      slowMerges: this.slowMerges,
      mergeReleases: this.mergeReleases,
      rowCopies: this.rows.copies,
      oneRowSteps: this.oneRowSteps,
      twoRowSteps: this.twoRowSteps,
    };
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
