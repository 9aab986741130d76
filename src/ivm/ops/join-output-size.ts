// How much a join step emits: the expected size that decides whether it emits rows or columns, and
// the budget of rows the joins of an ad-hoc query share (so a join that multiplies its inputs fails
// early instead of filling memory and holding the event loop).
import { SluiceError } from '../../common/errors.ts';
import type { JoinSideRows } from '../join-table-side.ts';
import type { ZBatch } from '../zset.ts';

/**
 * Rows a step is expected to emit from which it emits them by column (`fused.byColumn`): a step of
 * a few rows emits rows, since a column array per output column costs more there than the rows do
 * (as a table's batch is rows when small, columns when large).
 */
export const MIN_COLUMN_BATCH = 64;

/**
 * The rows a step is expected to emit: each side's delta rows times the rows the other side holds
 * per key on average (at least one). A few auctions deleted from auctions ⋈ bids meet a dozen bids
 * each: their step emits as many rows as a hundred bids do, and is as worth emitting by column.
 */
export function expectedOutput(
  inputs: readonly ZBatch[],
  arranged: readonly [JoinSideRows, JoinSideRows],
): number {
  let n = 0;
  for (let side = 0; side < 2; side++) {
    const rows = (inputs[side] as ZBatch).weights.length;
    if (rows === 0) continue;
    const other = arranged[side === 0 ? 1 : 0];
    const keys = other.keyCount;
    n += keys === 0 ? rows : rows * Math.max(1, other.size / keys);
  }
  return n;
}

/**
 * Rows the joins of one evaluation may still produce (shared by its join operators): an ad-hoc
 * SELECT runs with one, so a join that multiplies its inputs fails early instead of filling memory
 * and holding the event loop. Views run without (what a view holds is what its SQL asks).
 */
export interface JoinBudget {
  remaining: number;
  readonly limit: number;
}

/**
 * Takes `rows` from the budget; throws RESULT_TOO_LARGE once it is spent. `what` names the operators
 * that share it ("joins", "windows") and `hint` says how to ask for less.
 */
export function chargeBudget(budget: JoinBudget, rows: number, what: string, hint: string): void {
  budget.remaining -= rows;
  if (budget.remaining < 0) {
    throw new SluiceError(
      'RESULT_TOO_LARGE',
      `the ${what} of this query produce more than ${budget.limit} rows`,
      { hint },
    );
  }
}

/** A join's charge against its evaluation's budget. */
export function chargeJoinBudget(budget: JoinBudget, rows: number): void {
  chargeBudget(
    budget,
    rows,
    'joins',
    'add join conditions or a narrower WHERE, or create a materialized view over the join and read it by pages',
  );
}
