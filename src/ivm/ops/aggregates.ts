// Aggregate strategies, stored column-wise: each aggregate keeps one typed array (or sparse table)
// per field, indexed by the group's slot, so a group costs a few numbers rather than several heap
// objects. Invertible aggregates (COUNT, SUM, AVG) keep O(1) state and fold a batch partial by
// addition; multiset aggregates (MIN, MAX, COUNT DISTINCT) keep value → count per group (an
// arrangement keyed by the group's slot) so retracting the current minimum reveals the next one. Sums keep their inputs' integer parts exactly
// (a bigint in a side table beyond the safe-integer range), so retraction undoes an insert exactly.
import { SluiceError } from '../../common/errors.ts';
import { floatOutOfRange } from '../../common/cast.ts';
import type { Value } from '../../common/types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import {
  checkInt,
  compareExact,
  compareValues,
  exactKey,
  normalizeBigInt,
  singleKey,
} from '../../common/values.ts';
import { Arrangement } from '../arrangement.ts';
import { DECIMAL_SUM_WIDTH, DecimalSumColumn, usesDecimalSum } from './decimal-sum.ts';
import {
  compareJsonbElements,
  isMoreAggregate,
  jsonbAgg,
  jsonbElementKey,
  moreAggregateColumn,
  moreRecordWidth,
  stringAgg,
} from './aggregates-more.ts';
import { OrderedAggColumn } from './ordered-aggregate.ts';
import { arrayAgg } from './array-agg.ts';
import { jsonbObjectAgg } from './jsonb-object-agg.ts';

export interface AggColumn {
  readonly spec: AggregateSpec;
  /** Empties a slot's state (a new group). */
  clear(slot: number): void;
  /**
   * Empties a group's partial before the Reduce stage first touches it in a batch. `p` is the
   * group's touch index in the batch: partials kept in the Reduce's dense per-batch array (rather
   * than beside the state in the group record) live at `p`; columns keeping partials elsewhere
   * key them by `slot`.
   */
  resetPartial(slot: number, p: number): void;
  /** Reduce stage: adds one input value with a weight into the group's partial. */
  accumulate(slot: number, value: Value, weight: number, p: number): void;
  /** Merge stage: folds the group's partial (touch index `p`) into its state. */
  merge(slot: number, p: number): void;
  /** The aggregate's value for a group holding `groupCount` rows. Throws on overflow. */
  result(slot: number, groupCount: number): Value;
  serialize(slot: number): unknown;
  deserialize(slot: number, data: unknown): void;
  bytes(slot: number): number;
}

interface SerializedAgg {
  readonly n: number;
  readonly s: number | bigint;
  /** Float sums: the sum of the fractional parts (`s` then holds the integer parts' exact sum). */
  readonly f?: number;
  /** Float sums: how many +Infinity, -Infinity and NaN inputs the group holds. */
  readonly x?: readonly [number, number, number];
  readonly v?: readonly (readonly [Value, number])[];
}

/** +Infinity, -Infinity and NaN inputs of a float sum, counted (they cannot be added and retracted). */
type NonFinite = [number, number, number];

function nonFiniteIndex(v: number): 0 | 1 | 2 {
  return v === Infinity ? 0 : v === -Infinity ? 1 : 2;
}

/**
 * Invertible aggregates keep their numbers (n, sum; for float sums also the fractional parts' sum)
 * inside the Reduce's per-group record (a stride of a shared Float64Array), so touching a group's
 * state is one cache line, not one per field; the batch's partials (partial n, partial sum, partial
 * fractions) live in the Reduce's dense per-batch array at the group's touch index.
 *
 * Sums must survive retraction exactly: a double running sum does not (1e20 + 1 - 1e20 is 0, and
 * once 1e308 + 1e308 overflows to Infinity no delete brings it back). So a sum keeps the integer
 * parts of its inputs exactly — in the record while they stay safe integers, as a bigint in a side
 * table beyond — and, for floats, their fractional parts (each below 1) in a double of their own;
 * infinities and NaN are counted, not added. A float sum beyond a double's range is PostgreSQL's
 * "value out of range: overflow" for the group, and comes back when the rows that made it leave.
 */
