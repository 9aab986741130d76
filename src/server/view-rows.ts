// GET /v1/views/{name}/rows and GET /v1/tables/{name}/rows: one page of a view's or table's rows,
// read from its ordered index (src/ivm/ordered-index.ts) in one synchronous block, so a page is
// consistent at one epoch and nothing is copied or sorted per request. Pages continue by key cursor
// (`after`, returned as `next`); `offset` seeks by position. Filters are PostgREST-style
// (`col=value` or `col=eq.value`, `neq.`, `gt.`, `gte.`, `lt.`, `lte.`, `in.(a,b)`, `is.null`,
// `not.null`; several on one column are ANDed), typed by the column. Equality filters on a prefix of
// the order columns seek straight to their range; other filters are tested row by row, at most
// `scanRows` rows per request, and a page that ran out of that budget ends early with a `next`
// cursor (possibly holding no rows), so no request scans the whole view. An `order` other than the
// index's reads the whole filtered range on every page and sorts its matches: it is refused
// (SCAN_TOO_LARGE) when that range holds more than `scanRows` rows.
import { SluiceError } from '../common/errors.ts';
import type { ViewReader } from '../exec/api.ts';
import { columnOverheads, rowJsonBytes } from '../exec/result-size.ts';
import { orderValues, type IndexCursor, type IndexView } from '../ivm/ordered-index.ts';
import type { Row, Value } from '../common/types.ts';
import { parseDate, parseTimestamp } from '../common/cast.ts';
import { compareValues } from '../common/values.ts';
import { Decimal, compareDecimals, parseDecimal } from '../common/decimal.ts';
import { Interval, compareIntervals, parseInterval } from '../common/time/interval.ts';
import { Jsonb, parseJsonb } from '../common/json/jsonb.ts';
import { SqlArray, parseArrayText } from '../common/array/sql-array.ts';
import { decodeStored, encodeStored } from '../common/json-codec.ts';
import { parseBytea, parseUuid } from '../common/uuid-bytea.ts';
import { parseTime, parseTimestamptz } from '../common/time/datetime.ts';

export interface ReadLimits {
  /** Rows in a page when the request names no `limit`. */
  readonly defaultRows: number;
  /** The largest `limit` a request may ask for. */
  readonly maxRows: number;
  /** A page ends once its rows' JSON would pass this many bytes (it always holds at least one row). */
  readonly maxBytes: number;
  /** Rows a filtered read examines at most per request (and the largest range `total` is counted over). */
  readonly scanRows: number;
}

export interface PageRequest {
  /** Column → filter text (or several, ANDed). */
  readonly filters: Readonly<Record<string, string | readonly string[]>>;
  /** `col[.asc|.desc][,col2...]`; absent: the index's order (the key, else all columns). */
  readonly order?: string | undefined;
  readonly limit: number | undefined;
  readonly offset: number | undefined;
  readonly after: string | undefined;
}

export interface Page {
  /** Rows matching the filters; null when counting them would scan more than `scanRows` rows. */
  readonly total: number | null;
  readonly rows: readonly Row[];
  /** Cursor of the next page, or null after the last one. */
  readonly next: string | null;
  /** Index rows this read examined (the page and its count), for metrics and tests. */
  readonly examined: number;
}

interface Matcher {
  readonly column: number;
  readonly test: (v: Value) => boolean;
  /** An equality's value, in its column's representation (what a range seek goes to); else undefined. */
  readonly value?: Value;
}

/** What a relation is called in messages: `view "v"`, `table "t"`. */
export type RelationKind = 'view' | 'table';

interface Literal {
  readonly value: Value;
  readonly equals: (v: Value) => boolean;
}

