// A Reduce run in hash partitions on the engine's worker threads (partition-pool.ts), standing in for
// the ReduceOp of the same node: each thread holds the groups whose id hashes to its partition. A
// step hands every thread the batch's key and argument columns (shared memory, no copy); each steps
// its partition on its own rows and tags each change with the batch index of its group's first row;
// the changes are merged by that index — the order the single Reduce emits them in (first touch) — so
// downstream operators, the changelog and checkpoints are the same for any number of partitions.
// Its checkpoint entries are the single Reduce's (same state id, one entry per group, same form),
// routed to the owning partition on load: a restart with another worker count re-partitions them.
import { SluiceError, knownErrorCode } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { singleKey } from '../../common/values.ts';
import type { ColumnSpec } from '../../ivm/dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../../ivm/operator.ts';
import type { StateDelta, Stateful } from '../../ivm/state.ts';
import { ColumnBatch, type ZBatch } from '../../ivm/zset.ts';
import { MergeScratch, PartitionBatch } from './partition-batch.ts';
import type { PartitionLayout } from './partition-eligibility.ts';
import { groupId, hashNumber, hashPartition, partitionOf } from './partition-hash.ts';
import type { PartitionPool } from './partition-pool.ts';
import {
  columnValue,
  LOCAL_PARTITION,
  type FoldSpec,
  SHARED_STEP_MAX_COLUMN,
  type FromWorker,
  type PartChanges,
  type ReduceNode,
  type ReplyBuffers,
  type Request,
  type StepBuffers,
  type StepColumn,
  type StepReply,
  type WireColumn,
} from './partition-protocol.ts';

