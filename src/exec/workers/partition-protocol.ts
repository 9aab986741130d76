// The messages between the main thread's partition pool (partition-pool.ts) and a partition worker
// (partition-worker.ts), and how a column of values crosses: numbers as a Float64Array over shared
// or transferred memory (a copy-free hand-over), anything else as a plain array of primitives.
import type { Value } from '../../common/types.ts';
import type { ColumnSpec, DataflowNode } from '../../ivm/dataflow-plan.ts';
import type { StateDelta } from '../../ivm/state.ts';
import type { FoldSpec, PartitionLayout } from './partition-eligibility.ts';

export type { FoldSpec };

export type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

/** One column of a batch: numbers with a null mask, or the values themselves (primitives only). */
export type WireColumn =
  { readonly f64: Float64Array; readonly nulls: Uint8Array | null } | { readonly values: readonly Value[] };

/**
 * A partitioned Reduce's input buffers, shared with every thread and kept between steps (grown when a
 * batch outgrows them): one allocation and one hand-over per growth, not per step.
 */
export interface StepBuffers {
  /** By input column: its numbers and null mask (null for the columns the Reduce ignores). */
  readonly f64: readonly (Float64Array | null)[];
  readonly nulls: readonly (Uint8Array | null)[];
  readonly weights: Float64Array;
  /** Each batch row's partition (the hash of its group, routed by the main thread): each partition
   * picks its own rows out of it, side by side, instead of the main thread sorting them first. */
  readonly part: Uint8Array;
  /** By partition: where its thread writes a step's changes (room for two per input row). */
  readonly replies: readonly ReplyBuffers[];
}

/**
 * Where a thread writes a step's changes, shared with the main thread (which merges them from there):
 * no message, no copy out of the thread, no garbage. A step whose changes do not fit (a value that is
 * not a number or NULL, a row error) is answered with a message instead.
 */
export interface ReplyBuffers {
  readonly weights: Float64Array;
  /** The batch index of each change's group's first row. */
  readonly touch: Int32Array;
  /** By output column: its numbers and null flags. */
  readonly f64: readonly Float64Array[];
  readonly nulls: readonly Uint8Array[];
  /** The step's fold entries (see FoldEntries): their folds and rows, and their net weights. */
  readonly foldAt: Int32Array;
  readonly foldWeights: Float64Array;
}

/**
 * A partition's fold entries for one step, fold after fold: entry e is fold `at[2e]`'s group whose
 * first change (in this partition's order) is change `at[2e + 1]`, and `weights[e]` the net weight
 * of that group's changes. A fold whose key failed on some change (a row error) has one entry with
 * row -1: that fold is not available for the step (the downstream Reduce reads every change).
 */
export interface FoldEntries {
  readonly count: number;
  readonly at: ArrayLike<number>;
  readonly weights: ArrayLike<number>;
}

/** A column of a step: in the shared buffers (with or without its null mask), or its values. */
export type StepColumn = { readonly nulls: boolean } | { readonly values: readonly Value[] };

export type ToWorker =
  | {
      readonly t: 'open';
      readonly h: number;
      readonly node: ReduceNode;
      readonly input: readonly ColumnSpec[];
      readonly layout: PartitionLayout;
      readonly partition: number;
      readonly partitions: number;
    }
  | {
      readonly t: 'step';
      readonly h: number;
      /** The Reduce's input buffers when they were (re)allocated since its last step, else null. */
      readonly bufs: StepBuffers | null;
      /** By input column: how the batch's column is held (null for the columns the Reduce ignores). */
      readonly cols: readonly (StepColumn | null)[];
      /** The batch's row count, and how many of its rows are this partition's (in `bufs.part`). */
      readonly batch: number;
      readonly count: number;
    }
  | { readonly t: 'folds'; readonly h: number; readonly folds: readonly FoldSpec[] }
  | { readonly t: 'track'; readonly h: number; readonly on: boolean }
  | { readonly t: 'take'; readonly h: number; readonly full: boolean }
  | { readonly t: 'load'; readonly h: number; readonly values: readonly unknown[] }
  | { readonly t: 'rows'; readonly h: number }
  | { readonly t: 'size'; readonly h: number }
  | { readonly t: 'close'; readonly h: number }
  /** For tests: the thread ends, as one that crashed would. */
  | { readonly t: 'exit' };

/**
 * A step written into the thread's request words instead of posted (the common case: every column
 * the Reduce reads is numbers in the shared buffers the thread already holds). `nullMask` bit c: input
 * column c has NULLs (its null mask is read). Columns 0..30 only; the others go as a message.
 */
export interface SharedStep {
  readonly t: 'shared-step';
  readonly h: number;
  readonly batch: number;
  readonly count: number;
  readonly nullMask: number;
}

/** A request: posted, or in the request words. */
export type Request = ToWorker | SharedStep;

/**
 * The request words of one thread (REQ_WIDTH Int32 slots each, in one shared array): the main thread
 * writes a request's fields, then bumps REQ_SEQ and notifies; the thread waits on REQ_SEQ. REQ_KIND:
 * KIND_MESSAGE (read the posted message off the request port) or KIND_STEP (a SharedStep's fields).
 */
