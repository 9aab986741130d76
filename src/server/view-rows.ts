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
import { compareValues } from '../common/values.ts';
import { type CursorState, decodeCursor, encodeCursor } from './page-cursor.ts';
import { type Matcher, matcherFor } from './row-filters.ts';

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

/** What a relation is called in messages: `view "v"`, `table "t"`. */
export type RelationKind = 'view' | 'table';

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
