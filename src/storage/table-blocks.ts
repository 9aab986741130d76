// A replaced table state's rows gathered into column blocks (column-block.ts) straight from the live
// rows, by whichever thread reads the checkpoint: no stored JSON per row (which the writer then had
// to decode again to build the block), no per-row strings to hand to the writer thread — a block's
// bytes are one buffer, transferred. Both writers (the main thread's store and the off-thread
// writer) split blocks here, by the same rule, so a file is the same whichever wrote it.
//
// A block ends at BLOCK_ENTRIES rows or once its values' estimated size reaches BLOCK_CHARS (the
// estimate: 8 a number, a string's length, an object's stored JSON), which bounds one SQLite row as
// the JSON blocks' text length does. A value that is not a row of the part's width (never the case
// for a table's rows, whose width is the table's) ends column blocks for the rest of the part: its
// caller writes the remaining entries one by one, as other states' entries are.
import { encodeStored } from '../common/json-codec.ts';
import type { Value } from '../common/types.ts';
import { encodeOne } from '../common/value-key.ts';
import { writeSafeInt } from './ascii-json.ts';
import { BLOCK_CHARS, BLOCK_ENTRIES } from './checkpoint-format.ts';
import {
  COLUMN_BLOCKS,
  assembleColumnBlock,
  f64Column,
  jsonColumn,
  type ColumnSection,
} from './column-block.ts';

/** The state ids of tables' rows (TableStore's `table:<name>`): their base blocks go column-wise. */
export const TABLE_STATE = 'table:';

/** One column block of a table's base: its bytes (a buffer of its own) and its number of rows. */
export interface TableBlock {
  readonly bytes: Uint8Array;
  readonly n: number;
}

export class TableBlocks {
  /**
   * The block's keys' JSON list as UTF-8, written as keys arrive (`[`, then `"key"` and `,`…; `]` at
   * the end): the bytes JSON.stringify of the list would give, with no list of key strings kept, no
   * JSON text and no separate encoding of it per block.
   */
  private keyBytes = new Uint8Array(KEY_BYTES);
  private keyEnd = 0;
  private n = 0;
  private size = 0;
  private width = -1;
  /** Per column, while it holds numbers and NULLs only: the numbers (0 for a NULL) of the block… */
  private numbers: Float64Array[] = [];
  /** … and its NULL bitmap (bit i set: row i is NULL), or null while it has none. */
  private nulls: (Uint8Array | null)[] = [];
  /** Per column: its values, once one was neither a number nor NULL (then it is stored as JSON). */
  private values: (unknown[] | null)[] = [];

  /** Column blocks for this part, or null: it is not a table's state written whole. */
  static of(stateId: string, replaceAll: boolean): TableBlocks | null {
    return replaceAll && COLUMN_BLOCKS && stateId.startsWith(TABLE_STATE) ? new TableBlocks() : null;
  }

  /**
   * Adds one entry; false (nothing added) when its value is not a row of the part's width: the
   * caller then writes the pending block (`finish`) and this entry and the rest as single entries.
   */
  add(key: string, value: unknown): boolean {
    const row = this.accept(value);
    if (row === null) return false;
    const i = this.n++;
    this.addKey(key, i === 0);
    this.addColumns(row, i);
    return true;
  }

  /**
   * As `add`, for a key given as the value whose key text value-key.ts's `encodeOne` makes: a safe
   * integer's text (`n<digits>;`) is written straight into the keys' bytes, with no string made (a
   * keyed table's serial ids); any other key is encoded and added as `add` does.
   */
  addValueKey(key: Value, value: unknown): boolean {
    const row = this.accept(value);
    if (row === null) return false;
    const i = this.n++;
    if (typeof key === 'number' && Number.isSafeInteger(key)) this.addIntegerKey(key, i === 0);
    else this.addKey(encodeOne(key), i === 0);
    this.addColumns(row, i);
    return true;
  }

  /** The value as a row of the part's width (the first row sets it), or null: it is not one. */
  private accept(value: unknown): readonly unknown[] | null {
    if (!Array.isArray(value)) return null;
    const row = value as readonly unknown[];
    const width = row.length;
    if (width !== this.width) {
      if (this.width !== -1 || width === 0) return null;
      this.start(width);
    }
    if (this.n === BLOCK_ENTRIES) throw new Error('a table block is full: ready() takes it first');
    return row;
  }

