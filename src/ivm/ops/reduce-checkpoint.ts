// A Reduce's checkpoint (moved out of reduce-op.ts): each group serialised by its key (row count,
// aggregate states, output row, kept row error, key texts), the groups changed since the last take
// and the delta built from them (ReduceCheckpoint), and the groups loaded back on restart.
import { SluiceError, knownErrorCode } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import type { StateDelta } from '../state.ts';
import { NO_SLOT } from '../group-index.ts';
import type { AggColumn, GroupRecords } from './aggregates.ts';
import type { GroupKeyTexts } from './group-key-texts.ts';
import { InvertibleColumn } from './invertible-aggregate.ts';
import {
  F_FLAGS,
  F_KEY,
  F_OUT,
  HAS_OUT,
  KEY_IN_RECORD,
  OUT_IN_RECORD,
  RECORD_KEY,
  SIGNED_ZERO,
} from './reduce-record.ts';
import type { ZeroSign } from './zero-sign.ts';
import { lazyEntries } from '../lazy-entries.ts';

interface SerializedGroup {
  readonly k: Value[];
  readonly c: number;
  readonly a: unknown[];
  readonly o: Value[] | null;
  readonly e: { code: string; message: string } | null;
  /** The group's key texts with their row counts (only for keys that may print differently). */
  readonly t?: [Value[], number][];
  /** A float zero group's rows holding -0 (zero-sign.ts); absent for any other group. */
  readonly z?: number;
}

/** What the checkpoint reads and rebuilds of a Reduce's groups (ReduceOp's internals). */
export interface CheckpointGroups {
  readonly records: GroupRecords;
  readonly columns: readonly AggColumn[];
  readonly keyTexts: GroupKeyTexts | null;
  readonly zeroSign: ZeroSign | null;
  readonly errorsBySlot: Map<number, unknown>;
  keyAt(slot: number): readonly Value[];
  outRow(slot: number): Value[] | null;
  slots(): Iterable<number>;
  /** Whether a group holds the slot. */
  live(slot: number): boolean;
  /** How many groups `slots` yields. */
  groupCount(): number;
  /** The slot of the group with this key, or NO_SLOT. */
  slotOf(key: readonly Value[]): number;
  /** A new group's slot. */
  allocate(key: readonly Value[]): number;
  release(slot: number): void;
  setOut(slot: number, row: readonly Value[] | null): void;
}

function isSignedZero(g: CheckpointGroups, slot: number): boolean {
  return (
    g.zeroSign !== null && ((g.records.data[slot * g.records.stride + F_FLAGS] as number) & SIGNED_ZERO) !== 0
  );
}

function serialize(g: CheckpointGroups, slot: number): SerializedGroup {
  const error = g.errorsBySlot.get(slot);
  return {
    k: [...g.keyAt(slot)],
    c: g.records.data[slot * g.records.stride] as number,
    a: g.columns.map((c) => c.serialize(slot)),
    o: g.outRow(slot),
    ...(g.keyTexts !== null ? { t: g.keyTexts.entries(slot) } : {}),
    ...(isSignedZero(g, slot) ? { z: (g.zeroSign as ZeroSign).negatives } : {}),
    e:
      error === undefined
        ? null
        : { code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR', message: errorText(error) },
  };
}

/**
 * Every group (`replaceAll`), or the groups of `dirty` (by their encoded key): upserts and deletes.
 * A group whose state is its record, key and output row (the usual COUNT / SUM / AVG group) is not
 * serialised here: its record is copied (the only part later epochs change in place; key arrays and
 * output row objects are replaced, never changed) and the entry is built when the writer reads it,
 * in its bounded slices. Serialising every changed group at the take had stalled the server for
 * 100-400 ms at a checkpoint. Other groups (key texts, bigint sums, errors, MIN/MAX...) are
 * serialised at once, as before.
 */
function groupsDelta(
  g: CheckpointGroups,
  replaceAll: boolean,
  changed: GroupChanges,
  counts: CheckpointCounts,
): StateDelta {
  const deletes: string[] = [];
  const { byKey, slots } = changed;
  const snapshot = new GroupsSnapshot(g, counts, replaceAll ? g.groupCount() : byKey.size + slots.length);
  if (replaceAll) {
    for (const slot of g.slots()) snapshot.add(slot, null);
  } else {
    for (const [k, key] of byKey) {
      const slot = g.slotOf(key);
      if (slot === NO_SLOT) deletes.push(k);
      else snapshot.add(slot, k);
    }
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      // A released key whose group is back (in this slot or another) is upserted, not deleted.
      const released = changed.releasedAt(slot);
      if (released !== undefined && g.slotOf(released) === NO_SLOT) deletes.push(encodeValues(released));
      if (g.live(slot)) snapshot.add(slot, null);
    }
  }
  return { replaceAll, upserts: snapshot.entries(), deletes };
}

