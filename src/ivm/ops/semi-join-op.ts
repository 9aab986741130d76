// Semi- and anti-joins of predicate subqueries (`[NOT] EXISTS`, `[NOT] IN`): a left row passes, once
// and unchanged, by its key's matches on the right. Left rows are arranged by key (correlation keys,
// then for IN the value); the right side is only counted — per key its number of rows, and for NOT IN
// per correlation group its rows and its NULL values (semi-join-not-in.ts). An epoch folds the right
// delta first, re-evaluating the left rows of every key (for NOT IN: every group) whose status
// flipped, then passes the left delta by the new right state (Δ = L_old ⋈ ΔR + ΔL ⋈ R_new). A NULL
// correlation key meets no subquery row: its subquery is empty. Here: the operator, EXISTS, NOT
// EXISTS and IN's folds, its checkpoints, and what it gives the count of the rows a write may flip.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { RowFn } from '../../common/scalar-expr.ts';
import { compileScalar } from '../../common/scalar-expr.ts';
import type { Arrangement } from '../arrangement.ts';
import { JoinArrangement, NO_ROW } from '../join-arrangement.ts';
import { MatchCounts } from './semi-join-counts.ts';
import { type Emitted, emitBucket } from './semi-join-emit.ts';
import { type FlipList, type SemiJoinFlipState, semiJoinFlipRows } from './semi-join-flips.ts';
import { NotInGroups } from './semi-join-not-in.ts';
import { NO_SLOT } from '../group-index.ts';
import { tableKey, type TableSlots } from '../join-table-side.ts';
import type { ColumnSpec, DataflowNode, SemiJoinMode } from '../dataflow-plan.ts';
import type { Operator, RowErrorSink } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import type { ZBatch } from '../zset.ts';
import { consolidate } from '../zset.ts';
import { compileKey, keyEntryId, type JoinKey, type KeyFn } from '../join-key.ts';

type SemiJoinNode = Extract<DataflowNode, { kind: 'semijoin' }>;

const NO_KEYS: ReadonlySet<JoinKey> = new Set();
const NO_GROUP_COUNTS: readonly [number, number] = [0, 0];

/** `passesLeft`'s answer for a row that does not pass: no JoinKey is a symbol. */
const REJECTED: unique symbol = Symbol('rejected');
type Rejected = typeof REJECTED;

/** What the operator does with each of its arrangements alike (checkpoints and sizes). */
type Part = Pick<Arrangement<JoinKey, number>, 'trackChanges' | 'takeDelta' | 'owns' | 'stateBytes'>;

export class SemiJoinOp implements Operator, Stateful {
  readonly nodeId: number;
  readonly stateId: string;
  private readonly mode: SemiJoinMode;
  private readonly isIn: boolean;
  /** Left rows by probe key (correlation keys, then for IN the value). */
  private readonly left: JoinArrangement;
  /** Right rows per probe key, counted in typed arrays: what each left row's probe reads. */
  private readonly right: MatchCounts;
  /** NOT IN: its group counts, NULL-valued left rows and each group's keys (null: another mode). */
  private readonly notIn: NotInGroups | null;
  private readonly leftKey: KeyFn;
  private readonly leftGroup: KeyFn;
  private readonly leftValue: RowFn | null;
  /** A right row's key and (NOT IN) group: over its key columns `rightColumns`. */
  private readonly rightKey: KeyFn;
  private readonly rightGroup: KeyFn;
  /** The same over a stored entry's row (the key's values alone), for loads. */
  private readonly storedKey: KeyFn;
  private readonly storedGroup: KeyFn;
  /**
   * The right row's key columns: the correlation keys, then for IN the value (its first columns,
   * or where the node's `rightKey` reads them from the relation's own rows).
   */
  private readonly rightColumns: readonly number[];
  private readonly correlated: number;
  private readonly width: number;
  private exported = false;
  /** The right table's rows by slot, read from `table` once a step (null: counted in `right`). */
  private tableSlots: TableSlots | null = null;
  /** `flipByTable`'s scratch: the right delta's net weight by key, in the order first met. */
  private readonly netByKey = new Map<JoinKey, number>();
  /**
   * EXISTS, NOT EXISTS, IN: the keys the step's right delta flipped. The output may hold a row twice
   * only where a passing left row is under one of them (see `step`); marked unconsolidated whenever
   * both parts emitted rows, a step carrying both sides (a view over one table on both sides, a
   * transaction writing both tables) had the view's Output consolidate all its rows by key.
   */
  private readonly flippedKeys = new Set<JoinKey>();
  /** Keys of a right delta evaluated for a flip (EXISTS, NOT EXISTS, IN; tests count them). */
  keysEvaluated = 0;

