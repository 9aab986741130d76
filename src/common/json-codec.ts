// JSON for Sluice values, exact for 64-bit integers and decimals. Wire JSON: bigints and decimals
// become strings ("0.30"), non-finite floats "NaN"/"Infinity"/"-Infinity". Storage JSON: tagged so
// that every value round-trips.
import { isAscii } from 'node:buffer';
import { parse as losslessParse } from 'lossless-json';
import type { Row, Value } from './types.ts';
import { Decimal, parseDecimal } from './decimal.ts';
import { Interval } from './time/interval.ts';
import { Jsonb, parseJsonb, withRawJsonb } from './json/jsonb.ts';
import { SqlArray } from './array/sql-array.ts';
import { SluiceError } from './errors.ts';

const INTEGER_LITERAL = /^-?\d+$/;

/** Whether the exact parser's last run read a number beyond a double (its value is then walked). */
let exactReadNonFinite = false;

function parseNumberExact(text: string): number | bigint | Decimal {
  if (INTEGER_LITERAL.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  const n = Number(text);
  if (!Number.isFinite(n)) exactReadNonFinite = true;
  // A fraction with more digits than a double keeps is read as the exact decimal it spells (a
  // numeric column takes it as is, a float column as its nearest double).
  if (Number.isFinite(n) && significantDigits(text) > 15) {
    try {
      return parseDecimal(text) ?? n;
    } catch {
      return n; // beyond numeric's range: the double (Infinity beyond a double: refused)
    }
  }
  return n;
}

/** Significant digits a JSON number's text spells (leading zeros and the exponent not counted). */
function significantDigits(text: string): number {
  const mantissa = text
    .replace(/[eE].*$/, '')
    .replace(/[-.]/g, '')
    .replace(/^0+/, '');
  return mantissa.length;
}

/**
 * Whether `text` has a run of 16 digits and points (/\d[\d.]{15}/): the only place a JSON number
 * with more significant digits than a double keeps can hide. Decided on the text, not on the parsed
 * value, because a rounded value can look harmless: 3363735970207246.75 parses to 3363735970207247
 * and 1.00000000000000001 to 1, integers with few digits. A digit run inside a string is a false
 * alarm that costs one exact reparse, never a wrong value.
 *
 * Read like a Horspool search for a window of 16 run characters: each candidate window is read from
 * its last character backwards, and the first character that is not a digit or a point rules out
 * every window holding it, so the next candidate ends 16 past it. On an ingest body, whose numbers
 * are short runs, a window's test stops within a few characters and moves 9–16 on: one read in
 * every 10 characters of the HTTP benchmark's body (the probe it replaced measured each run it landed
 * in from both ends: 3.5 times the reads, 3–4 times the time; the regex is slower still, as every
 * digit starts an attempt). A full window measures its whole run (from its first digit, leading
 * points not counted).
 */
export function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  let end = 15; // the last index of the candidate window
  while (end < n) {
    const start = end - 15;
    let at = end;
    while (at >= start && inDigitRun(text.charCodeAt(at))) at--;
    if (at >= start) {
      end = at + 16; // no window holding `at` is a run
      continue;
    }
    let left = start;
    while (left > 0 && inDigitRun(text.charCodeAt(left - 1))) left--;
    let right = end;
    while (right + 1 < n && inDigitRun(text.charCodeAt(right + 1))) right++;
    while (left <= right && text.charCodeAt(left) === 46) left++;
    if (right - left + 1 >= 16) return true;
    end = right + 17; // the run ends at `right`: the next window starts after the character past it
  }
  return false;
}

/** A character of a digit run: a digit or a point. */
function inDigitRun(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46;
}

/**
 * Parses request JSON. Integer literals beyond Number.MAX_SAFE_INTEGER become bigints and
 * fractions with more than 15 significant digits Decimals instead of being rounded; everything
 * else is exactly JSON.parse. Throws SyntaxError on invalid JSON, and JsonNumberOutOfRange for a
 * number beyond a double (1e400), which JSON.parse would read as Infinity: JSON has no NaN or
 * Infinity, so a non-finite number never leaves a JSON reader (a double column's NaN is sent as
 * the text "NaN").
 */
