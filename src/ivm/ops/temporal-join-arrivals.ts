// A temporal join's left state: every left row present, as it arrived, with the right rows it met
// then (and their counts). Copies of one row (by exact text) are kept first in, first out: a
// retraction of k copies takes the oldest k, so what it retracts does not depend on anything but
// the order of arrival, which replay and restore reproduce. Checkpointed entry by entry (one per
// arrival, under its arrival number), with the shared change tracking of arrangement-delta.ts.
// Kept small, since it holds every left row: a row is found by its hash (its encoding only when
// another row holds the hash, as in arrangement.ts), one arrival is held without a list, and the
// rows met are a plain list with counts only when one is not 1.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { encodeExactValues } from '../../common/values.ts';
import { ArrangementDelta, type Upserts } from '../arrangement-delta.ts';
import { hashRow, inArrivalOrder, sameRow } from '../arrangement.ts';

export interface Arrival {
  /** Arrival number: the order of arrival, kept by checkpoints. */
  readonly seq: number;
  readonly row: readonly Value[];
  /** Copies of the row that arrived together and are still present (0: gone). */
  count: number;
  /** The right rows met on arrival. */
  readonly met: readonly (readonly Value[])[];
  /** Their multiplicities then, or null when each was 1. */
  readonly counts: readonly number[] | null;
}

/** A part of an arrival taken by a retraction: `count` of its copies. */
export interface Taken {
  readonly row: readonly Value[];
  readonly count: number;
  readonly met: readonly (readonly Value[])[];
  readonly counts: readonly number[] | null;
}

/** The stored form of one arrival (`a` tells it from the right arrangement's entries). */
interface StoredArrival {
  readonly a: 'A';
  readonly s: number;
  readonly r: readonly Value[];
  readonly c: number;
  readonly m: readonly (readonly Value[])[];
  readonly n?: readonly number[];
}

type RowKey = number | string;
type Held = Arrival | Arrival[];

const first = (held: Held): Arrival => (Array.isArray(held) ? (held[0] as Arrival) : held);

export class TemporalJoinArrivals extends ArrangementDelta {
  /** Each present row's arrivals, oldest first, by the row's hash (or encoding: see `find`). */
  private readonly byRow = new Map<RowKey, Held>();
  /** Arrivals changed since the last delta (one whose count reached 0 is gone). */
  private readonly dirty = new Map<number, Arrival>();
  /** Rows held under their encoding because another row holds their hash. */
  private encodedRows = 0;
  private nextSeq = 0;
  private count = 0;
  private bytes = 0;

  constructor(private readonly label: string) {
    super();
  }

  /** Arrivals held (each of one or more copies of a row). */
  get size(): number {
    return this.count;
  }

  get stateBytes(): number {
    return this.bytes;
  }

  /** Records `count` copies of `row` arriving now, having met `met` (with `counts`, null: all 1). */
  add(
    row: readonly Value[],
    count: number,
    met: readonly (readonly Value[])[],
    counts: readonly number[] | null,
  ): void {
    const arrival: Arrival = { seq: this.nextSeq++, row, count, met, counts };
    this.insert(arrival);
    if (this.tracking) this.dirty.set(arrival.seq, arrival);
  }

  /** Takes the oldest `count` copies of `row`, with what each met. */
  take(row: readonly Value[], count: number): Taken[] {
    const { key, held } = this.find(row);
    if (held === undefined) this.absent();
    const list = Array.isArray(held) ? held : [held];
    const taken: Taken[] = [];
    let left = count;
    while (left > 0) {
      const oldest = list[0];
      if (oldest === undefined) this.absent();
      const k = Math.min(left, oldest.count);
      taken.push({ row: oldest.row, count: k, met: oldest.met, counts: oldest.counts });
      oldest.count -= k;
      left -= k;
      if (this.tracking) this.dirty.set(oldest.seq, oldest);
      if (oldest.count === 0) {
        list.shift();
        this.count -= 1;
        this.bytes -= arrivalBytes(oldest);
      }
    }
    if (list.length === 0) {
      this.byRow.delete(key);
      if (typeof key === 'string') this.encodedRows -= 1;
    } else this.byRow.set(key, list.length === 1 ? (list[0] as Arrival) : list);
    return taken;
  }

  /** Replaces the contents with entries `takeDelta` wrote (see `owns`). */
  load(entries: readonly unknown[]): void {
    this.byRow.clear();
    this.encodedRows = 0;
    this.count = 0;
    this.bytes = 0;
    const { sorted, nextSeq } = inArrivalOrder<StoredArrival>(entries);
    for (const e of sorted) this.insert({ seq: e.s, row: e.r, count: e.c, met: e.m, counts: e.n ?? null });
    this.nextSeq = nextSeq;
    this.markLoaded();
  }

  /** Whether a stored entry is an arrival's. */
  static owns(entry: unknown): boolean {
    return (entry as StoredArrival).a === 'A';
  }

  /**
   * Where `row`'s arrivals are (or go): under its hash, unless another row holds the hash — then
   * under its encoding, which is looked up only once some row is held so.
   */
  private find(row: readonly Value[]): { key: RowKey; held: Held | undefined } {
    const hash = hashRow(row);
    const atHash = this.byRow.get(hash);
    if (atHash !== undefined && sameRow(first(atHash).row, row)) return { key: hash, held: atHash };
    if (atHash === undefined && this.encodedRows === 0) return { key: hash, held: undefined };
    const encoded = encodeExactValues(row);
    const atEncoding = this.byRow.get(encoded);
    if (atEncoding !== undefined || atHash !== undefined) return { key: encoded, held: atEncoding };
    return { key: hash, held: undefined };
  }

  private insert(arrival: Arrival): void {
    const { key, held } = this.find(arrival.row);
    if (held === undefined) {
      this.byRow.set(key, arrival);
      if (typeof key === 'string') this.encodedRows += 1;
    } else if (Array.isArray(held)) held.push(arrival);
    else this.byRow.set(key, [held, arrival]);
    this.count += 1;
    this.bytes += arrivalBytes(arrival);
  }

  private absent(): never {
    throw new SluiceError('INTERNAL_ERROR', `${this.label} retracted a row it does not hold`);
  }

  protected exportAll(upserts: Upserts): void {
    for (const held of this.byRow.values()) {
      if (Array.isArray(held)) for (const a of held) upserts.push([entryId(a.seq), stored(a)]);
      else upserts.push([entryId(held.seq), stored(held)]);
    }
  }

  protected exportChanged(upserts: Upserts, deletes: string[]): void {
    for (const [seq, a] of this.dirty) {
      if (a.count === 0) deletes.push(entryId(seq));
      else upserts.push([entryId(seq), stored(a)]);
    }
  }

  protected forgetChanges(): void {
    this.dirty.clear();
  }
}

function entryId(seq: number): string {
  return `A${seq}`;
}

/** A copy: the arrival's count changes in place after the delta is taken; rows never do. */
function stored(a: Arrival): StoredArrival {
  return { a: 'A', s: a.seq, r: a.row, c: a.count, m: a.met, ...(a.counts !== null ? { n: a.counts } : {}) };
}

/** Rough heap bytes: the record, its map entry, the row's slots; a met row is shared with the right side. */
function arrivalBytes(a: Arrival): number {
  return 96 + 32 + 24 * a.row.length + (a.met.length === 0 ? 0 : 24 + 8 * a.met.length);
}
