// Reduce + Merge. Reduce: the batch's rows are combined per group into one partial (a hot key costs
// one partial per batch, not one per row). Merge: each partial folds into the group's stored state,
// and the operator emits -old/+new only when the group's output row actually changed. Groups whose
// row count reaches zero disappear; the global group (no keys) always keeps its one row.
// State is column-wise: a group is a slot number; counts and aggregate fields live in typed arrays.
// A group key of equal values that print differently (1.5 and 1.50 are one group) shows the text of
// one of the group's current rows, the first in compareExact's order (group-key-texts.ts).
import { SluiceError, knownErrorCode } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { AggregateSpec, ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { RowFn, ScalarExpr } from '../../common/scalar-expr.ts';
import { columnsOf, compileScalar } from '../../common/scalar-expr.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { encodeValues, identicalValues, singleKey } from '../../common/values.ts';
import { ColumnBatch, type ZBatch } from '../zset.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import type { AggColumn, GroupRecords } from './aggregates.ts';
import { aggregateColumn, recordWidth } from './aggregates.ts';
import { orderedArgument } from './ordered-aggregate.ts';
import { GroupKeyTexts, keyTextsNeeded } from './group-key-texts.ts';
import { identicalRows } from '../exact-rows.ts';

/** A Map stage fused into the Reduce: evaluated per input row without building projected rows. */
export interface FusedMap {
  readonly filter: ScalarExpr | null;
  readonly project: readonly ScalarExpr[];
  readonly inputColumns: readonly ColumnSpec[];
}

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

interface SerializedGroup {
  readonly k: Value[];
  readonly c: number;
  readonly a: unknown[];
  readonly o: Value[] | null;
  readonly e: { code: string; message: string } | null;
  /** The group's key texts with their row counts (only for keys that may print differently). */
  readonly t?: [Value[], number][];
}

export class ReduceOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  /** group id (the key value, or its encoding) → slot */
  private readonly index = new GroupIndex();
  private keys: (readonly Value[] | undefined)[] = [];
  /**
   * Per-group record: [count, touch, key, flags, ...emitted values, ...invertible aggregate fields].
   * `touch` is the group's touch index in the current step plus one (0: not touched; the merge sets it
   * back to 0). `key` holds a single numeric key and `emitted` the last output row's aggregate
   * values when they are all numbers (flags KEY_IN_RECORD, OUT_IN_RECORD): then the merge builds the
   * group's change from this one record without reading the key array or the old row, which sit
   * elsewhere in the heap (a cache and TLB miss each on this memory-bound path). The batch's
   * partials are not in the record (so a SUM group's record is 7 doubles, within a cache line's 8).
   */
  private readonly records: GroupRecords;
  /**
   * The step's partials, dense by touch index: [partial count, ...aggregate partials]. Written in
   * touch order and read back in the same order by the merge, so they stay in the cache, and the
   * record is read once per batch by the touch pass and once by the merge.
   */
  private readonly partials: GroupRecords;
  /** Per input row of the step: its group's slot (NO_SLOT: filtered out or failed), then its touch index. */
  private rowSlots = new Int32Array(64);
  private rowTouches = new Int32Array(64);
  /** Per input row of the step, its aggregate arguments (row i's at i × aggregates). */
  private readonly rowArgs: Value[] = [];
  /** Per input row of the step, its group id and its key (the value of a single key, else the array). */
  private readonly rowIds: Value[] = [];
  private readonly rowKeys: (Value | Value[])[] = [];
  private outs: (Value[] | null)[] = [];
  private readonly errorsBySlot = new Map<number, unknown>();
  private readonly free: number[] = [];
  private slotCount = 0;
  private stepNo = 0;
  private readonly columns: AggColumn[];
  private readonly keyCount: number;
  private readonly keyFns: RowFn[];
  private readonly argFns: (RowFn | null)[];
  private readonly filter: RowFn | null;
  private readonly inputColumns: readonly ColumnSpec[];
  private readonly keyColumns: readonly ColumnSpec[];
  private globalEmitted = false;
  private tracking = false;
  private exported = false;
  private readonly dirty = new Map<string, readonly Value[]>();
  private readonly scratch: Value[];
  /** The row a column-wise input batch is read through (its width grows to the widest batch). */
  private readonly inRow: Value[] = [];
  /**
   * The input columns the filter, keys and arguments read, ascending: only they are copied into
   * `inRow` (the canonical pipeline's Reduces read two of three and one of two).
   */
  private readonly usedColumns: Int32Array;
  /** Sum of the merge's early record reads (kept so the reads are not dead code). */
  private touchSink = 0;
  /** Slots touched by the current step, in first-touch order. */
  private readonly touched: number[] = [];
  /** Per group, its rows' key texts (null: the key's values always print alike). */
  private readonly keyTexts: GroupKeyTexts | null;

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
    this.keyColumns = node.columns.slice(0, node.keyCount);
    this.keyTexts = keyTextsNeeded(this.keyColumns) ? new GroupKeyTexts() : null;
    this.scratch = new Array<Value>(node.keyCount + node.aggregates.length);
    if (fused === null) {
      this.filter = null;
      this.inputColumns = inputColumns;
      const col =
        (i: number): RowFn =>
        (row) =>
          row[i] as Value;
      this.keyFns = Array.from({ length: node.keyCount }, (_, i) => col(i));
      this.argFns = node.aggregates.map((a) => argFn(a, col));
      const used = new Set<number>(Array.from({ length: node.keyCount }, (_, i) => i));
      for (const a of node.aggregates) {
        if (a.argColumn !== null) used.add(a.argColumn);
        for (const o of a.orderBy ?? []) used.add(o.index);
      }
      this.usedColumns = Int32Array.from([...used].sort((x, y) => x - y));
    } else {
      this.filter = fused.filter === null ? null : compileScalar(fused.filter);
      this.inputColumns = fused.inputColumns;
      const fns = fused.project.map(compileScalar);
      const used = new Set<number>();
      if (fused.filter !== null) columnsOf(fused.filter, used);
      for (const e of fused.project) columnsOf(e, used);
      this.usedColumns = Int32Array.from([...used].sort((x, y) => x - y));
      this.keyFns = fns.slice(0, node.keyCount);
      this.argFns = node.aggregates.map((a) => argFn(a, (i) => fns[i] as RowFn));
    }
  }

  private idOf(key: readonly Value[]): Value {
    return this.keyCount === 0 ? '' : this.keyCount === 1 ? singleKey(key[0] as Value) : encodeValues(key);
  }

  private allocate(id: Value, key: readonly Value[]): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.slotCount++;
      const r = this.records;
      if ((slot + 1) * r.stride > r.data.length) {
        const data = new Float64Array(r.data.length * 2);
        data.set(r.data);
        r.data = data;
      }
    }
    const at = slot * this.records.stride;
    const data = this.records.data;
    data[at] = 0;
    data[at + F_TOUCH] = 0;
    const k0 = key[0];
    if (this.keyCount === 1 && typeof k0 === 'number') {
      // The key lives in the record only: no key array per group.
      this.keys[slot] = RECORD_KEY;
      data[at + F_KEY] = k0;
      data[at + F_FLAGS] = KEY_IN_RECORD;
    } else {
      this.keys[slot] = key;
      data[at + F_FLAGS] = 0;
    }
    this.outs[slot] = null;
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
    const key = this.keyAt(slot);
    this.index.delete(this.idOf(key));
    this.keys[slot] = undefined;
    this.outs[slot] = null;
    this.errorsBySlot.delete(slot);
    this.keyTexts?.release(slot);
    this.free.push(slot);
  }

  /**
   * Sets the group's output row. Its aggregate values are mirrored into the record when they are all
   * numbers; a row the record holds entirely (numeric key and values) is not kept as an object, so
   * the state of such a group is its record alone, and `outRow` rebuilds the row when asked.
   */
  private setOut(slot: number, row: readonly Value[] | null): void {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const before = data[at + F_FLAGS] as number;
    let flags = before & KEY_IN_RECORD;
    if (row !== null) {
      flags |= HAS_OUT;
      const keyCount = this.keyCount;
      let numeric = true;
      for (let a = 0; a < this.columns.length; a++) {
        const v = row[keyCount + a];
        if (typeof v !== 'number') {
          numeric = false;
          break;
        }
        data[at + F_OUT + a] = v;
      }
      if (numeric) flags |= OUT_IN_RECORD;
    }
    data[at + F_FLAGS] = flags;
    // `row` may be the scratch row: a kept row is a copy. `outs[slot]` is non-null exactly while the
    // group has a row its record does not hold, so a record-held group never touches `outs` (a
    // random access into an array as long as the group count, one more cache miss per change).
    if (row !== null && (flags & IN_RECORD) !== IN_RECORD) this.outs[slot] = row.slice();
    else if ((before & HAS_OUT) !== 0 && (before & IN_RECORD) !== IN_RECORD) this.outs[slot] = null;
  }

  /** The group's current output row, or null (rebuilt from the record when it holds all of it). */
  private outRow(slot: number): Value[] | null {
    const data = this.records.data;
    const at = slot * this.records.stride;
    const flags = data[at + F_FLAGS] as number;
    if ((flags & HAS_OUT) === 0) return null;
    if ((flags & IN_RECORD) !== IN_RECORD) return this.outs[slot] as Value[];
    const nAggs = this.columns.length;
    const row = new Array<Value>(1 + nAggs);
    row[0] = data[at + F_KEY] as number;
    for (let a = 0; a < nAggs; a++) row[1 + a] = data[at + F_OUT + a] as number;
    return row;
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
    if (touched.length > 0) this.untouch();
    const index = this.index;
    const keyCount = this.keyCount;
    const keyFns = this.keyFns;
    const argFns = this.argFns;
    const columns = this.columns;
    const filter = this.filter;
    const nAggs = columns.length;
    const stride = this.records.stride;
    const n = input.weights.length;
    if (this.rowSlots.length < n) {
      const len = Math.max(n, 2 * this.rowSlots.length);
      this.rowSlots = new Int32Array(len);
      this.rowTouches = new Int32Array(len);
    }
    const rowSlots = this.rowSlots;
    const rowTouches = this.rowTouches;
    const rowArgs = this.rowArgs;
    const rowIds = this.rowIds;
    const rowKeys = this.rowKeys;
    // Reduce, in passes over the batch: (1) each row's key and arguments; (2) its group's slot and
    // its touch index from the group's record — a tight loop, so the cache misses of many rows (the
    // index cells and records of a large group set are far apart) are in flight at once instead of
    // one after the other between the expression calls; (3) the rows fold into their group's
    // partial, dense by touch index. Groups are allocated and touched in first-appearance
    // order, as in one pass: touch order is the order of the changes out.
    // A batch with its columns (from a Reduce upstream) is read column-wise through one scratch row:
    // its row objects (old output rows among them) are not dereferenced unless a row fails.
    const inCols = input.cols;
    const inRow = this.inRow;
    const used = this.usedColumns;
    const nUsed = used.length;
    // The scratch row's width is that of the batch (its other cells are never read).
    const width =
      inCols === undefined ? (n === 0 ? 0 : (input.rows[0] as readonly Value[]).length) : inCols.length;
    while (inRow.length < width) inRow.push(null);
    for (let i = 0; i < n; i++) {
      // Every row is read through the one scratch row, whichever form the batch has: the generated
      // key and argument functions then see a single array shape (a table's batch is columns when
      // large and rows when small, and mixing them made their loads polymorphic).
      if (inCols === undefined) {
        const r = input.rows[i] as readonly Value[];
        for (let u = 0; u < nUsed; u++) {
          const c = used[u] as number;
          inRow[c] = r[c] as Value;
        }
      } else
        for (let u = 0; u < nUsed; u++) {
          const c = used[u] as number;
          inRow[c] = (inCols[c] as readonly Value[])[i] as Value;
        }
      const row: readonly Value[] = inRow;
      rowSlots[i] = NO_SLOT;
      let key: Value[] | null = null;
      let single: Value = null;
      let id: Value;
      try {
        if (filter !== null && filter(row) !== true) continue;
        if (keyCount === 0) {
          id = '';
        } else if (keyCount === 1) {
          single = (keyFns[0] as RowFn)(row);
          id = singleKey(single);
        } else {
          key = new Array<Value>(keyCount);
          for (let k = 0; k < keyCount; k++) key[k] = (keyFns[k] as RowFn)(row);
          id = encodeValues(key);
        }
        for (let a = 0; a < nAggs; a++) {
          const f = argFns[a];
          rowArgs[i * nAggs + a] = f === null || f === undefined ? null : f(row);
        }
      } catch (error) {
        errors.report(
          error,
          input.rows[i] as readonly Value[],
          this.inputColumns,
          input.weights[i] as number,
        );
        continue;
      }
      rowIds[i] = id;
      rowKeys[i] = key ?? single;
      rowSlots[i] = 0;
    }
    const keyTexts = this.keyTexts;
    let data = this.records.data;
    for (let i = 0; i < n; i++) {
      if (rowSlots[i] === NO_SLOT) continue;
      const id = rowIds[i] as Value;
      let slot = index.get(id);
      if (slot === NO_SLOT) {
        const key = rowKeys[i] as Value | Value[];
        slot = this.allocate(id, keyCount === 1 ? [key as Value] : keyCount === 0 ? [] : (key as Value[]));
        data = this.records.data;
      }
      if (keyTexts !== null) {
        const weight = input.weights[i] as number;
        if (keyCount > 1) keyTexts.add(slot, rowKeys[i] as Value[], weight);
        else keyTexts.addOne(slot, rowKeys[i] as Value, weight);
      }
      rowSlots[i] = slot;
      const at = slot * stride + F_TOUCH;
      let t = data[at] as number;
      if (t === 0) {
        t = touched.push(slot);
        data[at] = t;
      }
      rowTouches[i] = t - 1;
    }
    if (keyCount === 0 && !this.globalEmitted) {
      let slot = index.get('');
      if (slot === NO_SLOT) slot = this.allocate('', []);
      const d = this.records.data;
      if (d[slot * stride + F_TOUCH] === 0) d[slot * stride + F_TOUCH] = touched.push(slot);
    }
    this.globalEmitted = true;
    const pstride = this.partials.stride;
    if (touched.length * pstride > this.partials.data.length) {
      this.partials.data = new Float64Array(
        Math.max(touched.length * pstride, 2 * this.partials.data.length),
      );
    }
    const pd = this.partials.data;
    for (let t = 0; t < touched.length; t++) {
      pd[t * pstride] = 0;
      for (let a = 0; a < nAggs; a++) (columns[a] as AggColumn).resetPartial(touched[t] as number, t);
    }
    for (let i = 0; i < n; i++) {
      const slot = rowSlots[i] as number;
      if (slot === NO_SLOT) continue;
      const p = rowTouches[i] as number;
      const weight = input.weights[i] as number;
      pd[p * pstride] = (pd[p * pstride] as number) + weight;
      for (let a = 0; a < nAggs; a++) {
        if (argFns[a] !== null)
          (columns[a] as AggColumn).accumulate(slot, rowArgs[i * nAggs + a] as Value, weight, p);
      }
    }
    if (rowArgs.length > MAX_KEPT_ARGS) rowArgs.length = 0;
    if (rowIds.length > MAX_KEPT_ARGS) {
      rowIds.length = 0;
      rowKeys.length = 0;
    } else if (keyCount !== 1 || typeof rowKeys[0] !== 'number') rowKeys.fill(null, 0, n); // no key arrays kept

    // Merge: fold each partial into its group and emit the change of the group's row, with the
    // batch's columns beside its rows for a Reduce downstream.
    const weights: number[] = [];
    const outWidth = keyCount + nAggs;
    const cols: Value[][] = new Array<Value[]>(outWidth);
    for (let c = 0; c < outWidth; c++) cols[c] = [];
    const scratch = this.scratch;
    let sink = 0;
    for (let t = 0; t < touched.length; t++) {
      const slot = touched[t] as number;
      if ((t & (MERGE_AHEAD - 1)) === 0) {
        // Read the next records in a tight loop first: their cache misses overlap, where the merge's
        // work between two groups would otherwise serialise them.
        const d = this.records.data;
        const end = Math.min(touched.length, t + MERGE_AHEAD);
        for (let u = t; u < end; u++) {
          const at = (touched[u] as number) * stride;
          // both ends: a record can straddle two cache lines
          sink += (d[at] as number) + (d[at + stride - 1] as number);
        }
      }
      if (this.tracking) {
        const key = this.keyAt(slot);
        this.dirty.set(encodeValues(key), key);
      }
      const data = this.records.data;
      const at = slot * stride;
      data[at + F_TOUCH] = 0;
      const count = (data[at] as number) + (pd[t * pstride] as number);
      data[at] = count;
      for (let a = 0; a < nAggs; a++) (columns[a] as AggColumn).merge(slot, t);
      if (count < 0)
        throw new SluiceError('INTERNAL_ERROR', `group of reduce n${this.nodeId} has a negative row count`);
      const flags = data[at + F_FLAGS] as number;
      const hasOld = (flags & HAS_OUT) !== 0;
      // The old row object exists only for groups the record does not hold entirely.
      const old = hasOld && (flags & IN_RECORD) !== IN_RECORD ? (this.outs[slot] as Value[]) : null;
      const oldError = this.errorsBySlot.size === 0 ? undefined : this.errorsBySlot.get(slot);
      if (count === 0 && keyCount > 0) {
        if (hasOld) this.retract(slot, old, flags, weights, cols);
        if (oldError !== undefined) errors.report(oldError, this.keyOf(slot, old), this.keyColumns, -1);
        this.release(slot);
        continue;
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
          this.retract(slot, old, flags, weights, cols);
          this.setOut(slot, null);
        }
        continue;
      }
      if (hasOld) {
        if (
          !keyChanged &&
          ((flags & OUT_IN_RECORD) !== 0
            ? sameAsRecord(data, at + F_OUT, scratch, keyCount)
            : sameAggregates(old as Value[], scratch, keyCount))
        )
          continue;
        this.retract(slot, old, flags, weights, cols);
      }
      weights.push(1);
      for (let c = 0; c < outWidth; c++) (cols[c] as Value[]).push(scratch[c] as Value);
      this.setOut(slot, scratch);
    }
    touched.length = 0;
    this.touchSink = sink;
    return new ColumnBatch(cols, weights);
  }

  /** Clears the touch marks a step that threw left in its groups' records. */
  private untouch(): void {
    const data = this.records.data;
    const stride = this.records.stride;
    for (const slot of this.touched) if (slot < this.slotCount) data[slot * stride + F_TOUCH] = 0;
    this.touched.length = 0;
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
   * Emits -old (`old` null: the record holds the whole row), its columns from the group's record
   * where they are mirrored there.
   */
  private retract(
    slot: number,
    old: readonly Value[] | null,
    flags: number,
    weights: number[],
    cols: Value[][],
  ): void {
    weights.push(-1);
    const keyCount = this.keyCount;
    const data = this.records.data;
    const at = slot * this.records.stride;
    if ((flags & KEY_IN_RECORD) !== 0) (cols[0] as Value[]).push(data[at + F_KEY] as number);
    else for (let k = 0; k < keyCount; k++) (cols[k] as Value[]).push((old as Value[])[k] as Value);
    const nAggs = this.columns.length;
    if ((flags & OUT_IN_RECORD) !== 0)
      for (let a = 0; a < nAggs; a++) (cols[keyCount + a] as Value[]).push(data[at + F_OUT + a] as number);
    else
      for (let a = 0; a < nAggs; a++)
        (cols[keyCount + a] as Value[]).push((old as Value[])[keyCount + a] as Value);
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
      if (this.tracking) this.dirty.set(encodeValues(key), key);
      for (const c of this.columns) c.clear(slot);
      this.release(slot);
      n++;
    }
    return n;
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  private serialize(slot: number): SerializedGroup {
    const error = this.errorsBySlot.get(slot);
    return {
      k: [...this.keyAt(slot)],
      c: this.records.data[slot * this.records.stride] as number,
      a: this.columns.map((c) => c.serialize(slot)),
      o: this.outRow(slot),
      ...(this.keyTexts !== null ? { t: this.keyTexts.entries(slot) } : {}),
      e:
        error === undefined
          ? null
          : { code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR', message: errorText(error) },
    };
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    const upserts: (readonly [string, unknown])[] = [];
    const deletes: string[] = [];
    if (replaceAll) {
      for (const slot of this.slots()) upserts.push([encodeValues(this.keyAt(slot)), this.serialize(slot)]);
    } else {
      for (const [k, key] of this.dirty) {
        const slot = this.index.get(this.idOf(key));
        if (slot === NO_SLOT) deletes.push(k);
        else upserts.push([k, this.serialize(slot)]);
      }
    }
    this.dirty.clear();
    this.exported = true;
    return { replaceAll, upserts, deletes };
  }

  loadState(values: Iterable<unknown>): void {
    for (const slot of [...this.slots()]) this.release(slot);
    this.dirty.clear();
    for (const v of values) {
      const d = v as SerializedGroup;
      const slot = this.allocate(this.idOf(d.k), d.k);
      this.records.data[slot * this.records.stride] = d.c;
      this.keyTexts?.load(slot, d.t ?? [[d.k, d.c]]);
      d.a.forEach((a, i) => (this.columns[i] as AggColumn).deserialize(slot, a));
      this.setOut(slot, d.o);
      if (d.e !== null) {
        this.errorsBySlot.set(slot, new SluiceError(knownErrorCode(d.e.code), d.e.message));
      }
    }
    this.globalEmitted = this.keyCount > 0 || this.index.has('');
    this.exported = true;
  }

  /** Current output rows, for a view whose arrangement is this operator's state. */
  *outputRows(): Generator<readonly Value[]> {
    for (const slot of this.slots()) {
      const out = this.outRow(slot);
      if (out !== null) yield out;
    }
  }

  /**
   * Approximate bytes of state. Read by every catalog listing and metrics scrape, so it must not
   * walk a million groups: past STATE_SAMPLE groups it measures the first ones and scales.
   */
  stateSize(): number {
    let bytes = 0;
    let measured = 0;
    for (const slot of this.slots()) {
      const keyBytes = this.keys[slot] === RECORD_KEY ? 0 : 32 + this.keyCount * 16;
      bytes += 48 + keyBytes + (this.outs[slot]?.length ?? 0) * 16 + 24 + this.records.stride * 8;
      for (const c of this.columns) bytes += c.bytes(slot);
      if (++measured === STATE_SAMPLE) break;
    }
    return measured === 0 ? 0 : Math.round((bytes / measured) * this.index.size);
  }

  groupCount(): number {
    return this.index.size;
  }
}

/** `keys[slot]` of a group whose (single, numeric) key is held in its record. */
const RECORD_KEY: readonly Value[] = Object.freeze([]);

/** Record fields after the count: touch index + 1, a single numeric key, flags, emitted values. */
const F_TOUCH = 1;
const F_KEY = 2;
const F_FLAGS = 3;
const F_OUT = 4;
/** Groups whose records the merge reads ahead at a time (a power of two). */
const MERGE_AHEAD = 64;
/** Argument scratch kept between steps, in values (a larger batch's is dropped after its step). */
const MAX_KEPT_ARGS = 1 << 16;
/** Flags: the key is at F_KEY; the output row's aggregate values are at F_OUT.. */
const KEY_IN_RECORD = 1;
const OUT_IN_RECORD = 2;
const IN_RECORD = KEY_IN_RECORD | OUT_IN_RECORD;
/** The group has an output row (in `outs`, or rebuilt from the record when IN_RECORD). */
const HAS_OUT = 4;

/** Whether the group's new aggregate values equal those mirrored in its record. */
function sameAsRecord(data: Float64Array, from: number, b: readonly Value[], keyCount: number): boolean {
  for (let i = b.length - 1; i >= keyCount; i--) {
    const x = data[from + i - keyCount] as number;
    const y = b[i] as Value;
    // identical, not equal: a MIN of -0 after 0 must show (so must 1.5 after 1.50, in sameAggregates)
    if (!identicalValues(x, y)) return false;
  }
  return true;
}

/** Groups measured for `stateSize` before it extrapolates. */
const STATE_SAMPLE = 4096;

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Whether a group's new row equals its old one; the key columns are equal by construction. */
function sameAggregates(a: readonly Value[], b: readonly Value[], keyCount: number): boolean {
  for (let i = a.length - 1; i >= keyCount; i--) {
    const x = a[i] as Value;
    const y = b[i] as Value;
    if (!identicalValues(x, y)) return false;
  }
  return true;
}

/** How the Reduce reads an aggregate's argument: its column, or for ORDER BY the value with its keys. */
function argFn(a: AggregateSpec, column: (i: number) => RowFn): RowFn | null {
  if (a.argColumn === null) return null;
  if (a.orderBy === undefined) return column(a.argColumn);
  return orderedArgument(
    column(a.argColumn),
    a.orderBy.map((o) => column(o.index)),
  );
}
