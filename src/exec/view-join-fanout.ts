// How large each node's delta can be in the epoch of one table write, known before the epoch runs:
// what lets the engine refuse a write whose views' joins would build more than `maxEpochJoinRows`
// (EPOCH_TOO_LARGE) before the journal or any state changes, wherever the join sits — behind Map
// stages, a GROUP BY, a DISTINCT, another join, or in a view over a view. The written rows flow
// down the view's nodes in plan order as a bound of the rows each node emits:
// - a count (`number`): at most that many rows, their values unknown; the row-free first pass
//   (`exact` false) uses counts alone, a handful of arithmetic per node;
// - rows (`KnownRows`): a superset of the rows emitted, some columns known (a GROUP BY's output
//   knows its group keys, not the aggregates' new values), which a join probes by key.
// A Reduce emits at most a retraction and an insertion per group the write touches; a join emits
// what it builds, which is what is counted: per delta row, the rows the other side holds under its
// key (join-fanout-probe.ts); a semi- or anti-join whose subquery side changes emits the held outer
// rows it flips, counted the same way (semi-join-flips.ts). A node whose output the write cannot
// bound (a window-close Reduce, unnest) is UNBOUNDED: joins after it are not counted (bench/README.md,
// "Keyless joins: one write's epoch"). A window function and a Top-N with ranks or ties count the
// held rows they re-emit (one row into a long partition renumbers it; one row above a long tie group
// at a Top-N's cut pushes the whole group out), their output then a count.
import type { Value } from '../common/types.ts';
import { expandMaxRows } from '../common/expand.ts';
import type { DataflowNode } from '../ivm/dataflow-plan.ts';
import type { JoinKey } from '../ivm/join-key.ts';
import type { Operator } from '../ivm/operator.ts';
import { DistinctOp } from '../ivm/ops/distinct-op.ts';
import { JoinOp } from '../ivm/ops/join-op.ts';
import { SemiJoinOp } from '../ivm/ops/semi-join-op.ts';
import { ReduceOp } from '../ivm/ops/reduce-op.ts';
import { TopNOp } from '../ivm/ops/topn-op.ts';
import type { FlipList } from '../ivm/ops/semi-join-flips.ts';
import { WindowOp } from '../ivm/ops/window-op.ts';
import { type WindowTextChars, textWeight } from '../ivm/ops/window-text-chars.ts';
import { isDeletion, isInsertion, pairedRetractionsDropped } from './epoch-insertions.ts';
import {
  type EpochDelta,
  LISTED_JOIN_ROWS,
  UNBOUNDED,
  covered,
  distinctRows,
  printsAlike,
  reduceDelta,
  retractedOnlyIfHeld,
  rowCount,
  signsLost,
  throughExpand,
  throughMap,
  together,
} from './epoch-delta-rows.ts';
import { listed, listedBoth, pairsAmong } from './epoch-join-rows.ts';

export { type EpochDelta, type KnownRows, UNBOUNDED } from './epoch-delta-rows.ts';

/** The rows of a write, deletes then inserts (each builds as many join rows as the other). */
export interface WrittenRows {
  readonly deletes: readonly (readonly Value[])[];
  readonly inserts: readonly (readonly Value[])[];
}

/** The rows of `rows` a join's side `side` can see change: a group's old row only if it holds it. */
function present(
  op: JoinOp,
  side: 0 | 1,
  rows: readonly (readonly Value[])[],
): readonly (readonly Value[])[] {
  let out: (readonly Value[])[] | null = null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as readonly Value[];
    const gone = retractedOnlyIfHeld(row) && !op.holdsKeyOf(side, row);
    if (gone && out === null) out = rows.slice(0, i);
    else if (!gone && out !== null) out.push(row);
  }
  return out ?? rows;
}

