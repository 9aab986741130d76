// PostgreSQL's string functions on plain JS strings. Positions and lengths count characters (code
// points), never UTF-16 halves; a result longer than MAX_TEXT_LENGTH is an error before it is built.
// Positions are found by walking the string's code units (charOffset), never by splitting it into an
// array of characters: on a 16 Mi character text that array cost seconds of the event loop.
import { createHash } from 'node:crypto';
import { SluiceError } from '../errors.ts';
import { MAX_TEXT_LENGTH } from '../limits.ts';
import { charLength, charOffset, leftChars } from '../values.ts';

/** STRING_TOO_LONG when a function would build a text longer than MAX_TEXT_LENGTH. */
export function checkLength(length: number): void {
  if (length > MAX_TEXT_LENGTH) throw stringTooLong();
}

/** The error of a text that would pass MAX_TEXT_LENGTH (a window's STRING_AGG reports it as a row error). */
export function stringTooLong(): SluiceError {
  return new SluiceError('STRING_TOO_LONG', 'requested length too large', {
    detail: `a text value may have at most ${MAX_TEXT_LENGTH} characters`,
  });
}

/**
 * A case mapping's result, refused past MAX_TEXT_LENGTH: upper('ß') is 'SS' and some characters map
 * to three, so lower, upper and initcap may build up to three times their argument. That is bounded,
 * so the result is checked after it is built rather than predicted.
 */