class InvertibleColumn implements AggColumn {
  private readonly big = new Map<number, bigint>();
  /** Partials beyond the safe-integer range and partial non-finite counts, by touch index. */
  private readonly pbig = new Map<number, bigint>();
  private nonFinite = new Map<number, NonFinite>();
  private pNonFinite = new Map<number, NonFinite>();
  private readonly exactInt: boolean;
  private readonly summing: boolean;
  /** A float (or numeric) sum: keeps the fractional parts at `base + 2` (state) and `pbase + 2` (partial). */
  private readonly fractional: boolean;

  constructor(
    readonly spec: AggregateSpec,
    private readonly record: GroupRecords,
    private readonly base: number,
    private readonly partials: GroupRecords,
    private readonly pbase: number,
  ) {
    this.exactInt = spec.argType?.kind === 'int';
    this.summing = spec.fn === 'sum' || spec.fn === 'avg';
    this.fractional = this.summing && !this.exactInt;
  }

  /** Doubles this column needs in the group record (n, sum, fractions), and as much for the partial. */
  static width(spec: AggregateSpec): number {
    const summing = spec.fn === 'sum' || spec.fn === 'avg';
    return summing ? (spec.argType?.kind !== 'int' ? 3 : 2) : 1;
  }

  clear(slot: number): void {
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    d[at] = 0;
    if (this.summing) d[at + 1] = 0;
    if (this.fractional) d[at + 2] = 0;
    if (this.big.size > 0) this.big.delete(slot);
    if (this.nonFinite.size > 0) this.nonFinite.delete(slot);
  }

  resetPartial(_slot: number, p: number): void {
    const d = this.partials.data;
    const at = p * this.partials.stride + this.pbase;
    d[at] = 0;
    if (this.summing) d[at + 1] = 0;
    if (this.fractional) d[at + 2] = 0;
    if (this.pbig.size > 0) this.pbig.delete(p);
    if (this.pNonFinite.size > 0) this.pNonFinite.delete(p);
  }

  accumulate(_slot: number, value: Value, weight: number, p: number): void {
    if (value === null) return;
    const d = this.partials.data;
    const at = p * this.partials.stride + this.pbase;
    d[at] = (d[at] as number) + weight;
    if (!this.summing) return;
    let whole: number | bigint;
    if (this.fractional) {
      const v = typeof value === 'bigint' ? Number(value) : (value as number);
      if (!Number.isFinite(v)) {
        let counts = this.pNonFinite.get(p);
        if (counts === undefined) {
          counts = [0, 0, 0];
          this.pNonFinite.set(p, counts);
        }
        counts[nonFiniteIndex(v)] += weight;
        return;
      }
      whole = Math.trunc(v);
      // Exact: a double minus its integer part is representable.
      d[at + 2] = (d[at + 2] as number) + (v - whole) * weight;
    } else whole = value as number | bigint;
    if (typeof whole === 'number' && (this.pbig.size === 0 || !this.pbig.has(p))) {
      const r = (d[at + 1] as number) + whole * weight;
      if (Number.isSafeInteger(r)) {
        d[at + 1] = r;
        return;
      }
    }
    const prior = this.pbig.get(p) ?? BigInt(d[at + 1] as number);
    this.pbig.set(p, prior + BigInt(whole) * BigInt(weight));
  }

