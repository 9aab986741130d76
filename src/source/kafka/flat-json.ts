// A byte-level reader for the common shape of a `json` source's record: one flat JSON object, in
// ASCII, whose fields are the source's columns and whose values are strings without escapes,
// short numbers, true, false or null. It builds the row object straight from the message bytes —
// no UTF-8 decoding into a string, no JSON.parse of that string, no column check afterwards — and
// answers null for anything else, which then takes the general path (record-decoder.ts's `parse`:
// strict UTF-8, exact JSON, lone surrogates, the poison reasons). The profile of the Kafka
// benchmark put that general path at ≈ 1.9 µs of ≈ 15 µs per record on the server's thread.
//
// What it accepts it reads exactly as the general path would: every byte is ASCII (so the bytes
// are valid UTF-8 and the text is the bytes), no backslash (so no escape, no lone surrogate), no
// run of 16 digits and points (so `parseJsonExact` would take JSON.parse's reading, not the exact
// parser's), no duplicate field (JSON.parse keeps the last, the exact parser refuses: let the
// general path decide), every field a column (the general path names the unknown one). Within
// that, the grammar is JSON's own, checked strictly: what JSON.parse refuses, this refuses too.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
/** A run of digits and points this long may be a number a double does not keep (json-codec.ts). */
const LONG_RUN = 16;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;

/** `scan`'s success mark when it wrote values, not a row (never written to). */
const VALUES_READ: Record<string, unknown> = Object.freeze({});

/** Reads flat JSON rows of one source's columns; one reader per decoder (it keeps per-row scratch). */
export class FlatJsonReader {
  private readonly names: readonly string[];
  /** Per column of the reader, its position among the source's columns (`valuesIn`'s index). */
  private readonly positions: readonly number[];
  /** The source's column count (`valuesIn` writes that many values). */
  private readonly width: number;
  private readonly nameBytes: readonly Uint8Array[];
  /** Per column: its name is plain text a JSON string spells byte for byte (see `plainHint`). */
  private readonly plainName: readonly boolean[];
  /** Per field position in a record, the column found there last time (records repeat their layout). */
  private readonly hint: Int32Array;
  /** Per column, the row (`stamp`) that last set it: a second setting in one row is a duplicate. */
  private readonly seenAt: Uint32Array;
  private stamp = 0;
  /** Records read by this reader, and those it left to the general path (for tests and metrics). */
  read = 0;
  declined = 0;

  constructor(columns: readonly string[]) {
    // A field named __proto__ would set the object's prototype when assigned: the general path
    // (JSON.parse defines it as an own field) reads such records.
    this.names = columns.filter((c) => c !== '__proto__');
    this.positions = this.names.map((c) => columns.indexOf(c));
    this.width = columns.length;
    this.nameBytes = this.names.map((c) => Buffer.from(c, 'utf8'));
    this.plainName = this.nameBytes.map((bytes) => {
      const quoted = Buffer.concat([bytes, Buffer.from('"')]);
      return endOfString(quoted, 0, quoted.length) === bytes.length;
    });
    this.hint = new Int32Array(this.names.length + 1).fill(-1);
    this.seenAt = new Uint32Array(this.names.length);
  }

  /** The row `bytes` spell, exactly as JSON.parse of their text would give it; null: not this shape. */
  row(bytes: Buffer): Record<string, unknown> | null {
    return this.rowIn(bytes, 0, bytes.length);
  }

  /**
   * The row bytes [start, end) of `b` spell (a record's value inside the fetch buffer it came in,
   * read without a Buffer of its own); null: not this shape. Nothing outside the range is read.
   */
  rowIn(b: Buffer, start: number, end: number): Record<string, unknown> | null {
    const row = this.scan(b, start, end);
    if (row === null) this.declined++;
    else this.read++;
    return row;
  }

  /**
   * What `rowIn` reads, as the source's columns' values by position into `out` (undefined: the
   * record has no such field; `out` is overwritten whole) instead of a row object: false when the
   * record is not this shape (`out` then holds nothing to read).
   */
  valuesIn(b: Buffer, start: number, end: number, out: unknown[]): boolean {
    const width = this.width;
    for (let c = 0; c < width; c++) out[c] = undefined;
    if (this.scan(b, start, end, out) === null) {
      this.declined++;
      return false;
    }
    this.read++;
    return true;
  }

  /** `rowIn` without counting the record (read again after `valuesIn`, to name what is wrong). */
  rowAgain(b: Buffer, start: number, end: number): Record<string, unknown> | null {
    return this.scan(b, start, end, null);
  }

