// The bound on a view's first build (ViewGraph.build: CREATE MATERIALIZED VIEW over existing data,
// a query subscription's temporary view): the rows its joins may build in that one step beyond the
// rows it reads (a join that multiplies nothing is never refused, however large its tables). Joins
// without an equality between their sides are counted before anything is built, from the sizes of
// their inputs (cost: one pass over a filtered side, never the product); every join's rows are also
// counted while the step runs, and the step stops once they pass the bound (RowBudget), so a keyed
// join on a key that few values repeat is stopped after the bound's rows, not after its product.
import { SluiceError } from '../common/errors.ts';
import type { DataflowNode, DataflowPlan } from '../ivm/dataflow-plan.ts';
import { MapOp } from '../ivm/ops/map-op.ts';
import type { JoinBudget } from '../ivm/ops/join-op.ts';
import type { RowErrorSink } from '../ivm/operator.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { mapChainOf } from './view-join-fanout.ts';

/**
 * Default of `EngineOptions.maxBackfillRows`, the ad-hoc SELECT's join budget: a first build of a
 * million joined rows measured 3.4–4.4 s of the loop and ≈ 0.5 GB, of two million 8.6–13 s and
 * ≈ 0.7 GB (load 11–15; bench/README.md, "Keyless joins", the backfill section). A view that needs
 * more is created before its tables are loaded, and grows by writes each bounded on their own.
 */
export const MAX_BACKFILL_ROWS = 1_000_000;

/** Rows of join work allowed per row read (see backfillAllowance). */
const WORK_PER_ROW_READ = 3;

/** A filter that fails on a row here only drops it from the count: the build reports it. */
const IGNORE_ERRORS: RowErrorSink = { report: () => undefined };

/**
 * Pairs the plan's joins with no equality between their sides (CROSS JOIN, `ON a.x < b.y`) test in
 * the first build over `contents`: each such join pairs every row reaching its left side with every
 * row reaching its right side. A side fed by a relation through Map stages alone is counted (its
 * filters run over the relation's rows; projections are not built unless a later filter needs
 * them); a side fed by anything else (an aggregate, another join, VALUES) is not counted here — the
 * build's row budget stops it. Returns the pairs counted, and the rows of the relations read to
 * count them (a count of the work, for tests).
 */
export function keylessBackfillPairs(
  plan: DataflowPlan,
  contents: (relation: string) => ZBatch,
): { readonly pairs: number; readonly rowsRead: number } {
  const byId = new Map<number, DataflowNode>(plan.nodes.map((n) => [n.id, n]));
  const reaching = new Map<number, number | null>();
  let rowsRead = 0;
  const rowsReaching = (id: number): number | null => {
    const known = reaching.get(id);
    if (known !== undefined) return known;
    const chain = mapChainOf(id, byId);
    let rows: number | null = null;
    if (chain !== null) {
      const batch = contents(chain.input.source);
      rows = batch.weights.length;
      // The stages run in plan order (from the input on), and only as far as the last filter: what
      // reaches the join is what passes every filter.
      let lastFilter = -1;
      chain.maps.forEach((m, i) => {
        if (m.filter !== null) lastFilter = i;
      });
      if (lastFilter >= 0) {
        rowsRead += rows;
        let passed = batch;
        let columns = chain.input.columns;
        for (const map of chain.maps.slice(0, lastFilter + 1)) {
          passed = new MapOp(map.id, map.filter, map.project, columns).step([passed], IGNORE_ERRORS);
          columns = map.columns;
        }
        rows = passed.weights.length;
      }
    }
    reaching.set(id, rows);
    return rows;
  };
  let pairs = 0;
  for (const node of plan.nodes) {
    if (node.kind !== 'join' || node.leftKey.length > 0) continue;
    const left = rowsReaching(node.inputs[0]);
    const right = rowsReaching(node.inputs[1]);
    if (left !== null && right !== null) pairs += left * right;
  }
  return { pairs, rowsRead };
}

/**
 * Rows a view's joins may build in its first step: `maxRows` beyond three per row its inputs hold
 * (each input of the plan counted, so a self-join counts its table twice). A join that keeps no more
 * rows than it reads (a key into a primary key, a one-row side) multiplies nothing and holds what
 * its inputs already hold: over a table of five million rows it is not refused. Three, because a
 * join both of whose sides are shared arrangements builds each pair twice in a step over whole
 * relations and takes one back (JoinOp.step): three rows of work for a row kept.
 */
export function backfillAllowance(
  plan: DataflowPlan,
  contents: (relation: string) => ZBatch,
  maxRows: number,
): { readonly allowed: number; readonly inputRows: number } {
  let inputRows = 0;
  for (const node of plan.nodes) if (node.kind === 'input') inputRows += contents(node.source).weights.length;
  return { allowed: maxRows + WORK_PER_ROW_READ * inputRows, inputRows };
}

/** The budget of `allowed` rows for a view's joins in its first step. */
export function backfillBudget(allowed: number): JoinBudget {
  return { remaining: allowed, limit: allowed };
}

/**
 * VIEW_TOO_LARGE for view `view`: its first build would make its keyless joins build `rows` rows
 * (`counted`: refused before anything was built), or its joins built more than it was allowed
 * (stopped): `maxRows` beyond three per row of the `inputRows` it reads.
 */
export function viewTooLarge(
  view: string,
  counted: number | null,
  bound: { readonly maxRows: number; readonly inputRows: number },
): SluiceError {
  const allowed = bound.maxRows + WORK_PER_ROW_READ * bound.inputRows;
  const beyond = `more than ${allowed} (${bound.maxRows} plus ${WORK_PER_ROW_READ} per row it reads, ${bound.inputRows} rows)`;
  const message =
    counted !== null
      ? `building view "${view}" over the current rows would make its joins without an equality condition build ${counted} rows in one step, ${beyond}`
      : `building view "${view}" over the current rows was stopped: its joins and STRING_AGG windows (weighed by their texts) built ${beyond} in one step`;
  return new SluiceError('VIEW_TOO_LARGE', message, {
    hint: `give the join an equality between its sides (a join key) or a narrower WHERE, ${counted === null ? 'partition a STRING_AGG window more finely, ' : ''}or create the view before loading its tables`,
  });
}
