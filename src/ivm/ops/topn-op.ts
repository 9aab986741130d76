// Top-N per partition, and the ranking window functions: every input row is arranged under its
// partition key (one indexed Arrangement, checkpointed) and kept in an array per partition sorted by
// ORDER BY, ties among peers broken by the whole row. For each partition an epoch touches, the rows
// ranked inside the kept range (from < rank ≤ to) before and after the epoch are compared and only
// the difference is emitted, so a row falling out of the top brings its successor in, in one epoch.
// The whole partition is kept, since any retraction inside the top must reveal the next row.
import type { Value } from '../../common/types.ts';
import { compareByKeys, compareRows, mergeByRow } from '../../common/top-n.ts';
import type { Arrangement, ArrangedRow } from '../arrangement.ts';
import { PartitionedRows, type PartitionKey } from './partitioned-rows.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { Operator } from '../operator.ts';
import type { StateDelta, Stateful } from '../state.ts';
import { consolidate, type ZBatch } from '../zset.ts';

type TopNNode = Extract<DataflowNode, { kind: 'topn' }>;

/** One row of the kept range: an arranged row, its rank, and how many of its copies are in range. */
interface Ranked {
  readonly entry: ArrangedRow;
  readonly rank: number;
  readonly weight: number;
}

/** An arranged row's change of output weight at one rank (`next`: its other ranks, rare). */
interface RankChange {
  readonly rank: number;
  weight: number;
  next: RankChange | null;
}

/**
 * A partition's key: '' for none, the value itself for one column (NULL is a partition too),
 * the encoding of the values otherwise.
 */

/** The largest n of a Top-N whose single-row changes take the direct path (it checks n rows). */
const FAST_TOP_LIMIT = 64;

/** Changes to one partition up to this many rows go in by binary search; more by sort and merge. */
const SPLICE_LIMIT = 16;

export class TopNOp implements Operator, Stateful {
  readonly stateId: string;
  private readonly partitioned: PartitionedRows;
  private readonly arranged: Arrangement<PartitionKey>;
  /** Partition key → its arranged rows in ORDER BY order (derived from `arranged`; never stored). */
  private sorted = new Map<PartitionKey, ArrangedRow[]>();
  private readonly compare: (a: readonly Value[], b: readonly Value[]) => number;
  private readonly peers: (a: readonly Value[], b: readonly Value[]) => number;
  private readonly to: number;
  /** Rows whose rank was computed so far (tests count the work an epoch does with it). */
  rowsRanked = 0;
  /** Partition changes that took the direct single-row path (`singleChange`; tests count them). */
  singleChanges = 0;
  /**
   * Set by `ranked`: the first index of the list from which a change cannot alter the kept range
   * (every row there ranks past `to`, and so would a row inserted there); Infinity if none.
   */
  private unaffectedFrom = Infinity;
  /** Partition → its `unaffectedFrom` as of the end of the last epoch that touched it (derived). */
  private readonly boundaries = new Map<PartitionKey, number>();

  constructor(private readonly node: TopNNode) {
    this.stateId = node.stateId;
    this.partitioned = new PartitionedRows(`top-n n${node.id}`, node.partitionBy);
    this.arranged = this.partitioned.arranged;
    this.compare = compareRows(node.orderBy);
    this.peers = compareByKeys(node.orderBy);
    this.to = node.to ?? Infinity;
  }

  get nodeId(): number {
    return this.node.id;
  }

  trackChanges(on: boolean): void {
    this.arranged.trackChanges(on);
  }

  takeStateDelta(full: boolean): StateDelta {
    return this.arranged.takeDelta(full);
  }

  loadState(values: Iterable<unknown>): void {
    this.sorted = this.partitioned.load(values, this.compare);
    this.boundaries.clear();
  }