  /** With `out`: values go there by position and a non-null answer is only a success mark. */
  private scan(
    b: Buffer,
    start: number,
    n: number,
    out: unknown[] | null = null,
  ): Record<string, unknown> | null {
    let i = skipSpace(b, start, n);
    if (i >= n || b[i] !== OPEN) return null;
    i = skipSpace(b, i + 1, n);
    const row: Record<string, unknown> = out === null ? {} : VALUES_READ;
    this.stamp = (this.stamp + 1) >>> 0;
    if (this.stamp === 0) {
      this.seenAt.fill(0);
      this.stamp = 1;
    }
    if (i < n && b[i] === CLOSE) return skipSpace(b, i + 1, n) === n ? row : null;
    for (let field = 0; ; field++) {
      // The field's name: a column's name, in quotes.
      if (i >= n || b[i] !== QUOTE) return null;
      const nameStart = i + 1;
      // Records repeat their layout: the column seen at this field last time, when its name (plain
      // text, read as itself) is here in full, is the one; else the name is read and looked up.
      let column = this.plainHint(b, nameStart, n, field);
      let nameEnd = column < 0 ? -1 : nameStart + (this.nameBytes[column] as Uint8Array).length;
      if (column < 0) {
        nameEnd = endOfString(b, nameStart, n);
        if (nameEnd < 0) return null;
        column = this.column(b, nameStart, nameEnd, field);
      }
      if (column < 0 || this.seenAt[column] === this.stamp) return null;
      this.seenAt[column] = this.stamp;
      i = skipSpace(b, nameEnd + 1, n);
      if (i >= n || b[i] !== COLON) return null;
      i = skipSpace(b, i + 1, n);
      if (i >= n) return null;
      // The value.
      const c = b[i] as number;
      let value: unknown;
      if (c === QUOTE) {
        const end = endOfString(b, i + 1, n);
        if (end < 0) return null;
        value = b.toString('latin1', i + 1, end);
        i = end + 1;
      } else if (c === MINUS || isDigit(c)) {
        // A short integer in one pass; anything else (a fraction, an exponent, a long run) as before.
        const end = endOfShortInteger(b, i, n);
        if (end > 0) {
          value = integerAt(b, i, end);
          i = end;
        } else {
          const numberEnd = end === 0 ? -1 : endOfNumber(b, i, n);
          if (numberEnd < 0) return null;
          const number = numberAt(b, i, numberEnd);
          // Beyond a double (1e400): the general path refuses it, naming where it is.
          if (!Number.isFinite(number)) return null;
          value = number;
          i = numberEnd;
        }
      } else if (c === 0x74 /* t */ && literalAt(b, i, n, 'true')) {
        value = true;
        i += 4;
      } else if (c === 0x66 /* f */ && literalAt(b, i, n, 'false')) {
        value = false;
        i += 5;
      } else if (c === 0x6e /* n */ && literalAt(b, i, n, 'null')) {
        value = null;
        i += 4;
      } else return null; // an object, an array, or not JSON
      if (out === null) row[this.names[column] as string] = value;
      else out[this.positions[column] as number] = value;
      i = skipSpace(b, i, n);
      if (i >= n) return null;
      if (b[i] === COMMA) {
        i = skipSpace(b, i + 1, n);
        continue;
      }
      if (b[i] !== CLOSE) return null;
      return skipSpace(b, i + 1, n) === n ? row : null;
    }
  }

  /**
   * The column seen at field position `field` last time, when its name is plain (a JSON string of
   * printable ASCII, no escape, no 16-digit run: `endOfString` would end it at its length) and
   * spelled at `start` followed by the closing quote; else -1.
   */
  private plainHint(b: Buffer, start: number, n: number, field: number): number {
    const at = field < this.hint.length ? field : this.hint.length - 1;
    const guess = this.hint[at] as number;
    if (guess < 0 || !this.plainName[guess]) return -1;
    const name = this.nameBytes[guess] as Uint8Array;
    const end = start + name.length;
    if (end >= n || b[end] !== QUOTE) return -1;
    for (let k = 0; k < name.length; k++) if (name[k] !== b[start + k]) return -1;
    return guess;
  }

  /** The column whose name is bytes [start, end), or -1; tries the one seen at this position last. */
  private column(b: Buffer, start: number, end: number, field: number): number {
    const at = field < this.hint.length ? field : this.hint.length - 1;
    const guess = this.hint[at] as number;
    if (guess >= 0 && this.nameIs(guess, b, start, end)) return guess;
    for (let c = 0; c < this.nameBytes.length; c++) {
      if (c !== guess && this.nameIs(c, b, start, end)) {
        this.hint[at] = c;
        return c;
      }
    }
    return -1;
  }

