// HOP's pane Reduce under EMIT ON WINDOW CLOSE (lower-hop-panes.ts): a Reduce per (keys, pane) whose
// groups are dropped, without output, once the table's watermark reaches the end of the pane's last
// window (start + size) plus the view's allowed lateness — every window the pane feeds has closed
// downstream by then. A change to such a pane is not applied; a change to a pane some of whose
// windows closed is applied (it reaches the open ones) and counted once per closed window, as the
// one-row-per-window plan counts it.
import type { Value } from '../../common/types.ts';
import { compileScalar, type RowFn } from '../../common/scalar-expr.ts';
import { instantMicros } from '../../common/time/instant-micros.ts';
import type { ColumnSpec, DataflowNode, PaneClose } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { ReduceOp } from './reduce-op.ts';

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

/** The entry holding the close point (the Reduce's own entries are encoded group keys). */
const CLOSED_ENTRY = '#closed';

interface ClosedState {
  readonly closedPanes: number | null;
  readonly watermark: number | null;
  readonly ignored: number;
}

export class PaneCloseOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  readonly table: string;
  private readonly reduce: ReduceOp;
  private readonly spec: PaneClose;
  private readonly windows: number;
  private readonly filter: RowFn | null;
  private readonly pane: RowFn;
  /** Windows ending at or before this (µs) have closed downstream (−∞: none yet). */
  private closedUpTo = -Infinity;
  private watermark = -Infinity;
  /** Changes not applied to closed windows, counted per (row, closed window). */
  private ignored = 0;
  private closedDirty = false;

  constructor(node: ReduceNode, inputColumns: readonly ColumnSpec[]) {
    const spec = node.closePanes;
    const fused = node.fused;
    if (spec === undefined || fused === null)
      throw new Error('PaneCloseOp needs a fused reduce node with closePanes');
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.table = spec.table;
    this.spec = spec;
    this.windows = Math.round(spec.sizeMicros / spec.slideMicros);
    this.reduce = new ReduceOp(node, fused.columns, {
      filter: fused.filter,
      project: fused.project,
      inputColumns,
    });
    this.filter = fused.filter === null ? null : compileScalar(fused.filter);
    this.pane = compileScalar(fused.project[spec.keyIndex] as NonNullable<(typeof fused.project)[number]>);
  }

  setWatermark(mark: number | null): void {
    if (mark !== null && mark > this.watermark) this.watermark = mark;
  }

  /** Changes to closed windows this operator did not apply (per closed window), since creation. */
  get ignoredChanges(): number {
    return this.ignored;
  }

  /** Pane groups held (the panes some open window still needs). */
  groupCount(): number {
    return this.reduce.groupCount();
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    let input = inputs[0] as ZBatch;
    if (this.closedUpTo !== -Infinity) input = this.dropClosed(input);
    const out = this.reduce.step([input], errors);
    // Windows close when the watermark reaches their end plus the allowed lateness (WindowCloseOp).
    const mark = this.watermark - (this.spec.allowedLateness ?? 0);
    if (mark > this.closedUpTo) {
      const { keyIndex, sizeMicros } = this.spec;
      this.reduce.evict((key) => {
        const start = key[keyIndex];
        return typeof start === 'string' && instantMicros(start) + sizeMicros <= mark;
      });
      this.closedUpTo = mark;
      this.closedDirty = true;
    }
    return out;
  }

  /** `input` less the rows of panes whose windows all closed; counts every closed window changed. */
  private dropClosed(input: ZBatch): ZBatch {
    const { sizeMicros, slideMicros } = this.spec;
    const closed = this.closedUpTo;
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const n = input.weights.length;
    let dropped = false;
    for (let i = 0; i < n; i++) {
      const row = input.rows[i] as readonly Value[];
      const w = input.weights[i] as number;
      let start: Value;
      try {
        if (this.filter !== null && this.filter(row) !== true) continue;
        start = this.pane(row);
      } catch {
        // The Reduce reports the row's error.
        rows.push(row);
        weights.push(w);
        continue;
      }
      if (typeof start === 'string') {
        const s = instantMicros(start);
        // The pane's windows end at s + slide, s + 2·slide, … s + size: those ≤ `closed` have closed.
        const shut = Math.min(this.windows, Math.max(0, Math.floor((closed - s) / slideMicros)));
        if (shut > 0) {
          this.ignored += Math.abs(w) * shut;
          this.closedDirty = true;
        }
        if (s + sizeMicros <= closed) {
          dropped = true;
          continue;
        }
      }
      rows.push(row);
      weights.push(w);
    }
    return dropped ? { rows, weights, consolidated: input.consolidated } : input;
  }

  trackChanges(on: boolean): void {
    this.reduce.trackChanges(on);
  }

  private closedEntry(): readonly [string, unknown] {
    return [
      CLOSED_ENTRY,
      {
        closedPanes: this.closedUpTo === -Infinity ? null : this.closedUpTo,
        watermark: this.watermark === -Infinity ? null : this.watermark,
        ignored: this.ignored,
      } satisfies ClosedState,
    ];
  }

  takeStateDelta(full: boolean): StateDelta {
    const delta = this.reduce.takeStateDelta(full);
    const closed = delta.replaceAll || this.closedDirty ? [this.closedEntry()] : [];
    this.closedDirty = false;
    return { ...delta, upserts: [...delta.upserts, ...closed] };
  }

  loadState(values: Iterable<unknown>): void {
    this.closedUpTo = -Infinity;
    this.watermark = -Infinity;
    this.ignored = 0;
    const groups: unknown[] = [];
    for (const v of values) {
      if (typeof v === 'object' && v !== null && 'closedPanes' in v) {
        const c = v as ClosedState;
        this.closedUpTo = c.closedPanes ?? -Infinity;
        this.watermark = c.watermark ?? -Infinity;
        this.ignored = c.ignored;
      } else groups.push(v);
    }
    this.reduce.loadState(groups);
    this.closedDirty = false;
  }

  stateSize(): number {
    return this.reduce.stateSize();
  }
}
