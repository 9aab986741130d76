// Exact NUMERIC values: an immutable unscaled integer and a scale (value = unscaled / 10^scale), as
// PostgreSQL keeps them — each value has its own display scale ('1.50' shows 1.50), and 1.5 and 1.50
// are equal, order alike and share one Map key. The unscaled part is a JS number while it is a safe
// integer and a bigint beyond (like integers elsewhere), so sums of money stay on doubles' fast path.
import { SluiceError } from './errors.ts';
import { MAX_NUMERIC_INTEGER_DIGITS, MAX_NUMERIC_SCALE, MAX_NUMERIC_TEXT_LENGTH } from './limits.ts';

type Unscaled = number | bigint;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

function norm(u: bigint): Unscaled {
  return u >= MIN_SAFE && u <= MAX_SAFE ? Number(u) : u;
}

/** 10^0 … 10^15, exact doubles. */
export const POW10_NUMBERS: readonly number[] = [];
for (let i = 0, p = 1; i <= 15; i++, p *= 10) (POW10_NUMBERS as number[]).push(p);
const POW10_BIG: bigint[] = [];

/** 10^k as a bigint (cached for the small exponents arithmetic uses all the time). */
export function pow10(k: number): bigint {
  if (k < 64) {
    let p = POW10_BIG[k];
    if (p === undefined) {
      p = 10n ** BigInt(k);
      POW10_BIG[k] = p;
    }
    return p;
  }
  return 10n ** BigInt(k);
}

export function numericOverflow(detail?: string): SluiceError {
  return new SluiceError(
    'NUMERIC_OVERFLOW',
    'value overflows numeric format',
    detail === undefined ? {} : { detail },
  );
}

/** Digits of |u| (1 for zero). */
function digitCount(u: Unscaled): number {
  if (typeof u === 'number') {
    const a = u < 0 ? -u : u; // below 2^53: at most 16 digits
    if (a < 1e8) {
      if (a < 1e4) return a < 1e2 ? (a < 1e1 ? 1 : 2) : a < 1e3 ? 3 : 4;
      return a < 1e6 ? (a < 1e5 ? 5 : 6) : a < 1e7 ? 7 : 8;
    }
    if (a < 1e12) return a < 1e10 ? (a < 1e9 ? 9 : 10) : a < 1e11 ? 11 : 12;
    return a < 1e14 ? (a < 1e13 ? 13 : 14) : a < 1e15 ? 15 : 16;
  }
  return (u < 0n ? -u : u).toString().length;
}

export class Decimal {
  /** value = unscaled / 10^scale; unscaled is a number exactly when it is a safe integer. */
  readonly unscaled: Unscaled;
  /** Digits after the point that the value shows (0 ≤ scale ≤ MAX_NUMERIC_SCALE). */
  readonly scale: number;
  private keyText: string | undefined;
  private exactText: string | undefined;

  constructor(unscaled: Unscaled, scale: number) {
    this.unscaled = typeof unscaled === 'bigint' ? norm(unscaled) : unscaled === 0 ? 0 : unscaled;
    this.scale = scale;
  }

  static fromInt(v: number | bigint): Decimal {
    return new Decimal(v, 0);
  }

  /** The unscaled value as a bigint. */
  big(): bigint {
    return typeof this.unscaled === 'bigint' ? this.unscaled : BigInt(this.unscaled);
  }

  sign(): -1 | 0 | 1 {
    const u = this.unscaled;
    return u > 0 ? 1 : u < 0 ? -1 : 0;
  }

  /** Exact text, with exactly `scale` digits after the point (PostgreSQL's numeric_out). */
  toString(): string {
    const u = this.unscaled;
    const s = this.scale;
    if (s === 0) return String(u);
    const neg = u < 0;
    let digits = String(neg ? -u : u);
    if (digits.length <= s) digits = '0'.repeat(s - digits.length + 1) + digits;
    const at = digits.length - s;
    return `${neg ? '-' : ''}${digits.slice(0, at)}.${digits.slice(at)}`;
  }

