// What a join's fused projection keeps of its joined rows: the columns it picks, and whether the
// rows it emits stay distinct (join-op.ts emits a one-sided step's rows as consolidated then).
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import type { ColumnSpec, DataflowNode } from '../dataflow-plan.ts';

type JoinNode = Extract<DataflowNode, { kind: 'join' }>;

/** The joined columns a projection of plain column references picks, in order. */
export function columnPicks(project: readonly ScalarExpr[]): Int32Array {
  return Int32Array.from(project, (e) => (e as Extract<ScalarExpr, { kind: 'col' }>).index);
}

/**
 * Whether picking `pick` from the joined rows loses nothing: every joined column is picked, or is
 * a key column equated with a picked column of the other side (`b.auction = a.id`, keeping one)
 * whose values are equal only when identical (not a float: 0 = -0; not char(n): padding).
 */
export function keepsEveryColumn(
  pick: Int32Array,
  node: JoinNode,
  left: readonly ColumnSpec[],
  right: readonly ColumnSpec[],
): boolean {
  const kept = new Set(pick);
  const joined = [...left, ...right];
  const leftWidth = left.length;
  for (let c = 0; c < joined.length; c++) {
    if (kept.has(c)) continue;
    const type = (joined[c] as ColumnSpec).type;
    const exact =
      type.kind === 'int' ||
      type.kind === 'bool' ||
      type.kind === 'date' ||
      type.kind === 'timestamp' ||
      type.kind === 'uuid' ||
      type.kind === 'bytea' ||
      (type.kind === 'text' && type.fixed !== true);
    if (!exact) return false;
    const recoverable = node.leftKey.some((l, k) => {
      const r = node.rightKey[k] as ScalarExpr;
      if (l.kind !== 'col' || r.kind !== 'col') return false;
      const [lc, rc] = [l.index, leftWidth + r.index];
      return (c === lc && kept.has(rc)) || (c === rc && kept.has(lc));
    });
    if (!recoverable) return false;
  }
  return true;
}
