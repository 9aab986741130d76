// Flat JSON value lists written as ASCII bytes into one reused buffer and read back as one flat
// string: the stored changelog form's value list `c` (changelog-codec.ts) of a view nobody
// subscribes to, and a journal batch's row values (table-log.ts). The profile of the HTTP ingest
// benchmark put both among the largest costs of the server's thread outside the engine: each
// built an array of every value (~3,000 per journal batch, ~5,700 per `seller_totals` epoch), walked
// it for values that need tags, then ran JSON.stringify over it. Here each value is written once,
// as its digits, with nothing allocated per value. The changelog's two lists are written by functions
// generated per column list (the wire list: its names and braces as constant byte stores) and per
// row width (the stored list), each value read at its constant index.
//
// The text is byte for byte what JSON.stringify of the value list gives: safe integers by a
// digit loop, every other finite number as String(v) (JSON.stringify's own number form), strings
// as JSON.stringify's text. The changelog writes bigints and non-finite numbers as the quoted
// strings of their wire form; the journal leaves them, and -0, to its tagged encoder. Anything else
// (a value that is not a scalar, a string with a character beyond ASCII, an unknown op) answers
// null, and the caller takes its array path, which handles everything.
import type { ChangeList } from '../common/raw-changes.ts';
import type { Value } from '../common/types.ts';
import { generatedFunction } from '../common/generated-function.ts';
import { ColumnListCache } from './column-list-cache.ts';

const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const ZERO = 0x30;

/** The longest text an integer, boolean or null takes here, with its comma ("-9007199254740991"...). */
const MAX_SCALAR_BYTES = 32;

/** The stored value list `[op,v1,...,vk, ...]` and the multiplicities list (null when every n is 1). */
export interface StoredValues {
  readonly c: string;
  readonly n: number[] | null;
}

/** An op's two characters by its kind code (raw-changes.ts): +I, -D, -U, +U. */
const OP_FIRST = Uint8Array.of(0x2b, 0x2d, 0x2d, 0x2b);
const OP_SECOND = Uint8Array.of(0x49, 0x44, 0x55, 0x55);

/** Reused between calls (the writer is synchronous and never re-entered); grows by doubling. */
let shared: Buffer = Buffer.allocUnsafe(1 << 16);

/** `buf` with room for `bytes` more after `at` (the same buffer, or a copy twice as large). */
function withRoom(buf: Buffer, at: number, bytes: number): Buffer {
  if (at + bytes <= buf.length) return buf;
  let size = buf.length * 2;
  while (size < at + bytes) size *= 2;
  const bigger = Buffer.allocUnsafe(size);
  buf.copy(bigger, 0, 0, at);
  shared = bigger;
  return bigger;
}

/** Each number below 100 as its two ASCII digits ("00" to "99"), at twice the number. */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[2 * i] = ZERO + ((i / 10) | 0);
  DIGIT_PAIRS[2 * i + 1] = ZERO + (i % 10);
}

/** How many decimal digits a non-negative 31-bit integer (or 2^31) has: comparisons, not divisions. */
function decimalDigits(x: number): number {
  if (x < 100_000) return x < 100 ? (x < 10 ? 1 : 2) : x < 1000 ? 3 : x < 10_000 ? 4 : 5;
  if (x < 10_000_000) return x < 1_000_000 ? 6 : 7;
  return x < 100_000_000 ? 8 : x < 1_000_000_000 ? 9 : 10;
}

/**
 * Writes a 31-bit integer's digits at `at` (room checked by the caller); returns the end. Two digits
 * a division, from a table of pairs, and the length by comparisons: half the divisions of a digit at
 * a time, and none to count (the encoders' values are mostly integers: a third or more of their time).
 */
function writeInt(buf: Uint8Array, at: number, v: number): number {
  let x = v;
  if (x < 0) {
    buf[at++] = MINUS;
    x = -x; // 2147483648 still divides exactly below
  }
  const end = at + decimalDigits(x);
  let d = end;
  while (x >= 100) {
    const q = (x / 100) | 0;
    const pair = (x - q * 100) << 1;
    buf[--d] = DIGIT_PAIRS[pair + 1] as number;
    buf[--d] = DIGIT_PAIRS[pair] as number;
    x = q;
  }
  if (x >= 10) {
    buf[--d] = DIGIT_PAIRS[(x << 1) + 1] as number;
    buf[--d] = DIGIT_PAIRS[x << 1] as number;
  } else buf[--d] = ZERO + x;
  return end;
}

