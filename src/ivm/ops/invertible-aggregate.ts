// COUNT, SUM and AVG as invertible aggregates: O(1) state per group inside the Reduce's records, a
// batch partial folded in by addition, exact integer parts (a bigint side table beyond 2^53).
import { SluiceError } from '../../common/errors.ts';
import { floatOutOfRange } from '../../common/cast.ts';
import type { Value } from '../../common/types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { checkInt, normalizeBigInt } from '../../common/values.ts';
import type { AggColumn, GroupRecords, SerializedAgg } from './aggregate-column.ts';

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
export class InvertibleColumn implements AggColumn {
  private readonly big = new Map<number, bigint>();
  /** Partials beyond the safe-integer range and partial non-finite counts, by touch index. */
  private readonly pbig = new Map<number, bigint>();
  private nonFinite = new Map<number, NonFinite>();
  private pNonFinite = new Map<number, NonFinite>();
  /**
   * A float SUM's -0 inputs, counted by slot (partials by touch index): PostgreSQL's SUM adds its
   * inputs from the first (float8pl), so it is -0 exactly when every input is -0, which a sum of
   * parts cannot tell. Empty unless -0 values arrive.
   */
  private readonly negZero = new Map<number, number>();
  private readonly pNegZero = new Map<number, number>();
  /** A SUM of floats (not AVG, whose PostgreSQL sum starts at +0; not numeric, which has no -0). */
  private readonly floatSumOfZeros: boolean;
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
    this.floatSumOfZeros = spec.fn === 'sum' && spec.argType?.kind === 'float';
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
    if (this.negZero.size > 0) this.negZero.delete(slot);
  }

  resetPartial(_slot: number, p: number): void {
    const d = this.partials.data;
    const at = p * this.partials.stride + this.pbase;
    d[at] = 0;
    if (this.summing) d[at + 1] = 0;
    if (this.fractional) d[at + 2] = 0;
    if (this.pbig.size > 0) this.pbig.delete(p);
    if (this.pNonFinite.size > 0) this.pNonFinite.delete(p);
    if (this.pNegZero.size > 0) this.pNegZero.delete(p);
  }

  /**
   * The side maps' part of emptying every partial of the batch: the caller zeroes the partials'
   * doubles (all of this column's partial is in them, besides these maps).
   */
  resetSidePartials(): void {
    if (this.pbig.size > 0) this.pbig.clear();
    if (this.pNonFinite.size > 0) this.pNonFinite.clear();
    if (this.pNegZero.size > 0) this.pNegZero.clear();
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
      if (v === 0 && this.floatSumOfZeros && Object.is(v, -0)) {
        this.pNegZero.set(p, (this.pNegZero.get(p) ?? 0) + weight);
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
      const zeros = this.pNegZero.size > 0 ? this.pNegZero.get(p) : undefined;
      if (zeros !== undefined) {
        const z = (this.negZero.get(slot) ?? 0) + zeros;
        if (z === 0) this.negZero.delete(slot);
        else this.negZero.set(slot, z);
      }
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
        if (this.exactInt) return checkInt(this.exactSum(slot), 64);
        // -0 when every input is -0 (negZero), as PostgreSQL's -0 + -0
        if (this.negZero.size > 0 && this.negZero.get(slot) === this.n(slot)) return -0;
        return this.floatSum(slot);
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
    const zeros = this.negZero.get(slot);
    return {
      n: this.n(slot),
      s: this.exactSum(slot),
      f,
      ...(counts !== undefined ? { x: [...counts] } : {}),
      ...(zeros !== undefined ? { z: zeros } : {}),
    };
  }

  /** Whether the group's state is its record alone (no bigint sum, no non-finite or -0 counts). */
  inRecord(slot: number): boolean {
    return (
      (this.big.size === 0 || !this.big.has(slot)) &&
      (this.nonFinite.size === 0 || !this.nonFinite.has(slot)) &&
      (this.negZero.size === 0 || !this.negZero.has(slot))
    );
  }

  /**
   * `serialize` of a group whose state is its record alone (`inRecord`), read from a copy of the
   * record that starts at `at`: a checkpoint copies the record when it is taken and serialises it
   * later, while later epochs change the live one.
   */
  recordState(data: Float64Array, at: number): SerializedAgg {
    const n = data[at + this.base] as number;
    if (!this.summing) return { n, s: 0 };
    const s = data[at + this.base + 1] as number;
    return this.fractional ? { n, s, f: data[at + this.base + 2] as number } : { n, s };
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
    this.negZero.delete(slot);
    if (this.floatSumOfZeros && d.z !== undefined) this.negZero.set(slot, d.z);
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
