// A table's ordered index for paged REST reads (GET /v1/tables/{name}/rows), the way a view's
// OutputOp keeps one: nothing until the first read, then built in slices — the rows captured by
// reference, copied out and sorted a deadline at a time — while batches go on (their changes are
// queued and applied once it is built), and from then on kept up to date by every batch.
import type { Value } from '../common/types.ts';
import { IndexBuild, OrderedIndex } from '../ivm/ordered-index.ts';
import type { RowCapture } from '../ivm/row-capture.ts';

/** Rows copied out of a capture per step between deadline checks. */
const CAPTURE_SLICE = 4096;

export class ReadIndex {
  private index: OrderedIndex | null = null;
  private building: {
    readonly capture: RowCapture;
    readonly rows: (readonly Value[])[];
    readonly counts: number[] | null;
    copied: number;
    build: IndexBuild | null;
    readonly queue: { rows: (readonly Value[])[]; weights: number[] }[];
  } | null = null;

  constructor(
    /** Positions of the order columns: the primary key, else every column. */
    private readonly order: readonly number[],
    /** Rows carry multiplicities (a keyless table). */
    private readonly counted: boolean,
    private readonly width: number,
    /** The table's current rows, by reference. */
    private readonly capture: () => RowCapture,
  ) {}

  /** The index, or null while it is still being built (call again after yielding). */
  get(deadline: number): OrderedIndex | null {
    if (this.index !== null) return this.index;
    if (this.building === null) {
      this.building = {
        capture: this.capture(),
        rows: [],
        counts: this.counted ? [] : null,
        copied: 0,
        build: null,
        queue: [],
      };
    }
    const b = this.building;
    while (b.build === null) {
      if (b.copied >= b.capture.length) {
        b.build = new IndexBuild(this.order, 32 + this.width * 16, b.rows, b.counts);
        break;
      }
      const slice = b.capture.slice(b.copied, b.copied + CAPTURE_SLICE);
      for (let i = 0; i < slice.rows.length; i++) {
        b.rows.push(slice.rows[i] as readonly Value[]);
        b.counts?.push(slice.weights[i] as number);
      }
      b.copied += CAPTURE_SLICE;
      if (performance.now() >= deadline) return null;
    }
    if (!b.build.work(deadline)) return null;
    for (const q of b.queue) b.build.index.apply(q.rows, q.weights);
    this.index = b.build.index;
    this.building = null;
    return this.index;
  }

  /** One batch's changes (deletes as -1, inserts as +1), once the index exists or is being built. */
  /** Whether the index exists or is being built: only then does `apply` need the rows. */
  get active(): boolean {
    return this.index !== null || this.building !== null;
  }

  apply(rows: readonly (readonly Value[])[], weights: readonly number[]): void {
    if (rows.length === 0) return;
    if (this.index !== null) this.index.apply(rows, weights);
    else if (this.building !== null)
      this.building.queue.push({ rows: rows.slice(), weights: weights.slice() });
  }

  /** Forgets the index (state replaced by a checkpoint load): rebuilt on the next read. */
  drop(): void {
    this.index = null;
    this.building = null;
  }
}
