// Aggregate strategies, stored column-wise: each aggregate keeps one typed array (or sparse table)
// per field, indexed by the group's slot, so a group costs a few numbers rather than several heap
// objects. Invertible aggregates (COUNT, SUM, AVG) keep O(1) state and fold a batch partial by
// addition; multiset aggregates (MIN, MAX, COUNT DISTINCT) keep value → count per group so
// retracting the current minimum reveals the next one. Integer sums are exact: a slot whose sum
// leaves the safe-integer range continues as a bigint in a side table.
import { SluiceError } from '../../errors.ts';
import type { Value } from '../../types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { checkInt, compareValues, normalizeBigInt, singleKey } from '../values.ts';

export interface AggColumn {
  readonly spec: AggregateSpec;
  /** Empties a slot's state (a new group). */
  clear(slot: number): void;
  /** Empties a slot's partial before the Reduce stage first touches it in a batch. */
  resetPartial(slot: number): void;
  /** Reduce stage: adds one input value with a weight into the slot's partial. */
  accumulate(slot: number, value: Value, weight: number): void;
  /** Merge stage: folds the slot's partial into its state. */
  merge(slot: number): void;
  /** The aggregate's value for a group holding `groupCount` rows. Throws on overflow. */
  result(slot: number, groupCount: number): Value;
  serialize(slot: number): unknown;
  deserialize(slot: number, data: unknown): void;
  bytes(slot: number): number;
}

interface SerializedAgg {
  readonly n: number;
  readonly s: number | bigint;
  readonly v?: readonly (readonly [Value, number])[];
}

/**
 * Invertible aggregates keep their four numbers (n, sum, partial n, partial sum) inside the
 * Reduce's per-group record (a stride of a shared Float64Array), so touching a group's state is one
 * or two cache lines, not one per field.
 */
class InvertibleColumn implements AggColumn {
  static readonly WIDTH = 4;
  private big = new Map<number, bigint>();
  private pbig = new Map<number, bigint>();
  private readonly exactInt: boolean;
  private readonly summing: boolean;

  constructor(
    readonly spec: AggregateSpec,
    private readonly record: GroupRecords,
    private readonly base: number,
  ) {
    this.exactInt = spec.argType?.kind === 'int';
    this.summing = spec.fn === 'sum' || spec.fn === 'avg';
  }

  clear(slot: number): void {
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    d[at] = 0;
    d[at + 1] = 0;
    if (this.big.size > 0) this.big.delete(slot);
  }

  resetPartial(slot: number): void {
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    d[at + 2] = 0;
    d[at + 3] = 0;
    if (this.pbig.size > 0) this.pbig.delete(slot);
  }

  accumulate(slot: number, value: Value, weight: number): void {
    if (value === null) return;
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    d[at + 2] = (d[at + 2] as number) + weight;
    if (!this.summing) return;
    if (!this.exactInt) {
      d[at + 3] =
        (d[at + 3] as number) + (typeof value === 'bigint' ? Number(value) : (value as number)) * weight;
      return;
    }
    if (typeof value === 'number' && (this.pbig.size === 0 || !this.pbig.has(slot))) {
      const r = (d[at + 3] as number) + value * weight;
      if (Number.isSafeInteger(r)) {
        d[at + 3] = r;
        return;
      }
    }
    const prior = this.pbig.get(slot) ?? BigInt(d[at + 3] as number);
    this.pbig.set(slot, prior + BigInt(value as number | bigint) * BigInt(weight));
  }

  merge(slot: number): void {
    const d = this.record.data;
    const at = slot * this.record.stride + this.base;
    d[at] = (d[at] as number) + (d[at + 2] as number);
    if (!this.summing) return;
    if (!this.exactInt) {
      d[at + 1] = (d[at + 1] as number) + (d[at + 3] as number);
      return;
    }
    const pb = this.pbig.size > 0 ? this.pbig.get(slot) : undefined;
    const b = this.big.size > 0 ? this.big.get(slot) : undefined;
    if (pb === undefined && b === undefined) {
      const r = (d[at + 1] as number) + (d[at + 3] as number);
      if (Number.isSafeInteger(r)) {
        d[at + 1] = r;
        return;
      }
    }
    const exact = (b ?? BigInt(d[at + 1] as number)) + (pb ?? BigInt(d[at + 3] as number));
    const norm = normalizeBigInt(exact);
    if (typeof norm === 'number') {
      d[at + 1] = norm;
      this.big.delete(slot);
    } else {
      d[at + 1] = 0;
      this.big.set(slot, norm);
    }
  }

