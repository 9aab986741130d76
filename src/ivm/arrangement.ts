// Arrangements: all keyed state — tables, view outputs, Distinct, multiset aggregates and joins —
// is an indexed Z-set (key → counted rows) in one of three modes, each stored without paying for
// the others' generality: `Arrangement` (key → bucket of distinct rows with multiplicities: the
// per-group value counts of MIN/MAX/COUNT DISTINCT; join inputs, shared arrangements and semi-joins
// use its join form, `join-arrangement.ts`, which writes the same checkpoint entries),
// `UniqueArrangement` (a key holds at most one row, kept as the Map's value: keyed tables and
// views) and `CountedArrangement` (the key is the whole row: keyless tables and views, Distinct).
// This file is the indexed mode; `unique-arrangement.ts` and `counted-arrangement.ts` the others, and
// `arrangement-delta.ts` the checkpoint delta all three share. A multiplicity never goes negative:
// that is an internal error, raised naming the arrangement's owner.
import { SluiceError } from '../common/errors.ts';
import type { Decimal } from '../common/decimal.ts';
import type { Interval } from '../common/time/interval.ts';
import type { Jsonb } from '../common/json/jsonb.ts';
import type { SqlArray } from '../common/array/sql-array.ts';
import type { Value } from '../common/types.ts';
import { encodeExactOne, encodeExactValues, exactKey, identicalValues } from '../common/values.ts';
import { ArrangementDelta, type Upserts } from './arrangement-delta.ts';

// ---- indexed: key → bucket of counted rows --------------------------------------------------------

export interface ArrangedRow<R = readonly Value[]> {
  readonly row: R;
  /**
   * When the row was arranged: a checkpoint keeps it, so a restored bucket lists its rows in the
   * order the original did and a probe emits its matches in the same order (changelogs after a
   * restore are identical to the uninterrupted run's).
   */
  readonly seq: number;
  /** Multiplicity, always > 0 while the row is arranged. */
  count: number;
  /**
   * For outer joins with a residual condition: the summed weight of the other side's rows this row
   * matches (padding is due while it is 0). Unused (0) otherwise.
   */
  matches: number;
}

export interface Bucket<RK extends Value = string, R = readonly Value[]> {
  readonly rows: Map<RK, ArrangedRow<R>>;
  /** Sum of the rows' multiplicities. */
  total: number;
}

/**
 * The stored form of one arranged row: the checkpoint entry of an Arrangement, and of the structures
 * that write its format so that checkpoints stay readable (join-arrangement.ts, ops/topn-rows.ts).
 */
export interface StoredRow<K, R> {
  /** The arrangement's entry prefix: which arrangement of an operator the entry belongs to. */
  readonly a: string;
  readonly k: K;
  readonly r: R;
  readonly c: number;
  readonly m: number;
  readonly s: number;
}

/**
 * A stored row's entry id: the writer's prefix, its key's text (length first, so that no key's text
 * runs into the row's) and its row's exact encoding. Every writer of the format uses it.
 */
export function arrangedEntryId(prefix: string, keyText: string, rowText: string): string {
  return `${prefix}${keyText.length}:${keyText}${rowText}`;
}

/** Stored entries in arrival order (`s`), as a load adds them, and the arrival number after them. */
export function inArrivalOrder<S extends { readonly s: number }>(
  entries: readonly unknown[],
): { readonly sorted: readonly S[]; readonly nextSeq: number } {
  const sorted = (entries as S[]).slice().sort((a, b) => a.s - b.s);
  return { sorted, nextSeq: sorted.length === 0 ? 0 : (sorted[sorted.length - 1] as S).s + 1 };
}

/** A bucket: its map and record, and its key string (one byte a character for ASCII keys). */
const BUCKET_BYTES = 160;

/**
 * One arranged row, as V8 lays it out on 64-bit: the map entry (~40 B), the record (~48 B), the
 * row array (~32 B + 8 B a slot; small integers inline, other values boxed at ~16 B more) and its
 * map key (a small integer: the row's hash; a string for the rare row stored under its encoding).
 * Measured heap growth per arranged row in bench/join.ts is of this order; the figure is an
 * estimate for metrics, not an accounting.
 */