/** The nodes of one view's plan, and the bound of each one's delta in a write's epoch. */
export class ViewDeltaBound {
  /** By position in `nodes`: the positions of its inputs. */
  private readonly inputAt: readonly (readonly number[])[];
  private readonly outputAt: number;
  /**
   * Whether some node is one whose rows this bound counts for any write: a join, a window function
   * (one row into a long partition renumbers it), or a Top-N with ranks or ties (rankedTopN).
   */
  readonly hasJoin: boolean;
  /**
   * The sources (tables or views) a semi-join's subquery side reads, whose writes it counts by the
   * outer rows they flip (and which rows are insertions: epoch-insertions.ts).
   */
  readonly subquerySources: ReadonlySet<string>;
  /**
   * Whether some node's count reads which rows are insertions and deletions (a semi-join, a ranked
   * Top-N, a DISTINCT): a write's exact pass then marks them (epoch-insertions.ts).
   */
  readonly readsSigns: boolean;
  /** By position: whether a join of this view reads the node's output, directly or further down. */
  private readonly feedsJoin: readonly boolean[];
  private readonly deltas: EpochDelta[];
  /** What `epoch` returns, one object reused (read before the next call). */
  private readonly result: { output: EpochDelta; built: number } = { output: 0, built: 0 };

  constructor(
    private readonly nodes: readonly { readonly node: DataflowNode; readonly op: Operator | null }[],
    outputId: number,
  ) {
    const at = new Map(nodes.map((r, i) => [r.node.id, i]));
    this.inputAt = nodes.map((r) =>
      r.node.kind === 'input' || r.node.kind === 'values'
        ? []
        : r.node.inputs.map((id) => at.get(id) as number),
    );
    this.outputAt = at.get(outputId) as number;
    // A node whose rows any write may multiply: a join, a window (one row renumbers its partition),
    // a Top-N with ranks or ties (rankedTopN).
    const multiplies = (r: { node: DataflowNode; op: Operator | null }): boolean =>
      r.op instanceof JoinOp || r.op instanceof WindowOp || rankedTopN(r.node, r.op) !== null;
    this.hasJoin = nodes.some(multiplies);
    // The sources a semi-join's subquery side reads: only a write reaching one of them flips rows.
    const subquerySources = new Set<string>();
    const pending: number[] = [];
    nodes.forEach((r, i) => {
      if (r.op instanceof SemiJoinOp) pending.push((this.inputAt[i] as readonly number[])[1] as number);
    });
    for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
      const node = (nodes[at] as { node: DataflowNode }).node;
      if (node.kind === 'input') subquerySources.add(node.source);
      for (const p of this.inputAt[at] as readonly number[]) pending.push(p);
    }
    this.subquerySources = subquerySources;
    // A DISTINCT's too: a value it holds, written again, changes nothing it shows.
    this.readsSigns =
      subquerySources.size > 0 ||
      nodes.some((r) => rankedTopN(r.node, r.op) !== null || r.op instanceof DistinctOp);
    // Each of those, and a semi-join, reads its input's rows (keys, partitions, places): a join
    // before it lists them.
    const feedsJoin = nodes.map(() => false);
    for (let i = nodes.length - 1; i >= 0; i--) {
      const r = nodes[i] as { node: DataflowNode; op: Operator | null };
      if (!feedsJoin[i] && !multiplies(r) && !(r.op instanceof SemiJoinOp)) continue;
      for (const p of this.inputAt[i] as readonly number[]) feedsJoin[p] = true;
    }
    this.feedsJoin = feedsJoin;
    this.deltas = new Array<EpochDelta>(nodes.length).fill(0);
  }

  /**
   * The view's output delta and the rows its joins build, when its inputs change by `relations`
   * (a relation's delta by its name; absent: unchanged). `exact` false: counts alone, no row read (a bound at least
   * the exact one); true: the written rows go through, and joins probe by key. `outputRead`: a
   * view with a join reads this one's output (its joins' rows are then listed for it to probe).
   */
  epoch(
    relations: ReadonlyMap<string, EpochDelta>,
    exact: boolean,
    outputRead: boolean,
  ): { output: EpochDelta; built: number } {
    const deltas = this.deltas;
    let built = 0;
    for (let i = 0; i < this.nodes.length; i++) {
      const { node, op } = this.nodes[i] as { node: DataflowNode; op: Operator | null };
      if (node.kind === 'input') {
        deltas[i] = relations.get(node.source) ?? 0;
        continue;
      }
      if (node.kind === 'values') {
        deltas[i] = 0;
        continue;
      }
      const inputs = this.inputAt[i] as readonly number[];
      const first = deltas[inputs[0] as number] as EpochDelta;
      let changed = false;
      for (let k = 0; k < inputs.length; k++) if (deltas[inputs[k] as number] !== 0) changed = true;
      if (!changed) {
        // A temporal filter's clock may release rows with no input: not counted (see the header).
        deltas[i] = 0;
        continue;
      }
      const second = inputs.length > 1 ? (deltas[inputs[1] as number] as EpochDelta) : 0;
      if (
        node.kind === 'join' &&
        op instanceof JoinOp &&
        typeof first === 'number' &&
        typeof second === 'number'
      ) {
        // Counts alone. The row-free pass: arithmetic, nothing allocated. The exact pass: a side
        // known only by a count is not counted (joinDelta), nor is what comes after it.
        const rows =
          exact || first === UNBOUNDED || second === UNBOUNDED ? 0 : countedJoinRows(node, op, first, second);
        built += rows;
        deltas[i] = exact || first === UNBOUNDED || second === UNBOUNDED ? UNBOUNDED : rows;
        continue;
      }
      if (node.kind === 'semijoin' && op instanceof SemiJoinOp && second !== 0) {
        // The held outer rows its subquery's change flips, then the outer delta passing through;
        // the flipped rows named (exact pass) where a join after it probes them by key.
        const named =
          exact && (outputRead || this.feedsJoin[i] === true) && (first === 0 || typeof first !== 'number');
        const list: FlipList | null = named ? { rows: [], limit: LISTED_JOIN_ROWS } : null;
        const flips = subqueryFlips(node, op, second, exact, list);
        if (flips === UNBOUNDED || first === UNBOUNDED) deltas[i] = UNBOUNDED;
        else if (list !== null && list.rows !== null) deltas[i] = withFlipped(first, list.rows);
        else deltas[i] = flips + rowCount(first);
        if (flips !== UNBOUNDED) built += flips;
        continue;
      }
      if (node.kind === 'window' && op instanceof WindowOp) {
        // The held rows it renumbers, counted as a join's rows; its output at most those and the
        // changed rows (a count: joins after it are not counted in the exact pass).
        const renumbered = windowRows(node, op, first, exact);
        if (renumbered === UNBOUNDED) deltas[i] = UNBOUNDED;
        else {
          // A STRING_AGG's rows weigh by their texts, the changed rows' own too (textRows).
          built += op.text === null ? renumbered : textRows(node, op, first, exact);
          deltas[i] = renumbered + rowCount(first);
        }
        continue;
      }
      const ranked = rankedTopN(node, op);
      if (node.kind === 'topn' && ranked !== null) {
        // The held rows it pushes out, pulls in or re-ranks, counted as a join's rows; its output
        // at most those and the changed rows (a count, as a window's).
        const moved = topNRows(node, ranked, first, exact);
        if (moved === UNBOUNDED) deltas[i] = UNBOUNDED;
        else {
          built += moved;
          deltas[i] = moved + rowCount(first);
        }
        continue;
      }
      if (node.kind === 'join' && op instanceof JoinOp) {
        // Rows listed only for a join further down to probe: otherwise the count is all it needs.
        const list = exact && (outputRead || this.feedsJoin[i] === true);
        const counted = joinDelta(node, op, first, deltas[inputs[1] as number] as EpochDelta, list);
        built += counted.built;
        deltas[i] = counted.output;
        continue;
      }
      deltas[i] = nodeDelta(node, op, first, deltas, inputs);
    }
    const result = this.result;
    result.output = deltas[this.outputAt] as EpochDelta;
    result.built = built;
    // No row list outlives the count.
    deltas.fill(0);
    return result;
  }
}

