// Temporal filter: a row passes while the epoch's logical clock t is inside its window [enter, leave)
// — the intersection of its bounds (`ts > now() - interval '1 hour'`: leave = ts + 1 h). A row's
// window is a function of the row alone, so whether it is held is too: rows waiting to enter, and
// rows inside a finite window, are kept (row → count) and indexed by the clock value at which they
// next change; a step first moves the clock, touching only the rows whose bound it crosses, then
// judges the input delta at the new clock. A row past its window is freed; one inside an endless
// window is emitted and not kept (its retraction comes as input and is judged the same way).
import type { Value } from '../../common/types.ts';
import { encodeExactValues } from '../../common/values.ts';
import { compileScalar, type RowFn } from '../../common/scalar-expr.ts';
import { boundWindow, type TemporalBound, type TemporalOp } from '../../common/temporal-bound.ts';
import { instantMicros } from '../../common/time/instant-micros.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';

interface Held {
  readonly row: readonly Value[];
  count: number;
  readonly enter: number;
  readonly leave: number;
  /** The clock value at which this row next changes (its enter, then its leave). */
  due: number;
}

/** What a stored entry holds: the row and its multiplicity (its window is computed again). */
interface StoredRow {
  readonly r: readonly Value[];
  readonly c: number;
}

const CLOCK_ENTRY = 'clock';
const ROW_PREFIX = 'r';

export class TemporalFilterOp implements Operator, Stateful {
  private readonly bounds: readonly {
    readonly fn: RowFn;
    readonly op: TemporalOp;
    readonly offset: number;
  }[];
  private readonly held = new Map<string, Held>();
  /** Row keys by the clock value at which they next change. */
  private readonly byTime = new Map<number, Set<string>>();
  /** A min-heap of the times in `byTime` (stale entries, whose set went, are skipped and pruned). */
  private heap: number[] = [];
  /** The clock of the last step (−∞ before the first): the state is the filter's at this clock. */
  private clock = -Infinity;
  /** The clock the next step moves to (set by the runtime before each step). */
  private target = -Infinity;
  /** Rows a clock move looked at, for tests: a move crossing k bounds touches k rows. */
  rowsTouched = 0;
  private tracking = false;
  private exported = false;
  private readonly dirty = new Set<string>();
  private clockDirty = false;

  constructor(
    readonly nodeId: number,
    readonly stateId: string,
    bounds: readonly TemporalBound[],
    private readonly inputColumns: readonly ColumnSpec[],
  ) {
    this.bounds = bounds.map((b) => ({ fn: compileScalar(b.expr), op: b.op, offset: b.offset }));
  }

  /** The clock the next step runs at (never earlier than the last one's). */
  setClock(clock: number): void {
    this.target = Math.max(clock, this.clock);
  }