export function rowBytes(row: unknown, rowKey: Value): number {
  const keyBytes = typeof rowKey === 'string' ? rowKey.length : 0;
  if (!Array.isArray(row)) return 104 + keyBytes;
  let boxed = 0;
  for (const v of row as readonly Value[])
    if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= 2 ** 30) boxed += 16;
  return 120 + 8 * row.length + boxed + keyBytes;
}

function keyBytes(key: Value): number {
  return typeof key === 'string' ? key.length : 16;
}

/** A bucket's key: any value but NULL (a NULL key matches nothing and is never arranged). */
/** Never a Decimal, Interval, Jsonb or array: its key is its `key()` string (singleKey), so 1.5 and 1.50 meet. */
export type ArrangementKey = Exclude<Value, null | Decimal | Interval | Jsonb | SqlArray>;

/** How a bucket keys a row of a row arrangement: its hash, or (when that is taken) its encoding. */
export type RowKey = number | string;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** A hash of one value, equal for values that encode alike (0 and -0, 1 and 1n, NaN and NaN). */
function hashValue(v: Value): number {
  switch (typeof v) {
    case 'number':
      if (v === (v | 0)) return v | 0;
      if (v !== v) return 0x7ff80000;
      f64[0] = v;
      return ((u32[0] as number) ^ Math.imul(u32[1] as number, 0x9e3779b1)) | 0;
    case 'string': {
      let h = 0x811c9dc5 ^ v.length;
      for (let i = 0; i < v.length; i++) h = Math.imul(h ^ v.charCodeAt(i), 0x01000193);
      return h;
    }
    case 'bigint': {
      const n = Number(v);
      return Number.isFinite(n) && BigInt(n) === v ? hashValue(n) : hashValue(`${v}`);
    }
    case 'boolean':
      return v ? 0x3c6ef372 : 0x1b873593;
    case 'object': {
      if (v === null) return 0x5bd1e995;
      // numerics, intervals, jsonb, arrays: by their exact text (values identical only when those
      // agree), so rows told apart only by such a value do not share one hash
      const text = exactKey(v);
      return typeof text === 'object' ? 0x5bd1e995 : hashValue(text);
    }
    default:
      return 0x5bd1e995;
  }
}

/** A row's hash (exported for tests that need two rows of one hash). */
export function hashRow(row: readonly Value[]): number {
  let h = 0x811c9dc5 ^ row.length;
  for (let i = 0; i < row.length; i++) h = Math.imul(h ^ hashValue(row[i] as Value), 0x01000193);
  return h ^ (h >>> 15);
}

/**
 * Whether two values are one in a Z-set: they print alike (their exact encodings are equal), so
 * 1.5 and 1.50 are two rows of a bucket, each shown as it came.
 */
function sameValue(x: Value, y: Value): boolean {
  const tx = typeof x;
  // Object.is: 0 and -0 are two rows (=== says one), NaN is NaN
  if (tx === 'number' && typeof y === 'number') return Object.is(x, y);
  if (x === y) return true;
  if (tx === 'bigint' || typeof y === 'bigint') return encodeExactOne(x) === encodeExactOne(y);
  // Objects: two of one text (a row decoded from a checkpoint, or recomputed by a Window, holds
  // other objects than the one stored) are one row.
  return identicalValues(x, y);
}

/** Whether two rows are one row of a Z-set (every value prints alike; see `sameValue`). */
export function sameRow(a: readonly Value[], b: readonly Value[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameValue(a[i] as Value, b[i] as Value)) return false;
  return true;
}

/** A checkpoint entry's row part: the row's exact encoding (a scalar's for a scalar arrangement). */
function rowId(row: unknown): string {
  return Array.isArray(row) ? encodeExactValues(row as readonly Value[]) : encodeExactOne(row as Value);
}

/**
 * The general mode: `K` keys buckets (a join key, a group's slot), `RK` keys a bucket's rows, `R`
 * is what is arranged. Two uses: rows (`addRow`, for joins: a row is keyed in its bucket by a hash
 * of its values, compared in full, and a row whose hash another row of the bucket holds is keyed
 * by its encoding instead, so no row is encoded on the common path), or caller-keyed entries
 * (`add`, for the multiset aggregates: value → count per group, keyed by the value).
 */
