// The cursors of row pages (view-rows.ts): the order-column values of the last row a page passed and
// how many copies of it it passed, as base64url JSON; a cursor from elsewhere is INVALID_REQUEST.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { Decimal, parseDecimal } from '../common/decimal.ts';
import { Interval } from '../common/time/interval.ts';
import { Jsonb, parseJsonb } from '../common/json/jsonb.ts';
import { SqlArray } from '../common/array/sql-array.ts';
import { decodeStored, encodeStored } from '../common/json-codec.ts';

export interface CursorState {
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

export function encodeCursor(state: CursorState): string {
  const body: Record<string, unknown> = { k: state.key.map(cursorValue), d: state.dup };
  if (state.sort !== undefined) body.o = state.sort.map(cursorValue);
  if (state.skip > 0) body.s = state.skip;
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

export function decodeCursor(text: string, width: number, sortWidth: number | null = null): CursorState {
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
        return parseJsonb((v as { j: string }).j, 'stored');
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