  /**
   * `table`: the right input's keyed table by slot, when the plan reads its match counts from the
   * table's own rows (`rightTable`): a key's count is 1 exactly when the table holds it, and the
   * table has applied the epoch's batch before any view steps, so it is the new right state. Null:
   * counted in `right`.
   */
  constructor(
    node: SemiJoinNode,
    private readonly leftColumns: readonly ColumnSpec[],
    private readonly table: (() => TableSlots) | null = null,
  ) {
    this.nodeId = node.id;
    this.stateId = node.stateId;
    this.mode = node.mode;
    this.isIn = node.mode === 'in' || node.mode === 'notIn';
    this.correlated = node.correlated;
    this.width = node.leftKey.length;
    const label = (what: string): string => `semi-join n${node.id} ${what}`;
    const width = this.width;
    this.left = new JoinArrangement(label('left arrangement'), 'L', (k) => keyEntryId(k, width));
    this.rightColumns = node.rightKey?.map((c) => c.index) ?? node.leftKey.map((_, i) => i);
    this.right = new MatchCounts(label('match counts'), 'R', (k) => keyEntryId(k, width), this.rightColumns);
    this.leftKey = compileKey(node.leftKey);
    this.leftGroup = compileKey(node.leftKey.slice(0, this.correlated));
    const value = this.isIn ? node.leftKey[this.correlated] : undefined;
    this.leftValue = value === undefined ? null : compileScalar(value);
    const column = (i: number): { kind: 'col'; index: number; name: string; type: ColumnSpec['type'] } => ({
      kind: 'col',
      index: i,
      name: `#${i}`,
      type: node.leftKey[i]!.type,
    });
    const stored = node.leftKey.map((_, i) => column(i));
    const right = node.rightKey ?? stored;
    this.rightKey = compileKey(right);
    this.rightGroup = compileKey(right.slice(0, this.correlated));
    // Without a fused selection a right row is laid out as its stored entry: the same functions.
    this.storedKey = node.rightKey === undefined ? this.rightKey : compileKey(stored);
    this.storedGroup =
      node.rightKey === undefined ? this.rightGroup : compileKey(stored.slice(0, this.correlated));
    this.notIn =
      node.mode === 'notIn'
        ? new NotInGroups({
            nodeId: this.nodeId,
            correlated: this.correlated,
            leftColumns,
            left: this.left,
            right: this.right,
            leftKey: this.leftKey,
            leftGroup: this.leftGroup,
            leftValue: this.leftValue as RowFn,
            rightKey: this.rightKey,
            rightGroup: this.rightGroup,
            rightColumns: this.rightColumns,
            matches: (key) => this.matches(key),
          })
        : null;
  }

  /** EXISTS, NOT EXISTS, IN: whether a row of a key passes, by the key's match count. */
  private passes(matches: number): boolean {
    return this.mode === 'notExists' ? matches === 0 : matches > 0;
  }

  private matches(key: JoinKey): number {
    const slots = this.tableSlots;
    if (slots === null) return this.right.total(key);
    // A small integer is its own table key: `tableKey`'s range tests are for the rest.
    return slots.slotOf(typeof key === 'number' && (key | 0) === key ? key : tableKey(key)) < 0 ? 0 : 1;
  }

  step(inputs: readonly ZBatch[], errors: RowErrorSink): ZBatch {
    if (this.table !== null) this.tableSlots = this.table();
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const out: Emitted = { rows, weights };

    // The right delta, against the left rows held before this epoch.
    const rightDelta = inputs[1] as ZBatch;
    if (rightDelta.rows.length > 0) {
      if (this.notIn !== null) this.notIn.foldRight(consolidate(rightDelta), out);
      else if (this.table !== null) this.flipByTable(rightDelta, out);
      else this.foldRight(rightDelta, out);
    }

    // The flips' rows are L_old's, each once (a key's bucket holds distinct rows, a row is under one
    // key, and a fold evaluates a key once); the left delta passes each of its rows once. So the
    // output is consolidated unless both emitted rows: a row of the left delta may be one of L_old's.
    // (A flip of many held rows, an auction deleted with its bids, then needs no consolidating.)
    // EXISTS, NOT EXISTS and IN narrow "both" to a passing left row under a flipped key.
    const flipped = rows.length;
    // The left delta, by the right side as it is now.
    const leftDelta = consolidate(inputs[0] as ZBatch);
    if (this.notIn === null) {
      // EXISTS, NOT EXISTS, IN: a row is static or keyed; nothing is allocated per row. A left row
      // equal to a flipped one is under a flipped key (a row's key is a function of the row), so
      // the output is consolidated unless a passing left row is under one.
      const flippedKeys = this.flippedKeys;
      const flips = flippedKeys.size > 0;
      let met = false;
      for (let i = 0; i < leftDelta.rows.length; i++) {
        const row = leftDelta.rows[i] as readonly Value[];
        const w = leftDelta.weights[i] as number;
        const key = this.passesLeft(row, w, errors);
        if (key === REJECTED) continue;
        rows.push(row);
        weights.push(w);
        if (flips && key !== null && flippedKeys.has(key)) met = true;
      }
      if (flips) flippedKeys.clear();
      return { rows, weights, consolidated: !met };
    }
    this.notIn.passLeft(leftDelta, out, errors);
    return { rows, weights, consolidated: flipped === 0 || rows.length === flipped };
  }