/** A node's delta from its inputs' (a join's is joinDelta). */
function nodeDelta(
  node: DataflowNode,
  op: Operator | null,
  first: EpochDelta,
  deltas: readonly EpochDelta[],
  inputs: readonly number[],
): EpochDelta {
  switch (node.kind) {
    case 'map':
      return typeof first === 'number' ? first : throughMap(first, node.filter, node.project);
    case 'reduce':
      // Its groups' sizes where this process holds them (a partitioned Reduce's are in its workers).
      return first === UNBOUNDED ? UNBOUNDED : reduceDelta(node, first, op instanceof ReduceOp ? op : null);
    case 'distinct':
      // Its held rows, where this process holds them, tell whether the row it shows changes. A count:
      // each value's shown row may be retracted and another text of it inserted (1.50, then 1.5).
      if (typeof first === 'number') return first > 0 && !printsAlike(node.columns) ? 2 * first : first;
      return distinctRows(first, op instanceof DistinctOp ? op : null);
    case 'output':
    case 'temporalFilter':
      return first;
    case 'union':
      return together(inputs.map((p) => deltas[p] as EpochDelta));
    case 'setop': {
      const [left, right] = inputs.map((p) => deltas[p] as EpochDelta) as [EpochDelta, EpochDelta];
      return together([left, node.op === 'except' ? signsLost(right) : right]);
    }
    case 'semijoin':
      // Its subquery side unchanged (else subqueryFlips): the left delta passes or not, row by row.
      return deltas[inputs[1] as number] !== 0 ? UNBOUNDED : first;
    case 'flatmap': {
      if (first === UNBOUNDED) return UNBOUNDED;
      const expanded = typeof first === 'number' ? null : throughExpand(first, node.generator);
      if (expanded !== null) return expanded;
      if (node.generator.kind === 'unnest') return UNBOUNDED;
      return rowCount(first) * expandMaxRows(node.generator);
    }
    case 'topn':
      // Without ranks or ties, a row in or out of the kept range moves at most one other across it
      // (with them: topNRows).
      if (first === UNBOUNDED || node.rank !== 'row_number' || node.emitRank) return UNBOUNDED;
      return 2 * rowCount(first);
    default:
      // window (a change renumbers its partition), temporalJoin, and anything new.
      return UNBOUNDED;
  }
}