  merge(slot: number, p: number): void {
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    const pd = this.partials.data;
    const pat = p * this.partials.stride + this.pbase;
    d[at] = (d[at] as number) + (pd[pat] as number);
    if (!this.summing) return;
    if (this.fractional) {
      d[at + 2] = (d[at + 2] as number) + (pd[pat + 2] as number);
      const partial = this.pNonFinite.size > 0 ? this.pNonFinite.get(p) : undefined;
      if (partial !== undefined) this.mergeNonFinite(slot, partial);
    }
    const pb = this.pbig.size > 0 ? this.pbig.get(p) : undefined;
    const b = this.big.size > 0 ? this.big.get(slot) : undefined;
    if (pb === undefined && b === undefined) {
      const r = (d[at + 1] as number) + (pd[pat + 1] as number);
      if (Number.isSafeInteger(r)) {
        d[at + 1] = r;
        return;
      }
    }
    const exact = (b ?? BigInt(d[at + 1] as number)) + (pb ?? BigInt(pd[pat + 1] as number));
    const norm = normalizeBigInt(exact);
    if (typeof norm === 'number') {
      d[at + 1] = norm;
      this.big.delete(slot);
    } else {
      d[at + 1] = 0;
      this.big.set(slot, norm);
    }
  }

  private mergeNonFinite(slot: number, partial: NonFinite): void {
    const counts = this.nonFinite.get(slot) ?? [0, 0, 0];
    for (let i = 0; i < 3; i++) counts[i]! += partial[i]!;
    if (counts[0] === 0 && counts[1] === 0 && counts[2] === 0) this.nonFinite.delete(slot);
    else this.nonFinite.set(slot, counts);
  }

  private exactSum(slot: number): number | bigint {
    // No lookup while no group's sum is a bigint (the usual case): a Map probe per changed group.
    const big = this.big.size > 0 ? this.big.get(slot) : undefined;
    return big ?? (this.record.data[slot * this.record.stride + this.base + 1] as number);
  }

  /** A float sum as a double: NaN or an infinity if the group holds such inputs, else the exact parts. */
  private floatSum(slot: number): number {
    const counts = this.nonFinite.size > 0 ? this.nonFinite.get(slot) : undefined;
    if (counts !== undefined) {
      if (counts[2] > 0 || (counts[0] > 0 && counts[1] > 0)) return NaN;
      return counts[0] > 0 ? Infinity : -Infinity;
    }
    const whole = this.exactSum(slot);
    const sum =
      (typeof whole === 'bigint' ? Number(whole) : whole) +
      (this.record.data[slot * this.record.stride + this.base + 2] as number);
    if (!Number.isFinite(sum)) throw floatOutOfRange('overflow');
    return sum;
  }

  private n(slot: number): number {
    return this.record.data[slot * this.record.stride + this.base] as number;
  }

  result(slot: number, groupCount: number): Value {
    switch (this.spec.fn) {
      case 'count_star':
        return groupCount;
      case 'count':
        return this.n(slot);
      case 'sum':
        if (this.n(slot) === 0) return null;
        return this.exactInt ? checkInt(this.exactSum(slot), 64) : this.floatSum(slot);
      case 'avg': {
        const n = this.n(slot);
        if (n === 0) return null;
        if (this.fractional) return this.floatSum(slot) / n;
        const s = this.exactSum(slot);
        return (typeof s === 'bigint' ? Number(s) : s) / n;
      }
      default:
        throw new SluiceError('INTERNAL_ERROR', `aggregate ${this.spec.fn} is not invertible`);
    }
  }

  serialize(slot: number): unknown {
    // A COUNT's record is its count alone: the field after it belongs to the next column or group.
    if (!this.summing) return { n: this.n(slot), s: 0 };
    if (!this.fractional) return { n: this.n(slot), s: this.exactSum(slot) };
    const f = this.record.data[slot * this.record.stride + this.base + 2] as number;
    const counts = this.nonFinite.get(slot);
    return {
      n: this.n(slot),
      s: this.exactSum(slot),
      f,
      ...(counts !== undefined ? { x: [...counts] } : {}),
    };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedAgg;
    const at = slot * this.record.stride + this.base;
    this.record.data[at] = d.n;
    if (!this.summing) return;
    let whole = d.s;
    let fraction = d.f ?? 0;
    this.nonFinite.delete(slot);
    if (this.fractional && d.x !== undefined) this.nonFinite.set(slot, [d.x[0], d.x[1], d.x[2]]);
    if (this.fractional && typeof whole === 'number' && d.f === undefined) {
      // A checkpoint written before float sums kept their parts apart: one double sum.
      if (!Number.isFinite(whole)) {
        this.nonFinite.set(slot, [
          whole === Infinity ? 1 : 0,
          whole === -Infinity ? 1 : 0,
          Number.isNaN(whole) ? 1 : 0,
        ]);
        whole = 0;
      }
      const t = Math.trunc(whole);
      fraction = whole - t;
      whole = Number.isSafeInteger(t) ? t : BigInt(t);
    }
    if (this.fractional) this.record.data[at + 2] = fraction;
    if (typeof whole === 'bigint') {
      this.record.data[at + 1] = 0;
      this.big.set(slot, whole);
    } else {
      this.record.data[at + 1] = whole;
      this.big.delete(slot);
    }
  }

