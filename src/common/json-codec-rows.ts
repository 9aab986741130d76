// The common ingest body — an array of flat row objects of plain values, in ASCII — read straight
// from its bytes. The general path (request-bodies.ts) decodes the bytes as strict UTF-8, scans the
// text for a long digit run and a `\u`, then runs JSON.parse: on the HTTP benchmark's 50 KB body
// of 1,000 rows that was the largest line of the server's thread outside the engine, about 350 µs a
// request. Here one pass over the bytes reads each row's values and builds its object by a
// function generated per key list (an object literal, as JSON.parse would lay it out); a second
// generated function compares each row's field heads with the last row's (or the last body's).
//
// Anything this reader does not take for certain answers null, and the caller takes the general
// path, which gives the same value or the error: a byte beyond ASCII, an escape, a number with a
// fraction, an exponent or more than 15 digits (what could round), a nested value, an empty
// object, a duplicate key, a key that is `__proto__` or starts with a digit (an object literal
// treats those differently from JSON.parse), more than MAX_KEYS keys, or anything not JSON. So the
// values are exactly JSON.parse's (integers of up to 15 digits are exact doubles; `-0` stays -0).

import { generatedFunction } from './generated-function.ts';

/** Builds one row object from the values read, in key order. */
type RowBuilder = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * Whether field `field`'s head, the bytes `"key":`, is at bytes[at] (false for a field past the
 * list's end): generated per key list, each byte a comparison with a constant at a constant offset.
 * A loop over the key's bytes (two loads and a bound test a byte) was a quarter of the reader's time.
 */
type HeadMatcher = (bytes: Uint8Array, at: number, field: number) => boolean;

interface Shape {
  /** Each field's head length (`"key":`, so a body written without spaces around its colons). */
  readonly headLengths: readonly number[];
  readonly matchHead: HeadMatcher;
  readonly build: RowBuilder;
}

/** Row shapes by their keys joined with NUL (bounded: emptied when full). */
const shapes = new Map<string, Shape>();
const MAX_SHAPES = 64;
/** The widest row taken here (a generated builder stays small). */
const MAX_KEYS = 64;
/**
 * New key lists one body may compile before it is left to the general path: rows whose keys change
 * from row to row would otherwise compile a builder each (tens of µs), so a hostile body of many
 * small rows could hold the event loop for seconds where JSON.parse takes milliseconds.
 */
const MAX_NEW_SHAPES_PER_BODY = 4;
/**
 * The longest key list (its keys' bytes summed) given generated code: a field head's matcher is
 * about 25 characters of code per byte of its key, so a body of one megabyte-long key would compile
 * megabytes of code. Column names are short; a longer list takes the general path.
 */
const MAX_KEY_LIST_BYTES = 1024;

/**
 * The last body's row shape, which the next body's first row is compared with in place: a client
 * sends the same keys body after body, and looking the shape up by its keys' text made three
 * strings and a key list's join per body.
 */
let lastShape: Shape | null = null;

/** How many row builders were generated (a test checks one per key list, not one per row). */
export const rowBuildersCompiled = { count: 0 };
/** How many bodies this reader took (a server test checks that an ingest body comes this way). */
export const flatRowBodiesRead = { count: 0 };
/** How many times a row's keys were looked up by their text (a test checks not once per body). */
export const rowShapeLookups = { count: 0 };

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** At most this many digits: below 2^53, so the digits add up to the exact double JSON.parse gives. */
const MAX_DIGITS = 15;

function isSpace(c: number): boolean {
  // Most bytes read here are above the space: one comparison rules them out.
  return c <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB);
}

/**
 * The rows of a body `[{"k": v, ...}, ...]` whose values are integers of at most 15 digits, ASCII
 * strings without escapes, booleans or null — exactly what JSON.parse gives for it — or null when
 * the body is anything else (see the header).
 */
export function parseFlatRowArray(bytes: Uint8Array): Record<string, unknown>[] | null {
  // Read to no offset: one call reads the body whole (undefined never comes back).
  return new FlatRowArrayReader(bytes).read(Infinity) ?? null;
}