  /** JSON form: the exact text as a string (so the wire never rounds it). */
  toJSON(): string {
    return this.toString();
  }

  /** The nearest double (correctly rounded, through the exact text). */
  toNumber(): number {
    if (typeof this.unscaled === 'number' && this.scale <= 15 && Math.abs(this.unscaled) < 2 ** 53) {
      // Both exact as doubles, so one division is correctly rounded.
      const r = this.unscaled / (POW10_NUMBERS[this.scale] as number);
      return r === 0 ? 0 : r;
    }
    const r = Number(this.toString());
    return r === 0 ? 0 : r;
  }

  /** A Map key that tells scales apart (1.5 and 1.50: two keys): a row's identity (encodeExactValues). */
  exactKey(): string {
    if (this.exactText === undefined) this.exactText = `d${this.unscaled}e${this.scale};`;
    return this.exactText;
  }

  /** A Map key: equal values of any scale share it (trailing zeros dropped). */
  key(): string {
    if (this.keyText !== undefined) return this.keyText;
    const { unscaled: u, scale: s } = stripZeros(this);
    this.keyText = `d${u}e${u === 0 ? 0 : s};`;
    return this.keyText;
  }

  /** Integer digits before the point (0 for |x| < 1). */
  integerDigits(): number {
    return Math.max(0, digitCount(this.unscaled) - this.scale);
  }

  /** Same value with `scale` digits: exact when growing, rounded half away from zero when shrinking. */
  withScale(scale: number): Decimal {
    if (scale === this.scale) return this;
    if (scale > this.scale) {
      const k = scale - this.scale;
      const u = this.unscaled;
      if (typeof u === 'number' && k <= 15) {
        const r = u * (POW10_NUMBERS[k] as number);
        if (Number.isSafeInteger(r)) return new Decimal(r, scale);
      }
      return new Decimal(this.big() * pow10(k), scale);
    }
    return this.round(scale);
  }

  /** Rounded half away from zero at `digits` after the point (negative: before it); scale max(digits, 0). */
  round(digits: number): Decimal {
    return this.cut(digits, 'round');
  }

  /** Truncated toward zero at `digits` after the point; scale max(digits, 0). */
  trunc(digits: number): Decimal {
    return this.cut(digits, 'trunc');
  }

  floor(): Decimal {
    return this.cut(0, 'floor');
  }

  ceil(): Decimal {
    return this.cut(0, 'ceil');
  }

  neg(): Decimal {
    return new Decimal(typeof this.unscaled === 'number' ? -this.unscaled : -this.unscaled, this.scale);
  }

  abs(): Decimal {
    return this.sign() < 0 ? this.neg() : this;
  }

  /** Cut at `digits`: the truncated quotient, then one step by `mode` when digits were dropped. */
  private cut(digits: number, mode: 'round' | 'trunc' | 'floor' | 'ceil'): Decimal {
    const target = Math.max(digits, 0);
    if (digits >= this.scale) return target === this.scale ? this : this.withScale(target);
    const drop = this.scale - digits; // digits dropped from the unscaled value (≥ 1)
    const u = this.unscaled;
    let q: Unscaled;
    if (typeof u === 'number' && drop <= 15) {
      const p = POW10_NUMBERS[drop] as number;
      // Exact: |u| < 2^53, so the rounded quotient stays on the right side of the integer below.
      let t = Math.trunc(u / p);
      if (mode !== 'trunc') {
        const rem = u - t * p; // exact, |t * p| ≤ |u|; the sign of u (or 0)
        if (mode === 'round') {
          if (Math.abs(rem) * 2 >= p) t += u < 0 ? -1 : 1;
        } else if (mode === 'floor') {
          if (rem < 0) t -= 1;
        } else if (rem > 0) t += 1;
      }
      q = t;
    } else {
      q = cutNear(u, drop, mode) ?? cutExact(u, drop, mode);
    }
    // Dropped digits before the point (digits < 0): scale back up to the point.
    if (digits < 0) {
      const big = (typeof q === 'bigint' ? q : BigInt(q)) * pow10(-digits);
      return checked(new Decimal(big, 0));
    }
    return new Decimal(q, target);
  }
}

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POW10_EXACT_DOUBLES: number[] = [];
for (let i = 0; i <= 22; i++) POW10_EXACT_DOUBLES.push(Number(`1e${i}`));
/** Below this a quotient's double is within 2^-11.9 of the true one (errors 2 × 2^-53 relative). */
const NEAR_LIMIT = 2 ** 40;
/** Fractions this close to a decision point (an integer; a half when rounding) take the exact path. */
const NEAR_MARGIN = 2 ** -10;

