// Lowering's Map stage before a Reduce: group keys first, then each distinct aggregate argument once
// (by its printed form), so the Reduce reads plain columns. Shared by lower.ts and lower-hop-panes.ts.
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { printScalar } from '../common/scalar-expr.ts';

/**
 * A function appending `e` to `project` unless it appended an equal expression before, returning
 * its column index. What `project` held before (the group keys) is not matched: an argument equal
 * to a key gets its own column, as plans and their fingerprints always had it.
 */
export function columnAppender(project: ScalarExpr[]): (e: ScalarExpr) => number {
  const index = new Map<string, number>();
  return (e) => {
    const printed = printScalar(e);
    const existing = index.get(printed);
    if (existing !== undefined) return existing;
    index.set(printed, project.length);
    project.push(e);
    return project.length - 1;
  };
}
