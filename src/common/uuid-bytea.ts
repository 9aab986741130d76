// UUID and BYTEA values (PostgreSQL manual 8.12 and 8.4): their input forms, canonical text, and the
// byte-level helpers of encode/decode/md5. Both are kept as their canonical output text, a JS string.
//
// Why a string: a uuid is its canonical lowercase hyphenated text and a bytea its hex output text
// ('\x' and two lowercase digits per byte). Each digit is one nibble, the digits 0-9 sort before a-f in
// code units as nibbles do, hyphens sit at fixed places and every bytea starts with the same '\x', so
// comparing these strings by code units (as compareValues does) is PostgreSQL's order: memcmp of the
// 16 uuid bytes, and for bytea memcmp then the shorter first. Strings are immutable, equal values are
// equal strings (keys, GROUP BY, joins need nothing new), and storage, the wire and Kafka records carry
// them exactly as they are printed. The SqlType kind keeps them apart from text in the binder.
import { createHash, randomUUID } from 'node:crypto';
import { SluiceError } from './errors.ts';

const HEX = '0123456789abcdef';

/**
 * A uuid's canonical text, or null when `s` is not one of PostgreSQL's accepted forms: 32 hex digits
 * of either case, a hyphen allowed after any group of four, the whole optionally in braces.
 */
export function parseUuid(s: string): string | null {
  let i = 0;
  let end = s.length;
  if (s.startsWith('{')) {
    if (!s.endsWith('}')) return null;
    i = 1;
    end -= 1;
  }
  let hex = '';
  while (i < end && hex.length < 32) {
    const c = s.charCodeAt(i);
    const d = hexDigit(c);
    if (d < 0) return null;
    hex += HEX[d];
    i++;
    if (hex.length % 4 === 0 && hex.length < 32 && s[i] === '-') i++;
  }
  if (hex.length !== 32 || i !== end) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A version-4 random uuid (gen_random_uuid). */
export function randomUuid(): string {
  return randomUUID();
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

function invalidValue(message: string): SluiceError {
  return new SluiceError('INVALID_VALUE', message);
}

/** Bytes as a bytea value: '\x' then their hex. */
export function byteaOf(bytes: Uint8Array): string {
  return `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** A bytea value's bytes. */
export function bytesOf(bytea: string): Buffer {
  return Buffer.from(bytea.slice(2), 'hex');
}

/** A bytea value's length in bytes. */
export function byteaLength(bytea: string): number {
  return (bytea.length - 2) / 2;
}

/** Hex digits (whitespace between bytes allowed) as bytes, PostgreSQL's hex_decode. */
function hexBytes(s: string, from: number): Buffer {
  // At most one byte per two characters, written in place: an array of numbers cost seconds for a
  // text of millions of digits.
  const out = Buffer.allocUnsafe(Math.max((s.length - from) >> 1, 0));
  let used = 0;
  for (let i = from; i < s.length;) {
    if (isSpace(s[i])) {
      i++;
      continue;
    }
    const hi = hexDigit(s.charCodeAt(i));
    if (hi < 0)
      throw invalidValue(`invalid hexadecimal digit: "${String.fromCodePoint(s.codePointAt(i) ?? 0)}"`);
    if (i + 1 >= s.length) throw invalidValue('invalid hexadecimal data: odd number of digits');
    const lo = hexDigit(s.charCodeAt(i + 1));
    if (lo < 0)
      throw invalidValue(`invalid hexadecimal digit: "${String.fromCodePoint(s.codePointAt(i + 1) ?? 0)}"`);
    out[used++] = hi * 16 + lo;
    i += 2;
  }
  return out.subarray(0, used);
}

/**
 * The escape format: a character stands for its UTF-8 bytes, `\\` for a backslash and `\ooo` (octal,
 * first digit 0-3) for one byte; any other backslash is an error (byteain and decode(…, 'escape')).
 */
function escapeBytes(s: string): Buffer {
  const parts: Buffer[] = [];
  let plainFrom = 0;
  for (let i = 0; i < s.length;) {
    if (s[i] !== '\\') {
      // The run of plain characters up to the next backslash, taken as one slice.
      const next = s.indexOf('\\', i);
      i = next < 0 ? s.length : next;
      continue;
    }
    const plain = s.slice(plainFrom, i);
    let byte: number;
    if (s[i + 1] === '\\') {
      byte = 92;
      i += 2;
    } else if (/^[0-3][0-7][0-7]$/.test(s.slice(i + 1, i + 4))) {
      byte = parseInt(s.slice(i + 1, i + 4), 8);
      i += 4;
    } else {
      throw new SluiceError('INVALID_CAST', 'invalid input syntax for type bytea');
    }
    parts.push(Buffer.from(plain, 'utf8'), Buffer.from([byte]));
    plainFrom = i;
  }
  parts.push(Buffer.from(s.slice(plainFrom), 'utf8'));
  return Buffer.concat(parts);
}

/** Text as bytea (byteain): hex format after a leading `\x`, otherwise the escape format. */
export function parseBytea(s: string): string {
  if (s.startsWith('\\x') || s.startsWith('\\X')) return byteaOf(hexBytes(s, 2));
  return byteaOf(escapeBytes(s));
}

/** Concatenation of two bytea values. */
export function byteaConcat(a: string, b: string): string {
  return a + b.slice(2);
}

/** md5 of a bytea's bytes, as hex text. */
export function byteaMd5(bytea: string): string {
  return createHash('md5').update(bytesOf(bytea)).digest('hex');
}

function checkFormat(format: string): 'hex' | 'base64' | 'escape' {
  const f = format.toLowerCase();
  if (f === 'hex' || f === 'base64' || f === 'escape') return f;
  throw invalidValue(`unrecognized encoding: "${format}"`);
}

/** encode(bytea, format): hex digits, base64 in lines of 76 characters, or the escape format. */
export function encodeBytea(bytea: string, format: string): string {
  const f = checkFormat(format);
  if (f === 'hex') return bytea.slice(2);
  const bytes = bytesOf(bytea);
  if (f === 'base64') return (bytes.toString('base64').match(/.{1,76}/g) ?? []).join('\n');
  // escape: NUL and bytes with the high bit set as \ooo, a backslash doubled (PostgreSQL's esc_enc)
  let out = '';
  for (const b of bytes) {
    if (b === 0 || b >= 0x80) out += `\\${b.toString(8).padStart(3, '0')}`;
    else if (b === 92) out += '\\\\';
    else out += String.fromCharCode(b);
  }
  return out;
}

const BASE64 = /^[A-Za-z0-9+/]*$/;

/** decode(text, format): the inverse of encode (whitespace ignored in hex and base64). */
export function decodeBytea(s: string, format: string): string {
  const f = checkFormat(format);
  if (f === 'hex') return byteaOf(hexBytes(s, 0));
  if (f === 'escape') return byteaOf(escapeBytes(s));
  const compact = s.replace(/[ \t\n\r]/g, '');
  const body = compact.replace(/=+$/, '');
  if (!BASE64.test(body)) {
    const bad = /[^A-Za-z0-9+/]/.exec(body)?.[0] ?? '=';
    throw invalidValue(`invalid symbol "${bad}" found while decoding base64 sequence`);
  }
  const padding = compact.length - body.length;
  if (body.length % 4 === 1 || padding > 2 || (padding > 0 && (body.length + padding) % 4 !== 0))
    throw invalidValue('invalid base64 end sequence');
  return byteaOf(Buffer.from(body, 'base64'));
}

/** octet_length(text): its UTF-8 bytes. */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
