// UNION ALL: the deltas of every input, concatenated and consolidated. Stateless: a row's
// multiplicity in the output is the sum of its multiplicities in the inputs, so the sum of the
// input deltas is the output delta.
import type { Operator } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import type { Value } from '../../common/types.ts';

export class UnionOp implements Operator {
  constructor(readonly nodeId: number) {}

  step(inputs: readonly ZBatch[]): ZBatch {
    const nonEmpty = inputs.filter((b) => b.rows.length > 0);
    if (nonEmpty.length === 0) return { rows: [], weights: [], consolidated: true };
    if (nonEmpty.length === 1) return consolidate(nonEmpty[0] as ZBatch);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const b of nonEmpty) {
      for (let i = 0; i < b.rows.length; i++) {
        rows.push(b.rows[i] as readonly Value[]);
        weights.push(b.weights[i] as number);
      }
    }
    return consolidate({ rows, weights, consolidated: false });
  }

  stateSize(): number {
    return 0;
  }
}