/**
 * Writes a safe integer's digits (beyond 31 bits: a BIGINT key or a timestamp; -0 as 0) at `at`
 * (room checked by the caller); returns the end. In int32 arithmetic, as a float64 remainder is a
 * call into the runtime: the part above 1e9 (below 2^24 for a safe integer), then nine digits.
 */
export function writeSafeInt(buf: Uint8Array, at: number, v: number): number {
  let x = v;
  if (x < 0) {
    buf[at++] = MINUS;
    x = -x;
  }
  if (x < 1e9) return writeInt(buf, at, x);
  const high = Math.floor(x / 1e9);
  at = writeInt(buf, at, high);
  let low = x - high * 1e9;
  for (let d = at + 8; d >= at; d--) {
    const q = (low / 10) | 0;
    buf[d] = ZERO + (low - q * 10);
    low = q;
  }
  return at + 9;
}

/**
 * The text of a value other than a 31-bit integer, as JSON.stringify writes its wire JSON value
 * (ASCII), or null when this path does not take it.
 */
function otherValueText(v: unknown): string | null {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? String(v) : `"${String(v)}"`;
    case 'string': {
      const text = JSON.stringify(v);
      // One byte per character in UTF-8 only when every character is ASCII.
      return Buffer.byteLength(text, 'utf8') === text.length ? text : null;
    }
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return `"${v.toString()}"`;
    case 'object':
      return v === null ? 'null' : null;
    default:
      return null; // undefined (a row shorter than its columns) or not a value
  }
}

/**
 * The stored form's `c` (with its brackets) and `n` of value-array changes whose rows have `width`
 * values each, or null when a change is not for this path (see the header). Written by a function
 * generated per width (below), each value read at its constant index.
 */
export function storedValuesOf(changes: ChangeList, width: number): StoredValues | null {
  if (width > MAX_GENERATED_WIDTH) return null;
  let writer = storedWriters.get(width);
  if (writer === undefined) {
    writer = compileStoredWriter(width);
    storedWriters.set(width, writer);
  }
  return writer(changes, writerParts);
}

/**
 * JSON.stringify of the rows' values in one flat list, row after row (a journal batch's `i` or
 * `d`), or null when a value needs the journal's tags (bigint, -0, a non-finite number, a decimal
 * or any other object) or is not ASCII text: the caller then takes encodeStored.
 */
export function flatValuesText(rows: readonly (readonly Value[])[]): string | null {
  let buf: Buffer = shared;
  let at = 0;
  buf[at++] = 0x5b; // [
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as readonly Value[];
    buf = withRoom(buf, at, row.length * MAX_SCALAR_BYTES);
    for (let k = 0; k < row.length; k++) {
      if (r > 0 || k > 0) buf[at++] = COMMA;
      const v = row[k];
      if (typeof v === 'number' && (v | 0) === v) {
        if (v === 0 && 1 / v < 0) return null; // -0: tagged
        at = writeInt(buf, at, v);
        continue;
      }
      if (Number.isSafeInteger(v)) {
        at = writeSafeInt(buf, at, v as number);
        continue;
      }
      if (typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v))) return null;
      const text = otherValueText(v);
      if (text === null) return null;
      buf = withRoom(buf, at, text.length + (row.length - k) * MAX_SCALAR_BYTES);
      at += buf.write(text, at, 'latin1');
    }
  }
  buf = withRoom(buf, at, 1);
  buf[at++] = 0x5d; // ]
  return buf.toString('latin1', 0, at);
}

/**
 * The wire message's change list (API.md `changes`, without its brackets) of value-array changes
 * whose rows hold the values of `columns` in order: `{"op":"+U","row":{"bucket":3,"sellers":12}}`,
 * with `,"n":m` when the multiplicity is not 1. Byte for byte what the generated row encoder of
 * changelog-codec.ts writes; null when a change is not for this path (see the header). Written as
 * bytes and read back as one flat one-byte string: the WebSocket's UTF-8 length and encode of it are
 * then a copy, where the encoder's text, concatenated piece by piece, had to be flattened first.
 */
