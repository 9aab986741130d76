// Reduce + Merge. Reduce: the batch's rows are combined per group into one partial (a hot key costs
// one partial per batch, not one per row). Merge: each partial folds into the group's stored state,
// and the operator emits -old/+new only when the group's output row actually changed. Groups whose
// row count reaches zero disappear; the global group (no keys) always keeps its one row.
import { SluiceError } from '../../errors.ts';
import type { Value } from '../../types.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { RowFn, ScalarExpr } from '../scalar-expr.ts';
import { compileScalar } from '../scalar-expr.ts';
import { encodeValues, singleKey, valuesEqual } from '../values.ts';
import type { ZBatch } from '../zset.ts';
import type { AggImpl, AggState } from './aggregates.ts';
import { aggStateBytes, aggregateImpl } from './aggregates.ts';

interface Group {
  readonly key: readonly Value[];
  count: number;
  readonly aggs: AggState[];
  /** The row this group currently contributes downstream, or null. */
  out: Value[] | null;
  /** The error this group currently reports instead of a row, or null. */
  error: unknown;
  /** Reduce stage: this batch's partial for the group (row count and per-aggregate partials). */
  partialCount: number;
  partialAggs: AggState[] | null;
  touched: boolean;
}

/** A Map stage fused into the Reduce: evaluated per input row without building projected rows. */
export interface FusedMap {
  readonly filter: ScalarExpr | null;
  readonly project: readonly ScalarExpr[];
  readonly inputColumns: readonly ColumnSpec[];
}

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

export class ReduceOp implements Operator {
  readonly nodeId: number;
  private readonly groups = new Map<Value, Group>();
  private readonly impls: AggImpl[];
  private readonly keyCount: number;
  private readonly keyFns: RowFn[];
  private readonly argFns: (RowFn | null)[];
  private readonly filter: RowFn | null;
  private readonly inputColumns: readonly ColumnSpec[];
  private readonly keyColumns: readonly ColumnSpec[];
  private globalEmitted = false;

  constructor(node: ReduceNode, inputColumns: readonly ColumnSpec[], fused: FusedMap | null) {
    this.nodeId = node.id;
    this.keyCount = node.keyCount;
    this.impls = node.aggregates.map(aggregateImpl);
    this.keyColumns = node.columns.slice(0, node.keyCount);
    if (fused === null) {
      this.filter = null;
      this.inputColumns = inputColumns;
      const col = (i: number): RowFn => (row) => row[i] as Value;
      this.keyFns = Array.from({ length: node.keyCount }, (_, i) => col(i));
      this.argFns = node.aggregates.map((a) => (a.argColumn === null ? null : col(a.argColumn)));
    } else {
      this.filter = fused.filter === null ? null : compileScalar(fused.filter);
      this.inputColumns = fused.inputColumns;
      const fns = fused.project.map(compileScalar);
      this.keyFns = fns.slice(0, node.keyCount);
      this.argFns = node.aggregates.map((a) => (a.argColumn === null ? null : (fns[a.argColumn] as RowFn)));
    }
  }

  private newAggs(): AggState[] {
    return this.impls.map((impl) => impl.create());
  }

