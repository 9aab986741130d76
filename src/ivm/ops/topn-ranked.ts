// The general path of a Top-N (topn-op.ts) compares the rows ranked inside the kept range before and
// after an epoch's changes: the difference it emits, and where an insert-only partition's kept rows
// end for good (its trim), each walked from the partition's first row. Plain functions of a partition and the ranking, no operator state.
import type { RankKind } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import type { SortedPartition } from './topn-partition.ts';

/** One row of the kept range: a kept row (the partition's own array), its rank, its copies in range. */
export interface Ranked {
  readonly row: readonly Value[];
  readonly rank: number;
  readonly weight: number;
}

/** A kept row's change of output weight at one rank (`next`: its other ranks, rare). */
interface RankChange {
  readonly rank: number;
  weight: number;
  next: RankChange | null;
}

/**
 * The first sorted index whose row can never rank inside the kept range (ranks up to `to`) again;
 * -1: none of them. `peers` tells rows of one rank apart from the next.
 */
export function keptEnd(
  part: SortedPartition,
  kind: RankKind,
  to: number,
  peers: (a: readonly Value[], b: readonly Value[]) => number,
): number {
  const list = part.rows;
  const n = part.sorted;
  // Every row one copy: row i is numbered i + 1, no walk (a LIMIT 10000 stays O(1) an epoch).
  if (kind === 'row_number' && part.counts === null) return n >= to ? to : -1;
  let position = 0; // copies before this row
  let rank = 0;
  let dense = 0;
  let previous: readonly Value[] | undefined;
  for (let index = 0; index < n; index++) {
    const row = list[index] as readonly Value[];
    if (kind === 'row_number') {
      if (position >= to) return index;
      position += part.count(index);
      continue;
    }
    if (previous === undefined || peers(previous, row) !== 0) {
      rank = position + 1;
      dense++;
    }
    if ((kind === 'rank' ? rank : dense) > to) return index;
    position += part.count(index);
    previous = row;
  }
  // Past the sorted rows: a ROW_NUMBER range already full ends there; else the tail must be sorted.
  return kind === 'row_number' && position >= to ? n : -1;
}

/** What one walk of a partition's kept range found besides its rows. */
export interface RankWalk {
  /** Rows the walk visited (the operator counts them as ranked). */
  rows: number;
  /**
   * The first index of the partition from which a change cannot alter the kept range (every row
   * there ranks past `to`, and so would a row inserted there); Infinity if none.
   */
  unaffectedFrom: number;
}

/**
 * The rows ranked inside the kept range (from < rank ≤ to), walking the partition from its first row
 * and stopping past `to`: O(to) rows for a Top-N, the whole partition for an unbounded ranking.
 * `walk` is written with what else the walk found.
 */
export function rankedRange(
  part: SortedPartition,
  kind: RankKind,
  emitRank: boolean,
  from: number,
  to: number,
  peers: (a: readonly Value[], b: readonly Value[]) => number,
  walk: RankWalk,
): Ranked[] {
  const out: Ranked[] = [];
  let position = 0; // copies before this row
  let rank = 0;
  let dense = 0;
  let previous: readonly Value[] | undefined;
  walk.rows = 0;
  walk.unaffectedFrom = Infinity;
  const list = part.rows;
  for (let index = 0; index < list.length; index++) {
    const row = list[index] as readonly Value[];
    walk.rows++;
    const copies = part.count(index);
    if (kind === 'row_number') {
      const lo = Math.max(position + 1, from + 1);
      const hi = Math.min(position + copies, to);
      if (lo <= hi) {
        if (emitRank) for (let r = lo; r <= hi; r++) out.push({ row, rank: r, weight: 1 });
        else out.push({ row, rank: 0, weight: hi - lo + 1 });
      }
      position += copies;
      if (position >= to) {
        // A row after this one has position ≥ to, before or after a change there.
        walk.unaffectedFrom = index + 1;
        break;
      }
      continue;
    }
    if (previous === undefined || peers(previous, row) !== 0) {
      rank = position + 1;
      dense++;
    }
    const r = kind === 'rank' ? rank : dense;
    if (r > to) {
      // A row inserted before this one may be a peer of the last kept one: only after it is safe.
      walk.unaffectedFrom = index + 1;
      break;
    }
    if (r > from) out.push({ row, rank: emitRank ? r : 0, weight: copies });
    position += copies;
    previous = row;
  }
  return out;
}

/**
 * Appends what changed between the kept rows before and after (a kept row is one record), each row
 * with its rank appended when `emitRank`.
 */
export function emitDifference(
  before: readonly Ranked[],
  after: readonly Ranked[],
  emitRank: boolean,
  rows: (readonly Value[])[],
  weights: number[],
): void {
  const change = new Map<readonly Value[], RankChange>();
  const fold = (items: readonly Ranked[], sign: number): void => {
    for (const item of items) {
      const first = change.get(item.row) ?? null;
      let at = first;
      while (at !== null && at.rank !== item.rank) at = at.next;
      if (at !== null) at.weight += sign * item.weight;
      else change.set(item.row, { rank: item.rank, weight: sign * item.weight, next: first });
    }
  };
  fold(before, -1);
  fold(after, 1);
  for (const [row, first] of change) {
    for (let at: RankChange | null = first; at !== null; at = at.next) {
      if (at.weight === 0) continue;
      rows.push(emitRank ? [...row, at.rank] : row);
      weights.push(at.weight);
    }
  }
}