export class PartitionedReduce implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  private readonly handle: number;
  private readonly keyCount: number;
  private readonly keyColumns: readonly ColumnSpec[];
  private readonly width: number;
  private closed = false;
  /** The shared input buffers (allocated on the first step), their capacity in rows, and which
   * allocation (generation) each thread was last handed. */
  private buffers: StepBuffers | null = null;
  private capacity = 0;
  private generation = 0;
  private readonly sentGeneration: Int32Array;
  /** The merge's scratch (partition-batch.ts), kept between steps. */
  private readonly scratch = new MergeScratch();
  /** The downstream COUNT(*) Reduces each partition folds its changes for (setFolds). */
  private folds: readonly FoldSpec[] = [];
  private foldsText = '[]';
  /** The last step's output: its columns are read from buffers the next step overwrites. */
  private last: PartitionBatch | null = null;

  constructor(
    node: ReduceNode,
    input: readonly ColumnSpec[],
    private readonly layout: PartitionLayout,
    private readonly pool: PartitionPool,
  ) {
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.keyCount = node.keyCount;
    this.keyColumns = node.columns.slice(0, node.keyCount);
    this.width = node.columns.length;
    this.handle = pool.handle();
    this.sentGeneration = new Int32Array(pool.partitions);
    const h = this.handle;
    pool.callEach(
      Array.from({ length: pool.partitions }, (_, partition) => ({
        t: 'open' as const,
        h,
        node,
        input,
        layout,
        partition,
        partitions: pool.partitions,
      })),
    );
  }

  /**
   * The downstream COUNT(*) Reduces (their group keys over this Reduce's output columns) whose input
   * the partitions fold (partition-fold.ts); fold f of a step is read by `PartitionBatch.fold(f)`.
   */
  setFolds(folds: readonly FoldSpec[]): void {
    const text = JSON.stringify(folds);
    if (this.closed || text === this.foldsText) return;
    this.foldsText = text;
    this.folds = folds;
    this.pool.callAll({ t: 'folds', h: this.handle, folds });
    // The reply buffers get room for the fold entries: reallocated (and handed over) at the next step.
    this.buffers = null;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    this.last?.expire();
    this.last = null;
    const input = inputs[0] as ZBatch;
    const n = input.weights.length;
    if (n === 0) return new ColumnBatch(emptyColumns(this.width), []);
    const bufs = this.buffersFor(n);
    const cols: (StepColumn | null)[] = [];
    const wire: (WireColumn | null)[] = [];
    const inCols = input.cols;
    const P = this.pool.partitions;
    const counts = new Int32Array(P);
    // One key column of numbers (the common case) is routed while it is filled: one pass, not two.
    const routedKey = this.keyCount === 1 ? (this.layout.keyColumns[0] as number) : -1;
    let routed = false;
    for (const c of this.layout.usedColumns) {
      while (cols.length < c) {
        cols.push(null);
        wire.push(null);
      }
      // A columnar batch's `rows` is built on first read: read only when it has no columns.
      const values = inCols !== undefined ? (inCols[c] as readonly Value[]) : columnOf(input.rows, c, n);
      const f64 = bufs.f64[c] as Float64Array;
      let col: StepColumn | null = null;
      if (c === routedKey && fillKeyRouted(n, values, f64, bufs.part, counts, P)) {
        col = NUMBERS;
        routed = true;
      }
      col ??= fillColumn(n, values, f64, bufs.nulls[c] as Uint8Array);
      cols.push(col);
      wire.push(
        'values' in col
          ? col
          : { f64: bufs.f64[c] as Float64Array, nulls: col.nulls ? (bufs.nulls[c] as Uint8Array) : null },
      );
    }
    const weights = bufs.weights;
    for (let i = 0; i < n; i++) weights[i] = input.weights[i] as number;
    // Each row goes to the partition of its group, hashed here once into the shared routing; each
    // partition picks its rows out of it itself, side by side (partition-host.ts).
    if (!routed) this.rowPartitions(n, wire, counts, bufs.part);
    const h = this.handle;
    // The columns' null flags as a mask (-1: a column of values, or past what a mask holds).
    let nullMask = 0;
    for (let c = 0; c < cols.length; c++) {
      const col = cols[c];
      if (col === null || col === undefined) continue;
      if ('values' in col || c > SHARED_STEP_MAX_COLUMN) nullMask = -1;
      else if (col.nulls && nullMask >= 0) nullMask |= 1 << c;
    }
    const messages: (Request | null)[] = [];
    for (let p = 0; p < P; p++) {
      const count = counts[p] as number;
      if (count === 0) {
        messages.push(null);
        continue;
      }
      // A thread that has not seen the current buffers gets them with this step (once per growth), as
      // a message; else, when every column is in the buffers, the step goes in its request words.
      const fresh = this.sentGeneration[p] !== this.generation;
      this.sentGeneration[p] = this.generation;
      messages.push(
        !fresh && nullMask >= 0
          ? { t: 'shared-step', h, batch: n, count, nullMask }
          : { t: 'step', h, bufs: fresh ? bufs : null, cols, batch: n, count },
      );
    }
    const answers = this.pool.callEach(messages);
    const parts: PartChanges[] = [];
    for (let p = 0; p < P; p++) parts.push(partChanges(answers[p] ?? null, bufs.replies[p] as ReplyBuffers));
    return this.merge(parts, n, errors);
  }

  /** The shared input buffers, reallocated (doubled past `n`) when a batch of `n` rows outgrows them. */
  private buffersFor(n: number): StepBuffers {
    if (this.buffers !== null && this.capacity >= n) return this.buffers;
    let capacity = Math.max(this.capacity, INITIAL_CAPACITY);
    while (capacity < n) capacity *= 2;
    const f64: (Float64Array | null)[] = [];
    const nulls: (Uint8Array | null)[] = [];
    for (const c of this.layout.usedColumns) {
      while (f64.length < c) {
        f64.push(null);
        nulls.push(null);
      }
      f64.push(new Float64Array(new SharedArrayBuffer(8 * capacity)));
      nulls.push(new Uint8Array(new SharedArrayBuffer(capacity)));
    }
    // A partition's step changes at most two rows a group (its old and new row), one group a row.
    const replies: ReplyBuffers[] = [];
    for (let p = 0; p < this.pool.partitions; p++) {
      const room = p === LOCAL_PARTITION ? 0 : 2 * capacity; // the main thread's changes stay its own
      replies.push({
        weights: new Float64Array(new SharedArrayBuffer(8 * room)),
        touch: new Int32Array(new SharedArrayBuffer(4 * room)),
        f64: Array.from({ length: this.width }, () => new Float64Array(new SharedArrayBuffer(8 * room))),
        nulls: Array.from({ length: this.width }, () => new Uint8Array(new SharedArrayBuffer(room))),
        // A fold has at most one entry per change.
        foldAt: new Int32Array(new SharedArrayBuffer(8 * room * this.folds.length)),
        foldWeights: new Float64Array(new SharedArrayBuffer(8 * room * this.folds.length)),
      });
    }
    this.buffers = {
      f64,
      nulls,
      weights: new Float64Array(new SharedArrayBuffer(8 * capacity)),
      part: new Uint8Array(new SharedArrayBuffer(capacity)),
      replies,
    };
    this.capacity = capacity;
    this.generation++;
    return this.buffers;
  }

  /** How many steps' changes were merged (for tests: see PartitionBatch). */
  get mergedSteps(): number {
    return this.scratch.merges;
  }

  /** The buffers' row capacity (for tests: they grow with the largest batch). */
  get bufferCapacity(): number {
    return this.capacity;
  }

  /**
   * The partition of each row's group, into `part` (shared with the threads), counted into `counts`:
   * for keys `fillKeyRouted` did not route while filling (several columns, a NULL, a text value).
   */
  private rowPartitions(
    n: number,
    cols: readonly (WireColumn | null)[],
    counts: Int32Array,
    part: Uint8Array,
  ): void {
    const P = this.pool.partitions;
    const keyColumns = this.layout.keyColumns;
    const key0 = cols[keyColumns[0] as number] as WireColumn;
    if (this.keyCount === 1) {
      for (let i = 0; i < n; i++) part[i] = partitionOf(singleKey(columnValue(key0, i)), P);
    } else {
      const key = new Array<Value>(this.keyCount);
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < key.length; k++)
          key[k] = columnValue(cols[keyColumns[k] as number] as WireColumn, i);
        part[i] = partitionOf(groupId(key), P);
      }
    }
    for (let i = 0; i < n; i++) counts[part[i] as number]!++;
  }

  /**
   * The partitions' changes as one batch, merged by their groups' first rows when read
   * (partition-batch.ts); their row errors reported now, as the single Reduce reports them: in the
   * order of their groups' first rows.
   */
  private merge(parts: readonly PartChanges[], n: number, errors: RowErrorSink): ZBatch {
    const reported = parts.flatMap((r) => r.errors);
    if (reported.length > 0) {
      // Stable: one group's reports keep their order (they all come from one partition).
      reported.sort((a, b) => a.touch - b.touch);
      for (const e of reported)
        errors.report(new SluiceError(knownErrorCode(e.code), e.message), e.row, this.keyColumns, e.weight);
    }
    this.last = new PartitionBatch(this, parts, n, this.width, this.scratch);
    return this.last;
  }

  /** For a view's Output borrowing these rows: the net weight of this Reduce's last step, unmerged. */
  netWeightOf(batch: ZBatch): number | null {
    return batch === this.last ? this.last.net : null;
  }

  trackChanges(on: boolean): void {
    this.pool.callAll({ t: 'track', h: this.handle, on });
  }

  takeStateDelta(full: boolean): StateDelta {
    const deltas = this.pool
      .callAll({ t: 'take', h: this.handle, full })
      .map((a) => (a as Extract<FromWorker, { delta: StateDelta }>).delta);
    return {
      replaceAll: deltas.some((d) => d.replaceAll),
      upserts: deltas.flatMap((d) => [...d.upserts]),
      deletes: deltas.flatMap((d) => [...d.deletes]),
    };
  }

  loadState(values: Iterable<unknown>): void {
    const parts: unknown[][] = Array.from({ length: this.pool.partitions }, () => []);
    for (const v of values) {
      const key = (v as { readonly k: readonly Value[] }).k;
      (parts[partitionOf(groupId(key), this.pool.partitions)] as unknown[]).push(v);
    }
    this.pool.callEach(parts.map((values) => ({ t: 'load' as const, h: this.handle, values })));
  }

  /** Current output rows, for a view whose arrangement is this Reduce's state (read off the threads). */
  *outputRows(): Generator<readonly Value[]> {
    const answers = this.pool.callAll({ t: 'rows', h: this.handle });
    for (const a of answers) yield* (a as Extract<FromWorker, { rows: unknown }>).rows;
  }

  private sizes(): { bytes: number; groups: number } {
    let bytes = 0;
    let groups = 0;
    for (const a of this.pool.callAll({ t: 'size', h: this.handle })) {
      const s = (a as Extract<FromWorker, { size: unknown }>).size;
      bytes += s.bytes;
      groups += s.groups;
    }
    return { bytes, groups };
  }

  stateSize(): number {
    return this.closed ? 0 : this.sizes().bytes;
  }

  groupCount(): number {
    return this.sizes().groups;
  }

  /** Frees the partitions' state in the threads (the view is dropped or replaced). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.pool.callAll({ t: 'close', h: this.handle });
    } catch {
      // The engine is closing: its threads end with their state.
    }
  }
}

/** The first capacity of a Reduce's shared input buffers, in rows (doubled as batches need). */
const INITIAL_CAPACITY = 64;