/** A filter literal typed by its column; INVALID_VALUE when it is not a value of that type. */
function literalFor(where: string, column: string, type: string, text: string): Literal {
  const bad = (expected: string): SluiceError =>
    new SluiceError(
      'INVALID_VALUE',
      `invalid filter value "${text}" for column "${column}" of ${where}: expected ${expected}`,
      { hint: 'to match a value that looks like an operator (gt.1, in.(…)), write it as eq.<value>' },
    );
  const t = type.toLowerCase();
  if (t.endsWith('[]')) {
    // an array in PostgreSQL's text form ({1,2,NULL}), each element read as its column's element type
    let items: (string | null)[];
    try {
      items = parseArrayText(text);
    } catch {
      throw bad(`an array such as {1,2,NULL} of ${t.slice(0, -2)} values`);
    }
    const array = new SqlArray(
      items.map((x) => (x === null ? null : literalFor(where, column, t.slice(0, -2), x).value)),
    );
    return { value: array, equals: (v) => v instanceof SqlArray && v.key() === array.key() };
  }
  if (t === 'smallint' || t === 'integer' || t === 'bigint') {
    if (!/^\s*[+-]?\d+\s*$/.test(text)) throw bad('an integer');
    const big = BigInt(text.trim());
    const n = Number(big);
    const want: number | bigint = Number.isSafeInteger(n) ? n : big;
    return { value: want, equals: (v) => v === want || (typeof v === 'bigint' && v === big) };
  }
  if (t.startsWith('numeric') || t.startsWith('decimal')) {
    // Exact: 1.5 matches 1.50; the column's type decides, so '0.3' is never compared as a double.
    const d = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,6})?\s*$/.test(text) ? parseDecimal(text) : null;
    if (d === null) throw bad('a number');
    return { value: d, equals: (v) => v instanceof Decimal && compareDecimals(v, d) === 0 };
  }
  if (t === 'real' || t === 'double precision') {
    const n = /^\s*[+-]?nan\s*$/i.test(text) ? NaN : Number(text);
    if (text.trim() === '' || (Number.isNaN(n) && !/nan/i.test(text))) throw bad('a number');
    return {
      value: n,
      equals: Number.isNaN(n)
        ? (v) => typeof v === 'number' && Number.isNaN(v)
        : (v) => v === n || (typeof v === 'bigint' && Number(v) === n),
    };
  }
  if (t === 'boolean') {
    const s = text.trim().toLowerCase();
    if (s === 'true' || s === 't') return { value: true, equals: (v) => v === true };
    if (s === 'false' || s === 'f') return { value: false, equals: (v) => v === false };
    throw bad('true or false');
  }
  if (t === 'interval') {
    const iv = parseInterval(text);
    if (iv === null) throw bad("an interval (such as '1 day 02:00:00')");
    return { value: iv, equals: (v) => v instanceof Interval && compareIntervals(v, iv) === 0 };
  }
  if (t === 'jsonb') {
    let j: Jsonb;
    try {
      j = parseJsonb(text);
    } catch {
      throw bad('a JSON value');
    }
    return { value: j, equals: (v) => v instanceof Jsonb && v.key() === j.key() };
  }
  if (t === 'uuid' || t === 'bytea') {
    // any input form, matched by its canonical text (the stored value)
    const canonical = canonicalBinary(t, text);
    if (canonical === null) throw bad(t === 'uuid' ? 'a uuid' : "a bytea (such as '\\x0102ff')");
    return { value: canonical, equals: (v) => v === canonical };
  }
  if (t === 'time' || t === 'timestamp with time zone') {
    const canonical = t === 'time' ? parseTime(text) : parseTimestamptz(text);
    if (canonical === null) throw bad(t === 'time' ? 'a time (HH:MM:SS)' : 'a timestamp with time zone');
    return { value: canonical, equals: (v) => v === canonical };
  }
  if (t === 'date' || t.startsWith('timestamp')) {
    const canonical = t === 'date' ? parseDate(text) : parseTimestamp(text);
    if (canonical === null)
      throw bad(t === 'date' ? 'a date (YYYY-MM-DD)' : 'a timestamp (YYYY-MM-DD HH:MM:SS)');
    return { value: canonical, equals: (v) => v === canonical };
  }
  return { value: text, equals: (v) => v === text };
}

const OPERATOR = /^(eq|neq|gt|gte|lt|lte|in|is|not)\.(.*)$/s;