/** GroupChanges' marks per slot: the slot's group changed; the slot's first release kept. */
const CHANGED = 1;
const RELEASED = 2;

/**
 * The groups changed since the last take. A group is marked by its slot, its key encoded only at
 * the take (an encoded key and a Map set per changed group per epoch had been ~18% of the
 * server's main thread while it tracked changes). A slot's first release since the take keeps the
 * key it held then (the key the store may hold for it: a later group in the slot was not stored),
 * deleted at the take unless its group is back. Groups with key texts are marked by their encoded
 * key as before (the text their entry was stored under).
 */
export class GroupChanges {
  readonly byKey = new Map<string, readonly Value[]>();
  /** Slots marked, each once. */
  readonly slots: number[] = [];
  private marks = new Uint8Array(16);
  /** Per slot marked RELEASED: its key array, or null where the key was the number in `releasedNumber`. */
  private readonly releasedKey: (readonly Value[] | null)[] = [];
  private releasedNumber = new Float64Array(16);

  /** Marks the slot; false if it had the mark already. */
  private markSlot(slot: number, mark: number): boolean {
    if (slot >= this.marks.length) {
      const n = Math.max(slot + 1, 2 * this.marks.length);
      const marks = new Uint8Array(n);
      marks.set(this.marks);
      this.marks = marks;
      const numbers = new Float64Array(n);
      numbers.set(this.releasedNumber);
      this.releasedNumber = numbers;
    }
    const before = this.marks[slot] as number;
    if ((before & mark) !== 0) return false;
    if (before === 0) this.slots.push(slot);
    this.marks[slot] = before | mark;
    return true;
  }

  mark(slot: number): void {
    this.markSlot(slot, CHANGED);
  }

  markKey(key: readonly Value[]): void {
    this.byKey.set(encodeValues(key), key);
  }

  /** The slot's group, of key `key` (RECORD_KEY: the number its record holds), is released. */
  release(slot: number, key: readonly Value[], records: GroupRecords): void {
    if (!this.markSlot(slot, RELEASED)) return;
    if (key !== RECORD_KEY) this.releasedKey[slot] = key;
    else {
      this.releasedKey[slot] = null;
      this.releasedNumber[slot] = records.data[slot * records.stride + F_KEY] as number;
    }
  }

  /** The key the slot's first release since the take kept, or undefined. */
  releasedAt(slot: number): readonly Value[] | undefined {
    if (((this.marks[slot] as number) & RELEASED) === 0) return undefined;
    return this.releasedKey[slot] ?? [this.releasedNumber[slot] as number];
  }

  /** Groups marked (by slot or key): a count kept as they are marked. */
  get size(): number {
    return this.byKey.size + this.slots.length;
  }

  forget(): void {
    this.byKey.clear();
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i] as number;
      this.marks[slot] = 0;
      this.releasedKey[slot] = null;
    }
    this.slots.length = 0;
  }
}

/** Counts of a Reduce's checkpoint work, for tests: groups serialised at the take and later. */
export interface CheckpointCounts {
  /** Groups serialised when the delta was taken (their state is not all in their record). */
  atTake: number;
  /** Groups serialised from a record copy as the delta's entries were read. */
  onRead: number;
}

/** The groups of one delta: record copies for the record-held ones, built entries for the rest. */
class GroupsSnapshot {
  private readonly stride: number;
  /** Record copies, `stride` doubles per entry, at the entry's index (unused for built entries). */
  private data: Float64Array;
  /** Per entry: its encoded key when known at the take (an incremental delta's), else null. */
  private readonly ids: (string | null)[] = [];
  /** Per entry: the key array, or null where the record holds the key. */
  private readonly keys: (readonly Value[] | null)[] = [];
  /** Per entry: the output row object where the record does not hold the row, else null. */
  private readonly outs: (Value[] | null)[] = [];
  /** Per entry: the entry built at the take (a group not held by its record), else undefined. */
  private readonly built: (readonly [string, unknown] | undefined)[] = [];
  /** The columns when all are invertible (a group may then be held by its record), else null. */
  private readonly invertible: readonly InvertibleColumn[] | null;
  private n = 0;

  constructor(
    private readonly g: CheckpointGroups,
    private readonly counts: CheckpointCounts,
    capacity: number,
  ) {
    this.stride = g.records.stride;
    const cols = g.columns;
    this.invertible =
      g.keyTexts === null && cols.every((c) => c instanceof InvertibleColumn)
        ? (cols as readonly InvertibleColumn[])
        : null;
    this.data = new Float64Array(this.invertible === null ? 0 : Math.max(1, capacity) * this.stride);
  }

