// Which Reduces run in hash partitions on worker threads (the `workers` setting): a first, narrow set
// whose partitioned form is known to emit exactly what the single Reduce emits. The rest run on the
// main thread as before; `partitioningOf` says why, for EXPLAIN DATAFLOW.
import type { SqlType } from '../../common/types.ts';
import type { ColumnSpec, DataflowNode } from '../../ivm/dataflow-plan.ts';
import type { ScalarExpr } from '../../common/scalar-expr.ts';

type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

/**
 * A downstream Reduce whose aggregates are all COUNT(*) reads only each of its groups' net weight:
 * its group key, evaluated per change of this Reduce (`keys`, over this Reduce's output columns).
 * Each partition folds its changes by that key (partition-fold.ts), so the main thread steps the
 * downstream Reduce on one row per touched group instead of on every change.
 */
export interface FoldSpec {
  readonly keys: readonly ScalarExpr[];
}

/** How a partitioned Reduce reads its input: the input columns of its keys and of its arguments. */
export interface PartitionLayout {
  /** Input column of each group key, in key order. */
  readonly keyColumns: readonly number[];
  /** Every input column the Reduce reads (keys and arguments), ascending. */
  readonly usedColumns: readonly number[];
}

export type Partitioning =
  | { readonly partitioned: true; readonly layout: PartitionLayout }
  | { readonly partitioned: false; readonly reason: string };

/**
 * Types whose values are JavaScript primitives (number, bigint, string, boolean, null), which cross
 * threads unchanged; numeric, interval, jsonb and arrays are objects with methods.
 */
function primitiveType(t: SqlType): boolean {
  return t.kind !== 'numeric' && t.kind !== 'interval' && t.kind !== 'jsonb' && t.kind !== 'array';
}

/**
 * Whether `node` can run partitioned, reading `input` (its input node's columns): a plain GROUP BY
 * (no window close, no panes) with at least one key; keys and arguments plain columns of the input
 * and no fused filter (so no row can fail before it reaches its group, and a group's first row is
 * known from its key alone); COUNT/SUM/AVG without DISTINCT or ORDER BY (invertible, O(1) state);
 * every column read or produced of a primitive type.
 */
export function partitioningOf(node: ReduceNode, input: readonly ColumnSpec[]): Partitioning {
  const no = (reason: string): Partitioning => ({ partitioned: false, reason });
  if (node.emitOnClose !== undefined) return no('EMIT ON WINDOW CLOSE');
  if (node.closePanes !== undefined) return no("HOP's panes");
  if (node.keyCount === 0) return no('a global aggregate (one group)');
  if (node.fused === null) return no('no fused Map stage');
  if (node.fused.filter !== null) return no('a filter runs in it');
  const project = node.fused.project;
  const columns: number[] = [];
  for (const e of project) {
    if (e.kind !== 'col') return no('a key or argument is an expression');
    columns.push(e.index);
  }
  for (const a of node.aggregates) {
    if (a.fn !== 'count' && a.fn !== 'count_star' && a.fn !== 'sum' && a.fn !== 'avg')
      return no(a.fn.toUpperCase());
    if (a.distinct || a.orderBy !== undefined || a.strategy !== 'invertible')
      return no(`${a.fn.toUpperCase()} with DISTINCT or ORDER BY`);
  }
  const used = [...new Set(columns)].sort((x, y) => x - y);
  for (const c of used) {
    const spec = input[c];
    if (spec === undefined) return no('an input column is missing');
    if (!primitiveType(spec.type)) return no(`a column of type ${spec.type.kind}`);
  }
  for (const c of node.columns) if (!primitiveType(c.type)) return no(`a result of type ${c.type.kind}`);
  return {
    partitioned: true,
    layout: { keyColumns: columns.slice(0, node.keyCount), usedColumns: used },
  };
}

/**
 * The fold a Reduce reads when its input comes from a partitioned Reduce (folding-reduce.ts): a plain
 * GROUP BY with at least one key, a fused Map stage without a filter, and every aggregate COUNT(*)
 * (it reads only each group's net weight). Null when it reads every change.
 */
export function foldOf(node: ReduceNode): FoldSpec | null {
  if (node.emitOnClose !== undefined || node.closePanes !== undefined) return null;
  if (node.keyCount === 0 || node.fused === null || node.fused.filter !== null) return null;
  if (node.aggregates.length === 0) return null;
  for (const a of node.aggregates) if (a.fn !== 'count_star' || a.distinct) return null;
  return { keys: node.fused.project.slice(0, node.keyCount) };
}
