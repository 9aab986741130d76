// The arithmetic of scalar expressions, per SQL type, as PostgreSQL checks it: integers exact
// (64-bit, a bigint beyond 2^53) with overflow errors, exact decimals, doubles whose overflow and
// underflow are errors rather than Infinity or 0; and the value helpers of LIKE and ROUND. The
// compiler in scalar-expr.ts picks one of these per node.
import { SluiceError } from './errors.ts';
import type { SqlType, Value } from './types.ts';
import { floatOutOfRange, shortestFloat32 } from './cast.ts';
import { checkInt, isInt64, normalizeBigInt, overflow } from './values.ts';
import { Decimal, add, div as decDiv, mod as decMod, mul, sub } from './decimal.ts';
import { MAX_NUMERIC_INTEGER_DIGITS, MAX_NUMERIC_SCALE } from './limits.ts';

function divisionByZero(): SluiceError {
  return new SluiceError('DIVISION_BY_ZERO', 'division by zero');
}

type Num = number | bigint;

function intOp(
  bits: 16 | 32 | 64,
  fast: (a: number, b: number) => number,
  exact: (a: bigint, b: bigint) => bigint,
) {
  if (bits !== 64) {
    return (a: Num, b: Num): Num => checkInt(fast(a as number, b as number), bits);
  }
  return (a: Num, b: Num): Num => {
    if (typeof a === 'number' && typeof b === 'number') {
      const r = fast(a, b);
      if (Number.isSafeInteger(r)) return r;
    }
    const r = exact(BigInt(a), BigInt(b));
    if (!isInt64(r)) throw overflow('bigint');
    return normalizeBigInt(r);
  };
}

function intDiv(bits: 16 | 32 | 64) {
  return (a: Num, b: Num): Num => {
    if (b === 0 || b === 0n) throw divisionByZero();
    if (typeof a === 'number' && typeof b === 'number' && Math.abs(a) < 2 ** 52) {
      return checkInt(Math.trunc(a / b) + 0, bits); // no -0 for integers (-1 / 2)
    }
    const r = BigInt(a) / BigInt(b);
    return checkInt(normalizeBigInt(r), bits);
  };
}

function intMod(a: Num, b: Num): Num {
  if (b === 0 || b === 0n) throw divisionByZero();
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a % b;
    return r === 0 ? 0 : r; // no -0 for integers
  }
  return normalizeBigInt(BigInt(a) % BigInt(b));
}

/**
 * A float result as PostgreSQL checks it: infinite from finite operands is an overflow, and zero
 * from a product or quotient that cannot be zero is an underflow (both NUMERIC_OVERFLOW, never a
 * silent Infinity or 0). A real's result must also fit a real.
 */
function checkFloat(
  r: number,
  a: number,
  b: number,
  bits: 32 | 64,
  op: 'sum' | 'product' | 'quotient',
): number {
  const fits = bits === 64 ? r : Math.fround(r);
  if (!Number.isFinite(fits) && Number.isFinite(a) && Number.isFinite(b)) throw floatOutOfRange('overflow');
  if (fits === 0 && a !== 0 && (op === 'product' ? b !== 0 : op === 'quotient' && Number.isFinite(b))) {
    throw floatOutOfRange('underflow');
  }
  // A real's result is a real (PostgreSQL's float4pl and kin compute in single precision), held
  // as the double of its shortest digits like every real: 0.1::real + 0.2::real is 0.3, not
  // 0.30000000000000004, and 1.5::real + 16777217::real is 1.6777218e+07.
  return bits === 64 ? r : shortestFloat32(fits);
}

export function arith(
  fn: 'add' | 'sub' | 'mul' | 'div' | 'mod',
  type: SqlType,
): (a: Value, b: Value) => Value {
  if (type.kind === 'int') {
    const bits = type.bits;
    let op: (a: Num, b: Num) => Num;
    switch (fn) {
      case 'add':
        op = intOp(
          bits,
          (a, b) => a + b,
          (a, b) => a + b,
        );
        break;
      case 'sub':
        op = intOp(
          bits,
          (a, b) => a - b,
          (a, b) => a - b,
        );
        break;
      case 'mul':
        op = intOp(
          bits,
          (a, b) => a * b + 0, // no -0 for integers (-1 * 0 is -0 in JS)
          (a, b) => a * b,
        );
        break;
      case 'div':
        op = intDiv(bits);
        break;
      case 'mod':
        op = intMod;
        break;
    }
    return (a, b) => (a === null || b === null ? null : op(a as Num, b as Num));
  }
  if (type.kind === 'numeric') {
    // Exact decimals (PostgreSQL's result scales: + - keep the larger scale, * adds them, / by
    // select_div_scale); the binder has cast both operands to numeric.
    const op = { add, sub, mul, div: (x: Decimal, y: Decimal) => decDiv(x, y), mod: decMod }[fn];
    return (a, b) => (a === null || b === null ? null : op(a as Decimal, b as Decimal));
  }
  const bits = type.kind === 'float' ? type.bits : 64;
  // A real operand is held as the double of its shortest digits (0.1): its single-precision value
  // is what PostgreSQL computes with. Double rounding through a double is exact for + - * / of two
  // singles (53 bits ≥ 2 · 24 + 2), so fround of the double result is the single-precision result.
  const toNum =
    bits === 32
      ? (v: Value): number => Math.fround(typeof v === 'bigint' ? Number(v) : (v as number))
      : (v: Value): number => (typeof v === 'bigint' ? Number(v) : (v as number));
  switch (fn) {
    case 'add':
      return (a, b) => {
        if (a === null || b === null) return null;
        const x = toNum(a);
        const y = toNum(b);
        return checkFloat(x + y, x, y, bits, 'sum');
      };
    case 'sub':
      return (a, b) => {
        if (a === null || b === null) return null;
        const x = toNum(a);
        const y = toNum(b);
        return checkFloat(x - y, x, y, bits, 'sum');
      };
    case 'mul':
      return (a, b) => {
        if (a === null || b === null) return null;
        const x = toNum(a);
        const y = toNum(b);
        return checkFloat(x * y, x, y, bits, 'product');
      };
    case 'div':
      return (a, b) => {
        if (a === null || b === null) return null;
        const x = toNum(a);
        const y = toNum(b);
        if (y === 0) throw divisionByZero();
        return checkFloat(x / y, x, y, bits, 'quotient');
      };
    case 'mod':
      return (a, b) => {
        if (a === null || b === null) return null;
        if (toNum(b) === 0) throw divisionByZero();
        return toNum(a) % toNum(b);
      };
  }
}

export function roundHalfAway(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  // A whole number at zero places is its own rounding; the nudge below would carry one of 2^50 or
  // more up to the next (round(4503599627370496) gave 4503599627370497).
  if (digits === 0 && Number.isInteger(x)) return x;
  const f = 10 ** digits;
  if (f === 0) return 0; // rounding at 10^400 and beyond
  const y = Math.abs(x) * f;
  // No digits past that place (or too many places to scale by): already rounded. (Was NaN.)
  if (!Number.isFinite(y) || y >= 2 ** 53) return x;
  // Nudge by one ulp-ish so 2.675 (stored as 2.67499999...) rounds as written, like numeric does.
  const r = Math.round(y + y * Number.EPSILON) / f;
  return x < 0 ? -r : r;
}

/** A digits argument of round/trunc, within what a numeric can show either side of the point. */
export function clampDigits(d: Value): number {
  const n = Number(d);
  return Math.max(-MAX_NUMERIC_INTEGER_DIGITS, Math.min(MAX_NUMERIC_SCALE, n));
}
