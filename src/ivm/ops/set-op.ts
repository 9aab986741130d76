// UNION / INTERSECT / EXCEPT [ALL]: counts each distinct row on each side (row → [left count,
// right count], NULLs equal as in SQL set operations) and emits, per row touched by the epoch, the
// change of its output multiplicity — min(a, b) for INTERSECT ALL, max(a − b, 0) for EXCEPT ALL, 0
// or 1 for the set forms (a + b > 0, both > 0, a > 0 and b = 0). Output consolidated, no zero weights.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import type { SetOpKind } from '../dataflow-plan.ts';
import type { Operator } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';

interface Counts {
  readonly row: readonly Value[];
  left: number;
  right: number;
}

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
  private readonly counts = new Map<string, Counts>();
  private tracking = false;
  private exported = false;
  private readonly dirty = new Set<string>();

  constructor(
    readonly nodeId: number,
    readonly stateId: string,
    private readonly op: SetOpKind,
    private readonly all: boolean,
  ) {}

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    const upserts: (readonly [string, unknown])[] = [];
    const deletes: string[] = [];
    const entry = (c: Counts): unknown => ({ r: c.row, a: c.left, b: c.right });
    if (replaceAll) for (const [k, c] of this.counts) upserts.push([k, entry(c)]);
    else {
      for (const k of this.dirty) {
        const c = this.counts.get(k);
        if (c === undefined) deletes.push(k);
        else upserts.push([k, entry(c)]);
      }
    }
    this.dirty.clear();
    this.exported = true;
    return { replaceAll, upserts, deletes };
  }

  loadState(values: Iterable<unknown>): void {
    this.counts.clear();
    for (const v of values) {
      const e = v as { r: Value[]; a: number; b: number };
      this.counts.set(encodeValues(e.r), { row: e.r, left: e.a, right: e.b });
    }
    this.dirty.clear();
    this.exported = true;
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    // The rows this epoch touches, each with its multiplicity before the epoch.
    const touched = new Map<string, { entry: Counts; before: number }>();
    for (let side = 0; side < 2; side++) {
      const batch = inputs[side];
      if (batch === undefined) continue;
      for (let i = 0; i < batch.rows.length; i++) {
        const row = batch.rows[i] as readonly Value[];
        const w = batch.weights[i] as number;
        if (w === 0) continue;
        const key = encodeValues(row);
        let t = touched.get(key);
        if (t === undefined) {
          let entry = this.counts.get(key);
          if (entry === undefined) {
            entry = { row, left: 0, right: 0 };
            this.counts.set(key, entry);
          }
          t = { entry, before: setMultiplicity(this.op, this.all, entry.left, entry.right) };
          touched.set(key, t);
        }
        if (side === 0) t.entry.left += w;
        else t.entry.right += w;
      }
    }
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [key, { entry, before }] of touched) {
      if (entry.left < 0 || entry.right < 0) {
        throw new SluiceError('INTERNAL_ERROR', `set operation n${this.nodeId} saw a negative multiplicity`);
      }
      if (this.tracking) this.dirty.add(key);
      if (entry.left === 0 && entry.right === 0) this.counts.delete(key);
      const change = setMultiplicity(this.op, this.all, entry.left, entry.right) - before;
      if (change !== 0) {
        rows.push(entry.row);
        weights.push(change);
      }
    }
    return { rows, weights, consolidated: true };
  }

  stateSize(): number {
    return this.counts.size * 112;
  }
}
