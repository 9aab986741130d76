// A floating-point value's text, as PostgreSQL writes it: shared by casts, || and array text.
import type { SqlType } from './types.ts';

/** A number whose type is not at hand: its digits (an integer's, or a double's as JavaScript writes it). */
export function numberText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return String(v);
}

/**
 * PostgreSQL's float4out/float8out: the shortest digits that read back as the same value, written
 * with an exponent (at least two digits, signed) when the decimal exponent is below −4 or at least
 * the type's digits (15 for double precision, 6 for real), as `%g` does; −0 keeps its sign. A real
 * is held as the double of its shortest float32 digits, so the same digits serve both.
 */
export function floatText(v: number, bits: 32 | 64): string {
  if (!Number.isFinite(v)) return numberText(v);
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const exponential = v.toExponential();
  const at = exponential.indexOf('e');
  const exponent = Number(exponential.slice(at + 1));
  if (exponent >= -4 && exponent < (bits === 64 ? 15 : 6)) return String(v);
  const digits = exponent < 0 ? -exponent : exponent;
  return `${exponential.slice(0, at)}e${exponent < 0 ? '-' : '+'}${digits < 10 ? '0' : ''}${digits}`;
}

/** The float width a value of this type is written with, or null when it is not a float type. */
export function floatBitsOf(type: SqlType): 32 | 64 | null {
  return type.kind === 'float' ? type.bits : null;
}
