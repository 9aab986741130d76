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
  /** Makes room for slots below `capacity`. */
  grow(capacity: number): void;
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

function grown(a: Float64Array, capacity: number): Float64Array {
  if (a.length >= capacity) return a;
  const b = new Float64Array(Math.max(capacity, a.length * 2));
  b.set(a);
  return b;
}

class InvertibleColumn implements AggColumn {
  private n: Float64Array = new Float64Array(16);
  private sum: Float64Array = new Float64Array(16);
  private big = new Map<number, bigint>();
  private pn: Float64Array = new Float64Array(16);
  private psum: Float64Array = new Float64Array(16);
  private pbig = new Map<number, bigint>();
  private readonly exactInt: boolean;
  private readonly summing: boolean;

  constructor(readonly spec: AggregateSpec) {
    this.exactInt = spec.argType?.kind === 'int';
    this.summing = spec.fn === 'sum' || spec.fn === 'avg';
  }

  grow(capacity: number): void {
    this.n = grown(this.n, capacity);
    this.sum = grown(this.sum, capacity);
    this.pn = grown(this.pn, capacity);
    this.psum = grown(this.psum, capacity);
  }

  clear(slot: number): void {
    this.n[slot] = 0;
    this.sum[slot] = 0;
    if (this.big.size > 0) this.big.delete(slot);
  }

  resetPartial(slot: number): void {
    this.pn[slot] = 0;
    this.psum[slot] = 0;
    if (this.pbig.size > 0) this.pbig.delete(slot);
  }

  accumulate(slot: number, value: Value, weight: number): void {
    if (value === null) return;
    this.pn[slot] = (this.pn[slot] as number) + weight;
    if (!this.summing) return;
    if (!this.exactInt) {
      this.psum[slot] =
        (this.psum[slot] as number) +
        (typeof value === 'bigint' ? Number(value) : (value as number)) * weight;
      return;
    }
    if (typeof value === 'number' && (this.pbig.size === 0 || !this.pbig.has(slot))) {
      const r = (this.psum[slot] as number) + value * weight;
      if (Number.isSafeInteger(r)) {
        this.psum[slot] = r;
        return;
      }
    }
    const prior = this.pbig.get(slot) ?? BigInt(this.psum[slot] as number);
    this.pbig.set(slot, prior + BigInt(value as number | bigint) * BigInt(weight));
  }

  merge(slot: number): void {
    this.n[slot] = (this.n[slot] as number) + (this.pn[slot] as number);
    if (!this.summing) return;
    if (!this.exactInt) {
      this.sum[slot] = (this.sum[slot] as number) + (this.psum[slot] as number);
      return;
    }
    const pb = this.pbig.size > 0 ? this.pbig.get(slot) : undefined;
    const b = this.big.size > 0 ? this.big.get(slot) : undefined;
    if (pb === undefined && b === undefined) {
      const r = (this.sum[slot] as number) + (this.psum[slot] as number);
      if (Number.isSafeInteger(r)) {
        this.sum[slot] = r;
        return;
      }
    }
    const exact = (b ?? BigInt(this.sum[slot] as number)) + (pb ?? BigInt(this.psum[slot] as number));
    const norm = normalizeBigInt(exact);
    if (typeof norm === 'number') {
      this.sum[slot] = norm;
      this.big.delete(slot);
    } else this.big.set(slot, norm);
  }

  private exactSum(slot: number): number | bigint {
    return this.big.get(slot) ?? (this.sum[slot] as number);
  }

  result(slot: number, groupCount: number): Value {
    switch (this.spec.fn) {
      case 'count_star':
        return groupCount;
      case 'count':
        return this.n[slot] as number;
      case 'sum':
        if (this.n[slot] === 0) return null;
        return this.exactInt ? checkInt(this.exactSum(slot), 64) : (this.sum[slot] as number);
      case 'avg': {
        if (this.n[slot] === 0) return null;
        const s = this.exactSum(slot);
        return (typeof s === 'bigint' ? Number(s) : s) / (this.n[slot] as number);
      }
      default:
        throw new SluiceError('INTERNAL_ERROR', `aggregate ${this.spec.fn} is not invertible`);
    }
  }

  serialize(slot: number): unknown {
    return { n: this.n[slot], s: this.exactSum(slot) };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedAgg;
    this.n[slot] = d.n;
    if (typeof d.s === 'bigint') {
      this.sum[slot] = 0;
      this.big.set(slot, d.s);
    } else {
      this.sum[slot] = d.s;
      this.big.delete(slot);
    }
  }

  bytes(): number {
    return 16;
  }
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

  grow(): void {}

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
    return { n: 0, s: 0, v: [...(this.values[slot]?.values() ?? [])] };
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

export function aggregateColumn(spec: AggregateSpec): AggColumn {
  return spec.strategy === 'multiset' ? new MultisetColumn(spec) : new InvertibleColumn(spec);
}
