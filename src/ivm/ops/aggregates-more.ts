// BOOL_AND/BOOL_OR (EVERY) and the variance family (VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP):
// invertible aggregates with O(1) state per group, so a delete undoes an insert exactly.
import { floatOutOfRange } from '../../common/cast.ts';
import { checkLength } from '../../common/functions/text.ts';
import { Decimal, ZERO, div, divScale, pow10 } from '../../common/decimal.ts';
import type { Value } from '../../common/types.ts';
import { compareValues, singleKey } from '../../common/values.ts';
import { Jsonb, type JsonNode } from '../../common/json/jsonb.ts';
import type { Arrangement } from '../arrangement.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import type { AggColumn, GroupRecords } from './aggregate-column.ts';

/** BOOL_AND / BOOL_OR: per group the non-null inputs and the true ones, in the group record. */
export class BoolColumn implements AggColumn {
  /** Doubles of the group record (non-null count, true count), and as many in the batch's partials. */
  static readonly WIDTH = 2;

  constructor(
    readonly spec: AggregateSpec,
    private readonly record: GroupRecords,
    private readonly base: number,
    private readonly partials: GroupRecords,
    private readonly pbase: number,
  ) {}

  private at(slot: number): number {
    return slot * this.record.stride + this.base;
  }

  clear(slot: number): void {
    const at = this.at(slot);
    this.record.data[at] = 0;
    this.record.data[at + 1] = 0;
  }

  /** Where touch index `p`'s partial starts in the batch's partials. */
  private pat(p: number): number {
    return p * this.partials.stride + this.pbase;
  }

  resetPartial(_slot: number, p: number): void {
    const at = this.pat(p);
    this.partials.data[at] = 0;
    this.partials.data[at + 1] = 0;
  }

  accumulate(_slot: number, value: Value, weight: number, p: number): void {
    if (value === null) return;
    const d = this.partials.data;
    const at = this.pat(p);
    d[at] = (d[at] as number) + weight;
    if (value === true) d[at + 1] = (d[at + 1] as number) + weight;
  }

  merge(slot: number, p: number): void {
    const d = this.record.data;
    const at = this.at(slot);
    const pd = this.partials.data;
    const pat = this.pat(p);
    d[at] = (d[at] as number) + (pd[pat] as number);
    d[at + 1] = (d[at + 1] as number) + (pd[pat + 1] as number);
  }

  result(slot: number): Value {
    const d = this.record.data;
    const at = this.at(slot);
    const n = d[at] as number;
    if (n === 0) return null;
    const t = d[at + 1] as number;
    return this.spec.fn === 'bool_and' ? t === n : t > 0;
  }

  serialize(slot: number): unknown {
    const at = this.at(slot);
    return { n: this.record.data[at], t: this.record.data[at + 1] };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as { n: number; t: number };
    const at = this.at(slot);
    this.record.data[at] = d.n;
    this.record.data[at + 1] = d.t;
  }

  bytes(): number {
    return 32;
  }
}

/**
 * A group's exact moments: `sx` = Σx and `sxx` = Σx², as integers at a working scale — decimal
 * digits (x = X / 10^w) for integer and numeric inputs, a binary exponent (x = X · 2^w) for floats.
 */
interface Moments {
  n: number;
  w: number;
  sx: bigint;
  sxx: bigint;
  /** Free-scale numeric: inputs per display scale (the result's scale is the largest present). */
  scales?: Map<number, number>;
  /** Floats: +Infinity, -Infinity and NaN inputs, counted (they make the result NaN). */
  nonFinite?: number;
}

interface SerializedMoments {
  readonly n: number;
  readonly w: number;
  readonly sx: bigint | number;
  readonly sxx: bigint | number;
  readonly c?: readonly (readonly [number, number])[];
  readonly x?: number;
}

const F64 = new Float64Array(1);
const U64 = new BigUint64Array(F64.buffer);

