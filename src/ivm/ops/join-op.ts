// Binary join, incremental by the delta rule: Δ(L ⋈ R) = ΔL ⋈ R_old + L_new ⋈ ΔR. Both inputs are
// arranged by their join key; an epoch first probes the right arrangement with the left delta and
// folds the delta into the left arrangement, then probes the updated left arrangement with the right
// delta. A NULL in a key never matches. Outer joins emit NULL-padded rows for rows without a match
// and retract them when the first match arrives (re-emitting them when the last one leaves); with a
// residual condition, "has a match" is counted per arranged row (`matches`), since it then depends on
// the pair, not just the key. With no key at all every row meets every row (a cross product).
// A side may probe a shared arrangement (one per relation and key, kept by the graph for every view):
// that one is already at the epoch's new state when the join steps, so the join takes that side's
// delta first (probing the other side's old state), never folds it in, and then the other side's
// delta probes it — the same delta rule with the sides in the other order. A side read from a keyed
// table's own rows (join-table-side.ts: a scan of the table joined on its primary key) is such a
// side too: the table has applied the epoch's batch when the join steps. An inner join may have both
// sides at the new state (a table's rows on one, a shared arrangement on the other): then
// Δ(L ⋈ R) = ΔL ⋈ R_new + L_new ⋈ ΔR − ΔL ⋈ ΔR, the last term (deltas of one epoch on both sides: a
// self-join, a view's first step) joined between the deltas alone.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { type RowFn, compileScalar } from '../../common/scalar-expr.ts';
import { type JoinKey, type KeyFn, compileKey, keyCannotFail, keyEntryId } from '../join-key.ts';
import type { RowProjector } from './map-op.ts';
import { compileProjection } from './map-op.ts';
import { JoinArrangement, NO_ROW } from '../join-arrangement.ts';
import {
  type PairBuilder,
  type PairColumns,
  type RowPicker,
  appendRow,
  type PairKeptBuilder,
  type PairKeptColumns,
  pairColumns,
  pairJoiner,
  pairKeptColumns,
  pairKeptPicker,
  pairPicker,
  rowPicker,
} from './join-rows.ts';
import { NO_SLOT } from '../group-index.ts';
import { type JoinSideRows, TableJoinSide } from '../join-table-side.ts';
import { StagedProbe } from './join-staged-probe.ts';
import { columnPicks, keepsEveryColumn } from './join-picks.ts';
import { forEachDeltaPair } from './join-delta-pairs.ts';
import { holdsKeyOf, joinedRows, probeRows, rowsUnderOneKey } from './join-fanout-probe.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { ColumnBatch, consolidate } from '../zset.ts';
import { type JoinBudget, MIN_COLUMN_BATCH, chargeJoinBudget, expectedOutput } from './join-output-size.ts';

export type { JoinBudget } from './join-output-size.ts';

type JoinNode = Extract<DataflowNode, { kind: 'join' }>;

const LEFT = 0;
const RIGHT = 1;
type Side = typeof LEFT | typeof RIGHT;

export { joinProbeWork } from './join-fanout-probe.ts';

/** The pending delta of a shared side when the other side does not pad: never read nor written. */
const NO_PENDING = new Map<JoinKey, number>();

