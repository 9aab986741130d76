// A Reduce whose aggregates are all COUNT(*) over a view whose changes come from a partitioned Reduce
// (`SELECT FLOOR(total / 10), COUNT(*) FROM seller_totals GROUP BY 1` over `seller_totals`' SUM per
// seller): COUNT(*) reads only each group's net weight, so the partitions fold the upstream changes by
// this Reduce's group key (partition-fold.ts) and it steps on one row per touched group — the group's
// first change, weighted by the group's net weight — instead of on every change, two per touched
// upstream group. The rows come in the order of their groups' first changes, and a group's first
// change is the row the Reduce would take the group's key from: its output, state and row errors are
// the single Reduce's. When the fold is not at hand (another batch, a partition whose key failed on a
// change) it steps on the changes themselves.
import type { Value } from '../../common/types.ts';
import type { Operator, RowErrorSink } from '../../ivm/operator.ts';
import type { ReduceOp } from '../../ivm/ops/reduce-op.ts';
import type { StateDelta, Stateful } from '../../ivm/state.ts';
import { ColumnBatch, type ZBatch } from '../../ivm/zset.ts';
import { foldIdsFunction, type FoldIds } from './fold-ids.ts';
import { PartitionBatch, type FoldRows } from './partition-batch.ts';
import type { FoldSpec } from './partition-protocol.ts';

export class FoldingReduce implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  /** Its group ids over the folded rows' columns, generated. */
  private readonly ids: FoldIds;
  private readonly rowIds: Value[] = [];
  /** The partitioned Reduce whose steps this one reads folded, and which of its folds (linked by the
   * view graph; null: none, every step reads the changes). */
  private producer: object | null = null;
  private foldIndex = -1;
  /** How many steps read a fold instead of the changes (for tests). */
  foldedSteps = 0;

  /** `source`: the relation this Reduce reads; `spec`: its group key over that relation's columns. */
  constructor(
    readonly inner: ReduceOp,
    readonly source: string,
    readonly spec: FoldSpec,
  ) {
    this.nodeId = inner.nodeId;
    this.stateId = inner.stateId;
    this.ids = foldIdsFunction(spec.keys);
  }

  /** Reads fold `fold` of `producer`'s steps from now on (null: none). */
  link(producer: object | null, fold: number): void {
    this.producer = producer;
    this.foldIndex = fold;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    if (this.producer !== null && input instanceof PartitionBatch && input.producer === this.producer) {
      const rows = input.fold(this.foldIndex);
      if (rows !== null) {
        this.foldedSteps++;
        return this.inner.step([this.groupRows(rows)], errors);
      }
    }
    return this.inner.step(inputs, errors);
  }

  /**
   * One row per group from the partitions' fold entries: the earliest first change of the group (by
   * its place in the merged order) with the sum of the entries' net weights, groups in the order of
   * their first changes. A group whose net weight is 0 stays (the single Reduce touches it too).
   */
  private groupRows(fold: FoldRows): ZBatch {
    const n = fold.weights.length;
    const width = fold.cols.length;
    const byGroup = new Map<Value, number>();
    const firstOf: number[] = [];
    const weightOf: number[] = [];
    // The partitions evaluated these keys on the same rows without an error.
    const ids = this.rowIds;
    this.ids(fold.cols, n, ids);
    for (let e = 0; e < n; e++) {
      const id = ids[e] as Value;
      const g = byGroup.get(id);
      if (g === undefined) {
        byGroup.set(id, firstOf.length);
        firstOf.push(e);
        weightOf.push(fold.weights[e] as number);
        continue;
      }
      weightOf[g] = (weightOf[g] as number) + (fold.weights[e] as number);
      if ((fold.order[e] as number) < (fold.order[firstOf[g] as number] as number)) firstOf[g] = e;
    }
    const groups = Array.from({ length: firstOf.length }, (_, g) => g);
    groups.sort(
      (a, b) => (fold.order[firstOf[a] as number] as number) - (fold.order[firstOf[b] as number] as number),
    );
    const cols: Value[][] = Array.from({ length: width }, () => new Array<Value>(groups.length));
    const weights = new Array<number>(groups.length);
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i] as number;
      const e = firstOf[g] as number;
      for (let c = 0; c < width; c++) (cols[c] as Value[])[i] = (fold.cols[c] as Value[])[e] as Value;
      weights[i] = weightOf[g] as number;
    }
    return new ColumnBatch(cols, weights, false);
  }

  stateSize(): number {
    return this.inner.stateSize();
  }

  groupCount(): number {
    return this.inner.groupCount();
  }

  outputRows(): Iterable<readonly Value[]> {
    return this.inner.outputRows();
  }

  trackChanges(on: boolean): void {
    this.inner.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.inner.takeStateDelta(full);
  }

  loadState(values: Iterable<unknown>): void {
    this.inner.loadState(values);
  }
}
