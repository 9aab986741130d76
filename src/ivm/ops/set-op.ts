// UNION / INTERSECT / EXCEPT [ALL]: counts each distinct row on each side (one counted arrangement
// per side, row → count, NULLs equal as in SQL set operations) and emits, per row touched by the
// epoch, the change of its output multiplicity — min(a, b) for INTERSECT ALL, max(a − b, 0) for
// EXCEPT ALL, 0 or 1 for the set forms (a + b > 0, both > 0, a > 0 and b = 0). Output consolidated,
// no zero weights.
import type { Value } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import { CountedArrangement } from '../counted-arrangement.ts';
import type { SetOpKind } from '../dataflow-plan.ts';
import type { Operator } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';

/** A row's output multiplicity from its counts on the two sides. */
export function setMultiplicity(op: SetOpKind, all: boolean, a: number, b: number): number {
  switch (op) {
    case 'union':
      return all ? a + b : a + b > 0 ? 1 : 0;
    case 'intersect':
      return all ? Math.min(a, b) : a > 0 && b > 0 ? 1 : 0;
    case 'except':
      return all ? Math.max(a - b, 0) : a > 0 && b === 0 ? 1 : 0;
  }
}

export class SetOpOp implements Operator, Stateful {
  /** Each side's rows with their multiplicities, keyed by the row's encoding. */
  private readonly sides: readonly [CountedArrangement, CountedArrangement];
  private exported = false;

  constructor(
    readonly nodeId: number,
    readonly stateId: string,
    private readonly op: SetOpKind,
    private readonly all: boolean,
  ) {
    const label = `set operation n${nodeId}`;
    this.sides = [new CountedArrangement(label, 'l'), new CountedArrangement(label, 'r')];
  }

  trackChanges(on: boolean): void {
    for (const side of this.sides) side.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    this.exported = true;
    const [left, right] = this.sides.map((side) => side.takeDelta(replaceAll)) as [StateDelta, StateDelta];
    return {
      replaceAll,
      upserts: [...left.upserts, ...right.upserts],
      deletes: [...left.deletes, ...right.deletes],
    };
  }

  loadState(values: Iterable<unknown>): void {
    const entries = [...values];
    for (const side of this.sides) side.load(entries.filter((e) => side.owns(e)));
    this.exported = true;
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const [left, right] = this.sides;
    // The rows this epoch touches, each with its output multiplicity before the epoch.
    const touched = new Map<string, { row: readonly Value[]; before: number }>();
    for (let side = 0; side < 2; side++) {
      const batch = inputs[side];
      if (batch === undefined) continue;
      const arranged = this.sides[side] as CountedArrangement;
      for (let i = 0; i < batch.rows.length; i++) {
        const row = batch.rows[i] as readonly Value[];
        const w = batch.weights[i] as number;
        if (w === 0) continue;
        const key = encodeValues(row);
        if (!touched.has(key)) {
          const before = setMultiplicity(this.op, this.all, left.count(key), right.count(key));
          touched.set(key, { row, before });
        }
        arranged.add(row, w, key);
      }
    }
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [key, { row, before }] of touched) {
      const change = setMultiplicity(this.op, this.all, left.count(key), right.count(key)) - before;
      if (change !== 0) {
        rows.push(row);
        weights.push(change);
      }
    }
    return { rows, weights, consolidated: true };
  }

  stateSize(): number {
    return (this.sides[0].size + this.sides[1].size) * 112;
  }
}
