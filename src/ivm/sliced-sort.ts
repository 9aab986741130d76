// A bottom-up merge sort that can stop at a deadline and resume, so sorting a million rows (an
// ordered index's build) never holds the event loop for long.

const RUN_ROWS = 4096;

/** A bottom-up merge sort that can stop at a deadline and resume: runs sorted first, then merged. */
export class SlicedSort<T> {
  private items: T[];
  private buffer: T[];
  private phase: 'runs' | 'merge' | 'done' = 'runs';
  private next = 0;
  private width = RUN_ROWS;
  // The pair of runs [lo, lo+width) and [lo+width, lo+2·width) being merged into `buffer` at k.
  private lo = 0;
  private i = 0;
  private j = 0;
  private k = 0;

  constructor(
    items: T[],
    private readonly compare: (a: T, b: T) => number,
  ) {
    this.items = items;
    this.buffer = [];
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  result(): T[] {
    return this.items;
  }

  work(deadline: number): boolean {
    while (this.phase !== 'done') {
      if (this.phase === 'runs') this.sortRuns(deadline);
      else this.mergeStep(deadline);
      if (!this.done && performance.now() >= deadline) return false;
    }
    return true;
  }

  private sortRuns(deadline: number): void {
    const items = this.items;
    while (this.next < items.length) {
      const end = Math.min(items.length, this.next + RUN_ROWS);
      const run = items.slice(this.next, end).sort(this.compare);
      for (let r = 0; r < run.length; r++) items[this.next + r] = run[r] as T;
      this.next = end;
      if (performance.now() >= deadline) return;
    }
    this.startPass();
  }

  private startPass(): void {
    if (this.width >= this.items.length) {
      this.phase = 'done';
      this.buffer = [];
      return;
    }
    if (this.buffer.length !== this.items.length) this.buffer = new Array<T>(this.items.length);
    this.phase = 'merge';
    this.lo = 0;
    this.startPair();
  }

  private startPair(): void {
    this.i = this.lo;
    this.j = Math.min(this.items.length, this.lo + this.width);
    this.k = this.lo;
  }

  private mergeStep(deadline: number): void {
    const src = this.items;
    const dst = this.buffer;
    const n = src.length;
    const cmp = this.compare;
    let steps = 0;
    for (;;) {
      const mid = Math.min(n, this.lo + this.width);
      const hi = Math.min(n, this.lo + 2 * this.width);
      while (this.k < hi) {
        if (this.j >= hi || (this.i < mid && cmp(src[this.i] as T, src[this.j] as T) <= 0)) {
          dst[this.k++] = src[this.i++] as T;
        } else dst[this.k++] = src[this.j++] as T;
        if (++steps === 4096) {
          steps = 0;
          if (performance.now() >= deadline) return;
        }
      }
      this.lo = hi;
      if (this.lo >= n) {
        // A pass is done: the sorted runs are twice as wide.
        this.items = dst;
        this.buffer = src;
        this.width *= 2;
        this.startPass();
        return;
      }
      this.startPair();
    }
  }
}
