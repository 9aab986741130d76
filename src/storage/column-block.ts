// A table's base block in binary, column by column (kind 'c' rows of checkpoint-format.ts): numbers
// as raw float64 (a null bitmap beside them when the column holds NULLs), every other column as the
// stored JSON of its values, and the block's keys as their JSON list. A load then reads a million
// numbers with no JSON.parse and no per-row object, and parses keys only when overrides need them.
//
// Layout, little-endian, every section starting on an 8-byte boundary:
//   u32 magic "SCB1" | u32 n (rows) | u32 width (columns) | u32 key bytes
//   width × (u32 encoding, u32 bytes of its section)
//   keys: UTF-8 of the keys' JSON list
//   per column: F64 n × f64 | F64_NULLS bitmap (bit i set: row i is NULL) then n × f64 |
//               JSON UTF-8 of encodeStored(the column's n values)
// The values are exactly what the row's stored JSON decodes to: a column is F64 only when every
// non-NULL value decoded is a JS number (a float64 keeps -0, NaN and ±Infinity as they are).
import { endianness } from 'node:os';
import { ColumnRows, type ColumnBlockRows, type RowColumn } from '../common/column-rows.ts';
import { decodeStored, encodeStored } from '../common/json-codec.ts';

const MAGIC = 0x31424353; // "SCB1" read as a little-endian u32
const F64 = 1;
const F64_NULLS = 2;
const JSON_VALUES = 5;
const HEADER = 16;

/** Column blocks are written only where a float64 array is little-endian (everywhere Node runs today). */
export const COLUMN_BLOCKS = endianness() === 'LE';

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

const pad8 = (n: number): number => (n + 7) & ~7;

/**
 * The block of these entries in binary, or null when they are not rows of one width (the block is
 * then written as JSON). `values` are the entries' decoded values, `keysJson` their keys' JSON list.
 */
export function encodeColumnBlock(keysJson: string, values: readonly unknown[]): Uint8Array | null {
  if (!COLUMN_BLOCKS) return null;
  const n = values.length;
  const first = values[0];
  if (n === 0 || !Array.isArray(first) || first.length === 0) return null;
  const width = first.length;
  for (const v of values) if (!Array.isArray(v) || v.length !== width) return null;
  const rows = values as readonly (readonly unknown[])[];
  const sections: ColumnSection[] = [];
  for (let c = 0; c < width; c++) sections.push(encodeColumn(rows, c));
  return assembleColumnBlock(keysJson, n, sections);
}

/** One column's section of a block: its encoding and bytes (see the layout above). */
export interface ColumnSection {
  readonly enc: number;
  readonly bytes: Uint8Array;
}

/**
 * The block of `n` rows whose keys' JSON list is `keysJson` (or its UTF-8, copied into the block)
 * and whose columns are `sections`.
 */
export function assembleColumnBlock(
  keysJson: string | Uint8Array,
  n: number,
  sections: readonly ColumnSection[],
): Uint8Array {
  const width = sections.length;
  const keys = typeof keysJson === 'string' ? utf8.encode(keysJson) : keysJson;
  let size = pad8(HEADER + width * 8) + pad8(keys.length);
  for (const s of sections) size += pad8(s.bytes.length);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, n, true);
  view.setUint32(8, width, true);
  view.setUint32(12, keys.length, true);
  let at = pad8(HEADER + width * 8);
  out.set(keys, at);
  at += pad8(keys.length);
  sections.forEach((s, c) => {
    view.setUint32(HEADER + c * 8, s.enc, true);
    view.setUint32(HEADER + c * 8 + 4, s.bytes.length, true);
    out.set(s.bytes, at);
    at += pad8(s.bytes.length);
  });
  return out;
}

/** A column of values other than numbers and NULL: the stored JSON of the list. */
export function jsonColumn(list: readonly unknown[]): ColumnSection {
  return { enc: JSON_VALUES, bytes: utf8.encode(encodeStored(list)) };
}

/** A column of numbers; `nulls` (bit i set: row i is NULL) when it holds NULLs, else null. */
export function f64Column(data: Float64Array, nulls: Uint8Array | null): ColumnSection {
  if (nulls === null)
    return { enc: F64, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  const bitmap = pad8(nulls.length);
  const bytes = new Uint8Array(bitmap + data.byteLength);
  bytes.set(nulls);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), bitmap);
  return { enc: F64_NULLS, bytes };
}

