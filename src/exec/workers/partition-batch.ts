// A partitioned Reduce's step output (partitioned-reduce.ts): its changes in the order the single
// Reduce emits them. The order and the weights are merged at once (every reader needs the size and
// the view's Output sums the weights); the columns are scattered into that order only when someone
// reads them (a subscriber's changelog, an ordered index, a downstream operator that reads changes).
// A downstream COUNT(*) Reduce reads the partitions' folds instead (partition-fold.ts), so with no
// other reader the main thread never builds the columns. Its changes live in the partitions' reply
// buffers, which the Reduce's next step overwrites: the batch is read within its epoch (as every
// delta is), and a batch whose columns were never built expires at that next step.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { ZBatch } from '../../ivm/zset.ts';
import type { PartChanges } from './partition-protocol.ts';

/** A fold's rows as the main thread adds them up: one per partition and downstream group. */
export interface FoldRows {
  /** By column of the partitioned Reduce's output: each entry's first change's value. */
  readonly cols: readonly Value[][];
  /** Each entry's net weight. */
  readonly weights: readonly number[];
  /** Each entry's first change's place in the merged order (ascending means earlier). */
  readonly order: readonly number[];
}

export class PartitionBatch implements ZBatch {
  readonly consolidated = true;
  private built: Value[][] | null = null;
  private builtRows: Value[][] | null = null;
  private expired = false;

  /**
   * `places[p][i]`: where partition p's change i goes in the merged order; `weights` already merged.
   * `producer`: the partitioned Reduce that stepped (a fold is read only by its own downstream).
   */
  constructor(
    readonly producer: object,
    private readonly parts: readonly PartChanges[],
    private readonly places: readonly Int32Array[],
    private readonly width: number,
    public weights: number[],
    private readonly weightsLent: boolean,
  ) {}

  get cols(): Value[][] {
    if (this.built !== null) return this.built;
    if (this.expired)
      throw new SluiceError('INTERNAL_ERROR', "a partitioned Reduce's changes were read after its next step");
    const total = this.weights.length;
    const cols: Value[][] = [];
    for (let c = 0; c < this.width; c++) {
      const out = new Array<Value>(total);
      for (let p = 0; p < this.parts.length; p++) {
        const r = this.parts[p] as PartChanges;
        const from = r.cols[c];
        if (from === undefined || r.count === 0) continue;
        const place = this.places[p] as Int32Array;
        if (from instanceof Float64Array) scatterF64(out, from, r.nulls[c] ?? null, place, r.count);
        else scatter(out, from, r.nulls[c] ?? null, place, r.count);
      }
      cols.push(out);
    }
    this.built = cols;
    return cols;
  }

  get rows(): Value[][] {
    if (this.builtRows !== null) return this.builtRows;
    const cols = this.cols;
    const n = this.weights.length;
    const rows = new Array<Value[]>(n);
    for (let i = 0; i < n; i++) {
      const row = new Array<Value>(this.width);
      for (let c = 0; c < this.width; c++) row[c] = (cols[c] as Value[])[i] as Value;
      rows[i] = row;
    }
    this.builtRows = rows;
    return rows;
  }

  /**
   * The producer's next step is about to overwrite the buffers the columns would be read from, and
   * the weights when they were lent (a large step's): from here on those reads fail loudly.
   */
  expire(): void {
    if (this.built === null) this.expired = true;
    if (this.weightsLent) this.weights = EXPIRED_WEIGHTS;
  }

  /**
   * Fold `f`'s entries of every partition (one row per partition and downstream group), or null when
   * some partition could not fold this step (then the downstream Reduce reads every change).
   */
  fold(f: number): FoldRows | null {
    if (this.expired) return null;
    const cols: Value[][] = Array.from({ length: this.width }, () => []);
    const weights: number[] = [];
    const order: number[] = [];
    for (let p = 0; p < this.parts.length; p++) {
      const r = this.parts[p] as PartChanges;
      const { count, at, weights: net } = r.folds;
      const place = this.places[p] as Int32Array;
      for (let e = 0; e < count; e++) {
        if (at[2 * e] !== f) continue;
        const j = at[2 * e + 1] as number;
        if (j < 0) return null;
        for (let c = 0; c < this.width; c++) (cols[c] as Value[]).push(valueAt(r, c, j));
        weights.push(net[e] as number);
        order.push(place[j] as number);
      }
    }
    return { cols, weights, order };
  }
}

/** What an expired batch's lent weights are: any read of them is an internal error. */
const EXPIRED_WEIGHTS = new Proxy([], {
  get(): never {
    throw new SluiceError('INTERNAL_ERROR', "a partitioned Reduce's weights were read after its next step");
  },
}) as number[];

function valueAt(r: PartChanges, c: number, j: number): Value {
  const nulls = r.nulls[c];
  if (nulls !== null && nulls !== undefined && nulls[j] === 1) return null;
  return (r.cols[c] as ArrayLike<Value>)[j] as Value;
}

/** `out[place[i]] = from[i]` (NULL where `nulls[i]` is 1) for the `count` changes of a partition. */
export function scatterF64(
  out: Value[],
  from: Float64Array,
  nulls: Uint8Array | null,
  place: Int32Array,
  count: number,
): void {
  if (nulls === null) for (let i = 0; i < count; i++) out[place[i] as number] = from[i] as number;
  else for (let i = 0; i < count; i++) out[place[i] as number] = nulls[i] === 1 ? null : (from[i] as number);
}

/** scatterF64 for a column of values (a separate function: each loop sees one kind of array). */
export function scatter(
  out: Value[],
  from: ArrayLike<Value>,
  nulls: Uint8Array | null,
  place: Int32Array,
  count: number,
): void {
  if (nulls === null) for (let i = 0; i < count; i++) out[place[i] as number] = from[i] as Value;
  else for (let i = 0; i < count; i++) out[place[i] as number] = nulls[i] === 1 ? null : (from[i] as Value);
}