export function wireChangesOf(changes: ChangeList, columns: readonly string[]): string | null {
  const writer = wireWriters.get(columns);
  return writer === null ? null : writer(changes, writerParts);
}

/** A wire change list writer generated for one column list (null: a name beyond ASCII). */
type WireWriter = (changes: ChangeList, parts: WriterParts) => string | null;
/** A stored value list writer generated for one row width. */
type StoredWriter = (changes: ChangeList, parts: WriterParts) => StoredValues | null;

/** What a generated writer calls: the buffer and the value writers of this module. */
interface WriterParts {
  readonly buffer: () => Buffer;
  readonly withRoom: typeof withRoom;
  readonly writeInt: typeof writeInt;
  readonly writeSafeInt: typeof writeSafeInt;
  readonly otherValueText: typeof otherValueText;
  readonly opFirst: Uint8Array;
  readonly opSecond: Uint8Array;
}
const writerParts: WriterParts = {
  buffer: () => shared,
  withRoom,
  writeInt,
  writeSafeInt,
  otherValueText,
  opFirst: OP_FIRST,
  opSecond: OP_SECOND,
};

/** Writers by column list (null: a name beyond ASCII, or a list too large to generate). */
const wireWriters = new ColumnListCache<WireWriter | null>((columns) => {
  wireWritersCompiled.count++;
  return compileWireWriter(columns);
});

/** How many wire writers were generated (a test checks one per column list, not one per epoch). */
export const wireWritersCompiled = { count: 0 };

/**
 * The generated writers' size is bounded: a writer holds about nine statements per column and one
 * per byte of the names, and a view may have 1,664 columns of 128-character names, which would be a
 * function of megabytes, slow to compile on the server's thread and too large for V8 to optimise.
 * Wider lists take the caller's encoder (changelog-codec.ts), which writes the same bytes.
 */
const MAX_GENERATED_WIDTH = 128;
const MAX_GENERATED_NAME_BYTES = 4096;

/** Room for one change's constant bytes besides its names: its op, multiplicity and braces. */
const CHANGE_BYTES = 64;

/**
 * Statements storing `text`'s bytes at `at` and moving `at` past them. Each byte is a constant
 * store in the generated code: the per-change text between two values (`","row":{"bucket":`, about
 * 40 bytes a change of two columns) was copied from arrays byte by byte, a load, a bound and a loop
 * test per byte, and was most of the wire list's time. `text` is ASCII (checked by the caller); only
 * its byte values enter the code.
 */
function constantStores(text: string): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i++) lines.push(`buf[at + ${i}] = ${text.charCodeAt(i)};`);
  lines.push(`at += ${text.length};`);
  return lines.join(' ');
}

/**
 * Generates the writer of one column list: per change its op, then for each column the constant
 * text before the value (stored byte by byte as constants) and the value (integers by their digits;
 * anything else by otherValueText, or null for the caller's path), then the closing braces.
 */
function compileWireWriter(columns: readonly string[]): WireWriter | null {
  const names = columns.map((c, k) => `${k === 0 ? '' : ','}${JSON.stringify(c)}:`);
  // A name beyond ASCII would need UTF-8: the caller's encoder takes that view.
  if (!names.every((t) => Buffer.byteLength(t, 'utf8') === t.length)) return null;
  let nameBytes = 0;
  for (const name of names) nameBytes += name.length;
  const width = columns.length;
  if (width > MAX_GENERATED_WIDTH || nameBytes > MAX_GENERATED_NAME_BYTES) return null;
  const lines: string[] = [
    ...WRITER_HEAD,
    'for (let i = 0; i < changes.length; i++) {',
    '  const code = changes.code(i);',
    '  const kind = code & 3;',
    `  buf = withRoom(buf, at, ${CHANGE_BYTES + nameBytes + width * MAX_SCALAR_BYTES});`,
    `  if (i > 0) buf[at++] = ${COMMA};`,
    `  ${constantStores('{"op":"')}`,
    '  buf[at] = opFirst[kind];',
    '  buf[at + 1] = opSecond[kind];',
    '  at += 2;',
    '  const row = rows[code >> 2];',
  ];
  names.forEach((name, k) => {
    // The op's closing text joins the first name's run; room after a text value for the names and
    // scalars after it.
    lines.push(
      `  ${constantStores(k === 0 ? `","row":{${name}` : name)}`,
      ...valueStores(k, nameBytes + (width - k) * MAX_SCALAR_BYTES + CHANGE_BYTES),
    );
  });
  if (width === 0) lines.push(`  ${constantStores('","row":{')}`);
  lines.push(
    '  const m = changes.count(i);',
    '  if (m === 1) {',
    `    ${constantStores('}}')}`,
    '    continue;',
    '  }',
    '  if (typeof m !== "number" || !Number.isFinite(m)) return null;',
    `  ${constantStores('},"n":')}`,
    '  if ((m | 0) === m) at = writeInt(buf, at, m);',
    '  else {',
    '    const text = String(m);',
    '    buf = withRoom(buf, at, text.length + 1);',
    '    at += buf.write(text, at, "latin1");',
    '  }',
    `  buf[at++] = 0x7d;`,
    '}',
    'return buf.toString("latin1", 0, at);',
  );
  return compileWriter('generatedWireWriter', lines) as WireWriter;
}

