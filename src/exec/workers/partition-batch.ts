// A partitioned Reduce's step output (partitioned-reduce.ts): its changes in the order the single
// Reduce emits them (first touch). Nothing is merged when the step ends: the order and the weights
// are merged on the first read of `weights`, `cols` or `rows` (a subscriber's changelog, an ordered
// index, an operator that reads the changes), the columns scattered into that order then too. What
// the canonical pipeline's readers need comes without it: the batch's size (`size`), its net weight
// (each partition's own sum, for the view's Output) and the folds (partition-fold.ts), ordered by
// each entry's group's first row. Its changes live in the partitions' reply buffers, which the
// Reduce's next step overwrites: the batch is read within its epoch (as every delta is), and a batch
// whose changes were not merged (or whose weights were lent) expires at that next step.
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

/** From this many changes a step's merged weights go into the array kept between steps (below it a
 * fresh array is a cheap young allocation; above ≈ 16,000 one is a large object). */
const LEND_WEIGHTS_FROM = 4096;

/**
 * A partitioned Reduce's merge scratch, kept between its steps (a step's batch reads it until the
 * next step): by partition each change's place in the merged order, by batch row the partition
 * whose group's first row it is and where that group's changes begin, and a large step's weights.
 */
export class MergeScratch {
  places: Int32Array[] = [];
  ownerAt = new Uint8Array(0);
  runAt = new Int32Array(0);
  /** A large step's merged weights, lent to its batch until the next step (as a Reduce lends its
   * change columns: an array of ≈ 20,000 numbers is a large-object allocation every step). */
  readonly lentWeights: number[] = [];
  /** How many steps' changes were merged (for tests: a step nobody reads the changes of merges none). */
  merges = 0;

  /** An array for `total` merged weights: the kept one for a large step, else a fresh one. */
  weightsFor(total: number): number[] {
    if (total < LEND_WEIGHTS_FROM) return new Array<number>(total);
    const weights = this.lentWeights;
    weights.length = total;
    return weights;
  }
}

/** Where each change goes in the merged order (by partition), and the weights in that order. */
interface Merged {
  readonly places: readonly Int32Array[];
  readonly weights: number[];
}

export class PartitionBatch implements ZBatch {
  readonly consolidated = true;
  /** The number of changes (read without merging them). */
  readonly size: number;
  /** The sum of the changes' weights (each partition's own sum). */
  readonly net: number;
  private merged: Merged | null = null;
  private built: Value[][] | null = null;
  private builtRows: Value[][] | null = null;
  private expired = false;
  private weightsExpired = false;

  /**
   * `parts[p]`: partition p's changes, in its own first-touch order, tagged with their groups' first
   * rows among the batch's `batchRows`; `producer`: the partitioned Reduce that stepped (a fold is
   * read only by its own downstream); `scratch`: the producer's, which its next step reuses.
   */
  constructor(
    readonly producer: object,
    private readonly parts: readonly PartChanges[],
    private readonly batchRows: number,
    private readonly width: number,
    private readonly scratch: MergeScratch,
  ) {
    let size = 0;
    let net = 0;
    for (const r of parts) {
      size += r.count;
      net += r.net;
    }
    this.size = size;
    this.net = net;
  }

  get weights(): number[] {
    if (this.weightsExpired)
      throw new SluiceError('INTERNAL_ERROR', "a partitioned Reduce's weights were read after its next step");
    return this.merge().weights;
  }