/** A filled column of numbers without a NULL. */
const NUMBERS: StepColumn = { nulls: false };

/** Column `c` of a batch given as rows. */
function columnOf(rows: readonly (readonly Value[])[], c: number, n: number): Value[] {
  const values = new Array<Value>(n);
  for (let i = 0; i < n; i++) values[i] = (rows[i] as readonly Value[])[c] as Value;
  return values;
}

/**
 * Writes a one-column key into the shared buffers and routes each row in the same pass (a number
 * is its own group id): true when every value is a number. At a NULL or any other value it stops
 * and answers false, with `counts` cleared: the caller fills and routes the column the general way.
 */
function fillKeyRouted(
  n: number,
  col: readonly Value[],
  f64: Float64Array,
  part: Uint8Array,
  counts: Int32Array,
  partitions: number,
): boolean {
  for (let i = 0; i < n; i++) {
    const v = col[i] as Value;
    if (typeof v !== 'number') {
      counts.fill(0);
      return false;
    }
    f64[i] = v;
    const p = hashPartition(hashNumber(v), partitions);
    part[i] = p;
    counts[p]!++;
  }
  return true;
}

/**
 * Writes a batch's column into the shared buffers when every value is a number or null, marking
 * each row's null flag; else its values.
 */
function fillColumn(n: number, col: readonly Value[], f64: Float64Array, nulls: Uint8Array): StepColumn {
  // The null flags are written only once a NULL is seen (then cleared up to it): a column without
  // one is read without its flags (a store a row saved on the serial path before the hand-over).
  let hasNull = false;
  for (let i = 0; i < n; i++) {
    const v = col[i] as Value;
    if (typeof v === 'number') {
      f64[i] = v;
      if (hasNull) nulls[i] = 0;
    } else if (v === null) {
      if (!hasNull) {
        nulls.fill(0, 0, i);
        hasNull = true;
      }
      nulls[i] = 1;
    } else return { values: col.slice(0, n) };
  }
  return { nulls: hasNull };
}

