// PostgreSQL's mathematical functions on exact NUMERIC (sqrt, exp, ln, log, power), with its result
// scales (numeric.c: at least 16 significant digits, no fewer decimals than an input, at most 1000)
// and its errors. Values are computed in BigInt fixed point with guard digits and rounded half away
// from zero once at the end, so the printed digits are PostgreSQL's (`sqrt(2::numeric)` is
// 1.414213562373095). Work is bounded by the result: a result needs at most ~3,700 digits (exp's
// argument is below 6000, as in PostgreSQL) or, for an integer power, ~132,000 (numeric's range).
import { SluiceError } from '../errors.ts';
import { Decimal, checked, div, numericOverflow, pow10 } from '../decimal.ts';

/** PostgreSQL's NUMERIC_MIN_SIG_DIGITS, NUMERIC_MAX_DISPLAY_SCALE and NUMERIC_MAX_RESULT_SCALE. */
const MIN_SIG_DIGITS = 16;
const MAX_DISPLAY_SCALE = 1000;
const MAX_RESULT_SCALE = 2000;
/** Extra digits carried through a computation so the one final rounding is correct. */
const GUARD = 12;
const LOG10_2 = Math.log10(2);

function invalidArgument(message: string): SluiceError {
  return new SluiceError('INVALID_VALUE', message);
}

function clampScale(r: number, ...inputs: readonly Decimal[]): number {
  let s = r;
  for (const d of inputs) s = Math.max(s, d.scale);
  return Math.min(Math.max(s, 0), MAX_DISPLAY_SCALE);
}

const absBig = (b: bigint): bigint => (b < 0n ? -b : b);

/** Decimal digits of a non-negative bigint. */
function digitsOf(b: bigint): number {
  return b === 0n ? 1 : b.toString().length;
}

/** floor(log10(|d|)): the decimal exponent of d's leading digit (d ≠ 0). */
function dweight(d: Decimal): number {
  return digitsOf(absBig(d.big())) - 1 - d.scale;
}

/**
 * PostgreSQL's base-10000 form of |d| (d ≠ 0): the weight of the leading digit, its first (up to
 * four) digits, and how many digits it has once trailing zero digits are dropped.
 */
function nbase(d: Decimal): { weight: number; digits: number[]; ndigits: number } {
  let u = absBig(d.big());
  let s = d.scale;
  while (u % 10n === 0n) {
    u /= 10n;
    s--;
  }
  const e = digitsOf(u) - 1 - s;
  const weight = Math.floor(e / 4);
  const low = -s; // decimal exponent of u's last digit
  const pad = ((low % 4) + 4) % 4;
  const text = (u * pow10(pad)).toString();
  const padded = '0'.repeat((4 - (text.length % 4)) % 4) + text;
  const digits: number[] = [];
  for (let i = 0; i < 4 && i * 4 < padded.length; i++) digits.push(Number(padded.slice(i * 4, i * 4 + 4)));
  return { weight, digits, ndigits: padded.length / 4 };
}

/** PostgreSQL's estimate_ln_dweight: roughly the decimal weight of ln(d), for d > 0. */
function estimateLnDweight(d: Decimal): number {
  if (d.sign() <= 0) return 0;
  const u = d.big();
  // 0.9 <= d <= 1.1: ln(1 + x) ≈ x
  const tenths = u * 10n;
  const p = pow10(d.scale);
  if (tenths >= 9n * p && tenths <= 11n * p) {
    const x = u - p;
    return x === 0n ? 0 : dweight(new Decimal(x, d.scale));
  }
  const { weight, digits: ds, ndigits } = nbase(d);
  let digits = ds[0] as number;
  let dw = weight * 4;
  if (ndigits > 1) {
    digits = digits * 10000 + (ds[1] as number);
    dw -= 4;
  }
  const lnVar = Math.log(digits) + dw * 2.302585092994046;
  return Math.trunc(Math.log10(Math.abs(lnVar)));
}

/** |d| in fixed point with `p` digits after the point (truncated). */
function toFixed(d: Decimal, p: number): bigint {
  const u = d.big();
  const k = p - d.scale;
  return k >= 0 ? u * pow10(k) : u / pow10(-k);
}

/** A fixed-point value at precision `from` rounded half away from zero to a Decimal of scale `to`. */
function roundFixed(v: bigint, from: number, to: number): Decimal {
  if (from <= to) return checked(new Decimal(v * pow10(to - from), to));
  const p = pow10(from - to);
  let q = v / p;
  const rem = absBig(v - q * p);
  if (rem * 2n >= p) q += v < 0n ? -1n : 1n;
  return checked(new Decimal(q, to));
}

