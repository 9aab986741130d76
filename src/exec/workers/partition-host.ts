// One partition of each partitioned Reduce (partitioned-reduce.ts) — a plain ReduceOp holding the
// groups whose id hashes to the partition — and the requests that drive it. A worker thread hosts one
// (partition-worker.ts); the main thread hosts partition 0 itself (partition-pool.ts), so with N
// workers N − 1 threads and the main thread step the partitions side by side.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { singleKey } from '../../common/values.ts';
import type { ColumnSpec } from '../../ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../../ivm/operator.ts';
import { ReduceOp } from '../../ivm/ops/reduce-op.ts';
import { ColumnBatch } from '../../ivm/zset.ts';
import type { PartitionLayout } from './partition-eligibility.ts';
import { PartitionFolds } from './partition-fold.ts';
import { groupId } from './partition-hash.ts';
import {
  SHARED_REPLY_MAX_COLUMNS,
  encodeColumn,
  transferables,
  type FoldEntries,
  type FromWorker,
  type StepBuffers,
  type StepReply,
  type ToWorker,
  type WireColumn,
  type WireRowError,
} from './partition-protocol.ts';

interface Hosted {
  readonly op: ReduceOp;
  readonly layout: PartitionLayout;
  readonly keyCount: number;
  readonly width: number;
  readonly partition: number;
  /** The Reduce's shared input buffers, as last handed over. */
  bufs: StepBuffers | null;
  /** By input column (then the weights): where a step gathers the partition's rows. */
  readonly scratch: (Float64Array | undefined)[];
  /** The downstream COUNT(*) Reduces its changes are folded for (partition-fold.ts). */
  readonly folds: PartitionFolds;
  /** Where a step lists the partition's rows of the batch (kept between steps). */
  rows: Int32Array;
}

/** An answer and the buffers to transfer with it (a thread's reply; the main thread ignores them). */
export interface Answer {
  readonly message: FromWorker;
  readonly transfer: ArrayBuffer[];
}

/** A partition's step before it is answered: the Reduce's changes, each tagged with its group's first
 * row in the batch (`touch`), and its row errors. */
export interface RawStep {
  readonly x: Hosted;
  readonly cols: readonly (readonly Value[])[];
  readonly weights: readonly number[];
  /** The sum of the weights (the Reduce's own count when it kept one). */
  readonly net: number;
  readonly touch: Int32Array;
  readonly errors: readonly WireRowError[];
  readonly folds: FoldEntries;
}

const DONE: Answer = { message: { ok: true, done: true }, transfer: [] };

export class PartitionHost {
  private readonly hosted = new Map<number, Hosted>();

  /**
   * @param onExit what the test request `exit` does: a thread ends (as one that crashed would); the
   * main thread's partition refuses it.
   */
  constructor(private readonly onExit: () => never) {}

  /** A step whose fields came in the request words: every column read is in the shared buffers. */
  sharedStep(h: number, batch: number, count: number, nullMask: number): RawStep {
    const x = this.hostedOf(h);
    const bufs = x.bufs;
    if (bufs === null) throw new SluiceError('INTERNAL_ERROR', 'a partition step came before its buffers');
    const cols: (WireColumn | null)[] = [];
    for (const c of x.layout.usedColumns) {
      while (cols.length < c) cols.push(null);
      cols.push({
        f64: bufs.f64[c] as Float64Array,
        nulls: (nullMask & (1 << c)) !== 0 ? (bufs.nulls[c] as Uint8Array) : null,
      });
    }
    return stepPartition(x, cols, bufs.weights, pickRows(x, bufs.part, batch, count));
  }

  /** A step that came as a message (new buffers, or a column of values). */
  step(message: Extract<ToWorker, { t: 'step' }>): RawStep {
    const x = this.hostedOf(message.h);
    if (message.bufs !== null) x.bufs = message.bufs;
    const bufs = x.bufs;
    if (bufs === null) throw new SluiceError('INTERNAL_ERROR', 'a partition step came before its buffers');
    const cols = message.cols.map((c, i): WireColumn | null =>
      c === null
        ? null
        : 'values' in c
          ? c
          : { f64: bufs.f64[i] as Float64Array, nulls: c.nulls ? (bufs.nulls[i] as Uint8Array) : null },
    );
    return stepPartition(x, cols, bufs.weights, pickRows(x, bufs.part, message.batch, message.count));
  }

