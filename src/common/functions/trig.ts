// PostgreSQL's trigonometric and hyperbolic functions over double precision (float.c): NaN in,
// NaN out; an argument outside the function's domain is "input is out of range" (sin of an
// infinity, asin of 2, acosh below 1, atanh beyond ±1), as PostgreSQL raises it, never a NaN made
// from a number; degrees() overflows as float8 division does. The values are JavaScript's Math
// (fdlibm), which may differ from the C library's in the last digit.
import { SluiceError } from '../errors.ts';
import { floatOutOfRange } from '../cast.ts';

export const TRIG_FUNCTIONS = [
  'sin',
  'cos',
  'tan',
  'cot',
  'asin',
  'acos',
  'atan',
  'atan2',
  'sinh',
  'cosh',
  'tanh',
  'asinh',
  'acosh',
  'atanh',
  'degrees',
  'radians',
] as const;

export type TrigFunction = (typeof TRIG_FUNCTIONS)[number];

export function isTrigFunction(name: string): name is TrigFunction {
  return (TRIG_FUNCTIONS as readonly string[]).includes(name);
}

/** How many arguments each takes (atan2: y, x). */
export function trigArity(fn: TrigFunction): number {
  return fn === 'atan2' ? 2 : 1;
}

const RADIANS_PER_DEGREE = 0.0174532925199432957692;

function outOfRange(): SluiceError {
  return new SluiceError('NUMERIC_OVERFLOW', 'input is out of range');
}

/** A cyclic function's argument: finite or NaN. */
function cyclic(x: number): number {
  if (x === Infinity || x === -Infinity) throw outOfRange();
  return x;
}

/** Within [-1, 1], or NaN. */
function unit(x: number): number {
  if (x < -1 || x > 1) throw outOfRange();
  return x;
}

export function trig(fn: TrigFunction, x: number, y = 0): number {
  switch (fn) {
    case 'sin':
      return Math.sin(cyclic(x));
    case 'cos':
      return Math.cos(cyclic(x));
    case 'tan':
      return Math.tan(cyclic(x));
    case 'cot':
      return 1 / Math.tan(cyclic(x));
    case 'asin':
      return Math.asin(unit(x));
    case 'acos':
      return Math.acos(unit(x));
    case 'atan':
      return Math.atan(x);
    case 'atan2':
      return Math.atan2(x, y);
    case 'sinh':
      return Math.sinh(x);
    case 'cosh':
      return Math.cosh(x);
    case 'tanh':
      return Math.tanh(x);
    case 'asinh':
      return Math.asinh(x);
    case 'acosh':
      if (x < 1) throw outOfRange();
      return Math.acosh(x);
    case 'atanh':
      return Math.atanh(unit(x));
    case 'degrees': {
      const r = x / RADIANS_PER_DEGREE;
      if (!Number.isFinite(r) && Number.isFinite(x)) throw floatOutOfRange('overflow');
      return r;
    }
    case 'radians': {
      const r = x * RADIANS_PER_DEGREE;
      if (r === 0 && x !== 0) throw floatOutOfRange('underflow');
      return r;
    }
  }
}
