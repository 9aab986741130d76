// Z-set batches for operator unit tests: a batch from [row, weight] pairs, the empty batch, a
// consolidated output as sorted "+[row]×n" strings, an output folded into a view's multiset, and
// an error sink that fails on any report.
import assert from 'node:assert/strict';
import type { Value } from '../../src/common/types.ts';
import type { Operator, RowErrorSink } from '../../src/ivm/operator.ts';
import { encodeValues } from '../../src/common/values.ts';
import { consolidate, type ZBatch } from '../../src/ivm/zset.ts';

export function batch(entries: [Value[], number][]): ZBatch {
  return { rows: entries.map((e) => e[0]), weights: entries.map((e) => e[1]), consolidated: false };
}

export const none = batch([]);

/** The consolidated output as sorted "+[row]×n" strings. */
export function changes(out: ZBatch): string[] {
  const c = consolidate(out);
  return c.rows
    .map(
      (r, i) =>
        `${(c.weights[i] as number) > 0 ? '+' : '-'}${JSON.stringify(r)}×${Math.abs(c.weights[i] as number)}`,
    )
    .sort();
}

/** A sink for steps that must report no row error. */
export const failOnRowError: RowErrorSink = { report: () => assert.fail('no row error expected') };

/** One step of `op` over `inputs`, failing on any row error, as `changes` strings. */
export function stepChanges(op: Operator, inputs: readonly ZBatch[]): string[] {
  return changes(op.step(inputs, failOnRowError));
}

/** Folds an operator's output into `into` (encoded row → multiplicity), failing on a retraction of a row never emitted. */
export function integrate(into: Map<string, number>, out: ZBatch): void {
  out.rows.forEach((r, i) => {
    const k = encodeValues(r);
    const n = (into.get(k) ?? 0) + (out.weights[i] as number);
    assert.ok(n >= 0, `a retraction of a row never emitted: ${r.join(',')}`);
    if (n === 0) into.delete(k);
    else into.set(k, n);
  });
}