  step(inputs: readonly ZBatch[]): ZBatch {
    const input = inputs[0];
    if (input === undefined || input.rows.length === 0) return { rows: [], weights: [], consolidated: true };
    // Consolidated (each row once): an arranged row then never leaves and comes back in one epoch.
    const batch = input.consolidated ? input : consolidate(input);
    const byPartition = this.partitioned.group(batch.rows);
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    for (const [key, indexes] of byPartition) {
      if (indexes.length === 1 && this.singleChange(key, batch, indexes[0] as number, rows, weights))
        continue;
      const list = this.sorted.get(key) ?? [];
      // Changes that all sort after the kept range leave it as it is: no walk, no output. The
      // partition's boundary stays valid across such changes (none lands before it).
      let from = this.boundaries.get(key);
      let before: Ranked[] | null = null;
      if (from === undefined) {
        before = this.ranked(list);
        from = this.unaffectedFrom;
      }
      const limit = from;
      const unaffected =
        limit !== Infinity &&
        indexes.every((i) => this.lowerBound(list, batch.rows[i] as readonly Value[]) >= limit);
      if (!unaffected) before ??= this.ranked(list);
      const after = this.apply(key, list, batch, indexes);
      if (after.length === 0) {
        this.sorted.delete(key);
        this.boundaries.delete(key);
      } else this.sorted.set(key, after);
      if (unaffected) {
        this.boundaries.set(key, limit);
        continue;
      }
      this.emitDifference(before as Ranked[], this.ranked(after), rows, weights);
      if (after.length > 0) this.boundaries.set(key, this.unaffectedFrom);
    }
    return { rows, weights, consolidated: true };
  }

  /**
   * The common case of a Top-N (ROW_NUMBER ≤ n, the rank not shown): one new row, or one row
   * deleted, in a partition whose first n + 1 rows are single copies, so a row's rank is its index.
   * An insert ranked inside the top n pushes out the n-th row; a delete inside it brings in the
   * (n+1)-th. One binary search and one splice, nothing ranked or diffed. False: not this case
   * (nothing changed), the general path runs.
   */
  private singleChange(
    key: PartitionKey,
    batch: ZBatch,
    index: number,
    rows: (readonly Value[])[],
    weights: number[],
  ): boolean {
    const { rank, emitRank, from } = this.node;
    const to = this.to;
    if (rank !== 'row_number' || emitRank || from !== 0 || to > FAST_TOP_LIMIT) return false;
    const w = batch.weights[index] as number;
    if (w !== 1 && w !== -1) return false;
    const row = batch.rows[index] as readonly Value[];
    const list = this.sorted.get(key);
    if (list === undefined) {
      if (w === -1) return false;
      const entry = this.arranged.addRow(key, row, 1, 0) as ArrangedRow;
      this.sorted.set(key, [entry]);
      this.boundaries.delete(key);
      rows.push(entry.row);
      weights.push(1);
      return true;
    }
    const scan = Math.min(list.length, to + 1);
    for (let i = 0; i < scan; i++) if ((list[i] as ArrangedRow).count !== 1) return false;
    const at = this.lowerBound(list, row);
    const there = list[at];
    const present = there !== undefined && this.compare(there.row, row) === 0;
    if (w === 1) {
      if (present) return false;
      const entry = this.arranged.addRow(key, row, 1, 0) as ArrangedRow;
      if (at < to) {
        rows.push(entry.row);
        weights.push(1);
        if (list.length >= to) {
          rows.push((list[to - 1] as ArrangedRow).row);
          weights.push(-1);
        }
      }
      list.splice(at, 0, entry);
    } else {
      if (!present || there.count !== 1) return false;
      this.arranged.addRow(key, row, -1, 0);
      if (at < to) {
        rows.push(there.row);
        weights.push(-1);
        if (list.length > to) {
          rows.push((list[to] as ArrangedRow).row);
          weights.push(1);
        }
      }
      list.splice(at, 1);
      if (list.length === 0) this.sorted.delete(key);
    }
    this.rowsRanked += Math.min(at, to);
    this.singleChanges++;
    this.boundaries.delete(key);
    return true;
  }

  stateSize(): number {
    return this.arranged.stateBytes + 8 * this.arranged.size + 96 * this.sorted.size;
  }