export const REQ_WIDTH = 10;
export const REQ_SEQ = 0;
export const REQ_KIND = 1;
export const REQ_H = 2;
export const REQ_BATCH = 3;
export const REQ_COUNT = 4;
export const REQ_NULLS = 5;
/** A step answered in the reply buffers (flag SHARED_ANSWER): its number of changes, and bit c set
 * when output column c has NULLs. */
export const REP_COUNT = 6;
export const REP_NULLS = 7;
/** A step answered in the reply buffers: its number of fold entries. */
export const REP_FOLDS = 8;
/** A step answered in the reply buffers: the sum of its changes' weights (an Output counts its rows
 * by it without reading the merged weights). */
export const REP_NET = 9;
export const KIND_MESSAGE = 0;
export const KIND_STEP = 1;
/** The highest input column index a SharedStep can describe (its null mask is one Int32). */
export const SHARED_STEP_MAX_COLUMN = 30;

/** The partition the main thread serves itself (partition-pool.ts): it has no thread. */
export const LOCAL_PARTITION = 0;

/** A thread's flag: 0 while a request is out, ANSWERED when its answer is on the reply port, ENDED
 * once the thread has ended (set by its exit handler: no answer will come). */
export const ANSWERED = 1;
export const ENDED = 2;
/** The step's changes are in the thread's reply buffers (REP_COUNT, REP_NULLS), nothing on the port. */
export const SHARED_ANSWER = 3;
/** The most output columns a reply in the shared buffers can have (its null mask is one Int32). */
export const SHARED_REPLY_MAX_COLUMNS = 31;

/** A row error the partition's Reduce reported, with its group's first row in the batch. */
export interface WireRowError {
  readonly code: string;
  readonly message: string;
  readonly row: readonly Value[];
  readonly weight: number;
  readonly touch: number;
}

/** A partition's step: its changes, each with the batch index of its group's first row. */
export interface StepReply {
  readonly weights: Float64Array;
  /** The sum of the weights. */
  readonly net: number;
  readonly touch: Int32Array;
  readonly cols: readonly WireColumn[];
  readonly errors: readonly WireRowError[];
  readonly folds: FoldEntries;
}

/** A partition's step in the form the merge reads: columns of numbers or values, maybe null flags. */
export interface PartChanges {
  readonly count: number;
  readonly weights: ArrayLike<number>;
  /** The sum of the weights. */
  readonly net: number;
  readonly touch: Int32Array;
  readonly cols: readonly (Float64Array | readonly Value[])[];
  /** By column: its null flags (1: NULL), or null when the column holds none (or holds values). */
  readonly nulls: readonly (Uint8Array | null)[];
  readonly errors: readonly WireRowError[];
  readonly folds: FoldEntries;
}

export type FromWorker =
  | { readonly ok: true; readonly step: StepReply }
  /** A step answered in the reply buffers. */
  | {
      readonly ok: true;
      readonly shared: {
        readonly count: number;
        readonly nullMask: number;
        readonly folds: number;
        readonly net: number;
      };
    }
  /** The main thread's own partition's step (never crosses a thread). */
  | { readonly ok: true; readonly local: PartChanges }
  | { readonly ok: true; readonly delta: StateDelta }
  | { readonly ok: true; readonly rows: readonly (readonly Value[])[] }
  | { readonly ok: true; readonly size: { readonly bytes: number; readonly groups: number } }
  | { readonly ok: true; readonly done: true }
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * Encodes `n` values (`get(i)`): a Float64Array (and a null mask when a value is null) when every
 * value is a number or null, else the values. `shared`: over a SharedArrayBuffer, which every worker
 * reads without a copy (an input batch); else over an ArrayBuffer to transfer (a reply).
 */
export function encodeColumn(n: number, get: (i: number) => Value, shared: boolean): WireColumn {
  const buffer = (bytes: number): ArrayBufferLike =>
    shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  const f64 = new Float64Array(buffer(8 * n));
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const v = get(i);
    if (typeof v === 'number') f64[i] = v;
    else if (v === null) {
      nulls ??= new Uint8Array(buffer(n));
      nulls[i] = 1;
    } else {
      const values = new Array<Value>(n);
      for (let j = 0; j < n; j++) values[j] = get(j);
      return { values };
    }
  }
  return { f64, nulls };
}

/** The value at `i` of a wire column. */
export function columnValue(col: WireColumn, i: number): Value {
  if ('values' in col) return col.values[i] as Value;
  return col.nulls !== null && col.nulls[i] === 1 ? null : (col.f64[i] as number);
}

/** The buffers to transfer with a reply's columns. */
export function transferables(cols: readonly WireColumn[]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const c of cols) {
    if ('values' in c) continue;
    if (c.f64.buffer instanceof ArrayBuffer) out.push(c.f64.buffer);
    if (c.nulls !== null && c.nulls.buffer instanceof ArrayBuffer) out.push(c.nulls.buffer);
  }
  return out;
}
