// DISTINCT: keeps each row's multiplicity and emits +1 when a row first appears, -1 when its last
// copy goes. Output is consolidated with weights ±1.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { Operator } from '../operator.ts';
import { encodeValues } from '../../common/values.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { loadMultiset, multisetDelta } from '../state-entries.ts';

export class DistinctOp implements Operator, Stateful {
  private readonly counts = new Map<string, { row: readonly Value[]; count: number }>();
  private tracking = false;
  private exported = false;
  private readonly dirty = new Set<string>();

  constructor(
    readonly nodeId: number,
    readonly stateId: string,
  ) {}

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  takeStateDelta(full: boolean): StateDelta {
    const delta = multisetDelta(this.counts, this.dirty, full || !this.exported);
    this.exported = true;
    return delta;
  }

  loadState(values: Iterable<unknown>): void {
    loadMultiset(this.counts, values);
    this.dirty.clear();
    this.exported = true;
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = consolidate(inputs[0] as ZBatch);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (let i = 0; i < input.rows.length; i++) {
      const row = input.rows[i] as readonly Value[];
      const w = input.weights[i] as number;
      const key = encodeValues(row);
      const entry = this.counts.get(key);
      const before = entry?.count ?? 0;
      const after = before + w;
      if (this.tracking) this.dirty.add(key);
      if (after < 0)
        throw new SluiceError('INTERNAL_ERROR', `distinct n${this.nodeId} saw a negative multiplicity`);
      if (after === 0) this.counts.delete(key);
      else if (entry === undefined) this.counts.set(key, { row, count: after });
      else entry.count = after;
      if (before === 0 && after > 0) {
        rows.push(row);
        weights.push(1);
      } else if (before > 0 && after === 0) {
        rows.push(entry?.row ?? row);
        weights.push(-1);
      }
    }
    return { rows, weights, consolidated: true };
  }

  stateSize(): number {
    return this.counts.size * 96;
  }
}
