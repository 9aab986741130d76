// JSON for Sluice values, exact for 64-bit integers. Wire JSON: bigints become strings, non-finite
// floats become "NaN"/"Infinity"/"-Infinity". Storage JSON: tagged so that every value round-trips.
import { parse as losslessParse } from 'lossless-json';
import type { Row, Value } from '../types.ts';

const INTEGER_LITERAL = /^-?\d+$/;

function parseNumberExact(text: string): number | bigint {
  if (INTEGER_LITERAL.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/**
 * True when the parsed value holds a number that JSON.parse may have rounded: an integral value
 * beyond ±2^53. Only then is the text parsed again, exactly (a float literal such as 1e20 also
 * triggers it and simply comes out the same).
 */
function mayBeRounded(value: unknown, depth: number): boolean {
  if (typeof value === 'number') return value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER;
  if (value === null || typeof value !== 'object') return false;
  if (depth > 64) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (mayBeRounded(v, depth + 1)) return true;
    return false;
  }
  for (const key in value) if (mayBeRounded((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

/**
 * Parses request JSON. Integer literals beyond Number.MAX_SAFE_INTEGER become bigints instead of
 * being rounded; everything else is exactly JSON.parse. Throws SyntaxError on invalid JSON.
 */
export function parseJsonExact(text: string): unknown {
  const fast: unknown = JSON.parse(text);
  return mayBeRounded(fast, 0) ? losslessParse(text, null, parseNumberExact) : fast;
}

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
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (hasNonFinite(v, depth + 1)) return true;
    return false;
  }
  for (const v of Object.values(value)) if (hasNonFinite(v, depth + 1)) return true;
  return false;
}

// Storage JSON: a bigint is {"$i":"123"}, a non-finite float {"$f":"NaN"}. Rows never hold objects,
// so the tags cannot collide with real values.
function storageReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { $i: value.toString() };
  if (typeof value === 'number' && !Number.isFinite(value)) return { $f: String(value) };
  return value;
}

function storageReviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as Record<string, unknown>;
    if (typeof tagged.$i === 'string') return BigInt(tagged.$i);
    if (typeof tagged.$f === 'string') return Number(tagged.$f);
  }
  return value;
}

export function encodeStored(value: unknown): string {
  let out: string;
  try {
    out = JSON.stringify(value);
  } catch (error) {
    if (error instanceof TypeError) return JSON.stringify(value, storageReplacer);
    throw error;
  }
  if (out.includes('null') && hasNonFinite(value, 0)) return JSON.stringify(value, storageReplacer);
  return out;
}

export function decodeStored(text: string): unknown {
  if (!text.includes('"$i"') && !text.includes('"$f"')) return JSON.parse(text);
  return JSON.parse(text, storageReviver);
}

/** True when `v` is a value a row may hold on input (scalars only). */
export function isScalar(v: unknown): v is Value {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'number' ||
    typeof v === 'boolean' ||
    typeof v === 'bigint'
  );
}

export function isRowObject(v: unknown): v is Row {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  for (const x of Object.values(v)) if (!isScalar(x)) return false;
  return true;
}