/** The items of an `in.(a,b,"c,d")` list: commas separate, double quotes hold commas (\" is a quote). */
function inItems(text: string, fail: () => SluiceError): string[] {
  if (!text.startsWith('(') || !text.endsWith(')')) throw fail();
  const body = text.slice(1, -1);
  if (body.trim() === '') return [];
  const items: string[] = [];
  let i = 0;
  for (;;) {
    let item = '';
    if (body[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= body.length) throw fail();
        const ch = body[i] as string;
        if (ch === '\\' && i + 1 < body.length) {
          item += body[i + 1];
          i += 2;
        } else if (ch === '"') {
          i += 1;
          break;
        } else {
          item += ch;
          i += 1;
        }
      }
      if (i < body.length && body[i] !== ',') throw fail();
    } else {
      const comma = body.indexOf(',', i);
      item = body.slice(i, comma === -1 ? body.length : comma);
      i = comma === -1 ? body.length : comma;
    }
    items.push(item);
    if (i >= body.length) return items;
    i += 1; // the comma
  }
}

/** One filter on one column: plain text is equality; `op.literal` the operator's test (SQL: NULL never compares). */
function matcherFor(where: string, column: string, position: number, type: string, text: string): Matcher {
  const m = OPERATOR.exec(text);
  if (m === null) {
    const lit = literalFor(where, column, type, text);
    return { column: position, value: lit.value, test: lit.equals };
  }
  const op = m[1] as string;
  const operand = m[2] as string;
  const fail = (expected: string): SluiceError =>
    new SluiceError(
      'INVALID_REQUEST',
      `invalid filter "${text}" on column "${column}" of ${where}: ${expected}`,
      {
        hint: 'filters are value, eq.v, neq.v, gt.v, gte.v, lt.v, lte.v, in.(v1,v2), is.null, not.null; eq.<value> matches a value that looks like an operator',
      },
    );
  switch (op) {
    case 'eq': {
      const lit = literalFor(where, column, type, operand);
      return { column: position, value: lit.value, test: lit.equals };
    }
    case 'neq': {
      const lit = literalFor(where, column, type, operand);
      return { column: position, test: (v) => v !== null && !lit.equals(v) };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const lit = literalFor(where, column, type, operand).value;
      const ok =
        op === 'gt'
          ? (c: number) => c > 0
          : op === 'gte'
            ? (c: number) => c >= 0
            : op === 'lt'
              ? (c: number) => c < 0
              : (c: number) => c <= 0;
      return { column: position, test: (v) => v !== null && ok(compareValues(v, lit)) };
    }
    case 'in': {
      const items = inItems(operand, () => fail('expected in.(value, ...)'));
      const lits = items.map((item) => literalFor(where, column, type, item));
      return { column: position, test: (v) => v !== null && lits.some((l) => l.equals(v)) };
    }
    default: {
      // is.null / not.null
      if (operand.toLowerCase() !== 'null') throw fail(`expected ${op}.null`);
      return { column: position, test: op === 'is' ? (v) => v === null : (v) => v !== null };
    }
  }
}

interface OrderTerm {
  readonly column: number;
  readonly desc: boolean;
}

/** `a.asc,b.desc` → order terms; an unknown column or a bad direction is an error. */
function parseOrder(where: string, text: string, reader: ViewReader): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const part of text.split(',')) {
    const item = part.trim();
    let name = item;
    let desc = false;
    const dot = item.lastIndexOf('.');
    if (dot > 0) {
      const dir = item.slice(dot + 1).toLowerCase();
      if (dir === 'asc' || dir === 'desc') {
        name = item.slice(0, dot);
        desc = dir === 'desc';
      }
    }
    const column = reader.columns.findIndex((c) => c.name === name);
    if (name === '' || column < 0) {
      throw new SluiceError(
        'UNKNOWN_COLUMN',
        `cannot order by "${item}": column "${name}" does not exist in ${where}`,
        {
          hint: `order=column[.asc|.desc][,column...]; the columns are ${reader.columns.map((c) => `"${c.name}"`).join(', ')}`,
        },
      );
    }
    terms.push({ column, desc });
  }
  return terms;
}

/** Whether a request's `order` is another than the index's (so its page is a sorted read). */
export function sortsRows(reader: ViewReader, order: string | undefined, where: string): boolean {
  return order !== undefined && !isIndexOrder(parseOrder(where, order, reader), reader.order);
}