  private nameIs(column: number, b: Buffer, start: number, end: number): boolean {
    const name = this.nameBytes[column] as Uint8Array;
    if (name.length !== end - start) return false;
    for (let k = 0; k < name.length; k++) if (name[k] !== b[start + k]) return false;
    return true;
  }
}

function skipSpace(b: Buffer, i: number, n: number): number {
  while (i < n && isSpace(b[i] as number)) i++;
  return i;
}

/**
 * The index of the quote closing a string whose text starts at `i`, or -1 when the string is not
 * plain printable ASCII (an escape, a control character, a byte beyond ASCII), or holds a run of
 * 16 digits and points, or is not closed.
 */
function endOfString(b: Buffer, i: number, n: number): number {
  let run = 0;
  for (; i < n; i++) {
    const c = b[i] as number;
    if (c === QUOTE) return i;
    if (c < 0x20 || c >= 0x7f || c === BACKSLASH) return -1;
    if (isDigit(c) || c === DOT) {
      if (++run >= LONG_RUN) return -1;
    } else run = 0;
  }
  return -1;
}

/**
 * The end of the JSON number starting at `i` (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), or -1
 * when it is not one, or a run of its digits and points is 16 long.
 */
function endOfNumber(b: Buffer, i: number, n: number): number {
  if (b[i] === MINUS) i++;
  const intStart = i;
  if (i < n && b[i] === ZERO) i++;
  else {
    while (i < n && isDigit(b[i] as number)) i++;
    if (i === intStart) return -1;
  }
  let run = i - intStart;
  if (i < n && b[i] === DOT) {
    i++;
    const fracStart = i;
    while (i < n && isDigit(b[i] as number)) i++;
    if (i === fracStart) return -1;
    run += 1 + i - fracStart;
  }
  if (run >= LONG_RUN) return -1;
  if (i < n && (b[i] === 0x65 /* e */ || b[i] === 0x45) /* E */) {
    i++;
    if (i < n && (b[i] === PLUS || b[i] === MINUS)) i++;
    const expStart = i;
    while (i < n && isDigit(b[i] as number)) i++;
    if (i === expStart || i - expStart >= LONG_RUN) return -1;
  }
  // A number ends at a delimiter (or the range's end); "1x" or "01" is not JSON.
  if (i >= n) return i;
  const c = b[i] as number;
  return c === COMMA || c === CLOSE || isSpace(c) ? i : -1;
}

/**
 * The end of a short integer starting at `i` (-?(0|[1-9][0-9]*), fewer than 16 digits, followed by a
 * delimiter or the range's end); 0 when what starts there is not JSON at all (no digit, a leading
 * zero followed by a digit, any other byte after the digits); -1 when it may be another JSON number
 * (a fraction, an exponent, a long run of digits): `endOfNumber` decides.
 */
function endOfShortInteger(b: Buffer, i: number, n: number): number {
  let j = b[i] === MINUS ? i + 1 : i;
  const digitsStart = j;
  while (j < n && isDigit(b[j] as number)) j++;
  const digits = j - digitsStart;
  if (digits === 0) return 0;
  if (digits > 1 && b[digitsStart] === ZERO) return 0;
  if (digits >= LONG_RUN) return -1;
  if (j >= n) return j;
  const c = b[j] as number;
  if (c === COMMA || c === CLOSE || isSpace(c)) return j;
  return c === DOT || c === 0x65 /* e */ || c === 0x45 /* E */ ? -1 : 0;
}

/** The integer bytes [start, end) spell (an optional minus and fewer than 16 digits: exact). */
function integerAt(b: Buffer, start: number, end: number): number {
  const negative = b[start] === MINUS;
  let v = 0;
  for (let k = negative ? start + 1 : start; k < end; k++) v = v * 10 + ((b[k] as number) - ZERO);
  return negative ? -v : v;
}

/** The number bytes [start, end) spell: integers directly (fewer than 16 digits: exact), others by Number(). */
function numberAt(b: Buffer, start: number, end: number): number {
  const negative = b[start] === MINUS;
  let v = 0;
  for (let k = negative ? start + 1 : start; k < end; k++) {
    const c = b[k] as number;
    if (!isDigit(c)) return Number(b.toString('latin1', start, end));
    v = v * 10 + (c - ZERO);
  }
  return negative ? -v : v;
}

function literalAt(b: Buffer, i: number, n: number, word: string): boolean {
  if (i + word.length > n) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return false;
  return true;
}