  private exactSum(slot: number): number | bigint {
    return this.big.get(slot) ?? (this.record.data[slot * this.record.stride + this.base + 1] as number);
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
        return this.exactInt ? checkInt(this.exactSum(slot), 64) : this.exactSum(slot);
      case 'avg': {
        const n = this.n(slot);
        if (n === 0) return null;
        const s = this.exactSum(slot);
        return (typeof s === 'bigint' ? Number(s) : s) / n;
      }
      default:
        throw new SluiceError('INTERNAL_ERROR', `aggregate ${this.spec.fn} is not invertible`);
    }
  }

  serialize(slot: number): unknown {
    return { n: this.n(slot), s: this.exactSum(slot) };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedAgg;
    const at = slot * this.record.stride + this.base;
    this.record.data[at] = d.n;
    if (typeof d.s === 'bigint') {
      this.record.data[at + 1] = 0;
      this.big.set(slot, d.s);
    } else {
      this.record.data[at + 1] = d.s;
      this.big.delete(slot);
    }
  }

  bytes(): number {
    return 32;
  }
}

/** The Reduce's per-group numeric records: `stride` doubles per slot, row-major. */
export interface GroupRecords {
  data: Float64Array;
  readonly stride: number;
}

type ValueCounts = Map<Value, [Value, number]>;

function sortedIndex(sorted: Value[], v: Value): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareValues(sorted[mid] as Value, v) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

class MultisetColumn implements AggColumn {
  private values: (ValueCounts | undefined)[] = [];
  private sorted: (Value[] | undefined)[] = [];
  private readonly partial = new Map<number, ValueCounts>();
  private readonly ordered: boolean;

  constructor(readonly spec: AggregateSpec) {
    this.ordered = spec.fn === 'min' || spec.fn === 'max';
  }

  clear(slot: number): void {
    this.values[slot] = undefined;
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
    const k = singleKey(value);
    const entry = p.get(k);
    if (entry === undefined) p.set(k, [value, weight]);
    else entry[1] += weight;
  }

  merge(slot: number): void {
    const p = this.partial.get(slot);
    if (p === undefined) return;
    this.partial.delete(slot);
    let values = this.values[slot];
    if (values === undefined) {
      values = new Map();
      this.values[slot] = values;
    }
    let sorted = this.sorted[slot];
    if (this.ordered && sorted === undefined) {
      sorted = [];
      this.sorted[slot] = sorted;
    }
    for (const [k, [value, delta]] of p) {
      if (delta === 0) continue;
      const entry = values.get(k);
      if (entry === undefined) {
        if (delta < 0)
          throw new SluiceError('INTERNAL_ERROR', `negative multiplicity in ${this.spec.fn} state`);
        values.set(k, [value, delta]);
        if (sorted !== undefined) sorted.splice(sortedIndex(sorted, value), 0, value);
      } else {
        entry[1] += delta;
        if (entry[1] === 0) {
          values.delete(k);
          if (sorted !== undefined) {
            const i = sortedIndex(sorted, value);
            if (i < sorted.length && compareValues(sorted[i] as Value, value) === 0) sorted.splice(i, 1);
          }
        } else if (entry[1] < 0) {
          throw new SluiceError('INTERNAL_ERROR', `negative multiplicity in ${this.spec.fn} state`);
        }
      }
    }
  }

  result(slot: number): Value {
    if (this.spec.fn === 'count') return this.values[slot]?.size ?? 0;
    const sorted = this.sorted[slot];
    if (sorted === undefined || sorted.length === 0) return null;
    return (this.spec.fn === 'min' ? sorted[0] : sorted[sorted.length - 1]) as Value;
  }

  serialize(slot: number): unknown {
    // Copies of the [value, count] pairs: merge() updates counts in place, and a checkpoint's
    // delta must keep the counts of the epoch it was taken at while it is written in slices.
    const values = this.values[slot];
    return { n: 0, s: 0, v: values === undefined ? [] : Array.from(values.values(), ([v, c]) => [v, c]) };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedAgg;
    const values: ValueCounts = new Map();
    for (const [value, count] of d.v ?? []) values.set(singleKey(value), [value, count]);
    this.values[slot] = values;
    this.sorted[slot] = this.ordered ? [...values.values()].map((e) => e[0]).sort(compareValues) : undefined;
  }

  bytes(slot: number): number {
    return 16 + (this.values[slot]?.size ?? 0) * (this.ordered ? 80 : 64);
  }
}

/** Doubles an invertible aggregate needs in the group record. */
export function recordWidth(spec: AggregateSpec): number {
  return spec.strategy === 'multiset' ? 0 : InvertibleColumn.WIDTH;
}

/** An aggregate's column; invertible ones live at `base` inside the shared group records. */
export function aggregateColumn(spec: AggregateSpec, record: GroupRecords, base: number): AggColumn {
  return spec.strategy === 'multiset' ? new MultisetColumn(spec) : new InvertibleColumn(spec, record, base);
}
