// An Arrangement: a Z-set indexed by a key, the state a join probes. Each key holds a bucket of
// distinct rows with their multiplicities (and the bucket's total), so a probe by key finds every
// matching row at once, and a row's copies cost one entry. Its checkpoint delta is built in: the
// entries that changed since the last export, as copies (a checkpoint is written in slices while
// later epochs mutate the arrangement).
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import type { StateDelta } from './state.ts';

export interface ArrangedRow {
  readonly row: readonly Value[];
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

export interface Bucket {
  readonly rows: Map<string, ArrangedRow>;
  /** Sum of the rows' multiplicities. */
  total: number;
}

/** The stored form of one arranged row. */
interface StoredRow {
  /** The arrangement's entry prefix: which arrangement of an operator the entry belongs to. */
  readonly a: string;
  readonly k: string;
  readonly r: readonly Value[];
  readonly c: number;
  readonly m: number;
  readonly s: number;
}

/** A bucket: its map and record, and its key string (one byte a character for ASCII keys). */
const BUCKET_BYTES = 160;

/**
 * One arranged row, as V8 lays it out on 64-bit: the map entry (~40 B), the record (~48 B), the
 * row array (~32 B + 8 B a slot; small integers inline, other values boxed at ~16 B more) and the
 * row's encoding used as its map key. Measured heap growth per arranged row in bench/join.ts is of
 * this order; the figure is an estimate for metrics, not an accounting.
 */
function rowBytes(row: readonly Value[], rowKey: string): number {
  let boxed = 0;
  for (const v of row)
    if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= 2 ** 30) boxed += 16;
  return 120 + 8 * row.length + boxed + rowKey.length;
}

export class Arrangement {
  private readonly buckets = new Map<string, Bucket>();
  private rowCount = 0;
  private bytes = 0;
  private nextSeq = 0;
  private tracking = false;
  private readonly dirty = new Map<string, { readonly key: string; readonly rowKey: string }>();

  /** `label` names the arrangement in internal errors; `entryPrefix` keeps its checkpoint entries apart. */
  constructor(
    private readonly label: string,
    private readonly entryPrefix: string,
  ) {}

  get(key: string): Bucket | undefined {
    return this.buckets.get(key);
  }

  /** Distinct rows arranged. */
  get size(): number {
    return this.rowCount;
  }

  /** Approximate heap bytes held (see `rowBytes`), for state metrics. */
  get stateBytes(): number {
    return this.bytes;
  }

  /** Adds `weight` copies of `row` under `key`; returns the row's entry (null once its count is 0). */
  add(
    key: string,
    rowKey: string,
    row: readonly Value[],
    weight: number,
    matches: number,
  ): ArrangedRow | null {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { rows: new Map(), total: 0 };
      this.buckets.set(key, bucket);
      this.bytes += BUCKET_BYTES + key.length;
    }
    if (this.tracking) this.dirty.set(this.entryId(key, rowKey), { key, rowKey });
    bucket.total += weight;
    const entry = bucket.rows.get(rowKey);
    const count = (entry?.count ?? 0) + weight;
    if (count < 0) {
      throw new SluiceError('INTERNAL_ERROR', `${this.label} saw a negative multiplicity`);
    }
    if (count === 0) {
      if (entry !== undefined) {
        bucket.rows.delete(rowKey);
        this.rowCount -= 1;
        this.bytes -= rowBytes(row, rowKey);
      }
      if (bucket.rows.size === 0) {
        this.buckets.delete(key);
        this.bytes -= BUCKET_BYTES + key.length;
      }
      return null;
    }
    if (entry === undefined) {
      const added: ArrangedRow = { row, seq: this.nextSeq++, count, matches };
      bucket.rows.set(rowKey, added);
      this.rowCount += 1;
      this.bytes += rowBytes(row, rowKey);
      return added;
    }
    entry.count = count;
    return entry;
  }

  /** Marks a row whose `matches` changed in place, so the next checkpoint delta holds it. */
  touched(key: string, rowKey: string): void {
    if (this.tracking) this.dirty.set(this.entryId(key, rowKey), { key, rowKey });
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  takeDelta(replaceAll: boolean): StateDelta {
    const upserts: (readonly [string, unknown])[] = [];
    const deletes: string[] = [];
    const stored = (key: string, e: ArrangedRow): StoredRow => ({
      a: this.entryPrefix,
      k: key,
      r: e.row,
      c: e.count,
      m: e.matches,
      s: e.seq,
    });
    if (replaceAll) {
      for (const [key, bucket] of this.buckets)
        for (const [rowKey, e] of bucket.rows) upserts.push([this.entryId(key, rowKey), stored(key, e)]);
    } else {
      for (const [id, { key, rowKey }] of this.dirty) {
        const e = this.buckets.get(key)?.rows.get(rowKey);
        if (e === undefined) deletes.push(id);
        else upserts.push([id, stored(key, e)]);
      }
    }
    this.dirty.clear();
    return { replaceAll, upserts, deletes };
  }

  /** Replaces the contents with entries written by `takeDelta` (of this arrangement: see `owns`). */
  load(entries: readonly unknown[], rowKeyOf: (row: readonly Value[]) => string): void {
    this.buckets.clear();
    this.rowCount = 0;
    this.bytes = 0;
    this.dirty.clear();
    const sorted = (entries as StoredRow[]).slice().sort((a, b) => a.s - b.s);
    for (const e of sorted) {
      this.nextSeq = e.s;
      this.add(e.k, rowKeyOf(e.r), e.r, e.c, e.m);
    }
    this.nextSeq = sorted.length === 0 ? 0 : (sorted[sorted.length - 1] as StoredRow).s + 1;
    // The loaded entries are what the checkpoint store holds: not changes to write back.
    this.dirty.clear();
  }

  /** Whether a stored entry (a value `takeDelta` wrote) belongs to this arrangement. */
  owns(entry: unknown): boolean {
    return (entry as StoredRow).a === this.entryPrefix;
  }

  private entryId(key: string, rowKey: string): string {
    return `${this.entryPrefix}${key.length}:${key}${rowKey}`;
  }
}