export class Arrangement<
  K extends Value = ArrangementKey,
  RK extends Value = RowKey,
  R = readonly Value[],
> extends ArrangementDelta {
  private readonly buckets = new Map<K, Bucket<RK, R>>();
  private rowCount = 0;
  private bytes = 0;
  private nextSeq = 0;
  /** Rows (of `addRow`) stored under their encoding because their hash was taken. */
  private encodedRows = 0;
  private readonly dirty = new Map<string, { readonly key: K; readonly rowKey: RK; readonly row: R }>();

  /**
   * `label` names the arrangement in internal errors; `entryPrefix` keeps its checkpoint entries
   * apart; `keyId` writes a key in entry ids and stored entries (a join's one-column key is the
   * raw value in memory, written as its encoding).
   */
  constructor(
    private readonly label: string,
    private readonly entryPrefix: string,
    private readonly keyId: (key: K) => string = String,
  ) {
    super();
  }

  get(key: K): Bucket<RK, R> | undefined {
    return this.buckets.get(key);
  }

  /** Every bucket with its key (for an operator rebuilding a derived index after a load). */
  entries(): IterableIterator<[K, Bucket<RK, R>]> {
    return this.buckets.entries();
  }

  /** Distinct rows arranged. */
  get size(): number {
    return this.rowCount;
  }

  /** Keys (buckets) held. */
  get keyCount(): number {
    return this.buckets.size;
  }

  /** Approximate heap bytes held (see `rowBytes`), for state metrics. */
  get stateBytes(): number {
    return this.bytes;
  }

  /**
   * Adds `weight` copies of `row` under `key`, finding it by value; returns the row's entry (null
   * once its count is 0).
   */
  addRow(
    this: Arrangement<K, RowKey, readonly Value[]>,
    key: K,
    row: readonly Value[],
    weight: number,
    matches: number,
  ): ArrangedRow | null {
    const bucket = this.buckets.get(key);
    const hash = hashRow(row);
    if (bucket === undefined) return this.update(key, undefined, hash, undefined, row, weight, matches);
    const atHash = bucket.rows.get(hash);
    if (atHash !== undefined && sameRow(atHash.row, row))
      return this.update(key, bucket, hash, atHash, row, weight, matches);
    if (atHash === undefined && this.encodedRows === 0)
      return this.update(key, bucket, hash, undefined, row, weight, matches);
    // The hash is another row's, or this row may have been stored under its encoding earlier.
    const encoded = encodeExactValues(row);
    const atEncoding = bucket.rows.get(encoded);
    if (atEncoding !== undefined || atHash !== undefined)
      return this.update(key, bucket, encoded, atEncoding, row, weight, matches);
    return this.update(key, bucket, hash, undefined, row, weight, matches);
  }

  /** Adds `weight` copies of `row` under `key` as the bucket's entry `rowKey`. */
  add(key: K, rowKey: RK, row: R, weight: number, matches: number): ArrangedRow<R> | null {
    const bucket = this.buckets.get(key);
    return this.update(key, bucket, rowKey, bucket?.rows.get(rowKey), row, weight, matches);
  }

  private update(
    key: K,
    found: Bucket<RK, R> | undefined,
    rowKey: RK,
    entry: ArrangedRow<R> | undefined,
    row: R,
    weight: number,
    matches: number,
  ): ArrangedRow<R> | null {
    const count = (entry?.count ?? 0) + weight;
    if (count < 0) {
      throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    }
    let bucket = found;
    if (bucket === undefined) {
      if (count === 0) return null;
      bucket = { rows: new Map(), total: 0 };
      this.buckets.set(key, bucket);
      this.bytes += BUCKET_BYTES + keyBytes(key);
    }
    // The stored row names the entry: a caller-keyed entry (`add`) may be given an equal row of
    // another text than the one it holds.
    const stored = entry === undefined ? row : entry.row;
    if (this.tracking) this.dirty.set(this.entryId(key, stored), { key, rowKey, row: stored });
    bucket.total += weight;
    if (count === 0) {
      if (entry !== undefined) {
        bucket.rows.delete(rowKey);
        this.rowCount -= 1;
        this.bytes -= rowBytes(row, rowKey);
        if (typeof rowKey === 'string') this.encodedRows -= 1;
      }
      if (bucket.rows.size === 0) {
        this.buckets.delete(key);
        this.bytes -= BUCKET_BYTES + keyBytes(key);
      }
      return null;
    }
    if (entry === undefined) {
      const added: ArrangedRow<R> = { row, seq: this.nextSeq++, count, matches };
      bucket.rows.set(rowKey, added);
      this.rowCount += 1;
      this.bytes += rowBytes(row, rowKey);
      if (typeof rowKey === 'string') this.encodedRows += 1;
      return added;
    }
    entry.count = count;
    return entry;
  }

  /** Drops every row under `key` (a released group); its rows leave the checkpoint too. */
  deleteKey(key: K): void {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) return;
    for (const [rowKey, e] of bucket.rows) {
      if (this.tracking) this.dirty.set(this.entryId(key, e.row), { key, rowKey, row: e.row });
      this.bytes -= rowBytes(e.row, rowKey);
      if (typeof rowKey === 'string') this.encodedRows -= 1;
    }
    this.rowCount -= bucket.rows.size;
    this.bytes -= BUCKET_BYTES + keyBytes(key);
    this.buckets.delete(key);
  }

  /** Marks a row whose `matches` changed in place, so the next checkpoint delta holds it. */
  touched(key: K, rowKey: RK, row: R): void {
    if (this.tracking) this.dirty.set(this.entryId(key, row), { key, rowKey, row });
  }

  /** Empties the arrangement; the next delta replaces every stored entry. */
  clear(): void {
    this.buckets.clear();
    this.rowCount = 0;
    this.bytes = 0;
    this.nextSeq = 0;
    this.encodedRows = 0;
    this.markCleared();
  }

  /**
   * Replaces the contents with entries written by `takeDelta` (of this arrangement: see `owns`).
   * Each row's key is computed again by `keyOf` (the stored one is its written form); rows are
   * found by value, or by `rowKeyOf` when given.
   */
  load(entries: readonly unknown[], keyOf: (row: R) => K, rowKeyOf?: (row: R) => RK): void {
    this.clear();
    const { sorted, nextSeq } = inArrivalOrder<StoredRow<string, R>>(entries);
    for (const e of sorted) {
      this.nextSeq = e.s;
      if (rowKeyOf !== undefined) this.add(keyOf(e.r), rowKeyOf(e.r), e.r, e.c, e.m);
      else
        (this as unknown as Arrangement<K, RowKey, readonly Value[]>).addRow(
          keyOf(e.r),
          e.r as readonly Value[],
          e.c,
          e.m,
        );
    }
    this.nextSeq = nextSeq;
    this.markLoaded();
  }

  /** Whether a stored entry (a value `takeDelta` wrote) belongs to this arrangement. */
  owns(entry: unknown): boolean {
    return (entry as StoredRow<string, R>).a === this.entryPrefix;
  }

  protected exportAll(upserts: Upserts): void {
    for (const [key, bucket] of this.buckets)
      for (const e of bucket.rows.values()) upserts.push([this.entryId(key, e.row), this.stored(key, e)]);
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const [id, { key, rowKey, row }] of this.dirty) {
      // The entry at `rowKey` may since be another row's (a hash freed and taken again).
      const e = this.buckets.get(key)?.rows.get(rowKey);
      if (e === undefined || !sameEntry(e.row, row)) deletes.push(id);
      else upserts.push([id, this.stored(key, e)]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }

  private stored(key: K, e: ArrangedRow<R>): StoredRow<string, R> {
    return { a: this.entryPrefix, k: this.keyId(key), r: e.row, c: e.count, m: e.matches, s: e.seq };
  }

  private entryId(key: K, row: R): string {
    return arrangedEntryId(this.entryPrefix, this.keyId(key), rowId(row));
  }
}

function sameEntry(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? sameRow(a as readonly Value[], b as readonly Value[])
    : sameValue(a as Value, b as Value);
}
