// Whether a LogicalPlan's output only ever gains rows (is insert-only): then no change it emits is a
// retraction, and an operator above it may forget rows that can never matter again (a Top-N keeps
// only the rows that can still rank; src/ivm/ops/topn-op.ts). Derived node by node, as plan-key.ts
// derives the unique key, and conservative: a node is insert-only only when the sentence beside its
// case proves it; anything else — or anything new — is not.
import type { Catalog } from './catalog.ts';
import { isAppendOnly } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

/**
 * Whether `plan` is insert-only. Memoized per plan object: a WITH query read twice is one object
 * reached twice, and a chain of them would otherwise be walked exponentially often.
 */
export function planInsertOnly(
  plan: LogicalPlan,
  catalog: Catalog,
  memo: Map<LogicalPlan, boolean> = new Map(),
): boolean {
  const known = memo.get(plan);
  if (known !== undefined) return known;
  const insertOnly = insertOnlyOf(plan, catalog, memo);
  memo.set(plan, insertOnly);
  return insertOnly;
}

function insertOnlyOf(plan: LogicalPlan, catalog: Catalog, memo: Map<LogicalPlan, boolean>): boolean {
  const of = (p: LogicalPlan): boolean => planInsertOnly(p, catalog, memo);
  switch (plan.kind) {
    case 'scan': {
      // A table or source the engine keeps append-only (it refuses every write that would remove
      // a row), or a view whose own plan was proven insert-only when it was created.
      const o = catalog.get(plan.source);
      if (o === undefined || o.kind === 'sink') return false;
      return o.kind === 'table' ? isAppendOnly(o) : o.insertOnly === true;
    }
    case 'values':
      // One constant row, emitted once when the view is made and never changed.
      return true;
    case 'filter':
    case 'project':
    case 'expand':
      // Each output row is a function of one input row alone (a predicate, expressions, a fixed set
      // of generated tuples such as HOP's windows or unnest's elements), emitted when that row is
      // inserted and removed only when it is retracted: with no retraction coming in, none goes out.
      // (A predicate over the clock is a temporalFilter, below, not a filter.)
      return of(plan.input);
    case 'distinct':
      // A row is emitted when its count goes from 0 to 1 and retracted only when it returns to 0;
      // inserts only raise counts.
      return of(plan.input);
    case 'union':
      // UNION ALL passes each input's changes on unchanged.
      return plan.inputs.every(of);
    case 'semiJoin':
      // EXISTS / IN: a row passes once its first match is there, and leaves only when its last
      // match or the row itself does; with both sides insert-only neither happens (an IN that was
      // UNKNOWN for a NULL in the subquery turns true when a match comes, never back). NOT EXISTS
      // and NOT IN retract a row when its first match arrives: not insert-only.
      return (plan.mode === 'exists' || plan.mode === 'in') && of(plan.input) && of(plan.subquery);
    case 'join':
      // An inner (or cross) join's output is the set of matching pairs; an insert on either side
      // only adds pairs, and a pair is retracted only when one of its rows is. (A temporal join's
      // pairs are fixed on the left row's arrival, so the same holds.) An outer join retracts a
      // padded row when its first match arrives: not insert-only.
      return plan.joinKind === 'inner' && of(plan.left) && of(plan.right);
    case 'aggregate':
    // A group's row is replaced (−old, +new) whenever a row joins the group.
    case 'topN':
    // An insert ranking inside the top pushes another row out of it.
    case 'window':
    // An insert changes the window values of other rows of its partition (they are re-emitted).
    case 'temporalFilter':
    // Rows leave as the clock passes their bounds.
    case 'setOp':
      // EXCEPT retracts as the right side grows; UNION (distinct) and INTERSECT are left out with it.
      return false;
  }
}

/**
 * Whether a view emitting on window close (bind-window-close.ts: a projection of a Reduce grouped by
 * window_end) emits inserts only: each window goes through a fresh Reduce once, when it closes, so
 * every group it emits is new (+I), and a closed window is never changed again (a change to it is
 * counted, not applied; src/ivm/ops/window-close-op.ts). Only that shape: anything above the Reduce
 * but a projection could retract.
 */
export function closesInsertOnly(plan: LogicalPlan): boolean {
  const reduce = plan.kind === 'project' ? plan.input : plan;
  return reduce.kind === 'aggregate';
}