  private hostedOf(h: number): Hosted {
    const x = this.hosted.get(h);
    if (x === undefined) throw new SluiceError('INTERNAL_ERROR', `partition worker holds no reduce ${h}`);
    return x;
  }

  /** Serves a request (a failure throws: the caller answers it as an error). */
  handle(message: ToWorker): Answer {
    switch (message.t) {
      case 'open': {
        const { node, input, layout } = message;
        const fused = node.fused as NonNullable<typeof node.fused>;
        const op = new ReduceOp(node, fused.columns, {
          filter: fused.filter,
          project: fused.project,
          inputColumns: input,
        });
        this.hosted.set(message.h, {
          op,
          layout,
          keyCount: node.keyCount,
          width: input.length,
          partition: message.partition,
          bufs: null,
          scratch: [],
          folds: new PartitionFolds(),
          rows: new Int32Array(0),
        });
        return DONE;
      }
      case 'folds':
        this.hostedOf(message.h).folds.set(message.folds);
        return DONE;
      case 'step':
        return answerStep(this.step(message));
      case 'track':
        this.hostedOf(message.h).op.trackChanges(message.on);
        return DONE;
      case 'take': {
        const delta = this.hostedOf(message.h).op.takeStateDelta(message.full);
        return { message: { ok: true, delta: { ...delta, upserts: [...delta.upserts] } }, transfer: [] };
      }
      case 'load':
        this.hostedOf(message.h).op.loadState(message.values);
        return DONE;
      case 'rows':
        return { message: { ok: true, rows: [...this.hostedOf(message.h).op.outputRows()] }, transfer: [] };
      case 'size': {
        const { op } = this.hostedOf(message.h);
        return {
          message: { ok: true, size: { bytes: op.stateSize(), groups: op.groupCount() } },
          transfer: [],
        };
      }
      case 'close':
        this.hosted.delete(message.h);
        return DONE;
      case 'exit':
        return this.onExit();
    }
  }
}

/**
 * Steps the partition on its rows of the batch (`rows`, batch indexes the main thread routed to it by
 * the hash of their group id), and tags each change with the batch index of its group's first row:
 * the single Reduce emits its changes in that order, so the main thread merges the partitions'
 * changes by it.
 */
