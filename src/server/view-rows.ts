// GET /v1/views/{name}/rows: equality filters (typed by the view's columns), a stable order (the view
// key, else all columns) and limit/offset over one snapshot, so every page is consistent at one epoch.
import { SluiceError } from '../errors.ts';
import type { ViewSnapshot } from '../exec/api.ts';
import type { Row, Value } from '../types.ts';

export interface Page {
  readonly total: number;
  readonly rows: readonly Row[];
}

type Matcher = (v: Value) => boolean;

function matcherFor(view: string, column: string, type: string, text: string): Matcher {
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
    return (v) => v === want || (typeof v === 'bigint' && v === big);
  }
  if (t === 'real' || t === 'double precision' || t.startsWith('numeric') || t.startsWith('decimal')) {
    const n = /^\s*[+-]?nan\s*$/i.test(text) ? NaN : Number(text);
    if (text.trim() === '' || (Number.isNaN(n) && !/nan/i.test(text))) throw bad('a number');
    return Number.isNaN(n)
      ? (v) => typeof v === 'number' && Number.isNaN(v)
      : (v) => v === n || (typeof v === 'bigint' && Number(v) === n);
  }
  if (t === 'boolean') {
    const s = text.trim().toLowerCase();
    if (s === 'true' || s === 't') return (v) => v === true;
    if (s === 'false' || s === 'f') return (v) => v === false;
    throw bad('true or false');
  }
  return (v) => v === text;
}

function compare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'number' && Number.isNaN(a)) return typeof b === 'number' && Number.isNaN(b) ? 0 : 1;
  if (typeof b === 'number' && Number.isNaN(b)) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function filterAndPage(
  view: string,
  snapshot: ViewSnapshot,
  filters: Readonly<Record<string, string>>,
  paging: { limit: number | undefined; offset: number },
): Page {
  const matchers: [string, Matcher][] = [];
  for (const [column, text] of Object.entries(filters)) {
    const info = snapshot.columns.find((c) => c.name === column);
    if (info === undefined) {
      throw new SluiceError('UNKNOWN_COLUMN', `column "${column}" does not exist in view "${view}"`, {
        hint: `the columns are ${snapshot.columns.map((c) => `"${c.name}"`).join(', ')}`,
      });
    }
    matchers.push([column, matcherFor(view, column, info.type, text)]);
  }
  const rows =
    matchers.length === 0
      ? [...snapshot.rows]
      : snapshot.rows.filter((row) => matchers.every(([c, m]) => m(row[c] ?? null)));
  const order =
    snapshot.key !== null && snapshot.key.length > 0 ? snapshot.key : snapshot.columns.map((c) => c.name);
  rows.sort((a, b) => {
    for (const c of order) {
      const d = compare(a[c] ?? null, b[c] ?? null);
      if (d !== 0) return d;
    }
    return 0;
  });
  const end = paging.limit === undefined ? undefined : paging.offset + paging.limit;
  return { total: rows.length, rows: rows.slice(paging.offset, end) };
}
