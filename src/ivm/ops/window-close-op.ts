// EMIT ON WINDOW CLOSE: a Reduce whose groups are windows, run once per window when it closes. Each
// input row passing the view's WHERE is held as its group keys and aggregate arguments (row → count)
// by its window end; when the table's watermark reaches a window's end, its rows go through a fresh
// Reduce (whose groups are then all new, so its output is inserts only: the final rows, never
// -U/+U) and are freed. Holding rows before the Reduce rather than groups after it frees a window
// with one delete and needs no eviction inside the Reduce. A change to a window already closed (a
// DELETE or UPDATE of an old row) is not applied: it is counted. With an allowed lateness L (Flink's),
// a window closes only once the watermark reaches its end plus L, so changes in that time still apply.
import type { Value } from '../../common/types.ts';
import { compileScalar, type RowFn } from '../../common/scalar-expr.ts';
import { encodeExactValues } from '../../common/values.ts';
import { instantMicros } from '../../common/time/instant-micros.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { ReduceOp, type FusedMap } from './reduce-op.ts';

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

interface HeldRow {
  readonly row: readonly Value[];
  count: number;
}

/** A stored held row: its window end, the row and its multiplicity. */
interface StoredRow {
  readonly e: number;
  readonly r: readonly Value[];
  readonly c: number;
}

const CLOSED_ENTRY = 'closed';
const ROW_PREFIX = 'r';

