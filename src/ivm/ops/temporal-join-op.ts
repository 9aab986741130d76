// A processing-time temporal join (`l [LEFT] JOIN r FOR SYSTEM_TIME AS OF PROCTIME() ON …`,
// RisingWave's semantics): each left row, when it arrives, meets the right rows present at that
// epoch (the right arrangement after the epoch's right changes), and its output is then fixed —
// later right changes emit nothing. Each left row is kept with the right rows it met
// (temporal-join-arrivals.ts), so a retraction of it retracts exactly what it produced, the residual,
// the padding and any row errors recomputed from the same pairs. Deterministic: the same epochs in
// the same order give the same changelog, in replay and after a restore.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { RowFn } from '../../common/scalar-expr.ts';
import { compileScalar } from '../../common/scalar-expr.ts';
import { Arrangement } from '../arrangement.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import { compileKey, keyEntryId, type JoinKey, type KeyFn } from '../join-key.ts';
import { TemporalJoinArrivals } from './temporal-join-arrivals.ts';

type TemporalJoinNode = Extract<DataflowNode, { kind: 'temporalJoin' }>;

const NONE: readonly (readonly Value[])[] = [];

export class TemporalJoinOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  private readonly right: Arrangement<JoinKey>;
  private readonly arrivals: TemporalJoinArrivals;
  private readonly leftKey: KeyFn;
  private readonly rightKey: KeyFn;
  private readonly residual: RowFn | null;
  private readonly pad: boolean;
  private readonly rightWidth: number;
  private readonly joinedColumns: readonly ColumnSpec[];
  private exported = false;

  constructor(
    node: TemporalJoinNode,
    private readonly leftColumns: readonly ColumnSpec[],
    private readonly rightColumns: readonly ColumnSpec[],
  ) {
    this.nodeId = node.id;
    this.stateId = node.stateId;
    const width = node.rightKey.length;
    this.right = new Arrangement<JoinKey>(`temporal join n${node.id} right arrangement`, 'R', (key) =>
      keyEntryId(key, width),
    );
    this.arrivals = new TemporalJoinArrivals(`temporal join n${node.id}`);
    this.leftKey = compileKey(node.leftKey);
    this.rightKey = compileKey(node.rightKey);
    this.residual = node.residual === null ? null : compileScalar(node.residual);
    this.pad = node.joinKind === 'left';
    this.rightWidth = rightColumns.length;
    this.joinedColumns = node.columns;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    // The right side first: a left row arriving in this epoch meets the right side as the epoch
    // leaves it (so a view created over existing rows joins them with the right side's contents).
    const right = consolidate(inputs[1] as ZBatch);
    for (let i = 0; i < right.rows.length; i++) {
      const row = right.rows[i] as readonly Value[];
      const w = right.weights[i] as number;
      let key: JoinKey | null;
      try {
        key = this.rightKey(row);
      } catch (error) {
        errors.report(error, row, this.rightColumns, w);
        continue;
      }
      if (key !== null) this.right.addRow(key, row, w, 0);
    }
    const left = consolidate(inputs[0] as ZBatch);
    for (let i = 0; i < left.rows.length; i++) {
      const row = left.rows[i] as readonly Value[];
      const w = left.weights[i] as number;
      let key: JoinKey | null;
      try {
        key = this.leftKey(row);
      } catch (error) {
        // The key fails alike on every copy of the row: nothing is kept, the retraction fails again.
        errors.report(error, row, this.leftColumns, w);
        continue;
      }
      if (w > 0) {
        const bucket = key === null ? undefined : this.right.get(key);
        let met = NONE;
        let counts: number[] | null = null;
        if (bucket !== undefined) {
          const rowsMet: (readonly Value[])[] = [];
          for (const e of bucket.rows.values()) {
            if (e.count !== 1 && counts === null) counts = rowsMet.map(() => 1);
            rowsMet.push(e.row);
            counts?.push(e.count);
          }
          met = rowsMet;
        }
        this.arrivals.add(row, w, met, counts);
        this.emit(row, met, counts, w, rows, weights, errors);
      } else {
        for (const taken of this.arrivals.take(row, -w))
          this.emit(taken.row, taken.met, taken.counts, -taken.count, rows, weights, errors);
      }
    }
    return { rows, weights, consolidated: false };
  }

  /** The rows a left row gives with the right rows it met (with their counts), times `w`. */
  private emit(
    row: readonly Value[],
    met: readonly (readonly Value[])[],
    counts: readonly number[] | null,
    w: number,
    rows: (readonly Value[])[],
    weights: number[],
    errors: RowErrorSink,
  ): void {
    let matched = 0;
    for (let i = 0; i < met.length; i++) {
      const other = met[i] as readonly Value[];
      const count = counts === null ? 1 : (counts[i] as number);
      const joined = concatRows(row, other);
      if (this.residual !== null) {
        let ok: boolean;
        try {
          ok = this.residual(joined) === true;
        } catch (error) {
          errors.report(error, joined, this.joinedColumns, w * count);
          ok = false;
        }
        if (!ok) continue;
      }
      rows.push(joined);
      weights.push(w * count);
      matched += count;
    }
    if (this.pad && matched === 0) {
      const padded = concatRows(row, new Array<Value>(this.rightWidth).fill(null));
      rows.push(padded);
      weights.push(w);
    }
  }

  trackChanges(on: boolean): void {
    this.right.trackChanges(on);
    this.arrivals.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    this.exported = true;
    const deltas = [this.right.takeDelta(replaceAll), this.arrivals.takeDelta(replaceAll)];
    return {
      replaceAll,
      upserts: deltas.flatMap((d) => d.upserts),
      deletes: deltas.flatMap((d) => d.deletes),
    };
  }

  loadState(values: Iterable<unknown>): void {
    const right: unknown[] = [];
    const arrivals: unknown[] = [];
    for (const v of values) {
      if (TemporalJoinArrivals.owns(v)) arrivals.push(v);
      else if (this.right.owns(v)) right.push(v);
      else throw new SluiceError('INTERNAL_ERROR', `checkpoint entry of ${this.stateId} names no part of it`);
    }
    const keyOf = this.rightKey;
    this.right.load(right, (row) => keyOf(row) as JoinKey);
    this.arrivals.load(arrivals);
    this.exported = true;
  }

  stateSize(): number {
    return this.right.stateBytes + this.arrivals.stateBytes;
  }

  /** Right rows arranged and left arrivals held (for tests and metrics). */
  heldRows(): { readonly right: number; readonly arrivals: number } {
    return { right: this.right.size, arrivals: this.arrivals.size };
  }
}

/** `a` then `b` in one new row. */
function concatRows(a: readonly Value[], b: readonly Value[]): Value[] {
  const n = a.length;
  const out = new Array<Value>(n + b.length);
  for (let i = 0; i < n; i++) out[i] = a[i] as Value;
  for (let i = 0; i < b.length; i++) out[n + i] = b[i] as Value;
  return out;
}
