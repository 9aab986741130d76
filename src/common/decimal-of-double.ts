// JSON numbers read as exact decimals without printing them: what parseDecimal(String(x)) gives
// for a double whose shortest text is money-like, found with a few double operations (ingest's path).
import { Decimal, POW10_NUMBERS } from './decimal.ts';

/**
 * What parseDecimal(String(x)) gives, at `scale` digits after the point, without the text: when
 * that text has at most `scale` digits after the point and the value fewer than 10^precision (and
 * 10^15) units of 10^-scale; null otherwise, and the text path decides (rounding, errors).
 *
 * Exact: with r = round(x × 10^scale), r / 10^scale === x says x is the double nearest the decimal
 * r / 10^scale (a correctly rounded division of two exact doubles). The shortest text of x also
 * rounds to x and has no more significant digits; two decimals of at most 15 significant digits
 * (DBL_DIG) never round to one double, so the text's value is r / 10^scale, and no digit of it
 * lies past `scale`.
 */
export function shortestAtScale(x: number, scale: number, precision = 15): Decimal | null {
  if (scale < 0 || scale > 15) return null;
  const p = POW10_NUMBERS[scale] as number;
  const r = Math.round(x * p);
  const limit = POW10_NUMBERS[precision < 15 ? precision : 15] as number;
  if (!(Math.abs(r) < limit) || r / p !== x) return null;
  return new Decimal(r, scale);
}

/**
 * parseDecimal(String(x)) without the text, for a finite double whose shortest text has at most 15
 * significant digits and 15 after the point: the smallest scale at which shortestAtScale holds is
 * the text's own (at the text's scale x × 10^scale is within 0.3 of the integer, so it is found);
 * null otherwise.
 */
export function shortestDecimal(x: number): Decimal | null {
  if (Number.isSafeInteger(x)) return new Decimal(x, 0);
  for (let scale = 1; scale <= 15; scale++) {
    const d = shortestAtScale(x, scale);
    if (d !== null) return d;
  }
  return null;
}
