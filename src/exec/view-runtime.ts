// A running view: its DataflowPlan rendered into operators, one per node (lowering has already
// decided fusion and state sharing, and recorded them in the plan), stepped once per epoch in
// topological order, plus the view's row-error multiset.
import { SluiceError } from '../common/errors.ts';
import type { ColumnSpec, DataflowNode, DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { Operator, RowErrorSink } from '../ivm/operator.ts';
import type { Stateful } from '../ivm/state.ts';
import { isStateful } from '../ivm/state.ts';
import { DistinctOp } from '../ivm/ops/distinct-op.ts';
import { TemporalFilterOp } from '../ivm/ops/temporal-filter-op.ts';
import { WindowCloseOp } from '../ivm/ops/window-close-op.ts';
import { PaneCloseOp } from '../ivm/ops/pane-close-op.ts';
import { SetOpOp } from '../ivm/ops/set-op.ts';
import { UnionOp } from '../ivm/ops/union-op.ts';
import { WindowOp } from '../ivm/ops/window-op.ts';
import { TopNOp } from '../ivm/ops/topn-op.ts';
import { JoinOp, type JoinBudget } from '../ivm/ops/join-op.ts';
import { SemiJoinOp } from '../ivm/ops/semi-join-op.ts';
import { TemporalJoinOp } from '../ivm/ops/temporal-join-op.ts';
import type { JoinArrangement } from '../ivm/join-arrangement.ts';
import type { SharedArrangements } from './shared-arrangements.ts';
import type { TableJoinSide } from '../ivm/join-table-side.ts';
import { FlatMapOp } from '../ivm/ops/flat-map-op.ts';
import { MapOp } from '../ivm/ops/map-op.ts';
import { OutputOp } from '../ivm/ops/output-op.ts';
import { ReduceOp } from '../ivm/ops/reduce-op.ts';
import { PartitionedReduce } from './workers/partitioned-reduce.ts';
import { FoldingReduce } from './workers/folding-reduce.ts';
import { foldOf, partitioningOf } from './workers/partition-eligibility.ts';
import type { PartitionPool } from './workers/partition-pool.ts';
import { encodeValues } from '../common/values.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { emptyBatch } from '../ivm/zset.ts';
import { batchSize } from './workers/partition-batch.ts';
import type { DeltaReader } from './epoch-deltas.ts';

/** The empty delta, shared: operators never mutate their inputs. */
const EMPTY: ZBatch = emptyBatch();
import type { Row, Value } from '../common/types.ts';
import type { ErrorChange, ViewRowError } from './api.ts';

interface ErrorEntry {
  code: string;
  message: string;
  row: Row;
  count: number;
  epoch: number;
}

interface RenderedNode {
  readonly node: DataflowNode;
  /** Node ids whose outputs feed this node (after fusion). */
  readonly inputs: readonly number[];
  readonly op: Operator | null;
}

export interface NodeStats {
  readonly id: number;
  readonly kind: DataflowNode['kind'];
  rowsIn: number;
  rowsOut: number;
  stateBytes: number;
}

function toRow(values: readonly Value[], columns: readonly ColumnSpec[]): Row {
  const out: Row = {};
  columns.forEach((c, i) => (out[c.name] = values[i] as Value));
  return out;
}

export class ViewRuntime implements RowErrorSink {
  readonly output: OutputOp;
  private readonly rendered: RenderedNode[] = [];
  private readonly errors = new Map<string, ErrorEntry>();
  private readonly touchedErrors = new Map<string, { before: ErrorEntry | null }>();
  /** `touchedErrors` is not empty: read after every step, from this object rather than the Map's. */
  private errorsTouched = false;
  private epoch = 0;
  readonly stats = new Map<number, NodeStats>();
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
  /** The one input array every node of a chain is handed (holds no batch between steps). */
  private readonly chainInput: ZBatch[] = [EMPTY];

  /** The view's temporal filters: they change at clock values as well as with input. */
  readonly temporal: TemporalFilterOp[] = [];

  /** The view's EMIT ON WINDOW CLOSE Reduces: they emit when a table's watermark moves. */
  readonly closing: WindowCloseOp[] = [];

  /** HOP's pane Reduces under EMIT ON WINDOW CLOSE: they free a pane when its last window closes. */
  readonly panes: PaneCloseOp[] = [];

  /** Shared arrangements this runtime's joins probe (released when the view goes). */
  readonly sharedArrangements: string[] = [];

  /** COUNT(*) Reduces over a relation, which read a partitioned Reduce's folds (workers/). */
  readonly folding: FoldingReduce[] = [];
  /** With workers, a batch may be a partitioned Reduce's changes, not merged until read: the node
   * counters count it by `batchSize` (a check one worker does not pay for). */
  private readonly unmerged: boolean;

  /**
   * `joinBudget`: rows all joins of this runtime may produce, for one-off evaluations (see
   * JoinBudget). `shared`: the views' shared arrangements, for joins whose plan names one (a
   * one-off evaluation passes none: its joins arrange both sides themselves). `partitions`: the
   * engine's worker threads, which run the Reduces that can be partitioned (workers/).
   */
  constructor(
    readonly plan: DataflowPlan,
    joinBudget: JoinBudget | null = null,
    shared: { readonly registry: SharedArrangements; readonly epoch: number } | null = null,
    partitions: PartitionPool | null = null,
  ) {
    this.unmerged = partitions !== null;
    const byId = new Map(plan.nodes.map((n) => [n.id, n]));
    let output: OutputOp | null = null;
    for (const node of plan.nodes) {
      this.stats.set(node.id, { id: node.id, kind: node.kind, rowsIn: 0, rowsOut: 0, stateBytes: 0 });
      switch (node.kind) {
        case 'input':
        case 'values':
          this.rendered.push({ node, inputs: [], op: null });
          break;
        case 'map': {
          const input = byId.get(node.inputs[0]) as DataflowNode;
          this.rendered.push({
            node,
            inputs: node.inputs,
            op: new MapOp(node.id, node.filter, node.project, input.columns, node.keepsKey ?? null),
          });
          break;
        }
        case 'flatmap': {
          const input = byId.get(node.inputs[0]) as DataflowNode;
          this.rendered.push({
            node,
            inputs: node.inputs,
            op: new FlatMapOp(node.id, node.generator, input.columns, joinBudget),
          });
          break;
        }
        case 'reduce': {
          const input = byId.get(node.inputs[0]) as DataflowNode;
          if (node.closePanes !== undefined) {
            const op = new PaneCloseOp(node, input.columns);
            this.panes.push(op);
            this.rendered.push({ node, inputs: node.inputs, op });
            break;
          }
          if (node.emitOnClose !== undefined) {
            const fused = node.fused === null ? null : { ...node.fused, inputColumns: input.columns };
            const closing = new WindowCloseOp(node, input.columns, fused);
            this.closing.push(closing);
            this.rendered.push({ node, inputs: node.inputs, op: closing });
            break;
          }
          const partitioning = partitions === null ? null : partitioningOf(node, input.columns);
          let op: ReduceOp | PartitionedReduce | FoldingReduce =
            partitioning?.partitioned === true && partitions !== null
              ? new PartitionedReduce(node, input.columns, partitioning.layout, partitions)
              : node.fused === null
                ? new ReduceOp(node, input.columns, null)
                : new ReduceOp(node, node.fused.columns, {
                    filter: node.fused.filter,
                    project: node.fused.project,
                    inputColumns: input.columns,
                  });
          // With workers, a COUNT(*) Reduce over a relation may read a partitioned Reduce's folds.
          const fold = partitions !== null && op instanceof ReduceOp ? foldOf(node) : null;
          if (fold !== null && input.kind === 'input') {
            op = new FoldingReduce(op as ReduceOp, input.source, fold);
            this.folding.push(op);
          }
          this.rendered.push({ node, inputs: node.inputs, op });
          break;
        }
        case 'distinct':
          this.rendered.push({ node, inputs: node.inputs, op: new DistinctOp(node.id, node.stateId) });
          break;
        case 'temporalFilter': {
          const input = byId.get(node.inputs[0]) as DataflowNode;
          const op = new TemporalFilterOp(node.id, node.stateId, node.bounds, input.columns);
          this.temporal.push(op);
          this.rendered.push({ node, inputs: node.inputs, op });
          break;
        }
        case 'union':
          this.rendered.push({ node, inputs: node.inputs, op: new UnionOp(node.id) });
          break;
        case 'setop':
          this.rendered.push({
            node,
            inputs: node.inputs,
            op: new SetOpOp(node.id, node.stateId, node.op, node.all),
          });
          break;
        case 'semijoin': {
          const left = (byId.get(node.inputs[0]) as DataflowNode).columns;
          this.rendered.push({ node, inputs: node.inputs, op: new SemiJoinOp(node, left) });
          break;
        }
        case 'topn':
          this.rendered.push({ node, inputs: node.inputs, op: new TopNOp(node) });
          break;
        case 'window':
          this.rendered.push({ node, inputs: node.inputs, op: new WindowOp(node) });
          break;
        case 'join': {
          const [left, right] = node.inputs.map((i) => (byId.get(i) as DataflowNode).columns);
          const { arrangement, other } = this.joinSides(node, byId, shared);
          this.rendered.push({
            node,
            inputs: node.inputs,
            op: new JoinOp(node, left as ColumnSpec[], right as ColumnSpec[], joinBudget, arrangement, other),
          });
          break;
        }
        case 'temporalJoin': {
          const [left, right] = node.inputs.map((i) => (byId.get(i) as DataflowNode).columns);
          // A one-off evaluation (an ad-hoc SELECT: the one with a budget) reads every input at one
          // epoch, where each left row meets the right side as it is then: a plain join, which does
          // not depend on the order its inputs' slices are fed in.
          const op =
            joinBudget !== null
              ? new JoinOp(
                  { ...node, kind: 'join', shared: null, fused: null },
                  left as ColumnSpec[],
                  right as ColumnSpec[],
                  joinBudget,
                )
              : new TemporalJoinOp(node, left as ColumnSpec[], right as ColumnSpec[]);
          this.rendered.push({ node, inputs: node.inputs, op });
          break;
        }
        case 'output': {
          const shared =
            node.sharesStateOf === null
              ? null
              : this.rendered.find((r) => r.node.id === node.sharesStateOf)?.op;
          const reduce =
            shared instanceof ReduceOp ||
            shared instanceof PartitionedReduce ||
            shared instanceof FoldingReduce
              ? shared
              : null;
          if (node.sharesStateOf !== null && reduce === null) {
            throw new SluiceError(
              'INTERNAL_ERROR',
              `output of "${plan.view}" shares the state of a node that is no Reduce`,
            );
          }
          output = new OutputOp(node.id, node.stateId, node.key, node.columns.length, reduce);
          this.rendered.push({ node, inputs: node.inputs, op: output });
          break;
        }
      }
    }
    if (output === null)
      throw new SluiceError('INTERNAL_ERROR', `dataflow of "${plan.view}" has no output node`);
    // Changes to closed windows are counted where they are dropped: at the panes, when there are some.
    for (const op of this.closing) for (const panes of this.panes) op.countIgnoredOf(panes);
    this.output = output;
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

  /** Sources (tables or views) this view reads. */
  sources(): string[] {
    return this.plan.nodes.filter((n) => n.kind === 'input').map((n) => (n as { source: string }).source);
  }

  hasValuesInput(): boolean {
    return this.plan.nodes.some((n) => n.kind === 'values');
  }

  /** The earliest clock value at which a temporal filter changes without input (Infinity: never). */
  nextDue(): number {
    let due = Infinity;
    for (const op of this.temporal) due = Math.min(due, op.nextDue());
    return due;
  }

  /** Hands each window-close Reduce its table's watermark; true when one of them would emit. */
  setWatermarks(watermarkOf: (table: string) => number | null): boolean {
    let due = false;
    for (const op of this.closing) {
      const mark = watermarkOf(op.table);
      if (op.closeDue(mark)) due = true;
      op.setWatermark(mark);
    }
    for (const op of this.panes) op.setWatermark(watermarkOf(op.table));
    return due;
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
        else out = inputs.has('$values') ? { rows: [[]], weights: [1], consolidated: true } : EMPTY;
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

  report(error: unknown, row: readonly Value[], columns: readonly ColumnSpec[], weight: number): void {
    const code = error instanceof SluiceError ? error.code : 'INTERNAL_ERROR';
    const message = error instanceof Error ? error.message : String(error);
    // An operator may pass a longer row than `columns` (Reduce passes its old output row, whose key
    // columns come first): the error is the key's, so that its retraction, reported with the bare
    // key, finds it.
    const keyed = row.length === columns.length ? row : row.slice(0, columns.length);
    const key = `${code}\u0000${message}\u0000${encodeValues(keyed)}`;
    let entry = this.errors.get(key);
    if (!this.touchedErrors.has(key)) {
      this.touchedErrors.set(key, { before: entry === undefined ? null : { ...entry } });
      this.errorsTouched = true;
    }
    if (entry === undefined) {
      entry = { code, message, row: toRow(keyed, columns), count: 0, epoch: this.epoch };
      this.errors.set(key, entry);
    }
    entry.count += weight;
    if (entry.count === 0) this.errors.delete(key);
  }

  /** Whether errors appeared or were retracted since the last `takeErrorChanges`. */
  hasErrorChanges(): boolean {
    return this.errorsTouched;
  }

  /** Error appearances/retractions since the last call. */
  takeErrorChanges(): ErrorChange[] {
    if (!this.errorsTouched) return [];
    const out: ErrorChange[] = [];
    for (const [key, { before }] of this.touchedErrors) {
      const after = this.errors.get(key) ?? null;
      if (before !== null && (after === null || after.count !== before.count))
        out.push({ op: '-E', error: { ...before } });
      if (after !== null && (before === null || after.count !== before.count))
        out.push({ op: '+E', error: { ...after } });
    }
    this.touchedErrors.clear();
    this.errorsTouched = false;
    return out;
  }

  currentErrors(): ViewRowError[] {
    return [...this.errors.values()].map((e) => ({ ...e }));
  }

  /** Errors [from, to) in the order they appeared (a bounded read: walks, copies only the page). */
  errorsRange(from: number, to: number): ViewRowError[] {
    const out: ViewRowError[] = [];
    let i = 0;
    for (const e of this.errors.values()) {
      if (i >= to) break;
      if (i >= from) out.push({ ...e });
      i++;
    }
    return out;
  }

  /** Every piece of this view's state that a checkpoint must hold, the error multiset included. */
  statefulParts(): Stateful[] {
    const parts: Stateful[] = [];
    for (const r of this.rendered) if (r.op !== null && isStateful(r.op)) parts.push(r.op);
    parts.push(this.errorState);
    return parts;
  }

  private errorStateCache: Stateful | null = null;

  private get errorState(): Stateful {
    this.errorStateCache ??= {
      stateId: `${this.plan.view}/errors`,
      trackChanges: () => {},
      takeStateDelta: () => ({
        replaceAll: true,
        upserts: [...this.errors].map(([k, e]) => [k, { ...e, key: k }] as const),
        deletes: [],
      }),
      loadState: (values) => {
        this.errors.clear();
        for (const v of values) {
          const { key, ...e } = v as ErrorEntry & { key: string };
          this.errors.set(key, e);
        }
      },
    };
    return this.errorStateCache;
  }

  errorCount(): number {
    return this.errors.size;
  }

  nodeStats(): NodeStats[] {
    for (const r of this.rendered) {
      const s = this.stats.get(r.node.id);
      if (s !== undefined && r.op !== null) s.stateBytes = r.op.stateSize();
    }
    return [...this.stats.values()];
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

  stateBytes(): number {
    return this.rendered.reduce((sum, r) => sum + (r.op?.stateSize() ?? 0), 0);
  }

  /**
   * A join's sides held outside it: the side read from a keyed table's own rows and the other side's
   * shared arrangement (when the plan names one), or the one shared arrangement of its side; nulls
   * for what the join arranges itself. The shared arrangements acquired are noted for release.
   */
  private joinSides(
    node: Extract<DataflowNode, { kind: 'join' }>,
    byId: ReadonlyMap<number, DataflowNode>,
    shared: { readonly registry: SharedArrangements; readonly epoch: number } | null,
  ): { arrangement: JoinArrangement | TableJoinSide | null; other: JoinArrangement | null } {
    if (shared === null || node.shared === null) return { arrangement: null, other: null };
    const sourceOf = (side: 0 | 1): string =>
      (byId.get(node.inputs[side] as number) as Extract<DataflowNode, { kind: 'input' }>).source;
    const keysOf = (side: 0 | 1): readonly ScalarExpr[] => (side === 0 ? node.leftKey : node.rightKey);
    const side = node.shared.side;
    if (node.shared.table !== true) {
      const own = shared.registry.acquire(
        node.shared.arrangement,
        sourceOf(side),
        keysOf(side),
        shared.epoch,
      );
      this.sharedArrangements.push(node.shared.arrangement);
      return { arrangement: own, other: null };
    }
    const arrangement = shared.registry.tableSide(sourceOf(side), side);
    const name = node.shared.other;
    if (arrangement === null || name === undefined) return { arrangement, other: null };
    const otherSide = side === 0 ? 1 : 0;
    const other = shared.registry.acquire(name, sourceOf(otherSide), keysOf(otherSide), shared.epoch);
    this.sharedArrangements.push(name);
    return { arrangement, other };
  }
}