function stepPartition(
  x: Hosted,
  wire: readonly (WireColumn | null)[],
  weights: Float64Array,
  rows: Int32Array,
): RawStep {
  const m = rows.length;
  const { keyColumns, usedColumns } = x.layout;
  const keyCount = x.keyCount;
  // The partition's rows, gathered column by column: numbers into a Float64Array (the Reduce reads
  // a column by index, and a typed one makes no garbage), anything else into an array.
  const cols: (Value[] | Float64Array)[] = [];
  for (let c = 0; c < x.width; c++) cols.push(EMPTY);
  for (let u = 0; u < usedColumns.length; u++) {
    const c = usedColumns[u] as number;
    cols[c] = gather(wire[c] as WireColumn, rows, scratchOf(x, c, m));
  }
  const localWeights = scratchOf(x, x.width, m).subarray(0, m);
  for (let j = 0; j < m; j++) localWeights[j] = weights[rows[j] as number] as number;
  // Each group's first row in the batch, by id (rows ascend, so the first seen is the first): built
  // only when needed — several keys, or row errors to place.
  let firstMap: Map<Value, number> | null = null;
  const firstRows = (): Map<Value, number> => {
    if (firstMap !== null) return firstMap;
    firstMap = new Map<Value, number>();
    const key = new Array<Value>(keyCount);
    for (let j = 0; j < m; j++) {
      for (let k = 0; k < keyCount; k++)
        key[k] = (cols[keyColumns[k] as number] as Value[] | Float64Array)[j] as Value;
      const id = groupId(key);
      if (!firstMap.has(id)) firstMap.set(id, rows[j] as number);
    }
    return firstMap;
  };
  const touchOf = (row: readonly Value[]): number => {
    const t = firstRows().get(groupId(row.slice(0, keyCount)));
    if (t === undefined) throw notGiven();
    return t;
  };
  const errors: WireRowError[] = [];
  const reports: { error: unknown; row: readonly Value[]; weight: number }[] = [];
  const sink: RowErrorSink = {
    report(error: unknown, row: readonly Value[], _columns: readonly ColumnSpec[], weight: number): void {
      reports.push({ error, row: [...row], weight });
    },
  };
  // The Reduce reads its input columns by index only: a typed column stands in for an array.
  const batch = new ColumnBatch(cols as Value[][], localWeights as unknown as number[]);
  const out = x.op.step([batch], sink) as ColumnBatch;
  const outCols = out.cols as readonly (readonly Value[])[];
  for (const r of reports)
    errors.push({
      code: r.error instanceof SluiceError ? r.error.code : 'INTERNAL_ERROR',
      message: r.error instanceof Error ? r.error.message : String(r.error),
      row: r.row,
      weight: r.weight,
      touch: touchOf(r.row),
    });
  const n = out.weights.length;
  const touch = new Int32Array(n);
  if (keyCount === 1) {
    // The changes come in the order of their groups' first rows: each group's first row is the next
    // row of its id after the previous group's, so one forward walk over the rows finds them all.
    const k0 = outCols[0] as Value[];
    const col = cols[keyColumns[0] as number] as Value[] | Float64Array;
    let q = -1;
    let prev: Value = null;
    for (let j = 0; j < n; j++) {
      const id = singleKey(k0[j] as Value);
      if (j === 0 || !sameId(id, prev)) {
        q++;
        while (q < m && !sameId(singleKey(col[q] as Value), id)) q++;
        if (q === m) throw notGiven();
        prev = id;
      }
      touch[j] = rows[q] as number;
    }
  } else {
    const outKey = new Array<Value>(keyCount);
    for (let j = 0; j < n; j++) {
      for (let k = 0; k < keyCount; k++) outKey[k] = (outCols[k] as Value[])[j] as Value;
      touch[j] = touchOf(outKey);
    }
  }
  const folds = x.folds.fold(outCols, out.weights, n);
  const net = x.op.netWeightOf(out) ?? sumOf(out.weights);
  return { x, cols: outCols, weights: out.weights, net, touch, errors, folds };
}

/** A step's answer as a message (its columns transferred). */
export function answerStep(raw: RawStep): Answer {
  const n = raw.weights.length;
  const weights = new Float64Array(n);
  for (let j = 0; j < n; j++) weights[j] = raw.weights[j] as number;
  const cols = raw.cols.map((col) => encodeColumn(n, (j) => col[j] as Value, false));
  const { count, at, weights: foldWeights } = raw.folds;
  const folds: FoldEntries = {
    count,
    at: Array.from({ length: 2 * count }, (_, i) => at[i] as number),
    weights: Array.from({ length: count }, (_, i) => foldWeights[i] as number),
  };
  const step: StepReply = { weights, net: raw.net, touch: raw.touch, cols, errors: raw.errors, folds };
  return { message: { ok: true, step }, transfer: transferables(cols) };
}

/**
 * Writes a step's changes into the partition's reply buffers when they fit (every value a number or
 * NULL, no row error, room enough): their count and null mask, else null (answer with a message).
 */
