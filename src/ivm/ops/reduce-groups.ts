// A Reduce's groups: each group a slot, its count and aggregate fields in typed records, its key (or
// the key held in the record), its output row and error; the touch marks the lookup pass writes;
// and what is read of the groups outside a step — eviction, the checkpoint, the output rows and
// their size. ReduceOp (reduce-op.ts) extends it with the step: the batch reduced into partials and
// merged into these groups.
import type { Value } from '../../common/types.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import { GroupIndex, NO_SLOT } from '../group-index.ts';
import type { AggColumn, GroupRecords } from './aggregates.ts';
import { aggregateColumn, recordWidth } from './aggregates.ts';
import { GroupKeyTexts, keyTextsNeeded } from './group-key-texts.ts';
import { identicalRows } from '../exact-rows.ts';
import { fitTouches, StepTouches, type GroupLookup } from './reduce-lookup.ts';
import { ReduceCheckpoint, type CheckpointGroups } from './reduce-checkpoint.ts';
import { F_FLAGS, F_KEY, F_OUT, fitRecord, KEY_IN_RECORD, RECORD_KEY, SIGNED_ZERO } from './reduce-record.ts';
import { ZeroSign, zeroSignNeeded } from './zero-sign.ts';
import { sampledSize } from './sampled-size.ts';
import { GroupRows } from './reduce-group-rows.ts';

export type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

export abstract class ReduceGroups implements Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  /** group id (the key value, or its encoding) → slot */
  protected readonly index = new GroupIndex();
  protected readonly keys: (readonly Value[] | undefined)[] = [];
  /**
   * Per-group record: [count, key, flags, ...emitted values, ...invertible aggregate fields].
   * (The group's touch mark is in `lookup.touches`, by slot.) `key` holds a single numeric key and `emitted` the last output row's aggregate
   * values when they are all numbers (flags KEY_IN_RECORD, OUT_IN_RECORD): then the merge builds the
   * group's change from this one record without reading the key array or the old row, which sit
   * elsewhere in the heap (a cache and TLB miss each on this memory-bound path). The batch's
   * partials are not in the record (so a SUM group's record is 6 doubles, within a cache line's 8).
   */
  protected readonly records: GroupRecords;
  /**
   * The step's partials, dense by touch index: [partial count, ...aggregate partials]. Written in
   * touch order and read back in the same order by the merge, so they stay in the cache, and the
   * record is read once per batch, by the merge.
   */
  protected readonly partials: GroupRecords;
  /** The groups' output rows (reduce-group-rows.ts). */
  protected readonly rows: GroupRows;
  protected readonly errorsBySlot = new Map<number, unknown>();
  private readonly free: number[] = [];
  protected slotCount = 0;
  protected readonly columns: AggColumn[];
  protected readonly keyCount: number;
  protected readonly keyColumns: readonly ColumnSpec[];
  protected globalEmitted = false;
  protected tracking = false;
  /** Groups changed since the last checkpoint take, and the take itself (reduce-checkpoint.ts). */
  private readonly checkpoint = new ReduceCheckpoint();
  /** Slots touched by the current step, in first-touch order: the first `lookup.count`. */
  protected readonly touched: number[] = [];
  /** Per group, its rows' key texts (null: the key's values always print alike). */
  protected readonly keyTexts: GroupKeyTexts | null;
  /** The zero group's -0 rows, when the one key is a float (zero-sign.ts); null otherwise. */
  protected readonly zeroSign: ZeroSign | null;
  /** What the lookup-and-mark pass (reduce-lookup.ts) reads and extends. */
  protected readonly lookup: GroupLookup;
  /** Marks a changed group for the next checkpoint take (GroupChanges, reduce-checkpoint.ts). */
  protected readonly track = (slot: number): void => {
    if (this.keyTexts !== null) this.checkpoint.changed.markKey(this.keyAt(slot));
    else this.checkpoint.changed.mark(slot);
  };

  constructor(node: ReduceNode) {
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
    this.zeroSign = zeroSignNeeded(this.keyColumns) ? new ZeroSign(this.records) : null;
    this.rows = new GroupRows(
      this.records,
      this.keys,
      this.keyTexts === null,
      node.keyCount,
      node.aggregates.length,
    );
    this.lookup = {
      index: this.index,
      keyCount: this.keyCount,
      keyTexts: this.keyTexts,
      zeroSign: this.zeroSign,
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
  }

  private idOf(key: readonly Value[]): Value {
    return groupIdOf(this.keyCount, key);
  }

  protected allocate(id: Value, key: readonly Value[]): number {
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
  protected keyAt(slot: number): readonly Value[] {
    const key = this.keys[slot] as readonly Value[];
    if (key !== RECORD_KEY) return key;
    return [this.records.data[slot * this.records.stride + F_KEY] as number];
  }

  protected release(slot: number): void {
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
    // The zero group (its rows all gone): its -0 count is 0 again, set so whatever a batch left.
    const flags = this.records.data[slot * this.records.stride + F_FLAGS] as number;
    if (this.zeroSign !== null && (flags & SIGNED_ZERO) !== 0) this.zeroSign.reset();
    this.free.push(slot);
  }

  /** Live slots in slot order (a released slot is reused by a later group). */
  private *slots(): Generator<number> {
    const keys = this.keys;
    for (let slot = 0; slot < this.slotCount; slot++) if (keys[slot] !== undefined) yield slot;
  }

  /**
   * Sets the group's key to its representative text (GroupKeyTexts); whether it changed. A group
   * being released (no rows) keeps its key.
   */
  protected updateKeyText(slot: number): boolean {
    const rep = (this.keyTexts as GroupKeyTexts).settle(slot);
    const current = this.keys[slot];
    if (rep === null || rep === current || current === RECORD_KEY) return false;
    // Another array of the same texts (the first batch, a load): adopt it, so the next is by reference.
    const changed = current === undefined || !identicalRows(rep, current);
    this.keys[slot] = rep;
    return changed;
  }

  /** The group's key: from its old output row when there is one (read anyway), else its key array. */
  protected keyOf(slot: number, old: readonly Value[] | null): readonly Value[] {
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
      zeroSign: this.zeroSign,
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
   * The input rows (their weights summed) the group of `key`'s values holds, 0 when there is no such
   * group: read, changing nothing, by a write's epoch count before the epoch runs, which pairs a
   * group's old and new rows when the write deletes fewer of its rows than it holds (the group
   * stays: src/exec/epoch-delta-rows.ts).
   */
  rowsOfGroup(key: readonly Value[]): number {
    const slot = this.index.get(this.idOf(key.length === this.keyCount ? key : key.slice(0, this.keyCount)));
    return slot === NO_SLOT ? 0 : (this.records.data[slot * this.records.stride] as number);
  }
}

/**
 * A group's id in a Reduce's index: the one key value as it is keyed, the values of several encoded,
 * '' for the global group. A write's epoch count tells groups apart by it too
 * (src/exec/epoch-delta-rows.ts), as the Reduce does.
 */
export function groupIdOf(keyCount: number, key: readonly Value[]): Value {
  return keyCount === 0 ? '' : keyCount === 1 ? singleKey(key[0] as Value) : encodeValues(key);
}
