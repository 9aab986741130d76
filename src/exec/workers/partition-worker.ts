// A partition worker thread: it hosts one partition of each partitioned Reduce (partitioned-reduce.ts)
// — a plain ReduceOp holding the groups whose id hashes to its partition — and steps it on the rows
// of each batch that belong to it. Every request is answered on the reply port, then the thread's
// flag is raised, so the main thread can wait for it synchronously (partition-pool.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { singleKey } from '../../common/values.ts';
import type { ColumnSpec } from '../../ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../../ivm/operator.ts';
import { ReduceOp } from '../../ivm/ops/reduce-op.ts';
import { ColumnBatch } from '../../ivm/zset.ts';
import type { PartitionLayout } from './partition-eligibility.ts';
import { groupId, hashGroupId } from './partition-hash.ts';
import {
  columnValue,
  encodeColumn,
  transferables,
  type FromWorker,
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
}

const port = parentPort;
if (port === null) throw new Error('partition-worker.ts runs as a worker thread');
const { reply, flags, slot } = workerData as { reply: MessagePort; flags: Int32Array; slot: number };
const hosted = new Map<number, Hosted>();

function answer(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  reply.postMessage(message, transfer);
  Atomics.store(flags, slot, 1);
  Atomics.notify(flags, slot);
}

port.on('message', (message: ToWorker) => {
  try {
    handle(message);
  } catch (error) {
    answer({
      ok: false,
      code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR',
      message: error instanceof Error ? error.message : String(error),
    });
  }
});

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
      });
      answer({ ok: true, done: true });
      return;
    }
    case 'step': {
      const step = stepPartition(hostedOf(message.h), message.cols, message.weights);
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
  }
}

/**
 * Steps the partition on the batch's rows whose group it owns, and tags each change with the batch
 * index of its group's first row: the single Reduce emits its changes in that order, so the main
 * thread merges the partitions' changes by it.
 */
function stepPartition(x: Hosted, wire: readonly (WireColumn | null)[], weights: Float64Array): StepReply {
  const n = weights.length;
  const { keyColumns, usedColumns } = x.layout;
  const keyCount = x.keyCount;
  const cols: Value[][] = [];
  for (let c = 0; c < x.width; c++) cols.push([]);
  const localWeights: number[] = [];
  const first = new Map<Value, number>();
  const key = new Array<Value>(keyCount);
  const keyCol0 = wire[keyColumns[0] as number] as WireColumn;
  for (let i = 0; i < n; i++) {
    let id: Value;
    if (keyCount === 1) id = singleKey(columnValue(keyCol0, i));
    else {
      for (let k = 0; k < keyCount; k++) key[k] = columnValue(wire[keyColumns[k] as number] as WireColumn, i);
      id = groupId(key);
    }
    if (hashGroupId(id) % x.partitions !== x.partition) continue;
    if (!first.has(id)) first.set(id, i);
    for (let u = 0; u < usedColumns.length; u++) {
      const c = usedColumns[u] as number;
      (cols[c] as Value[]).push(columnValue(wire[c] as WireColumn, i));
    }
    localWeights.push(weights[i] as number);
  }
  const errors: WireRowError[] = [];
  const touchOf = (row: readonly Value[]): number => {
    const t = first.get(groupId(row.slice(0, keyCount)));
    if (t === undefined)
      throw new SluiceError('INTERNAL_ERROR', 'a partition changed a group it was not given');
    return t;
  };
  const sink: RowErrorSink = {
    report(error: unknown, row: readonly Value[], _columns: readonly ColumnSpec[], weight: number): void {
      errors.push({
        code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR',
        message: error instanceof Error ? error.message : String(error),
        row: [...row],
        weight,
        touch: touchOf(row),
      });
    },
  };
  const out = x.op.step([new ColumnBatch(cols, localWeights)], sink) as ColumnBatch;
  const m = out.weights.length;
  const touch = new Int32Array(m);
  const outKey = new Array<Value>(keyCount);
  for (let j = 0; j < m; j++) {
    for (let k = 0; k < keyCount; k++) outKey[k] = (out.cols[k] as Value[])[j] as Value;
    touch[j] = touchOf(outKey);
  }
  const outWeights = new Float64Array(m);
  for (let j = 0; j < m; j++) outWeights[j] = out.weights[j] as number;
  const outCols = out.cols.map((col) => encodeColumn(m, (j) => col[j] as Value, false));
  return { weights: outWeights, touch, cols: outCols, errors };
}