/**
 * floor(sqrt(n)) for n ≥ 0: the root of n's upper half (recursively), then one Newton step, which
 * leaves it within one or two of the root — about two full-size divisions in all, not one per bit.
 */
function isqrt(n: bigint): bigint {
  if (n < 2n ** 52n) {
    let x = BigInt(Math.floor(Math.sqrt(Number(n))));
    while (x * x > n) x--;
    while ((x + 1n) * (x + 1n) <= n) x++;
    return x;
  }
  const k = BigInt(Math.floor(n.toString(16).length)); // a quarter of the bits, about
  const x0 = isqrt(n >> (2n * k)) << k;
  let x = (x0 + n / x0) >> 1n;
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

/** ln(10) at precision p, cached at the highest precision asked so far. */
let ln10Cache: { p: number; v: bigint } | undefined;
function ln10(p: number): bigint {
  if (ln10Cache === undefined || ln10Cache.p < p) {
    const w = p + GUARD;
    ln10Cache = { p: w, v: lnMantissa(10n * pow10(w), w) };
  }
  return ln10Cache.v / pow10(ln10Cache.p - p);
}

/** ln(m) for a fixed-point m ≥ 1 at precision w (about w - 4 correct digits; callers add guard). */
function lnMantissa(m: bigint, w: number): bigint {
  const one = pow10(w);
  // square roots bring m below 1.01, where atanh's series gains 4.6 digits a term
  let k = 0;
  const limit = one + one / 100n;
  let z = m;
  while (z > limit) {
    z = isqrt(z * one);
    k++;
  }
  // ln z = 2 atanh((z - 1) / (z + 1))
  const y = ((z - one) * one) / (z + one);
  const y2 = (y * y) / one;
  let sum = y;
  let term = y;
  for (let n = 3n; ; n += 2n) {
    term = (term * y2) / one;
    if (term === 0n) break;
    sum += term / n;
  }
  return sum << BigInt(k + 1);
}

/** ln(d) for d > 0 in fixed point at precision w (absolute error a few units of 10^-(w - GUARD/2)). */
function lnFixed(d: Decimal, w: number): bigint {
  const e = dweight(d);
  const work = w + GUARD + String(Math.abs(e)).length;
  // d = m · 10^e with 1 ≤ m < 10
  const u = d.big();
  const k = work - d.scale - e;
  const m = k >= 0 ? u * pow10(k) : u / pow10(-k);
  const r = lnMantissa(m, work) + BigInt(e) * ln10(work);
  return r / pow10(work - w);
}

/** e^x for x in fixed point at precision w, the result at precision w (x bounded by the callers). */
function expFixed(x: bigint, w: number): bigint {
  // halve x k times to |x| < 0.001, sum Taylor's series there, square back k times
  const approx = Math.abs(Number(x / pow10(Math.max(0, w - 15)))) / 10 ** Math.min(w, 15);
  const k = approx < 1e-3 ? 0 : Math.ceil(Math.log2(approx / 1e-3));
  const work = w + Math.ceil(k * 0.302) + GUARD;
  const scaleUp = pow10(work - w);
  const y = (x * scaleUp) >> BigInt(k);
  const oneW = pow10(work);
  let sum = oneW;
  let term = oneW;
  for (let n = 1n; ; n++) {
    term = (term * y) / (oneW * n);
    if (term === 0n) break;
    sum += term;
  }
  for (let i = 0; i < k; i++) sum = (sum * sum) / oneW;
  return sum / scaleUp;
}

/** sqrt(x) of numeric x: scale 16 - (weight+1)*2 + 1 digits at least, x's scale at least (numeric_sqrt). */
export function numericSqrt(x: Decimal): Decimal {
  if (x.sign() < 0) throw invalidArgument('cannot take square root of a negative number');
  const weight = x.sign() === 0 ? 0 : nbase(x).weight;
  const sweight = ((weight + 1) * 4) / 2 - 1;
  const r = clampScale(MIN_SIG_DIGITS - sweight, x);
  // floor(sqrt(x) · 10^(r+1)) is floor(sqrt(u · 10^(2r+2-s))); its last digit decides the rounding
  // (floor of the scaled value when x has more digits: floor(sqrt(floor(v))) = floor(sqrt(v)))
  const k = 2 * r + 2 - x.scale;
  const n = k >= 0 ? x.big() * pow10(k) : x.big() / pow10(-k);
  return roundFixed(isqrt(n), r + 1, r);
}

/** exp(x) of numeric x (numeric_exp / exp_var). */
export function numericExp(x: Decimal): Decimal {
  const approx = x.toNumber();
  const val = Math.max(-MAX_RESULT_SCALE, Math.min(MAX_RESULT_SCALE, approx * 0.434294481903252));
  const r = clampScale(MIN_SIG_DIGITS - Math.trunc(val), x);
  return expAtScale(x, approx, r);
}

/** e^x rounded to scale r; PostgreSQL's exp_var limits: |x| ≥ 6000 overflows, or is 0 below. */
function expAtScale(x: Decimal, approx: number, r: number): Decimal {
  if (Math.abs(approx) >= MAX_RESULT_SCALE * 3) {
    if (approx > 0) throw numericOverflow();
    return new Decimal(0, r);
  }
  const w = r + Math.max(0, Math.ceil(approx * 0.4343)) + GUARD;
  return roundFixed(expFixed(toFixed(x, w), w), w, r);
}

function lnDomain(x: Decimal): void {
  if (x.sign() === 0) throw invalidArgument('cannot take logarithm of zero');
  if (x.sign() < 0) throw invalidArgument('cannot take logarithm of a negative number');
}

/** ln(x) of numeric x (numeric_ln). */
export function numericLn(x: Decimal): Decimal {
  lnDomain(x);
  const r = clampScale(MIN_SIG_DIGITS - estimateLnDweight(x), x);
  return roundFixed(lnFixed(x, r + GUARD), r + GUARD, r);
}

/** log(b, x) of numerics (numeric_log / log_var); log(x) and log10(x) are log(10, x). */
export function numericLog(b: Decimal, x: Decimal): Decimal {
  lnDomain(b);
  lnDomain(x);
  const baseDw = estimateLnDweight(b);
  const resultDw = estimateLnDweight(x) - baseDw;
  const r = clampScale(MIN_SIG_DIGITS - resultDw, b, x);
  const p = r + GUARD + Math.max(0, 1 - baseDw) + Math.max(0, resultDw + 1);
  const lnB = lnFixed(b, p);
  if (lnB === 0n) throw new SluiceError('DIVISION_BY_ZERO', 'division by zero');
  return div(new Decimal(lnFixed(x, p), p), new Decimal(lnB, p), r);
}

/** power(b, e) of numerics (numeric_power / power_var). */
export function numericPower(b: Decimal, e: Decimal): Decimal {
  if (b.sign() === 0 && e.sign() < 0) throw invalidArgument('zero raised to a negative power is undefined');
  const eInt = isInteger(e) ? e.trunc(0).big() : undefined;
  if (eInt !== undefined && eInt >= -(2n ** 31n) && eInt < 2n ** 31n) {
    return powerInt(b, Number(eInt), e.scale);
  }
  if (b.sign() === 0) return new Decimal(0, MIN_SIG_DIGITS);
  let negative = false;
  let base = b;
  if (b.sign() < 0) {
    if (eInt === undefined) {
      throw invalidArgument('a negative number raised to a non-integer power yields a complex result');
    }
    negative = (eInt & 1n) === 1n;
    base = b.abs();
  }
  // PostgreSQL estimates the result's weight from ln(base) at about 8 significant digits
  const lnDw = estimateLnDweight(base);
  const localScale = Math.max(8 - lnDw, 0);
  const lnLow = roundFixed(lnFixed(base, localScale + GUARD), localScale + GUARD, localScale);
  const lnNum = roundFixed(lnLow.big() * e.big(), localScale + e.scale, localScale).toNumber();
  if (Math.abs(lnNum) > MAX_RESULT_SCALE * 3.01) {
    if (lnNum > 0) throw numericOverflow();
    return new Decimal(0, MAX_DISPLAY_SCALE);
  }
  const val = lnNum * 0.434294481903252;
  const r = clampScale(MIN_SIG_DIGITS - Math.trunc(val), base, e);
  // x = e · ln(base), to the precision exp needs
  const w = r + Math.max(0, Math.ceil(val)) + GUARD;
  const eDigits = Math.max(0, e.integerDigits());
  const lnB = lnFixed(base, w + eDigits + GUARD);
  const x = (lnB * e.big()) / pow10(eDigits + GUARD + e.scale);
  if (Math.abs(lnNum) >= MAX_RESULT_SCALE * 3) {
    if (lnNum > 0) throw numericOverflow();
    return new Decimal(0, r);
  }
  const result = roundFixed(expFixed(x, w), w, r);
  return negative ? result.neg() : result;
}

function isInteger(d: Decimal): boolean {
  return d.scale === 0 || d.big() % pow10(d.scale) === 0n;
}

/**
 * base ^ n for an integer n (power_var_int): the result scale from a double estimate of its weight,
 * the value from exact products truncated to the significant digits needed (exact when it fits).
 */
function powerInt(base: Decimal, n: number, expScale: number): Decimal {
  let f = 0;
  if (base.sign() !== 0) {
    const { weight, digits, ndigits } = nbase(base);
    let m = digits[0] as number;
    let p = weight * 4;
    for (let i = 1; i < ndigits && i * 4 < 16; i++) {
      m = m * 10000 + (digits[i] as number);
      p -= 4;
    }
    f = n * (Math.log10(m) + p);
  }
  if (f > (32767 + 1) * 4) throw numericOverflow();
  if (f + 1 < -MAX_DISPLAY_SCALE) return new Decimal(0, MAX_DISPLAY_SCALE);
  const r = clampScale(MIN_SIG_DIGITS - Math.trunc(f), base, new Decimal(0, expScale));
  if (n === 0) return new Decimal(pow10(r), r);
  if (base.sign() === 0) return new Decimal(0, r);
  // |base|^|n| as a float: m · 10^exp with m truncated to `sig` digits
  const sig = Math.max(0, Math.ceil(Math.abs(f))) + r + GUARD + 2;
  let m = 1n;
  let e10 = 0;
  let bm = absBig(base.big());
  let be = -base.scale;
  // decimal digits from the hex length (linear, unlike decimal toString): at most one too many,
  // which the guard digits absorb
  const trim = (v: bigint, e: number): [bigint, number] => {
    const extra = Math.ceil(v.toString(16).length * 4 * LOG10_2) - sig;
    return extra > 0 ? [v / pow10(extra), e + extra] : [v, e];
  };
  [bm, be] = trim(bm, be);
  for (let k = Math.abs(n); ;) {
    if (k & 1) [m, e10] = trim(m * bm, e10 + be);
    k = Math.floor(k / 2);
    if (k === 0) break;
    [bm, be] = trim(bm * bm, be * 2);
  }
  const negative = base.sign() < 0 && n % 2 !== 0;
  let result: Decimal;
  if (n > 0) result = roundFixed(m, -e10, r);
  else result = div(new Decimal(1, 0), e10 <= 0 ? new Decimal(m, -e10) : new Decimal(m * pow10(e10), 0), r);
  return negative ? result.neg() : result;
}

/** div(y, x): the integer quotient of y / x truncated toward zero (numeric_div_trunc), scale 0. */
export function numericDiv(y: Decimal, x: Decimal): Decimal {
  if (x.sign() === 0) throw new SluiceError('DIVISION_BY_ZERO', 'division by zero');
  const k = y.scale - x.scale;
  const num = k <= 0 ? y.big() * pow10(-k) : y.big();
  const den = k > 0 ? x.big() * pow10(k) : x.big();
  return checked(new Decimal(num / den, 0));
}

function bigGcd(a: bigint, b: bigint): bigint {
  let x = absBig(a);
  let y = absBig(b);
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** gcd of numerics: the largest numeric dividing both, at the larger scale (numeric_gcd). */
export function numericGcd(a: Decimal, b: Decimal): Decimal {
  const s = Math.max(a.scale, b.scale);
  return new Decimal(bigGcd(a.withScale(s).big(), b.withScale(s).big()), s);
}

/** lcm of numerics: |a · b| / gcd(a, b), 0 when either is 0, at the larger scale (numeric_lcm). */
export function numericLcm(a: Decimal, b: Decimal): Decimal {
  const s = Math.max(a.scale, b.scale);
  const x = a.withScale(s).big();
  const y = b.withScale(s).big();
  if (x === 0n || y === 0n) return new Decimal(0, s);
  return checked(new Decimal(absBig((x / bigGcd(x, y)) * y), s));
}

/** gcd / lcm of integers (the caller checks the result against the type: gcd(-2^31, 0) overflows). */
export function intGcdLcm(fn: 'gcd' | 'lcm', a: bigint, b: bigint): bigint {
  if (fn === 'gcd') return bigGcd(a, b);
  return a === 0n || b === 0n ? 0n : absBig((a / bigGcd(a, b)) * b);
}

/** scale(x): the digits after the point x shows. */
export function numericScale(x: Decimal): number {
  return x.scale;
}

/** min_scale(x): the fewest digits after the point that show x exactly. */
export function numericMinScale(x: Decimal): number {
  let u = x.big();
  let s = x.scale;
  while (s > 0 && u % 10n === 0n) {
    u /= 10n;
    s--;
  }
  return s;
}

/** trim_scale(x): x without trailing zeros after the point. */
export function numericTrimScale(x: Decimal): Decimal {
  const s = numericMinScale(x);
  return s === x.scale ? x : x.withScale(s);
}