/** Whether the terms are the index's own order (its leading columns, ascending). */
function isIndexOrder(terms: readonly OrderTerm[], order: readonly number[]): boolean {
  for (let i = 0; i < terms.length && i < order.length; i++) {
    const t = terms[i] as OrderTerm;
    if (t.column !== order[i] || t.desc) return false;
  }
  return true;
}

// ---- cursors: the order-column values of the last row a page passed, and copies of it passed ----

interface CursorState {
  readonly key: readonly Value[];
  /** For a page in another order than the index's: the order terms' values of the row. */
  readonly sort?: readonly Value[];
  readonly dup: number;
  /** Matching rows still to skip (an `offset` a page could not finish within its scan budget). */
  readonly skip: number;
}

type CursorValue =
  | null
  | boolean
  | number
  | string
  | { b: string }
  | { f: string }
  | { d: string }
  | { v: string }
  | { j: string }
  | { a: string };

function cursorValue(v: Value): CursorValue {
  if (typeof v === 'bigint') return { b: v.toString() };
  if (v instanceof Decimal) return { d: v.toString() };
  if (v instanceof Interval) return { v: v.storageText() };
  if (v instanceof Jsonb) return { j: v.text };
  if (v instanceof SqlArray) return { a: encodeStored(v) };
  if (typeof v === 'number' && !Number.isFinite(v)) return { f: String(v) };
  return v;
}

