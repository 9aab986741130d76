// DISTINCT: keeps each row's multiplicity in a counted arrangement and shows one row per group of
// SQL-equal rows (1.5 and 1.50 are one): the one whose text sorts first (compareExactRows: the
// smallest scale) among those present, so the row shown changes when the present texts do, and does
// not depend on arrival order. Output is consolidated with weights ±1.
import type { Value } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import { identicalRows } from '../exact-rows.ts';
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
    this.counts = new CountedArrangement(`distinct n${nodeId}`, null, true);
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
    const counts = this.counts;
    // Each touched group's row shown before the batch (null: none).
    const touched = new Map<string, readonly Value[] | null>();
    for (let i = 0; i < input.rows.length; i++) {
      const row = input.rows[i] as readonly Value[];
      const valueKey = encodeValues(row);
      if (!touched.has(valueKey)) touched.set(valueKey, counts.representative(valueKey)?.row ?? null);
      counts.add(row, input.weights[i] as number, valueKey);
    }
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [valueKey, before] of touched) {
      const after = counts.representative(valueKey)?.row ?? null;
      if (before === after || (before !== null && after !== null && identicalRows(before, after))) continue;
      if (before !== null) {
        rows.push(before);
        weights.push(-1);
      }
      if (after !== null) {
        rows.push(after);
        weights.push(1);
      }
    }
    return { rows, weights, consolidated: true };
  }

  /**
   * The rows held SQL-equal to `row`, each text once with its count: read, changing nothing, by a
   * write's epoch count before the epoch (src/exec/epoch-delta-rows.ts), which tells from them
   * whether the row shown for the value changes (a retraction and an insertion) or stays.
   */
  heldEqualTo(row: readonly Value[]): readonly { readonly row: readonly Value[]; readonly count: number }[] {
    return this.counts.equalRows(encodeValues(row));
  }

  stateSize(): number {
    return this.counts.size * 96;
  }
}
