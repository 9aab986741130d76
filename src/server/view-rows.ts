// GET /v1/views/{name}/rows: one page of a view, read from its ordered index (src/ivm/ordered-index.ts)
// in one synchronous block, so a page is consistent at one epoch and nothing is copied or sorted per
// request. Pages continue by key cursor (`after`, returned as `next`); `offset` seeks by position.
// Equality filters on a prefix of the order columns seek straight to their range; other filters are
// tested row by row, at most `scanRows` rows per request, and a page that ran out of that budget ends
// early with a `next` cursor (possibly holding no rows), so no request scans the whole view.
import { SluiceError } from '../common/errors.ts';
import type { ViewReader } from '../exec/api.ts';
import { columnOverheads, rowJsonBytes } from '../exec/result-size.ts';
import { orderValues, type IndexCursor, type IndexView } from '../ivm/ordered-index.ts';
import type { Row, Value } from '../common/types.ts';

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
  readonly filters: Readonly<Record<string, string>>;
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
  /** The value to seek to: a filter row's value in its column's representation. */
  readonly value: Value;
}

function matcherFor(view: string, column: string, position: number, type: string, text: string): Matcher {
  const bad = (expected: string): SluiceError =>
    new SluiceError(
      'INVALID_VALUE',
      `invalid filter value "${text}" for column "${column}" of view "${view}": expected ${expected}`,
    );
  const t = type.toLowerCase();
  if (t === 'smallint' || t === 'integer' || t === 'bigint') {
    if (!/^\s*[+-]?\d+\s*$/.test(text)) throw bad('an integer');
    const big = BigInt(text.trim());
    const n = Number(big);
    const want: number | bigint = Number.isSafeInteger(n) ? n : big;
    return { column: position, value: want, test: (v) => v === want || (typeof v === 'bigint' && v === big) };
  }
  if (t === 'real' || t === 'double precision' || t.startsWith('numeric') || t.startsWith('decimal')) {
    const n = /^\s*[+-]?nan\s*$/i.test(text) ? NaN : Number(text);
    if (text.trim() === '' || (Number.isNaN(n) && !/nan/i.test(text))) throw bad('a number');
    return {
      column: position,
      value: n,
      test: Number.isNaN(n)
        ? (v) => typeof v === 'number' && Number.isNaN(v)
        : (v) => v === n || (typeof v === 'bigint' && Number(v) === n),
    };
  }
  if (t === 'boolean') {
    const s = text.trim().toLowerCase();
    if (s === 'true' || s === 't') return { column: position, value: true, test: (v) => v === true };
    if (s === 'false' || s === 'f') return { column: position, value: false, test: (v) => v === false };
    throw bad('true or false');
  }
  return { column: position, value: text, test: (v) => v === text };
}

// ---- cursors: the order-column values of the last row a page passed, and copies of it passed ----

interface CursorState {
  readonly key: readonly Value[];
  readonly dup: number;
  /** Matching rows still to skip (an `offset` a page could not finish within its scan budget). */
  readonly skip: number;
}

type CursorValue = null | boolean | number | string | { b: string } | { f: string };

function encodeCursor(state: CursorState): string {
  const key = state.key.map((v): CursorValue => {
    if (typeof v === 'bigint') return { b: v.toString() };
    if (typeof v === 'number' && !Number.isFinite(v)) return { f: String(v) };
    return v;
  });
  const body: Record<string, unknown> = { k: key, d: state.dup };
  if (state.skip > 0) body.s = state.skip;
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function decodeCursor(text: string, width: number): CursorState {
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
  const { k, d, s } = body as { k?: unknown; d?: unknown; s?: unknown };
  if (!Array.isArray(k) || k.length !== width) throw bad();
  if (!Number.isSafeInteger(d) || (d as number) < 0) throw bad();
  if (s !== undefined && (!Number.isSafeInteger(s) || (s as number) < 0)) throw bad();
  const key = k.map((v: unknown): Value => {
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
    throw bad();
  });
  return { key, dup: d as number, skip: (s as number | undefined) ?? 0 };
}

// ---- the page ----------------------------------------------------------------------------------

export function readPage(view: string, reader: ViewReader, request: PageRequest, limits: ReadLimits): Page {
  const index = reader.index as IndexView;
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
  for (const [column, text] of Object.entries(request.filters)) {
    const position = reader.columns.findIndex((c) => c.name === column);
    const info = reader.columns[position];
    if (info === undefined) {
      throw new SluiceError('UNKNOWN_COLUMN', `column "${column}" does not exist in view "${view}"`, {
        hint: `the columns are ${reader.columns.map((c) => `"${c.name}"`).join(', ')}`,
      });
    }
    matchers.push(matcherFor(view, column, position, info.type, text));
  }
  // Filters on the leading order columns select one contiguous range of the index.
  const prefix: Value[] = [];
  for (const col of reader.order) {
    const m = matchers.find((x) => x.column === col);
    if (m === undefined) break;
    prefix.push(m.value);
  }
  const rest = matchers.filter((m) => !reader.order.slice(0, prefix.length).includes(m.column));
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