/**
 * parseFlatRowArray in parts: each read() goes on from where the last stopped, to the first row's
 * end at or past a byte offset, so a large body can be read a slice at a time between turns of the
 * event loop. Its answer is the same as parseFlatRowArray's.
 */
export class FlatRowArrayReader {
  /** The next byte to read; 0 until the opening bracket was read. */
  private at = 0;
  private readonly rows: Record<string, unknown>[] = [];
  private readonly values: unknown[] = [];
  private readonly keyStarts: number[] = [];
  private readonly keyEnds: number[] = [];
  private shape: Shape | null = lastShape;
  /** New key lists this body may still compile (see MAX_NEW_SHAPES_PER_BODY). */
  newShapesLeft = MAX_NEW_SHAPES_PER_BODY;
  private answer: Record<string, unknown>[] | null | undefined = undefined;

  constructor(private readonly bytes: Uint8Array) {}

  /** The offset of the next byte to read (a progress measure). */
  get offset(): number {
    return this.at;
  }

  /**
   * Reads rows up to the first row's end at or past byte `until`: the rows once the body is read
   * whole, null when it is not one this reader takes, undefined while rows are left.
   */
  read(until: number): Record<string, unknown>[] | null | undefined {
    if (this.answer !== undefined) return this.answer;
    this.answer = this.readRows(until);
    return this.answer;
  }

  private readRows(until: number): Record<string, unknown>[] | null | undefined {
    const bytes = this.bytes;
    const n = bytes.length;
    let at = this.at;
    if (at === 0) {
      while (at < n && isSpace(bytes[at] as number)) at++;
      if (bytes[at] !== OPEN_BRACKET) return null;
      at++;
    }
    const { rows, values, keyStarts, keyEnds } = this;
    let shape = this.shape;
    for (;;) {
      while (at < n && isSpace(bytes[at] as number)) at++;
      if (bytes[at] !== OPEN_BRACE) return null;
      at++;
      let width = 0;
      let sameShape = shape !== null;
      for (;;) {
        while (at < n && isSpace(bytes[at] as number)) at++;
        if (width >= MAX_KEYS) return null;
        // The field head the last row had here (`"key":`), compared in place: then the key's bytes
        // need no scan, and the quotes and colon no test of their own.
        if (sameShape && (shape as Shape).matchHead(bytes, at, width)) {
          const headLength = (shape as Shape).headLengths[width] as number;
          keyStarts[width] = at + 1;
          keyEnds[width] = at + headLength - 2;
          at += headLength;
        } else {
          sameShape = false;
          if (bytes[at] !== QUOTE) return null;
          const keyStart = ++at;
          at = plainTextEnd(bytes, at);
          if (at < 0) return null;
          keyStarts[width] = keyStart;
          keyEnds[width] = at++;
          while (at < n && isSpace(bytes[at] as number)) at++;
          if (bytes[at] !== COLON) return null;
          at++;
        }
        while (at < n && isSpace(bytes[at] as number)) at++;
        // The value.
        const c = bytes[at] as number;
        if (c === MINUS || (c >= ZERO && c <= NINE)) {
          const negative = c === MINUS;
          if (negative) at++;
          const first = at;
          let x = 0;
          while (at < n) {
            const d = (bytes[at] as number) - ZERO;
            if (d < 0 || d > 9) break;
            x = x * 10 + d;
            at++;
          }
          const digits = at - first;
          // No digit, a leading zero (invalid JSON), or too many digits to be sure of the double.
          if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && bytes[first] === ZERO)) return null;
          const next = bytes[at];
          if (next === 0x2e || next === 0x65 || next === 0x45) return null; // . e E: the general path
          values[width] = negative ? -x : x;
        } else if (c === QUOTE) {
          const start = ++at;
          at = plainTextEnd(bytes, at);
          if (at < 0) return null;
          values[width] = latin1(bytes, start, at);
          at++;
        } else if (c === 0x6e && word(bytes, at, 'null')) {
          values[width] = null;
          at += 4;
        } else if (c === 0x74 && word(bytes, at, 'true')) {
          values[width] = true;
          at += 4;
        } else if (c === 0x66 && word(bytes, at, 'false')) {
          values[width] = false;
          at += 5;
        } else return null;
        width++;
        while (at < n && isSpace(bytes[at] as number)) at++;
        const after = bytes[at];
        at++;
        if (after === COMMA) continue;
        if (after === CLOSE_BRACE) break;
        return null;
      }
      let rowShape: Shape | null = shape;
      if (rowShape === null || !sameShape || rowShape.headLengths.length !== width) {
        rowShape = shapeOf(bytes, keyStarts, keyEnds, width, this);
        if (rowShape === null) return null;
        shape = rowShape;
      }
      rows.push(rowShape.build(values));
      while (at < n && isSpace(bytes[at] as number)) at++;
      const after = bytes[at];
      at++;
      if (after === COMMA) {
        if (at < until) continue;
        this.at = at;
        this.shape = shape;
        return undefined;
      }
      if (after === CLOSE_BRACKET) break;
      return null;
    }
    while (at < n && isSpace(bytes[at] as number)) at++;
    if (at !== n) return null;
    this.at = at;
    lastShape = shape;
    flatRowBodiesRead.count++;
    return rows;
  }
}