export function writeReply(
  raw: RawStep,
): { count: number; nullMask: number; folds: number; net: number } | null {
  const bufs = raw.x.bufs;
  const reply = bufs?.replies[raw.x.partition];
  const n = raw.weights.length;
  if (reply === undefined || raw.errors.length > 0 || n > reply.weights.length) return null;
  // The net weight goes in an Int32 request word.
  if ((raw.net | 0) !== raw.net) return null;
  const folds = raw.folds;
  if (folds.count > reply.foldWeights.length) return null;
  if (raw.cols.length > SHARED_REPLY_MAX_COLUMNS || raw.cols.length > reply.f64.length) return null;
  let nullMask = 0;
  for (let c = 0; c < raw.cols.length; c++) {
    const col = raw.cols[c] as readonly Value[];
    const f64 = reply.f64[c] as Float64Array;
    const nulls = reply.nulls[c] as Uint8Array;
    let hasNull = false;
    for (let j = 0; j < n; j++) {
      const v = col[j] as Value;
      if (typeof v === 'number') f64[j] = v;
      else if (v === null) {
        if (!hasNull) {
          nulls.fill(0, 0, n);
          hasNull = true;
        }
        nulls[j] = 1;
      } else return null;
    }
    if (hasNull) nullMask |= 1 << c;
  }
  const weights = reply.weights;
  for (let j = 0; j < n; j++) weights[j] = raw.weights[j] as number;
  reply.touch.set(raw.touch);
  for (let e = 0; e < 2 * folds.count; e++) reply.foldAt[e] = folds.at[e] as number;
  for (let e = 0; e < folds.count; e++) reply.foldWeights[e] = folds.weights[e] as number;
  return { count: n, nullMask, folds: folds.count, net: raw.net };
}

const EMPTY: Value[] = [];

function sumOf(weights: readonly number[]): number {
  let sum = 0;
  for (let j = 0; j < weights.length; j++) sum += weights[j] as number;
  return sum;
}

/**
 * The batch indexes of the partition's rows, ascending: the rows of the first `batch` whose routed
 * partition is this one (`count` of them, as the main thread counted while routing).
 */
function pickRows(x: Hosted, part: Uint8Array, batch: number, count: number): Int32Array {
  // Every row is written at the next place and kept (the place advanced) only when it is this
  // partition's: no branch, since with hashed keys that is a coin toss a branch mispredicts half the
  // time (the loop took 6× as long). So the list has room for the whole batch.
  if (x.rows.length < batch) x.rows = new Int32Array(Math.max(batch, 2 * x.rows.length, 64));
  const rows = x.rows;
  const mine = x.partition;
  let m = 0;
  for (let i = 0; i < batch; i++) {
    rows[m] = i;
    m += +(part[i] === mine);
  }
  if (m !== count)
    throw new SluiceError('INTERNAL_ERROR', `partition ${mine} found ${m} of its ${count} rows in the batch`);
  return rows.subarray(0, m);
}

/** Group ids as a Map compares them (SameValueZero: 0 and -0 one id, NaN one id). */
function sameId(a: Value, b: Value): boolean {
  return a === b || (a !== a && b !== b);
}

function notGiven(): SluiceError {
  return new SluiceError('INTERNAL_ERROR', 'a partition changed a group it was not given');
}

/** The values of `rows` of a wire column. */
/**
 * Column c's gather scratch (c = width: the weights), grown to hold `m` rows: the Reduce reads its
 * input only while it steps, so the partition's rows go into the same memory every step (no garbage).
 */
function scratchOf(x: Hosted, c: number, m: number): Float64Array {
  const s = x.scratch[c];
  if (s !== undefined && s.length >= m) return s;
  const grown = new Float64Array(Math.max(m, 2 * (s?.length ?? 0), 64));
  x.scratch[c] = grown;
  return grown;
}

function gather(col: WireColumn, rows: Int32Array, scratch: Float64Array): Value[] | Float64Array {
  const m = rows.length;
  if ('values' in col) {
    const out = new Array<Value>(m);
    for (let j = 0; j < m; j++) out[j] = col.values[rows[j] as number] as Value;
    return out;
  }
  const f64 = col.f64;
  const nulls = col.nulls;
  if (nulls === null) {
    const out = scratch.subarray(0, m);
    for (let j = 0; j < m; j++) out[j] = f64[rows[j] as number] as number;
    return out;
  }
  const out = new Array<Value>(m);
  for (let j = 0; j < m; j++) {
    const i = rows[j] as number;
    out[j] = nulls[i] === 1 ? null : (f64[i] as number);
  }
  return out;
}