/** Stored value list writers by row width (as many as the widths of the views: few, and bounded by a view's columns). */
const storedWriters = new Map<number, StoredWriter>();

/**
 * Generates the stored value list writer of one row width: per change its quoted op, then each
 * value at its constant index (storedValuesOf's loop over the width, unrolled).
 */
function compileStoredWriter(width: number): StoredWriter {
  const lines: string[] = [
    ...WRITER_HEAD,
    'let n = null;',
    'buf[at++] = 0x5b;', // [
    'for (let i = 0; i < changes.length; i++) {',
    '  const code = changes.code(i);',
    '  const kind = code & 3;',
    `  buf = withRoom(buf, at, ${6 + width * MAX_SCALAR_BYTES});`,
    `  if (i > 0) buf[at++] = ${COMMA};`,
    `  buf[at] = ${QUOTE};`,
    '  buf[at + 1] = opFirst[kind];',
    '  buf[at + 2] = opSecond[kind];',
    `  buf[at + 3] = ${QUOTE};`,
    '  at += 4;',
    '  const row = rows[code >> 2];',
  ];
  for (let k = 0; k < width; k++)
    lines.push(`  buf[at++] = ${COMMA};`, ...valueStores(k, (width - k) * MAX_SCALAR_BYTES));
  lines.push(
    '  const m = changes.count(i);',
    '  if (m === 1) continue;',
    '  if (typeof m !== "number" || !Number.isFinite(m)) return null;',
    '  (n ??= []).push(i, m);',
    '}',
    'buf = withRoom(buf, at, 1);',
    'buf[at++] = 0x5d;', // ]
    'return { c: buf.toString("latin1", 0, at), n };',
  );
  return compileWriter('generatedStoredWriter', lines) as StoredWriter;
}

/** The generated writers' first lines: the module's parts, the shared buffer, the rows. */
const WRITER_HEAD: readonly string[] = [
  'const { withRoom, writeInt, writeSafeInt, otherValueText, opFirst, opSecond } = parts;',
  'let buf = parts.buffer();',
  'let at = 0;',
  'const rows = changes.rows;',
];

/**
 * Statements writing value k of `row` at `at`: a 31-bit integer's digits, a safe integer's, or any
 * other value's text from otherValueText (`roomAfter`: the bytes to keep free after that text), or
 * null returned for the caller's path.
 */
function valueStores(k: number, roomAfter: number): string[] {
  return [
    `  const v${k} = row[${k}];`,
    `  if (typeof v${k} === "number" && (v${k} | 0) === v${k}) at = writeInt(buf, at, v${k});`,
    `  else if (Number.isSafeInteger(v${k})) at = writeSafeInt(buf, at, v${k});`,
    '  else {',
    `    const text = otherValueText(v${k});`,
    '    if (text === null) return null;',
    `    buf = withRoom(buf, at, text.length + ${roomAfter});`,
    '    at += buf.write(text, at, "latin1");',
    '  }',
  ];
}

/** A writer from its body (parameters `changes`, `parts`), named so that a profile shows it. */
function compileWriter(name: string, lines: readonly string[]): WireWriter | StoredWriter {
  const source = `return function ${name}(changes, parts) {\n${lines.join('\n')}\n};`;
  return (generatedFunction(source) as () => WireWriter | StoredWriter)();
}
