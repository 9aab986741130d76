// DISTINCT: keeps each row's multiplicity in a counted arrangement and emits +1 when a row first
// appears, -1 when its last copy goes. Output is consolidated with weights ±1.
import type { Value } from '../../common/types.ts';
import type { Operator } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { CountedArrangement } from '../counted-arrangement.ts';

export class DistinctOp implements Operator, Stateful {
  private readonly counts: CountedArrangement;

  constructor(
    readonly nodeId: number,
    readonly stateId: string,
  ) {
    this.counts = new CountedArrangement(`distinct n${nodeId}`);
  }

  trackChanges(on: boolean): void {
    this.counts.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.counts.takeDelta(full);
  }

  loadState(values: Iterable<unknown>): void {
    this.counts.load(values);
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = consolidate(inputs[0] as ZBatch);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (let i = 0; i < input.rows.length; i++) {
      const w = input.weights[i] as number;
      const entry = this.counts.add(input.rows[i] as readonly Value[], w);
      const after = entry.count;
      const before = after - w;
      if (before === 0 && after > 0) {
        rows.push(entry.row);
        weights.push(1);
      } else if (before > 0 && after === 0) {
        rows.push(entry.row);
        weights.push(-1);
      }
    }
    return { rows, weights, consolidated: true };
  }

  stateSize(): number {
    return this.counts.size * 96;
  }
}
