// MIN, MAX, COUNT DISTINCT, STRING_AGG and the like as multiset aggregates (value → count per
// group), and SUM/AVG(DISTINCT) as a multiset feeding an invertible sum.
import type { Value } from '../../common/types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { compareExact, compareValues, exactKey, singleKey } from '../../common/values.ts';
import { Arrangement } from '../arrangement.ts';
import { DecimalSumColumn, usesDecimalSum } from './decimal-sum.ts';
import { compareJsonbElements, jsonbAgg, jsonbElementKey, stringAgg } from './aggregates-more.ts';
import { arrayAgg } from './array-agg.ts';
import { jsonbObjectAgg } from './jsonb-object-agg.ts';
import type { AggColumn, GroupRecords, SerializedAgg } from './aggregate-column.ts';
import { InvertibleColumn } from './invertible-aggregate.ts';

type ValueCounts = Map<Value, [Value, number]>;

function sortedIndex(sorted: readonly Value[], v: Value, cmp: (a: Value, b: Value) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(sorted[mid] as Value, v) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first of the values equal to `v` in a group's exactly sorted values (undefined: none). */
function representative(sorted: readonly Value[], v: Value): Value | undefined {
  const i = sortedIndex(sorted, v, compareValues);
  return i < sorted.length && compareValues(sorted[i] as Value, v) === 0 ? sorted[i] : undefined;
}

/** For each value a batch touches (one per equal set): its representative before the batch. */
function representativesOf(p: ValueCounts, sorted: readonly Value[]): Map<Value, [Value, Value | undefined]> {
  const out = new Map<Value, [Value, Value | undefined]>();
  for (const [value] of p.values()) {
    const k = singleKey(value);
    if (!out.has(k)) out.set(k, [value, representative(sorted, value)]);
  }
  return out;
}

/**
 * MIN, MAX, COUNT DISTINCT, STRING_AGG: per group, an arrangement of its values with their multiplicities
 * (group slot → value → count), and for MIN/MAX/STRING_AGG the distinct values kept sorted beside it.
 *
 * MIN/MAX and SUM/AVG(DISTINCT) of numerics key their values exactly (exactKey: 1.5 and
 * 1.50 are two entries), so the value shown is always one a current row holds; of equal values that
 * print differently, the first in compareExact's order (the smallest scale) — one answer whatever
 * order rows came and left in (PostgreSQL keeps the later of equal arguments: scan order).
 */
export class MultisetColumn implements AggColumn {
  private readonly counts: Arrangement<number, Value, Value>;
  private sorted: (Value[] | undefined)[] = [];
  /**
   * Deferring (a one-off evaluation, deferred-output.ts): per group, the values new to it since its
   * values were last sorted, in arrival order; null: each new value is inserted in place at once
   * (a splice, which moves the values after it: over one large group that grows with its square).
   */
  private appended: (Value[] | undefined)[] | null = null;
  /** A batch's values per touched group, summed before they fold into the arrangement. */
  private readonly partial = new Map<number, ValueCounts>();
  private readonly ordered: boolean;
  /** Multiset keys and sort order: JSONB_AGG's elements keep their text (1.5 and 1.50 both show). */
  private readonly keyOf: (v: Value) => Value;
  private readonly cmp: (a: Value, b: Value) => number;
  /** SUM/AVG(DISTINCT) over exact keys: tells the sum when a value's representative changes. */
  private readonly representatives: boolean;

  /**
   * `onDistinct` hears each value that appears in (+1) or leaves (-1) a group's multiset during
   * merge: how SUM/AVG(DISTINCT) keep their sum of distinct values in O(1) per change.
   */
  constructor(
    readonly spec: AggregateSpec,
    private readonly onDistinct?: (slot: number, value: Value, weight: 1 | -1, p: number) => void,
  ) {
    this.representatives = onDistinct !== undefined && spec.argType?.kind === 'numeric';
    const exact = spec.fn === 'min' || spec.fn === 'max' || this.representatives;
    // ARRAY_AGG keys and orders its values exactly too: each row's element shows as written
    const exactValues = exact || spec.fn === 'array_agg';
    // JSONB_OBJECT_AGG's [key, value] pairs are jsonb elements too (jsonb-object-agg.ts)
    const jsonb = spec.fn === 'jsonb_agg' || spec.fn === 'jsonb_object_agg';
    this.ordered = exactValues || spec.fn === 'string_agg' || jsonb;
    this.keyOf = jsonb ? jsonbElementKey : exactValues ? exactKey : singleKey;
    this.cmp = jsonb ? compareJsonbElements : exactValues ? compareExact : compareValues;
    // Checkpointed by the Reduce, group by group (serialize): its own delta is not used.
    this.counts = new Arrangement(`${spec.fn} state`, '');
  }

  clear(slot: number): void {
    this.counts.deleteKey(slot);
    this.sorted[slot] = undefined;
    if (this.appended !== null) this.appended[slot] = undefined;
  }

  /** New values wait, unsorted, until the group's values are read (deferred-output.ts). */
  deferSorting(): void {
    this.appended ??= [];
  }

  /**
   * Sorts the group's waiting values into its sorted ones, in the order inserting them one by one
   * at their lower bound gives: a value before the values it compares equal to that came earlier.
   */
  private settle(slot: number): void {
    const waiting = this.appended?.[slot];
    if (waiting === undefined) return;
    (this.appended as (Value[] | undefined)[])[slot] = undefined;
    const sorted = this.sorted[slot];
    if (sorted === undefined) return;
    const cmp = this.cmp;
    waiting.reverse().sort(cmp); // stable: equal values latest first
    const merged: Value[] = new Array<Value>(sorted.length + waiting.length);
    let i = 0;
    let j = 0;
    let o = 0;
    while (i < sorted.length && j < waiting.length) {
      merged[o++] =
        cmp(waiting[j] as Value, sorted[i] as Value) <= 0 ? (waiting[j++] as Value) : (sorted[i++] as Value);
    }
    while (i < sorted.length) merged[o++] = sorted[i++] as Value;
    while (j < waiting.length) merged[o++] = waiting[j++] as Value;
    this.sorted[slot] = merged;
  }

  resetPartial(slot: number): void {
    this.partial.delete(slot);
  }

  accumulate(slot: number, value: Value, weight: number): void {
    if (value === null) return;
    let p = this.partial.get(slot);
    if (p === undefined) {
      p = new Map();
      this.partial.set(slot, p);
    }
    const k = this.keyOf(value);
    const entry = p.get(k);
    if (entry === undefined) p.set(k, [value, weight]);
    else entry[1] += weight;
  }

  merge(slot: number, touch: number): void {
    const p = this.partial.get(slot);
    if (p === undefined) return;
    this.partial.delete(slot);
    const appended = this.appended;
    // the representatives are read from the sorted values
    if (appended !== null && this.representatives) this.settle(slot);
    let sorted = this.sorted[slot];
    if (this.ordered && sorted === undefined) {
      sorted = [];
      this.sorted[slot] = sorted;
    }
    // SUM/AVG(DISTINCT) of exact keys: each touched value's representative before the batch
    const before = this.representatives ? representativesOf(p, sorted as Value[]) : undefined;
    const onDistinct = this.representatives ? undefined : this.onDistinct;
    for (const [k, [value, delta]] of p) {
      if (delta === 0) continue;
      const entry = this.counts.add(slot, k, value, delta, 0);
      if (entry === null) {
        onDistinct?.(slot, value, -1, touch);
        if (sorted !== undefined && appended?.[slot] !== undefined) {
          this.settle(slot);
          sorted = this.sorted[slot] as Value[];
        }
        if (sorted !== undefined) {
          const i = sortedIndex(sorted, value, this.cmp);
          if (i < sorted.length && this.cmp(sorted[i] as Value, value) === 0) sorted.splice(i, 1);
        }
      } else if (entry.count === delta) {
        // New in the group.
        if (sorted !== undefined) {
          if (appended === null) sorted.splice(sortedIndex(sorted, value, this.cmp), 0, value);
          else (appended[slot] ??= []).push(value);
        }
        onDistinct?.(slot, value, 1, touch);
      }
    }
    if (before === undefined) return;
    for (const [value, old] of before.values()) {
      const now = representative(sorted as Value[], value);
      if (now === old) continue;
      if (old !== undefined) this.onDistinct?.(slot, old, -1, touch);
      if (now !== undefined) this.onDistinct?.(slot, now, 1, touch);
    }
  }

  result(slot: number): Value {
    if (this.spec.fn === 'count') return this.counts.get(slot)?.rows.size ?? 0;
    this.settle(slot);
    const sorted = this.sorted[slot];
    if (sorted === undefined || sorted.length === 0) return null;
    if (this.spec.fn === 'string_agg') return stringAgg(this.spec, sorted, this.counts, slot); // aggregates-more.ts
    if (this.spec.fn === 'jsonb_agg') return jsonbAgg(this.spec, sorted, this.counts, slot); // aggregates-more.ts
    if (this.spec.fn === 'array_agg') return arrayAgg(this.spec, sorted, this.counts, slot); // array-agg.ts
    if (this.spec.fn === 'jsonb_object_agg') return jsonbObjectAgg(sorted); // jsonb-object-agg.ts
    if (this.spec.fn === 'min') return sorted[0] as Value;
    // MAX: the first of the largest equal values, as MIN shows the first of the smallest
    return representative(sorted, sorted[sorted.length - 1] as Value) as Value;
  }

  serialize(slot: number): unknown {
    // Copies of the (value, count) pairs: merge() updates counts in place, and a checkpoint's
    // delta must keep the counts of the epoch it was taken at while it is written in slices.
    const bucket = this.counts.get(slot);
    return {
      n: 0,
      s: 0,
      v: bucket === undefined ? [] : Array.from(bucket.rows.values(), (e) => [e.row, e.count]),
    };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedAgg;
    this.counts.deleteKey(slot);
    if (this.appended !== null) this.appended[slot] = undefined;
    for (const [value, count] of d.v ?? []) this.counts.add(slot, this.keyOf(value), value, count, 0);
    const bucket = this.counts.get(slot);
    this.sorted[slot] = this.ordered
      ? bucket === undefined
        ? []
        : Array.from(bucket.rows.values(), (e) => e.row).sort(this.cmp)
      : undefined;
  }

  bytes(slot: number): number {
    return 16 + (this.counts.get(slot)?.rows.size ?? 0) * (this.ordered ? 80 : 64);
  }
}

/**
 * SUM/AVG(DISTINCT x): a multiset of the group's values (value → count) decides which values are
 * present; an invertible sum over the distinct values hears each value as it appears or leaves, so
 * a change costs O(1) beyond the multiset, and its count is the number of distinct values (AVG's
 * divisor).
 */
export class DistinctSumColumn implements AggColumn {
  private readonly values: MultisetColumn;
  private readonly sum: AggColumn;

  constructor(
    readonly spec: AggregateSpec,
    record: GroupRecords,
    base: number,
    partials: GroupRecords,
    pbase: number,
  ) {
    // exact numeric sums (decimal-sum.ts)
    this.sum = usesDecimalSum(spec)
      ? new DecimalSumColumn(spec, record, base, partials, pbase)
      : new InvertibleColumn(spec, record, base, partials, pbase);
    this.values = new MultisetColumn(spec, (slot, value, weight, p) =>
      this.sum.accumulate(slot, value, weight, p),
    );
  }

  clear(slot: number): void {
    this.values.clear(slot);
    this.sum.clear(slot);
  }

  resetPartial(slot: number, p: number): void {
    this.values.resetPartial(slot);
    this.sum.resetPartial(slot, p);
  }

  accumulate(slot: number, value: Value, weight: number): void {
    this.values.accumulate(slot, value, weight);
  }

  merge(slot: number, p: number): void {
    this.values.merge(slot, p);
    this.sum.merge(slot, p);
  }

  result(slot: number, groupCount: number): Value {
    return this.sum.result(slot, groupCount);
  }

  serialize(slot: number): unknown {
    const { v } = this.values.serialize(slot) as SerializedAgg;
    return { ...(this.sum.serialize(slot) as SerializedAgg), v };
  }

  deserialize(slot: number, data: unknown): void {
    this.values.deserialize(slot, data);
    this.sum.deserialize(slot, data);
  }

  bytes(slot: number): number {
    return this.values.bytes(slot) + this.sum.bytes(slot);
  }
}