/**
 * The held outer rows a semi- or anti-join re-emits when its subquery side changes by `right`
 * (SemiJoinOp.flipRows): a retraction or an insertion each, counted as a join's rows are. The
 * row-free pass: the most the op can flip per right row. The exact pass: the right rows' keys, when
 * known, each a key's held rows where the write can move its match count across zero; a side known
 * only by its count, or without its key's columns, is not counted (UNBOUNDED), as a join's.
 */
function subqueryFlips(
  node: Extract<DataflowNode, { kind: 'semijoin' }>,
  op: SemiJoinOp,
  right: EpochDelta,
  exact: boolean,
  list: FlipList | null,
): number {
  if (right === UNBOUNDED) return UNBOUNDED;
  if (!exact) return op.flipRowsCeiling(rowCount(right));
  if (typeof right === 'number') return UNBOUNDED;
  const keyColumns = node.rightKey?.map((c) => c.index) ?? node.leftKey.map((_, i) => i);
  if (right.known !== null && !keyColumns.every((c) => right.known?.[c] === true)) return UNBOUNDED;
  // A group that stays (its old row retracted, its new one inserted) moves no key's match count.
  return op.flipRows(pairedRetractionsDropped(right.rows), isInsertion, list);
}

/**
 * The held rows a window function re-emits when its input changes by `delta`: a retraction and an
 * insertion per held slot it recomputes (WindowOp.heldSlotsTouched); the changed rows themselves pass
 * as through a Map and are not counted. The row-free pass, or rows whose partition is not known:
 * every slot held. Rows whose partition is known but not their place in it: their partitions' slots.
 */
function windowRows(
  node: Extract<DataflowNode, { kind: 'window' }>,
  op: WindowOp,
  delta: EpochDelta,
  exact: boolean,
): number {
  if (delta === UNBOUNDED) return UNBOUNDED;
  const known = typeof delta === 'number' ? null : delta.known;
  const isKnown = (c: number): boolean => known === null || known[c] === true;
  if (!exact || typeof delta === 'number' || !node.partitionBy.every(isKnown)) {
    return rowCount(delta) === 0 ? 0 : 2 * op.heldSlots;
  }
  const orderKnown = node.orderBy.every((k) => isKnown(k.index));
  return 2 * op.heldSlotsTouched(delta.rows, orderKnown);
}

/**
 * What a window with a STRING_AGG emits, weighed by its texts (window-text-chars.ts): every row it
 * emits, the changed rows' own included, counts as 1 + ⌈C / 64⌉ rows, C the characters its partition
 * holds and the write brings (counted by rows alone, one row at the head of a 4,000-row partition of
 * 50-character texts re-emitted 816 M characters unrefused). The row-free pass cannot know the characters
 * the write brings: it passes the bound, so the exact pass decides. Rows whose partition is not
 * known: every partition's characters; rows known only by a count bring characters not counted
 * (as a join's side known by a count is not).
 */