  private group(id: Value, key: readonly Value[]): Group {
    const g: Group = { key, count: 0, aggs: this.newAggs(), out: null, error: null, partialCount: 0, partialAggs: null, touched: false };
    this.groups.set(id, g);
    return g;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    // Reduce: the batch's rows fold into one partial per touched group (kept beside the group's
    // state, so finding a group's partial costs no second hash lookup).
    const touched: Group[] = [];
    const groups = this.groups;
    const keyCount = this.keyCount;
    const keyFns = this.keyFns;
    const argFns = this.argFns;
    const impls = this.impls;
    const filter = this.filter;
    const nAggs = impls.length;
    const args: Value[] = new Array<Value>(nAggs);
    const n = input.rows.length;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      const weight = input.weights[i] as number;
      let key: Value[] | null = null;
      let single: Value = null;
      let id: Value;
      try {
        if (filter !== null && filter(row) !== true) continue;
        if (keyCount === 0) {
          id = '';
        } else if (keyCount === 1) {
          single = (keyFns[0] as RowFn)(row);
          id = singleKey(single);
        } else {
          key = new Array<Value>(keyCount);
          for (let k = 0; k < keyCount; k++) key[k] = (keyFns[k] as RowFn)(row);
          id = encodeValues(key);
        }
        for (let a = 0; a < nAggs; a++) {
          const f = argFns[a];
          args[a] = f === null || f === undefined ? null : f(row);
        }
      } catch (error) {
        errors.report(error, row, this.inputColumns, weight);
        continue;
      }
      let g = groups.get(id);
      if (g === undefined) g = this.group(id, key ?? (keyCount === 1 ? [single] : []));
      if (!g.touched) {
        g.touched = true;
        g.partialCount = 0;
        if (g.partialAggs === null) g.partialAggs = this.newAggs();
        else for (let a = 0; a < nAggs; a++) (impls[a] as AggImpl).reset(g.partialAggs[a] as AggState);
        touched.push(g);
      }
      g.partialCount += weight;
      const partial = g.partialAggs as AggState[];
      for (let a = 0; a < nAggs; a++) {
        if (argFns[a] !== null) (impls[a] as AggImpl).accumulate(partial[a] as AggState, args[a] as Value, weight);
      }
    }
    if (keyCount === 0 && !this.globalEmitted) {
      const g = groups.get('') ?? this.group('', []);
      if (!g.touched) {
        g.touched = true;
        g.partialCount = 0;
        g.partialAggs = this.newAggs();
        touched.push(g);
      }
    }
    this.globalEmitted = true;

    // Merge: fold each partial into its group and emit the change of the group's row.
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (let t = 0; t < touched.length; t++) {
      const g = touched[t] as Group;
      g.touched = false;
      g.count += g.partialCount;
      const partial = g.partialAggs as AggState[];
      for (let a = 0; a < nAggs; a++) (impls[a] as AggImpl).merge(g.aggs[a] as AggState, partial[a] as AggState);
      if (g.count < 0) throw new SluiceError('INTERNAL_ERROR', `group of reduce n${this.nodeId} has a negative row count`);
      const old = g.out;
      if (g.count === 0 && keyCount > 0) {
        if (old !== null) {
          rows.push(old);
          weights.push(-1);
        }
        if (g.error !== null) errors.report(g.error, g.key, this.keyColumns, -1);
        groups.delete(keyCount === 1 ? singleKey(g.key[0] as Value) : encodeValues(g.key));
        continue;
      }
      let next: Value[] | null;
      let error: unknown = null;
      try {
        next = new Array<Value>(keyCount + nAggs);
        for (let k = 0; k < keyCount; k++) next[k] = g.key[k] as Value;
        for (let a = 0; a < nAggs; a++) next[keyCount + a] = (impls[a] as AggImpl).result(g.aggs[a] as AggState, g.count);
      } catch (e) {
        next = null;
        error = e;
      }
      if (g.error !== null && (error === null || errorText(error) !== errorText(g.error))) {
        errors.report(g.error, g.key, this.keyColumns, -1);
        g.error = null;
      }
      if (error !== null && g.error === null) {
        errors.report(error, g.key, this.keyColumns, 1);
        g.error = error;
      }
      if (old !== null && next !== null && sameRow(old, next)) continue;
      if (old !== null) {
        rows.push(old);
        weights.push(-1);
      }
      if (next !== null) {
        rows.push(next);
        weights.push(1);
      }
      g.out = next;
    }
    return { rows, weights, consolidated: true };
  }

  /** Current output rows, for a view whose arrangement is this operator's state. */
  *outputRows(): Generator<readonly Value[]> {
    for (const g of this.groups.values()) if (g.out !== null) yield g.out;
  }

  stateSize(): number {
    let bytes = 0;
    for (const g of this.groups.values()) {
      bytes += 64 + g.key.length * 16 + (g.out?.length ?? 0) * 16;
      for (const a of g.aggs) bytes += aggStateBytes(a);
    }
    return bytes;
  }

  groupCount(): number {
    return this.groups.size;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function sameRow(a: readonly Value[], b: readonly Value[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Value;
    const y = b[i] as Value;
    if (x === y) continue;
    if (x === null || y === null || !valuesEqual(x, y)) return false;
  }
  return true;
}