export function parseJsonExact(text: string): unknown {
  if (!hasLongDigitRun(text)) {
    const value: unknown = JSON.parse(text);
    if (mayHoldOverflow(text)) refuseNonFinite(value);
    return value;
  }
  // One parse, the exact one; JSON.parse runs only to word the error of invalid JSON as the fast
  // path does (the exact parser also refuses a duplicate key, which JSON.parse takes).
  let value: unknown;
  exactReadNonFinite = false;
  try {
    value = losslessParse(text, null, parseNumberExact);
  } catch (error) {
    JSON.parse(text);
    throw error;
  }
  // A long run's number may overflow without an exponent (400 digits and a fraction); the value is
  // walked for where only when one did, not for every body with a bigint in it.
  if (exactReadNonFinite) refuseNonFinite(value);
  return value;
}

/** A JSON number beyond a double (1e400), refused where it is read; `path` leads to it. */
export class JsonNumberOutOfRange extends SluiceError {
  constructor(readonly path: readonly (string | number)[]) {
    super('INVALID_VALUE', `number out of range for type double precision`, {
      detail: `at ${describeJsonPath(path)}`,
    });
  }

  /**
   * The row field the number is in, when the path's key at `depth` (where a row's fields sit) names
   * one: that column, and where in its value the number is (`$.a[1]`; null when it is the value).
   */
  columnAt(depth: number): { column: string; within: string | null } | null {
    const column = this.path[depth];
    if (typeof column !== 'string') return null;
    const inner = this.path.slice(depth + 1);
    return { column, within: inner.length > 0 ? describeJsonPath(inner) : null };
  }
}

/**
 * Whether JSON text without a run of 16 digits may spell a number beyond a double: with at most 15
 * mantissa digits that needs an exponent of 3 digits or more (999999999999999e99 is below 1e115).
 * A string holding such text is a false alarm that costs one walk of the value.
 */
function mayHoldOverflow(text: string): boolean {
  // A JSON number's exponent always follows a digit, so a word like "file100" in a string is not one.
  return (text.includes('e') || text.includes('E')) && /\d[eE][+-]?\d{3}/.test(text);
}

/** Throws JsonNumberOutOfRange at the first non-finite number of a parsed JSON value. */
function refuseNonFinite(value: unknown): void {
  const path = nonFinitePath(value);
  if (path !== null) throw new JsonNumberOutOfRange(path);
}

/** The path to the first non-finite number of a parsed JSON value, or null (no recursion: any depth). */
function nonFinitePath(root: unknown): (string | number)[] | null {
  interface Frame {
    readonly value: unknown;
    readonly parent: Frame | null;
    readonly key: string | number;
  }
  const stack: Frame[] = [{ value: root, parent: null, key: '' }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const v = frame.value;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) continue;
      const path: (string | number)[] = [];
      for (let f: Frame | null = frame; f !== null && f.parent !== null; f = f.parent) path.unshift(f.key);
      return path;
    }
    if (v === null || typeof v !== 'object' || v instanceof Decimal) continue;
    const parent = frame;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent, key: i });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ value: (v as Record<string, unknown>)[key], parent, key });
      }
    }
  }
  return null;
}

/**
 * Parses wire JSON to be written again (a Kafka sink re-reads the changelog's wire text): like
 * JSON.parse, except that a number a double would not give back as written (a jsonb field's
 * 123456789012345678901234567890.5) is read as a raw JSON number that stringifyWire writes as is.
 */
export function parseWireForRewrite(text: string): unknown {
  if (!hasLongDigitRun(text)) return JSON.parse(text);
  return losslessParse(text, null, (t: string) => {
    const n = Number(t);
    return String(n) === t ? n : Jsonb.of(parseDecimal(t) as Decimal);
  });
}

// Decimals need no replacer: their toJSON is their exact text.
function wireReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

/**
 * Serialises for the wire: bigint → decimal string, NaN/±Infinity → string. The replacer is only
 * paid for when the fast path fails (a bigint throws) or could be wrong (non-finite floats become
 * `null` silently, so a `null` in the output makes us re-check with the replacer).
 */
export function stringifyWire(value: unknown): string {
  // A jsonb value is written as its JSON (withRawJsonb), not as a string holding it.
  return withRawJsonb(() => stringifyWirePlain(value));
}

function stringifyWirePlain(value: unknown): string {
  let out: string;
  try {
    out = JSON.stringify(value);
  } catch (error) {
    if (error instanceof TypeError) return JSON.stringify(value, wireReplacer);
    throw error;
  }
  if (out === undefined) return 'null';
  if (out.includes('null') && hasNonFinite(value, 0)) return JSON.stringify(value, wireReplacer);
  return out;
}

function hasNonFinite(value: unknown, depth: number): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (depth > 64 || value === null || typeof value !== 'object' || value instanceof Jsonb) return false;
  if (Array.isArray(value)) {
    for (const v of value) if (hasNonFinite(v, depth + 1)) return true;
    return false;
  }
  for (const v of Object.values(value)) if (hasNonFinite(v, depth + 1)) return true;
  return false;
}

