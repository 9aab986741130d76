// Aggregate strategies, stored column-wise: each aggregate keeps one typed array (or sparse table)
// per field, indexed by the group's slot, so a group costs a few numbers rather than several heap
// objects. Invertible aggregates (COUNT, SUM, AVG) keep O(1) state and fold a batch partial by
// addition; multiset aggregates (MIN, MAX, COUNT DISTINCT) keep value → count per group (an
// arrangement keyed by the group's slot) so retracting the current minimum reveals the next one. Sums keep their inputs' integer parts exactly
// (a bigint in a side table beyond the safe-integer range), so retraction undoes an insert exactly.
// The columns: invertible-aggregate.ts (COUNT, SUM, AVG), multiset-aggregate.ts (MIN, MAX, DISTINCT,
// ...), aggregates-more.ts, decimal-sum.ts, ordered-aggregate.ts; their contract: aggregate-column.ts.
import type { AggregateSpec } from '../dataflow-plan.ts';
import { DECIMAL_SUM_WIDTH, DecimalSumColumn, usesDecimalSum } from './decimal-sum.ts';
import { isMoreAggregate, moreAggregateColumn, moreRecordWidth } from './aggregates-more.ts';
import { OrderedAggColumn } from './ordered-aggregate.ts';
import type { AggColumn, GroupRecords } from './aggregate-column.ts';
import { InvertibleColumn } from './invertible-aggregate.ts';
import { ExtremeColumn } from './extreme-aggregate.ts';
import { DistinctSumColumn, MultisetColumn } from './multiset-aggregate.ts';

export type { AggColumn, GroupRecords } from './aggregate-column.ts';
export { inlinePartial, type InlinePartial } from './invertible-aggregate.ts';

function summing(spec: AggregateSpec): boolean {
  return spec.fn === 'sum' || spec.fn === 'avg';
}

/**
 * Doubles an aggregate needs in the group record, and (the same number) in the batch's partials:
 * every aggregate kept in the records stages its partial field for field beside its state.
 */
export function recordWidth(spec: AggregateSpec): number {
  if (spec.orderBy !== undefined) return 0;
  if (isMoreAggregate(spec)) return moreRecordWidth(spec); // BOOL_AND/OR, variance (aggregates-more.ts)
  if (usesDecimalSum(spec)) return DECIMAL_SUM_WIDTH; // exact numeric sums (decimal-sum.ts)
  if (spec.strategy === 'extreme') return 0;
  if (spec.strategy === 'multiset') return summing(spec) ? InvertibleColumn.width(spec) : 0;
  return InvertibleColumn.width(spec);
}

/**
 * An aggregate's column; sums and counts live at `base` inside the shared group records, and their
 * batch partials at `pbase` inside the partials (indexed by touch order).
 */
export function aggregateColumn(
  spec: AggregateSpec,
  record: GroupRecords,
  base: number,
  partials: GroupRecords,
  pbase: number,
): AggColumn {
  if (spec.orderBy !== undefined) return new OrderedAggColumn({ ...spec, orderBy: spec.orderBy }); // ordered-aggregate.ts
  if (isMoreAggregate(spec)) return moreAggregateColumn(spec, record, base, partials, pbase);
  if (spec.strategy === 'extreme') return new ExtremeColumn(spec); // extreme-aggregate.ts
  // exact numeric sums (decimal-sum.ts)
  if (usesDecimalSum(spec) && spec.strategy !== 'multiset')
    return new DecimalSumColumn(spec, record, base, partials, pbase);
  if (spec.strategy !== 'multiset') return new InvertibleColumn(spec, record, base, partials, pbase);
  return summing(spec)
    ? new DistinctSumColumn(spec, record, base, partials, pbase)
    : new MultisetColumn(spec);
}