/** The changes of a partition that had no rows. */
const NO_CHANGES: PartChanges = {
  count: 0,
  weights: new Float64Array(0),
  net: 0,
  touch: new Int32Array(0),
  cols: [],
  nulls: [],
  errors: [],
  folds: { count: 0, at: [], weights: [] },
};

/** A partition's answer to a step as the merge reads it: its own, in its reply buffers, or a message. */
function partChanges(a: FromWorker | null, reply: ReplyBuffers): PartChanges {
  if (a === null) return NO_CHANGES;
  if ('local' in a) return a.local;
  if ('shared' in a) {
    const { count, nullMask, folds, net } = a.shared;
    return {
      count,
      weights: reply.weights,
      net,
      touch: reply.touch,
      cols: reply.f64,
      nulls: reply.f64.map((_, c) => ((nullMask & (1 << c)) !== 0 ? (reply.nulls[c] as Uint8Array) : null)),
      errors: [],
      folds: { count: folds, at: reply.foldAt, weights: reply.foldWeights },
    };
  }
  const step = (a as Extract<FromWorker, { step: StepReply }>).step;
  return {
    count: step.touch.length,
    weights: step.weights,
    net: step.net,
    touch: step.touch,
    cols: step.cols.map((w) => ('values' in w ? w.values : w.f64)),
    nulls: step.cols.map((w) => ('values' in w ? null : w.nulls)),
    errors: step.errors,
    folds: step.folds,
  };
}

function emptyColumns(width: number): Value[][] {
  return Array.from({ length: width }, () => []);
}
