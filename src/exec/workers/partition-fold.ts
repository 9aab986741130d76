// A partition's folds (FoldSpec): for each downstream COUNT(*) Reduce fed by this partitioned Reduce,
// its step's changes grouped by the downstream group key — one entry per downstream group, with the
// group's first change and the net weight of its changes. The main thread adds the partitions'
// entries up per group (partition-batch.ts) and steps the downstream Reduce on one row per group,
// instead of stepping it on every change (two per touched upstream group) on the main thread.
import type { Value } from '../../common/types.ts';
import { foldIdsFunction, type FoldIds } from './fold-ids.ts';
import { IntEntryIndex, NOT_FOUND } from './int-entry-index.ts';
import type { FoldEntries, FoldSpec } from './partition-protocol.ts';

const NONE: FoldEntries = { count: 0, at: [], weights: [] };

export class PartitionFolds {
  /** By fold: its group ids over a step's change columns, generated. */
  private ids: FoldIds[] = [];
  /** By fold: group id → its entry in this step (cleared every step); int32 ids in their own table. */
  private entryOf: Map<Value, number>[] = [];
  private intEntryOf: IntEntryIndex[] = [];
  /** This step's entries (kept between steps: read before the next step). */
  private readonly at: number[] = [];
  private readonly weights: number[] = [];
  /** A step's group ids, one fold at a time (kept between steps). */
  private readonly stepIds: Value[] = [];

  set(folds: readonly FoldSpec[]): void {
    this.ids = folds.map((f) => foldIdsFunction(f.keys));
    this.entryOf = folds.map(() => new Map<Value, number>());
    this.intEntryOf = folds.map(() => new IntEntryIndex());
  }

  get count(): number {
    return this.ids.length;
  }

  /**
   * The fold entries of a step's `n` changes (`cols[c][j]`, `weights[j]`), fold after fold. A fold
   * whose key fails on a change (a row error) gives one entry with row -1: the main thread then
   * steps that downstream Reduce on every change, and reports the error as it always did.
   */
  fold(cols: readonly ArrayLike<Value>[], weights: ArrayLike<number>, n: number): FoldEntries {
    if (this.ids.length === 0) return NONE;
    const at = this.at;
    const out = this.weights;
    let e = 0;
    const ids = this.stepIds;
    for (let f = 0; f < this.ids.length; f++) {
      const entryOf = this.entryOf[f] as Map<Value, number>;
      const intEntryOf = this.intEntryOf[f] as IntEntryIndex;
      entryOf.clear();
      intEntryOf.clear();
      const first = e;
      try {
        (this.ids[f] as FoldIds)(cols, n, ids);
        for (let j = 0; j < n; j++) {
          const id = ids[j] as Value;
          const w = weights[j] as number;
          // An int32 id (0 and -0 alike, as a Map compares them) in the typed table, any other in the Map.
          let entry: number;
          if (typeof id === 'number' && (id | 0) === id) entry = intEntryOf.entryOrAdd(id, e);
          else {
            entry = entryOf.get(id) ?? NOT_FOUND;
            if (entry === NOT_FOUND) entryOf.set(id, e);
          }
          if (entry === NOT_FOUND) {
            at[2 * e] = f;
            at[2 * e + 1] = j;
            out[e++] = w;
          } else out[entry] = (out[entry] as number) + w;
        }
      } catch {
        // The fold is not available this step: its downstream Reduce reads every change.
        e = first;
        at[2 * e] = f;
        at[2 * e + 1] = -1;
        out[e++] = 0;
      }
    }
    return { count: e, at, weights: out };
  }
}
