// Aggregate strategies. Invertible aggregates (COUNT, SUM, AVG) keep O(1) state per group and fold
// a batch partial by addition; multiset aggregates (MIN, MAX, COUNT DISTINCT) keep value → count so
// retracting the current minimum reveals the next one. Integer sums are exact (bigint beyond 2^53).
import { SluiceError } from '../../errors.ts';
import type { Value } from '../../types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { checkInt, compareValues, normalizeBigInt, singleKey } from '../values.ts';

/** Per-group state of one aggregate; `partial` has the same shape and is folded into `state`. */
export interface AggState {
  /** Non-null input rows (weighted). */
  n: number;
  /** Invertible sum (number, exact bigint for integers, or float). */
  sum: number | bigint;
  /** Multiset: value key → [value, count]. */
  values: Map<Value, [Value, number]> | null;
  /** Min/max: distinct values in ascending order. */
  sorted: Value[] | null;
}

export interface AggImpl {
  readonly spec: AggregateSpec;
  create(): AggState;
  /** Empties a partial for reuse in the next batch. */
  reset(partial: AggState): void;
  /** Adds one input value with a weight into a partial (the Reduce stage). */
  accumulate(partial: AggState, value: Value, weight: number): void;
  /** Folds a partial into the group's state (the Merge stage). */
  merge(state: AggState, partial: AggState): void;
  /** The aggregate's value for a group holding `groupCount` rows. Throws on overflow. */
  result(state: AggState, groupCount: number): Value;
}

function addExact(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalizeBigInt(BigInt(a) + BigInt(b));
}

function mulExact(v: number | bigint, w: number): number | bigint {
  if (w === 1) return v;
  if (typeof v === 'number') {
    const r = v * w;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalizeBigInt(BigInt(v) * BigInt(w));
}

function newState(multiset: boolean, sorted: boolean): AggState {
  return { n: 0, sum: 0, values: multiset ? new Map() : null, sorted: sorted ? [] : null };
}

function insertSorted(sorted: Value[], v: Value): void {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareValues(sorted[mid] as Value, v) < 0) lo = mid + 1;
    else hi = mid;
  }
  sorted.splice(lo, 0, v);
}

function removeSorted(sorted: Value[], v: Value): void {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareValues(sorted[mid] as Value, v) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < sorted.length && compareValues(sorted[lo] as Value, v) === 0) sorted.splice(lo, 1);
}

function invertible(spec: AggregateSpec): AggImpl {
  const exactInt = spec.argType?.kind === 'int';
  return {
    spec,
    create: () => newState(false, false),
    reset(p) {
      p.n = 0;
      p.sum = 0;
    },
    accumulate(p, value, weight) {
      if (value === null) return;
      p.n += weight;
      if (spec.fn === 'sum' || spec.fn === 'avg') {
        if (exactInt) p.sum = addExact(p.sum, mulExact(value as number | bigint, weight));
        else p.sum = (p.sum as number) + (typeof value === 'bigint' ? Number(value) : (value as number)) * weight;
      }
    },
    merge(s, p) {
      s.n += p.n;
      if (spec.fn === 'sum' || spec.fn === 'avg') {
        s.sum = exactInt ? addExact(s.sum, p.sum) : (s.sum as number) + (p.sum as number);
      }
    },
    result(s, groupCount) {
      switch (spec.fn) {
        case 'count_star':
          return groupCount;
        case 'count':
          return s.n;
        case 'sum':
          if (s.n === 0) return null;
          return exactInt ? checkInt(s.sum, 64) : (s.sum as number);
        case 'avg':
          if (s.n === 0) return null;
          return (typeof s.sum === 'bigint' ? Number(s.sum) : s.sum) / s.n;
        default:
          throw new SluiceError('INTERNAL_ERROR', `aggregate ${spec.fn} is not invertible`);
      }
    },
  };
}

function multiset(spec: AggregateSpec): AggImpl {
  const ordered = spec.fn === 'min' || spec.fn === 'max';
  return {
    spec,
    create: () => newState(true, false),
    reset(p) {
      (p.values as Map<Value, [Value, number]>).clear();
    },
    accumulate(p, value, weight) {
      if (value === null) return;
      const values = p.values as Map<Value, [Value, number]>;
      const k = singleKey(value);
      const entry = values.get(k);
      if (entry === undefined) values.set(k, [value, weight]);
      else entry[1] += weight;
    },
    merge(s, p) {
      const values = s.values as Map<Value, [Value, number]>;
      if (ordered && s.sorted === null) s.sorted = [];
      for (const [k, [value, delta]] of p.values as Map<Value, [Value, number]>) {
        if (delta === 0) continue;
        const entry = values.get(k);
        if (entry === undefined) {
          if (delta < 0) throw new SluiceError('INTERNAL_ERROR', `negative multiplicity in ${spec.fn} state`);
          values.set(k, [value, delta]);
          if (ordered) insertSorted(s.sorted as Value[], value);
        } else {
          entry[1] += delta;
          if (entry[1] === 0) {
            values.delete(k);
            if (ordered) removeSorted(s.sorted as Value[], value);
          } else if (entry[1] < 0) {
            throw new SluiceError('INTERNAL_ERROR', `negative multiplicity in ${spec.fn} state`);
          }
        }
      }
    },
    result(s) {
      if (spec.fn === 'count') return (s.values as Map<Value, unknown>).size;
      const sorted = s.sorted ?? [];
      if (sorted.length === 0) return null;
      return (spec.fn === 'min' ? sorted[0] : sorted[sorted.length - 1]) as Value;
    },
  };
}

export function aggregateImpl(spec: AggregateSpec): AggImpl {
  return spec.strategy === 'multiset' ? multiset(spec) : invertible(spec);
}

/** Rough bytes of one aggregate state, for state-size metrics. */
export function aggStateBytes(s: AggState): number {
  let bytes = 48;
  if (s.values !== null) bytes += s.values.size * 64;
  if (s.sorted !== null) bytes += s.sorted.length * 16;
  return bytes;
}
