// The view's arrangement: integrates consolidated deltas into the view's current rows and pairs
// them into changelog entries. Keyed views hold a unique-key arrangement (key → row) and emit -U/+U
// for a changed key; keyless views a counted one (row → multiplicity) and emit +I/-D with a count;
// a view whose Reduce already holds its rows one per key borrows them (the plan records it). A view never holds a negative
// multiplicity or two rows for one key: either would be an internal error, not a result.
// An ordered index of the rows (for paged reads and streamed snapshots) exists only once someone
// reads the view: it is built in slices on first use, then kept up to date by every step.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { Operator } from '../operator.ts';
import { IndexBuild, OrderedIndex } from '../ordered-index.ts';
import { CapturedArray, type RowCapture } from '../row-capture.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { CountedArrangement } from '../counted-arrangement.ts';
import { UniqueArrangement } from '../unique-arrangement.ts';
import { SlotRowMap } from '../slot-row-map.ts';
import type { ZBatch } from '../zset.ts';
import { consolidateByKey, pairKeyedChanges, type KeyedOutputWork } from './output-keyed.ts';
import { batchOfEntries, consolidate } from '../zset.ts';
import { ChangeList } from '../../common/raw-changes.ts';

/** Retracted keys of a step kept for reuse between steps (a larger step's are let go after it). */
const KEPT_RETRACTIONS = 4096;

/** The rows a view borrows from the Reduce that holds them (see the constructor). */
export interface SharedRows {
  outputRows(): Iterable<readonly Value[]>;
  /** The sum of a batch's weights if the Reduce counted it as it wrote it, else null. */
  netWeightOf?(batch: ZBatch): number | null;
}

export class OutputOp implements Operator, Stateful {
  private readonly keyed: UniqueArrangement | null;
  private readonly multiset: CountedArrangement | null;
  /** For borrowed state: whether the (empty) part was exported once. */
  private borrowedExported = false;
  private lastDelta: ZBatch = { rows: [], weights: [], consolidated: true };
  /**
   * Keyed views: the key of each row of `lastDelta` (computed once a step, read again by
   * lastChanges), and how many of its rows are retractions. Borrowed state computes them in
   * lastChanges: its step reads no key.
   */
  private readonly lastKeys: Value[] = [];
  private lastKeysValid = false;
  private lastRetractions = 0;
  /** A step's retracted keys and the rows they took (reused; the rows let go after each step). */
  private readonly retractedKeys: Value[] = [];
  private readonly takenRows: (readonly Value[] | undefined)[] = [];
  /** Keys computed and pairs looked up, for tests. */
  readonly work: KeyedOutputWork = { keysComputed: 0, pairedByLookup: 0 };
  private rowCount = 0;
  private index: OrderedIndex | null = null;
  /** An index being built from the rows of one step, and the deltas of the steps since. */
  private building: {
    readonly build: IndexBuild;
    readonly queue: { rows: (readonly Value[])[]; weights: number[] }[];
  } | null = null;

  /**
   * `shared`: the rows are already held, one per key, by the operator feeding this one (a Reduce
   * whose group key is the view's key), so the arrangement borrows that state instead of copying it.
   */
  constructor(
    readonly nodeId: number,
    readonly stateId: string,
    private readonly key: readonly number[] | null,
    private readonly width: number,
    private readonly shared: SharedRows | null = null,
  ) {
    this.keyed =
      key === null || shared !== null ? null : new UniqueArrangement<Value>(() => new SlotRowMap<Value>());
    this.multiset = key === null ? new CountedArrangement(`view arrangement n${nodeId}`) : null;
  }

