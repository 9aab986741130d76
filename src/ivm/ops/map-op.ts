// Map stage: per-row filter and projection. Stateless and linear, so it maps weights through
// unchanged; a projection's output is not consolidated (two rows may project to one), unless it
// keeps the input's key and no key is both deleted and inserted in the batch.
import type { Value } from '../../common/types.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { RowFn, ScalarExpr } from '../../common/scalar-expr.ts';
import { compileScalar } from '../../common/scalar-expr.ts';
import type { ZBatch } from '../zset.ts';
import { RetractedKeys } from './retracted-keys.ts';

export type RowProjector = (row: readonly Value[]) => Value[];

export function compileProjection(exprs: readonly ScalarExpr[]): RowProjector {
  const fns = exprs.map(compileScalar);
  const n = fns.length;
  if (n === 1) {
    const f0 = fns[0] as RowFn;
    return (row) => [f0(row)];
  }
  if (n === 2) {
    const f0 = fns[0] as RowFn;
    const f1 = fns[1] as RowFn;
    return (row) => [f0(row), f1(row)];
  }
  return (row) => {
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = (fns[i] as RowFn)(row);
    return out;
  };
}

export class MapOp implements Operator {
  private readonly filter: RowFn | null;
  private readonly project: RowProjector | null;
  /** Scratch of `noKeyBothWays`, kept across epochs (retracted-keys.ts). */
  private readonly retracted = new RetractedKeys();

  constructor(
    readonly nodeId: number,
    filter: ScalarExpr | null,
    project: readonly ScalarExpr[] | null,
    private readonly inputColumns: readonly ColumnSpec[],
    /** Where the projection puts the input's unique key (lowering found it kept), else null. */
    private readonly key: readonly number[] | null = null,
  ) {
    this.filter = filter === null ? null : compileScalar(filter);
    this.project = project === null ? null : compileProjection(project);
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    const filter = this.filter;
    const project = this.project;
    const n = input.rows.length;
    // Without a filter every row comes out (but for a row error): the arrays are made at their size
    // once, where pushing grew them step by step and left each smaller copy as garbage.
    const rows: (readonly Value[])[] = filter === null ? new Array<readonly Value[]>(n) : [];
    const weights: number[] = filter === null ? new Array<number>(n) : [];
    let out = 0;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      try {
        if (filter !== null && filter(row) !== true) continue;
        rows[out] = project === null ? row : project(row);
        weights[out++] = input.weights[i] as number;
      } catch (error) {
        errors.report(error, row, this.inputColumns, input.weights[i] as number);
      }
    }
    if (out < rows.length) {
      rows.length = out;
      weights.length = out;
    }
    const key = this.key;
    const consolidated =
      input.consolidated &&
      (project === null ||
        (key !== null && (oneSign(weights) || this.retracted.noKeyBothWays(rows, weights, key))));
    return { rows, weights, consolidated };
  }

  stateSize(): number {
    return 0;
  }
}

/**
 * Whether every weight has one sign: a keyed relation's batch of only inserts (or only deletes)
 * holds each key once, so a projection that keeps the key keeps its rows distinct. (An update is a
 * delete and an insert of one key: projected without the changed column they would be one row.)
 */
function oneSign(weights: readonly number[]): boolean {
  const n = weights.length;
  if (n === 0) return true;
  const positive = (weights[0] as number) > 0;
  for (let i = 1; i < n; i++) if ((weights[i] as number) > 0 !== positive) return false;
  return true;
}