  /** The earliest clock value at which a held row enters or leaves (Infinity: none). */
  nextDue(): number {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined) return Infinity;
      if (this.byTime.has(top)) return top;
      this.popHeap();
    }
  }

  /** The row's window [enter, leave), or null when a bound is NULL (the row never passes). */
  private window(row: readonly Value[]): readonly [number, number] | null {
    let enter = -Infinity;
    let leave = Infinity;
    for (const b of this.bounds) {
      const v = b.fn(row);
      if (v === null) return null;
      const [e, l] = boundWindow(b.op, instantMicros(v as string), b.offset);
      if (e > enter) enter = e;
      if (l < leave) leave = l;
    }
    return [enter, leave];
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const now = this.target;
    if (now > this.clock) this.advance(now, rows, weights);
    const input = inputs[0] as ZBatch;
    const n = input.rows.length;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      const w = input.weights[i] as number;
      let win: readonly [number, number] | null;
      try {
        win = this.window(row);
      } catch (error) {
        errors.report(error, row, this.inputColumns, w);
        continue;
      }
      if (win === null) continue;
      const [enter, leave] = win;
      if (enter <= now && now < leave) {
        rows.push(row);
        weights.push(w);
      }
      if (now < leave && (enter > now || leave !== Infinity)) this.hold(row, w, enter, leave, now);
    }
    return { rows, weights, consolidated: false };
  }

  /** Moves the clock to `now`: each row whose due time it reaches enters, leaves or both. */
  private advance(now: number, rows: (readonly Value[])[], weights: number[]): void {
    const before = this.clock;
    this.clock = now;
    this.clockDirty = true;
    for (let t = this.nextDue(); t <= now; t = this.nextDue()) {
      this.popHeap();
      const keys = this.byTime.get(t) as Set<string>;
      this.byTime.delete(t);
      for (const key of keys) {
        this.rowsTouched += 1;
        const h = this.held.get(key) as Held;
        const was = h.enter <= before && before < h.leave;
        const is = h.enter <= now && now < h.leave;
        if (was !== is) {
          rows.push(h.row);
          weights.push(is ? h.count : -h.count);
        }
        const due = h.enter > now ? h.enter : h.leave > now && h.leave !== Infinity ? h.leave : null;
        if (due === null) {
          this.held.delete(key);
          this.markDirty(key);
        } else this.schedule(key, h, due);
      }
    }
  }

  private hold(row: readonly Value[], w: number, enter: number, leave: number, now: number): void {
    const key = encodeExactValues(row);
    const h = this.held.get(key);
    this.markDirty(key);
    if (h === undefined) {
      const added: Held = { row, count: w, enter, leave, due: enter > now ? enter : leave };
      this.held.set(key, added);
      this.index(key, added.due);
      return;
    }
    h.count += w;
    if (h.count !== 0) return;
    this.held.delete(key);
    const set = this.byTime.get(h.due);
    set?.delete(key);
    if (set?.size === 0) this.byTime.delete(h.due);
  }

  private schedule(key: string, h: Held, due: number): void {
    h.due = due;
    this.index(key, due);
  }

  private index(key: string, due: number): void {
    let set = this.byTime.get(due);
    if (set === undefined) {
      set = new Set();
      this.byTime.set(due, set);
      this.pushHeap(due);
    }
    set.add(key);
  }

  private markDirty(key: string): void {
    if (this.tracking) this.dirty.add(key);
  }

  private pushHeap(t: number): void {
    // Times whose rows all went stay in the heap until popped; rebuild it before they outgrow the live ones.
    if (this.heap.length > 2 * this.byTime.size + 64) {
      this.heap = [...this.byTime.keys()].sort((a, b) => a - b);
    }
    const heap = this.heap;
    heap.push(t);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as number) <= t) break;
      heap[i] = heap[parent] as number;
      heap[parent] = t;
      i = parent;
    }
  }

  private popHeap(): void {
    const heap = this.heap;
    const last = heap.pop() as number;
    if (heap.length === 0) return;
    heap[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && (heap[l] as number) < (heap[m] as number)) m = l;
      if (r < heap.length && (heap[r] as number) < (heap[m] as number)) m = r;
      if (m === i) return;
      heap[i] = heap[m] as number;
      heap[m] = last;
      i = m;
    }
  }

  /** Rows held (waiting to enter, or inside a finite window). */
  get heldRows(): number {
    return this.held.size;
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  takeStateDelta(full: boolean): StateDelta {
    const clockEntry: readonly [string, unknown] = [
      CLOCK_ENTRY,
      { clock: this.clock === -Infinity ? null : this.clock },
    ];
    if (full || !this.exported) {
      this.exported = true;
      this.dirty.clear();
      this.clockDirty = false;
      const upserts: (readonly [string, unknown])[] = [clockEntry];
      for (const [k, h] of this.held)
        upserts.push([ROW_PREFIX + k, { r: h.row, c: h.count } satisfies StoredRow]);
      return { replaceAll: true, upserts, deletes: [] };
    }
    const upserts: (readonly [string, unknown])[] = this.clockDirty ? [clockEntry] : [];
    const deletes: string[] = [];
    for (const k of this.dirty) {
      const h = this.held.get(k);
      if (h === undefined) deletes.push(ROW_PREFIX + k);
      else upserts.push([ROW_PREFIX + k, { r: h.row, c: h.count } satisfies StoredRow]);
    }
    this.dirty.clear();
    this.clockDirty = false;
    return { replaceAll: false, upserts, deletes };
  }

  loadState(values: Iterable<unknown>): void {
    this.held.clear();
    this.byTime.clear();
    this.heap = [];
    const rows: StoredRow[] = [];
    for (const v of values) {
      if (typeof v === 'object' && v !== null && 'clock' in v) {
        const c = (v as { clock: number | null }).clock;
        this.clock = c ?? -Infinity;
      } else rows.push(v as StoredRow);
    }
    this.target = this.clock;
    for (const s of rows) {
      // Held rows' windows were computed before: evaluating them again cannot fail.
      const [enter, leave] = this.window(s.r) as readonly [number, number];
      const added: Held = { row: s.r, count: s.c, enter, leave, due: enter > this.clock ? enter : leave };
      this.held.set(encodeExactValues(s.r), added);
      this.index(encodeExactValues(s.r), added.due);
    }
    this.exported = true;
    this.dirty.clear();
    this.clockDirty = false;
  }

  stateSize(): number {
    return this.held.size * 160;
  }
}
