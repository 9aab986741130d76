// A partition worker thread: it hosts one partition of each partitioned Reduce (partitioned-reduce.ts)
// — a plain ReduceOp holding the groups whose id hashes to its partition — and steps it on the rows
// of each batch that belong to it. It waits for requests on its shared request words (Atomics.wait,
// never returning to its event loop: no message dispatch per step); every request is answered on the
// reply port, then the thread's flag is raised, so the main thread can wait for it synchronously
// (partition-pool.ts).
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { singleKey } from '../../common/values.ts';
import type { ColumnSpec } from '../../ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../../ivm/operator.ts';
import { ReduceOp } from '../../ivm/ops/reduce-op.ts';
import { ColumnBatch } from '../../ivm/zset.ts';
import type { PartitionLayout } from './partition-eligibility.ts';
import { groupId } from './partition-hash.ts';
import {
  ANSWERED,
  ENDED,
  KIND_STEP,
  REQ_COUNT,
  REQ_H,
  REQ_KIND,
  REQ_NULLS,
  REQ_SEQ,
  REQ_START,
  REQ_WIDTH,
  encodeColumn,
  transferables,
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
  readonly partitions: number;
  /** The Reduce's shared input buffers, as last handed over. */
  bufs: StepBuffers | null;
}

if (parentPort === null) throw new Error('partition-worker.ts runs as a worker thread');
const { reply, requests, flags, words, slot } = workerData as {
  reply: MessagePort;
  requests: MessagePort;
  flags: Int32Array;
  words: Int32Array;
  slot: number;
};
const hosted = new Map<number, Hosted>();

function answer(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  reply.postMessage(message, transfer);
  Atomics.store(flags, slot, ANSWERED);
  Atomics.notify(flags, slot);
}

/** How long one wait lasts before it is renewed (a thread being terminated stops between waits). */
const WAIT_MS = 250;

/** Serves requests until the thread is terminated: one outstanding at a time (the main thread waits). */
function serve(): void {
  const base = slot * REQ_WIDTH;
  let seen = 0;
  for (;;) {
    Atomics.wait(words, base + REQ_SEQ, seen, WAIT_MS);
    const now = Atomics.load(words, base + REQ_SEQ);
    if (now === seen) continue;
    seen = now;
    try {
      if (words[base + REQ_KIND] === KIND_STEP)
        sharedStep(
          words[base + REQ_H] as number,
          words[base + REQ_START] as number,
          words[base + REQ_COUNT] as number,
          words[base + REQ_NULLS] as number,
        );
      else {
        const got = receiveMessageOnPort(requests);
        if (got === undefined)
          throw new SluiceError('INTERNAL_ERROR', 'a partition request came without its message');
        handle(got.message as ToWorker);
      }
    } catch (error) {
      answer({
        ok: false,
        code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR',
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

// A thread that ends (process.exit, an error outside a request) says so on its flag, so the main
// thread, blocked waiting for it, fails the call at once instead of at its timeout.
process.on('exit', () => {
  Atomics.store(flags, slot, ENDED);
  Atomics.notify(flags, slot);
});

// After this module's evaluation (the thread's loader finishes first), never to return.
setImmediate(serve);

/** A step whose fields came in the request words: every column read is in the shared buffers. */
function sharedStep(h: number, start: number, count: number, nullMask: number): void {
  const x = hostedOf(h);
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
  const step = stepPartition(x, cols, bufs.weights, bufs.rows.subarray(start, start + count));
  answer({ ok: true, step }, transferables(step.cols));
}

function hostedOf(h: number): Hosted {
  const x = hosted.get(h);
  if (x === undefined) throw new SluiceError('INTERNAL_ERROR', `partition worker holds no reduce ${h}`);
  return x;
}

function handle(message: ToWorker): void {
  switch (message.t) {
    case 'open': {
      const { node, input, layout } = message;
      const fused = node.fused as NonNullable<typeof node.fused>;
      const op = new ReduceOp(node, fused.columns, {
        filter: fused.filter,
        project: fused.project,
        inputColumns: input,
      });
      hosted.set(message.h, {
        op,
        layout,
        keyCount: node.keyCount,
        width: input.length,
        partition: message.partition,
        partitions: message.partitions,
        bufs: null,
      });
      answer({ ok: true, done: true });
      return;
    }
    case 'step': {
      const x = hostedOf(message.h);
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
      const rows = bufs.rows.subarray(message.start, message.start + message.count);
      const step = stepPartition(x, cols, bufs.weights, rows);
      answer({ ok: true, step }, transferables(step.cols));
      return;
    }
    case 'track':
      hostedOf(message.h).op.trackChanges(message.on);
      answer({ ok: true, done: true });
      return;
    case 'take': {
      const delta = hostedOf(message.h).op.takeStateDelta(message.full);
      answer({ ok: true, delta: { ...delta, upserts: [...delta.upserts] } });
      return;
    }
    case 'load':
      hostedOf(message.h).op.loadState(message.values);
      answer({ ok: true, done: true });
      return;
    case 'rows':
      answer({ ok: true, rows: [...hostedOf(message.h).op.outputRows()] });
      return;
    case 'size': {
      const { op } = hostedOf(message.h);
      answer({ ok: true, size: { bytes: op.stateSize(), groups: op.groupCount() } });
      return;
    }
    case 'close':
      hosted.delete(message.h);
      answer({ ok: true, done: true });
      return;
    case 'exit':
      process.exit(1);
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
): StepReply {
  const m = rows.length;
  const { keyColumns, usedColumns } = x.layout;
  const keyCount = x.keyCount;
  // The partition's rows, gathered column by column: numbers into a Float64Array (the Reduce reads
  // a column by index, and a typed one makes no garbage), anything else into an array.
  const cols: (Value[] | Float64Array)[] = [];
  for (let c = 0; c < x.width; c++) cols.push(EMPTY);
  for (let u = 0; u < usedColumns.length; u++) {
    const c = usedColumns[u] as number;
    cols[c] = gather(wire[c] as WireColumn, rows);
  }
  const localWeights = new Array<number>(m);
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
  const batch = new ColumnBatch(cols as Value[][], localWeights);
  const out = x.op.step([batch], sink) as ColumnBatch;
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
  const outCols = out.cols;
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
  const outWeights = new Float64Array(n);
  for (let j = 0; j < n; j++) outWeights[j] = out.weights[j] as number;
  const encoded = outCols.map((col) => encodeColumn(n, (j) => col[j] as Value, false));
  return { weights: outWeights, touch, cols: encoded, errors };
}

const EMPTY: Value[] = [];

/** Group ids as a Map compares them (SameValueZero: 0 and -0 one id, NaN one id). */
function sameId(a: Value, b: Value): boolean {
  return a === b || (a !== a && b !== b);
}

function notGiven(): SluiceError {
  return new SluiceError('INTERNAL_ERROR', 'a partition changed a group it was not given');
}

/** The values of `rows` of a wire column. */
function gather(col: WireColumn, rows: Int32Array): Value[] | Float64Array {
  const m = rows.length;
  if ('values' in col) {
    const out = new Array<Value>(m);
    for (let j = 0; j < m; j++) out[j] = col.values[rows[j] as number] as Value;
    return out;
  }
  const f64 = col.f64;
  const nulls = col.nulls;
  if (nulls === null) {
    const out = new Float64Array(m);
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