  private keyOf(row: readonly Value[]): Value {
    this.work.keysComputed++;
    const key = this.key as readonly number[];
    if (key.length === 0) return '';
    if (key.length === 1) return singleKey(row[key[0] as number] as Value);
    return encodeValues(row, key);
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = inputs[0] as ZBatch;
    const keys = this.lastKeys;
    this.lastKeysValid = false;
    let delta: ZBatch;
    if (this.keyed !== null && !input.consolidated) {
      // By key: only rows of one key can be one row, so no row's values are encoded to find them.
      delta = consolidateByKey(input, (row) => this.keyOf(row), keys);
      this.lastKeysValid = true;
    } else delta = consolidate(input);
    this.lastDelta = delta;
    if (this.shared !== null) {
      // The Reduce's count of the batch it wrote (a sum is the same before and after consolidating),
      // else summed in a local: the field's load and store were in every iteration (2% of a batch-100 run)
      // (the weights are read only then: a partitioned Reduce's are merged on their first read)
      const net = this.shared.netWeightOf?.(input) ?? null;
      let count = this.rowCount;
      if (net !== null) count += net;
      else {
        const weights = delta.weights;
        for (let i = 0; i < weights.length; i++) count += weights[i] as number;
      }
      this.rowCount = count;
    } else if (this.keyed !== null) {
      const keyed = this.keyed;
      if (!this.lastKeysValid) {
        keys.length = 0;
        for (let i = 0; i < delta.rows.length; i++) keys.push(this.keyOf(delta.rows[i] as readonly Value[]));
        this.lastKeysValid = true;
      }
      // retractions first, so -old/+new of one key applies in either order; all of the step's at
      // once, so their lookups overlap (the arrangement's `deleteMany`)
      const gone = this.retractedKeys;
      let retractions = 0;
      for (let i = 0; i < delta.rows.length; i++) {
        const w = delta.weights[i] as number;
        if (w > 0) continue;
        if (w !== -1) this.absentRetraction();
        gone[retractions++] = keys[i] as Value;
      }
      if (retractions > 0) {
        const taken = this.takenRows;
        keyed.deleteMany(gone, retractions, taken);
        for (let i = 0; i < retractions; i++) {
          if (taken[i] === undefined) this.absentRetraction();
          taken[i] = undefined;
        }
        this.rowCount -= retractions;
        // A large step's keys are not held until the next one (the arrays are reused up to this size).
        if (retractions > KEPT_RETRACTIONS) gone.length = taken.length = 0;
      }
      for (let i = 0; i < delta.rows.length; i++) {
        const w = delta.weights[i] as number;
        if (w < 0) continue;
        if (w !== 1 || !keyed.add(keys[i] as Value, delta.rows[i] as readonly Value[]))
          throw new SluiceError('INTERNAL_ERROR', `view arrangement n${this.nodeId}: two rows for one key`);
        this.rowCount++;
      }
      this.lastRetractions = retractions;
    } else {
      const ms = this.multiset as CountedArrangement;
      for (let i = 0; i < delta.rows.length; i++)
        ms.add(delta.rows[i] as readonly Value[], delta.weights[i] as number);
      this.rowCount = ms.total;
    }
    if (this.index !== null) this.index.apply(delta.rows, delta.weights);
    else if (this.building !== null && delta.weights.length > 0) {
      this.building.queue.push({ rows: delta.rows.slice(), weights: delta.weights.slice() });
    }
    return delta;
  }

  private absentRetraction(): never {
    throw new SluiceError('INTERNAL_ERROR', `view arrangement n${this.nodeId}: retraction of an absent key`);
  }

  /**
   * The rows in the view's order (its key, else all columns), as an index kept up to date from
   * here on. The first call captures the rows and starts sorting them; each call sorts until
   * `deadline` (performance.now() ms) and returns null while unfinished, so a large view is indexed
   * in slices between which steps go on (their deltas are applied once the build finishes).
   */
  orderedIndex(deadline: number): OrderedIndex | null {
    if (this.index !== null) return this.index;
    if (this.building === null) {
      const order =
        this.key !== null && this.key.length > 0 ? this.key : Array.from({ length: this.width }, (_, i) => i);
      let rows: (readonly Value[])[];
      let counts: number[] | null = null;
      if (this.multiset !== null) {
        rows = [];
        counts = [];
        for (const e of this.multiset.entries()) {
          rows.push(e.row);
          counts.push(e.count);
        }
      } else rows = this.keyed !== null ? Array.from(this.keyed.values()) : Array.from(this.entriesRows());
      this.building = { build: new IndexBuild(order, this.rowBytes(), rows, counts), queue: [] };
    }
    const { build, queue } = this.building;
    if (!build.work(deadline)) return null;
    for (const q of queue) build.index.apply(q.rows, q.weights);
    this.index = build.index;
    this.building = null;
    return this.index;
  }

