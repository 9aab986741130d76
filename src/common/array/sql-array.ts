// SQL arrays (one-dimensional, of a scalar type, NULL elements allowed) as an immutable value like
// Decimal and Jsonb: its elements, PostgreSQL's text form `{1,2,NULL}` / `{"a b",c}`, a key shared
// by equal arrays and element-wise order. The element type lives in the plan, not in the value.
import { SluiceError } from '../errors.ts';
import type { Value } from '../types.ts';
import { MAX_ARRAY_LENGTH } from '../limits.ts';
import { encodeOne } from '../value-key.ts';
import { floatText, numberText } from '../float-text.ts';

/** One array value. `items` is never mutated (functions build new arrays). */
export class SqlArray {
  private keyText: string | undefined;
  private printed: string | undefined;
  constructor(readonly items: readonly Value[]) {}

  get length(): number {
    return this.items.length;
  }

  /** A Map key: equal arrays (element-wise SQL-equal, as 1.5 and 1.50) share it. */
  key(): string {
    if (this.keyText === undefined) {
      let out = `a${this.items.length}[`;
      for (const v of this.items) out += elementKey(v);
      this.keyText = `${out}]`;
    }
    return this.keyText;
  }

  /**
   * PostgreSQL's output text: `{1,2,NULL}`, elements quoted when they must be; a number as its digits
   * (the element type is not at hand: `text` writes a float array's elements as floats).
   */
  toString(): string {
    if (this.printed === undefined) this.printed = this.text(null);
    return this.printed;
  }

  /** The output text, a float array's elements (`floatBits` 32 or 64) as PostgreSQL writes floats. */
  text(floatBits: 32 | 64 | null): string {
    let out = '{';
    for (let i = 0; i < this.items.length; i++) {
      if (i > 0) out += ',';
      out += elementText(this.items[i] as Value, floatBits);
    }
    return `${out}}`;
  }

  /** On the wire a JSON array of the elements, each as its scalar's wire form. */
  toJSON(): readonly Value[] {
    return this.items;
  }
}

function elementKey(v: Value): string {
  return encodeOne(v);
}

function elementText(v: Value, floatBits: 32 | 64 | null): string {
  if (v === null) return 'NULL';
  // PostgreSQL's boolout inside arrays: t and f
  const s =
    typeof v === 'boolean'
      ? v
        ? 't'
        : 'f'
      : typeof v === 'number'
        ? floatBits === null
          ? numberText(v)
          : floatText(v, floatBits)
        : String(v);
  return needsQuotes(s) ? `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"` : s;
}

/** array_out's rule: quote the empty string, NULL spelled as text, and anything with { } , " \ or blanks. */
function needsQuotes(s: string): boolean {
  if (s === '' || (s.length === 4 && s.toLowerCase() === 'null')) return true;
  return /[{}",\\\s]/.test(s);
}

export function arrayTooLarge(length: number): SluiceError {
  return new SluiceError('ARRAY_TOO_LARGE', `array size exceeds the maximum allowed (${MAX_ARRAY_LENGTH})`, {
    detail: `the array would have ${length} elements`,
  });
}

/** Checks a length before an array of it is built. */
export function checkArrayLength(length: number): void {
  if (length > MAX_ARRAY_LENGTH) throw arrayTooLarge(length);
}

function malformedArray(text: string, detail: string): SluiceError {
  return new SluiceError('INVALID_CAST', `malformed array literal: ${JSON.stringify(text)}`, { detail });
}

/**
 * A one-dimensional array literal as PostgreSQL reads it: `{a,b,0}`, `{"a b","x\"y"}`, `{}`; an
 * unquoted NULL is a null element. INVALID_CAST otherwise; a nested `{` (a multi-dimensional
 * array) is refused by name, or with `nested: 'malformed'` is malformed like any other `{` (a
 * jsonb path, jsonb-ops.ts).
 */
export function parseArrayText(
  text: string,
  nested: 'not-supported' | 'malformed' = 'not-supported',
): (string | null)[] {
  const s = text.trim();
  if (!s.startsWith('{') || !s.endsWith('}')) throw malformedArray(text, 'array value must start with "{"');
  const body = s.slice(1, -1);
  if (body.trim() === '') return [];
  const out: (string | null)[] = [];
  let i = 0;
  for (;;) {
    while (body[i] === ' ' || body[i] === '\t' || body[i] === '\n') i++;
    let item = '';
    let quoted = false;
    if (body[i] === '{' && nested === 'not-supported') {
      throw new SluiceError('NOT_SUPPORTED', 'multidimensional arrays are not supported', {
        detail: `in the array literal ${JSON.stringify(text)}`,
      });
    }
    if (body[i] === '"') {
      quoted = true;
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        item += body[i] ?? '';
        i++;
      }
      if (body[i] !== '"') throw malformedArray(text, 'unexpected end of input');
      i++;
      while (body[i] === ' ') i++;
    } else {
      while (i < body.length && body[i] !== ',') {
        const c = body[i] as string;
        if (c === '{' || c === '}' || c === '"') throw malformedArray(text, `unexpected "${c}" character`);
        if (c === '\\') i++;
        item += body[i] ?? '';
        i++;
      }
      item = item.trim();
      if (item === '') throw malformedArray(text, 'unexpected "," character');
    }
    out.push(!quoted && item.toLowerCase() === 'null' ? null : item);
    if (out.length > MAX_ARRAY_LENGTH) throw arrayTooLarge(out.length);
    if (i >= body.length) return out;
    if (body[i] !== ',') throw malformedArray(text, 'junk after closing right brace');
    i++;
  }
}