export function caseMapped(result: string): string {
  checkLength(result.length);
  return result;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The UTF-16 width (1 or 2) of the character that ends just before offset `end`. */
function widthBefore(s: string, end: number): number {
  return end >= 2 && isLowSurrogate(s.charCodeAt(end - 1)) && isHighSurrogate(s.charCodeAt(end - 2)) ? 2 : 1;
}

/** btrim / ltrim / rtrim: the longest run of characters in `set` removed from the start, the end or both. */
export function trimChars(s: string, set: string, leading: boolean, trailing: boolean): string {
  if (set === ' ') {
    let start = 0;
    let end = s.length;
    if (leading) while (start < end && s.charCodeAt(start) === 32) start++;
    if (trailing) while (end > start && s.charCodeAt(end - 1) === 32) end--;
    return s.slice(start, end);
  }
  const members = new Set<string>();
  for (const c of set) members.add(c);
  let start = 0;
  let end = s.length;
  if (leading) {
    while (start < end) {
      const next = charOffset(s, 1, start);
      if (!members.has(s.slice(start, next))) break;
      start = next;
    }
  }
  if (trailing) {
    while (end > start) {
      const previous = end - widthBefore(s, end);
      if (!members.has(s.slice(previous, end))) break;
      end = previous;
    }
  }
  return s.slice(start, end);
}

/** replace(s, from, to): every occurrence of `from` (none when it is empty). */
export function replaceText(s: string, from: string, to: string): string {
  if (from === '' || s === '') return s;
  if (to.length > from.length) {
    let count = 0;
    for (let i = s.indexOf(from); i >= 0; i = s.indexOf(from, i + from.length)) count++;
    checkLength(s.length + count * (to.length - from.length));
  }
  return s.split(from).join(to);
}

/** strpos(s, sub) / position(sub IN s): 1-based character position of the first occurrence, 0 if none. */
export function strpos(s: string, sub: string): number {
  const i = s.indexOf(sub);
  return i < 0 ? 0 : charLength(s.slice(0, i)) + 1;
}

/** split_part(s, delimiter, n): the n-th field, counted from the end when n is negative (PostgreSQL 14). */
export function splitPart(s: string, delimiter: string, n: number): string {
  if (n === 0) throw new SluiceError('INVALID_VALUE', 'field position must not be zero');
  if (s === '') return '';
  const fields = delimiter === '' ? [s] : s.split(delimiter);
  const i = n > 0 ? n - 1 : fields.length + n;
  return fields[i] ?? '';
}

/** left(s, n): the first n characters; all but the last |n| when n is negative. */
export function leftText(s: string, n: number): string {
  return leftChars(s, n >= 0 ? n : charLength(s) + n);
}

/** right(s, n): the last n characters; all but the first |n| when n is negative. */
export function rightText(s: string, n: number): string {
  if (n === 0) return '';
  return s.slice(charOffset(s, n > 0 ? charLength(s) - n : -n));
}

/** lpad / rpad: `s` filled to `length` characters with repeats of `fill`, or cut to it. */
export function pad(s: string, length: number, fill: string, left: boolean): string {
  if (length <= 0) return '';
  const sLength = charLength(s);
  if (sLength >= length) return leftChars(s, length);
  const fillLength = charLength(fill);
  if (fillLength === 0) return s;
  const missing = length - sLength;
  // An upper bound in code units, checked before anything is built.
  checkLength(s.length + Math.ceil(missing / fillLength) * fill.length);
  const whole = Math.floor(missing / fillLength);
  const filler = fill.repeat(whole) + leftChars(fill, missing - whole * fillLength);
  return left ? filler + s : s + filler;
}

/** repeat(s, n): `s` n times; empty for n ≤ 0. */
export function repeatText(s: string, n: number): string {
  if (n <= 0 || s === '') return '';
  checkLength(s.length * n);
  return s.repeat(n);
}

/**
 * A text built a code unit at a time: UTF-16LE bytes in one growing buffer, decoded once (Node's
 * decoder keeps lone surrogates as they are). Concatenating one-character strings instead cost
 * about 0.15 µs a character, seconds for a 16 Mi character text.
 */
export class TextBuilder {
  private bytes: Buffer;
  private used = 0;

  constructor(length: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(length, 1) * 2);
  }

  push(code: number): void {
    if (this.used === this.bytes.length) {
      const grown = Buffer.allocUnsafe(this.bytes.length * 2);
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.bytes[this.used] = code & 0xff;
    this.bytes[this.used + 1] = code >>> 8;
    this.used += 2;
  }

  pushText(text: string): void {
    for (let i = 0; i < text.length; i++) this.push(text.charCodeAt(i));
  }

  finish(): string {
    return this.bytes.toString('utf16le', 0, this.used);
  }
}

/** reverse(s): the characters in reverse order (a surrogate pair stays in order). */
export function reverseText(s: string): string {
  const out = new TextBuilder(s.length);
  for (let end = s.length; end > 0;) {
    const width = widthBefore(s, end);
    if (width === 2) out.push(s.charCodeAt(end - 2));
    out.push(s.charCodeAt(end - 1));
    end -= width;
  }
  return out.finish();
}

const ALNUM = /[\p{L}\p{N}]/u;

/** initcap: each run of letters and digits with its first character upper case, the rest lower case. */
export function initcap(s: string): string {
  const out = new TextBuilder(s.length);
  let inWord = false;
  for (let i = 0; i < s.length;) {
    const code = s.charCodeAt(i);
    if (code < 0x80) {
      // ASCII without a regular expression: the common case, and the per-character cost here is
      // what a long text pays.
      const upper = code >= 65 && code <= 90;
      const lower = code >= 97 && code <= 122;
      const alnum = upper || lower || (code >= 48 && code <= 57);
      out.push(alnum && inWord && upper ? code + 32 : alnum && !inWord && lower ? code - 32 : code);
      inWord = alnum;
      i++;
      continue;
    }
    const next = charOffset(s, 1, i);
    const c = s.slice(i, next);
    const alnum = ALNUM.test(c);
    out.pushText(alnum ? (inWord ? c.toLowerCase() : c.toUpperCase()) : c);
    inWord = alnum;
    i = next;
  }
  return caseMapped(out.finish());
}

export function md5(s: string): string {
  return createHash('md5').update(s, 'utf8').digest('hex');
}

/** CONCAT / CONCAT_WS pieces: the lengths are checked before they are joined. */
export function joinChecked(parts: readonly string[], separator: string): string {
  let length = separator.length * Math.max(parts.length - 1, 0);
  for (const p of parts) length += p.length;
  checkLength(length);
  return parts.join(separator);
}
