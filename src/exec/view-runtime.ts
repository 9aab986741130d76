// A running view: its rendered operators (view-render.ts) stepped once per epoch in topological
// order, a plain chain in one loop; its row-error multiset is view-errors.ts.
import type { DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { Operator } from '../ivm/operator.ts';
import type { JoinBudget } from '../ivm/ops/join-op.ts';
import type { SharedArrangements } from './shared-arrangements.ts';
import { PartitionedReduce } from './workers/partitioned-reduce.ts';
import type { PartitionPool } from './workers/partition-pool.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { emptyBatch } from '../ivm/zset.ts';
import { batchSize } from './workers/partition-batch.ts';
import type { DeltaReader } from './epoch-deltas.ts';
import { RenderedView, type NodeStats } from './view-render.ts';
import { isDeferredOutput, type DeferredOutput } from '../ivm/ops/deferred-output.ts';

/**
 * The input name whose presence in an epoch's inputs makes a `values` node emit its one empty row:
 * an ad-hoc query's only epoch, and a view's backfill (VALUES in FROM).
 */
export const VALUES_INPUT = '$values';
export type { NodeStats } from './view-render.ts';

/** The empty delta, shared: operators never mutate their inputs. */
const EMPTY: ZBatch = emptyBatch();
/** A step with no source's delta (a drain step). */
const NO_INPUT: DeltaReader = new Map<string, ZBatch>();

export class ViewRuntime extends RenderedView {
  /** Each node's output in the running step, by position; EMPTY between steps (and in the last slot). */
  private readonly outputsScratch: ZBatch[];
  private readonly inputScratch: ZBatch[][];
  private readonly statsByIndex: NodeStats[];
  /**
   * `rendered` unpacked for `step`, by position: the operator (null for an input or values node),
   * the source an input node reads (null otherwise) and its inputs' positions (an id no node has:
   * the last slot of the outputs, always empty), and the output node's position. At batch size 1
   * the step runs once per event, and reading these flat saves loads through the plan.
   */
  private readonly stepOps: (Operator | null)[];
  private readonly stepSources: (string | null)[];
  private readonly stepInputs: (readonly number[])[];
  private readonly outputPosition: number;
  /** By position: the node's one input is the node before it, which nobody else reads. */
  private readonly stepChained: boolean[];
  /** By position: the node's output goes into the outputs (some other node, or the result, reads it). */
  private readonly stepKept: boolean[];
  /**
   * The source a plain chain reads (null: not one): an input node first, then nodes that each read
   * only the one before, the output last, no temporal filter. Such a view (a table under a GROUP BY,
   * a view over a view) steps through `stepChain`, which reads none of the per-position tables but the
   * operators and their counters: at batch size 1 those loads are a good part of a view's step.
   */
  private readonly chainSource: string | null;
  /** The operators deferring their output (`deferOutputs`), in topological order; those before `draining` are done. */
  private deferred: DeferredOutput[] = [];
  private draining = 0;
  /** The one input array every node of a chain is handed (holds no batch between steps). */
  private readonly chainInput: ZBatch[] = [EMPTY];
  /** With workers, a batch may be a partitioned Reduce's changes, not merged until read: the node
   * counters count it by `batchSize` (a check one worker does not pay for). */
  private readonly unmerged: boolean;

  /** The parameters are RenderedView's (view-render.ts). */
  constructor(
    plan: DataflowPlan,
    joinBudget: JoinBudget | null = null,
    shared: { readonly registry: SharedArrangements; readonly epoch: number } | null = null,
    partitions: PartitionPool | null = null,
  ) {
    super(plan, joinBudget, shared, partitions);
    this.unmerged = partitions !== null;
    const n = this.rendered.length;
    this.outputsScratch = Array.from({ length: n + 1 }, () => EMPTY);
    this.inputScratch = this.rendered.map((r) => r.inputs.map(() => EMPTY));
    this.statsByIndex = this.rendered.map((r) => this.stats.get(r.node.id) as NodeStats);
    this.stepOps = this.rendered.map((r) => r.op);
    this.stepSources = this.rendered.map((r) => (r.node.kind === 'input' ? r.node.source : null));
    const positionOf = (id: number): number => {
      const at = this.rendered.findIndex((r) => r.node.id === id);
      return at < 0 ? n : at;
    };
    this.stepInputs = this.rendered.map((r) => r.inputs.map(positionOf));
    this.outputPosition = positionOf(plan.output);
    const readers = new Array<number>(n + 1).fill(0);
    for (const from of this.stepInputs) for (const p of from) readers[p] = (readers[p] ?? 0) + 1;
    this.stepChained = this.stepInputs.map(
      (from, i) =>
        from.length === 1 && from[0] === i - 1 && readers[i - 1] === 1 && i - 1 !== this.outputPosition,
    );
    this.stepKept = this.rendered.map(
      (_, i) =>
        (i === this.outputPosition && i !== n - 1) ||
        (readers[i] ?? 0) > (this.stepChained[i + 1] === true ? 1 : 0),
    );
    const first = this.stepSources[0] ?? null;
    const chain = n >= 2 && this.outputPosition === n - 1 && this.stepChained.every((c, i) => i === 0 || c);
    this.chainSource = chain && this.temporal.length === 0 ? first : null;
  }

  /**
   * Runs one epoch at logical clock `clock` (µs; temporal filters read it): `inputs` maps a source
   * name to its delta. Returns the view's consolidated delta.
   */
  step(inputs: DeltaReader, epoch: number, clock: number): ZBatch {
    if (this.chainSource !== null) return this.stepChain(inputs.get(this.chainSource) ?? EMPTY, epoch);
    this.epoch = epoch;
    for (const op of this.temporal) op.setClock(clock);
    const unmerged = this.unmerged;
    // Per-epoch scratch kept between steps: an epoch of one row should not pay for allocations.
    // Outputs by position (not id): a packed array of batches, read and emptied over `n` slots.
    const outputs = this.outputsScratch;
    const ops = this.stepOps;
    const n = ops.length;
    // The batch the node before produced: a chained node reads it here, not from the outputs.
    let prev: ZBatch = EMPTY;
    let kept = false;
    for (let i = 0; i < n; i++) {
      const op = ops[i] as Operator | null;
      const stats = this.statsByIndex[i] as NodeStats;
      let out: ZBatch;
      if (op === null) {
        // An input node (a source's delta), or the one-row VALUES of a query without FROM.
        const source = this.stepSources[i] as string | null;
        if (source !== null) out = inputs.get(source) ?? EMPTY;
        else out = inputs.has(VALUES_INPUT) ? { rows: [[]], weights: [1], consolidated: true } : EMPTY;
      } else if (this.stepChained[i] === true) {
        const ins = this.inputScratch[i] as ZBatch[];
        ins[0] = prev;
        stats.rowsIn += unmerged ? batchSize(prev) : prev.weights.length;
        out = op.step(ins, this);
        ins[0] = EMPTY;
      } else {
        const ins = this.inputScratch[i] as ZBatch[];
        const from = this.stepInputs[i] as readonly number[];
        let rowsIn = 0;
        for (let k = 0; k < from.length; k++) {
          const b = outputs[from[k] as number] as ZBatch;
          ins[k] = b;
          rowsIn += unmerged ? batchSize(b) : b.weights.length;
        }
        stats.rowsIn += rowsIn;
        out = op.step(ins, this);
        // The scratch holds no batch past its step (no retention across epochs, no second loop).
        for (let k = 0; k < from.length; k++) ins[k] = EMPTY;
      }
      stats.rowsOut += unmerged ? batchSize(out) : out.weights.length;
      if (this.stepKept[i] === true) {
        outputs[i] = out;
        kept = true;
      }
      prev = out;
    }
    const result = this.outputPosition === n - 1 ? prev : (outputs[this.outputPosition] as ZBatch);
    if (kept) for (let i = 0; i < n; i++) outputs[i] = EMPTY;
    return result;
  }

  /**
   * A one-off evaluation (an ad-hoc SELECT, whose output is read once at the end): the stateful
   * operators that can defer their output (ivm/ops/deferred-output.ts) absorb the steps' input and
   * emit once, when `drainStep` is called after the last input. Called before the first step.
   */
  deferOutputs(): void {
    this.deferred = this.stepOps.filter(
      (op): op is Operator & DeferredOutput => isDeferredOutput(op) && op.deferOutput(),
    );
  }

  /**
   * After the last input: one step that emits a bounded part of the deferred output, the operators
   * in topological order (one drains while those after it still absorb). False: call again.
   */
  drainStep(epoch: number): boolean {
    while (this.draining < this.deferred.length) {
      const op = this.deferred[this.draining] as DeferredOutput;
      if (!op.draining) {
        this.draining++;
        continue;
      }
      op.startDrain();
      this.step(NO_INPUT, epoch, 0);
      return false;
    }
    return true;
  }

  /** Whether the view is a plain chain (see chainSource): it reads one relation, and `stepChain` steps it. */
  get chained(): boolean {
    return this.chainSource !== null;
  }

  /**
   * `step` for a plain chain (see chainSource), handed the delta of the one relation it reads: each
   * node's batch handed to the next in one array. The graph calls it directly with the delta that
   * woke the view, so a one-row epoch looks up no delta by name.
   */
  stepChain(input: ZBatch, epoch: number): ZBatch {
    this.epoch = epoch;
    const ops = this.stepOps;
    const counters = this.statsByIndex;
    const ins = this.chainInput;
    const unmerged = this.unmerged;
    let batch = input;
    (counters[0] as NodeStats).rowsOut += unmerged ? batchSize(batch) : batch.weights.length;
    for (let i = 1; i < ops.length; i++) {
      const stats = counters[i] as NodeStats;
      stats.rowsIn += unmerged ? batchSize(batch) : batch.weights.length;
      ins[0] = batch;
      batch = (ops[i] as Operator).step(ins, this);
      stats.rowsOut += unmerged ? batchSize(batch) : batch.weights.length;
    }
    ins[0] = EMPTY;
    return batch;
  }

  /**
   * The partitioned Reduce whose output is this view's delta (the Output reads it and nothing
   * else), or null: a COUNT(*) Reduce over this view can read its folds (workers/folding-reduce.ts).
   */
  partitionedOutput(): PartitionedReduce | null {
    const from = this.stepInputs[this.outputPosition];
    if (from === undefined || from.length !== 1) return null;
    const op = this.stepOps[from[0] as number];
    return op instanceof PartitionedReduce ? op : null;
  }

  /** Frees what the runtime holds outside its own objects: its partitions in the worker threads. */
  close(): void {
    for (const op of this.stepOps) if (op instanceof PartitionedReduce) op.close();
  }
}