  /**
   * EXISTS, NOT EXISTS, IN: the right delta counted by key (nothing allocated but a new key's stored
   * row), then the held left rows of each key whose match count crossed zero flip, keys in the order
   * the delta first touched them.
   */
  private foldRight(delta: ZBatch, out: Emitted): void {
    const right = this.right;
    right.beginFold();
    // An unconsolidated delta is counted as it is, never consolidated by row: only its keys' counts
    // matter, and hashing whole rows (the relation's own, since its column selection is fused in)
    // cost more than the fold. Its insertions go first, then its deletions, so no key's count dips
    // below zero on the way (the subquery's rows never do).
    if (delta.consolidated) this.countRight(delta, 0);
    else {
      this.countRight(delta, 1);
      this.countRight(delta, -1);
    }
    // With no left row held a flip has nothing to emit: the touched keys are not evaluated (the
    // subquery side loaded before the rows that probe it, as a dimension table usually is).
    if (this.left.keyCount > 0)
      for (let i = 0; i < right.touchedCount; i++) {
        this.keysEvaluated++;
        const was = this.passes(right.totalBefore(i));
        const is = this.passes(right.totalNow(i));
        if (was !== is) this.flip(out, right.touchedKey(i), is ? 1 : -1);
      }
    right.endFold();
  }

  /**
   * `foldRight` when the match counts are the right table's keys: nothing is counted (the table
   * holds them). With no left row held nothing can flip, so nothing is read — a dimension table's
   * inserts cost the semi-join one test a step. Else each key of the delta is evaluated once, in
   * the order `foldRight` would first touch it: its count before the epoch is the count now less
   * its net weight in the delta.
   */
  private flipByTable(delta: ZBatch, out: Emitted): void {
    if (this.left.keyCount === 0) return;
    const net = this.netByKey;
    // Empty unless a step before this one threw midway (an internal error).
    net.clear();
    if (delta.consolidated) this.sumByKey(delta, 0);
    else {
      this.sumByKey(delta, 1);
      this.sumByKey(delta, -1);
    }
    for (const [key, w] of net) {
      this.keysEvaluated++;
      const now = this.matches(key);
      const was = this.passes(now - w);
      const is = this.passes(now);
      if (was !== is) this.flip(out, key, is ? 1 : -1);
    }
    net.clear();
  }

  /**
   * Sums into `netByKey` the weights of the right delta's rows whose weight has the sign of `sign`
   * (0: every row) by key. A method, not a closure of each step: under tsx a closure costs an
   * allocation and a `__name` call a step (≈ 2% of the mutations phase at batch 100, where most
   * steps carry auctions).
   */
  private sumByKey(delta: ZBatch, sign: number): void {
    const net = this.netByKey;
    for (let i = 0; i < delta.rows.length; i++) {
      const w = delta.weights[i] as number;
      if (w * sign < 0) continue;
      const key = this.rightKey(delta.rows[i] as readonly Value[]);
      if (key !== null) net.set(key, (net.get(key) ?? 0) + w);
    }
  }

  /** Counts the right delta's rows whose weight has the sign of `sign` (0: every row) by key. */
  private countRight(delta: ZBatch, sign: number): void {
    const right = this.right;
    for (let i = 0; i < delta.rows.length; i++) {
      const w = delta.weights[i] as number;
      if (w * sign < 0) continue;
      const row = delta.rows[i] as readonly Value[];
      // A NULL in the key (correlation or, for IN, the value) meets no left row.
      const key = this.rightKey(row);
      if (key === null) continue;
      right.add(key, row, w);
    }
  }

  /**
   * A left row of EXISTS, NOT EXISTS or IN: arranged under its key
   * unless static. Returns REJECTED when it does not pass by the right side as it is now, else its
   * key (null: a NULL in it, a static pass), which the step's consolidated mark tests against the
   * flipped keys. A key or a constant: nothing is allocated per row.
   */
  private passesLeft(row: readonly Value[], w: number, errors: RowErrorSink): JoinKey | null | Rejected {
    let key: JoinKey | null;
    try {
      // The key is the correlation keys and, for IN, the value: null when any is NULL, which meets
      // no subquery row (IN and EXISTS false, NOT EXISTS true). One evaluation of each expression.
      key = this.leftKey(row);
    } catch (error) {
      errors.report(error, row, this.leftColumns, w);
      return REJECTED;
    }
    if (key === null) return this.mode === 'notExists' ? null : REJECTED;
    const pass = this.passes(this.matches(key));
    this.left.add(key, row, w, 0);
    return pass ? key : REJECTED;
  }

