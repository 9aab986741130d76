// UNION / INTERSECT / EXCEPT [ALL]: counts each distinct row on each side (one counted arrangement
// per side, row → count, NULLs equal as in SQL set operations) and emits, per row touched by the
// epoch, the change of its output multiplicity — min(a, b) for INTERSECT ALL, max(a − b, 0) for
// EXCEPT ALL, 0 or 1 for the set forms (a + b > 0, both > 0, a > 0 and b = 0). Output consolidated,
// no zero weights.
// Rows are counted by SQL equality (1.5 and 1.50 are one row to the set operation) but each side
// keeps its rows' texts: the output's copies of a row are drawn from the rows present — both sides'
// for UNION, the left side's for INTERSECT and EXCEPT — in compareExactRows order (the smallest
// scale first), so the text shown is one a current row holds, whatever order rows came in.
import type { Value } from '../../common/types.ts';
import { encodeExactValues, encodeValues } from '../../common/values.ts';
import { CountedArrangement, type CountedRow } from '../counted-arrangement.ts';
import { compareExactRows } from '../exact-rows.ts';
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
    this.sides = [new CountedArrangement(label, 'l', true), new CountedArrangement(label, 'r', true)];
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
    // The groups this epoch touches, each with its output copies before the epoch.
    const touched = new Map<string, Map<string, Drawn>>();
    for (let side = 0; side < 2; side++) {
      const batch = inputs[side];
      if (batch === undefined) continue;
      const arranged = this.sides[side] as CountedArrangement;
      for (let i = 0; i < batch.rows.length; i++) {
        const row = batch.rows[i] as readonly Value[];
        const w = batch.weights[i] as number;
        if (w === 0) continue;
        const valueKey = encodeValues(row);
        if (!touched.has(valueKey)) touched.set(valueKey, this.draw(valueKey));
        arranged.add(row, w, valueKey);
      }
    }
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [valueKey, before] of touched) {
      const after = this.draw(valueKey);
      for (const [k, { row, n }] of after) {
        const change = n - (before.get(k)?.n ?? 0);
        if (change !== 0) {
          rows.push(row);
          weights.push(change);
        }
      }
      for (const [k, { row, n }] of before) {
        if (after.has(k)) continue;
        rows.push(row);
        weights.push(-n);
      }
    }
    return { rows, weights, consolidated: true };
  }

  /** The output's copies of the rows SQL-equal to `valueKey`, by their exact encodings. */
  private draw(valueKey: string): Map<string, Drawn> {
    const [left, right] = this.sides;
    const l = left.equalRows(valueKey);
    const r = right.equalRows(valueKey);
    const drawn = new Map<string, Drawn>();
    let a = 0;
    let b = 0;
    for (const e of l) a += e.count;
    for (const e of r) b += e.count;
    let m = setMultiplicity(this.op, this.all, a, b);
    if (m === 0) return drawn;
    const from: readonly CountedRow[] = this.op === 'union' && r.length > 0 ? [...l, ...r] : l;
    if (from.length === 1) {
      const only = from[0] as CountedRow;
      drawn.set(encodeExactValues(only.row), { row: only.row, n: m });
      return drawn;
    }
    // Identical rows of both sides (UNION) merge; then copies go to the rows in text order.
    const merged = new Map<string, Drawn>();
    for (const e of from) {
      const k = encodeExactValues(e.row);
      const at = merged.get(k);
      if (at === undefined) merged.set(k, { row: e.row, n: e.count });
      else at.n += e.count;
    }
    const order = [...merged].sort((x, y) => compareExactRows(x[1].row, y[1].row));
    for (const [k, { row, n }] of order) {
      if (m === 0) break;
      const take = Math.min(n, m);
      drawn.set(k, { row, n: take });
      m -= take;
    }
    return drawn;
  }

  stateSize(): number {
    return (this.sides[0].size + this.sides[1].size) * 112;
  }
}

/** Copies of one row in a set operation's output. */
interface Drawn {
  readonly row: readonly Value[];
  n: number;
}