export class JoinOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  private readonly arranged: readonly [JoinSideRows, JoinSideRows];
  /**
   * The side whose arrangement is shared (kept up to date by its owner, not by this join), or read
   * from a table's rows (`tableSide`).
   */
  private readonly sharedSide: Side | null;
  private readonly tableSide: TableJoinSide | null;
  /** With a table side, the other side's shared arrangement (inner joins), or null. */
  private readonly otherShared: JoinArrangement | null;
  private readonly keys: readonly [KeyFn, KeyFn];
  /** Whether each side's key never throws (a plain column): then it need not be computed unread. */
  private readonly keysCannotFail: readonly [boolean, boolean];
  private readonly pad: readonly [boolean, boolean];
  private readonly residual: RowFn | null;
  /** Per-row match counts are kept only where padding depends on them. */
  private readonly countMatches: boolean;
  private readonly widths: readonly [number, number];
  private readonly byColumn: boolean;
  private readonly inputColumns: readonly [readonly ColumnSpec[], readonly ColumnSpec[]];
  /** The joined row's columns (left, then right): what the residual and the fused Map read. */
  private readonly joinedColumns: readonly ColumnSpec[];
  /** The fused Map stage over emitted rows (null: none), and its projection when it only picks columns. */
  private readonly filter: RowFn | null;
  private readonly project: RowProjector | null;
  private readonly pick: RowPicker | null;
  /** The joined row of a pair, and (a projection that only picks) its projected row, by delta side. */
  private readonly joinPair: readonly [PairBuilder, PairBuilder];
  private readonly pickPair: readonly [PairBuilder, PairBuilder] | null;
  /**
   * Rows emitted by column (`fused.byColumn`): the output's width, and what a match appends to the
   * step's column arrays when its row is picked columns of the pair (null: built, then appended).
   */
  private readonly outWidth: number;
  private readonly pickColumns: readonly [PairColumns, PairColumns] | null;
  /**
   * `pickColumns` reading the arranged side's picked values from its arrangement's kept columns, by
   * delta side (null where they are not kept: more than the arrangement keeps).
   */
  private readonly keptColumns: readonly [PairKeptColumns | null, PairKeptColumns | null];
  /**
   * The same picks built as a row (a step too small to emit by column), reading the arranged side's
   * values from the same kept columns, by delta side (null where they are not kept).
   */
  private readonly keptRows: readonly [PairKeptBuilder | null, PairKeptBuilder | null];
  /** This step's output columns, while emitting by column. */
  private cols: Value[][] | null = null;
  /**
   * Whether a step with a delta on one side only emits each row at most once: its rows pair
   * distinct delta rows with distinct arranged rows, and a projection that drops no column it
   * cannot recover (one equated by the key to a column it keeps) keeps them distinct. Outer joins
   * pad and unpad, so their rows may cancel.
   */
  private readonly distinctWhenOneSided: boolean;
  /** The by-column probe in passes (`applyDelta`), with its per-row scratch arrays. */
  private readonly staged = new StagedProbe();
  /** Rows built in this step (the budget counts work, whatever a fused filter keeps). */
  private produced = 0;
  private exported = false;

  constructor(
    node: JoinNode,
    left: readonly ColumnSpec[],
    right: readonly ColumnSpec[],
    private budget: JoinBudget | null = null,
    shared: JoinArrangement | TableJoinSide | null = null,
    otherShared: JoinArrangement | null = null,
  ) {
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.sharedSide = shared === null || node.shared === null ? null : node.shared.side;
    this.tableSide = this.sharedSide !== null && shared instanceof TableJoinSide ? shared : null;
    this.otherShared =
      this.tableSide !== null && otherShared !== null && node.joinKind === 'inner' ? otherShared : null;
    const width = node.leftKey.length;
    const own = (side: Side): JoinSideRows =>
      side === this.sharedSide
        ? (shared as JoinSideRows)
        : this.otherShared !== null
          ? this.otherShared
          : new JoinArrangement(
              `join n${node.id} ${side === LEFT ? 'left' : 'right'} arrangement`,
              side === LEFT ? 'L' : 'R',
              (key) => keyEntryId(key, width),
            );
    this.arranged = [own(LEFT), own(RIGHT)];
    this.keys = [compileKey(node.leftKey), compileKey(node.rightKey)];
    this.keysCannotFail = [keyCannotFail(node.leftKey), keyCannotFail(node.rightKey)];
    this.pad = [
      node.joinKind === 'left' || node.joinKind === 'full',
      node.joinKind === 'right' || node.joinKind === 'full',
    ];
    this.residual = node.residual === null ? null : compileScalar(node.residual);
    this.countMatches = this.residual !== null && (this.pad[0] || this.pad[1]);
    this.widths = [left.length, right.length];
    this.inputColumns = [left, right];
    this.joinedColumns = node.fused?.joined ?? node.columns;
    this.filter = node.fused?.filter == null ? null : compileScalar(node.fused.filter);
    const project = node.fused?.project ?? null;
    const picks = project !== null && project.every((e) => e.kind === 'col') ? columnPicks(project) : null;
    this.pick = picks === null ? null : rowPicker(picks);
    this.project = project === null || picks !== null ? null : compileProjection(project);
    this.joinPair = [
      pairJoiner(left.length, right.length, true),
      pairJoiner(left.length, right.length, false),
    ];
    this.pickPair =
      picks === null ? null : [pairPicker(picks, left.length, true), pairPicker(picks, left.length, false)];
    this.outWidth = node.columns.length;
    const byColumn = node.fused?.byColumn === true;
    const colPicks = picks ?? (project === null ? Int32Array.from(node.columns, (_, i) => i) : null);
    this.pickColumns =
      !byColumn || colPicks === null
        ? null
        : [pairColumns(colPicks, left.length, true), pairColumns(colPicks, left.length, false)];
    this.byColumn = byColumn;
    const kept = (deltaLeft: boolean): PairKeptColumns | null =>
      !byColumn || colPicks === null || this.residual !== null || this.filter !== null
        ? null
        : pairKeptColumns(colPicks, left.length, deltaLeft, (columns) =>
            this.arranged[deltaLeft ? RIGHT : LEFT].keepColumns(columns),
          );
    this.keptColumns = [kept(true), kept(false)];
    const keptRow = (deltaLeft: boolean): PairKeptBuilder | null =>
      this.keptColumns[deltaLeft ? LEFT : RIGHT] === null
        ? null
        : pairKeptPicker(colPicks as Int32Array, left.length, deltaLeft, (columns) =>
            this.arranged[deltaLeft ? RIGHT : LEFT].keepColumns(columns),
          );
    this.keptRows = [keptRow(true), keptRow(false)];
    this.distinctWhenOneSided =
      node.joinKind === 'inner' &&
      (project === null || (picks !== null && keepsEveryColumn(picks, node, left, right)));
  }

  /**
   * Counts the rows of the steps that follow against `budget` (null: no longer): a view's first
   * build runs with its backfill bound (backfill-bound.ts), and its later steps without.
   */
  limitRows(budget: JoinBudget | null): void {
    this.budget = budget;
  }

  /** Distinct rows side `side` holds: what a keyless join pairs each delta row of the other side with. */
  sideRows(side: 0 | 1): number {
    return this.arranged[side].size;
  }

  /** The most rows side `side` holds under one key, bounded with no probe (join-fanout-probe.ts). */
  rowsUnderOneKey(side: 0 | 1): number {
    return rowsUnderOneKey(this.arranged[side]);
  }

  /**
   * Rows a delta of `rows` on side `side` would make this join build at most, read from the other
   * side as it holds now (before the epoch), changing nothing (join-fanout-probe.ts).
   */
  probeRows(side: 0 | 1, rows: readonly (readonly Value[])[], keys: (JoinKey | null)[] | null): number {
    const other = side === LEFT ? RIGHT : LEFT;
    const pad = { mine: this.pad[side], theirs: this.pad[other] };
    return probeRows(this.arranged[other], this.keys[side], pad, rows, keys);
  }

  /** The rows `rows` on side `side` would build, joined, residual not applied; null past `limit`. */
  joinedRows(
    side: 0 | 1,
    rows: readonly (readonly Value[])[],
    limit: number,
  ): { readonly rows: (readonly Value[])[]; readonly complete: boolean } | null {
    const other = side === LEFT ? RIGHT : LEFT;
    const pad = { mine: this.pad[side], theirs: this.pad[other] };
    return joinedRows(this.arranged[other], this.keys[side], pad, side, this.widths, rows, limit);
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    this.produced = 0;
    const tableSide = this.tableSide;
    if (tableSide !== null)
      tableSide.sync(inputs[this.sharedSide as Side] as ZBatch, this.keys[this.sharedSide as Side]);
    const cols =
      this.byColumn && expectedOutput(inputs, this.arranged) >= MIN_COLUMN_BATCH ? this.newColumns() : null;
    this.cols = cols;
    const oneSided = (inputs[0] as ZBatch).weights.length === 0 || (inputs[1] as ZBatch).weights.length === 0;
    if (this.otherShared !== null) {
      // Both sides at the new state: each delta probes the other side's new state, then the pairs
      // of the two deltas, counted twice so, are taken back once.
      const t = this.sharedSide as Side;
      const o: Side = t === LEFT ? RIGHT : LEFT;
      const deltaT = consolidate(inputs[t] as ZBatch);
      const deltaO = consolidate(inputs[o] as ZBatch);
      this.applyDelta(t, deltaT, rows, weights, errors, NO_PENDING);
      this.applyDelta(o, deltaO, rows, weights, errors, NO_PENDING);
      // The pairs of the two deltas, emitted by both probes, taken back once (inner joins: no padding;
      // a pair the residual or a fused stage fails on is reported with −w, cancelling the probes').
      if (deltaT.rows.length > 0 && deltaO.rows.length > 0)
        forEachDeltaPair(deltaO, this.keys[o], deltaT, this.keys[t], (row, other, w) => {
          const joined = this.combine(o, row, other);
          if (this.residual === null || this.meetsResidual(this.residual, joined, -w, errors))
            this.emit(joined, -w, rows, weights, errors);
        });
    } else if (this.sharedSide === null) {
      this.applyDelta(LEFT, consolidate(inputs[0] as ZBatch), rows, weights, errors, null);
      this.applyDelta(RIGHT, consolidate(inputs[1] as ZBatch), rows, weights, errors, null);
    } else {
      const shared = this.sharedSide;
      const other: Side = shared === LEFT ? RIGHT : LEFT;
      const delta = consolidate(inputs[shared] as ZBatch);
      this.applyDelta(shared, delta, rows, weights, errors, this.pendingByKey(shared, delta));
      this.applyDelta(other, consolidate(inputs[other] as ZBatch), rows, weights, errors, null);
    }
    this.cols = null;
    if (this.budget !== null) this.charge(this.produced);
    const consolidated = oneSided && this.distinctWhenOneSided;
    return cols === null ? { rows, weights, consolidated } : new ColumnBatch(cols, weights, consolidated);
  }

  private newColumns(): Value[][] {
    const cols = new Array<Value[]>(this.outWidth);
    for (let c = 0; c < cols.length; c++) cols[c] = [];
    return cols;
  }

  /**
   * A shared side's delta summed per key: its arrangement already holds the delta, so the total a
   * key had before a delta row is the current total less what of the delta is still to come.
   */
  private pendingByKey(side: Side, delta: ZBatch): Map<JoinKey, number> {
    // Read only where the other side pads: otherwise no key is ever looked up.
    if (!this.pad[side === LEFT ? RIGHT : LEFT]) return NO_PENDING;
    const pending = new Map<JoinKey, number>();
    const keyOf = this.keys[side];
    for (let i = 0; i < delta.rows.length; i++) {
      const key = keyOf(delta.rows[i] as readonly Value[]);
      if (key !== null) pending.set(key, (pending.get(key) ?? 0) + (delta.weights[i] as number));
    }
    return pending;
  }

  /**
   * Probes the other side's arrangement with this side's delta, then folds the delta into this
   * side's — unless `pending` is given: then this side's arrangement is shared and already holds the
   * delta (`pending`: the delta per key not yet probed).
   */
  private applyDelta(
    side: Side,
    delta: ZBatch,
    rows: (readonly Value[])[],
    weights: number[],
    errors: RowErrorSink,
    pending: Map<JoinKey, number> | null,
  ): void {
    if (delta.rows.length === 0) return;
    const otherSide: Side = side === LEFT ? RIGHT : LEFT;
    const mine = this.arranged[side];
    // Folded into only when not shared (`pending` null): then it is this join's own arrangement.
    const own = mine as JoinArrangement;
    const theirs = this.arranged[otherSide];
    const keyOf = this.keys[side];
    const padMine = this.pad[side];
    const padTheirs = this.pad[otherSide];
    const residual = this.residual;
    const keptAppend = this.cols === null ? null : this.keptColumns[side];
    if (keptAppend !== null && residual === null && !padMine && !padTheirs && this.budget === null) {
      // Nothing to pad, no pair to test, no budget to check per row: probe in passes. A shared side's
      // delta (a table's new rows, already held) against a side that holds nothing yet has nothing
      // to match and nothing to fold: no key to compute, unless one can fail (then it is reported).
      if (pending !== null && theirs.keyCount === 0 && this.keysCannotFail[side]) return;
      const staged = this.staged;
      this.produced += staged.probe(
        delta,
        keyOf,
        theirs,
        keptAppend,
        this.cols as Value[][],
        weights,
        (e, r, w) => errors.report(e, r, this.inputColumns[side], w),
      );
      const keys = staged.keys;
      if (pending === null) {
        // Their records read ahead of the adds, in one pass (a small batch's only).
        own.warm(keys, keys.length);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as JoinKey | null;
          if (key !== null) own.add(key, delta.rows[i] as readonly Value[], delta.weights[i] as number, 0);
        }
      }
      keys.length = 0;
      return;
    }
    for (let i = 0; i < delta.rows.length; i++) {
      const row = delta.rows[i] as readonly Value[];
      const w = delta.weights[i] as number;
      let key: JoinKey | null;
      try {
        key = keyOf(row);
      } catch (error) {
        errors.report(error, row, this.inputColumns[side], w);
        continue;
      }
      if (key === null) {
        if (padMine) this.emit(this.padded(side, row), w, rows, weights, errors);
        continue;
      }
      const slot = theirs.slotOf(key);
      let matched = 0;
      if (slot !== NO_SLOT) {
        if (residual === null) {
          const keptAppend = this.cols === null ? null : this.keptColumns[side];
          const keptRow = this.cols === null ? this.keptRows[side] : null;
          if (keptAppend !== null) {
            const kept = theirs.keptColumns;
            const cols = this.cols as Value[][];
            const size = theirs.rowsAt(slot);
            if (size === 1) {
              // One row under the key (their key is unique): its count is the slot's total.
              keptAppend(row, theirs.head(slot), kept, cols);
              weights.push(w * theirs.total(slot));
              this.produced++;
            } else if (theirs.total(slot) === size) {
              // Every row under the key is held once: no count to read per row.
              for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
                keptAppend(row, id, kept, cols);
                weights.push(w);
              }
              this.produced += size;
            } else
              for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
                keptAppend(row, id, kept, cols);
                weights.push(w * theirs.count(id));
                this.produced++;
              }
          } else if (keptRow !== null) {
            // A small step's rows, their arranged values read from the kept columns.
            const kept = theirs.keptColumns;
            const size = theirs.rowsAt(slot);
            const once = theirs.total(slot) === size;
            for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
              rows.push(keptRow(row, id, kept));
              weights.push(once ? w : w * theirs.count(id));
            }
            this.produced += size;
          } else if (this.cols !== null && this.pickColumns !== null && this.filter === null) {
            const append = this.pickColumns[side];
            const cols = this.cols;
            for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
              append(row, theirs.row(id), cols);
              weights.push(w * theirs.count(id));
              this.produced++;
            }
          } else if (this.pickPair !== null && this.filter === null) {
            const build = this.pickPair[side];
            for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
              rows.push(build(row, theirs.row(id)));
              weights.push(w * theirs.count(id));
              this.produced++;
            }
          } else {
            for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id))
              this.emit(this.combine(side, row, theirs.row(id)), w * theirs.count(id), rows, weights, errors);
          }
          if (this.budget !== null && this.produced > this.budget.remaining) this.charge(this.produced);
          matched = theirs.total(slot);
          if (padTheirs) {
            // Their rows are padded while this side has nothing under the key.
            const mineSlot = mine.slotOf(key);
            const held = mineSlot === NO_SLOT ? 0 : mine.total(mineSlot);
            const before = pending === null ? held : held - (pending.get(key) ?? 0);
            const after = before + w;
            if (pending !== null) pending.set(key, (pending.get(key) ?? 0) - w);
            if ((before === 0) !== (after === 0)) {
              for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id))
                this.emit(
                  this.padded(otherSide, theirs.row(id)),
                  before === 0 ? -theirs.count(id) : theirs.count(id),
                  rows,
                  weights,
                  errors,
                );
            }
          }
        } else {
          for (let id = theirs.head(slot); id !== NO_ROW; id = theirs.next(id)) {
            const other = theirs.row(id);
            const count = theirs.count(id);
            const joined = this.combine(side, row, other);
            if (!this.meetsResidual(residual, joined, w * count, errors)) continue;
            this.emit(joined, w * count, rows, weights, errors);
            matched += count;
            if (this.budget !== null && this.produced > this.budget.remaining) this.charge(this.produced);
            if (this.countMatches) {
              const after = theirs.addMatches(id, w);
              const before = after - w;
              if (padTheirs && (before === 0) !== (after === 0))
                this.emit(
                  this.padded(otherSide, other),
                  before === 0 ? -count : count,
                  rows,
                  weights,
                  errors,
                );
            }
          }
        }
      }
      if (padMine && matched === 0) this.emit(this.padded(side, row), w, rows, weights, errors);
      if (pending === null) own.add(key, row, w, this.countMatches ? matched : 0);
    }
  }

  /** Whether `joined` meets the residual; one it fails on is reported with weight `w`. */
  private meetsResidual(residual: RowFn, joined: readonly Value[], w: number, errors: RowErrorSink): boolean {
    try {
      return residual(joined) === true;
    } catch (error) {
      errors.report(error, joined, this.joinedColumns, w);
      return false;
    }
  }

  private charge(rows: number): void {
    chargeJoinBudget(this.budget as JoinBudget, rows);
  }

  /** Emits a joined (or padded) row through the fused Map stage. */
  private emit(
    joined: Value[],
    w: number,
    rows: (readonly Value[])[],
    weights: number[],
    errors: RowErrorSink,
  ): void {
    this.produced++;
    const filter = this.filter;
    const project = this.project;
    const pick = this.pick;
    if (filter === null && project === null && pick === null) {
      if (this.cols !== null) appendRow(joined, this.cols);
      else rows.push(joined);
      weights.push(w);
      return;
    }
    try {
      if (filter !== null && filter(joined) !== true) return;
      const out = pick !== null ? pick(joined) : project !== null ? project(joined) : joined;
      if (this.cols !== null) appendRow(out, this.cols);
      else rows.push(out);
      weights.push(w);
    } catch (error) {
      errors.report(error, joined, this.joinedColumns, w);
    }
  }

  private combine(side: Side, row: readonly Value[], other: readonly Value[]): Value[] {
    return this.joinPair[side](row, other);
  }

  private padded(side: Side, row: readonly Value[]): Value[] {
    const width = this.widths[side === LEFT ? RIGHT : LEFT];
    const out = new Array<Value>(row.length + width).fill(null);
    const at = side === LEFT ? 0 : width;
    for (let i = 0; i < row.length; i++) out[at + i] = row[i] as Value;
    return out;
  }

  /** The arrangements this join owns (a shared one is checkpointed and sized by its owner). */
  private owned(): JoinArrangement[] {
    return this.arranged.filter((_, side) => this.arranges(side)) as JoinArrangement[];
  }

  /** Whether this join arranges `side` itself: not shared, not a table's rows, nor their other side. */
  private arranges(side: number): boolean {
    return side !== this.sharedSide && this.otherShared === null;
  }

  trackChanges(on: boolean): void {
    for (const a of this.owned()) a.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    this.exported = true;
    const deltas = this.owned().map((a) => a.takeDelta(replaceAll));
    return {
      replaceAll,
      upserts: deltas.flatMap((d) => d.upserts),
      deletes: deltas.flatMap((d) => d.deletes),
    };
  }

  loadState(values: Iterable<unknown>): void {
    const entries: [unknown[], unknown[]] = [[], []];
    for (const v of values) {
      const side = this.arranged.findIndex((a) => a.owns(v));
      if (side < 0)
        throw new SluiceError('INTERNAL_ERROR', `checkpoint entry of ${this.stateId} names no arrangement`);
      (entries[side] as unknown[]).push(v);
    }
    // A shared side's entries are not this join's (its owner holds them): none are stored.
    for (const side of [LEFT, RIGHT] as const) {
      if (!this.arranges(side)) continue;
      const keyOf = this.keys[side];
      (this.arranged[side] as JoinArrangement).load(entries[side], (row) => keyOf(row) as JoinKey);
    }
    this.exported = true;
  }

  stateSize(): number {
    const kept = this.tableSide === null ? 0 : this.tableSide.stateBytes;
    return this.owned().reduce((bytes, a) => bytes + a.stateBytes, kept);
  }

  /** Whether side `side` holds a row under the key of `row` (join-fanout-probe.ts). */
  holdsKeyOf(side: 0 | 1, row: readonly Value[]): boolean {
    return holdsKeyOf(this.arranged[side], this.keys[side], row);
  }

  /** Columns of each input (a joined row is the left's, then the right's). */
  sideWidths(): readonly [number, number] {
    return this.widths;
  }

  /** Rows arranged on each side (for EXPLAIN-level metrics and tests). */
  arrangedRows(): readonly [number, number] {
    return [this.arranged[LEFT].size, this.arranged[RIGHT].size];
  }

  /** Rows this join holds itself on each side: none on a shared side or one read from a table. */
  ownRows(): readonly [number, number] {
    const own = (side: Side): number => (this.arranges(side) ? this.arranged[side].size : 0);
    return [own(LEFT), own(RIGHT)];
  }
}