  get cols(): Value[][] {
    if (this.built !== null) return this.built;
    const { places } = this.merge();
    const total = this.size;
    const cols: Value[][] = [];
    for (let c = 0; c < this.width; c++) {
      const out = new Array<Value>(total);
      for (let p = 0; p < this.parts.length; p++) {
        const r = this.parts[p] as PartChanges;
        const from = r.cols[c];
        if (from === undefined || r.count === 0) continue;
        const place = places[p] as Int32Array;
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
    const n = this.size;
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
   * The producer's next step is about to overwrite the reply buffers and the merge scratch: from here
   * on a read of what was not built from them (the merge, the columns, lent weights) fails loudly.
   */
  expire(): void {
    if (this.built === null) this.expired = true;
    if (this.merged === null || this.merged.weights === this.scratch.lentWeights) this.weightsExpired = true;
  }

  /**
   * The partitions' changes merged by their groups' first rows (each partition's list already is in
   * that order): each change's place in the merged order, and the weights in it.
   */
  private merge(): Merged {
    if (this.merged !== null) return this.merged;
    if (this.expired)
      throw new SluiceError('INTERNAL_ERROR', "a partitioned Reduce's changes were read after its next step");
    const parts = this.parts;
    const P = parts.length;
    const n = this.batchRows;
    const total = this.size;
    const scratch = this.scratch;
    scratch.merges++;
    const places = scratch.places;
    for (let p = 0; p < P; p++) {
      const count = (parts[p] as PartChanges).count;
      if (places[p] === undefined || (places[p] as Int32Array).length < count)
        places[p] = new Int32Array(Math.max(64, 2 * count));
    }
    // A change's tag is its group's first row in the batch, one group a row: mark, by batch row, the
    // partition whose group starts there and where its changes begin, then walk the rows in order —
    // the groups come out in first-touch order without comparing partitions.
    if (scratch.ownerAt.length < n) {
      scratch.ownerAt = new Uint8Array(2 * n);
      scratch.runAt = new Int32Array(2 * n);
    }
    const ownerAt = scratch.ownerAt;
    const runAt = scratch.runAt;
    ownerAt.fill(0, 0, n);
    for (let p = 0; p < P; p++) {
      const r = parts[p] as PartChanges;
      const touch = r.touch;
      let prev = -1;
      for (let i = 0; i < r.count; i++) {
        const t = touch[i] as number;
        if (t === prev) continue;
        ownerAt[t] = p + 1;
        runAt[t] = i;
        prev = t;
      }
    }
    const weights = scratch.weightsFor(total);
    let k = 0;
    for (let t = 0; t < n && k < total; t++) {
      const owner = ownerAt[t] as number;
      if (owner === 0) continue;
      // Every change of that group (its -old and +new) comes from that partition, in its order.
      const r = parts[owner - 1] as PartChanges;
      const touch = r.touch;
      const from = r.weights;
      const place = places[owner - 1] as Int32Array;
      for (let i = runAt[t] as number; i < r.count && touch[i] === t; i++) {
        place[i] = k;
        weights[k++] = from[i] as number;
      }
    }
    if (k !== total)
      throw new SluiceError('INTERNAL_ERROR', 'a partition tagged a change with no row of the batch');
    this.merged = { places: places.slice(0, P), weights };
    return this.merged;
  }

  /**
   * Fold `f`'s entries of every partition (one row per partition and downstream group), or null when
   * some partition could not fold this step (then the downstream Reduce reads every change). An
   * entry's order is its first change's place in the merged order, or (unmerged) a number that sorts
   * the same: its group's first row, then its index in the partition's list — a group's changes all
   * come from one partition, in its order, and two groups never share a first row.
   */
  fold(f: number): FoldRows | null {
    if (this.expired) return null;
    const places = this.merged?.places ?? null;
    // touch · span + j is exact below 2^53; a batch too large for it merges first.
    const span = this.size + 1;
    const byPlace = places !== null || this.batchRows * span >= Number.MAX_SAFE_INTEGER;
    const placesOf = byPlace ? this.merge().places : null;
    const cols: Value[][] = Array.from({ length: this.width }, () => []);
    const weights: number[] = [];
    const order: number[] = [];
    for (let p = 0; p < this.parts.length; p++) {
      const r = this.parts[p] as PartChanges;
      const { count, at, weights: net } = r.folds;
      const place = placesOf === null ? null : (placesOf[p] as Int32Array);
      for (let e = 0; e < count; e++) {
        if (at[2 * e] !== f) continue;
        const j = at[2 * e + 1] as number;
        if (j < 0) return null;
        for (let c = 0; c < this.width; c++) (cols[c] as Value[]).push(valueAt(r, c, j));
        weights.push(net[e] as number);
        order.push(place === null ? (r.touch[j] as number) * span + j : (place[j] as number));
      }
    }
    return { cols, weights, order };
  }
}

/** A batch's number of changes: a partitioned Reduce's are counted without merging them. */
export function batchSize(batch: ZBatch): number {
  return batch instanceof PartitionBatch ? batch.size : batch.weights.length;
}

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