function encodeColumn(rows: readonly (readonly unknown[])[], c: number): ColumnSection {
  const n = rows.length;
  let numbers = true;
  let nulls = false;
  for (let i = 0; i < n && numbers; i++) {
    const v = (rows[i] as readonly unknown[])[c];
    if (v === null) nulls = true;
    else if (typeof v !== 'number') numbers = false;
  }
  if (!numbers) return jsonColumn(rows.map((r) => r[c]));
  const bitmap = nulls ? pad8((n + 7) >> 3) : 0;
  const bytes = new Uint8Array(bitmap + n * 8);
  const data = new Float64Array(bytes.buffer, bitmap, n);
  for (let i = 0; i < n; i++) {
    const v = (rows[i] as readonly unknown[])[c];
    if (v === null) bytes[i >> 3] = (bytes[i >> 3] as number) | (1 << (i & 7));
    else data[i] = v as number;
  }
  return { enc: nulls ? F64_NULLS : F64, bytes };
}

/** A decoded block: its rows, and its keys' JSON text (parsed only when overrides apply). */
export interface DecodedColumnBlock extends ColumnBlockRows {
  readonly width: number;
  keysJson(): string;
}

/**
 * Decodes a column block (its hash already checked). Throws an Error naming what is wrong when the
 * bytes do not hold a well-formed block of `n` rows; the caller reports the checkpoint as damaged.
 */
export function decodeColumnBlock(stored: Uint8Array, n: number): DecodedColumnBlock {
  if (!COLUMN_BLOCKS) throw new Error('column blocks cannot be read on a big-endian machine');
  // Typed arrays over the bytes need an 8-byte aligned offset: a copy of one block is cheap.
  const bytes = stored.byteOffset % 8 === 0 ? stored : new Uint8Array(stored);
  if (bytes.length < HEADER) throw new Error('the block is truncated');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  if (view.getUint32(0, true) !== MAGIC) throw new Error('the block has no column block header');
  if (view.getUint32(4, true) !== n) throw new Error(`the block holds ${view.getUint32(4, true)} rows`);
  const width = view.getUint32(8, true);
  const keyBytes = view.getUint32(12, true);
  let at = pad8(HEADER + width * 8);
  if (width === 0 || at > bytes.length) throw new Error('the block has a bad column count');
  const keysAt = at;
  at += pad8(keyBytes);
  const columns: RowColumn[] = [];
  for (let c = 0; c < width; c++) {
    const enc = view.getUint32(HEADER + c * 8, true);
    const len = view.getUint32(HEADER + c * 8 + 4, true);
    if (at + len > bytes.length) throw new Error(`column ${c} runs past the block`);
    columns.push(decodeColumn(bytes, at, len, enc, n, c));
    at += pad8(len);
  }
  if (at !== bytes.length || keysAt + keyBytes > bytes.length) throw new Error('the block has a bad length');
  return {
    n,
    width,
    columns,
    keysJson: () => utf8Decoder.decode(bytes.subarray(keysAt, keysAt + keyBytes)),
  };
}

function decodeColumn(
  bytes: Uint8Array,
  at: number,
  len: number,
  enc: number,
  n: number,
  c: number,
): RowColumn {
  if (enc === F64 || enc === F64_NULLS) {
    const bitmap = enc === F64_NULLS ? pad8((n + 7) >> 3) : 0;
    if (len !== bitmap + n * 8) throw new Error(`column ${c} has ${len} bytes`);
    return {
      kind: 'f64',
      data: new Float64Array(bytes.buffer, bytes.byteOffset + at + bitmap, n),
      nulls: bitmap === 0 ? null : bytes.subarray(at, at + bitmap),
    };
  }
  if (enc === JSON_VALUES) {
    const list = decodeStored(utf8Decoder.decode(bytes.subarray(at, at + len)));
    if (!Array.isArray(list) || list.length !== n) throw new Error(`column ${c} does not hold ${n} values`);
    return { kind: 'values', data: list };
  }
  throw new Error(`column ${c} has an unknown encoding ${enc}`);
}

/** A state's column blocks as the rows a load hands over. */
export function columnRows(blocks: readonly DecodedColumnBlock[]): ColumnRows {
  return new ColumnRows(blocks, blocks[0]?.width ?? 0);
}
