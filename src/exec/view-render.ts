// A view's DataflowPlan rendered: one operator per node (lowering has already decided fusion and
// state sharing, and recorded them in the plan), the shared arrangements its joins probe, the
// node counters, and what the graph asks of the operators outside a step (temporal filters'
// next change, window-close watermarks, the stateful parts). Stepping is view-runtime.ts.
import { SluiceError } from '../common/errors.ts';
import type { ColumnSpec, DataflowNode, DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { Operator } from '../ivm/operator.ts';
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
import { ViewErrors } from './view-errors.ts';
import { type EpochDelta, ViewDeltaBound } from './view-join-fanout.ts';

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

export abstract class RenderedView extends ViewErrors {
  readonly output: OutputOp;
  protected readonly rendered: RenderedNode[] = [];
  readonly stats = new Map<number, NodeStats>();

  /** The view's temporal filters: they change at clock values as well as with input. */
  readonly temporal: TemporalFilterOp[] = [];

  /** The view's EMIT ON WINDOW CLOSE Reduces: they emit when a table's watermark moves. */
  readonly closing: WindowCloseOp[] = [];

  /** HOP's pane Reduces under EMIT ON WINDOW CLOSE: they free a pane when its last window closes. */
  readonly panes: PaneCloseOp[] = [];

  /** How large each node's delta can be in a write's epoch, and the rows its joins build (view-join-fanout.ts). */
  private readonly deltaBound: ViewDeltaBound;

  /** Shared arrangements this runtime's joins probe (released when the view goes). */
  readonly sharedArrangements: string[] = [];

  /** COUNT(*) Reduces over a relation, which read a partitioned Reduce's folds (workers/). */
  readonly folding: FoldingReduce[] = [];

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
    super();
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
          // Match counts read from a keyed table's own rows when the plan says so and the relation
          // is one here (else counted by the operator, as for any subquery).
          const right = byId.get(node.inputs[1]) as DataflowNode;
          const table =
            node.rightTable === undefined || shared === null || right.kind !== 'input'
              ? null
              : shared.registry.tableRows(right.source);
          this.rendered.push({ node, inputs: node.inputs, op: new SemiJoinOp(node, left, table) });
          break;
        }
        case 'topn':
          this.rendered.push({ node, inputs: node.inputs, op: new TopNOp(node) });
          break;
        case 'window': {
          // An ad-hoc SELECT's budget counts a STRING_AGG window's rows weighed by their texts (the
          // joins' RESULT_TOO_LARGE): a running one over a long partition builds texts the square of it.
          const op = new WindowOp(node);
          op.limitRows(joinBudget);
          this.rendered.push({ node, inputs: node.inputs, op });
          break;
        }
        case 'join': {
          const [left, right] = node.inputs.map((i) => (byId.get(i) as DataflowNode).columns);
          const { arrangement, other } = this.joinSides(node, byId, shared);
          const op = new JoinOp(
            node,
            left as ColumnSpec[],
            right as ColumnSpec[],
            joinBudget,
            arrangement,
            other,
          );
          this.rendered.push({ node, inputs: node.inputs, op });
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
    this.deltaBound = new ViewDeltaBound(this.rendered, plan.output);
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
   * The view's output delta and the rows its joins build in an epoch where its inputs change by
   * `relations` (a relation's delta by its name; absent: unchanged), known before the epoch runs
   * (ViewDeltaBound.epoch): `exact` false counts alone (no row read), true probes the joins by key,
   * a cost of the write, not of the state.
   */
  epochDeltaBound(
    relations: ReadonlyMap<string, EpochDelta>,
    exact: boolean,
    outputRead: boolean,
  ): { readonly output: EpochDelta; readonly built: number } {
    return this.deltaBound.epoch(relations, exact, outputRead);
  }

  /** Whether some node of the view is a join (whose rows a write's epoch bound counts). */
  get hasJoin(): boolean {
    return this.deltaBound.hasJoin;
  }

  /** Whether the view's count reads which written rows are insertions and deletions. */
  get readsSigns(): boolean {
    return this.deltaBound.readsSigns;
  }

  /** Sources a semi-join's subquery side reads (a write to one is counted by the rows it flips). */
  get subquerySources(): ReadonlySet<string> {
    return this.deltaBound.subquerySources;
  }

  /**
   * Counts the rows every join of the view builds in the steps that follow against one `budget`
   * (null: no longer), and those of its STRING_AGG windows weighed by their texts; a step that
   * passes it throws (ViewGraph.build's bound on a first build).
   */
  limitJoinRows(budget: JoinBudget | null): void {
    for (const r of this.rendered)
      if (r.op instanceof JoinOp || r.op instanceof WindowOp) r.op.limitRows(budget);
  }

  /** Every piece of this view's state that a checkpoint must hold, the error multiset included. */
  statefulParts(): Stateful[] {
    const parts: Stateful[] = [];
    for (const r of this.rendered) if (r.op !== null && isStateful(r.op)) parts.push(r.op);
    parts.push(this.errorState);
    return parts;
  }

  nodeStats(): NodeStats[] {
    for (const r of this.rendered) {
      const s = this.stats.get(r.node.id);
      if (s !== undefined && r.op !== null) s.stateBytes = r.op.stateSize();
    }
    return [...this.stats.values()];
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