  /**
   * EXISTS, NOT EXISTS, IN: the held left rows of `key` flip (`sign` 1: they pass now, -1: no
   * longer); the key is noted for the step's consolidated mark.
   */
  private flip(out: Emitted, key: JoinKey, sign: number): void {
    this.flippedKeys.add(key);
    emitBucket(out, this.left, key, sign);
  }

  /**
   * Most held left rows a right delta of `rightRows` rows can flip in one epoch, reading no row (a
   * write's row-free count, src/exec/view-join-fanout.ts): per right row the busiest key's rows,
   * never more than the left side holds (a fold evaluates each key once); NOT IN: the whole left
   * side, since one NULL arriving retracts every row of its group.
   */
  flipRowsCeiling(rightRows: number): number {
    const held = this.left.size + (this.notIn?.leftNull.size ?? 0);
    return this.mode === 'notIn' ? held : Math.min(held, rightRows * this.left.mostRowsUnderOneKey);
  }

  /**
   * The held left rows a right delta of `rows` may flip, counted before the epoch changes anything
   * (semi-join-flips.ts): the rows are the right input's; `inserted` tells those known to be
   * insertions (any other may be a deletion). `list`: the flipped rows named too, for a join after it.
   */
  flipRows(
    rows: readonly (readonly Value[])[],
    inserted: (row: readonly Value[]) => boolean,
    list: FlipList | null = null,
  ): number {
    const notIn = this.notIn;
    if (this.left.size === 0 && (notIn === null || notIn.leftNull.size === 0)) return 0;
    const view: SemiJoinFlipState = {
      notIn: notIn !== null,
      correlated: this.correlated,
      valueColumn: this.rightColumns[this.correlated] ?? -1,
      rightKey: this.rightKey,
      rightGroup: this.rightGroup,
      matches: (key) => this.matches(key),
      groupCounts: (group) => notIn?.groupCounts(group) ?? NO_GROUP_COUNTS,
      leftRowsUnder: (key) => {
        const slot = this.left.slotOf(key);
        return slot === NO_SLOT ? 0 : this.left.rowsAt(slot);
      },
      nullRowsOf: (group) => {
        if (notIn === null) return 0;
        const slot = notIn.leftNull.slotOf(group);
        return slot === NO_SLOT ? 0 : notIn.leftNull.rowsAt(slot);
      },
      leftRows: this.left.size,
      keysOf: (group) => notIn?.keysOf(group) ?? NO_KEYS,
      listUnder: (key, out) => {
        const slot = this.left.slotOf(key);
        if (slot === NO_SLOT) return;
        for (let id = this.left.head(slot); id !== NO_ROW; id = this.left.next(id)) {
          const row = this.left.row(id);
          for (let c = this.left.count(id); c > 0; c--) out.push(row);
        }
      },
    };
    // The right table's rows as they are before the epoch (step reads them again).
    const slots = this.tableSlots;
    if (this.table !== null) this.tableSlots = this.table();
    try {
      return semiJoinFlipRows(view, rows, inserted, list);
    } finally {
      this.tableSlots = slots;
    }
  }

  private parts(): Part[] {
    const all: Part[] = [this.left, this.right];
    if (this.notIn !== null) all.push(this.notIn.leftNull, this.notIn.groups);
    return all;
  }

  trackChanges(on: boolean): void {
    for (const a of this.parts()) a.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    this.exported = true;
    const deltas = this.parts().map((a) => a.takeDelta(replaceAll));
    return {
      replaceAll,
      upserts: deltas.flatMap((d) => d.upserts),
      deletes: deltas.flatMap((d) => d.deletes),
    };
  }

  loadState(values: Iterable<unknown>): void {
    const parts = this.parts();
    const entries = parts.map((): unknown[] => []);
    for (const v of values) {
      const at = parts.findIndex((a) => a.owns(v));
      if (at < 0)
        throw new SluiceError('INTERNAL_ERROR', `checkpoint entry of ${this.stateId} names no arrangement`);
      (entries[at] as unknown[]).push(v);
    }
    const [leftEntries = [], rightEntries = [], nullEntries = [], groupEntries = []] = entries;
    this.left.load(leftEntries, (row) => this.leftKey(row) as JoinKey);
    this.right.load(rightEntries, (row) => this.storedKey(row) as JoinKey);
    // The NOT IN groups' keys are read from the left rows: loaded after them.
    this.notIn?.load(nullEntries, groupEntries, this.storedGroup);
    this.exported = true;
  }

  stateSize(): number {
    return this.parts().reduce((bytes, a) => bytes + a.stateBytes, 0);
  }
}