  /** Whether the group's whole state is its record, its key array and its output row object. */
  private recordHeld(slot: number): boolean {
    const invertible = this.invertible;
    if (invertible === null) return false;
    if (this.g.errorsBySlot.size !== 0 && this.g.errorsBySlot.has(slot)) return false;
    if (isSignedZero(this.g, slot)) return false; // its -0 count is not in the record
    for (let c = 0; c < invertible.length; c++)
      if (!(invertible[c] as InvertibleColumn).inRecord(slot)) return false;
    return true;
  }

  add(slot: number, id: string | null): void {
    const i = this.n++;
    const g = this.g;
    if (!this.recordHeld(slot)) {
      this.counts.atTake++;
      this.built[i] = [id ?? encodeValues(g.keyAt(slot)), serialize(g, slot)];
      this.ids[i] = null;
      this.keys[i] = null;
      this.outs[i] = null;
      return;
    }
    const stride = this.stride;
    if ((i + 1) * stride > this.data.length) {
      const grown = new Float64Array(Math.max((i + 1) * stride, 2 * this.data.length));
      grown.set(this.data);
      this.data = grown;
    }
    const from = slot * stride;
    this.data.set(g.records.data.subarray(from, from + stride), i * stride);
    const flags = g.records.data[from + F_FLAGS] as number;
    this.built[i] = undefined;
    this.ids[i] = id;
    this.keys[i] = (flags & KEY_IN_RECORD) !== 0 ? null : g.keyAt(slot);
    // A row the record holds is rebuilt on read; any other is an object never changed in place.
    this.outs[i] = (flags & HAS_OUT) !== 0 && (flags & OUT_IN_RECORD) === 0 ? g.outRow(slot) : null;
  }

  entries(): readonly (readonly [string, unknown])[] {
    return this.n === 0 ? [] : lazyEntries(this.n, (i) => this.entry(i));
  }

  /** Entry i, as `serialize` would have built it at the take. */
  private entry(i: number): readonly [string, unknown] {
    const built = this.built[i];
    if (built !== undefined) return built;
    this.counts.onRead++;
    const d = this.data;
    const at = i * this.stride;
    const flags = d[at + F_FLAGS] as number;
    const key: readonly Value[] = this.keys[i] ?? [d[at + F_KEY] as number];
    const invertible = this.invertible as readonly InvertibleColumn[];
    let o: Value[] | null = null;
    if ((flags & HAS_OUT) !== 0) {
      o = this.outs[i] ?? null;
      if (o === null) {
        o = [...key];
        for (let a = 0; a < invertible.length; a++) o.push(d[at + F_OUT + a] as number);
      }
    }
    const group: SerializedGroup = {
      k: [...key],
      c: d[at] as number,
      a: invertible.map((c) => c.recordState(d, at)),
      o,
      e: null,
    };
    return [this.ids[i] ?? encodeValues(key), group];
  }
}

/**
 * A Reduce's checkpoint bookkeeping: the groups changed since the last take (marked by the Reduce
 * while it tracks changes), whether a take was ever made (the first is whole), and the work counts.
 */
export class ReduceCheckpoint {
  readonly changed = new GroupChanges();
  /** Groups serialised at a take and as a take's entries were read (for tests). */
  readonly counts: CheckpointCounts = { atTake: 0, onRead: 0 };
  private exported = false;

  /** The groups changed since the last take (all of them with `full`, or before any take). */
  take(g: CheckpointGroups, full: boolean): StateDelta {
    const delta = groupsDelta(g, full || !this.exported, this.changed, this.counts);
    this.changed.forget();
    this.exported = true;
    return delta;
  }

  /** Replaces every group with the serialised ones; the next take may be incremental. */
  load(g: CheckpointGroups, values: Iterable<unknown>): void {
    loadGroups(g, values);
    this.changed.forget();
    this.exported = true;
  }
}

/** Replaces every group with the serialised ones. */
function loadGroups(g: CheckpointGroups, values: Iterable<unknown>): void {
  for (const slot of [...g.slots()]) g.release(slot);
  for (const v of values) {
    const d = v as SerializedGroup;
    const slot = g.allocate(d.k);
    g.records.data[slot * g.records.stride] = d.c;
    g.keyTexts?.load(slot, d.t ?? [[d.k, d.c]]);
    if (d.z !== undefined && g.zeroSign !== null) {
      const at = slot * g.records.stride + F_FLAGS;
      g.records.data[at] = (g.records.data[at] as number) | SIGNED_ZERO;
      g.zeroSign.reset(d.z);
    }
    d.a.forEach((a, i) => (g.columns[i] as AggColumn).deserialize(slot, a));
    g.setOut(slot, d.o);
    if (d.e !== null) {
      g.errorsBySlot.set(slot, new SluiceError(knownErrorCode(d.e.code), d.e.message));
    }
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
