// A temporal join's left state: every left row present, as it arrived, with the right rows it met
// then (and their counts). Copies of one row (by exact text) are kept first in, first out: a
// retraction of k copies takes the oldest k, so what it retracts does not depend on anything but
// the order of arrival, which replay and restore reproduce. Checkpointed entry by entry (one per
// arrival, under its arrival number), with the shared change tracking of arrangement-delta.ts.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { ArrangementDelta, type Upserts } from '../arrangement-delta.ts';

/** A right row met on arrival, with its multiplicity then. */
export type Met = readonly [row: readonly Value[], count: number];

export interface Arrival {
  /** Arrival number: the order of arrival, kept by checkpoints. */
  readonly seq: number;
  readonly row: readonly Value[];
  /** Copies of the row that arrived together and are still present (> 0). */
  count: number;
  readonly met: readonly Met[];
}

/** A part of an arrival taken by a retraction: `count` of its copies. */
export interface Taken {
  readonly row: readonly Value[];
  readonly count: number;
  readonly met: readonly Met[];
}

/** The stored form of one arrival (`a` tells it from the right arrangement's entries). */
interface StoredArrival {
  readonly a: 'A';
  readonly s: number;
  readonly r: readonly Value[];
  readonly c: number;
  readonly m: readonly Met[];
}

/** Rough heap bytes of a row array (its slots and boxed values), for state metrics. */
function rowBytes(row: readonly Value[]): number {
  return 32 + 24 * row.length;
}

export class TemporalJoinArrivals extends ArrangementDelta {
  /** Each present row's arrivals, oldest first, by the row's exact encoding. */
  private readonly byRow = new Map<string, Arrival[]>();
  /** Arrivals changed since the last delta (one whose count reached 0 is gone). */
  private readonly dirty = new Map<number, Arrival>();
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

  /** Records `count` copies of `row` (exact encoding `key`) arriving now, having met `met`. */
  add(key: string, row: readonly Value[], count: number, met: readonly Met[]): void {
    const arrival: Arrival = { seq: this.nextSeq++, row, count, met };
    this.insert(key, arrival);
    if (this.tracking) this.dirty.set(arrival.seq, arrival);
  }

  /** Takes the oldest `count` copies of the row with exact encoding `key`; what they met with them. */
  take(key: string, count: number): Taken[] {
    const list = this.byRow.get(key);
    const taken: Taken[] = [];
    let left = count;
    while (left > 0) {
      const first = list?.[0];
      if (list === undefined || first === undefined) {
        throw new SluiceError('INTERNAL_ERROR', `${this.label} retracted a row it does not hold`);
      }
      const k = Math.min(left, first.count);
      taken.push({ row: first.row, count: k, met: first.met });
      first.count -= k;
      left -= k;
      if (this.tracking) this.dirty.set(first.seq, first);
      if (first.count === 0) {
        list.shift();
        this.count -= 1;
        this.bytes -= arrivalBytes(first);
      }
    }
    if (list !== undefined && list.length === 0) this.byRow.delete(key);
    return taken;
  }

  /** Replaces the contents with entries `takeDelta` wrote (see `owns`); `encode` keys a row. */
  load(entries: readonly unknown[], encode: (row: readonly Value[]) => string): void {
    this.byRow.clear();
    this.count = 0;
    this.bytes = 0;
    const sorted = (entries as StoredArrival[]).slice().sort((a, b) => a.s - b.s);
    for (const e of sorted) this.insert(encode(e.r), { seq: e.s, row: e.r, count: e.c, met: e.m });
    this.nextSeq = sorted.length === 0 ? 0 : (sorted[sorted.length - 1] as StoredArrival).s + 1;
    this.markLoaded();
  }

  /** Whether a stored entry is an arrival's. */
  static owns(entry: unknown): boolean {
    return (entry as StoredArrival).a === 'A';
  }

  private insert(key: string, arrival: Arrival): void {
    let list = this.byRow.get(key);
    if (list === undefined) {
      list = [];
      this.byRow.set(key, list);
    }
    list.push(arrival);
    this.count += 1;
    this.bytes += arrivalBytes(arrival);
  }

  protected exportAll(upserts: Upserts): void {
    for (const list of this.byRow.values()) for (const a of list) upserts.push([entryId(a.seq), stored(a)]);
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
  return { a: 'A', s: a.seq, r: a.row, c: a.count, m: a.met };
}

function arrivalBytes(a: Arrival): number {
  // A met row is shared with the right arrangement while it is there: counted as its reference.
  return 120 + rowBytes(a.row) + 40 * a.met.length;
}
