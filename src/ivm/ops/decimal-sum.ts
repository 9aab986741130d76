// Exact SUM and AVG with numeric results: SUM/AVG(numeric), AVG of integers and SUM(bigint) (which
// PostgreSQL widens to numeric rather than failing at 2^63). O(1) state per group, invertible: the
// sum of the inputs' unscaled values at one working scale — a double while it is a safe integer,
// a bigint in a side table beyond — so a delete undoes an insert exactly, whatever the values.
import type { Value } from '../../common/types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { Decimal, decimalFromShortest, div, pow10 } from '../../common/decimal.ts';
import type { AggColumn, GroupRecords } from './aggregate-column.ts';

/** True for the sums and averages this column computes (their result is numeric). */
export function usesDecimalSum(spec: AggregateSpec): boolean {
  if (spec.fn !== 'sum' && spec.fn !== 'avg') return false;
  const t = spec.argType;
  if (t === null) return false;
  if (t.kind === 'numeric') return true;
  // A bigint SUM typed bigint (HOP panes' counts, lower-hop-panes.ts) stays an exact integer sum.
  return t.kind === 'int' && (spec.fn === 'avg' || (t.bits === 64 && spec.outputType.kind === 'numeric'));
}

/** Doubles of the group record it uses (count, sum), and as many in the batch's partials. */
export const DECIMAL_SUM_WIDTH = 2;

type Exact = number | bigint;

interface SerializedDecimalSum {
  readonly n: number;
  readonly s: Exact;
  /** Working scale of `s` (absent: 0, or the column's declared scale). */
  readonly w?: number;
  /** Unconstrained numeric: how many inputs of each scale the group holds (its display scale). */
  readonly c?: readonly (readonly [number, number])[];
  /** A checkpoint from when numeric sums were doubles: the fractional parts' double sum. */
  readonly f?: number;
}

function addExact(a: Exact, b: Exact): Exact {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalize(BigInt(a) + BigInt(b));
}

