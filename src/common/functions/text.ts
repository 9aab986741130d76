// PostgreSQL's string functions on plain JS strings. Positions and lengths count characters (code
// points), never UTF-16 halves; a result longer than MAX_TEXT_LENGTH is an error before it is built.
import { createHash } from 'node:crypto';
import { SluiceError } from '../errors.ts';
import { MAX_TEXT_LENGTH } from '../limits.ts';

/** STRING_TOO_LONG when a function would build a text longer than MAX_TEXT_LENGTH. */
export function checkLength(length: number): void {
  if (length > MAX_TEXT_LENGTH) {
    throw new SluiceError('STRING_TOO_LONG', 'requested length too large', {
      detail: `a text value may have at most ${MAX_TEXT_LENGTH} characters`,
    });
  }
}

function chars(s: string): string[] {
  return Array.from(s);
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
  const members = new Set(chars(set));
  const cs = chars(s);
  let start = 0;
  let end = cs.length;
  if (leading) while (start < end && members.has(cs[start] as string)) start++;
  if (trailing) while (end > start && members.has(cs[end - 1] as string)) end--;
  return cs.slice(start, end).join('');
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
  return i < 0 ? 0 : chars(s.slice(0, i)).length + 1;
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
  const cs = chars(s);
  return (n >= 0 ? cs.slice(0, n) : cs.slice(0, Math.max(cs.length + n, 0))).join('');
}

/** right(s, n): the last n characters; all but the first |n| when n is negative. */
export function rightText(s: string, n: number): string {
  const cs = chars(s);
  if (n >= 0) return (n === 0 ? [] : cs.slice(Math.max(cs.length - n, 0))).join('');
  return cs.slice(Math.min(-n, cs.length)).join('');
}

/** lpad / rpad: `s` filled to `length` characters with repeats of `fill`, or cut to it. */
export function pad(s: string, length: number, fill: string, left: boolean): string {
  if (length <= 0) return '';
  const cs = chars(s);
  if (cs.length >= length) return cs.slice(0, length).join('');
  const fs = chars(fill);
  if (fs.length === 0) return s;
  const missing = length - cs.length;
  // An upper bound in code units, checked before anything is built.
  checkLength(s.length + Math.ceil(missing / fs.length) * fill.length);
  const whole = Math.floor(missing / fs.length);
  const filler = fill.repeat(whole) + fs.slice(0, missing - whole * fs.length).join('');
  return left ? filler + s : s + filler;
}

/** repeat(s, n): `s` n times; empty for n ≤ 0. */
export function repeatText(s: string, n: number): string {
  if (n <= 0 || s === '') return '';
  checkLength(s.length * n);
  return s.repeat(n);
}

export function reverseText(s: string): string {
  return chars(s).reverse().join('');
}

const ALNUM = /[\p{L}\p{N}]/u;

/** initcap: each run of letters and digits with its first character upper case, the rest lower case. */
export function initcap(s: string): string {
  let out = '';
  let inWord = false;
  for (const c of s) {
    const alnum = ALNUM.test(c);
    out += alnum ? (inWord ? c.toLowerCase() : c.toUpperCase()) : c;
    inWord = alnum;
  }
  return out;
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