// Storage JSON, the one codec of everything Sluice stores (journal batches, checkpoint state and
// positions): JSON-able data plus bigints, decimals and intervals. Stored exactly: a bigint is
// {"$i":"123"}, a decimal {"$d":"1.50"} (its scale kept), an interval {"$v":"months,days,micros"}
// (added with INTERVAL; data stored before holds none, so it reads as before), a jsonb value
// {"$j":"its canonical text"} (added with JSONB, likewise), an array {"$a":[elements...]} (added with
// arrays, likewise; its elements tagged in turn), a non-finite float or -0 is {"$f":"NaN"}, and an object key that starts with "$" gets one more "$"
// so that no real object can pass for a tag. Plain values take the native JSON fast path.

function needsTags(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'bigint':
      return true;
    case 'number':
      return !Number.isFinite(v) || Object.is(v, -0);
    case 'object': {
      if (v === null) return false;
      if (
        v instanceof Decimal ||
        v instanceof Interval ||
        v instanceof Jsonb ||
        v instanceof SqlArray ||
        depth > 256
      )
        return true;
      if (Array.isArray(v)) {
        for (const x of v) if (needsTags(x, depth + 1)) return true;
        return false;
      }
      const o = v as Record<string, unknown>;
      for (const k in o) if (k.charCodeAt(0) === 36 || needsTags(o[k], depth + 1)) return true;
      return false;
    }
    default:
      return false;
  }
}

function tagReplacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { $i: value.toString() };
  // JSON.stringify has already called the decimal's toJSON (its text); the holder still has it.
  if (typeof value === 'string') {
    const original = (this as Record<string, unknown>)[key];
    if (original instanceof Decimal) return { $d: value };
    if (original instanceof Jsonb) return { $j: original.text };
    return original instanceof Interval ? { $v: original.storageText() } : value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Object.is(value, -0))
      return { $f: Object.is(value, -0) ? '-0' : String(value) };
    return value;
  }
  if (Array.isArray(value)) {
    // JSON.stringify has called the array value's toJSON (its elements); tag it apart from a list
    return (this as Record<string, unknown>)[key] instanceof SqlArray ? { $a: value } : value;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    let escape = false;
    for (const k in o) if (k.charCodeAt(0) === 36) escape = true;
    if (!escape) return value;
    const out: Record<string, unknown> = {};
    for (const k in o) out[k.charCodeAt(0) === 36 ? `$${k}` : k] = o[k];
    return out;
  }
  return value;
}

function tagReviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    if (keys[0] === '$i' && typeof o.$i === 'string') return BigInt(o.$i);
    if (keys[0] === '$f' && typeof o.$f === 'string') return Number(o.$f);
    if (keys[0] === '$d' && typeof o.$d === 'string') return parseDecimal(o.$d) ?? o;
    if (keys[0] === '$v' && typeof o.$v === 'string') return Interval.fromStorage(o.$v) ?? o;
    if (keys[0] === '$j' && typeof o.$j === 'string') return parseJsonb(o.$j, 'stored');
    if (keys[0] === '$a' && Array.isArray(o.$a)) return new SqlArray(o.$a as Value[]);
  }
  if (!keys.some((k) => k.startsWith('$$'))) return value;
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k.startsWith('$$') ? k.slice(1) : k] = o[k];
  return out;
}

export function encodeStored(value: unknown): string {
  const text = needsTags(value, 0) ? JSON.stringify(value, tagReplacer) : JSON.stringify(value);
  return text === undefined ? 'null' : text;
}

export function decodeStored(text: string): unknown {
  return text.includes('"$') ? JSON.parse(text, tagReviver) : JSON.parse(text);
}

/** True when `v` is a value a row may hold on input (scalars only). */
export function isScalar(v: unknown): v is Value {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'number' ||
    typeof v === 'boolean' ||
    typeof v === 'bigint' ||
    v instanceof Decimal ||
    v instanceof Interval ||
    v instanceof Jsonb ||
    v instanceof SqlArray
  );
}

/**
 * True when `v` is an object of column values: scalars, or objects and arrays (any JSON value,
 * which only a jsonb column takes; another column's type check refuses it with the column named).
 */