  /** Row `i`'s values into the columns, one pass over the row (column-block.ts's layout). */
  private addColumns(row: readonly unknown[], i: number): void {
    const width = row.length;
    let size = 1;
    for (let c = 0; c < width; c++) {
      const v = row[c];
      const values = this.values[c] as unknown[] | null;
      if (values !== null) {
        values.push(v);
        size += estimate(v);
      } else if (typeof v === 'number') {
        (this.numbers[c] as Float64Array)[i] = v;
        size += 8;
      } else if (v === null) {
        (this.numbers[c] as Float64Array)[i] = 0;
        const bits = (this.nulls[c] ??= new Uint8Array(BITMAP_BYTES));
        bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7));
        size += 4;
      } else {
        this.values[c] = this.toValues(c, i);
        (this.values[c] as unknown[]).push(v);
        size += estimate(v);
      }
    }
    this.size += size;
  }

  /** The block once it is full (then a new one starts), else null. */
  ready(): TableBlock | null {
    return this.n >= BLOCK_ENTRIES || this.size >= BLOCK_CHARS ? this.finish() : null;
  }

  /** The pending block (at the part's end), or null when none is pending. */
  finish(): TableBlock | null {
    const n = this.n;
    if (n === 0) return null;
    const sections: ColumnSection[] = [];
    for (let c = 0; c < this.width; c++) {
      const values = this.values[c] as unknown[] | null;
      const nulls = this.nulls[c] as Uint8Array | null;
      sections.push(
        values !== null
          ? jsonColumn(values)
          : f64Column(
              (this.numbers[c] as Float64Array).subarray(0, n),
              nulls?.subarray(0, (n + 7) >> 3) ?? null,
            ),
      );
      // The next block starts with no NULLs and no JSON column (the numbers are overwritten).
      this.nulls[c] = null;
      this.values[c] = null;
    }
    this.keyBytes[this.keyEnd++] = 0x5d; // ]
    const bytes = assembleColumnBlock(this.keyBytes.subarray(0, this.keyEnd), n, sections);
    this.keyEnd = 0;
    this.n = 0;
    this.size = 0;
    return { bytes, n };
  }

  /** Appends `"key"` to the keys' JSON list (after `[` for the first, else `,`). */
  private addKey(key: string, first: boolean): void {
    const len = key.length;
    // Room for the escaped JSON text's UTF-8 at worst (6 bytes a character as \uXXXX), `,` and `]`.
    if (this.keyEnd + 6 * len + 4 > this.keyBytes.length) this.growKeys(6 * len + 4);
    const out = this.keyBytes;
    let at = this.keyEnd;
    out[at++] = first ? 0x5b : 0x2c; // [ or ,
    const open = at;
    out[at++] = 0x22; // "
    // Printable ASCII but a quote or backslash is its own JSON text (a stored key's usual case).
    for (let j = 0; j < len; j++) {
      const code = key.charCodeAt(j);
      if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) {
        at = open + utf8.encodeInto(JSON.stringify(key), out.subarray(open)).written;
        this.keyEnd = at;
        return;
      }
      out[at++] = code;
    }
    out[at++] = 0x22;
    this.keyEnd = at;
  }

  /** Appends `"n<digits>;"` (encodeOne's text of the safe integer `v`, -0 as 0) to the keys' list. */
  private addIntegerKey(v: number, first: boolean): void {
    // `,` `"n` `-`, 16 digits at most, `;"` and room for `]`.
    if (this.keyEnd + 24 > this.keyBytes.length) this.growKeys(24);
    const out = this.keyBytes;
    let at = this.keyEnd;
    out[at++] = first ? 0x5b : 0x2c; // [ or ,
    out[at++] = 0x22; // "
    out[at++] = 0x6e; // n
    at = writeSafeInt(out, at, v);
    out[at++] = 0x3b; // ;
    out[at++] = 0x22; // "
    this.keyEnd = at;
  }

  private growKeys(need: number): void {
    const grown = new Uint8Array(Math.max(2 * this.keyBytes.length, this.keyEnd + need));
    grown.set(this.keyBytes.subarray(0, this.keyEnd));
    this.keyBytes = grown;
  }

  private start(width: number): void {
    this.width = width;
    for (let c = 0; c < width; c++) {
      this.numbers.push(new Float64Array(BLOCK_ENTRIES));
      this.nulls.push(null);
      this.values.push(null);
    }
  }

  /** Column c's first `i` values as a list (its numbers and NULLs so far): it turns to JSON. */
  private toValues(c: number, i: number): unknown[] {
    const numbers = this.numbers[c] as Float64Array;
    const nulls = this.nulls[c] as Uint8Array | null;
    const list = new Array<unknown>(i);
    for (let j = 0; j < i; j++) {
      list[j] = nulls !== null && ((nulls[j >> 3] as number) & (1 << (j & 7))) !== 0 ? null : numbers[j];
    }
    return list;
  }
}

/** The keys' JSON buffer to start with (a block of 2,048 serial ids' keys takes about 24 KB). */
const KEY_BYTES = 64 * 1024;

const utf8 = new TextEncoder();

/** Bytes of a NULL bitmap of a full block. */
const BITMAP_BYTES = (BLOCK_ENTRIES + 7) >> 3;

/** About the stored size of one value: the bound it serves is loose, its cost must be small. */
function estimate(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return 8;
    case 'string':
      return v.length + 3;
    case 'object':
      return v === null ? 4 : encodeStored(v).length + 1;
    default:
      return 8;
  }
}
