// PostgreSQL's character-code and character-mapping string functions: ascii, chr, translate and
// to_hex, over code points (a character outside the Basic Multilingual Plane is one
// character, as in PostgreSQL's UTF-8 database), with PostgreSQL's errors.
import { SluiceError } from '../errors.ts';
import { TextBuilder, checkLength } from './text.ts';
import { charLength, charOffset } from '../values.ts';

/** The code point of the first character; 0 for the empty text. */
export function ascii(s: string): number {
  return s.codePointAt(0) ?? 0;
}

/** The character of a code point; 0, a surrogate or past U+10FFFF is an error, as in PostgreSQL. */
export function chr(code: number): string {
  if (code < 0) throw new SluiceError('INVALID_VALUE', 'character number must be positive');
  if (code === 0) throw new SluiceError('INVALID_VALUE', 'null character not permitted');
  if (code > 0x10ffff) {
    throw new SluiceError('INVALID_VALUE', `requested character too large for encoding: ${code}`);
  }
  if (code >= 0xd800 && code <= 0xdfff) {
    throw new SluiceError('INVALID_VALUE', `requested character not valid for encoding: ${code}`);
  }
  return String.fromCodePoint(code);
}

/**
 * Each character of `s` found in `from` replaced by the character at its place in `to`, or removed
 * when `to` is shorter; the first occurrence in `from` decides. Built a code unit at a time
 * (TextBuilder): a text of millions of characters is one pass, no string per character.
 */
export function translate(s: string, from: string, to: string): string {
  /** Code point → its replacement's code point, or -1 to remove it. */
  const map = new Map<number, number>();
  for (let f = 0, t = 0; f < from.length;) {
    const c = from.codePointAt(f) as number;
    const r = t < to.length ? (to.codePointAt(t) as number) : -1;
    if (!map.has(c)) map.set(c, r);
    f += c > 0xffff ? 2 : 1;
    if (r >= 0) t += r > 0xffff ? 2 : 1;
  }
  if (map.size === 0) return s;
  const out = new TextBuilder(s.length);
  for (let at = 0; at < s.length;) {
    const c = s.codePointAt(at) as number;
    const width = c > 0xffff ? 2 : 1;
    const r = map.get(c);
    if (r === undefined) {
      out.push(s.charCodeAt(at));
      if (width === 2) out.push(s.charCodeAt(at + 1));
    } else if (r >= 0) out.pushText(String.fromCodePoint(r));
    at += width;
  }
  return out.finish();
}

/** Hexadecimal digits of an integer, a negative one as its two's complement of `bits` bits. */
export function toHex(value: number | bigint, bits: 32 | 64): string {
  let v = BigInt(value);
  if (v < 0n) v += 1n << BigInt(bits);
  return v.toString(16);
}

/**
 * overlay(s PLACING t FROM start [FOR count]) as PostgreSQL 15 computes it: the first start - 1
 * characters of s, then t, then s from character start + count on (count defaults to t's length;
 * a start + count past the integer range is an error, as is a start below 1). Positions count in s
 * and t characters for text, bytes (two hex digits after `\x`) for bytea (`bytes`).
 */
export function overlay(
  s: string,
  t: string,
  start: number,
  count: number | undefined,
  bytes: boolean,
): string {
  const length = count ?? (bytes ? (t.length - 2) / 2 : charLength(t));
  const after = start + length;
  if (after > 2147483647 || after < -2147483648) {
    throw new SluiceError('NUMERIC_OVERFLOW', 'integer out of range');
  }
  if (start < 1) throw new SluiceError('INVALID_VALUE', 'negative substring length not allowed');
  if (bytes) {
    const hex = s.slice(2);
    const head = hex.slice(0, 2 * (start - 1));
    const tail = after < 1 ? hex : hex.slice(2 * (after - 1));
    return `\\x${head}${t.slice(2)}${tail}`;
  }
  const head = s.slice(0, charOffset(s, start - 1));
  const tail = after < 1 ? s : s.slice(charOffset(s, after - 1));
  checkLength(head.length + t.length + tail.length);
  return head + t + tail;
}