function encodeCursor(state: CursorState): string {
  const body: Record<string, unknown> = { k: state.key.map(cursorValue), d: state.dup };
  if (state.sort !== undefined) body.o = state.sort.map(cursorValue);
  if (state.skip > 0) body.s = state.skip;
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function decodeCursor(text: string, width: number, sortWidth: number | null = null): CursorState {
  const bad = (): SluiceError =>
    new SluiceError('INVALID_REQUEST', 'invalid request: "after" is not a cursor of this view', {
      hint: 'pass the "next" value of the previous page unchanged',
    });
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (typeof body !== 'object' || body === null) throw bad();
  const { k, d, s, o } = body as { k?: unknown; d?: unknown; s?: unknown; o?: unknown };
  if (!Array.isArray(k) || k.length !== width) throw bad();
  if (sortWidth === null ? o !== undefined : !Array.isArray(o) || o.length !== sortWidth) throw bad();
  if (!Number.isSafeInteger(d) || (d as number) < 0) throw bad();
  if (s !== undefined && (!Number.isSafeInteger(s) || (s as number) < 0)) throw bad();
  const value = (v: unknown): Value => {
    if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
    if (typeof v === 'object' && typeof (v as { b?: unknown }).b === 'string') {
      const b = (v as { b: string }).b;
      if (!/^-?\d+$/.test(b)) throw bad();
      return BigInt(b);
    }
    if (typeof v === 'object' && typeof (v as { f?: unknown }).f === 'string') {
      const f = Number((v as { f: string }).f);
      if (Number.isFinite(f)) throw bad();
      return f;
    }
    if (typeof v === 'object' && typeof (v as { d?: unknown }).d === 'string') {
      let dec: Decimal | null = null;
      try {
        dec = parseDecimal((v as { d: string }).d);
      } catch {
        throw bad();
      }
      if (dec === null) throw bad();
      return dec;
    }
    if (typeof v === 'object' && typeof (v as { v?: unknown }).v === 'string') {
      let iv: Interval | null = null;
      try {
        iv = Interval.fromStorage((v as { v: string }).v);
      } catch {
        throw bad();
      }
      if (iv === null) throw bad();
      return iv;
    }
    if (typeof v === 'object' && typeof (v as { a?: unknown }).a === 'string') {
      let array: unknown;
      try {
        array = decodeStored((v as { a: string }).a);
      } catch {
        throw bad();
      }
      if (!(array instanceof SqlArray)) throw bad();
      return array;
    }
    if (typeof v === 'object' && typeof (v as { j?: unknown }).j === 'string') {
      try {
        return parseJsonb((v as { j: string }).j);
      } catch {
        throw bad();
      }
    }
    throw bad();
  };
  return {
    key: k.map(value),
    ...(Array.isArray(o) ? { sort: o.map(value) } : {}),
    dup: d as number,
    skip: (s as number | undefined) ?? 0,
  };
}

// ---- the page ----------------------------------------------------------------------------------

export async function readPage(
  view: string,
  reader: ViewReader,
  request: PageRequest,
  limits: ReadLimits,
  kind: RelationKind = 'view',
  /** Lets the event loop turn during a sorted read; only when `reader.index` is a frozen snapshot. */
  pause?: () => Promise<void>,
): Promise<Page> {
  const index = reader.index as IndexView;
  const where = `${kind} "${view}"`;
  const limit = request.limit ?? limits.defaultRows;
  if (limit > limits.maxRows) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: limit ${limit} is more than the largest page of ${limits.maxRows} rows`,
      { hint: 'read further pages with after=<next>' },
    );
  }
  if (request.after !== undefined && request.offset !== undefined && request.offset > 0) {
    throw new SluiceError('INVALID_REQUEST', 'invalid request: "after" and "offset" exclude each other', {
      hint: 'a cursor already says where the page starts',
    });
  }
  const matchers: Matcher[] = [];
  for (const [column, texts] of Object.entries(request.filters)) {
    const position = reader.columns.findIndex((c) => c.name === column);
    const info = reader.columns[position];
    if (info === undefined) {
      throw new SluiceError('UNKNOWN_COLUMN', `column "${column}" does not exist in ${where}`, {
        hint: `the columns are ${reader.columns.map((c) => `"${c.name}"`).join(', ')}`,
      });
    }
    for (const text of typeof texts === 'string' ? [texts] : texts)
      matchers.push(matcherFor(where, column, position, info.type, text));
  }
  const terms = request.order === undefined ? null : parseOrder(where, request.order, reader);
  // Equality filters on the leading order columns select one contiguous range of the index.
  const prefix: Value[] = [];
  const seeking: Matcher[] = [];
  for (const col of reader.order) {
    const m = matchers.find((x) => x.column === col && x.value !== undefined);
    if (m === undefined) break;
    prefix.push(m.value as Value);
    seeking.push(m);
  }
  const rest = matchers.filter((m) => !seeking.includes(m));
  if (terms !== null && !isIndexOrder(terms, reader.order)) {
    return readSortedPage(where, reader, request, limits, limit, terms, prefix, rest, pause);
  }
  const inRange = (row: readonly Value[]): boolean =>
    prefix.length === 0 || rangeCompare(index, row, prefix) === 0;
  const matches = (row: readonly Value[]): boolean => rest.every((m) => m.test(row[m.column] ?? null));

  let cursor: IndexCursor;
  let skip = request.offset ?? 0;
  if (request.after !== undefined) {
    const state = decodeCursor(request.after, reader.order.length);
    cursor = index.cursorAfter(state.key, state.dup);
    skip = state.skip;
    if (prefix.length > 0 && !cursor.done && rangeCompare(index, cursor.row, prefix) < 0) {
      cursor = index.seek(prefix);
    }
  } else if (rest.length === 0) {
    // No filter beyond the range: the offset is a position, found by walking chunk sizes.
    cursor = index.cursorAt((prefix.length > 0 ? index.seek(prefix).offset() : 0) + skip);
    skip = 0;
  } else cursor = prefix.length > 0 ? index.seek(prefix) : index.cursorAt(0);

  const overheads = columnOverheads(reader.columns.map((c) => c.name));
  const rows: Row[] = [];
  let bytes = 0;
  let examined = 0;
  let next: string | null = null;
  let ended = true;
  while (!cursor.done) {
    const row = cursor.row;
    if (!inRange(row)) break;
    if ((rest.length > 0 || skip > 0) && examined >= limits.scanRows) {
      // Out of budget: the next request resumes at this row (none of its copies passed yet).
      next = encodeCursor({ key: orderValues(row, reader.order), dup: cursor.dup, skip });
      ended = false;
      break;
    }
    examined += 1;
    if (rest.length === 0 || matches(row)) {
      let available = cursor.count - cursor.dup;
      if (skip > 0) {
        const passed = Math.min(skip, available);
        skip -= passed;
        cursor.dup += passed;
        available -= passed;
      }
      if (available > 0) {
        const size = rowJsonBytes(row, overheads);
        let full = false;
        while (available > 0) {
          if (rows.length >= limit || (rows.length > 0 && bytes + size > limits.maxBytes)) {
            full = true;
            break;
          }
          rows.push(reader.toRow(row));
          bytes += size;
          cursor.dup += 1;
          available -= 1;
        }
        if (full || rows.length >= limit) {
          const state = { key: orderValues(row, reader.order), dup: cursor.dup, skip: 0 };
          if (available === 0) cursor.nextRow();
          if (!cursor.done && inRange(cursor.row)) {
            next = encodeCursor(state);
            ended = false;
          }
          break;
        }
      }
    }
    cursor.nextRow();
  }
  if (ended) next = null;
  const count = countMatches(index, prefix, rest.length > 0 ? matches : null, limits.scanRows);
  return { total: count.total, rows, next, examined: examined + count.examined };
}

/** Compares a row's leading order columns with a filter prefix (the index's own comparison). */
function rangeCompare(index: IndexView, row: readonly Value[], prefix: readonly Value[]): number {
  return index.compareTo(row, prefix);
}

/**
 * The rows matching the filters: the index's size, a range count for filters on leading order
 * columns, or a count over the range when it holds at most `scanRows` rows (else null).
 */
function countMatches(
  index: IndexView,
  prefix: readonly Value[],
  matches: ((row: readonly Value[]) => boolean) | null,
  scanRows: number,
): { total: number | null; examined: number } {
  const range = prefix.length === 0 ? index.size : index.countPrefix(prefix);
  if (matches === null) return { total: range, examined: 0 };
  // Counting would examine more rows than a request may: do not start.
  if (range > scanRows) return { total: null, examined: 0 };
  const cursor = prefix.length === 0 ? index.cursorAt(0) : index.seek(prefix);
  let n = 0;
  let examined = 0;
  for (; !cursor.done; cursor.nextRow()) {
    const row = cursor.row;
    if (prefix.length > 0 && index.compareTo(row, prefix) !== 0) break;
    if (examined >= scanRows) return { total: null, examined };
    examined += 1;
    if (matches(row)) n += cursor.count;
  }
  return { total: n, examined };
}

// ---- pages in another order than the index's ------------------------------------------------------

interface Candidate {
  readonly row: readonly Value[];
  readonly count: number;
  /** Copies of the row already behind the request's cursor. */
  readonly start: number;
}

/** How long a sorted read works before it lets the event loop turn (when it may). */
const SORT_SLICE_MS = 8;

/** A max-heap keeping the `capacity` smallest items under `compare`. */
class SmallestK<T> {
  readonly items: T[] = [];
  constructor(
    private readonly capacity: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    const h = this.items;
    if (this.capacity <= 0) return;
    if (h.length < this.capacity) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.compare(h[parent] as T, h[i] as T) >= 0) break;
        [h[parent], h[i]] = [h[i] as T, h[parent] as T];
        i = parent;
      }
      return;
    }
    if (this.compare(item, h[0] as T) >= 0) return;
    h[0] = item;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && this.compare(h[l] as T, h[top] as T) > 0) top = l;
      if (r < h.length && this.compare(h[r] as T, h[top] as T) > 0) top = r;
      if (top === i) break;
      [h[top], h[i]] = [h[i] as T, h[top] as T];
      i = top;
    }
  }
}

/**
 * A page in the order of `terms` (ties broken by the index's order, so the order is total): every row
 * of the filtered range is examined — so the range may hold at most `scanRows` rows (SCAN_TOO_LARGE
 * otherwise) — keeping only the first `offset + limit + 1` matches after the cursor. With `pause`,
 * the index must be a frozen snapshot: the scan lets the event loop turn every few milliseconds.
 * The cursor records the terms' values and the index key of the last row passed.
 */
async function readSortedPage(
  where: string,
  reader: ViewReader,
  request: PageRequest,
  limits: ReadLimits,
  limit: number,
  terms: readonly OrderTerm[],
  prefix: readonly Value[],
  rest: readonly Matcher[],
  pause: (() => Promise<void>) | undefined,
): Promise<Page> {
  const index = reader.index as IndexView;
  const range = prefix.length === 0 ? index.size : index.countPrefix(prefix);
  if (range > limits.scanRows) {
    throw new SluiceError(
      'SCAN_TOO_LARGE',
      `cannot order ${where} by "${request.order ?? ''}": the ${range} rows to sort are more than the ${limits.scanRows} a read may examine`,
      {
        hint: 'order by the key (the default), or add equality filters on the leading key columns to narrow the range (--max-scan-rows)',
      },
    );
  }
  const order = reader.order;
  const compareTerms = (a: readonly Value[], b: readonly Value[]): number => {
    for (const t of terms) {
      const c = compareValues(a[t.column] as Value, b[t.column] as Value);
      if (c !== 0) return t.desc ? -c : c;
    }
    for (const col of order) {
      const c = compareValues(a[col] as Value, b[col] as Value);
      if (c !== 0) return c;
    }
    return 0;
  };
  const state = request.after === undefined ? null : decodeCursor(request.after, order.length, terms.length);
  const sortOf = (row: readonly Value[]): Value[] => terms.map((t) => row[t.column] as Value);
  const versusCursor = (row: readonly Value[]): number => {
    const s = state as CursorState;
    const sort = s.sort as readonly Value[];
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i] as OrderTerm;
      const c = compareValues(row[t.column] as Value, sort[i] as Value);
      if (c !== 0) return t.desc ? -c : c;
    }
    for (let i = 0; i < order.length; i++) {
      const c = compareValues(row[order[i] as number] as Value, s.key[i] as Value);
      if (c !== 0) return c;
    }
    return 0;
  };

  let skip = request.offset ?? 0;
  const kept = new SmallestK<Candidate>(skip + limit + 1, (a, b) => compareTerms(a.row, b.row));
  let examined = 0;
  let total = 0;
  let deadline = performance.now() + SORT_SLICE_MS;
  const cursor = prefix.length > 0 ? index.seek(prefix) : index.cursorAt(0);
  for (; !cursor.done; cursor.nextRow()) {
    if (pause !== undefined && (examined & 1023) === 1023 && performance.now() >= deadline) {
      await pause();
      deadline = performance.now() + SORT_SLICE_MS;
    }
    const row = cursor.row;
    if (prefix.length > 0 && index.compareTo(row, prefix) !== 0) break;
    examined += 1;
    if (!rest.every((m) => m.test(row[m.column] ?? null))) continue;
    total += cursor.count;
    let start = 0;
    if (state !== null) {
      const c = versusCursor(row);
      if (c < 0) continue;
      if (c === 0) start = state.dup;
    }
    if (start < cursor.count) kept.offer({ row, count: cursor.count, start });
  }
  const candidates = kept.items.sort((a, b) => compareTerms(a.row, b.row));

  const overheads = columnOverheads(reader.columns.map((c) => c.name));
  const rows: Row[] = [];
  let bytes = 0;
  let next: string | null = null;
  outer: for (const c of candidates) {
    let dup = c.start;
    if (skip > 0) {
      const passed = Math.min(skip, c.count - dup);
      skip -= passed;
      dup += passed;
    }
    const size = rowJsonBytes(c.row, overheads);
    while (dup < c.count) {
      if (rows.length >= limit || (rows.length > 0 && bytes + size > limits.maxBytes)) {
        next = encodeCursor({ key: orderValues(c.row, order), sort: sortOf(c.row), dup, skip: 0 });
        break outer;
      }
      rows.push(reader.toRow(c.row));
      bytes += size;
      dup += 1;
    }
  }
  // Every match of the range was examined: the count is exact.
  return { total, rows, next, examined };
}

/** A uuid or bytea filter value's canonical text, or null when it is not one. */
function canonicalBinary(type: 'uuid' | 'bytea', text: string): string | null {
  if (type === 'uuid') return parseUuid(text);
  try {
    return parseBytea(text);
  } catch {
    return null;
  }
}