/** A finite, nonzero double as m · 2^e with m an odd integer (exact). */
function binaryParts(v: number): [bigint, number] {
  F64[0] = v;
  const bits = U64[0] as bigint;
  const exp = Number((bits >> 52n) & 0x7ffn);
  let m = bits & 0xfffffffffffffn;
  let e: number;
  if (exp === 0) e = -1074;
  else {
    m |= 0x10000000000000n;
    e = exp - 1075;
  }
  while ((m & 1n) === 0n) {
    m >>= 1n;
    e++;
  }
  return [v < 0 ? -m : m, e];
}

function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(16).length * 4;
}

/** x · 2^k for a double x (exact unless the result leaves the normal range). */
function ldexp(x: number, k: number): number {
  while (k > 1000) {
    x *= 2 ** 1000;
    k -= 1000;
  }
  while (k < -1000) {
    x *= 2 ** -1000;
    k += 1000;
  }
  return x * 2 ** k;
}

/** num / den · 2^e2 for positive bigints, as the nearest double (one rounding, with a sticky bit). */
function ratioToDouble(num: bigint, den: bigint, e2: number): number {
  const shift = 66 - (bitLength(num) - bitLength(den));
  const n = shift > 0 ? num << BigInt(shift) : num;
  const d = shift < 0 ? den << BigInt(-shift) : den;
  let q = n / d;
  if (q * d !== n) q |= 1n;
  return ldexp(Number(q), e2 - shift);
}

