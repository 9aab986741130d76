// PostgreSQL's mathematical functions over doubles (on NUMERIC arguments they run on the nearest
// doubles and compile-function.ts casts the result back to numeric). Where
// PostgreSQL raises an error — a result out of range, a square root of a negative number, a
// logarithm of zero — so do these: never Infinity or NaN from finite arguments.
import { SluiceError } from '../errors.ts';
import { floatOutOfRange } from '../cast.ts';
import { checkInt } from '../values.ts';

/** A result computed from finite arguments: infinite is an overflow, zero (when `zeroIsUnderflow`) an underflow. */
export function checkResult(r: number, finiteArgs: boolean, zeroIsUnderflow: boolean, bits: 32 | 64): number {
  const fits = bits === 64 ? r : Math.fround(r);
  if (finiteArgs && !Number.isFinite(fits) && !Number.isNaN(fits)) throw floatOutOfRange('overflow');
  if (finiteArgs && zeroIsUnderflow && fits === 0) throw floatOutOfRange('underflow');
  return r;
}

function invalidArgument(message: string): SluiceError {
  return new SluiceError('INVALID_VALUE', message);
}

export function power(x: number, y: number, bits: 32 | 64 = 64): number {
  if (x === 0 && y < 0) throw invalidArgument('zero raised to a negative power is undefined');
  if (x < 0 && Number.isFinite(y) && !Number.isInteger(y)) {
    throw invalidArgument('a negative number raised to a non-integer power yields a complex result');
  }
  // PostgreSQL (POSIX pow): 1 ^ anything and anything ^ 0 are 1, even NaN.
  if (x === 1 || y === 0) return 1;
  const r = x ** y;
  return checkResult(r, Number.isFinite(x) && Number.isFinite(y), x !== 0, bits);
}

export function sqrt(x: number): number {
  if (x < 0) throw invalidArgument('cannot take square root of a negative number');
  return Math.sqrt(x);
}

export function exp(x: number): number {
  const r = Math.exp(x);
  return checkResult(r, Number.isFinite(x), true, 64);
}

function logDomain(x: number): void {
  if (x === 0) throw invalidArgument('cannot take logarithm of zero');
  if (x < 0) throw invalidArgument('cannot take logarithm of a negative number');
}

export function ln(x: number): number {
  logDomain(x);
  return Math.log(x);
}

export function log10(x: number): number {
  logDomain(x);
  return Math.log10(x);
}

/** log(b, x): the logarithm of x to base b. */
export function logBase(b: number, x: number): number {
  logDomain(b);
  logDomain(x);
  const d = Math.log(b);
  if (d === 0) throw new SluiceError('DIVISION_BY_ZERO', 'division by zero');
  const r = Math.log(x) / d;
  // exact for powers of the base (log(2, 8) is 3, not 2.9999999999999996)
  const rounded = Math.round(r);
  return Math.abs(r - rounded) < 1e-12 && b ** rounded === x ? rounded : r;
}

/** sign(x) of a float as PostgreSQL's dsign: NaN is neither above nor below 0, so its sign is 0. */
export function sign(x: number): number {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/** trunc(x [, digits]): x with the digits after the given place dropped (toward zero). */
export function trunc(x: number, digits = 0): number {
  if (!Number.isFinite(x)) return x;
  if (digits === 0) return Math.trunc(x) + 0;
  const f = 10 ** digits;
  if (f === 0) return 0;
  const y = x * f;
  if (!Number.isFinite(y) || Math.abs(y) >= 2 ** 53) return x;
  // a nudge of one ulp so 1.1 truncated to one place stays 1.1 (1.1 * 10 is 11.000000000000002)
  const t = Math.trunc(y + Math.sign(y) * Math.abs(y) * Number.EPSILON);
  return t / f + 0;
}

/** width_bucket(operand, low, high, count): the bucket of `count` equal ones that operand falls in. */
export function widthBucket(operand: number, low: number, high: number, count: number): number {
  if (count <= 0) throw invalidArgument('count must be greater than zero');
  if (Number.isNaN(operand) || Number.isNaN(low) || Number.isNaN(high)) {
    throw invalidArgument('operand, lower bound, and upper bound cannot be NaN');
  }
  if (!Number.isFinite(low) || !Number.isFinite(high)) {
    throw invalidArgument('lower and upper bounds must be finite');
  }
  if (low === high) throw invalidArgument('lower bound cannot equal upper bound');
  let bucket: number;
  if (low < high) {
    if (operand < low) bucket = 0;
    else if (operand >= high) bucket = count + 1;
    else bucket = Math.floor(((operand - low) / (high - low)) * count) + 1;
  } else {
    if (operand > low) bucket = 0;
    else if (operand <= high) bucket = count + 1;
    else bucket = Math.floor(((low - operand) / (low - high)) * count) + 1;
  }
  // a rounding at the top edge must not give count + 1 for an operand inside the range
  if (bucket > count && (low < high ? operand < high : operand > high)) bucket = count;
  return checkInt(bucket, 32) as number;
}