/**
 * u / 10^drop cut by `mode` (as Decimal.cut), decided on doubles when that is certain: a bigint
 * quotient of a division result (500.1230000000000000) floored or truncated without bigint
 * division. Number(u) / 10^drop is within 2^-11.9 of the true quotient below 2^40 (Number(u) and
 * the division each correctly rounded, and 10^drop exact), so a fraction more than 2^-10 from
 * the integers (and from one half, to round) decides like the exact one. Null otherwise.
 */
function cutNear(u: Unscaled, drop: number, mode: 'round' | 'trunc' | 'floor' | 'ceil'): number | null {
  if (drop > 22) return null;
  const approx = Number(u) / (POW10_EXACT_DOUBLES[drop] as number);
  if (!(approx < NEAR_LIMIT && approx > -NEAR_LIMIT)) return null;
  const t = Math.trunc(approx);
  const f = approx < 0 ? t - approx : approx - t;
  if (f < NEAR_MARGIN || f > 1 - NEAR_MARGIN) return null;
  switch (mode) {
    case 'trunc':
      return t;
    case 'floor':
      return approx < 0 ? t - 1 : t;
    case 'ceil':
      return approx > 0 ? t + 1 : t;
    case 'round':
      if (f > 0.5 - NEAR_MARGIN && f < 0.5 + NEAR_MARGIN) return null;
      return f > 0.5 ? t + (approx < 0 ? -1 : 1) : t;
  }
}

/** u / 10^drop cut by `mode`, on bigints. */
function cutExact(u: Unscaled, drop: number, mode: 'round' | 'trunc' | 'floor' | 'ceil'): bigint {
  const b = typeof u === 'bigint' ? u : BigInt(u);
  const p = pow10(drop);
  let t = b / p;
  if (mode !== 'trunc') {
    const rem = b - t * p;
    if (mode === 'round') {
      if ((rem < 0n ? -rem : rem) * 2n >= p) t += b < 0n ? -1n : 1n;
    } else if (mode === 'floor') {
      if (rem < 0n) t -= 1n;
    } else if (rem > 0n) t += 1n;
  }
  return t;
}

export const ZERO = new Decimal(0, 0);
export const ONE = new Decimal(1, 0);

/** Unscaled values below this (in magnitude) never overflow: 1000 digits < MAX_NUMERIC_INTEGER_DIGITS. */
const CHECK_FREE = pow10(Math.min(1000, MAX_NUMERIC_INTEGER_DIGITS));

/** Throws NUMERIC_OVERFLOW when `d` is beyond PostgreSQL's numeric range; returns it otherwise. */
export function checked(d: Decimal): Decimal {
  const u = d.unscaled;
  if (typeof u === 'number') return d; // at most 16 digits
  // Under 10^1000 there are fewer integer digits than the limit: no need to print the digits.
  if (u < CHECK_FREE && u > -CHECK_FREE) return d;
  if (d.integerDigits() > MAX_NUMERIC_INTEGER_DIGITS) throw numericOverflow();
  return d;
}