  /** The current rows, captured for reading in slices while later epochs apply (references only). */
  capture(): RowCapture {
    if (this.multiset !== null) {
      const rows: (readonly Value[])[] = [];
      const counts: number[] = [];
      for (const e of this.multiset.entries()) {
        rows.push(e.row);
        counts.push(e.count);
      }
      return new CapturedArray(rows, counts, true);
    }
    const rows = this.keyed !== null ? Array.from(this.keyed.values()) : Array.from(this.entriesRows());
    return new CapturedArray(rows, null, true);
  }

  /** Forgets the ordered index (it is rebuilt on the next read). */
  dropIndex(): void {
    this.index = null;
    this.building = null;
  }

  private *entriesRows(): Generator<readonly Value[]> {
    for (const [row] of this.entries()) yield row;
  }

  private rowBytes(): number {
    return 32 + this.width * 16;
  }

  trackChanges(on: boolean): void {
    this.keyed?.trackChanges(on);
    this.multiset?.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    if (this.multiset !== null) return this.multiset.takeDelta(full);
    if (this.keyed !== null) return this.keyed.takeDelta(full);
    // Borrowed state: the Reduce checkpoints it. An empty part that always replaces (as before).
    const replaceAll = full || !this.borrowedExported;
    this.borrowedExported = true;
    return { replaceAll, upserts: [], deletes: [] };
  }

  loadState(values: Iterable<unknown>): void {
    this.dropIndex();
    this.borrowedExported = true;
    if (this.multiset !== null) {
      this.multiset.load(values);
      this.rowCount = this.multiset.total;
      return;
    }
    if (this.keyed === null) {
      this.rowCount = 0;
      for (const _ of (this.shared as SharedRows).outputRows()) this.rowCount++;
      return;
    }
    this.keyed.load(values, (row) => this.keyOf(row));
    this.rowCount = this.keyed.size;
  }

  /** The changelog entries of the last step's delta (over its rows: no object per change). */
  lastChanges(): ChangeList {
    const delta = this.lastDelta;
    if (this.key === null) return ChangeList.ofWeighted(delta.rows, delta.weights);
    const keys = this.lastKeys;
    if (!this.lastKeysValid) {
      // Borrowed state: the step read no key.
      keys.length = 0;
      let retractions = 0;
      for (let i = 0; i < delta.rows.length; i++) {
        keys.push(this.keyOf(delta.rows[i] as readonly Value[]));
        if ((delta.weights[i] as number) < 0) retractions++;
      }
      this.lastRetractions = retractions;
      this.lastKeysValid = true;
    }
    return pairKeyedChanges(delta, keys, this.lastRetractions, this.work);
  }

  /** Current rows with their multiplicities. */
  *entries(): Generator<readonly [readonly Value[], number]> {
    if (this.shared !== null) for (const row of this.shared.outputRows()) yield [row, 1];
    else if (this.keyed !== null) for (const row of this.keyed.values()) yield [row, 1];
    else for (const e of (this.multiset as CountedArrangement).entries()) yield [e.row, e.count];
  }

  /** The current contents as a Z-set, to backfill a view defined over this one. */
  contents(): ZBatch {
    return batchOfEntries(this.entries(), true);
  }

  size(): number {
    return this.rowCount;
  }

  stateSize(): number {
    const index = this.index === null ? 0 : this.index.size * 16;
    if (this.shared !== null) return index;
    return this.rowCount * this.rowBytes() + index;
  }
}
