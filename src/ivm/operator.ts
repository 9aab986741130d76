// The operator contract: a node of a view's dataflow that turns input deltas into an output delta,
// synchronously, once per epoch. Several inputs are allowed (joins come later); row-level failures
// are reported as weighted errors instead of thrown, so a bad row never stops the epoch.
import type { Value } from '../common/types.ts';
import type { ColumnSpec } from './dataflow-plan.ts';
import type { ZBatch } from './zset.ts';

export interface RowErrorSink {
  /**
   * Records that `row` (described by `columns`) fails with `error`, with the row's weight: a later
   * retraction of the same row reports the negated weight and so removes the error.
   */
  report(error: unknown, row: readonly Value[], columns: readonly ColumnSpec[], weight: number): void;
}

export interface Operator {
  readonly nodeId: number;
  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch;
  /** Approximate bytes of state held, for metrics. */
  stateSize(): number;
}