const DECIMAL_TEXT = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/**
 * A decimal from its text (`12.50`, `-1e3`, ` .5 `), exact; null when the text is not a number.
 * The scale is the digits after the point less the exponent (as PostgreSQL's numeric_in). Text with
 * more digits than PostgreSQL's numeric holds (131072 before the point, 16383 after) is an error,
 * checked before any digit is converted so a huge literal costs nothing.
 */
export function parseDecimal(text: string): Decimal | null {
  if (text.length > MAX_NUMERIC_TEXT_LENGTH) throw numericOverflow('the text has too many digits');
  const m = DECIMAL_TEXT.exec(text);
  if (m === null) return null;
  const whole = m[2] ?? '';
  const frac = m[3] ?? '';
  if (whole === '' && frac === '') return null;
  const expText = m[4];
  let exp = 0;
  if (expText !== undefined) {
    exp = Number(expText);
    if (!Number.isSafeInteger(exp) || Math.abs(exp) > MAX_NUMERIC_INTEGER_DIGITS + MAX_NUMERIC_SCALE) {
      throw numericOverflow();
    }
  }
  let digits = (whole + frac).replace(/^0+/, '');
  let scale = frac.length - exp;
  if (digits === '') return new Decimal(0, Math.min(Math.max(scale, 0), MAX_NUMERIC_SCALE));
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  if (digits.length - scale > MAX_NUMERIC_INTEGER_DIGITS) throw numericOverflow();
  if (scale > MAX_NUMERIC_SCALE) {
    // PostgreSQL: more than 16383 digits after the point is out of range for numeric's display scale.
    throw numericOverflow(`at most ${MAX_NUMERIC_SCALE} digits after the point are supported`);
  }
  const neg = m[1] === '-';
  const n = digits.length <= 15 ? Number(digits) : BigInt(digits);
  return new Decimal(neg ? -n : n, scale);
}

/** A double as a decimal of its shortest text (how an old numeric-as-double state reads back). */
export function decimalFromShortest(x: number): Decimal {
  if (!Number.isFinite(x)) throw new SluiceError('INVALID_CAST', `cannot convert ${String(x)} to numeric`);
  return parseDecimal(String(x)) as Decimal;
}

/**
 * A double cast to numeric as PostgreSQL's float8_numeric does: to `significant` digits (15 for
 * double precision, DBL_DIG; 6 for real, FLT_DIG), so (0.1 + 0.2)::numeric is 0.3.
 */
export function decimalFromDouble(x: number, significant: number): Decimal {
  if (!Number.isFinite(x)) throw new SluiceError('INVALID_CAST', `cannot convert ${String(x)} to numeric`);
  const d = parseDecimal(x.toPrecision(significant)) as Decimal;
  return stripZeros(d);
}

/** Trailing zeros after the point removed (what %g prints). */
function stripZeros(d: Decimal): Decimal {
  let u = d.unscaled;
  let s = d.scale;
  if (typeof u === 'number') {
    while (s > 0 && u % 10 === 0) {
      u /= 10;
      s--;
    }
  } else {
    while (s > 0 && u % 10n === 0n) {
      u /= 10n;
      s--;
    }
  }
  return s === d.scale ? d : new Decimal(u, s);
}