function textRows(
  node: Extract<DataflowNode, { kind: 'window' }>,
  op: WindowOp,
  delta: EpochDelta,
  exact: boolean,
): number {
  const text = op.text as WindowTextChars;
  const n = rowCount(delta);
  if (n === 0) return 0;
  if (!exact) return Infinity;
  if (typeof delta === 'number') return textWeight(2 * op.heldSlots + n, text.total);
  const known = delta.known;
  const isKnown = (c: number): boolean => known === null || known[c] === true;
  if (!node.partitionBy.every(isKnown))
    return textWeight(2 * op.heldSlots + n, text.total + text.charsOfRows(delta.rows));
  return op.heldSlotsTouched(
    delta.rows,
    node.orderBy.every((k) => isKnown(k.index)),
    true,
  );
}

/**
 * A Top-N whose one changed row can move many held rows (RANK or DENSE_RANK: a tie group at the cut
 * leaves or comes back whole; a shown rank: every kept row after the change is re-ranked); null for
 * ROW_NUMBER with the rank not shown, which moves at most one other row per changed row (nodeDelta).
 */
function rankedTopN(node: DataflowNode, op: Operator | null): TopNOp | null {
  if (node.kind !== 'topn' || !(op instanceof TopNOp)) return null;
  return node.rank !== 'row_number' || node.emitRank ? op : null;
}

/**
 * The held rows a ranked Top-N re-emits when its input changes by `delta` (TopNOp.heldRowsMovedBy):
 * those near the kept range's ends by as many ranks as rows change, in the partitions the rows
 * reach, from the first changed row's place on; the changed rows pass as through a Map and are not
 * counted. The row-free pass, or rows whose partition is not known: every row held (twice with the
 * rank shown: a retraction and an insertion each).
 */
function topNRows(
  node: Extract<DataflowNode, { kind: 'topn' }>,
  op: TopNOp,
  delta: EpochDelta,
  exact: boolean,
): number {
  if (delta === UNBOUNDED) return UNBOUNDED;
  if (rowCount(delta) === 0) return 0;
  const known = typeof delta === 'number' ? null : delta.known;
  const isKnown = (c: number): boolean => known === null || known[c] === true;
  if (!exact || typeof delta === 'number' || !node.partitionBy.every(isKnown)) {
    return (node.emitRank ? 2 : 1) * op.rowsHeld;
  }
  return op.heldRowsMovedBy(delta.rows, {
    place: node.orderBy.every((k) => isKnown(k.index)),
    whole: known === null || known.every((k) => k),
    inserted: isInsertion,
    deleted: isDeletion,
  });
}

/** A semi-join's output as rows: the outer delta passing through (none: 0) and the rows it flips. */
function withFlipped(first: EpochDelta, flipped: readonly (readonly Value[])[]): EpochDelta {
  if (typeof first === 'number') return { rows: flipped, known: null };
  return { rows: first.rows.length === 0 ? flipped : [...first.rows, ...flipped], known: first.known };
}

/**
 * The rows a join builds when its sides change by `left` and `right`, and its output delta. A side
 * listed with its key's columns known probes the other side once per row (JoinOp.probeRows); a
 * listed side of a join with no key meets every row the other side holds, twice for an outer join's
 * padding, plus its own padded row. Both sides changed: the pairs among the deltas too (each side
 * an aggregate of the same write is two lists of group keys). A side known by its count alone, or
 * whose key is not known, is not counted: the join's rows are then what was counted of the other
 * side, and its output UNBOUNDED (joins after it are not counted either).
 */