  /** Folds the partition's changes into the arrangement and returns its rows in order again. */
  private apply(
    key: PartitionKey,
    list: ArrangedRow[],
    batch: ZBatch,
    indexes: readonly number[],
  ): ArrangedRow[] {
    const added: ArrangedRow[] = [];
    const removed = new Set<ArrangedRow>();
    for (const i of indexes) {
      const row = batch.rows[i] as readonly Value[];
      const w = batch.weights[i] as number;
      if (w < 0) {
        const at = this.find(list, row);
        const existing = at < 0 ? undefined : list[at];
        if (existing !== undefined && existing.count + w === 0) removed.add(existing);
      }
      const entry = this.arranged.addRow(key, row, w, 0);
      if (entry !== null && entry.count === w) added.push(entry); // it was not arranged before
    }
    if (added.length + removed.size <= SPLICE_LIMIT) {
      for (const entry of removed) list.splice(this.find(list, entry.row), 1);
      for (const entry of added) list.splice(this.lowerBound(list, entry.row), 0, entry);
      return list;
    }
    const kept = removed.size === 0 ? list : list.filter((e) => !removed.has(e));
    return mergeByRow(kept, added, this.compare);
  }

  /** The first index whose row is not before `row`. */
  private lowerBound(list: readonly ArrangedRow[], row: readonly Value[]): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare((list[mid] as ArrangedRow).row, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The index of `row` in the list, or -1. */
  private find(list: readonly ArrangedRow[], row: readonly Value[]): number {
    const at = this.lowerBound(list, row);
    const e = list[at];
    return e !== undefined && this.compare(e.row, row) === 0 ? at : -1;
  }

  /**
   * The rows ranked inside the kept range, walking the partition from its first row and stopping
   * past `to`: O(to) rows for a Top-N, the whole partition for an unbounded ranking.
   */
  private ranked(list: readonly ArrangedRow[]): Ranked[] {
    const { rank: kind, emitRank, from } = this.node;
    const to = this.to;
    const out: Ranked[] = [];
    let position = 0; // copies before this row
    let rank = 0;
    let dense = 0;
    let previous: ArrangedRow | undefined;
    this.unaffectedFrom = Infinity;
    for (let index = 0; index < list.length; index++) {
      const entry = list[index] as ArrangedRow;
      this.rowsRanked++;
      const copies = entry.count;
      if (kind === 'row_number') {
        const lo = Math.max(position + 1, from + 1);
        const hi = Math.min(position + copies, to);
        if (lo <= hi) {
          if (emitRank) for (let r = lo; r <= hi; r++) out.push({ entry, rank: r, weight: 1 });
          else out.push({ entry, rank: 0, weight: hi - lo + 1 });
        }
        position += copies;
        if (position >= to) {
          // A row after this one has position ≥ to, before or after a change there.
          this.unaffectedFrom = index + 1;
          break;
        }
        continue;
      }
      if (previous === undefined || this.peers(previous.row, entry.row) !== 0) {
        rank = position + 1;
        dense++;
      }
      const r = kind === 'rank' ? rank : dense;
      if (r > to) {
        // A row inserted before this one may be a peer of the last kept one: only after it is safe.
        this.unaffectedFrom = index + 1;
        break;
      }
      if (r > from) out.push({ entry, rank: emitRank ? r : 0, weight: copies });
      position += copies;
      previous = entry;
    }
    return out;
  }

  /** Appends what changed between the kept rows before and after (an arranged row is one record). */
  private emitDifference(
    before: readonly Ranked[],
    after: readonly Ranked[],
    rows: (readonly Value[])[],
    weights: number[],
  ): void {
    const change = new Map<ArrangedRow, RankChange>();
    const fold = (items: readonly Ranked[], sign: number): void => {
      for (const item of items) {
        const first = change.get(item.entry) ?? null;
        let at = first;
        while (at !== null && at.rank !== item.rank) at = at.next;
        if (at !== null) at.weight += sign * item.weight;
        else change.set(item.entry, { rank: item.rank, weight: sign * item.weight, next: first });
      }
    };
    fold(before, -1);
    fold(after, 1);
    for (const [entry, first] of change) {
      for (let at: RankChange | null = first; at !== null; at = at.next) {
        if (at.weight === 0) continue;
        rows.push(this.node.emitRank ? [...entry.row, at.rank] : entry.row);
        weights.push(at.weight);
      }
    }
  }
}