/** Exact order of two decimals of any scales. */
export function compareDecimals(a: Decimal, b: Decimal): number {
  const ua = a.unscaled;
  const ub = b.unscaled;
  if (a.scale === b.scale && typeof ua === 'number' && typeof ub === 'number') {
    return ua < ub ? -1 : ua > ub ? 1 : 0;
  }
  const sa = a.sign();
  const sb = b.sign();
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  const x = a.scale >= b.scale ? a.big() : a.big() * pow10(b.scale - a.scale);
  const y = b.scale >= a.scale ? b.big() : b.big() * pow10(a.scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a and b at their common (larger) scale, as bigints. */
function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const s = Math.max(a.scale, b.scale);
  return [a.withScale(s).big(), b.withScale(s).big(), s];
}

export function add(a: Decimal, b: Decimal): Decimal {
  const ua = a.unscaled;
  const ub = b.unscaled;
  if (a.scale === b.scale && typeof ua === 'number' && typeof ub === 'number') {
    const r = ua + ub;
    if (Number.isSafeInteger(r)) return new Decimal(r, a.scale);
  }
  const [x, y, s] = aligned(a, b);
  return checked(new Decimal(x + y, s));
}

export function sub(a: Decimal, b: Decimal): Decimal {
  return add(a, b.neg());
}

/** a × b at scale a.scale + b.scale (PostgreSQL's numeric_mul), within numeric's range. */
export function mul(a: Decimal, b: Decimal): Decimal {
  let scale = a.scale + b.scale;
  const ua = a.unscaled;
  const ub = b.unscaled;
  if (typeof ua === 'number' && typeof ub === 'number') {
    const r = ua * ub;
    if (Number.isSafeInteger(r) && scale <= MAX_NUMERIC_SCALE) return new Decimal(r, scale);
  }
  // Refuse before multiplying when the product's integer digits must exceed the limit.
  const da = digitCount(ua) - a.scale;
  const db = digitCount(ub) - b.scale;
  if (a.sign() !== 0 && b.sign() !== 0 && da + db - 1 > MAX_NUMERIC_INTEGER_DIGITS) throw numericOverflow();
  let r = new Decimal(a.big() * b.big(), scale);
  if (scale > MAX_NUMERIC_SCALE) {
    r = r.round(MAX_NUMERIC_SCALE);
    scale = MAX_NUMERIC_SCALE;
  }
  return checked(r);
}

function divisionByZero(): SluiceError {
  return new SluiceError('DIVISION_BY_ZERO', 'division by zero');
}

/**
 * PostgreSQL's weight and first digit of a value in base 10000 (NBASE): the weight of the leading
 * base-10000 digit (0 for 1..9999, -1 for 0.0001..0.9999) and that digit's value, as one number
 * weight × 10000 + digit (no array per call: select_div_scale runs for every division).
 */
function nbaseLead(d: Decimal): number {
  const u = d.unscaled;
  if (u === 0) return 0;
  let digits: string | null = null;
  let n: number;
  let a = 0;
  if (typeof u === 'number') {
    a = Math.abs(u);
    n = digitCount(a);
  } else {
    digits = String(u < 0n ? -u : u);
    n = digits.length;
  }
  const e10 = n - d.scale - 1; // decimal exponent of the leading digit
  const weight = Math.floor(e10 / 4);
  const count = e10 - weight * 4 + 1;
  let lead: number;
  if (digits !== null) lead = Number(digits.slice(0, count).padEnd(count, '0'));
  else if (n < count) lead = a * (POW10_NUMBERS[count - n] as number);
  // Exact: below 2^53 the rounded a / p never reaches the integer above the true quotient.
  else lead = Math.floor(a / (POW10_NUMBERS[n - count] as number));
  return weight * 10000 + lead;
}

/**
 * The result scale of a / b by PostgreSQL's select_div_scale: at least 16 significant digits, and
 * no fewer digits after the point than either input shows (at most 1000).
 */
export function divScale(a: Decimal, b: Decimal): number {
  const l1 = nbaseLead(a);
  const l2 = nbaseLead(b);
  const w1 = Math.floor(l1 / 10000);
  const w2 = Math.floor(l2 / 10000);
  let qweight = w1 - w2;
  if (l1 - w1 * 10000 <= l2 - w2 * 10000) qweight--;
  let rscale = 16 - qweight * 4;
  rscale = Math.max(rscale, a.scale, b.scale, 0);
  return Math.min(rscale, 1000);
}

/** a / b rounded half away from zero at `scale` (divScale by default). */
export function div(a: Decimal, b: Decimal, scale: number = divScale(a, b)): Decimal {
  if (b.sign() === 0) throw divisionByZero();
  const fast = divSafe(a, b, scale);
  if (fast !== null) return fast;
  // a/b = (ua / 10^sa) / (ub / 10^sb); at `scale`: ua * 10^(scale - sa + sb) / ub
  const k = scale - a.scale + b.scale;
  let num = a.big();
  let den = b.big();
  if (k >= 0) num *= pow10(k);
  else den *= pow10(-k);
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  let q = num / den;
  const rem = num - q * den;
  if ((rem < 0n ? -rem : rem) * 2n >= den) q += num < 0n ? -1n : 1n;
  return checked(new Decimal(q, scale));
}

/** Quotient digits past this many go to the bigint path (select_div_scale asks ~16-20). */
const FAST_DIV_DIGITS = 40;
const TWO_53 = 2 ** 53;

/**
 * `div` on doubles, when both unscaled values are safe integers and b ≠ 0: the same quotient,
 * rounded the same way, without a bigint per step. Long division: the integer part, then the
 * digits after it in chunks small enough that remainder × 10^chunk stays below 2^53, every step
 * an exact integer operation (a % p and (a - a % p) / p are exact on safe integers). The digits
 * gather in a double while it is a safe integer and in a bigint beyond. Null when the divisor is
 * too large for chunks of a digit, or too many digits are asked: the bigint path then.
 */
function divSafe(a: Decimal, b: Decimal, scale: number): Decimal | null {
  const ua = a.unscaled;
  const ub = b.unscaled;
  if (typeof ua !== 'number' || typeof ub !== 'number') return null;
  let k = scale - a.scale + b.scale; // the quotient is a × 10^k / b, rounded to an integer
  let den = Math.abs(ub);
  if (k < 0) {
    if (k < -15) return null;
    den *= POW10_NUMBERS[-k] as number; // exact when the result is safe (checked next)
    if (den > Number.MAX_SAFE_INTEGER) return null;
    k = 0;
  }
  if (k > FAST_DIV_DIGITS) return null;
  // Digits per step: den × 10^chunk ≤ 2^53, so every remainder × 10^chunk is below 2^53.
  let chunk = 16 - digitCount(den); // den < 10^(16 - chunk), so den × 10^chunk < 10^16
  if (chunk > 15 || den * (POW10_NUMBERS[chunk] as number) > TWO_53) chunk--;
  if (chunk <= 0 && k > 0) return null;
  // Exact integer steps: below 2^53, the rounded x / den never reaches the integer above the true
  // quotient (its error is under half an ulp < 1 / den), so Math.floor of it is the quotient.
  const neg = ua < 0 !== ub < 0;
  const num = ua < 0 ? -ua : ua;
  let hi = Math.floor(num / den);
  let r = num - hi * den;
  let big: bigint | null = null; // the leading digits once past a double
  // Every chunk but the last joins the leading digits …
  while (k > chunk) {
    const p = POW10_NUMBERS[chunk] as number;
    const x = r * p; // < den × 10^chunk ≤ 2^53: exact
    const digits = Math.floor(x / den);
    r = x - digits * den;
    const next = hi * p + digits; // exact when ≤ MAX_SAFE; rounding is monotone, so the test is sound
    if (big === null && next <= Number.MAX_SAFE_INTEGER) hi = next;
    else big = (big ?? BigInt(hi)) * pow10(chunk) + BigInt(digits);
    k -= chunk;
  }
  // … and the last one, rounded half away from zero on the magnitude (as the bigint path), joins
  // once: lo may reach 10^k, which the join carries.
  const p = POW10_NUMBERS[k] as number;
  const x = r * p;
  let lo = Math.floor(x / den);
  r = x - lo * den;
  if (r * 2 >= den) lo += 1;
  if (big === null) {
    const v = hi * p + lo;
    if (v <= Number.MAX_SAFE_INTEGER) return new Decimal(neg ? -v : v, scale);
    // No overflow check: |quotient| < 2^53 × 10^FAST_DIV_DIGITS, far below the integer digit limit.
    return new Decimal(BigInt(neg ? -hi : hi) * pow10(k) + BigInt(neg ? -lo : lo), scale);
  }
  const q = big * pow10(k) + BigInt(lo);
  return new Decimal(neg ? -q : q, scale);
}

/**
 * FLOOR(a / b) (or CEIL) exactly as div(a, b).floor() — the quotient rounded half away from zero
 * at select_div_scale s, then floored — without the quotient's digits (a bucket's FLOOR(x / width)
 * would build a bigint per row only to cut it). With |a / b| = X = n / d (safe integers), i its
 * integer part and rem = n − i·d, the rounded quotient would carry into i + 1 only when
 * (d − rem)·2·10^s ≤ d, and would show no digits after the point with rem ≠ 0 only when
 * rem·2·10^s < d: either needs d ≥ 2·10^s. But select_div_scale keeps 16 significant digits:
 * with qweight the quotient's NBASE weight, X ≥ 10^(4·qweight) and s ≥ 16 − 4·qweight, so
 * X·10^s ≥ 10^16 and then n = X·d ≥ 2·10^16 > 2^53 — never for safe n. So here the rounded
 * quotient's integer part is i, and it is an integer exactly when rem is 0 (no scale needed).
 * Null when the operands are not safe integers at a common scale (or b is 0): the caller composes
 * div and floor then.
 */
export function divFloorCeil(a: Decimal, b: Decimal, up: boolean): Decimal | null {
  const ua = a.unscaled;
  const ub = b.unscaled;
  if (typeof ua !== 'number' || typeof ub !== 'number' || ub === 0) return null;
  let n = ua < 0 ? -ua : ua;
  let d = ub < 0 ? -ub : ub;
  const shift = b.scale - a.scale; // X = (n × 10^shift) / d
  if (shift > 0) {
    if (shift > 15) return null;
    n *= POW10_NUMBERS[shift] as number;
    if (n > Number.MAX_SAFE_INTEGER) return null; // (exact below: the true product is then safe)
  } else if (shift < 0) {
    if (shift < -15) return null;
    d *= POW10_NUMBERS[-shift] as number;
    if (d > Number.MAX_SAFE_INTEGER) return null;
  }
  const i = Math.floor(n / d); // exact: n < 2^53 (see divSafe); i + 1 below needs d ≥ 2, so i < 2^52
  const whole = n - i * d === 0;
  const neg = ua < 0 !== ub < 0;
  let r: number;
  if (up) r = neg ? -i : whole ? i : i + 1;
  else r = neg ? (whole ? -i : -(i + 1)) : i;
  return new Decimal(r, 0);
}

/** a % b, with the sign of a, at the larger scale (PostgreSQL's numeric_mod). */
export function mod(a: Decimal, b: Decimal): Decimal {
  if (b.sign() === 0) throw divisionByZero();
  const [x, y, s] = aligned(a, b);
  return new Decimal(x % y, s);
}

/**
 * numeric(precision, scale): `d` rounded half away from zero to `scale` digits, then at most
 * `precision - scale` digits before the point ("numeric field overflow" beyond, as PostgreSQL).
 */
export function fitDecimal(d: Decimal, precision: number, scale: number): Decimal {
  const r = d.withScale(scale);
  if (r.sign() !== 0 && digitCount(r.unscaled) > precision) {
    throw new SluiceError('NUMERIC_OVERFLOW', 'numeric field overflow', {
      detail: `A field with precision ${precision}, scale ${scale} must round to an absolute value less than ${precision === scale ? '1' : `10^${precision - scale}`}.`,
    });
  }
  return r;
}