function joinDelta(
  node: Extract<DataflowNode, { kind: 'join' }>,
  op: JoinOp,
  left: EpochDelta,
  right: EpochDelta,
  list: boolean,
): { built: number; output: EpochDelta } {
  if (left === UNBOUNDED || right === UNBOUNDED) return { built: 0, output: UNBOUNDED };
  const keyed = node.leftKey.length > 0;
  const pads: readonly [boolean, boolean] = [
    node.joinKind === 'left' || node.joinKind === 'full',
    node.joinKind === 'right' || node.joinKind === 'full',
  ];
  const both = left !== 0 && right !== 0;
  const keys: [(JoinKey | null)[] | null, (JoinKey | null)[] | null] = [null, null];
  let built = 0;
  let uncounted = false;
  // Some side counted by the most rows under one key: its rows are not listed further.
  let countedByMost = false;
  for (const side of [0, 1] as const) {
    const delta = side === 0 ? left : right;
    if (delta === 0) continue;
    const other = side === 0 ? 1 : 0;
    const keyExprs = side === 0 ? node.leftKey : node.rightKey;
    if (typeof delta !== 'number' && keyed && keyExprs.every((e) => covered(e, delta.known))) {
      const sideKeys: (JoinKey | null)[] | null = both ? [] : null;
      const rows = present(op, side, delta.rows);
      if (side === 0) left = { rows, known: delta.known };
      else right = { rows, known: delta.known };
      built += op.probeRows(side, rows, sideKeys);
      keys[side] = sideKeys;
      continue;
    }
    if (typeof delta !== 'number' && !keyed) {
      // No key: each row meets every row the other side holds, exactly.
      built += rowCount(delta) * ((pads[other] ? 2 : 1) * op.sideRows(other) + (pads[side] ? 1 : 0));
      continue;
    }
    if (typeof delta !== 'number') {
      // Rows whose key is not known (a join on an aggregate's value, which the write changes): each
      // meets at most the rows the other side holds under one key. Left uncounted, a write into
      // one group re-joined every row under its old and new values unrefused.
      const most = op.rowsUnderOneKey(other);
      built += rowCount(delta) * ((pads[other] ? 2 : 1) * most + (pads[side] ? 1 : 0));
      countedByMost = true;
      continue;
    }
    // Known only by a count: the most the other side holds under one key per row is a bound far
    // above what such a side builds (two aggregates of one write joined by window, one of them a MAX
    // whose groups may stay), and a refused legitimate write is worse than an epoch left uncounted.
    uncounted = true;
  }
  if (uncounted) return { built, output: UNBOUNDED };
  if (countedByMost) {
    // At most the rows built come out: a count (a join after it then leaves this side uncounted).
    const total = built + (both ? rowCount(left) * rowCount(right) : 0);
    return { built: total, output: total };
  }
  if (both) {
    const [leftKeys, rightKeys] = keys;
    built +=
      leftKeys !== null && rightKeys !== null
        ? pairsAmong(leftKeys, rightKeys)
        : rowCount(left) * rowCount(right);
    // Both sides changed (a self-join, or two views of one write): listed too, or a join after it
    // would count only its other side's rows (a three-way self-join's second join was left at the
    // rows the table's own delta builds).
    if (list && leftKeys !== null && rightKeys !== null && node.joinKind === 'inner')
      return { built, output: listedBoth(node, op, left, right, [leftKeys, rightKeys], built) };
  }
  return { built, output: list && !both && keyed ? listed(node, op, left, right, built) : built };
}

/**
 * The rows a join builds at most when its sides change by `left` and `right` rows whose values are
 * not known: each meets the most rows the other side can hold under one key (all of them with no
 * key), twice for an outer join's padding, plus its own padded row; both: the pairs among them.
 */
function countedJoinRows(
  node: Extract<DataflowNode, { kind: 'join' }>,
  op: JoinOp,
  left: number,
  right: number,
): number {
  const keyed = node.leftKey.length > 0;
  const padLeft = node.joinKind === 'left' || node.joinKind === 'full';
  const padRight = node.joinKind === 'right' || node.joinKind === 'full';
  let built = 0;
  if (left > 0) {
    const most = keyed ? op.rowsUnderOneKey(1) : op.sideRows(1);
    built += left * ((padRight ? 2 : 1) * most + (padLeft ? 1 : 0));
  }
  if (right > 0) {
    const most = keyed ? op.rowsUnderOneKey(0) : op.sideRows(0);
    built += right * ((padLeft ? 2 : 1) * most + (padRight ? 1 : 0));
  }
  return built + left * right;
}

type MapNode = Extract<DataflowNode, { kind: 'map' }>;
type InputNode = Extract<DataflowNode, { kind: 'input' }>;

/**
 * The input whose rows reach node `id` through Map stages alone, with those stages from the input
 * on; null when something else feeds it. Shared with the first build's bound (backfill-bound.ts).
 */
export function mapChainOf(
  id: number,
  byId: ReadonlyMap<number, DataflowNode>,
): { readonly input: InputNode; readonly maps: readonly MapNode[] } | null {
  const maps: MapNode[] = [];
  let node = byId.get(id);
  while (node !== undefined && node.kind === 'map') {
    maps.push(node);
    node = byId.get(node.inputs[0] as number);
  }
  if (node === undefined || node.kind !== 'input') return null;
  return { input: node, maps: maps.reverse() };
}