  bytes(): number {
    return this.fractional ? 48 : 32;
  }

  /**
   * How a generated kernel may add a row into the partial itself (reduce-kernel.ts): COUNT adds the
   * weight to n; an integer SUM/AVG adds the weight to n and value × weight to the sum while the
   * value is a number, no partial of the batch is a bigint and the sum stays a safe integer — the
   * fast path of `accumulate`, which the kernel calls for everything else. Null: float sums. The
   * generated merge (reduce-merge-kernel.ts) folds the partial into the record the same way while
   * neither map holds a bigint and the sum stays a safe integer, and calls `merge` otherwise.
   */
  inlinePartial(): InlinePartial | null {
    if (this.fractional) return null;
    return {
      fn: this.spec.fn as InlinePartial['fn'],
      sums: this.summing,
      base: this.base,
      pbase: this.pbase,
      partialBigs: this.pbig,
      bigs: this.big,
    };
  }
}

/** See InvertibleColumn.inlinePartial. */
export interface InlinePartial {
  readonly fn: 'count' | 'count_star' | 'sum' | 'avg';
  /** Whether the partial has a sum at `pbase + 1` beside the count at `pbase`. */
  readonly sums: boolean;
  /** The state's count (and sum after it) in the group's record. */
  readonly base: number;
  readonly pbase: number;
  /** The batch's partial sums beyond the safe-integer range, by touch index (empty: none). */
  readonly partialBigs: ReadonlyMap<number, bigint>;
  /** The groups' sums beyond the safe-integer range, by slot (empty: none). */
  readonly bigs: ReadonlyMap<number, bigint>;
}

/** The inline form of a column's partial, if it has one (InvertibleColumn.inlinePartial). */
export function inlinePartial(column: AggColumn): InlinePartial | null {
  return column instanceof InvertibleColumn ? column.inlinePartial() : null;
}

/**
 * The Reduce's per-group numeric records: `stride` doubles per slot, row-major. The same shape holds
 * a batch's partials, `stride` doubles per touch index.
 */
export interface GroupRecords {
  data: Float64Array;
  readonly stride: number;
}

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
class MultisetColumn implements AggColumn {
  private readonly counts: Arrangement<number, Value, Value>;
  private sorted: (Value[] | undefined)[] = [];
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
        if (sorted !== undefined) {
          const i = sortedIndex(sorted, value, this.cmp);
          if (i < sorted.length && this.cmp(sorted[i] as Value, value) === 0) sorted.splice(i, 1);
        }
      } else if (entry.count === delta) {
        // New in the group.
        if (sorted !== undefined) sorted.splice(sortedIndex(sorted, value, this.cmp), 0, value);
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
class DistinctSumColumn implements AggColumn {
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
  // exact numeric sums (decimal-sum.ts)
  if (usesDecimalSum(spec) && spec.strategy !== 'multiset')
    return new DecimalSumColumn(spec, record, base, partials, pbase);
  if (spec.strategy !== 'multiset') return new InvertibleColumn(spec, record, base, partials, pbase);
  return summing(spec)
    ? new DistinctSumColumn(spec, record, base, partials, pbase)
    : new MultisetColumn(spec);
}
