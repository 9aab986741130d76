// One stateful part's changed checkpoint entries, as plain data: what operators and table stores
// export (src/ivm/state.ts) and the checkpoint store writes (src/storage/checkpoint-store.ts).
// Values are plain JSON-able data except for bigint, which the stored codec handles.

export interface StateDelta {
  /** Replace every stored entry of this state (a new operator, or a change of representation). */
  readonly replaceAll: boolean;
  readonly upserts: readonly (readonly [string, unknown])[];
  readonly deletes: readonly string[];
}

type Entry = readonly [string, unknown];

/** Reads a state delta's entries a batch at a time (ivm/cow-snapshot.ts `read`); `close` when done. */
export interface EntryReader {
  /** Up to `max` next entries into `keys` and `values` from index 0; how many (0: no more). */
  read(keys: string[], values: unknown[], max: number): number;
  /** Ends the reading early or at its end (a snapshot stops recording before-images). */
  close(): void;
}

/** Batch readers by the entries they read (ivm/cow-snapshot.ts's snapshots register theirs). */
const readers = new WeakMap<object, () => EntryReader>();

/** Entries read through `reader()` (made when reading starts) instead of one by one. */
export function registerEntryReader(entries: object, reader: () => EntryReader): void {
  readers.set(entries, reader);
}

/**
 * A reader of a delta's entries: a snapshot's own batch reader for a snapshot's entries (not read
 * yet), else one over the entries' iterator (the entries may be any iterable: tests wrap them).
 */
export function entryReader(entries: readonly Entry[]): EntryReader {
  return readers.get(entries)?.() ?? iteratorReader(entries);
}

/** A reader of the entries as `for … of` reads them. */
export function iteratorReader(entries: Iterable<Entry>): EntryReader {
  let it: Iterator<Entry> | null = entries[Symbol.iterator]();
  return {
    read(keys, values, max) {
      let n = 0;
      while (n < max && it !== null) {
        const r = it.next();
        if (r.done === true) it = null;
        else {
          keys[n] = r.value[0];
          values[n++] = r.value[1];
        }
      }
      return n;
    },
    close() {
      it?.return?.();
      it = null;
    },
  };
}