/** floor(√v) for v ≥ 0 (Newton's method on bigints). */
function isqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = 1n << BigInt(Math.ceil(bitLength(v) / 2) + 1);
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** √d rounded half away from zero to `scale` digits (PostgreSQL's sqrt_var at rscale), d ≥ 0. */
function sqrtDecimal(d: Decimal, scale: number): Decimal {
  // √(U / 10^s) at scale+1 digits: floor(√(U · 10^(2(scale+1) - s))), then round on the last digit.
  const k = 2 * (scale + 1) - d.scale;
  const radicand = k >= 0 ? d.big() * pow10(k) : d.big() / pow10(-k);
  const r = isqrt(radicand);
  return new Decimal((r + 5n) / 10n, scale);
}

/**
 * VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP. Σx and Σx² are kept exactly (bigints at a working
 * scale that only grows), so retraction is exact and the result depends only on the group's current
 * inputs. Integer and numeric inputs: PostgreSQL's numeric formula and scales at output time —
 * (N·Σx² − (Σx)²) / (N·(N−1)) (or N·N) at select_div_scale, the square root at that scale. Float
 * inputs: the same formula in exact binary arithmetic, rounded once to the nearest double (so it can
 * differ from PostgreSQL's own running float8 algorithm in the last bit, never by more).
 */
export class VarianceColumn implements AggColumn {
  private readonly state = new Map<number, Moments>();
  private readonly float: boolean;
  /** Declared scale of the argument (integers 0, numeric(p,s) s); null for free-scale numeric. */
  private readonly fixedScale: number | null;

  constructor(readonly spec: AggregateSpec) {
    const t = spec.argType;
    this.float = t?.kind === 'float';
    this.fixedScale =
      t?.kind === 'int' ? 0 : t?.kind === 'numeric' && t.precision !== undefined ? (t.scale ?? 0) : null;
  }

  private moments(slot: number): Moments {
    let m = this.state.get(slot);
    if (m === undefined) {
      m = { n: 0, w: this.float ? 0 : (this.fixedScale ?? 0), sx: 0n, sxx: 0n };
      this.state.set(slot, m);
    }
    return m;
  }

  clear(slot: number): void {
    this.state.delete(slot);
  }

  resetPartial(): void {
    // The inputs fold straight into the exact sums (addition commutes; nothing to stage).
  }

  accumulate(slot: number, value: Value, weight: number): void {
    if (value === null) return;
    const m = this.moments(slot);
    m.n += weight;
    const w = BigInt(weight);
    if (this.float) {
      const v = value as number;
      if (!Number.isFinite(v)) {
        m.nonFinite = (m.nonFinite ?? 0) + weight;
        return;
      }
      if (v === 0) return;
      const [x, e] = binaryParts(v);
      if (m.sx === 0n && m.sxx === 0n) m.w = e;
      else if (e < m.w) {
        m.sx <<= BigInt(m.w - e);
        m.sxx <<= BigInt(2 * (m.w - e));
        m.w = e;
      }
      const xs = x << BigInt(e - m.w);
      m.sx += xs * w;
      m.sxx += xs * xs * w;
      return;
    }
    let x: bigint;
    let s: number;
    if (value instanceof Decimal) {
      x = value.big();
      s = value.scale;
    } else {
      x = BigInt(value as number | bigint);
      s = 0;
    }
    if (this.fixedScale === null) {
      if (s > m.w) {
        m.sx *= pow10(s - m.w);
        m.sxx *= pow10(2 * (s - m.w));
        m.w = s;
      }
      const scales = (m.scales ??= new Map());
      const c = (scales.get(s) ?? 0) + weight;
      if (c === 0) scales.delete(s);
      else scales.set(s, c);
    }
    if (s !== m.w) x *= pow10(m.w - s);
    m.sx += x * w;
    m.sxx += x * x * w;
  }

  merge(slot: number): void {
    const m = this.state.get(slot);
    if (m !== undefined && m.n === 0) this.state.delete(slot);
  }

  private sample(): boolean {
    return this.spec.fn === 'var_samp' || this.spec.fn === 'stddev_samp';
  }

  private root(): boolean {
    return this.spec.fn === 'stddev_pop' || this.spec.fn === 'stddev_samp';
  }

  result(slot: number): Value {
    const m = this.state.get(slot);
    const n = m?.n ?? 0;
    const sample = this.sample();
    if (m === undefined || n === 0 || (sample && n === 1)) return null;
    const bn = BigInt(n);
    const den = sample ? bn * (bn - 1n) : bn * bn;
    if (this.float) {
      if ((m.nonFinite ?? 0) > 0) return NaN;
      const num = bn * m.sxx - m.sx * m.sx;
      if (num <= 0n) return 0;
      const variance = ratioToDouble(num, den, 2 * m.w);
      if (!Number.isFinite(variance)) throw floatOutOfRange('overflow');
      return this.root() ? Math.sqrt(variance) : variance;
    }
    // Display scale d: the largest scale among the inputs present (PostgreSQL's sumX dscale).
    let d = this.fixedScale ?? 0;
    if (this.fixedScale === null) for (const s of m.scales?.keys() ?? []) if (s > d) d = s;
    // Exact: every input present has at most d digits, so Σx is a multiple of 10^(w-d), Σx² of 10^(2(w-d)).
    const sx = m.sx / pow10(m.w - d);
    const sxx = m.sxx / pow10(2 * (m.w - d));
    const num = bn * sxx - sx * sx;
    // PostgreSQL: a numerator that is not positive gives exactly 0 (scale 0).
    if (num <= 0n) return ZERO;
    const numerator = new Decimal(num, 2 * d);
    const denominator = new Decimal(den, 0);
    const rscale = divScale(numerator, denominator);
    const variance = div(numerator, denominator, rscale);
    return this.root() ? sqrtDecimal(variance, rscale) : variance;
  }

  serialize(slot: number): unknown {
    const m = this.state.get(slot);
    if (m === undefined) return { n: 0, w: 0, sx: 0, sxx: 0 };
    return {
      n: m.n,
      w: m.w,
      sx: m.sx,
      sxx: m.sxx,
      ...(m.scales !== undefined && m.scales.size > 0 ? { c: [...m.scales] } : {}),
      ...(m.nonFinite !== undefined && m.nonFinite !== 0 ? { x: m.nonFinite } : {}),
    };
  }

  deserialize(slot: number, data: unknown): void {
    const d = data as SerializedMoments;
    if (d.n === 0) {
      this.state.delete(slot);
      return;
    }
    this.state.set(slot, {
      n: d.n,
      w: d.w,
      sx: BigInt(d.sx),
      sxx: BigInt(d.sxx),
      ...(d.c !== undefined ? { scales: new Map(d.c.map(([s, c]) => [s, c])) } : {}),
      ...(d.x !== undefined ? { nonFinite: d.x } : {}),
    });
  }

  bytes(slot: number): number {
    const m = this.state.get(slot);
    if (m === undefined) return 0;
    return 64 + (bitLength(m.sx) + bitLength(m.sxx)) / 8 + (m.scales?.size ?? 0) * 16;
  }
}

/**
 * STRING_AGG's result from the group's multiset (MultisetColumn in multiset-aggregate.ts): its distinct
 * values in ascending order, each repeated as often as the group holds it (once with DISTINCT),
 * joined by the delimiter. PostgreSQL leaves the order without ORDER BY undefined; this one is
 * deterministic. Rebuilt for each changed group: O(group size).
 */
export function stringAgg(
  spec: AggregateSpec,
  sorted: readonly Value[],
  counts: Arrangement<number, Value, Value>,
  slot: number,
): string {
  const rows = counts.get(slot)?.rows;
  const delimiter = spec.delimiter ?? '';
  const parts: string[] = [];
  // The result's length is known before it is built: past a text value's limit it is STRING_TOO_LONG
  // (a row error in a view), not the engine's "Invalid string length" (a 500) after a long join.
  let length = -delimiter.length;
  for (const v of sorted) {
    const n = spec.distinct ? 1 : (rows?.get(singleKey(v))?.count ?? 0);
    length += n * ((v as string).length + delimiter.length);
    checkLength(length);
    for (let i = 0; i < n; i++) parts.push(v as string);
  }
  return parts.join(delimiter);
}

/**
 * A JSONB_AGG element's multiset key: its exact text, not jsonb's equality — 1.5 and 1.50 are equal
 * jsonb numbers but each row's element shows as written, whichever rows come and go.
 */
export function jsonbElementKey(v: Value): Value {
  return `x${(v as Jsonb).text}`;
}

/** jsonb's order, equal elements by their text: one order, whatever the history of the group. */
export function compareJsonbElements(a: Value, b: Value): number {
  const c = compareValues(a, b);
  if (c !== 0) return c;
  const x = (a as Jsonb).text;
  const y = (b as Jsonb).text;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * JSONB_AGG: the group's jsonb elements (SQL NULLs already JSON nulls, see the binder) as one array,
 * in jsonb's order, an element held n times repeated n times; with DISTINCT one of equal elements
 * (1.5 and 1.50: the first in text order).
 */
export function jsonbAgg(
  spec: AggregateSpec,
  sorted: readonly Value[],
  counts: Arrangement<number, Value, Value>,
  slot: number,
): Jsonb {
  const rows = counts.get(slot)?.rows;
  const elements: JsonNode[] = [];
  let previous: Value | undefined;
  for (const v of sorted) {
    if (spec.distinct) {
      if (previous === undefined || compareValues(previous, v) !== 0) elements.push((v as Jsonb).root);
      previous = v;
      continue;
    }
    const n = rows?.get(jsonbElementKey(v))?.count ?? 0;
    for (let i = 0; i < n; i++) elements.push((v as Jsonb).root);
  }
  return Jsonb.of(elements);
}

/** Whether `spec` is computed by a column of this file. */
export function isMoreAggregate(spec: AggregateSpec): boolean {
  return spec.fn === 'bool_and' || spec.fn === 'bool_or' || isVariance(spec);
}

function isVariance(spec: AggregateSpec): boolean {
  const f = spec.fn;
  return f === 'var_pop' || f === 'var_samp' || f === 'stddev_pop' || f === 'stddev_samp';
}

/** Doubles of the group record the aggregate uses. */
export function moreRecordWidth(spec: AggregateSpec): number {
  return isVariance(spec) ? 0 : BoolColumn.WIDTH;
}

export function moreAggregateColumn(
  spec: AggregateSpec,
  record: GroupRecords,
  base: number,
  partials: GroupRecords,
  pbase: number,
): AggColumn {
  return isVariance(spec) ? new VarianceColumn(spec) : new BoolColumn(spec, record, base, partials, pbase);
}