export class WindowCloseOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  /** The table whose watermark closes windows. */
  readonly table: string;
  /** µs a window stays open after the watermark reaches its end. */
  readonly allowedLateness: number;
  /** The view's WHERE and the Map computing [keys..., arguments...] (null: input rows are those). */
  private readonly filter: RowFn | null;
  private readonly project: readonly RowFn[] | null;
  private readonly keyIndex: number;
  /** The columns of a held row, which the Reduce run at close reads as they are. */
  private readonly heldColumns: readonly ColumnSpec[];
  /** Open windows by end (µs): their held [keys..., arguments...] rows by encoding. */
  private readonly open = new Map<number, Map<string, HeldRow>>();
  /** Windows ending at or before this have been emitted (−∞: none yet). */
  private closedUpTo = -Infinity;
  /** The watermark the next step closes windows at (set by the runtime before each step). */
  private watermark = -Infinity;
  /** Changes not applied: to a closed window, or to a row whose time is NULL (in no window). */
  private ignored = 0;
  private readonly upstream: { readonly ignoredChanges: number }[] = [];
  private tracking = false;
  private exported = false;
  private readonly dirty = new Set<string>();
  private closedDirty = false;

  constructor(
    private readonly node: ReduceNode,
    private readonly inputColumns: readonly ColumnSpec[],
    fused: FusedMap | null,
  ) {
    const close = node.emitOnClose;
    if (close === undefined) throw new Error('WindowCloseOp needs a reduce node with emitOnClose');
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.table = close.table;
    this.keyIndex = close.keyIndex;
    this.allowedLateness = close.allowedLateness ?? 0;
    this.filter = fused === null || fused.filter === null ? null : compileScalar(fused.filter);
    this.project = fused === null ? null : fused.project.map(compileScalar);
    this.heldColumns = fused === null ? inputColumns : (node.fused?.columns ?? inputColumns);
  }

  /** The table's watermark (µs, null before any row) the next step closes windows at. */
  setWatermark(mark: number | null): void {
    if (mark !== null && mark > this.watermark) this.watermark = mark;
  }

  /** Whether the watermark set reaches the end of some open window (so a step would emit). */
  closeDue(watermark: number | null): boolean {
    if (watermark === null) return false;
    const mark = watermark - this.allowedLateness;
    if (mark <= this.closedUpTo) return false;
    for (const end of this.open.keys()) if (end <= mark) return true;
    return false;
  }

  /** Changes to closed windows (or NULL times) not applied, since the view was created. */
  get ignoredChanges(): number {
    let n = this.ignored;
    for (const op of this.upstream) n += op.ignoredChanges;
    return n;
  }

  /**
   * Counts the changes `op` (HOP's panes, pane-close-op.ts) did not apply as this view's; the pane
   * partials reaching closed windows here are then not counted again.
   */
  countIgnoredOf(op: { readonly ignoredChanges: number }): void {
    this.upstream.push(op);
  }

  /** Windows ending at or before this (µs) were emitted; null before the first close. */
  get closedThrough(): number | null {
    return this.closedUpTo === -Infinity ? null : this.closedUpTo;
  }

  /** Whether window_end is a timestamptz (how SHOW WATERMARKS prints `closedThrough`). */
  get zoned(): boolean {
    return this.node.columns[this.node.emitOnClose?.keyIndex ?? 0]?.type.kind === 'timestamptz';
  }

  /** Input rows held for open windows (the whole state but one entry). */
  get heldRows(): number {
    let n = 0;
    for (const rows of this.open.values()) n += rows.size;
    return n;
  }

  /** Open windows. */
  get openWindows(): number {
    return this.open.size;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const input = inputs[0] as ZBatch;
    const n = input.weights.length;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      const w = input.weights[i] as number;
      let held: readonly Value[] = row;
      try {
        if (this.filter !== null && this.filter(row) !== true) continue;
        if (this.project !== null) held = this.project.map((f) => f(row));
      } catch (error) {
        errors.report(error, row, this.inputColumns, w);
        continue;
      }
      const end = held[this.keyIndex] ?? null;
      if (end === null || typeof end !== 'string') {
        this.ignore(w);
        continue;
      }
      const e = instantMicros(end);
      if (e <= this.closedUpTo) {
        this.ignore(w);
        continue;
      }
      this.hold(e, held, w);
    }
    return this.close(errors);
  }

  private ignore(w: number): void {
    if (this.upstream.length > 0) return;
    this.ignored += Math.abs(w);
    this.closedDirty = true;
  }

  private hold(end: number, row: readonly Value[], w: number): void {
    let rows = this.open.get(end);
    if (rows === undefined) {
      rows = new Map();
      this.open.set(end, rows);
    }
    const key = encodeExactValues(row);
    const h = rows.get(key);
    if (this.tracking) this.dirty.add(`${end}|${key}`);
    if (h === undefined) {
      rows.set(key, { row, count: w });
      return;
    }
    h.count += w;
    if (h.count === 0) {
      rows.delete(key);
      if (rows.size === 0) this.open.delete(end);
    }
  }

  /** Emits and frees every open window whose end plus the allowed lateness the watermark reached, earliest first. */
  private close(errors: RowErrorSink): ZBatch {
    const mark = this.watermark - this.allowedLateness;
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    if (mark <= this.closedUpTo) return { rows, weights, consolidated: true };
    const ends = [...this.open.keys()].filter((e) => e <= mark).sort((a, b) => a - b);
    for (const end of ends) {
      const held = this.open.get(end) as Map<string, HeldRow>;
      this.open.delete(end);
      const batch: ZBatch = { rows: [], weights: [], consolidated: true };
      // In key order, not the Map's: a restored window holds its rows in the checkpoint's order,
      // and the emitted changes must come out byte for byte as in a run that never restarted.
      const ordered = [...held].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      for (const [key, h] of ordered) {
        batch.rows.push(h.row);
        batch.weights.push(h.count);
        if (this.tracking) this.dirty.add(`${end}|${key}`);
      }
      // A fresh Reduce per window: every group in it is new, so it emits one insert per group.
      const out = new ReduceOp(this.node, this.heldColumns, null).step([batch], errors);
      for (let i = 0; i < out.weights.length; i++) {
        rows.push(out.rows[i] as readonly Value[]);
        weights.push(out.weights[i] as number);
      }
    }
    this.closedUpTo = mark;
    this.closedDirty = true;
    return { rows, weights, consolidated: true };
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.dirty.clear();
  }

  private closedEntry(): readonly [string, unknown] {
    return [
      CLOSED_ENTRY,
      {
        closed: this.closedUpTo === -Infinity ? null : this.closedUpTo,
        watermark: this.watermark === -Infinity ? null : this.watermark,
        ignored: this.ignored,
      },
    ];
  }

  takeStateDelta(full: boolean): StateDelta {
    if (full || !this.exported) {
      this.exported = true;
      this.dirty.clear();
      this.closedDirty = false;
      const upserts: (readonly [string, unknown])[] = [this.closedEntry()];
      for (const [end, rows] of this.open)
        for (const [k, h] of rows)
          upserts.push([`${ROW_PREFIX}${end}|${k}`, { e: end, r: h.row, c: h.count } satisfies StoredRow]);
      return { replaceAll: true, upserts, deletes: [] };
    }
    const upserts: (readonly [string, unknown])[] = this.closedDirty ? [this.closedEntry()] : [];
    const deletes: string[] = [];
    for (const id of this.dirty) {
      const bar = id.indexOf('|');
      const end = Number(id.slice(0, bar));
      const h = this.open.get(end)?.get(id.slice(bar + 1));
      if (h === undefined) deletes.push(ROW_PREFIX + id);
      else upserts.push([ROW_PREFIX + id, { e: end, r: h.row, c: h.count } satisfies StoredRow]);
    }
    this.dirty.clear();
    this.closedDirty = false;
    return { replaceAll: false, upserts, deletes };
  }

  loadState(values: Iterable<unknown>): void {
    this.open.clear();
    this.closedUpTo = -Infinity;
    this.watermark = -Infinity;
    this.ignored = 0;
    for (const v of values) {
      if (typeof v === 'object' && v !== null && 'closed' in v) {
        const c = v as { closed: number | null; watermark: number | null; ignored: number };
        this.closedUpTo = c.closed ?? -Infinity;
        this.watermark = c.watermark ?? -Infinity;
        this.ignored = c.ignored;
      } else {
        const s = v as StoredRow;
        let rows = this.open.get(s.e);
        if (rows === undefined) {
          rows = new Map();
          this.open.set(s.e, rows);
        }
        rows.set(encodeExactValues(s.r), { row: s.r, count: s.c });
      }
    }
    this.exported = true;
    this.dirty.clear();
    this.closedDirty = false;
  }

  stateSize(): number {
    return this.heldRows * 160 + 64;
  }
}
