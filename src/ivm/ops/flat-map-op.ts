// FlatMap: each input row, with its weight, once per tuple its generator yields, the tuple appended
// (src/common/expand.ts; HOP's windows). Stateless and linear: a retraction yields the same tuples,
// so it retracts exactly the rows the insertion produced. The output is not consolidated (two input
// rows may yield one output row).
import type { Value } from '../../common/types.ts';
import { compileExpand, type ExpandFn, type ExpandGenerator } from '../../common/expand.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { type JoinBudget, chargeBudget } from './join-output-size.ts';

export class FlatMapOp implements Operator {
  private readonly expand: ExpandFn;

  constructor(
    readonly nodeId: number,
    generator: ExpandGenerator,
    private readonly inputColumns: readonly ColumnSpec[],
    /**
     * An ad-hoc SELECT's row budget, shared with its joins: rows this operator emits count against
     * it, so a HOP over a large table fails early (RESULT_TOO_LARGE) instead of filling memory.
     * Views run without.
     */
    private readonly budget: JoinBudget | null = null,
  ) {
    this.expand = compileExpand(generator);
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const n = input.rows.length;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      const weight = input.weights[i] as number;
      let tuples: Value[][];
      try {
        tuples = this.expand(row);
      } catch (error) {
        // A window beyond the timestamp range: the row's error, as a Map reports one.
        errors.report(error, row, this.inputColumns, weight);
        continue;
      }
      if (this.budget !== null) this.charge(tuples.length);
      for (const tuple of tuples) {
        rows.push([...row, ...tuple]);
        weights.push(weight);
      }
    }
    return { rows, weights, consolidated: false };
  }

  private charge(rows: number): void {
    chargeBudget(
      this.budget as JoinBudget,
      rows,
      'windows',
      'add a narrower WHERE in a subquery as the relation, or create a materialized view and read it by pages',
    );
  }

  stateSize(): number {
    return 0;
  }
}