function normalize(v: bigint): Exact {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

function scaleUp(v: Exact, k: number): Exact {
  if (k === 0 || v === 0) return v;
  if (typeof v === 'number' && k <= 15) {
    const r = v * 10 ** k;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalize(BigInt(v) * pow10(k));
}

export class DecimalSumColumn implements AggColumn {
  private readonly big = new Map<number, bigint>();
  /** Partial sums beyond the safe-integer range, by touch index. */
  private readonly pbig = new Map<number, bigint>();
  /** The declared scale of the argument (numeric(p,s), or 0 for integers); null when free. */
  private readonly fixedScale: number | null;
  /** Free scales only: each group's working scale (the largest it has seen; absent is 0). */
  private readonly working = new Map<number, number>();
  /** Free scales only: inputs per scale, in the state (by slot) and in the batch's partial (by touch index). */
  private readonly scales = new Map<number, Map<number, number>>();
  private readonly pScales = new Map<number, Map<number, number>>();

  constructor(
    readonly spec: AggregateSpec,
    private readonly record: GroupRecords,
    private readonly base: number,
    private readonly partials: GroupRecords,
    private readonly pbase: number,
  ) {
    const t = spec.argType;
    this.fixedScale =
      t?.kind === 'int' ? 0 : t?.kind === 'numeric' && t.precision !== undefined ? (t.scale ?? 0) : null;
  }

  private at(slot: number): number {
    return slot * this.record.stride + this.base;
  }

  private pat(p: number): number {
    return p * this.partials.stride + this.pbase;
  }

  /** The group's sum (`partial` false, `i` its slot) or its batch partial (`i` its touch index). */
  private get(i: number, partial: boolean): Exact {
    const side = partial ? this.pbig : this.big;
    const b = side.size > 0 ? side.get(i) : undefined;
    return (
      b ?? ((partial ? this.partials.data[this.pat(i) + 1] : this.record.data[this.at(i) + 1]) as number)
    );
  }

  private set(i: number, partial: boolean, v: Exact): void {
    const side = partial ? this.pbig : this.big;
    const d = partial ? this.partials.data : this.record.data;
    const at = (partial ? this.pat(i) : this.at(i)) + 1;
    if (typeof v === 'number') {
      d[at] = v;
      if (side.size > 0) side.delete(i);
    } else {
      d[at] = 0;
      side.set(i, v);
    }
  }

  clear(slot: number): void {
    const at = this.at(slot);
    this.record.data[at] = 0;
    this.record.data[at + 1] = 0;
    if (this.big.size > 0) this.big.delete(slot);
    if (this.fixedScale === null) {
      this.working.delete(slot);
      this.scales.delete(slot);
    }
  }

  resetPartial(_slot: number, p: number): void {
    const at = this.pat(p);
    this.partials.data[at] = 0;
    this.partials.data[at + 1] = 0;
    if (this.pbig.size > 0) this.pbig.delete(p);
    if (this.fixedScale === null) this.pScales.delete(p);
  }

  accumulate(slot: number, value: Value, weight: number, p: number): void {
    if (value === null) return;
    const d = this.partials.data;
    const at = this.pat(p);
    d[at] = (d[at] as number) + weight;
    let u: Exact;
    let s: number;
    if (value instanceof Decimal) {
      u = value.unscaled;
      s = value.scale;
    } else {
      u = value as Exact;
      s = 0;
    }
    let ws: number;
    if (this.fixedScale !== null) ws = this.fixedScale;
    else {
      ws = this.working.get(slot) ?? 0;
      if (s > ws) {
        this.rescale(slot, p, ws, s);
        ws = s;
      }
      let counts = this.pScales.get(p);
      if (counts === undefined) {
        counts = new Map();
        this.pScales.set(p, counts);
      }
      counts.set(s, (counts.get(s) ?? 0) + weight);
    }
    if (s !== ws) u = scaleUp(u, ws - s);
    if (typeof u === 'number' && (this.pbig.size === 0 || !this.pbig.has(p))) {
      const r = (d[at + 1] as number) + u * weight;
      if (Number.isSafeInteger(r)) {
        d[at + 1] = r;
        return;
      }
    }
    this.set(p, true, normalize(BigInt(this.get(p, true)) + BigInt(u) * BigInt(weight)));
  }

  /** Free scales: the group's sums (state and partial) move from working scale `from` to `to` (exactly). */
  private rescale(slot: number, p: number, from: number, to: number): void {
    this.set(slot, false, scaleUp(this.get(slot, false), to - from));
    this.set(p, true, scaleUp(this.get(p, true), to - from));
    this.working.set(slot, to);
  }

  merge(slot: number, p: number): void {
    const d = this.record.data;
    const at = this.at(slot);
    d[at] = (d[at] as number) + (this.partials.data[this.pat(p)] as number);
    this.set(slot, false, addExact(this.get(slot, false), this.get(p, true)));
    if (this.fixedScale === null) {
      const partial = this.pScales.get(p);
      if (partial === undefined) return;
      const counts = this.scales.get(slot) ?? new Map<number, number>();
      for (const [s, n] of partial) {
        const total = (counts.get(s) ?? 0) + n;
        if (total === 0) counts.delete(s);
        else counts.set(s, total);
      }
      this.scales.set(slot, counts);
    }
  }

  /** The group's exact sum at its display scale: the declared one, or the largest its inputs show. */
  private sum(slot: number): Decimal {
    if (this.fixedScale !== null) return new Decimal(this.get(slot, false), this.fixedScale);
    const ws = this.working.get(slot) ?? 0;
    let display = 0;
    for (const s of this.scales.get(slot)?.keys() ?? []) if (s > display) display = s;
    // Exact: every input present has at most `display` digits after the point.
    return new Decimal(this.get(slot, false), ws).withScale(display);
  }

  result(slot: number): Value {
    const n = this.record.data[this.at(slot)] as number;
    if (n === 0) return null;
    const sum = this.sum(slot);
    // PostgreSQL's numeric avg: sum / count with select_div_scale (avg(1, 2) is 1.5000000000000000).
    return this.spec.fn === 'avg' ? div(sum, Decimal.fromInt(n)) : sum;
  }

  serialize(slot: number): unknown {
    const n = this.record.data[this.at(slot)] as number;
    if (this.fixedScale !== null) return { n, s: this.get(slot, false) };
    const counts = this.scales.get(slot);
    return {
      n,
      s: this.get(slot, false),
      w: this.working.get(slot) ?? 0,
      ...(counts !== undefined && counts.size > 0 ? { c: [...counts] } : {}),
    };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedDecimalSum;
    this.record.data[this.at(slot)] = d.n;
    let s: Exact = d.s;
    let w = d.w ?? 0;
    let counts = d.c === undefined ? undefined : new Map(d.c.map(([k, v]) => [k, v]));
    if (d.f !== undefined || (typeof s === 'number' && !Number.isInteger(s))) {
      // Written when numeric sums were doubles: integer parts `s` (exact) plus fractions `f`.
      const whole: Exact = typeof s === 'number' ? Math.trunc(s) : s;
      const fraction = (typeof s === 'number' ? s - Math.trunc(s) : 0) + (d.f ?? 0);
      const dec = decimalFromShortest(fraction);
      w = this.fixedScale ?? dec.scale;
      s = addExact(scaleUp(whole, w), dec.withScale(w).unscaled);
      counts = new Map([[w, d.n]]);
    }
    this.set(slot, false, s);
    if (this.fixedScale === null) {
      this.working.set(slot, w);
      if (counts === undefined || counts.size === 0) this.scales.delete(slot);
      else this.scales.set(slot, counts);
    }
  }

  bytes(slot: number): number {
    return 32 + (this.big.has(slot) ? 32 : 0) + (this.scales.get(slot)?.size ?? 0) * 16;
  }
}