export function isRowObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ---- well-formed text ------------------------------------------------------------------------
// Text that is not well-formed Unicode (a lone UTF-16 surrogate, or bytes that are not UTF-8) is
// rejected where it enters — ingest and SQL bodies, Kafka records — because it cannot be stored as
// the exact bytes it is checksummed over (UTF-8 has no encoding for a lone surrogate).

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Bytes → text, refusing bytes that are not UTF-8 (never replaced silently). ASCII bytes (every
 * ingest body of plain rows) are UTF-8 and spell the same text read one byte a character: a native
 * ASCII test and a latin1 read take half the time of the validating decoder.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  if (isAscii(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The first byte offset at which `bytes` stop being UTF-8 (for messages). */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const need = utf8SequenceLength(bytes, i);
    if (need === 0) return i;
    i += need;
  }
  return n;
}

/** Length of the well-formed UTF-8 sequence at `i`, or 0 when there is none. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i] ?? 0;
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const c = bytes[i + k];
    return c !== undefined && c >= lo && c <= hi;
  };
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (b === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0; // no surrogates
  if (b >= 0xe1 && b <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b >= 0xf1 && b <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/**
 * Bytes as well-formed text for display and storage: UTF-8 as is, every byte that is not part of a
 * UTF-8 sequence as `\xHH`.
 */
export function bytesAsText(bytes: Uint8Array): string {
  const text = decodeUtf8Strict(bytes);
  if (text !== null) return text;
  let out = '';
  let start = 0;
  let i = 0;
  const flush = (end: number): void => {
    if (end > start) out += Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
  };
  while (i < bytes.length) {
    const need = utf8SequenceLength(bytes, i);
    if (need > 0) {
      i += need;
      continue;
    }
    flush(i);
    out += `\\x${(bytes[i] ?? 0).toString(16).toUpperCase().padStart(2, '0')}`;
    i += 1;
    start = i;
  }
  flush(i);
  return out;
}

// Node 20 has String.prototype.isWellFormed (ES2024); the compiler's lib is ES2023.
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/** Code unit index of the first lone surrogate in `s`, or -1 when `s` is well-formed. */
export function loneSurrogateIndex(s: string): number {
  if (isWellFormed.call(s)) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

/**
 * False when JSON text cannot hold a lone surrogate: once its bytes were valid UTF-8, one can only
 * come from a `\uD800`–`\uDFFF` escape, so parsed values need no walk without one.
 */
export function mayHoldLoneSurrogate(jsonText: string): boolean {
  // Most bodies hold no escape at all: a native search rules them out before the regex reads them.
  return jsonText.includes('\\u') && /\\u[dD][89a-fA-F]/.test(jsonText);
}

/** Where a parsed JSON value holds ill-formed text: the path to it and the code unit in the string. */
export interface IllFormedText {
  /** Object keys and array indexes from the top. */
  readonly path: readonly (string | number)[];
  /** True when the object key itself (the last path element) is ill-formed, not its value. */
  readonly inKey: boolean;
  /** Code unit index of the lone surrogate in the string. */
  readonly index: number;
  /** The ill-formed string. */
  readonly text: string;
}

interface WalkFrame {
  readonly value: unknown;
  readonly key: string | number | null;
  readonly parent: WalkFrame | null;
}

/** The first string or key in a parsed JSON value that is not well-formed (iterative: any depth). */
export function findIllFormedText(value: unknown): IllFormedText | null {
  const pathOf = (frame: WalkFrame | null): (string | number)[] => {
    const out: (string | number)[] = [];
    for (let f = frame; f !== null && f.key !== null; f = f.parent) out.push(f.key);
    return out.reverse();
  };
  const stack: WalkFrame[] = [{ value, key: null, parent: null }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const v = frame.value;
    if (typeof v === 'string') {
      const index = loneSurrogateIndex(v);
      if (index >= 0) return { path: pathOf(frame), inKey: false, index, text: v };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: frame });
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        const index = loneSurrogateIndex(key);
        if (index >= 0) return { path: [...pathOf(frame), key], inKey: true, index, text: key };
        stack.push({ value: (v as Record<string, unknown>)[key], key, parent: frame });
      }
    }
  }
  return null;
}

/** A path as `$.insert[0]["name"]` — keys JSON-quoted, so the description is itself well-formed. */
export function describeJsonPath(path: readonly (string | number)[]): string {
  let out = '$';
  for (const p of path)
    out +=
      typeof p === 'number'
        ? `[${p}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p)
          ? `.${p}`
          : `[${JSON.stringify(p)}]`;
  return out;
}

/** The lone surrogate at `index` of `s` as `U+D800`. */
export function describeLoneSurrogate(s: string, index: number): string {
  return `U+${s.charCodeAt(index).toString(16).toUpperCase().padStart(4, '0')}`;
}