/**
 * Where the closing quote is of a string starting at bytes[at] that is printable ASCII without a
 * backslash (its bytes are its characters), else -1: the general path takes it.
 */
function plainTextEnd(bytes: Uint8Array, at: number): number {
  for (; at < bytes.length; at++) {
    const c = bytes[at] as number;
    if (c === QUOTE) return at;
    if (c < SPACE || c > 0x7e || c === BACKSLASH) return -1;
  }
  return -1;
}

/** Whether `text` (ASCII) is spelled at bytes[at]. */
function word(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The ASCII bytes[start, end) as a string. */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/**
 * The shape of a row's keys (bytes[keyStarts[i], keyEnds[i])), generated once per key list; null
 * for keys an object literal would not take as JSON.parse does (see the header).
 */
function shapeOf(
  bytes: Uint8Array,
  keyStarts: number[],
  keyEnds: number[],
  width: number,
  body: { newShapesLeft: number },
): Shape | null {
  const keys: string[] = [];
  for (let i = 0; i < width; i++) keys.push(latin1(bytes, keyStarts[i] as number, keyEnds[i] as number));
  const id = keys.join('\u0000');
  rowShapeLookups.count++;
  const known = shapes.get(id);
  if (known !== undefined) return known;
  if (width === 0 || body.newShapesLeft === 0 || new Set(keys).size !== width) return null;
  if (id.length - (width - 1) > MAX_KEY_LIST_BYTES) return null;
  for (const key of keys) {
    const c = key.charCodeAt(0);
    if (key === '__proto__' || (c >= ZERO && c <= NINE)) return null;
  }
  // Only the keys' JSON texts (printable ASCII, no backslash: checked by the reader) enter the code.
  const fields = keys.map((key, i) => `${JSON.stringify(key)}: values[${i}]`).join(', ');
  body.newShapesLeft--;
  const build = generatedFunction('values', `return { ${fields} };`) as RowBuilder;
  rowBuildersCompiled.count++;
  const heads = keys.map((key) => `"${key}":`);
  const shape: Shape = { headLengths: heads.map((h) => h.length), matchHead: headMatcher(heads), build };
  if (shapes.size >= MAX_SHAPES) shapes.clear();
  shapes.set(id, shape);
  return shape;
}

/** The generated HeadMatcher of one key list (only byte values and offsets enter the code). */
function headMatcher(heads: readonly string[]): HeadMatcher {
  const cases = heads.map((head, field) => {
    const tests = [`at + ${head.length} <= bytes.length`];
    for (let i = 0; i < head.length; i++) tests.push(`bytes[at + ${i}] === ${head.charCodeAt(i)}`);
    return `case ${field}: return ${tests.join(' && ')};`;
  });
  return generatedFunction(
    'bytes',
    'at',
    'field',
    `switch (field) { ${cases.join(' ')} } return false;`,
  ) as HeadMatcher;
}
